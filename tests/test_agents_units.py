"""The serving pieces without a server: renderings, error kinds, passages, declarations,
settings, keys and the reference agent loop with a scripted model."""

from __future__ import annotations

import json

import jsonschema
import pyarrow as pa
import pytest

from agents.serving import auth, result, tools
from agents.serving.agent import run_agent
from agents.serving.agents_config import AgentsConfigError, load_agents_config
from agents.serving.ground import error_kind_of, passages, tool_chunks, tool_eligibility
from stages import contracts
from tests.conftest import ROOT

AGENTS = ROOT / "configs" / "agents.yaml"


@pytest.fixture(scope="module")
def agents():
    return load_agents_config(AGENTS)


def test_renderings_for_openai_and_anthropic(agents):
    missing = result.not_found(agents, "Initech contract?", unwritten=["initech"])
    message = missing.openai_message("call_1")
    assert message["role"] == "tool" and message["tool_call_id"] == "call_1"
    block = missing.anthropic_block("toolu_1")
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": message["content"],
        "is_error": True,
    }
    body = json.loads(block["content"])
    assert body["status"] == "not_found" and "own knowledge" in body["instruction"]
    source = result.Source(
        evidence_id="E1", title="Price list", span=result.Span(doc_id="p"), text="€49", score=0.8
    )
    found = result.with_content(agents, "success", "price?", [source], score=0.8)
    assert found.anthropic_block("t")["is_error"] is False
    item = found.responses_item("call_9")  # the Responses API's input item for the result
    assert item == {
        "type": "function_call_output",
        "call_id": "call_9",
        "output": found.model_text(),
    }
    assert json.loads(found.model_text())["sources"][0]["title"] == "Price list"
    low = result.with_content(agents, "low_relevance", "price?", [source], score=0.6)
    assert low.content.startswith(result.LOW_RELEVANCE_WARNING)


@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (None, None, None),
        (200, None, None),
        (504, None, "timeout"),
        (None, "TimeoutError: read timed out", "timeout"),
        (429, None, "rate_limit"),
        (None, {"type": "RateLimitError", "message": "quota"}, "rate_limit"),
        (401, None, "auth"),
        (None, "KeyError: API key not set", "auth"),
        (503, None, "unavailable"),
        (None, "ConnectionRefusedError: connection refused", "unavailable"),
        (500, None, "unknown"),
        (None, "ValueError: bad", "unknown"),
    ],
)
def test_error_kinds(status, error, kind):
    assert error_kind_of(status, error) == kind


def test_passages_of_json_text_and_nothing():
    assert passages(None) == [] and passages("") == [] and passages({"results": []}) == []
    assert passages([{}, {"a": None}]) == []
    records = passages({"results": [{"client": "Fabrikam", "days": 90}], "total": 1})
    assert records == [("item 1", "client: Fabrikam; days: 90")]
    assert passages('[{"x": "y"}]') == [("item 1", "x: y")]
    text = passages("First paragraph.\n\nSecond one.")
    assert [t for _, t in text] == ["First paragraph.", "Second one."]


def test_tool_passages_become_contract_tables_with_every_field_named():
    found = passages({"results": [{"client": "Fabrikam", "days": 90}, {"client": "Initech"}]})
    chunks = tool_chunks(found, "crm_lookup")
    assert chunks.schema == contracts.schema_of("chunks")
    rows = chunks.to_pylist()
    assert [r["text"] for r in rows] == ["client: Fabrikam; days: 90", "client: Initech"]
    assert rows[0]["char_end"] == len(rows[0]["text"]) and rows[0]["origin"] == "text"
    assert {r["doc_id"] for r in rows} == {"tool-1", "tool-2"}
    eligibility = tool_eligibility("q1", chunks)
    assert eligibility.schema == contracts.schema_of("eligibility")
    assert eligibility.column("doc_id").to_pylist() == ["tool-1", "tool-2"]
    assert all(eligibility.column("eligible").to_pylist())


