"""The model backends of stage 6: llama_cpp in process, openai_compatible against a real server.

The model tests use the packaged Qwen2.5-Coder-1.5B GGUF (`make setup` assembles it) and skip
only when it has not been assembled. The model is loaded once for the module; the
OpenAI-compatible test starts llama.cpp's own server (`python -m stages.models.server`, xllamacpp)
on 127.0.0.1 and stops it after.
Only the malformed-reply, cache and 429 cases use stubs, as they test this module's own logic.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from stages import attribution, contracts, generation
from stages.common.text import MARKER_RE
from stages.models import chat, errors, files, server, yesno
from stages.models.settings import LLMSettings

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / files.DEFAULT_MODEL_PATH
needs_model = pytest.mark.skipif(
    not MODEL.is_file(),
    reason=f"{files.DEFAULT_MODEL_PATH} not assembled: run `make setup` "
    "(or `python -m stages.models.assemble`)",
)

QUESTION = "How much does the Enterprise plan cost per user per month?"
# The sample knowledge base's evidence for this question, as the evidence stage packages it.
EVIDENCE = [
    (
        "E1",
        "Plan: Enterprise; Monthly list price: €49 per user per month; Minimum seats: 25; "
        "Storage per user: 1 TB; Price per user with annual billing: €41.65 per user per month.",
    ),
    (
        "E2",
        "Contoso Retail pays a negotiated price of €44 per user per month for the Enterprise "
        "plan, fixed for the initial term.",
    ),
    (
        "E3",
        "Plan: Business; Monthly list price: €29 per user per month; Minimum seats: 5; "
        "Storage per user: 250 GB; Price per user with annual billing: €24.65 per user per month.",
    ),
]


def request(state: str = "success", evidence=EVIDENCE) -> generation.Request:
    return generation.build_request(
        {"question_id": "q1", "question": QUESTION},
        {"state": state, "refusal_hint": None},
        [
            {"evidence_id": eid, "text": text, "sub_question": 0, "score": 0.9, "is_stale": False}
            for eid, text in evidence
        ],
        [],
    )


def config(tmp_path: Path, **overrides) -> generation.Config:
    return generation.Config(cache_dir=str(tmp_path / "cache"), **overrides)


class CountingClient(chat.ChatClient):
    """Wraps a real client (or a canned reply) and counts the calls that reach it."""

    def __init__(self, inner: chat.ChatClient | None = None, reply: str = "") -> None:
        self.inner, self.reply, self.calls, self.messages = inner, reply, 0, []
        self.model_id = inner.model_id if inner else "stub@0"

    def complete(self, messages, schema):
        self.calls += 1
        self.messages.append(messages)
        if self.inner:
            return self.inner.complete(messages, schema)
        return chat.Completion(text=self.reply, finish_reason="stop")


def backend_with(client: chat.ChatClient, cfg: generation.Config) -> generation.LLMBackend:
    return generation.LLMBackend(cfg, lambda: client, model_id_hint=client.model_id)


def assert_cited_price(output: generation.Output) -> None:
    assert output.refusal_reason is None, output
    assert "€49" in output.answer
    markers = MARKER_RE.findall(output.answer)
    assert markers and set(markers) <= {eid for eid, _ in EVIDENCE}
    assert output.citations == list(dict.fromkeys(markers))


def attribute(output: generation.Output) -> dict:
    """Run the answer through stage 7: every marker must resolve to this question's evidence."""
    generations = [
        {"question_id": "q1", "state": "success", **output.model_dump(), "backend": "t"}
        | {"prompt_hash": "x", "latency_ms": 0.0}
    ]
    evidence = [
        {"question_id": "q1", "evidence_id": eid, "sub_question": 0, "doc_id": "price-list"}
        | {"chunk_id": f"c{eid}", "char_start": 0, "char_end": len(text), "text": text}
        | {"score": 0.9, "title": "Price List 2026", "is_stale": False}
        for eid, text in EVIDENCE
    ]
    columns = set(contracts.schema_of("generations").names)
    generations = [{k: v for k, v in row.items() if k in columns} for row in generations]
    return attribution.run(
        {
            "generations": contracts.from_rows(generations, "generations"),
            "evidence": contracts.from_rows(evidence, "evidence"),
        },
        attribution.Config(),
    )["attributions"].to_pylist()[0]


