"""Argument provenance by the run's clock and by the declaration, one rule a test: dates and
times the user wrote relative to the date a run states (in any of six languages), Unix times,
E.164 numbers, values the agent must generate, names composed of the user's values, literals
inside a query, text the agent writes. Each valid value passes; the same value changed by one
character is flagged. Examples written here, none taken from an eval set."""

from __future__ import annotations

import datetime as dt

import pytest

from agents.checking import parse_run, run_clock, tool_calls

SYSTEM = "Current date: {today} ({weekday}). User timezone: {zone}. Use the tools."

PROPERTIES = {
    "start": {"type": "string"},
    "end_at": {"type": "integer", "description": "POSIX timestamp when it ends"},
    "to": {"type": "string", "description": "E.164 number"},
    "idempotency_key": {"type": "string"},
    "request_ref": {"type": "string", "description": "A unique key you generate"},
    "payment_id": {"type": "string"},
    "name": {"type": "string"},
    "query": {"type": "string"},
    "prefix": {"type": "string"},
    "email_subject": {"type": "string"},
    "fields": {"type": "array", "items": {"type": "string"}},
    "unit_amount": {"type": "number"},
}


def validate(request: str, args: dict, today: str = "2026-03-30", zone: str = "Europe/Madrid"):
    day = dt.date.fromisoformat(today)
    system = SYSTEM.format(today=today, weekday=day.strftime("%A"), zone=zone)
    tool = {
        "type": "function",
        "function": {
            "name": "do_it",
            "description": "Carry out an office task",
            "parameters": {"type": "object", "properties": PROPERTIES},
        },
    }
    run = parse_run(
        {
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": request},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "do_it", "arguments": args},
                        }
                    ],
                },
            ],
            "tools": [tool],
        }
    )
    return tool_calls.verify_run(run, [], set())[0]


def assert_valid(request: str, args: dict, **clock: str) -> None:
    validation = validate(request, args, **clock)
    assert validation.status == "valid", validation.errors


def assert_flagged(request: str, args: dict, **clock: str) -> None:
    validation = validate(request, args, **clock)
    assert validation.status == "invalid", validation.provenance


def test_clock_read_from_the_system_turn() -> None:
    clock = run_clock.clock_of(["Today is Friday, 2026-12-04. The user's time zone is Asia/Tokyo."])
    assert clock is not None and clock.today == dt.date(2026, 12, 4)
    assert str(clock.zone) == "Asia/Tokyo"
    assert run_clock.clock_of(["no date here"]) is None


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("pasado mañana", dt.date(2026, 4, 1)),
        ("übermorgen", dt.date(2026, 4, 1)),
        ("tomorrow", dt.date(2026, 3, 31)),
        ("am Freitag", dt.date(2026, 4, 3)),
        ("lundi", dt.date(2026, 4, 6)),
        ("in 3 days", dt.date(2026, 4, 2)),
        ("Apr 22", dt.date(2026, 4, 22)),
        ("the 3rd of March", dt.date(2026, 3, 3)),
        ("am 4.3.", dt.date(2026, 3, 4)),
        ("since Feb 12", dt.date(2026, 2, 12)),
    ],
)
def test_relative_and_yearless_dates_resolve(text: str, wanted: dt.date) -> None:
    clock = run_clock.Clock(dt.date(2026, 3, 30), None)
    assert wanted in run_clock.dates_in(text, clock)


def test_day_after_tomorrow_is_not_tomorrow() -> None:
    clock = run_clock.Clock(dt.date(2026, 3, 30), None)
    assert run_clock.dates_in("pasado mañana", clock) == [dt.date(2026, 4, 1)]


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("a las 8 de la tarde", "20:00"),
        ("alle 20", "20:00"),
        ("às 20h", "20:00"),
        ("zwischen 9 und 17 Uhr", "09:00"),
        ("between 9 and 5", "17:00"),
        ("demain 7h", "07:00"),
        ("à 20h30", "20:30"),
    ],
)
def test_local_times(text: str, wanted: str) -> None:
    assert wanted in run_clock.times_in(text)


