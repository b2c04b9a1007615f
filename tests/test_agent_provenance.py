"""Argument provenance by construction, one rule a test: values the user wrote in another
format, language, unit or locale are grounded; a value computed from the user's start and
duration is grounded; a value changed by one character, octet, digit or enum step is flagged,
naming the message it differs from. Examples written here, none taken from an eval set."""

from __future__ import annotations

import pytest

from agents.checking import parse_run, relative_dates, structured, tool_calls
from stages.common import values

PROPERTIES = {
    "when": {"type": "string"},
    "start": {"type": "string"},
    "end": {"type": "string"},
    "day": {"type": "string"},
    "from_time": {"type": "string"},
    "to_time": {"type": "string"},
    "address": {"type": "string"},
    "subject": {"type": "string"},
    "note": {"type": "string"},
    "amount": {"type": "number"},
    "amount_cents": {"type": "integer"},
    "cidr": {"type": "string"},
    "account": {"type": "string"},
    "workers": {"type": "integer"},
    "count": {"type": "integer"},
    "speed": {"type": "string", "enum": ["standard", "express", "overnight"]},
    "currency": {"type": "string", "enum": ["usd", "eur", "gbp"]},
    "extras": {
        "type": "array",
        "items": {"type": "string", "enum": ["breakfast", "parking", "late_checkout"]},
    },
}
TOOL = {
    "type": "function",
    "function": {
        "name": "do_it",
        "description": "Carry out an office task",
        "parameters": {"type": "object", "properties": PROPERTIES},
    },
}


def validate(request: str, args: dict, *more_calls: dict) -> tool_calls.Validation:
    calls = [{"id": "c1", "name": "do_it", "arguments": args}]
    calls += [
        {"id": f"c{i + 2}", "name": "do_it", "arguments": a} for i, a in enumerate(more_calls)
    ]
    run = parse_run({"question": request, "tools": [TOOL], "tool_calls": calls, "tool_results": []})
    return tool_calls.verify_run(run, [], set())[0]


def row(validation: tool_calls.Validation, pointer: str) -> dict:
    return next(t for t in validation.provenance if t["pointer"] == pointer)


def assert_grounded(request: str, args: dict) -> tool_calls.Validation:
    validation = validate(request, args)
    assert validation.status == "valid", validation.errors
    for trace in validation.provenance:
        assert trace["status"] in ("grounded", "unverified"), trace
    return validation


def assert_flagged(request: str, args: dict, pointer: str) -> dict:
    validation = validate(request, args)
    assert validation.status == "invalid", validation.provenance
    trace = row(validation, pointer)
    assert trace["status"] in ("changed", "invented"), trace
    return trace


# ---------------------------------------------------------------- dates in any language


@pytest.mark.parametrize(
    ("request_text", "day"),
    [
        ("Réserve pour le 3 février 2027, merci.", "2027-02-03"),
        ("Bitte am 5. Oktober 2026 erledigen.", "2026-10-05"),
        ("Hazlo el 9 de enero de 2027.", "2027-01-09"),
        ("Fallo entro il 21 settembre 2026.", "2026-09-21"),
        ("Ship it on 14.05.2027.", "2027-05-14"),  # a full stop after the year ends the sentence
        ("Is 2/28/2027? fine", "2027-02-28"),
        ("Book for 15th October,2026 please", "2026-10-15"),
    ],
)
def test_a_date_written_in_any_language_or_before_a_full_stop_is_grounded(request_text, day):
    validation = assert_grounded(request_text, {"day": day})
    assert row(validation, "/day")["source"] == "user turn 1"


def test_a_slashed_date_that_reads_either_way_grounds_both_readings_and_nothing_else():
    assert_grounded("Le rendez-vous du 05/03/2027", {"day": "2027-03-05"})
    assert_grounded("Le rendez-vous du 05/03/2027", {"day": "2027-05-03"})
    trace = assert_flagged("Le rendez-vous du 05/03/2027", {"day": "2027-03-06"}, "/day")
    assert trace["status"] == "changed"


def test_a_weekday_beside_its_full_date_does_not_make_the_date_relative():
    request = "Deliver on Friday, 3 December 2027."
    assert_grounded(request, {"day": "2027-12-03"})
    assert assert_flagged(request, {"day": "2027-12-04"}, "/day")["status"] == "changed"


def test_a_month_of_a_year_in_digits_is_a_date():
    assert_grounded("Concerts in April 2027", {"day": "04-2027"})


# ---------------------------------------------------------------- times


@pytest.mark.parametrize(
    ("request_text", "clock"),
    [
        ("Une table à 21h, s'il vous plaît", "21:00"),
        ("Départ à 21h45", "21:45"),
        ("Treffen um 7 Uhr", "07:00"),
        ("Treffen um 7.30 Uhr", "07:30"),
        ("Salida a las 18:10", "18:10"),
    ],
)
def test_a_clock_time_written_with_h_or_uhr_is_grounded(request_text, clock):
    assert_grounded(request_text, {"from_time": clock})