# ---------------------------------------------------------------- llama_cpp, the real model


@pytest.fixture(scope="module")
def llama_client() -> chat.LlamaCppClient:
    client = chat.LlamaCppClient(MODEL)
    assert client.server is not None  # load once for the module
    return client


@needs_model
def test_llama_cpp_answers_the_price_with_a_resolvable_citation(llama_client, tmp_path):
    counting = CountingClient(llama_client)
    backend = backend_with(counting, config(tmp_path))

    output = backend.generate(request())

    assert_cited_price(output)
    assert output.model_id == f"{MODEL.stem}@cc324af0"
    assert output.error is None
    assert attribute(output)["status"] == "answered"
    # the same question again is answered from the cache, not the model
    calls = counting.calls
    again = backend.generate(request())
    assert counting.calls == calls
    assert again.cached and again.answer == output.answer


@needs_model
def test_llama_cpp_not_found_refuses_without_calling_the_model(llama_client, tmp_path):
    counting = CountingClient(llama_client)
    backend = backend_with(counting, config(tmp_path))

    output = backend.generate(request(state="not_found"))

    assert counting.calls == 0
    assert output.answer is None
    assert output.refusal_reason == "insufficient_evidence"
    assert output.missing == [QUESTION]
    assert not re.search(r"\d", output.answer or "")


def test_technical_error_state_refuses_without_model_or_internals(tmp_path):
    counting = CountingClient(reply="{}")
    backend = backend_with(counting, config(tmp_path))
    output = backend.generate(request(state="technical_error"))
    assert counting.calls == 0
    assert (output.answer, output.refusal_reason) == (None, "technical_error")
    assert output.error is None


def test_missing_model_file_is_a_technical_error_kept_in_the_trace(tmp_path):
    cfg = config(tmp_path, backend="llama_cpp", model_path=str(tmp_path / "nowhere.gguf"))
    output = generation.make_backend(cfg).generate(request())
    assert (output.answer, output.refusal_reason) == (None, "technical_error")
    assert "nowhere.gguf" in output.error  # the trace field only
    assert all("nowhere" not in m for m in output.missing)


def test_malformed_json_is_retried_then_a_technical_error(tmp_path):
    counting = CountingClient(reply='{"answer": "€49 [E1]", "citations": ["E1"')  # cut off
    backend = backend_with(counting, config(tmp_path, max_retries=2))

    output = backend.generate(request())

    assert counting.calls == 3
    assert "rejected" in counting.messages[1][-1]["content"]  # the error was fed back
    assert (output.answer, output.refusal_reason) == (None, "technical_error")
    assert "invalid model output after 3 attempts" in output.error
    assert not list(tmp_path.glob("cache/*/*.json"))  # failures are never cached


def test_every_generator_attempt_is_recorded_as_a_tool_call(tmp_path):
    good = '{"answer": "It costs €49 per user per month. [E1]", "citations": ["E1"],'
    good += ' "refusal_reason": null, "missing": []}'
    replies = iter(['{"answer": "€49 [E9]", "citations": ["E9"]}', good])

    class Scripted(CountingClient):
        def complete(self, messages, schema):
            self.calls += 1
            return chat.Completion(text=next(replies), finish_reason="stop")

    output = backend_with(Scripted(), config(tmp_path)).generate(request())
    statuses = [(v["tool"], v["attempt"], v["status"]) for v in output.validations]
    assert statuses == [("generate_answer", 1, "invalid"), ("generate_answer", 2, "valid")]
    assert output.validations[0]["errors"] and output.answer.endswith("[E1]")


def test_the_revise_prompt_names_the_rejected_claims():
    revised = request().model_copy(
        update={"feedback": ["figure not in evidence: €45"], "unsupported_claims": ["It is €45."]}
    )
    user = generation.build_messages(revised)[-1]["content"]
    assert "It is €45." in user and "figure not in evidence: €45" in user
    assert generation.prompt_hash(revised) != generation.prompt_hash(request())


