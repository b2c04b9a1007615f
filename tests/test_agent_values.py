"""Agent runs checked by construction: values normalised (stages.common.values), claims over JSON
results matched against their leaves (agents.checking.structured), argument values traced to
the message they came from (agents.checking.provenance), tool fit a warning unless the call is
off the request in any language, a judge failure a technical error. Examples written here."""

from __future__ import annotations

import pytest

from agents.checking import check_run, make_toolkit, parse_run, structured, tool_calls
from stages.common import values
from stages.guardrails import judge as judge_mod
from stages.models.errors import JudgeError

NO_JUDGE = {"judge": "none"}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a location",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["location"],
        },
    },
}
WEATHER_RESULT = {"status": "success", "location": "Boston", "unit": "fahrenheit", "temp": 72}


def weather_run(answer: str, question: str = "What is the temperature in Boston?") -> dict:
    return {
        "run_id": "w-1",
        "question": question,
        "tools": [WEATHER_TOOL],
        "tool_results": [
            {
                "tool": "get_weather",
                "call_id": "call_1",
                "args": {"location": "Boston", "unit": "fahrenheit"},
                "content": WEATHER_RESULT,
            }
        ],
        "answer": answer,
    }


# ---------------------------------------------------------------- values


@pytest.mark.parametrize(
    "written", ["ThinQ_Connect", "ThinQ Connect", "thinq-connect", "thinqConnect"]
)
def test_a_name_reads_alike_across_separators_and_case(written):
    assert values.ident_key(written) == "thinqconnect"


@pytest.mark.parametrize(
    ("text", "value", "unit", "currency"),
    [
        ("$1,234.50", 1234.5, None, "usd"),
        ("1.2 million", 1_200_000, None, None),
        ("72°F", 72, "fahrenheit", None),
        ("12 %", 12, "percent", None),
        ("20 m", 20, None, None),  # twenty metres, not twenty million
        ("€5m", 5_000_000, None, "eur"),
    ],
)
def test_numbers_with_separators_scales_units_and_currencies(text, value, unit, currency):
    (found,) = values.quantities(text)
    assert (found.value, found.unit, found.currency) == (value, unit, currency)


@pytest.mark.parametrize(
    ("text", "date", "time"),
    [
        ("November 1, 2023 at 8pm", "2023-11-01", "20:00"),
        ("2023-11-01T20:00:00", "2023-11-01", "20:00"),
        ("1 Nov 2023, 20:00", "2023-11-01", "20:00"),
        ("11/01/2023", "2023-11-01", None),
        ("01.11.2023", "2023-11-01", None),
        ("March.11, 2022", "2022-03-11", None),
        ("8:30 PM", None, "20:30"),
    ],
)
def test_dates_and_times_in_common_formats(text, date, time):
    (found,) = values.moments(text)
    assert (found.date, found.time) == (date, time)


def test_a_time_compares_across_zones():
    claimed = values.moments("3 PM EST")[0]
    assert values.same_moment(claimed, values.moment_of("2023-11-01T20:00:00Z"))
    assert not values.same_moment(claimed, values.moment_of("2023-11-01T21:00:00Z"))


# ---------------------------------------------------------------- 1. names of a JSON result


def test_a_name_joined_by_underscores_is_supported_when_the_answer_spaces_it():
    run = weather_run("The app is ThinQ Connect.", "Which app controls the laundry's washer?")
    run["tool_results"][0]["content"] = {"app": "ThinQ_Connect", "model": "WM4000HBA"}
    run["tool_results"][0]["args"] = {"location": "laundry"}
    report = check_run(run, NO_JUDGE)
    claim = report["claims"][0]
    assert claim["status"] == "supported" and report["action"] == "emit"
    assert [s["pointer"] for s in claim["evidence_spans"]] == ["/app"]
    # the spaced name is in the evidence text too, for claims the judge decides
    assert "ThinQ Connect" in report["evidence_spans"][0]["text"]


# ---------------------------------------------------------------- 2. enum values