def test_tool_chunks_fail_loudly_on_a_field_the_contract_gained(monkeypatch):
    grown = contracts.schema_of("chunks").append(pa.field("summary", pa.string()))
    monkeypatch.setitem(contracts.SCHEMAS, "chunks", grown)
    with pytest.raises(contracts.ContractError, match="missing field 'summary'"):
        tool_chunks([("result", "Net 30 days.")], "tool")


def test_tool_eligibility_fails_loudly_on_a_renamed_field(monkeypatch):
    schema = contracts.schema_of("eligibility")
    renamed = pa.schema(
        [field.with_name("why") if field.name == "reason" else field for field in schema]
    )
    monkeypatch.setitem(contracts.SCHEMAS, "eligibility", renamed)
    chunks = tool_chunks([("result", "Net 30 days.")], "tool")
    with pytest.raises(contracts.ContractError, match="ground-tool-result.*'why'"):
        tool_eligibility("q1", chunks)


@pytest.mark.parametrize("fmt", ["openai", "openai_responses", "anthropic"])
def test_declarations_are_valid_json_schema(fmt):
    declared = tools.declarations(fmt)
    assert len(declared) == 3
    for tool in declared:
        schema = {
            "openai": lambda t: t["function"]["parameters"],
            "openai_responses": lambda t: t["parameters"],  # flat: name beside type "function"
            "anthropic": lambda t: t["input_schema"],
        }[fmt](tool)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert fmt != "openai_responses" or (tool["type"], bool(tool["name"])) == ("function", True)
    with pytest.raises(ValueError, match="unknown format"):
        tools.declarations("gemini")


def test_keys_must_be_stored_hashed_and_map_to_principals(agents):
    with pytest.raises(AgentsConfigError, match="sha256"):
        load_agents_config(AGENTS, api_keys={"plain-key": "employee"})
    keyed = agents.model_copy(update={"api_keys": {auth.key_hash("k1"): "hr_manager"}})
    assert auth.principal_for(keyed, "k1") == "hr_manager"
    assert auth.principal_for(keyed, None) == "employee"
    with pytest.raises(auth.AuthError):
        auth.principal_for(keyed, "")
    with pytest.raises(auth.AuthError):
        auth.principal_for(keyed, "k2")
    closed = keyed.model_copy(update={"anonymous_principal": None})
    with pytest.raises(auth.AuthError, match="required"):
        auth.principal_for(closed, None)
    assert auth.key_from_headers({"authorization": "Bearer abc"}) == "abc"
    assert auth.key_from_headers({"x-api-key": "xyz"}) == "xyz"


class ScriptedModel:
    """Calls search_knowledge_base once, then answers from what it got."""

    def __init__(self):
        self.seen = []

    def turn(self, messages, declared, choice):
        self.seen.append((choice, [d["function"]["name"] for d in declared]))
        if messages[-1]["role"] == "user":
            arguments = json.dumps(
                {"query": "Initech termination notice", "query_type": "contract"}
            )
            call = {
                "type": "function",
                "function": {"name": "search_knowledge_base", "arguments": arguments},
            }
            return {"content": None, "tool_calls": [call]}
        grounded = json.loads(messages[-1]["content"])
        return {"content": f"The knowledge base says: {grounded['status']}."}


class FakeEngine:
    def __init__(self, agents):
        self.agents = agents
        self.calls = []

    def search(self, query, principal, query_type=None):
        self.calls.append((query, principal, query_type))
        return result.not_found(self.agents, query, query_type, unwritten=["initech"])


def test_the_agent_loop_searches_first_and_answers_from_the_result(agents):
    engine, model = FakeEngine(agents), ScriptedModel()
    run = run_agent(engine, model, "What is Initech's termination notice?", "sales_rep")
    assert engine.calls == [("Initech termination notice", "sales_rep", "contract")]
    assert model.seen[0] == ("auto", ["search_knowledge_base"])
    assert run["answer"] == "The knowledge base says: not_found."
    tool_message = run["run"]["messages"][3]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_0_0"
    assert run["tool_results"][0]["is_error"] is True