@pytest.mark.parametrize(
    ("answer", "span", "expected"),
    [
        ("500,000 [E1]", "Files of up to 500,000 rows per file.", "500,000 rows [E1]"),
        ("Two [E1].", "Two 90-minute sessions a week.", "Two 90-minute sessions [E1]"),
        ("25% [E1]", "Credit: 25% below 99.0%.", "25% [E1]"),  # a preposition is no unit
        ("10 [E1]", "Credit: 10% below 99.9%.", "10 [E1]"),  # "10%" is another figure
        ("500,000 [E1]", "A 1,500,000 budget.", "500,000 [E1]"),  # not written as itself
        ("500,000 [E1]", "500,000 rows, or 500,000 users.", "500,000 [E1]"),  # ambiguous
        ("500,000 rows [E1]", "Up to 500,000 rows per file.", "500,000 rows [E1]"),
    ],
)
def test_a_bare_figure_gets_the_words_its_evidence_writes_after_it(answer, span, expected):
    assert generation.with_figure_words(answer, {"E1": span}) == expected


def test_a_bare_figure_answer_comes_back_with_its_unit(tmp_path):
    reply = '{"answer": "25 [E1]", "citations": ["E1"], "refusal_reason": null, "missing": []}'
    output = backend_with(CountingClient(reply=reply), config(tmp_path)).generate(
        request(evidence=[("E1", "The Enterprise plan needs at least 25 seats.")])
    )
    assert output.answer == "25 seats [E1]"


def test_cache_hit_does_not_call_the_model(tmp_path):
    reply = '{"answer": "It costs €49 per user per month.", "citations": ["E1"],'
    reply += ' "refusal_reason": null, "missing": []}'
    first = CountingClient(reply=reply)
    output = backend_with(first, config(tmp_path)).generate(request())
    assert output.answer == "It costs €49 per user per month. [E1]"  # listed id appended

    second = CountingClient(reply="never used")
    again = backend_with(second, config(tmp_path)).generate(request())
    assert second.calls == 0
    assert again.cached and again.answer == output.answer


def test_rate_limit_honours_retry_after():
    responses = iter(
        [
            httpx.Response(429, headers={"Retry-After": "2"}),
            httpx.Response(
                200,
                json={
                    "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 1},
                },
            ),
        ]
    )
    slept: list[float] = []
    client = chat.OpenAICompatibleClient(
        "http://127.0.0.1:9/v1",
        "m",
        sleep=slept.append,
        transport=httpx.MockTransport(lambda _request: next(responses)),
    )
    completion = client.complete([{"role": "user", "content": "hi"}], {})
    assert slept == [2.0]
    assert (completion.text, completion.tokens_prompt) == ("{}", 5)


# ---------------------------------------------------------------- openai_compatible, real server


@pytest.fixture(scope="module")
def llama_server():
    try:
        with server.local_openai_server(str(MODEL), alias="qwen", startup_timeout_s=90) as base_url:
            yield base_url
    except errors.LLMError as exc:
        pytest.fail(str(exc))


@needs_model
def test_openai_compatible_answers_against_a_real_llama_cpp_server(llama_server, tmp_path):
    # One answer can take minutes on a shared 2-core machine; this test is about the HTTP path,
    # not latency, so a slow reply must not become a timeout and a retry.
    cfg = config(
        tmp_path, backend="openai_compatible", base_url=llama_server, model="qwen", timeout_s=600
    )
    output = generation.make_backend(cfg).generate(request())
    assert_cited_price(output)
    assert output.model_id == "openai-compatible:qwen"
    assert output.tokens_prompt and output.tokens_completion


