"""Agent runs: formats, tool-call verification, evidence, diagnosis, check_run.

Checks run with `judge: none` (deterministic checks and word overlap), so no model is needed.
"""

from __future__ import annotations

import json

import pytest

from agents.checking import (
    RunError,
    RunFormatError,
    check_run,
    diagnosis,
    load,
    parse_run,
    tool_calls,
    tool_evidence,
)
from agents.checking.formats import ToolResult

NO_JUDGE = {"judge": "none"}

ORDER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_order",
        "description": "Look up an order by its id",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "pattern": "^ORD-[0-9]{5}$"},
                "fields": {"type": "string", "enum": ["status", "all"]},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            "required": ["order_id"],
        },
    },
}


def openai_run(args: dict | str, result: str, answer: str, question: str | None = None) -> dict:
    return {
        "run_id": "oa-1",
        "tools": [ORDER_TOOL],
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": question or "What is the status of order ORD-12345?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "get_order",
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": result},
            {"role": "assistant", "content": answer},
        ],
    }


ORDER_RESULT = json.dumps(
    {"order": {"id": "ORD-12345", "status": "shipped", "carrier": "DHL"}, "count": 1}
)


def anthropic_run(result_content, is_error: bool, answer: str) -> dict:
    return {
        "id": "an-1",
        "system": "Answer from the knowledge base.",
        "tools": [
            {
                "name": "search_kb",
                "description": "Search the knowledge base",
                "input_schema": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                },
            }
        ],
        "messages": [
            {"role": "user", "content": "How long is the return window?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me search."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "search_kb",
                        "input": {"query": "return window"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": result_content,
                        "is_error": is_error,
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": answer}]},
        ],
    }


# ---------------------------------------------------------------- formats


def test_openai_run_is_parsed():
    run = parse_run(openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "It has shipped."))
    assert run.format == "openai" and run.run_id == "oa-1"
    assert run.question == "What is the status of order ORD-12345?"
    assert [(c.call_id, c.name, c.args) for c in run.calls] == [
        ("call_1", "get_order", {"order_id": "ORD-12345"})
    ]
    assert run.results[0].name == "get_order" and run.results[0].content["order"]["carrier"]
    assert run.answer == "It has shipped." and "get_order" in run.tools


def test_anthropic_run_is_parsed_with_is_error():
    run = parse_run(anthropic_run([{"type": "text", "text": "boom"}], True, "Sorry."))
    assert run.format == "anthropic" and run.run_id == "an-1"
    assert run.calls[0].args == {"query": "return window"}
    assert run.results[0].is_error and run.results[0].name == "search_kb"
    assert run.answer == "Sorry." and run.question == "How long is the return window?"
    assert "Answer from the knowledge base." in run.user_texts


def test_generic_run_is_parsed():
    run = parse_run(
        {
            "question": "Who wrote it?",
            "tool_results": [{"tool": "search", "args": {"q": "x"}, "content": "Ann wrote it."}],
            "answer": "Ann.",
        },
        "g-1",
    )
    assert run.format == "generic" and run.run_id == "g-1"
    assert run.calls[0].name == "search" and run.results[0].content == "Ann wrote it."


def test_a_result_is_about_its_calls_arguments_unless_the_tool_is_a_search():
    def run(tool: str, args: dict, answer: str) -> dict:
        return {
            "question": "What time is it in Tokyo?",
            "tool_results": [{"tool": tool, "call_id": "c1", "args": args, "content": "14:05 JST"}],
            "answer": answer,
        }

    # the call asked about Tokyo: its result may be named so
    asked = check_run(run("get_time", {"city": "Tokyo"}, "It is 14:05 in Tokyo."), NO_JUDGE)
    assert asked["claims"][0]["status"] == "supported"
    other = check_run(run("get_time", {"city": "Tokyo"}, "It is 14:05 in Osaka."), NO_JUDGE)
    assert "name not in evidence: Osaka" in other["claims"][0]["reasons"]
    # a search query is the agent's own words: it says nothing of what was found (the place the
    # question asks about may qualify the answer; one only the agent's query names may not)
    searched = check_run(
        run("web_search", {"query": "time Kyoto"}, "It is 14:05 in Kyoto."), NO_JUDGE
    )
    assert "name not in evidence: Kyoto" in searched["claims"][0]["reasons"]