def test_a_value_the_tool_declares_in_its_enum_is_not_an_invented_identifier():
    tool = {
        "type": "function",
        "function": {
            "name": "set_fan",
            "description": "Set the fan speed of a device",
            "parameters": {
                "type": "object",
                "properties": {"device_id": {"type": "string", "enum": ["1", "2", "3"]}},
                "required": ["device_id"],
            },
        },
    }
    run = parse_run(
        {
            "question": "Set the fan speed of the bedroom device",
            "tools": [tool],
            "tool_calls": [{"id": "c1", "name": "set_fan", "arguments": {"device_id": "2"}}],
            "tool_results": [],
            "answer": None,
        }
    )
    validation = tool_calls.verify_run(run, [], set())[0]
    assert validation.invented == [] and validation.status == "valid", validation.errors
    trace = validation.provenance[0]
    assert (trace["status"], trace["source"]) == ("grounded", "the tool's declared enum")


# ---------------------------------------------------------------- 3. argument provenance

BOOK_TOOL = {
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Book a restaurant table",
        "parameters": {
            "type": "object",
            "properties": {
                "when": {"type": "string"},
                "address": {"type": "string"},
                "server_ip": {"type": "string"},
                "api_key": {"type": "string"},
            },
            "required": ["when"],
        },
    },
}
REQUEST = (
    "Book a table on November 1, 2023 at 8pm at 123 Main Street. Use the gateway 10.0.0.5 "
    "with the key k7Q2xP9a."
)
GOOD_ARGS = {
    "when": "2023-11-01T20:00:00",
    "address": "123 Main St",
    "server_ip": "10.0.0.5",
    "api_key": "k7Q2xP9a",
}


def book(args: dict) -> tool_calls.Validation:
    run = parse_run(
        {
            "question": REQUEST,
            "tools": [BOOK_TOOL],
            "tool_calls": [{"id": "c1", "name": "book_table", "arguments": args}],
            "tool_results": [],
            "answer": None,
        }
    )
    return tool_calls.verify_run(run, [], set())[0]


def test_values_the_user_wrote_in_other_words_are_grounded_in_that_message():
    validation = book(GOOD_ARGS)
    assert validation.status == "valid", validation.errors
    rows = {t["pointer"]: t for t in validation.provenance}
    assert rows["/when"]["kind"] == "datetime" and rows["/when"]["status"] == "grounded"
    assert all(t["source"] == "user turn 1" for t in validation.provenance)


@pytest.mark.parametrize(
    ("key", "changed"),
    [
        ("when", "2023-11-02T20:00:00"),  # date, one digit
        ("when", "2023-11-01T21:00:00"),  # time, one digit
        ("address", "124 Main St"),
        ("server_ip", "10.0.0.6"),
        ("api_key", "k7Q2xP9b"),
    ],
)
def test_a_value_changed_by_one_character_is_flagged_naming_its_message(key, changed):
    validation = book({**GOOD_ARGS, key: changed})
    assert validation.status == "invalid"
    row = next(t for t in validation.provenance if t["pointer"] == f"/{key}")
    assert row["status"] in ("changed", "invented")
    assert any(f"/{key}" in e or changed in e for e in validation.errors)
    if row["status"] == "changed":
        assert row["source"] == "user turn 1" and row["near"]


def test_a_date_computed_from_relative_words_is_not_flagged():
    run = parse_run(
        {
            "question": "Book a table for tomorrow at 8pm",
            "tools": [BOOK_TOOL],
            "tool_calls": [
                {"id": "c1", "name": "book_table", "arguments": {"when": "2023-11-02T20:00:00"}}
            ],
            "tool_results": [],
            "answer": None,
        }
    )
    validation = tool_calls.verify_run(run, [], set())[0]
    assert validation.status == "valid", validation.errors
    assert validation.provenance[0]["status"] == "unverified"


# ---------------------------------------------------------------- 4. tool fit


@pytest.mark.parametrize(
    "request_text",
    [
        "What is the temperature in Boston?",
        "¿Qué temperatura hace en Boston?",
        "Wie warm ist es gerade in Boston?",
        "ボストンの気温は? (Boston)",
    ],
)
def test_a_fitting_call_is_never_rejected_for_its_similarity_in_any_language(request_text):
    run = parse_run(
        {
            "question": request_text,
            "tools": [WEATHER_TOOL],
            "tool_calls": [
                {"id": "c1", "name": "get_weather", "arguments": {"location": "Boston"}}
            ],
            "tool_results": [],
            "answer": None,
        }
    )
    validation = tool_calls.verify_run(run, [], set())[0]
    assert validation.status == "valid", validation.errors
    assert all("fit" in w for w in validation.warnings)


