"""Judgment models: a client follows the run's config, never an earlier run's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stages import contracts, rerank, retrieval
from tests.conftest import ALL_DOCS, eligibility_table

QUESTION = "What is the salary band for level L3?"


class FakeLlamaCppClient:
    """Stands in for the in-process GGUF client: its model id is the file it was built for."""

    def __init__(self, model_path, **_settings) -> None:
        self.model_id = Path(model_path).name

    def complete(self, messages, schema):
        from stages.models.chat import Completion

        if "verdict" in schema["properties"]:
            return Completion(text='{"verdict": "HIGH"}')
        return Completion(text='{"queries": ["pay range for L3"]}')


@pytest.fixture
def fake_gguf_client(monkeypatch):
    from stages.models import chat

    monkeypatch.setattr(chat, "LlamaCppClient", FakeLlamaCppClient)


def _model_ids(calls) -> list[str]:
    return [json.loads(row["args"])["model_id"] for row in calls.to_pylist()]


def _rerank_inputs(tiny_index) -> dict:
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": QUESTION, "principal": "p", "query_type": "pricing"}],
        "questions",
    )
    candidate = {
        "question_id": "q1",
        "pool": "eligible",
        "chunk_id": "hr-salaries#0000",
        "doc_id": "hr-salaries",
        "fused_score": 0.03,
        "rank": 1,
    }
    status = {"question_id": "q1", "status": "ok", "n_eligible_docs": 3, "error": None}
    return {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", dict.fromkeys(ALL_DOCS, "eligible")),
        "candidates": contracts.from_rows([candidate], "candidates"),
        "retrieval_status": contracts.from_rows([status], "retrieval_status"),
        "retrieval_queries": contracts.empty("retrieval_queries"),
    }


def test_rerank_check_uses_each_runs_own_model(tiny_index, fake_gguf_client):
    """Two runs in one process (a backfill, `grounding serve`, a Dask worker) with different
    models: the second must ask its own model, or its artifact key records a model it never used."""
    inputs = _rerank_inputs(tiny_index)
    for model in ("first.gguf", "second.gguf"):
        config = rerank.Config(llm_check_query_types=["pricing"], llm_model_path=model)
        assert _model_ids(rerank.run(inputs, config)["confidence_calls"]) == [model]


def test_retrieval_rewriter_uses_each_runs_own_model(tiny_index, fake_gguf_client):
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": QUESTION, "principal": "p", "query_type": "general"}],
        "questions",
    )
    inputs = {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", dict.fromkeys(ALL_DOCS, "eligible")),
    }
    for model in ("first.gguf", "second.gguf"):
        config = retrieval.Config(llm_rewriter=True, llm_model_path=model)
        assert _model_ids(retrieval.run(inputs, config)["rewrite_calls"]) == [model]


def test_old_flat_model_keys_still_configure_the_shared_block():
    from stages import generation, guardrails
    from stages.models.settings import LLMSettings

    config = guardrails.Config(
        llm_backend="openai_compatible", model_path="a.gguf", base_url="http://x/v1"
    )
    assert config.llm == LLMSettings(
        backend="openai_compatible", path="a.gguf", base_url="http://x/v1"
    )
    assert rerank.Config(llm_model_path="b.gguf").llm.path == "b.gguf"
    assert retrieval.Config(llm_model_path="c.gguf").llm.path == "c.gguf"
    # a flat key (e.g. a command-line override of the old name) wins over the block
    assert guardrails.Config(llm={"path": "old.gguf"}, model_path="new.gguf").llm.path == "new.gguf"
    # generation's backend names the kind of model it asks
    assert generation.Config(backend="openai_compatible").llm.backend == "openai_compatible"
    assert generation.Config().llm == LLMSettings()


def test_a_yes_no_judge_is_identified_by_its_file_and_hash(tmp_path):
    from stages.guardrails import judge
    from stages.models.settings import LLMSettings

    ids = []
    for name, body in (("one.gguf", b"first"), ("two.gguf", b"second")):
        (tmp_path / name).write_bytes(b"GGUF" + body)
        ids.append(judge.llm_judge(LLMSettings(path=str(tmp_path / name), sha256=None)).model_id)
    assert ids[0].startswith("one@") and ids[1].startswith("two@") and ids[0] != ids[1]


def test_a_command_line_override_reaches_the_model_block(tmp_path):
    from tests.conftest import load_test_config

    config = load_test_config(tmp_path, **{"guardrails.llm.path": "other.gguf"})
    guardrails = config.stage_config("guardrails")
    assert guardrails.llm.path == "other.gguf" and guardrails.llm.backend == "llama_cpp"
    legacy = load_test_config(tmp_path, **{"rerank.llm_model_path": "old-name.gguf"})
    assert legacy.stage_config("rerank").llm.path == "old-name.gguf"


def test_llama_cpp_reply_timings_are_logged_at_debug(caplog):
    import logging

    from stages.models import chat

    body = {
        "choices": [],
        "timings": {"cache_n": 295, "prompt_n": 238, "prompt_ms": 4174.2, "predicted_n": 41,
                    "predicted_ms": 2367.0},
    }  # fmt: skip
    with caplog.at_level(logging.DEBUG, logger="stages.models.chat"):
        assert chat.server_reply(body, "generation") is body
    (record,) = caplog.records
    assert record.getMessage() == (
        "llama.cpp generation: read 238 prompt tokens in 4.17s (295 reused), generated 41 in 2.37s"
    )
    assert record.prompt_tokens == 238 and record.generation_s == 2.367
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="stages.models.chat"):
        chat.server_reply(body, "generation")
    assert not caplog.records


def test_weight_repacking_is_a_setting_that_reaches_llama_cpp(tmp_path):
    from stages.models import chat, yesno
    from stages.models.settings import LLMSettings

    assert not chat.server_params("m.gguf", 1024, None).no_extra_bufts  # llama.cpp default
    assert chat.server_params("m.gguf", 1024, None, repack_weights=False).no_extra_bufts
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(60))
    for repack in (False, True):
        settings = LLMSettings(path=str(model), sha256=None, repack_weights=repack)
        client = chat.chat_client(settings, max_tokens=16, temperature=0.0, seed=0)
        assert client._load_args[-1] is repack  # part of the loaded server's identity
        # other rounding, other probabilities: cached answers and verdicts are not shared
        assert yesno.LlamaYesNo(settings).model_id == client.model_id
        assert client.model_id.endswith(f"@{client.sha256[:8]}" + ("" if repack else "+plain"))