def test_generic_run_with_its_own_call_list_and_mcp_tool_declarations():
    run = {
        "question": "Weather in Paris tomorrow?",
        "tools": [
            {
                "name": "get_forecast",
                "description": "Weather forecast for a city",
                "inputSchema": {  # as an MCP server lists its tools
                    "type": "object",
                    "properties": {
                        "city": {"type": "string"},
                        "days": {"type": "integer", "maximum": 7},
                    },
                    "required": ["city"],
                },
            }
        ],
        "tool_calls": [
            {"id": "x", "name": "get_forecast", "arguments": {"city": "Paris", "days": 9}}
        ],
        "tool_results": [{"tool": "get_forecast", "call_id": "x", "content": {"sky": "rain"}}],
        "answer": "Rain.",
    }
    parsed = parse_run(run, "g-2")
    assert [(c.call_id, c.position) for c in parsed.calls] == [("x", 0)]
    assert [(r.call_id, r.position) for r in parsed.results] == [("x", 1)]
    assert parsed.tools["get_forecast"]["properties"]["days"]["maximum"] == 7
    report = check_run(run, NO_JUDGE)
    (validation,) = report["tool_call_validations"]
    assert validation["status"] == "invalid" and any("9" in e for e in validation["errors"])
    # a call id its result's own args repeat is one call, not two
    run["tool_results"][0]["args"] = {"city": "Paris"}
    assert len(parse_run(run, "g-3").calls) == 1
    # a result of no listed call comes after every listed call, even when ids repeat
    twice = {**run, "tool_calls": [run["tool_calls"][0]] * 2}
    twice["tool_results"] = [{"tool": "now", "args": {}, "content": "noon"}]
    parsed = parse_run(twice, "g-5")
    positions = [c.position for c in parsed.calls] + [r.position for r in parsed.results]
    assert len(set(positions)) == len(positions) and parsed.results[0].position > 2
    run["tool_calls"] = {"id": "x"}
    with pytest.raises(RunFormatError, match="'tool_calls' is not a list"):
        parse_run(run, "g-4")


def responses_run(answer: str) -> dict:
    """The same order run as the OpenAI Responses API logs it (request items, then output)."""
    function = ORDER_TOOL["function"]
    return {
        "id": "resp-1",
        "instructions": "You are a support agent.",
        "tools": [{"type": "function", **function}, {"type": "web_search_preview"}],
        "input": [
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "What is the status of ORD-12345?"}],
            },
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_order",
                "arguments": json.dumps({"order_id": "ORD-12345"}),
            },
            {"type": "function_call_output", "call_id": "call_1", "output": ORDER_RESULT},
        ],
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer}],
            }
        ],
    }


def test_openai_responses_run_is_parsed():
    run = parse_run(responses_run("It has shipped."))
    assert run.format == "openai_responses" and run.run_id == "resp-1"
    assert run.question == "What is the status of ORD-12345?"
    assert run.user_texts[0] == "You are a support agent."  # the instructions
    assert [(c.call_id, c.name, c.args) for c in run.calls] == [
        ("call_1", "get_order", {"order_id": "ORD-12345"})
    ]
    assert run.results[0].name == "get_order" and run.results[0].content["order"]["carrier"]
    assert run.answer == "It has shipped." and list(run.tools) == ["get_order"]  # no built-in


def test_openai_responses_run_is_checked_like_the_others():
    report = check_run(responses_run("Order ORD-12345 was shipped."), NO_JUDGE)
    assert report["action"] == "emit" and report["tool_call_validations"][0]["status"] == "valid"
    span = report["claims"][0]["evidence_spans"][0]
    assert (span["tool"], span["call_id"]) == ("get_order", "call_1")
    invented = check_run(responses_run("Order ORD-12345 was shipped with UPS."), NO_JUDGE)
    assert invented["action"] != "emit"


def test_a_bare_responses_item_list_is_one_run(tmp_path):
    run = responses_run("It has shipped.")
    (tmp_path / "items.json").write_text(json.dumps(run["input"] + run["output"]))
    (item,) = load(tmp_path / "items.json")
    assert item.format == "openai_responses" and item.answer == "It has shipped."
    assert [c.name for c in item.calls] == ["get_order"]