def test_a_call_off_the_request_in_any_language_is_rejected():
    run = parse_run(
        {
            "question": "Quelle est la capitale de la France ?",
            "tools": [WEATHER_TOOL],
            "tool_calls": [{"id": "c1", "name": "get_weather", "arguments": {"location": "Oslo"}}],
            "tool_results": [],
            "answer": None,
        }
    )
    validation = tool_calls.verify_run(run, [], set())[0]
    assert validation.status == "invalid"
    assert "nothing the user wrote occurs in its arguments" in validation.errors[0]


# ---------------------------------------------------------------- 5. a restated JSON result


def test_a_one_claim_restatement_of_a_json_result_is_emitted_with_its_pointers():
    answer = "The get_weather call returned status success with location Boston, unit fahrenheit."
    report = check_run(weather_run(answer), NO_JUDGE)
    assert report["action"] == "emit" and report["diagnosis"]["mode"] == "grounded"
    claim = report["claims"][0]
    assert claim["judge"] == "structured"
    anchors = {s["anchor"] for s in claim["evidence_spans"]}
    assert anchors == {"get_weather#call_1/status", "get_weather#call_1/location",
                       "get_weather#call_1/unit"}  # fmt: skip
    assert {s["value"] for s in claim["evidence_spans"]} == {"success", "Boston", "fahrenheit"}


@pytest.mark.parametrize(
    ("answer", "pointer"),
    [
        ("The temperature in Boston is 75°F.", "/temp"),
        ("The temperature in Boston is 72°C.", "/unit"),
        ("The get_weather call returned location Chicago.", "/location"),
        ("The call returned status failed.", "/status"),
    ],
)
def test_an_element_contradicting_a_leaf_is_unsupported_naming_it(answer, pointer):
    report = check_run(weather_run(answer), NO_JUDGE)
    claim = report["claims"][0]
    assert claim["status"] == "unsupported" and report["action"] != "emit"
    assert any(f"get_weather#call_1{pointer}" in r for r in claim["reasons"])
    assert claim["evidence_spans"][0]["pointer"] == pointer


def test_an_unsupported_addition_is_left_to_the_judge():
    leaves = structured.leaves(WEATHER_RESULT, "get_weather", "call_1")
    verdict = structured.check_claim("It is 72°F in Boston, perfect for a picnic.", leaves, set())
    assert verdict.status == "open" and "picnic" in verdict.residual


# ---------------------------------------------------------------- 6. a judge failure


class FailingJudge:
    def judge(self, *args, **kwargs):
        raise JudgeError("Truncation error: Sequence to truncate too short")


def test_a_judge_failure_is_a_technical_error_never_unsupported_claims():
    toolkit = make_toolkit({"judge": "llm"})
    toolkit._judge = FailingJudge()
    run = {
        "question": "What is the refund policy?",
        "tool_results": [
            {"tool": "search_kb", "content": "Refunds are possible within 30 days of purchase."}
        ],
        "answer": "Customers can get their money back within 30 days after buying.",
    }
    report = check_run(run, {"judge": "llm"}, toolkit=toolkit)
    assert report["claims"][0]["status"] == "error"
    assert report["diagnosis"]["mode"] == "technical_error"
    assert report["action"] == "block" and report["feedback"] == []
    assert "technical problem" in report["refusal"]


def test_a_long_dense_claim_is_judged_in_windows_the_model_can_read():
    claim = (
        "The ThinQ_Connect (v2.3.1-rc4) firmware, build #A7F3-99B2-C1D0, released "
        "2023-11-01T20:00:00Z by LG-Electronics/HA-Division, supports IEEE-802.11ax, "
        "Matter-1.2, Thread-1.3.0 and BLE-5.3; SKU: WM-4000HBA/US, MAC 00:1A:2B:3C:4D:5E, "
        "IP 192.168.100.254, API https://api.lgthinq.com/v1/devices/abc123def456"
    ) * 2
    seen = []

    def probability(claim_side: str, evidence_side: str) -> float:
        if len(claim_side) > 200:  # what the tokenizer refused
            raise RuntimeError("Truncation error: Sequence to truncate too short")
        seen.append(claim_side)
        return 0.9

    cascade = judge_mod.CascadeJudge(probability, "fake", None, reject=0.0, accept=0.6)
    verdict = cascade.judge(claim, ["Firmware: ThinQ_Connect 2.3.1"], "Which firmware?")
    assert verdict.score == 0.9 and len(seen) > 1
    assert all(len(w) <= judge_mod.WINDOW_CHARS + 40 for w in judge_mod.claim_windows(claim))
