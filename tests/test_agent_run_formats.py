"""Runs as Gemini and LangChain / LangGraph write them: read into the same `AgentRun` as the
OpenAI and Anthropic runs, and checked the same way (`judge: none`, no model needed)."""

from __future__ import annotations

import json

import pytest

from agents.checking import RunError, RunFormatError, check_run, load, parse_run

NO_JUDGE = {"judge": "none"}

WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "parameters": {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING"},
            "unit": {"type": "STRING", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
RESULT = {"city": "Lyon", "temp": 21, "unit": "celsius", "sky": "clear"}


def gemini_run(args: dict | None = None, **extra) -> dict:
    return {
        "run_id": "g-1",
        "systemInstruction": {"parts": [{"text": "You are a weather assistant."}]},
        "tools": [{"functionDeclarations": [WEATHER]}, {"googleSearch": {}}],
        "contents": [
            {"role": "user", "parts": [{"text": "How warm is it in Lyon right now, in celsius?"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {
                            "name": "get_weather",
                            "args": args or {"city": "Lyon", "unit": "celsius"},
                        }
                    }
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": RESULT}}],
            },
            {"role": "model", "parts": [{"text": "It is 21 °C and clear in Lyon."}]},
        ],
        **extra,
    }


def test_gemini_run_is_read_with_its_calls_results_tools_and_answer():
    run = parse_run(gemini_run())
    assert run.format == "gemini" and run.run_id == "g-1"
    assert run.question == "How warm is it in Lyon right now, in celsius?"
    assert run.user_texts[0] == "You are a weather assistant."
    assert list(run.tools) == ["get_weather"]  # googleSearch declares nothing
    assert run.tool_descriptions == {"get_weather": "Current weather of a city"}
    [call] = run.calls
    assert (call.name, call.args) == ("get_weather", {"city": "Lyon", "unit": "celsius"})
    [result] = run.results
    assert result.call_id == call.call_id and result.content == RESULT
    assert run.answer == "It is 21 °C and clear in Lyon."


def test_gemini_snake_case_and_a_response_candidate_as_the_final_turn():
    raw = gemini_run()
    final = raw["contents"].pop()
    snake = json.loads(
        json.dumps(raw)
        .replace("functionDeclarations", "function_declarations")
        .replace("functionCall", "function_call")
        .replace("functionResponse", "function_response")
        .replace("systemInstruction", "system_instruction")
    )
    snake["candidates"] = [{"content": final, "finishReason": "STOP"}]
    run = parse_run(snake)
    assert run.format == "gemini" and run.answer == "It is 21 °C and clear in Lyon."
    assert run.results[0].call_id == run.calls[0].call_id
    assert run.user_texts[0] == "You are a weather assistant."


def test_gemini_tools_as_a_bare_group_or_flat_declarations():
    for tools in ({"functionDeclarations": [WEATHER]}, [WEATHER]):
        assert list(parse_run(gemini_run(tools=tools)).tools) == ["get_weather"]
    no_group = {k: v for k, v in gemini_run().items() if k != "tools"}
    assert parse_run({**no_group, "functionDeclarations": [WEATHER]}).tools is not None


def test_gemini_responses_without_ids_answer_calls_of_their_name_in_order():
    raw = gemini_run()
    raw["contents"][1]["parts"] = [
        {"functionCall": {"name": "get_weather", "args": {"city": "Lyon"}}},
        {"functionCall": {"name": "get_weather", "args": {"city": "Nice"}}},
    ]
    raw["contents"][2]["parts"] = [
        {"functionResponse": {"name": "get_weather", "response": {"city": "Lyon"}}},
        {"functionResponse": {"name": "get_weather", "response": {"result": "sunny"}}},
    ]
    run = parse_run(raw)
    first, second = run.calls
    assert [r.call_id for r in run.results] == [first.call_id, second.call_id]
    assert run.results[1].content == "sunny"  # the SDK's {"result": value} wrapper undone


def test_gemini_ids_join_calls_and_responses():
    raw = gemini_run()
    raw["contents"][1]["parts"][0]["functionCall"]["id"] = "fc-9"
    raw["contents"][2]["parts"][0]["functionResponse"]["id"] = "fc-9"
    run = parse_run(raw)
    assert run.calls[0].call_id == run.results[0].call_id == "fc-9"


def test_gemini_uppercase_schema_types_check_the_call():
    good = check_run(gemini_run(), NO_JUDGE)
    assert good["format"] == "gemini"
    assert [v["status"] for v in good["tool_call_validations"]] == ["valid"]
    bad = check_run(gemini_run({"city": "Lyon", "unit": "kelvin"}), NO_JUDGE)
    assert bad["tool_call_validations"][0]["status"] != "valid" and bad["action"] != "emit"


@pytest.mark.parametrize(
    "contents, message",
    [
        ([{"role": "model", "parts": [{"functionCall": {"args": {}}}]}], "without name"),
        ([{"role": "narrator", "parts": [{"text": "hi"}]}], "unknown role"),
        ([{"role": "user", "parts": "hi"}], "list of parts"),
    ],
)
def test_a_malformed_gemini_run_is_a_one_line_error(contents, message):
    with pytest.raises(RunFormatError, match=message):
        parse_run({"contents": contents})


# ---------------------------------------------------------------- LangChain / LangGraph

INVOICE_TOOL = {
    "type": "function",
    "function": {
        "name": "get_invoice",
        "description": "Fetch an invoice",
        "parameters": {
            "type": "object",
            "properties": {"invoice_id": {"type": "string"}},
            "required": ["invoice_id"],
        },
    },
}
CALL = {"name": "get_invoice", "args": {"invoice_id": "INV-2291"}, "id": "call_a1"}
PLAIN = [
    {"type": "system", "content": "You are the billing assistant."},
    {"type": "human", "content": "Has invoice INV-2291 been paid?"},
    {"type": "ai", "content": "", "tool_calls": [{**CALL, "type": "tool_call"}]},
    {
        "type": "tool",
        "content": '{"invoice_id": "INV-2291", "status": "paid"}',
        "tool_call_id": "call_a1",
        "name": "get_invoice",
    },
    {"type": "ai", "content": "Yes, invoice INV-2291 has been paid."},
]
CLASSES = {"system": "SystemMessage", "human": "HumanMessage", "ai": "AIMessage"}


def as_data(message: dict) -> dict:
    """messages_to_dict's shape: the type beside the message's fields."""
    return {"type": message["type"], "data": {k: v for k, v in message.items() if k != "type"}}


def as_dumpd(message: dict) -> dict:
    """dumpd's shape: the class path, the fields as constructor kwargs."""
    name = CLASSES.get(message["type"], "ToolMessage")
    kwargs = {k: v for k, v in message.items() if k != "type"}
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", name],
            "kwargs": kwargs}  # fmt: skip


@pytest.mark.parametrize("shape", [lambda m: m, as_data, as_dumpd], ids=["plain", "data", "lc"])
def test_langchain_messages_in_each_dict_shape_read_the_same(shape):
    run = parse_run(
        {"run_id": "lc-1", "tools": [INVOICE_TOOL], "messages": [shape(m) for m in PLAIN]}
    )
    assert run.format == "langchain" and run.question == "Has invoice INV-2291 been paid?"
    assert run.user_texts == ["You are the billing assistant.", "Has invoice INV-2291 been paid?"]
    [call] = run.calls
    assert (call.call_id, call.name, call.args) == ("call_a1", "get_invoice", CALL["args"])
    [result] = run.results
    assert result.call_id == "call_a1" and result.content["status"] == "paid"
    assert run.answer == "Yes, invoice INV-2291 has been paid."


def test_a_langchain_run_is_checked_like_the_others():
    report = check_run({"run_id": "lc-2", "tools": [INVOICE_TOOL], "messages": PLAIN}, NO_JUDGE)
    assert report["format"] == "langchain"
    assert [v["status"] for v in report["tool_call_validations"]] == ["valid"]


def test_a_bare_langchain_message_list_in_a_file_is_one_run(tmp_path):
    path = tmp_path / "thread.json"
    path.write_text(json.dumps([as_data(m) for m in PLAIN]))
    [run] = load(path)
    assert not isinstance(run, RunError) and run.format == "langchain" and len(run.calls) == 1


def test_langchain_provider_calls_invalid_calls_and_failed_tools():
    messages = [
        {"type": "human", "content": "Has invoice INV-2291 been paid?"},
        {
            "type": "ai",
            "content": "",
            "additional_kwargs": {
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "get_invoice",
                            "arguments": '{"invoice_id": "INV-2291"}',
                        },
                    }
                ]
            },
            "invalid_tool_calls": [
                {"name": "get_invoice", "args": "{invoice_id: INV", "id": "c2", "error": None}
            ],
        },
        {"type": "tool", "content": "timeout", "tool_call_id": "c1", "status": "error"},
    ]
    run = parse_run({"messages": messages})
    assert [c.call_id for c in run.calls] == ["c1", "c2"]
    assert run.calls[0].args == {"invoice_id": "INV-2291"} and run.calls[0].args_error is None
    assert run.calls[1].args_error and "not valid JSON" in run.calls[1].args_error
    assert run.results[0].is_error and run.results[0].name == "get_invoice"
    assert run.answer is None


def test_openai_and_anthropic_messages_are_not_taken_for_langchain():
    assert parse_run({"messages": [{"role": "user", "content": "hi"}]}).format == "openai"
    mixed = [{"type": "human", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    with pytest.raises(RunFormatError, match="has no role"):  # read as OpenAI, not guessed
        parse_run({"messages": mixed})


def test_a_langchain_tool_message_with_no_call_to_answer_is_a_one_line_error():
    messages = [{"type": "human", "content": "hi"}, {"type": "tool", "content": "x"}]
    with pytest.raises(RunFormatError, match="without tool_call_id"):
        parse_run({"messages": messages})