@pytest.mark.parametrize(
    ("run", "says"),
    [
        ({"foo": 1}, "not a run"),
        ({"messages": "x"}, "'messages' is not a list"),
        ({"messages": [{"content": "hi"}]}, "messages[0] has no role"),
        ({"question": "", "answer": "x"}, "'question' is missing"),
        ({"question": "q", "tool_results": [{"content": "x"}], "answer": "a"}, "no 'tool'"),
        (
            {"messages": [{"role": "tool", "content": "x"}]},
            "a tool message without tool_call_id",
        ),
        ({"format": "xml", "messages": []}, "unknown format"),
        ({"input": [{"type": "function_call", "name": "f"}]}, "input[0]: function_call without"),
        (
            {"input": "q?", "output": [{"type": "function_call_output", "output": "x"}]},
            "output[0]: function_call_output without call_id",
        ),
        ({"input": "q?", "output": {"type": "message"}}, "must be text or lists of items"),
    ],
)
def test_malformed_runs_say_what_is_wrong(run, says):
    with pytest.raises(RunFormatError, match=says.replace("[", r"\[").replace("]", r"\]")):
        parse_run(run)


def test_a_batch_goes_on_past_malformed_runs(tmp_path):
    good = openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "It has shipped.")
    lines = [json.dumps(good), "{not json", json.dumps({"foo": 1}), "", json.dumps(good)]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines))
    items = load(tmp_path / "runs.jsonl")
    assert [type(i).__name__ for i in items] == ["AgentRun", "RunError", "RunError", "AgentRun"]
    errors = [i for i in items if isinstance(i, RunError)]
    assert errors[0].source == "runs.jsonl:2" and "not JSON" in errors[0].error
    assert "\n" not in errors[1].error and "not a run" in errors[1].error


def test_a_folder_and_a_bare_message_list(tmp_path):
    messages = openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "Shipped.")["messages"]
    (tmp_path / "a.json").write_text(json.dumps(messages))
    (tmp_path / "b.jsonl").write_text(json.dumps({"question": "q?", "answer": "a"}) + "\n")
    (tmp_path / "notes.txt").write_text("ignored")
    items = load(tmp_path)
    assert [i.run_id for i in items] == ["a", "b:1"]
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.json")


# ---------------------------------------------------------------- tool calls


def _validate(args, question: str | None = None) -> tool_calls.Validation:
    run = parse_run(openai_run(args, ORDER_RESULT, "ok", question))
    return tool_calls.verify_run(run, [], set())[0]


def test_a_valid_call_passes():
    assert _validate({"order_id": "ORD-12345", "limit": 3}).status == "valid"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"order_id": "ORD-12345", "limit": "three"}, "argument 'limit': 'three' is not of type"),
        ({"limit": 3}, "missing required argument 'order_id'"),
        ({"order_id": "ORD-12345", "fields": "price"}, "is not one of ['status', 'all']"),
        ({"order_id": "ORD-12345", "color": "red"}, "unknown argument 'color'"),
        ({"order_id": "ORD-12345", "limit": 50}, "50 is greater than the maximum of 10"),
        ({"order_id": "12345"}, "does not match '^ORD-[0-9]{5}$'"),
        ('{"order_id": "ORD-1', "arguments are not valid JSON"),
    ],
)
def test_schema_errors_are_named(args, error):
    validation = _validate(args)
    assert validation.status == "invalid"
    assert any(error in e for e in validation.errors), validation.errors
    assert validation.feedback.startswith("Your call to `get_order` was rejected")


def test_unknown_tool():
    run = openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "ok")
    run["messages"][2]["tool_calls"][0]["function"]["name"] = "delete_order"
    validation = tool_calls.verify_run(parse_run(run), [], set())[0]
    assert validation.errors[0].startswith("unknown tool 'delete_order' (declared: get_order)")
    assert "Call one of the declared tools instead: get_order" in validation.feedback


