"""The serving pieces without a server: renderings, error kinds, passages, declarations,
settings, keys and the reference agent loop with a scripted model."""

from __future__ import annotations

import json

import jsonschema
import pytest

from agents.serving import auth, result, tools
from agents.serving.agent import run_agent
from agents.serving.ground import error_kind_of, passages
from agents.serving.settings import AgentsConfigError, load_agents_config
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

    from flows.cli import app

    printed = CliRunner().invoke(app, ["tools", "--format", "anthropic"])
    assert printed.exit_code == 0
    assert [t["name"] for t in json.loads(printed.stdout)][0] == "search_knowledge_base"


def test_cli_api_refuses_a_public_bind_without_keys(shared_store, tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app
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