def test_a_tool_call_written_as_text_is_a_call():
    from agents.serving.agent import calls_in_text

    # what the local Qwen2.5 GGUF wrote instead of tool_calls
    call_json = '{"name": "search_knowledge_base", "arguments": {"query": "Enterprise price"}}'
    text = f"```json\n{call_json}\n```"
    (call,) = calls_in_text(text)
    assert json.loads(call["function"]["arguments"]) == {"query": "Enterprise price"}
    assert calls_in_text("The Enterprise plan costs €49 [E1].") == []


class AnswersAtOnce:
    def turn(self, messages, declared, choice):
        if messages[-1]["role"] == "user":
            return {"content": "It costs €42, I believe."}  # an answer without any search
        return {"content": "Not in the knowledge base."}


def test_the_loop_searches_before_any_answer(agents):
    engine = FakeEngine(agents)
    run = run_agent(engine, AnswersAtOnce(), "What does Initech pay?", "employee")
    assert engine.calls == [("What does Initech pay?", "employee", None)]
    assert run["answer"] == "Not in the knowledge base."
    assert "€42" not in json.dumps(run["run"]["messages"])


def test_cli_tools_prints_declarations():
    from typer.testing import CliRunner

    from cli.app import app

    printed = CliRunner().invoke(app, ["tools", "--format", "anthropic"])
    assert printed.exit_code == 0
    assert [t["name"] for t in json.loads(printed.stdout)][0] == "search_knowledge_base"


def test_cli_api_refuses_a_public_bind_without_keys(shared_store, tmp_path):
    from typer.testing import CliRunner

    from cli.app import app
    from tests.conftest import config_on_copy

    config = config_on_copy(shared_store, tmp_path, "kb")
    refused = CliRunner().invoke(
        app, ["api", "--host", "0.0.0.0", "--set", f"store={config.store}"]
    )
    assert refused.exit_code == 2
    assert "refusing to bind 0.0.0.0: no API keys are configured" in refused.output


class RepeatsItself:
    """What the local GGUF did on the Initech question: the same call again, twice over."""

    def turn(self, messages, declared, choice):
        call = '{"name": "search_knowledge_base", "arguments": {"query": "Initech notice"}}'
        return {"content": f"<tools>\n{call}\n</tools>\n{call}"}


def test_a_repeated_call_ends_with_the_grounded_results_own_answer(agents):
    engine = FakeEngine(agents)
    run = run_agent(engine, RepeatsItself(), "What is Initech's notice period?", "employee")
    assert len(engine.calls) == 1  # the repeat is not searched again
    assert run["answered_by"] == "grounded_result"
    assert run["answer"].startswith("I could not find this in the knowledge base")
    assert run["report"] is None or run["report"]["action"] == "emit"  # a refusal, not invented
    assert run["run"]["messages"][-1] == {"role": "assistant", "content": run["answer"]}
    assert "search_knowledge_base" not in run["answer"]


class SaysNothing:
    def turn(self, messages, declared, choice):
        if messages[-1]["role"] == "user":
            return {"content": '{"name": "search_knowledge_base", "arguments": {"query": "x"}}'}
        return {"content": "  "}  # what the local GGUF replied after a not_found result


def test_an_empty_reply_gets_the_grounded_results_answer(agents):
    run = run_agent(FakeEngine(agents), SaysNothing(), "What is Initech's notice?", "employee")
    assert run["answered_by"] == "grounded_result"
    assert run["answer"].startswith("I could not find this in the knowledge base")


def test_the_served_check_settings_are_validated_when_the_config_loads():
    assert load_agents_config(AGENTS).check == {}
    assert load_agents_config(AGENTS, check={"judge": "fast"}).check == {"judge": "fast"}
    with pytest.raises(AgentsConfigError, match="check.judge"):
        load_agents_config(AGENTS, check={"judge": "gpt"})
    with pytest.raises(AgentsConfigError, match="check.colour"):
        load_agents_config(AGENTS, check={"colour": "red"})