def test_an_optional_argument_whose_declared_default_is_none_accepts_null():
    declared = {
        "type": "dict",
        "properties": {
            "base": {"type": "integer", "description": "The base. Default is None."},
            "mod": {"type": "float", "description": "The modulus. Default is None."},
            "unit": {"type": "string", "default": None},
            "scale": {"type": "float", "description": "The scale."},
        },
        "required": ["base"],
    }
    schema = tool_calls.to_json_schema(declared)
    assert tool_calls.schema_errors({"base": 2, "mod": None, "unit": None}, schema) == []
    # a required argument, or an optional one with no declared null default, is still typed
    assert tool_calls.schema_errors({"base": None}, schema) == [
        "argument 'base': None is not of type 'integer'"
    ]
    assert tool_calls.schema_errors({"base": 2, "scale": None}, schema) == [
        "argument 'scale': None is not of type 'number'"
    ]


def test_bfcl_type_names_are_mapped_to_json_schema():
    declared = {
        "type": "dict",
        "properties": {
            "rate": {"type": "float"},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "options": {"type": "dict", "properties": {"deep": {"type": "boolean"}}},
            "anything": {"type": "any"},
            "name": {"type": "String"},
        },
        "required": ["rate"],
    }
    schema = tool_calls.to_json_schema(declared)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["properties"]["rate"]["type"] == "number"
    assert schema["properties"]["point"]["type"] == "array"
    assert "type" not in schema["properties"]["anything"]
    good = {"rate": 0.5, "point": [1.0, 2], "options": {"deep": True}, "anything": [1], "name": "x"}
    assert tool_calls.schema_errors(good, schema) == []
    bad = tool_calls.schema_errors({"rate": "high", "options": {"deep": 1, "x": 2}}, schema)
    assert "argument 'rate': 'high' is not of type 'number'" in bad
    assert "unknown argument 'options/x'" in bad
    assert "argument 'options/deep': 1 is not of type 'boolean'" in bad


def test_identifiers_must_come_from_the_user_or_an_earlier_result():
    invented = _validate({"order_id": "ORD-99999"})
    assert invented.status == "invalid" and invented.invented == ["ORD-99999"]
    assert "ask the user for it instead of guessing" in invented.feedback
    assert _validate({"order_id": "ORD-12345"}).invented == []
    # from an earlier tool result: the second call may use the id the first one returned
    run = {
        "question": "Refund my last order",
        "tool_results": [
            {"tool": "list_orders", "args": {}, "content": {"orders": [{"id": "A-77812-X"}]}},
            {"tool": "refund", "args": {"order_id": "A-77812-X"}, "content": "done"},
            {"tool": "email", "args": {"to": "boss@corp.example"}, "content": "sent"},
        ],
        "answer": "Done.",
    }
    validations = tool_calls.verify_run(parse_run(run), [], set())
    assert [v.status for v in validations] == ["valid", "valid", "invalid"]
    assert validations[2].invented == ["boss@corp.example"]
    allowed = tool_calls.verify_run(parse_run(run), ["boss@corp.example"], set())
    assert allowed[2].status == "valid"


def test_a_value_the_tool_declares_as_its_default_is_not_invented():
    light = {
        "name": "light_travel_time",
        "description": "Time light takes to travel between two celestial bodies.",
        "parameters": {
            "type": "object",
            "properties": {
                "distance_in_light_years": {"type": "integer"},
                "speed_of_light": {
                    "type": "integer",
                    "description": "In m/s. Default value is 299792458 m/s.",
                },
                "account_number": {"type": "integer", "default": 12345678},
            },
        },
    }

    def validate(args: dict) -> tool_calls.Validation:
        run = {
            "question": "How long does light take to reach earth from a star 4 light years away?",
            "tools": [{"type": "function", "function": light}],
            "tool_results": [{"tool": "light_travel_time", "args": args, "content": "4 years"}],
            "answer": "About 4 years.",
        }
        return tool_calls.verify_run(parse_run(run), [], set(), check_fit=False)[0]

    assert validate({"distance_in_light_years": 4, "speed_of_light": 299792458}).status == "valid"
    assert validate({"distance_in_light_years": 4, "account_number": 12345678}).status == "valid"
    # another value, or a default declared for another argument, is still invented
    assert validate({"distance_in_light_years": 4, "speed_of_light": 299792459}).invented == [
        "299792459"
    ]
    assert validate({"distance_in_light_years": 4, "account_number": 299792458}).invented == [
        "299792458"
    ]
    assert tool_calls.declared_default({"description": "Amount. Default is 1.5."}) == "1.5"