def test_a_duration_in_hours_is_not_a_clock_time():
    assert not [m for m in values.moments("The drive takes 2 h through the hills") if m.time]


def test_a_day_is_bounded_by_its_first_and_last_minute_and_nothing_between():
    request = "What is on my agenda on 7 March 2027?"
    assert_grounded(request, {"start": "2027-03-07T00:00:00+01:00", "end": "2027-03-07T23:59:59"})
    assert_flagged(request, {"start": "2027-03-07T12:00:00"}, "/start")


def test_an_end_computed_from_the_start_and_a_written_duration_is_grounded():
    request = "Put a call on 7 March 2027 at 09:15, 40 minutes."
    validation = assert_grounded(
        request, {"start": "2027-03-07T09:15:00", "end": "2027-03-07T09:55:00"}
    )
    assert "/start" in row(validation, "/end")["source"]
    assert_flagged(request, {"start": "2027-03-07T09:15:00", "end": "2027-03-07T10:05:00"}, "/end")


def test_a_check_out_computed_from_nights_is_grounded():
    request = "Book from 2 May 2027 for 3 nights"
    assert_grounded(request, {"start": "2027-05-02", "end": "2027-05-05"})


def test_a_changed_time_is_caught_although_a_duration_is_written():
    request = "Schedule the review on 12 April 2027 at 2:00 PM for 30 minutes."
    trace = assert_flagged(request, {"start": "2027-04-12T11:00:00"}, "/start")
    assert trace["status"] == "changed" and trace["source"] == "user turn 1"


# ---------------------------------------------------------------- addresses and free text


def test_an_address_completed_with_the_city_written_elsewhere_is_grounded():
    request = "How far from 12 Rue Oberkampf to the station in Paris?"
    assert_grounded(request, {"address": "12 Rue Oberkampf, Paris"})
    assert_flagged(request, {"address": "13 Rue Oberkampf, Paris"}, "/address")


def test_a_free_text_around_a_code_the_user_gave_is_not_an_address():
    validation = assert_grounded(
        "Open a ticket: invoice INV-88123 was paid twice.",
        {"subject": "Invoice INV-88123 paid twice"},
    )
    assert row(validation, "/subject")["kind"] == "text"


def test_a_code_inside_free_text_that_nobody_gave_is_invented():
    trace = assert_flagged(
        "Book leave for Ana from 2 May 2027 to 4 May 2027.",
        {"note": "Covering: Ana Ruiz (Q77310)"},
        "/note",
    )
    assert trace["value"] == "Q77310" and trace["status"] == "invented"


# ---------------------------------------------------------------- amounts


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        ("Überweise 2.345,60 € an Jan.", {"amount": 2345.6}),
        ("Vire 2 345,60 € à Jan.", {"amount": 2345.6}),
        ("Transfiere 4.800 € a Jan.", {"amount": 4800}),
        ("Charge £23.45 to the card", {"amount_cents": 2345}),
        ("Cobra 89,90 EUR al cliente", {"amount_cents": 8990}),
    ],
)
def test_an_amount_in_either_locale_or_in_minor_units_is_grounded(request_text, args):
    validation = assert_grounded(request_text, args)
    assert all(t["status"] == "grounded" for t in validation.provenance)


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        ("Überweise 2.345,60 € an Jan.", {"amount": 2385.6}),
        ("Charge £23.45 to the card", {"amount_cents": 2335}),
        ("Cobra 89,90 EUR al cliente", {"amount_cents": 8980}),
    ],
)
def test_an_amount_changed_by_one_digit_is_changed(request_text, args):
    trace = assert_flagged(request_text, args, "/" + next(iter(args)))
    assert trace["status"] == "changed" and trace["near"]


def test_a_decimal_comma_needs_a_unit_so_a_list_stays_a_list():
    assert [q.value for q in values.quantities("the factorials of 5,10 and 15")] == [5, 10, 15]
    assert [q.value for q in values.quantities("12,5 %")] == [12.5]


def test_a_short_number_is_traced_only_beside_its_arguments_name():
    trace = assert_flagged("Resize the pool to 16 workers.", {"workers": 18}, "/workers")
    assert trace["status"] == "changed"
    # 16 of "16th century" is not the count the model chose
    trace = row(validate("Ten events of the 16th century", {"count": 10}), "/count")
    assert trace["status"] == "unverified"


# ---------------------------------------------------------------- IPs and keys


def test_a_host_as_a_cidr_is_grounded_and_a_changed_octet_is_not():
    request = "Allow traffic from 203.0.113.27 on port 443."
    assert_grounded(request, {"cidr": "203.0.113.27/32"})
    trace = assert_flagged(request, {"cidr": "203.0.113.28/32"}, "/cidr")
    assert trace["status"] == "changed" and trace["near"] == "203.0.113.27"


def test_octets_are_not_read_across_their_dots():
    assert_flagged("Allow traffic from 10.12.3.4", {"cidr": "10.1.23.4"}, "/cidr")