def test_openai_compatible_server_down_is_a_technical_error(tmp_path):
    cfg = config(
        tmp_path,
        backend="openai_compatible",
        base_url=f"http://127.0.0.1:{server.free_port()}/v1",  # nothing listens there
        timeout_s=2,
        connect_timeout_s=0.5,
        http_retries=2,
        backoff_s=0.01,
    )
    started = time.monotonic()
    output = generation.make_backend(cfg).generate(request())
    assert time.monotonic() - started < 10
    assert (output.answer, output.refusal_reason) == (None, "technical_error")
    assert "gave up after 3 attempts" in output.error
    assert output.citations == [] and not re.search(r"\d", " ".join(output.missing))


# ---------------------------------------------------------------- llama.cpp details (xllamacpp)


def logprobs(**tokens: float) -> list[dict]:
    return [{"token": token.replace("_", " "), "logprob": lp} for token, lp in tokens.items()]


def test_p_yes_is_the_yes_mass_over_the_yes_and_no_mass_of_the_top_tokens():
    # Yes 0.5 + yes 0.1 against No 0.2 + " no" 0.1; "The" counts for neither
    top = logprobs(Yes=-0.693147, No=-1.609438, yes=-2.302585, _no=-2.302585, The=-3.0)
    assert yesno.p_yes_from_top_logprobs(top) == pytest.approx(0.6 / 0.9, abs=1e-5)
    assert yesno.p_yes_from_top_logprobs(logprobs(Yes=-0.1, The=-3.0)) == 1.0
    assert yesno.p_yes_from_top_logprobs(logprobs(NO=-0.1)) == 0.0
    with pytest.raises(errors.JudgeError, match="neither yes nor no"):
        yesno.p_yes_from_top_logprobs(logprobs(The=-0.1, Paris=-2.0))


@needs_model
def test_the_judge_reads_p_yes_and_an_overlong_prompt_is_a_judge_error():
    judge = yesno.LlamaYesNo(LLMSettings(path=str(MODEL), n_ctx=512))
    passage = "Passage: Paris is the capital of France.\n"
    assert judge.p_yes("Answer yes or no.", passage + "Is Paris in France?") > 0.8
    assert judge.p_yes("Answer yes or no.", passage + "Is Paris in Germany?") < 0.2
    with pytest.raises(errors.JudgeError, match=r"judge prompt of \d+ tokens exceeds n_ctx 512"):
        judge.p_yes("Answer yes or no.", "word " * 600)


@needs_model
def test_the_in_process_model_listens_on_loopback_behind_a_key_nobody_has(llama_client):
    address = llama_client.server.listening_address
    assert address.startswith("http://127.0.0.1:")
    assert httpx.get(f"{address}/v1/models", trust_env=False).status_code == 401


def test_the_server_command_fails_clearly_on_a_missing_model(tmp_path, capsys):
    assert server.main(["--model", str(tmp_path / "nowhere.gguf"), "--port", "0"]) == 1
    assert "could not load" in capsys.readouterr().err


def test_prefix_states_are_off_without_a_kv_cache_dir():
    assert chat.prime_prefix(object(), "<|im_start|>system\nx<|im_end|>\n") == "off"
    assert yesno.chatml("S", "U").startswith(chat.chatml_system_prefix("S") + "U")


@needs_model
def test_a_fresh_process_restores_the_system_prompt_instead_of_reading_it_again(tmp_path):
    """`grounding ask` is a fresh process: the system prompt's KV state comes from disk."""
    import xllamacpp

    sha = files.verify_gguf(MODEL, files.PACKAGED_MODEL_SHA256)
    prefix = chat.chatml_system_prefix(generation.SYSTEM_PROMPT)

    def fresh() -> tuple[object, chat.PrefixStates]:
        params = chat.server_params(str(MODEL), 1024, None, str(tmp_path))
        server = xllamacpp.Server(params)
        identity = f"{sha}|1024|repacked"
        return server, chat.PrefixStates(server, params.api_keys[0], str(tmp_path), identity)

    first, states = fresh()
    assert states.prime(prefix) == "saved"
    assert states.prime(prefix) == "done"  # once per process
    assert [p.suffix for p in tmp_path.iterdir()] == [".bin"]  # no partial file left
    del first, states
    second, states = fresh()
    assert states.prime(prefix) == "restored"
    prompt = prefix + "Say yes.<|im_end|>\n<|im_start|>assistant\n"
    body = second.handle_completions({"prompt": prompt, "max_tokens": 1, "cache_prompt": True})
    assert body["timings"]["cache_n"] >= 200  # the system prompt was not evaluated again
    # the generator's chat request, rendered by the GGUF's own template, starts with that prefix
    messages = [
        {"role": "system", "content": generation.SYSTEM_PROMPT},
        {"role": "user", "content": "Question: anything"},
    ]
    body = second.handle_chat_completions({"messages": messages, "max_tokens": 1})
    assert body["timings"]["cache_n"] >= 200
    # a damaged file is not read back: the request evaluates the prompt itself
    [saved] = tmp_path.iterdir()
    saved.write_bytes(b"not a llama.cpp state")
    third, states = fresh()
    assert states.prime(prefix) == "failed"
    body = third.handle_completions({"prompt": prompt, "max_tokens": 1, "cache_prompt": True})
    assert body["timings"]["cache_n"] == 0 and body["choices"]