@pytest.mark.parametrize(
    ("args", "found"),
    [
        ({"url": "see https://x.example/a/1."}, ["https://x.example/a/1"]),
        ({"path": "/var/log/app.log"}, ["/var/log/app.log"]),
        ({"account": 12345678901}, ["12345678901"]),
        ({"customer_id": "c77"}, ["c77"]),
        ({"query": "best pizza in town", "top_k": 5, "date": "2024-01-02"}, []),
    ],
)
def test_identifier_kinds(args, found):
    assert tool_calls.identifiers(args) == found


def test_numbers_from_the_user_in_other_wording_are_not_invented():
    assert tool_calls.known_from("revenue of $1.2M in 2020", "1200000")
    assert tool_calls.known_from("a population of 8.5 million", "8500000")
    assert tool_calls.known_from("account 1234 5678 90", "1234567890")
    assert not tool_calls.known_from("account 1234 5678 90", "1234567891")


def test_retries_are_recorded_as_attempts():
    run = {
        "question": "Status of ORD-12345?",
        "tools": [ORDER_TOOL],
        "tool_results": [
            {"tool": "get_order", "args": {"order_id": "12345"}, "content": "Error: bad id"},
            {"tool": "get_order", "args": {"order_id": "ORD-12345"}, "content": ORDER_RESULT},
        ],
        "answer": "It has shipped.",
    }
    report = check_run(run, NO_JUDGE)
    validations = report["tool_call_validations"]
    assert [(v["attempt"], v["status"]) for v in validations] == [(1, "invalid"), (2, "valid")]
    assert not any("rejected tool call" in r for r in report["reasons"])  # the retry fixed it


# ---------------------------------------------------------------- does the tool fit

CURRENCY = ("currency_conversion", "Convert a value from one currency to another.")
AREA = ("calculate_triangle_area", "Calculate the area of a triangle from its base and height.")


@pytest.fixture
def fresh_fit_cache():
    tool_calls.clear_fit_cache()
    yield
    tool_calls.clear_fit_cache()


def _tool_run(name: str, description: str, question: str, args: dict) -> dict:
    tool = {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {k: {} for k in args}},
        },
    }
    result = {"tool": name, "args": args, "content": "42"}
    return {"question": question, "tools": [tool], "tool_results": [result], "answer": "42"}


def test_a_synonym_request_fits_the_tool(fresh_fit_cache):
    # no word in common: the lexical rule alone rejects it, the semantic one does not
    request = "I have 100 euro. How much is it in USD?"
    fit = tool_calls.tool_fit(request, *CURRENCY)
    assert fit.fits and fit.rule == "semantic" and fit.similarity >= tool_calls.FIT_SIMILARITY
    assert not tool_calls.tool_fit(request, *CURRENCY, threshold=None).fits
    run = parse_run(_tool_run(*CURRENCY, request, {"amount": 100}))
    assert tool_calls.verify_run(run, [], set())[0].status == "valid"


def test_an_unrelated_tool_does_not_fit(fresh_fit_cache):
    request = "What is the capital of France?"
    fit = tool_calls.tool_fit(request, *AREA)
    assert not fit.fits and fit.rule == "semantic" and fit.similarity < tool_calls.FIT_SIMILARITY
    run = parse_run(_tool_run(*AREA, request, {"base": 3, "height": 4}))
    validation = tool_calls.verify_run(run, [], set())[0]
    assert validation.status == "invalid"
    # off the request on evidence in any language: no word of the request in the call, and
    # values of no source; the similarity is named beside it
    assert validation.errors == [
        "tool 'calculate_triangle_area' does not fit the request: nothing the user wrote occurs "
        f"in its arguments and the argument(s) /base, /height have no source; {fit.reason}"
    ]
    assert "not close in meaning to what the user asked (similarity" in fit.reason
    # switched off, or a free-text tool, or an identifier the user wrote: no fit check
    assert tool_calls.verify_run(run, [], set(), check_fit=False)[0].status == "valid"
    assert tool_calls.tool_fit(request, "web_search", "Search the web").fits
    # the name decides what is a free-text tool: an API tool that "retrieves" is checked
    weather = ("get_weather", "Retrieve the current weather for a city.")
    assert not tool_calls.tool_fit(request, *weather).fits
    assert tool_calls.tool_fit("Will it rain in Paris tomorrow?", *weather).fits
    assert tool_calls.tool_fit(request, *AREA, ids_from_request=True).fits
    # a tool declared without a description: a bare name says too little to reject the call
    bare = tool_calls.tool_fit("What time is it in Tokyo?", "now", "")
    assert (bare.fits, bare.rule) == (True, "exempt")