def test_relative_date_time_grounded_and_one_digit_off_flagged() -> None:
    request = "Crea una reunión pasado mañana a las 11:15"
    assert_valid(request, {"start": "2026-04-01T11:15:00"})
    assert_flagged(request, {"start": "2026-04-01T11:25:00"})
    assert_flagged(request, {"start": "2026-04-02T11:15:00"})


def test_offset_and_utc_writings_of_a_local_time() -> None:
    request = "are they free on 4.3. between 9 and 17 Uhr?"
    assert_valid(request, {"start": "2026-03-04T17:00:00+01:00"})
    assert_valid(request, {"start": "2026-03-04T16:00:00Z"})
    assert_flagged(request, {"start": "2026-03-04T17:40:00+01:00"})


def test_unix_time_of_the_users_date_and_time() -> None:
    request = "mute it until tomorrow at 8:30pm"
    stamp = int(
        dt.datetime(2026, 3, 31, 20, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))).timestamp()
    )
    assert_valid(request, {"end_at": stamp})
    assert_valid(request, {"end_at": stamp * 1000})
    assert_flagged(request, {"end_at": stamp + 600})


def test_unix_time_read_in_utc() -> None:
    stamp = int(dt.datetime(2026, 5, 12, 10, 0, tzinfo=dt.UTC).timestamp())
    assert_valid("post it May 12 at 10 am", {"end_at": stamp})


def test_e164_number_from_a_local_writing() -> None:
    assert_valid("SMS al 611 22 33 44", {"to": "+34611223344"})
    assert_valid("text (617) 555-0134", {"to": "+16175550134"}, zone="America/New_York")
    assert_flagged("SMS al 611 22 33 44", {"to": "+34611223345"})
    # another country's code is not implied by a Madrid run
    assert_flagged("SMS al 611 22 33 44", {"to": "+33611223344"})


def test_generated_keys_by_declaration() -> None:
    request = "refund 12.50 EUR on payment pay_8FQ2KZ1"
    key = "6f1e2d3c-4b5a-4c6d-8e7f-0a1b2c3d4e5f"
    validation = validate(request, {"idempotency_key": key, "payment_id": "pay_8FQ2KZ1"})
    assert validation.status == "valid", validation.errors
    assert (
        next(t for t in validation.provenance if t["pointer"] == "/idempotency_key")["status"]
        == "generated"
    )
    assert_valid(request, {"request_ref": "R-558211", "payment_id": "pay_8FQ2KZ1"})
    # an id the user or a result must give is never generated
    assert_flagged(request, {"idempotency_key": key, "payment_id": "pay_8FQ2KZ9X"})


def test_name_composed_of_the_users_values() -> None:
    request = "open tcp port 6379 to 203.0.113.0/24"
    assert_valid(request, {"name": "allow-tcp-6379-203-0-113-0"})
    assert_flagged(request, {"name": "allow-tcp-6378-203-0-113-0"})


def test_literals_inside_a_query() -> None:
    request = "how many orders over £250 since Jan 9?"
    query = "SELECT COUNT(*) FROM orders WHERE currency = 'GBP' AND total_cents > 25000"
    assert_valid(request, {"query": f"{query} AND created_at >= '2026-01-09'"})
    assert_flagged(request, {"query": f"{query} AND created_at >= '2026-01-08'"})
    assert_valid("logs under web/ for Jan 7?", {"prefix": "web/2026/01/07/"})
    assert_flagged("logs under web/ for Jan 7?", {"prefix": "web/2026/11/07/"})


def test_text_the_agent_writes_is_not_an_identifier() -> None:
    assert_valid("send a payout to ana@example.com", {"email_subject": "You have a payout!"})


def test_declared_words_in_a_value() -> None:
    assert_valid("hourly temps for Bergen", {"fields": ["temperature_2m"]})