def test_the_served_check_loads_its_judge_once_for_every_request(monkeypatch):
    from agents.checking import check as agent_check
    from agents.serving.http_api import make_checker

    made = []
    real = agent_check.make_toolkit
    monkeypatch.setattr(agent_check, "make_toolkit", lambda c: made.append(c) or real(c))
    check_run = make_checker({"judge": "none"})
    run = {
        "question": "What does the Business plan cost?",
        "tool_results": [{"tool": "kb", "content": "Business: €44 per user per month."}],
        "answer": "The Business plan costs €44 per user per month.",
    }
    reports = [check_run(run), check_run(run)]
    assert len(made) == 1 and made[0].judge == "none"
    assert [r["action"] for r in reports] == ["emit", "emit"]
    with pytest.raises(ValueError):
        check_run({"question": "q?", "tool_results": [1]})


def test_credentials_fail_closed():
    for headers in (
        {"authorization": "Basic dXNlcjpwYXNz"},
        {"authorization": "Bearer"},
        {"authorization": "Bearer   "},
        {"authorization": "Token abc"},
        {"x-api-key": "  "},
        {"authorization": "Bearer a", "x-api-key": "b"},
    ):
        with pytest.raises(auth.AuthError):
            auth.key_from_headers(headers)
    assert auth.key_from_headers({}) is None
    assert auth.key_from_headers({"authorization": "bearer  k1 "}) == "k1"
    assert auth.key_from_headers({"authorization": "Bearer k1", "x-api-key": "k1"}) == "k1"