def test_the_lexical_rule_when_the_model_is_unavailable(fresh_fit_cache, monkeypatch):
    calls = []

    def unavailable(spec: str, texts: list[str], batch_size: int = 64):
        calls.append(spec)
        raise FileNotFoundError("no such model")

    monkeypatch.setattr(tool_calls.embeddings, "embed", unavailable)
    synonym = tool_calls.tool_fit("I have 100 euro. How much is it in USD?", *CURRENCY)
    assert (synonym.fits, synonym.rule, synonym.similarity) == (False, "lexical", None)
    assert synonym.reason == (
        "neither its name nor its description shares a word with what the user asked"
    )
    shared = tool_calls.tool_fit("Convert 100 euro to USD", *CURRENCY)
    assert (shared.fits, shared.rule) == (True, "lexical")
    assert calls == [tool_calls.FIT_MODEL]  # the failure is remembered: one try per model
    run = _tool_run(*AREA, "What is the capital of France?", {"base": 3, "height": 4})
    report = check_run(run, NO_JUDGE)  # never fails the check
    assert "shares a word" in report["tool_call_validations"][0]["errors"][0]


# ---------------------------------------------------------------- evidence


def test_a_json_result_is_read_as_key_value_text_with_pointers():
    content = {
        "results": [
            {"title": "Returns", "text": "Items can be returned within 30 days."},
            {"title": "Shipping", "text": "Orders ship in 2 days.", "updated": "2026-03-02"},
        ],
        "count": 2,
    }
    result = ToolResult("call_7", "search_kb", content, 3)
    spans = tool_evidence.spans_of_result(result, 1)
    assert [s.pointer for s in spans] == ["/results/0", "/results/1"]
    assert spans[0].text == "title: Returns\ntext: Items can be returned within 30 days."
    assert "updated: 2026-03-02 (2 March 2026)" in spans[1].text
    assert spans[1].anchor() == "search_kb#call_7/results/1"


@pytest.mark.parametrize(
    ("content", "is_error", "kind"),
    [
        ("", False, "empty"),
        ({"results": [], "count": 0}, False, "empty"),
        ("[]", False, "empty"),
        ("anything", True, "error"),
        ("Error: 503 Service Unavailable", False, "error"),
        ('Traceback (most recent call last):\n  File "x"\nKeyError: 1', False, "error"),
        ({"error": {"code": 404, "message": "missing"}}, False, "error"),
        ({"status": 500, "detail": "boom"}, False, "error"),
        ("No results found for your query.", False, "not_found"),
        ({"found": False, "message": "nothing"}, False, "not_found"),
        ({"title": "Error handling", "text": "Retry on error."}, False, "evidence"),
        ("The error rate fell to 2% in May.", False, "evidence"),
    ],
)
def test_empty_error_and_not_found_results_are_not_evidence(content, is_error, kind):
    assert tool_evidence.classify(ToolResult("c", "t", content, 0, is_error))[0] == kind


# ---------------------------------------------------------------- reports


def test_a_grounded_run_is_emitted_with_spans_addressed():
    report = check_run(
        openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "Order ORD-12345 was shipped."),
        NO_JUDGE,
    )
    assert report["action"] == "emit" and report["diagnosis"]["mode"] == "grounded"
    # each element of the claim rests on a leaf of the JSON result, named by its JSON pointer
    claim = report["claims"][0]
    assert claim["judge"] == "structured"
    pointers = {(s["tool"], s["call_id"], s["pointer"]) for s in claim["evidence_spans"]}
    assert ("get_order", "call_1", "/order/id") in pointers
    assert all(s["anchor"] == f"get_order#call_1{s['pointer']}" for s in claim["evidence_spans"])
    assert report["tool_call_validations"][0]["status"] == "valid"
    assert report["probes"].startswith("skipped: no model configured")
    for field in ("run_id", "claims", "consistency_probes", "overall_score", "version"):
        assert field in report