def test_a_random_case_key_changed_by_one_letter_is_changed():
    request = "Charge account acct_QwErTyUiOp now"
    assert_grounded(request, {"account": "acct_QwErTyUiOp"})
    trace = assert_flagged(request, {"account": "acct_QwErTyUiOq"}, "/account")
    assert trace["status"] == "changed"


# ---------------------------------------------------------------- enum members


def test_an_enum_member_the_user_did_not_name_is_flagged_when_they_named_another():
    request = "Send the parcel express to Oslo"
    trace = assert_flagged(request, {"speed": "overnight"}, "/speed")
    assert (trace["status"], trace["near"], trace["source"]) == (
        "changed",
        "express",
        "user turn 1",
    )
    validation = validate(request, {"speed": "overnight"})
    assert any("'express'" in e and "user turn 1" in e for e in validation.errors)


def test_an_enum_member_is_grounded_by_name_by_a_form_of_it_or_by_the_declaration():
    assert (
        row(assert_grounded("Send it EXPRESS", {"speed": "express"}), "/speed")["source"]
        == "user turn 1"
    )
    assert_grounded("Add late checkout", {"extras": ["late_checkout"]})
    assert_grounded("Send the parcel to Oslo", {"speed": "standard"})  # the tool's choice
    assert_grounded("Not express, overnight please", {"speed": "overnight"})


def test_a_currency_member_is_named_by_its_symbol():
    assert_grounded("Invoice £20 for the visit", {"currency": "gbp"})
    trace = assert_flagged("Invoice £20 for the visit", {"currency": "usd"}, "/currency")
    assert trace["near"] == "gbp"


def test_members_the_user_named_for_other_items_or_calls_are_not_counted_against_one():
    assert_grounded("Add breakfast and parking", {"extras": ["breakfast", "parking"]})
    validation = validate(
        "Send one parcel express and one overnight", {"speed": "overnight"}, {"speed": "express"}
    )
    assert validation.status == "valid", validation.errors


def test_durations_in_several_languages():
    assert relative_dates.durations("45 Minuten, 3 noches, 2 semaines, 1,5 h") == [
        (45.0, "minutes"),
        (3.0, "days"),
        (14.0, "days"),
        (90.0, "minutes"),
    ]


# ---------------------------------------------------------------- off the request

LOAN_TOOL = {
    "type": "function",
    "function": {
        "name": "loan_payment",
        "description": "Monthly payment of a fixed-rate loan",
        "parameters": {
            "type": "object",
            "properties": {
                "lender": {"type": "string"},
                "principal": {"type": "number"},
                "years": {"type": "integer"},
            },
            "required": ["lender", "principal", "years"],
        },
    },
}


def loan(request: str, args: dict) -> tool_calls.Validation:
    run = parse_run(
        {
            "question": request,
            "tools": [LOAN_TOOL],
            "tool_calls": [{"id": "c1", "name": "loan_payment", "arguments": args}],
            "tool_results": [],
        }
    )
    return tool_calls.verify_run(run, [], set())[0]


def test_a_poorly_fitting_call_needing_numbers_the_request_never_writes_is_off_request():
    validation = loan("Who painted the Mona Lisa?", {"lender": "Mona", "principal": 1, "years": 1})
    assert validation.status == "invalid"
    assert "the request writes no number" in validation.errors[0]


def test_a_fitting_call_or_one_whose_numbers_the_user_wrote_is_not_off_request():
    fitting = loan(
        "What is the monthly payment of my loan from Acme Bank over ten years?",
        {"lender": "Acme Bank", "principal": 250000, "years": 10},
    )
    assert not any("no number" in e for e in fitting.errors)
    written = loan("Acme Bank, 250000 over 10 years", {"lender": "Acme Bank", "principal": 250000,
                                                       "years": 10})  # fmt: skip
    assert written.status == "valid", written.errors


# ---------------------------------------------------------------- claims over lists of records


EVENTS = {
    "items": [
        {"summary": "Lunch with Sam", "start": "2027-10-03T08:00:00"},
        {"summary": "Hiring panel", "start": "2027-10-03T09:00:00"},
    ]
}


@pytest.mark.parametrize(
    "claim",
    ["Lunch with Sam at 08:00, Hiring panel at 09:00.", "On October 3, 2027: 09:00 Hiring panel"],
)
def test_a_claim_listing_records_each_with_its_own_values_is_supported(claim):
    leaves = structured.leaves(EVENTS, "list_events", "c1")
    assert structured.check_claim(claim, leaves, set()).status == "supported"


def test_a_claim_pairing_values_of_two_records_is_contradicted_naming_the_leaf():
    leaves = structured.leaves(EVENTS, "list_events", "c1")
    verdict = structured.check_claim("09:00 Lunch with Sam", leaves, set())
    assert verdict.status == "contradicted"
    assert "list_events#c1/items/0/start" in {f.pointer for f in verdict.contradicted}