def test_new_key_refuses_unknown_principals(capsys):
    assert auth.main(["new-key", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "unknown principal 'nobody'" in err and "employee" in err


def test_documented_key_steps_work_under_the_shipped_config(tmp_path, capsys):
    """The shipped `api_keys: {}`: the printed lines, pasted as the docs say, and --write both
    give a config that loads with the key; comments and other settings are kept."""
    import yaml

    config = tmp_path / "agents.yaml"
    config.write_text(AGENTS.read_text())
    assert "api_keys: {}" in config.read_text()
    assert auth.main(["new-key", "sales_rep", "--config", str(config)]) == 0
    printed = capsys.readouterr().out.splitlines()
    key = printed[0].rsplit(" ", 1)[-1]
    block = printed[printed.index("api_keys:") :][:2]
    pasted = config.read_text().replace("api_keys: {}", "\n".join(block))
    assert yaml.safe_load(pasted)["api_keys"] == {auth.key_hash(key): "sales_rep"}
    assert auth.main(["new-key", "hr_manager", "--write", "--config", str(config)]) == 0
    written = capsys.readouterr().out.splitlines()[0].rsplit(" ", 1)[-1]
    loaded = load_agents_config(config)
    assert auth.principal_for(loaded, written) == "hr_manager"
    assert auth.main(["new-key", "contractor", "--write", "--config", str(config)]) == 0
    assert len(load_agents_config(config).api_keys) == 2
    assert "# API keys: sha256 hex" in config.read_text()  # comments kept
    assert load_agents_config(config).instructions == load_agents_config(AGENTS).instructions


def test_the_default_kv_cache_goes_under_the_store(tmp_path):
    from stages.models import chat

    try:
        chat.use_cache_root(tmp_path / "store")
        assert chat.kv_cache_path(chat.DEFAULT_KV_CACHE_DIR) == (tmp_path / "store" / "_llm_kv")
        assert chat.kv_cache_path(str(tmp_path / "mine")) == tmp_path / "mine"  # explicit: kept
    finally:
        chat.use_cache_root(None)
    assert chat.kv_cache_path(chat.DEFAULT_KV_CACHE_DIR) == (
        chat.Path.cwd() / chat.DEFAULT_KV_CACHE_DIR
    )


class TokenServer:
    """A stand-in for xllamacpp's Server: streams one chunk per token to the callback and stops
    when the callback returns True, as llama.cpp cancels its task."""

    def __init__(self, tokens: int, seconds_per_token: float) -> None:
        self.tokens, self.pace, self.streamed = tokens, seconds_per_token, 0

    def handle_chat_completions(self, request, callback=None):
        import time

        if not request.get("stream"):
            time.sleep(self.tokens * self.pace)
            self.streamed = self.tokens
            return {"choices": [{"message": {"content": "x" * self.tokens}}]}
        for i in range(self.tokens):
            time.sleep(self.pace)
            self.streamed += 1
            last = i == self.tokens - 1
            chunk = {
                "choices": [{"delta": {"content": "x"}, "finish_reason": "stop" if last else None}]
            }
            if callback(chunk):
                return None
        return None


def test_a_stopped_request_stops_the_model_at_its_next_token(monkeypatch):
    import threading
    import time

    from stages.models import chat

    server = TokenServer(tokens=400, seconds_per_token=0.01)
    client = chat.LlamaCppClient.__new__(chat.LlamaCppClient)
    client.params = {"temperature": 0.0, "max_tokens": 400, "seed": 0}
    monkeypatch.setattr(chat.LlamaCppClient, "server", property(lambda self: server))
    assert client.complete([{"role": "user", "content": "q"}], {}).text == "x" * 400
    server.streamed = 0
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with chat.stop_when(stop), pytest.raises(chat.Cancelled):
        client.complete([{"role": "user", "content": "q"}], {})
    assert time.monotonic() - started < 0.5 and server.streamed < 60
    done = threading.Event()
    done.set()
    with chat.stop_when(done), pytest.raises(chat.Cancelled):  # stopped before it starts
        client.complete([{"role": "user", "content": "q"}], {})
    whole = TokenServer(tokens=5, seconds_per_token=0.0)
    monkeypatch.setattr(chat.LlamaCppClient, "server", property(lambda self: whole))
    with chat.stop_when(threading.Event()):
        streamed = client.complete([{"role": "user", "content": "q"}], {})
    assert streamed.text == "xxxxx" and streamed.finish_reason == "stop"


def test_a_wrong_stdio_key_is_refused_before_the_server_starts(agents, monkeypatch):
    from types import SimpleNamespace

    from agents.serving import mcp_server

    keyed = agents.model_copy(update={"api_keys": {auth.key_hash("k1"): "hr_manager"}})
    engine = SimpleNamespace(agents=keyed)
    started: list[str | None] = []
    monkeypatch.setattr(
        mcp_server,
        "create_server",
        lambda e, key: SimpleNamespace(run=lambda t: started.append(key)),
    )
    monkeypatch.setenv(mcp_server.KEY_ENV, "wrong")
    with pytest.raises(auth.AuthError):
        mcp_server.serve_stdio(engine)
    assert started == []
    monkeypatch.setenv(mcp_server.KEY_ENV, "")  # empty: no credential, the anonymous principal
    mcp_server.serve_stdio(engine)
    monkeypatch.setenv(mcp_server.KEY_ENV, "k1")
    mcp_server.serve_stdio(engine)
    assert started == [None, "k1"]


def test_the_corpus_watch_swaps_snapshots_and_survives_a_failed_round(agents):
    import threading
    import time
    from types import SimpleNamespace

    from agents.serving.engine import Engine

    engine = Engine.__new__(Engine)
    engine._reindexing = threading.Lock()
    engine.agents = agents
    tables = SimpleNamespace(num_rows=1)
    engine.snapshot = SimpleNamespace(shared={"documents": tables, "chunks": tables})
    rounds: list[int] = []

    def load():
        rounds.append(1)
        if len(rounds) == 1:
            raise OSError("store unreadable for a moment")
        fresh = SimpleNamespace(num_rows=2)
        return SimpleNamespace(shared={"documents": fresh, "chunks": fresh})

    engine.load_snapshot = load
    stopped = threading.Event()
    thread = engine.watch(0.05, stopped)
    deadline = time.monotonic() + 5
    while engine.shared["documents"].num_rows != 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    stopped.set()
    thread.join(2)
    assert engine.shared["documents"].num_rows == 2 and len(rounds) >= 2
    assert not thread.is_alive()