def test_answered_although_every_result_was_empty_or_an_error_is_blocked():
    report = check_run(
        anthropic_run("upstream timeout", True, "The return window is 30 days."), NO_JUDGE
    )
    assert report["action"] == "block"
    assert report["diagnosis"]["mode"] == "answered_without_evidence"
    assert report["tool_results"][0]["kind"] == "error"
    refusal = report["refusal"]
    assert "returned nothing usable" in refusal
    assert "search_kb" not in refusal and "toolu_1" not in refusal  # no internals


def test_saying_it_could_not_find_it_is_the_good_case():
    report = check_run(
        anthropic_run({"results": []}, False, "I couldn't find the return window."), NO_JUDGE
    )
    assert report["action"] == "emit" and report["diagnosis"]["mode"] == "said_not_found"
    assert report["refusal"] is None


def test_an_off_topic_result_is_diagnosed():
    result = json.dumps({"results": [{"text": "Our office dog is called Biscuit."}]})
    report = check_run(
        openai_run(
            {"order_id": "ORD-12345"},
            result,
            "Your parcel left the Hamburg warehouse on Monday.",
            question="When did order ORD-12345 leave the warehouse?",
        ),
        NO_JUDGE,
    )
    assert report["action"] in ("revise", "block")
    assert report["diagnosis"]["mode"] == "off_topic_result"


def test_a_structured_result_on_topic_by_meaning_is_not_off_topic():
    question = "How many euros is 100 US dollars today?"
    assert diagnosis.relevance(question, ["amount: 92.3\ncurrency: EUR"]) < 0.34  # no word shared
    assert diagnosis.on_topic(question, ["amount: 92.3\ncurrency: EUR"])
    assert not diagnosis.on_topic(question, ["Our office dog is called Biscuit."])


def test_an_unsupported_claim_gets_revise_feedback_or_a_refusal():
    report = check_run(
        openai_run(
            {"order_id": "ORD-12345"},
            ORDER_RESULT,
            "Order ORD-12345 was shipped. It was delivered to Berlin by FedEx on 4 May.",
        ),
        NO_JUDGE,
    )
    assert report["action"] in ("revise", "block")
    assert report["diagnosis"]["mode"] == "unsupported_claims"
    if report["action"] == "revise":
        assert any("FedEx" in f for f in report["feedback"])
    else:
        assert "not supported by what was found" in report["refusal"]


def test_a_rejected_call_makes_an_emitted_answer_revise_with_runtime_feedback():
    run = openai_run({"order_id": "ORD-12345", "color": "red"}, ORDER_RESULT, "It was shipped.")
    report = check_run(run, NO_JUDGE)
    assert report["action"] == "revise"
    assert any("unknown argument 'color'" in f for f in report["feedback"])


def test_thresholds_are_configurable():
    run = openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "The order status is shipped.")
    assert check_run(run, NO_JUDGE)["action"] == "emit"
    strict = check_run(run, {**NO_JUDGE, "emit_threshold": 1.0, "guardrails": {}})
    assert strict["action"] in ("emit", "revise")  # lexical support 1.0 still emits at 1.0


def test_diagnosis_refusal_detection():
    assert diagnosis.is_refusal("I could not find any information about that order.")
    assert diagnosis.is_refusal("The search did not return anything about it.")
    assert diagnosis.is_refusal("The knowledge base has no information about Initech.")
    assert not diagnosis.is_refusal("The order was shipped on Monday.")