def test_a_sum_of_money_one_digit_off() -> None:
    assert_valid("invoice 12 hours at 95 €/h", {"unit_amount": 95})
    assert_flagged("invoice 12 hours at 95 €/h", {"unit_amount": 97})
    # arithmetic on the user's numbers is not a copy error
    traced = validate("2 tickets at $40 each", {"unit_amount": 80}).provenance
    assert traced[0]["status"] == "unverified"


def test_a_number_inside_a_query_one_digit_off() -> None:
    request = "how many orders over £3,400?"
    assert_valid(request, {"query": "SELECT COUNT(*) FROM orders WHERE total_cents > 340000"})
    assert_flagged(request, {"query": "SELECT COUNT(*) FROM orders WHERE total_cents > 340100"})


def test_integer_enum_read_by_its_described_labels() -> None:
    PRIORITY = {
        "description": "0 = No priority, 1 = Urgent, 2 = High, 3 = Low",
        "enum": [0, 1, 2, 3],
    }
    PROPERTIES["level"] = {"type": "integer", **PRIORITY}
    try:
        assert_valid("file it, prioridad urgente", {"level": 1})
        assert_flagged("file it, prioridad urgente", {"level": 2})
    finally:
        del PROPERTIES["level"]


@pytest.mark.parametrize(
    ("request_text", "member", "other"),
    [
        ("share it with ana@example.com, they should only comment", "commenter", "writer"),
        ("bitte eingehenden Verkehr auf Port 443 erlauben", "INGRESS", "EGRESS"),
    ],
)
def test_access_roles_and_directions_named(request_text: str, member: str, other: str) -> None:
    PROPERTIES["mode"] = {"type": "string", "enum": ["writer", "commenter", "INGRESS", "EGRESS"]}
    try:
        assert_valid(request_text, {"mode": member})
        assert_flagged(request_text, {"mode": other})
    finally:
        del PROPERTIES["mode"]


def test_unix_time_written_as_a_string() -> None:
    PROPERTIES["thread_ts"] = {"type": "string"}
    try:
        assert_flagged("post it May 12 at 10 am", {"thread_ts": "1803456789.123456"})
        stamp = int(dt.datetime(2026, 5, 12, 10, 0, tzinfo=dt.UTC).timestamp())
        assert_valid("post it May 12 at 10 am", {"thread_ts": f"{stamp}.000100"})
    finally:
        del PROPERTIES["thread_ts"]


def test_a_code_in_capitals_one_letter_off() -> None:
    PROPERTIES["symbol"] = {"type": "string"}
    try:
        assert_valid("quote NESN.SW and ROG.SW please", {"symbol": "NESN.SW"})
        assert_flagged("quote NESN.SW and ROG.SW please", {"symbol": "NEAN.SW"})
    finally:
        del PROPERTIES["symbol"]


def test_a_date_nobody_named_where_the_clock_resolves_every_relative_word() -> None:
    # "tomorrow" resolves: a date of no message is invented, not computed
    assert_valid("book it for tomorrow", {"start": "2026-03-31"})
    assert_flagged("book it for tomorrow", {"start": "2026-05-17"})
    # "last week" is not resolved here: a computed date stays unverified
    traced = validate("what changed last week?", {"start": "2026-03-23"}).provenance
    assert traced[0]["status"] == "unverified"


def test_most_reviews_is_not_the_best_rated() -> None:
    PROPERTIES["sort_by"] = {"type": "string", "enum": ["best_match", "rating", "review_count"]}
    try:
        assert_valid("pizzarias em Porto com mais avaliações primeiro", {"sort_by": "review_count"})
        assert_flagged("pizzarias em Porto com mais avaliações primeiro", {"sort_by": "rating"})
    finally:
        del PROPERTIES["sort_by"]


def test_a_unique_id_described_is_not_generated() -> None:
    PROPERTIES["dna_id"] = {"type": "string", "description": "Unique ID of the molecule."}
    try:
        assert_flagged("fetch molecule XYZ123", {"dna_id": "ACC-15733397"})
    finally:
        del PROPERTIES["dna_id"]
