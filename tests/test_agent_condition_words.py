"""Conditions and outcomes said in words (the weather, a ticket's or a message's outcome), in six
languages: a restatement of what the result holds passes; another condition, or an outcome the
result does not hold, keeps the claim from passing as a plain word."""

from __future__ import annotations

import json

import pytest

from agents.checking import check_run
from agents.checking.check import Config

CONFIG = Config(judge="none")


def _one_call_run(tool: str, args: dict, result: dict, answer: str, question: str) -> dict:
    """An OpenAI-format run: the question, one call of `tool`, its result and the answer."""
    call = {"name": tool, "arguments": json.dumps(args)}
    schema = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in args},
        "required": list(args),
    }
    return {
        "messages": [
            {"role": "user", "content": question},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
            {"role": "assistant", "content": answer},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": tool, "description": tool, "parameters": schema},
            }
        ],
    }


def _run(condition: str, answer: str, question: str) -> dict:
    result = {"location": "Boston", "temperature": 22, "unit": "C", "conditions": condition}
    return _one_call_run("get_current_weather", {"location": "Boston"}, result, answer, question)


# (the result's condition, its restatement, the same answer with another condition)
CASES = [
    (
        "Clear",
        "It's 22°C and sunny in Boston.",
        "It's 22°C and rainy in Boston.",
        "Weather in Boston?",
    ),
    (
        "Rain",
        "It's 22°C and rainy in Boston.",
        "It's 22°C and sunny in Boston.",
        "Weather in Boston?",
    ),
    (
        "Snow",
        "It's snowing in Boston at 22°C.",
        "It's foggy in Boston at 22°C.",
        "Weather in Boston?",
    ),
    (
        "Partly cloudy",
        "En Boston hace 22 °C, parcialmente nublado.",
        "En Boston hace 22 °C, despejado y soleado.",
        "¿Qué tiempo hace en Boston?",
    ),
    (
        "Overcast",
        "In Boston sind es 22 °C, bedeckt.",
        "In Boston sind es 22 °C, sonnig.",
        "Wie ist das Wetter in Boston?",
    ),
    (
        "Clear",
        "À Boston, il fait 22 °C et le ciel est dégagé.",
        "À Boston, il fait 22 °C et il pleut.",
        "Quel temps fait-il à Boston ?",
    ),
    (
        "Rain",
        "A Boston ci sono 22 °C e piove.",
        "A Boston ci sono 22 °C e nevica.",
        "Che tempo fa a Boston?",
    ),
    (
        "Rain",
        "Em Boston estão 22 °C e chove.",
        "Em Boston estão 22 °C e neva.",
        "Como está o tempo em Boston?",
    ),
]


@pytest.mark.parametrize(("condition", "right", "wrong", "question"), CASES)
def test_a_condition_restated_passes_and_another_does_not(condition, right, wrong, question):
    assert check_run(_run(condition, right, question), CONFIG)["action"] == "emit", right
    report = check_run(_run(condition, wrong, question), CONFIG)
    assert report["action"] != "emit", wrong


def test_a_condition_the_result_does_not_give_is_not_passed_as_a_plain_word():
    report = check_run(
        _run("Partly cloudy", "It's 22°C and sunny in Boston.", "Weather in Boston?"), CONFIG
    )
    assert report["action"] != "emit"
    why = [
        w for c in report["claims"] for w in (c.get("structured") or {}).get("blocking_words") or []
    ]
    assert any("sunny" in w for w in why), why


def _status_run(status: str, answer: str) -> dict:
    result = {"id": "T-77", "status": status, "assignee": "Marco", "priority": "high"}
    question = "What's up with ticket T-77?"
    return _one_call_run("get_ticket", {"ticket_id": "T-77"}, result, answer, question)


@pytest.mark.parametrize("word", ["escalated", "bounced", "eskaliert", "rebotado"])
def test_an_outcome_the_result_does_not_hold_is_not_a_plain_word(word):
    held = check_run(
        _status_run(word, f"T-77 is {word}, high priority, assigned to Marco."), CONFIG
    )
    assert held["action"] == "emit"
    other = check_run(
        _status_run("open", f"T-77 is {word}, high priority, assigned to Marco."), CONFIG
    )
    assert other["action"] != "emit"


def _stock_run(stock: int | str, answer: str) -> dict:
    result = {"sku": "SKU-1", "name": "Blue Mug", "price": 12.5, "stock": stock}
    return _one_call_run("get_product", {"sku": "SKU-1"}, result, answer, "Is SKU-1 available?")


def test_a_key_whose_value_is_nothing_is_not_restated_without_its_value():
    said = "The Blue Mug (SKU-1) costs $12.50 and is in stock."
    report = check_run(_stock_run(0, said), CONFIG)
    assert report["action"] != "emit"
    why = [
        w for c in report["claims"] for w in (c.get("structured") or {}).get("blocking_words") or []
    ]
    assert any("'stock'" in w for w in why), why
    assert check_run(_stock_run(14, said), CONFIG)["action"] == "emit"
    assert (
        check_run(_stock_run(0, "The Blue Mug (SKU-1) costs $12.50; 0 in stock."), CONFIG)["action"]
        == "emit"
    )


def test_a_zero_written_as_a_string_is_nothing_too():
    said = "The Blue Mug (SKU-1) costs $12.50 and is in stock."
    assert check_run(_stock_run("0", said), CONFIG)["action"] != "emit"
    assert check_run(_stock_run("14", said), CONFIG)["action"] == "emit"