class FakeChat:
    """A probe model that always answers `reply` (the agent's own model, in a test)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls = 0

    def complete(self, messages, schema):
        from stages.models.chat import Completion

        self.calls += 1
        return Completion(json.dumps({"answer": self.reply}))


@pytest.mark.parametrize(
    ("reply", "status", "emitted"), [("DHL", "agree", True), ("UPS", "diverge", False)]
)
def test_probes_run_only_with_a_model_configured(reply, status, emitted):
    from agents.checking import make_toolkit
    from stages.models import chat

    result = json.dumps({"order": {"id": "ORD-12345", "status": "shipped", "carrier": "DHL"}})
    run = openai_run(
        {"order_id": "ORD-12345"},
        result,
        "The order ORD-12345 shipped with carrier DHL.",
        question="Which carrier shipped order ORD-12345?",
    )
    config = {**NO_JUDGE, "probes": True}
    toolkit = make_toolkit(config)
    fake = FakeChat(reply)
    toolkit._client = chat.LazyClient(lambda: fake)
    report = check_run(run, config, toolkit=toolkit)
    assert fake.calls >= 1 and report["probes"].startswith("ran on 1")
    assert [p["status"] for p in report["consistency_probes"]] == [status]
    assert (report["action"] == "emit") is emitted


def test_parallel_calls_of_one_tool_are_not_retries_of_each_other():
    run = openai_run({"order_id": "ORD-12345"}, ORDER_RESULT, "It was shipped.")
    calls = run["messages"][2]["tool_calls"]
    calls.append(
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "get_order", "arguments": json.dumps({"order_id": "bad"})},
        }
    )
    report = check_run(run, NO_JUDGE)
    validations = report["tool_call_validations"]
    assert [(v["attempt"], v["status"]) for v in validations] == [(1, "valid"), (1, "invalid")]
    assert report["action"] == "revise"  # the invalid parallel call was never retried


# ---------------------------------------------------------------- the judge setting


def test_judge_fast_puts_the_projects_cross_encoder_in_front_of_the_llm_judge():
    from agents.checking.check import Config, guardrails_config

    made = guardrails_config(Config(judge="fast"))
    assert made.judge == "llm" and made.fast_judge is not None
    assert made.fast_judge.model_path.endswith("claim-judge-minilm-v1")
    # with the gate fitted for it (configs/guardrails-fast.yaml), not the GGUF's
    slow = guardrails_config(Config(judge="llm"))
    assert slow.fast_judge is None and slow.lexical_weight == 0
    assert made.lexical_weight > 0 and made.answer_threshold != slow.answer_threshold
    # a fast judge set in the check's own guardrails settings wins over the project's
    own = {"model_path": "elsewhere/model", "accept": 0.9}
    made = guardrails_config(Config(judge="fast", guardrails={"fast_judge": own}))
    assert made.fast_judge.model_path == "elsewhere/model" and made.fast_judge.accept == 0.9


def test_auto_is_the_fast_judge_where_the_gguf_is_and_nothing_without_it(tmp_path, monkeypatch):
    from agents.checking import check
    from agents.checking.check import Config, guardrails_config

    gguf = tmp_path / "judge.gguf"
    gguf.write_bytes(b"GGUF")  # only its presence decides; nothing is loaded here
    here = {"llm": {"path": str(gguf)}}
    made = guardrails_config(Config(guardrails=here))
    assert made.judge == "llm" and made.fast_judge is not None  # the default: fast
    # a server configured instead of a file: fast too
    remote = {"llm": {"backend": "openai_compatible", "base_url": "http://127.0.0.1:9/v1"}}
    assert guardrails_config(Config(guardrails=remote)).fast_judge is not None
    # no model at all: the deterministic checks and word overlap, no judge to call
    gone = guardrails_config(Config(guardrails={"llm": {"path": str(tmp_path / "none.gguf")}}))
    assert gone.judge == "none" and gone.fast_judge is None
    # the cross-encoder missing: the GGUF alone, with its own gate
    monkeypatch.setattr(check, "_fast_judge_available", lambda: False)
    alone = guardrails_config(Config(guardrails=here))
    assert alone.judge == "llm" and alone.fast_judge is None and alone.lexical_weight == 0


def test_the_gate_is_the_projects_for_long_answers_and_min_for_one_claim():
    from agents.checking.check import Config, guardrails_config

    made = guardrails_config(Config())
    assert made.aggregate == "floor_mean" and made.long_answer_claims == 2
    assert (made.emit_threshold, made.revise_threshold, made.block_threshold) == (0.85, 0.6, 0.4)
    assert guardrails_config(Config(aggregate="min")).aggregate == "min"