def test_warm_lists_the_system_prompts_each_stage_sends():
    from flows.pipeline_config import load_config, parse_overrides
    from flows.warm import prompts_by_stage
    from stages import guardrails
    from stages.guardrails import consistency, judge

    settings = load_config(ROOT / "configs" / "pipeline.yaml", {})
    stages = {stage: prompts for stage, _, prompts in prompts_by_stage(settings)}
    assert stages["generation"] == [generation.SYSTEM_PROMPT]  # whatever the backend
    assert stages["guardrails"] == [judge.SYSTEM_PROMPT, consistency.PROBE_SYSTEM]
    quiet = load_config(
        ROOT / "configs" / "pipeline.yaml",
        parse_overrides(["guardrails.judge=nli", "guardrails.consistency_probes=0"]),
    )
    assert guardrails.system_prompts(quiet.stage_config("guardrails")) == []
    server = LLMSettings(backend="openai_compatible", base_url="http://127.0.0.1:9/v1")
    assert chat.save_system_prompts(server, ["S"]) == ["off"]  # nothing to save on a server
    no_dir = LLMSettings(kv_cache_dir=None)
    assert chat.save_system_prompts(no_dir, ["S", "T"]) == ["off", "off"]


@needs_model
def test_grounding_warm_saves_the_prompts_an_ask_then_restores(tmp_path):
    """`make setup` runs `grounding warm`: the first ask must not read the system prompts."""
    kv = tmp_path / "kv"
    args = [
        "--set",
        f"generation.llm.kv_cache_dir={kv}",
        "--set",
        f"guardrails.llm.kv_cache_dir={kv}",
    ]
    command = [sys.executable, "-m", "cli", "warm", *args]
    env = {**os.environ, "COLUMNS": "160"}
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("saved") == 3 and len(list(kv.glob("*.bin"))) == 3
    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and again.stdout.count("restored") == 3, again.stdout
    # the generator's prompt, as a later process's first request sends it, is not read again
    server = LLMSettings(kv_cache_dir=str(kv))
    client = chat.chat_client(server, max_tokens=1)
    messages = [
        {"role": "system", "content": generation.SYSTEM_PROMPT},
        {"role": "user", "content": "Question: anything"},
    ]
    assert chat.save_system_prompts(server, [generation.SYSTEM_PROMPT]) == ["restored"]
    body = client.server.handle_chat_completions({"messages": messages, "max_tokens": 1})
    assert body["timings"]["cache_n"] >= 200


def test_grounding_warm_fails_clearly_on_a_missing_model(tmp_path):
    missing = str(tmp_path / "nowhere.gguf")
    command = [
        sys.executable, "-m", "cli", "warm",
        "--set", f"generation.llm.path={missing}", "--set", f"guardrails.llm.path={missing}",
        "--set", f"generation.llm.kv_cache_dir={tmp_path}",
        "--set", f"guardrails.llm.kv_cache_dir={tmp_path}",
    ]  # fmt: skip
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1
    assert "error" in done.stdout and "nowhere.gguf" in done.stdout
