"""Values an answer writes otherwise than the result does, matched by construction: an instant in
the user's zone or a zone the answer names, a length of time on a clock's face or in parts,
digits in groups, an IP network, a total over a list's items, an amount in minor units or one
the call passed. Each rule has a twin with the value changed (one digit, one hour, one day, a
wrong weekday, a wrong total) that must not match. The examples are written here; none is taken
from a held-out set."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from agents.checking import check_run, derived_leaves, relative_dates, run_words, structured
from agents.checking.formats import parse_run
from stages.common import values

NO_JUDGE = {"judge": "none"}


def verdict(
    claim: str,
    result: dict,
    zones: tuple[str, ...] = (),
    context: set[str] | None = None,
    tool: str = "get_record",
) -> structured.Verdict:
    found = structured.leaves(result, tool, "c1")
    found += derived_leaves.totals(found)
    found = derived_leaves.zoned(found, [ZoneInfo(z) for z in zones])
    words = set(context or ()) | set(values.key_words(tool))
    return structured.check_claim(claim, found, words)


def pointers(result: structured.Verdict) -> set[str]:
    return {f.pointer.split("#", 1)[1].split("c1", 1)[1] for f in result.matched}


# ---------------------------------------------------------------- lengths of time

TRACK = {"name": "Despacito", "duration_ms": 229965}


@pytest.mark.parametrize(
    "claim",
    [
        "Added Despacito (3:49).",
        "Despacito dura 3 min 49 s.",
        "Despacito dauert 3 Minuten und 49 Sekunden.",
        "Despacito (3 min 49 s) est ajouté.",
        "Despacito, 3m49s.",
    ],
)
def test_a_length_of_time_states_a_duration_leaf(claim):
    assert "/duration_ms" in pointers(verdict(claim, TRACK))


@pytest.mark.parametrize(
    "claim", ["Added Despacito (3:48).", "Despacito dura 3 min 47 s.", "Despacito, 4:49."]
)
def test_a_changed_length_of_time_does_not_match(claim):
    assert "/duration_ms" not in pointers(verdict(claim, TRACK))


def test_hours_minutes_seconds_and_an_iso_duration():
    assert "/length_seconds" in pointers(verdict("Runtime 1:02:03.", {"length_seconds": 3723}))
    assert "/length_seconds" not in pointers(verdict("Runtime 1:02:04.", {"length_seconds": 3723}))
    assert "/duration" in pointers(verdict("Das Video dauert 3:49.", {"duration": "PT3M49S"}))
    assert "/duration" not in pointers(verdict("Das Video dauert 3:39.", {"duration": "PT3M49S"}))


def test_a_time_of_day_is_no_length_of_time():
    assert values.durations("muted until 8:30 PM") == []
    assert "/id" not in pointers(verdict("At 3:49.", {"id": 229}))


# ---------------------------------------------------------------- instants in the user's zone

MUTE = {"id": 92681555, "options": {"silenced": {"*": 1796434200}}}  # 2026-12-05 01:30 UTC


@pytest.mark.parametrize(
    ("claim", "zone"),
    [
        ("Monitor 92681555 is muted until 8:30 PM.", "America/New_York"),
        ("Monitor 92681555 is muted until Friday, December 4, 8:30 PM.", "America/New_York"),
        ("Le moniteur 92681555 est en sourdine jusqu'à 2h30.", "Europe/Paris"),
        (
            "Der Monitor 92681555 ist bis Samstag, 5. Dezember, 2:30 stummgeschaltet.",
            "Europe/Berlin",
        ),
    ],
)
def test_a_unix_time_is_stated_in_the_users_zone(claim, zone):
    result = verdict(claim, MUTE, zones=(zone,))
    assert "/options/silenced/*" in pointers(result), result.as_row()
    assert not result.unmatched


@pytest.mark.parametrize(
    ("claim", "zone"),
    [
        ("Monitor 92681555 is muted until 9:30 PM.", "America/New_York"),  # an hour off
        ("Monitor 92681555 is muted until Thursday, December 4, 8:30 PM.", "America/New_York"),
        ("Monitor 92681555 is muted until December 3, 8:30 PM.", "America/New_York"),
        ("Le moniteur 92681555 est en sourdine jusqu'à 3h30.", "Europe/Paris"),
        (
            "Der Monitor 92681555 ist bis Sonntag, 5. Dezember, 2:30 stummgeschaltet.",
            "Europe/Berlin",
        ),
    ],
)
def test_a_changed_time_day_or_weekday_in_the_users_zone_does_not_match(claim, zone):
    result = verdict(claim, MUTE, zones=(zone,))
    assert "/options/silenced/*" not in pointers(result), result.as_row()


MEETING = {"id": 64912782769, "start_time": "2027-04-07T16:30:00Z", "duration": 60}


def test_a_time_in_a_zone_the_answer_names():
    claim = "Queda para el miércoles 7 de abril a las 10:30 (America/Mexico_City)."
    zones = derived_leaves.zones_of([], claim)
    assert [str(z.key) for z in zones] == ["America/Mexico_City"]
    found = derived_leaves.zoned(structured.leaves(MEETING, "zoom", "c1"), zones)
    assert structured.check_claim(claim, found, set()).matched
    for other in (
        "Queda para el miércoles 7 de abril a las 11:30 (America/Mexico_City).",
        "Queda para el jueves 7 de abril a las 10:30 (America/Mexico_City).",
        "Queda para el miércoles 8 de abril a las 10:30 (America/Mexico_City).",
    ):
        result = structured.check_claim(other, found, set())
        assert not any(f.pointer.endswith("/start_time") for f in result.matched), other


def test_the_run_clock_gives_the_zone_of_a_whole_run():
    run = {
        "run_id": "r-zone",
        "system": "Today is Friday, 2026-12-04. The user's time zone is America/New_York.",
        "question": "mute monitor 92681555 until 8:30pm",
        "tool_results": [
            {
                "tool": "datadog_mute_monitor",
                "call_id": "c1",
                "args": {"monitor_id": 92681555, "end": 1796434200},
                "content": MUTE,
            }
        ],
        "answer": "Monitor 92681555 is muted until 8:30 PM.",
    }
    leaves = structured.run_leaves(parse_run(run), {"c1"})
    assert any(m.time == "20:30" for leaf in leaves for m in leaf.local)
    assert check_run(run, NO_JUDGE)["action"] == "emit"
    run["answer"] = "Monitor 92681555 is muted until 9:30 PM."
    assert check_run(run, NO_JUDGE)["action"] != "emit"


# ---------------------------------------------------------------- digits in groups


@pytest.mark.parametrize(
    "claim",
    ["ID de reunión 649 1278 2769.", "Meeting ID 649-1278-2769.", "Meeting-ID: 649.1278.2769."],
)
def test_digits_in_groups_are_one_identifier(claim):
    result = verdict(claim, MEETING)
    assert result.status != "contradicted", result.as_row()
    assert "/id" in pointers(result)


@pytest.mark.parametrize("claim", ["ID de reunión 649 1278 2768.", "Meeting ID 649-1287-2769."])
def test_groups_that_join_to_another_number_contradict(claim):
    assert verdict(claim, MEETING).status == "contradicted"


def test_a_phone_number_in_groups():
    result = verdict("Call +1 415 555 0100.", {"phone": "+14155550100"})
    assert "/phone" in pointers(result)
    assert "/phone" not in pointers(verdict("Call +1 415 555 0101.", {"phone": "+14155550100"}))


# ---------------------------------------------------------------- IP networks

FIREWALL = {"name": "allow-ssh", "sourceRanges": ["203.45.86.0/24", "62.187.154.0/28"]}


@pytest.mark.parametrize(
    "claim",
    [
        "Rule allow-ssh admits 203.45.86.0/24.",
        "Die Regel allow-ssh erlaubt 62.187.154.0/28.",
        "La règle allow-ssh autorise 203.45.86.0/24 et 62.187.154.0/28.",
    ],
)
def test_a_network_matches_a_range_of_a_list_as_one_value(claim):
    result = verdict(claim, FIREWALL)
    assert {p for p in pointers(result) if p.startswith("/sourceRanges/")}
    assert not result.unmatched


@pytest.mark.parametrize(
    "claim", ["Rule allow-ssh admits 203.45.87.0/24.", "Rule allow-ssh admits 62.187.154.0/24."]
)
def test_a_changed_network_is_one_unmatched_element(claim):
    result = verdict(claim, FIREWALL)
    assert result.status != "supported"
    assert len(result.unmatched) == 1 and "/" in result.unmatched[0], result.as_row()


def test_a_network_the_call_passed_is_not_four_numbers():
    claim = "Rule allow-ssh admits 10.20.0.0/16."
    result = verdict(claim, {"name": "allow-ssh"}, context={"%10.20.0.0/16"})
    assert not result.unmatched, result.as_row()
    assert verdict(claim, {"name": "allow-ssh"}).unmatched == ["10.20.0.0/16"]


# ---------------------------------------------------------------- totals over a list

FILES = {"Contents": [{"Size": 7433912}, {"Size": 3978523}, {"Size": 4567389}]}  # 15979824 B


@pytest.mark.parametrize(
    "claim",
    [
        "3 files, about 16.0 MB in total.",
        "3 fichiers, environ 16,0 Mo au total.",
        "3 Dateien, insgesamt etwa 16 MB.",
        "3 archivos, unos 15,2 MB en total.",  # 1024 base
        "3 file, in totale 15979824 byte.",
    ],
)
def test_a_total_is_the_sum_of_a_field_over_the_items(claim):
    result = verdict(claim, FILES)
    total = [f for f in result.matched if "(sum of /Contents/0/Size" in f.pointer]
    assert total, result.as_row()
    assert not result.unmatched


@pytest.mark.parametrize(
    "claim",
    [
        "3 files, about 17.0 MB in total.",
        "3 fichiers, environ 15,9 Mo au total.",
        "3 files, 16.0 MB.",  # not said to be a total
    ],
)
def test_a_wrong_total_or_a_number_not_said_to_be_one_does_not_match(claim):
    result = verdict(claim, FILES)
    assert not any("(sum of" in f.pointer for f in result.matched), result.as_row()


def test_a_total_of_amounts_and_a_total_alone_proves_nothing():
    orders = {"orders": [{"amount": 12.5}, {"amount": 7.25}]}
    assert any("sum of" in f.pointer for f in verdict("In totale 19,75 €.", orders).matched)
    assert not any("sum of" in f.pointer for f in verdict("In totale 19,85 €.", orders).matched)
    assert verdict("In totale 19,75 €.", orders).status != "supported"  # a derived leaf alone


# ---------------------------------------------------------------- amounts

QUOTE = {"delivery_status": "quote", "currency": "USD", "fee": 675}


def test_a_fee_in_minor_units_is_the_amount_in_major_units():
    assert "/fee" in pointers(verdict("DoorDash quotes $6.75 for this delivery.", QUOTE))
    assert "/fee" not in pointers(verdict("DoorDash quotes $6.76 for this delivery.", QUOTE))
    assert "/fee" not in pointers(verdict("DoorDash quotes €6.75 for this delivery.", QUOTE))


def _payout(answer: str) -> dict:
    return {
        "run_id": "r-payout",
        "question": "Send a PayPal payout of $325.50 to ines.costa@gmail.com",
        "tool_results": [
            {
                "tool": "paypal_create_payout",
                "call_id": "c1",
                "args": {
                    "items": [
                        {
                            "amount": {"currency": "USD", "value": "325.50"},
                            "receiver": "ines.costa@gmail.com",
                        }
                    ]
                },
                "content": {
                    "batch_header": {"payout_batch_id": "LCLCNMTX0P8", "status": "PENDING"}
                },
            }
        ],
        "answer": answer,
    }


def test_an_amount_the_call_passed_is_no_unmatched_figure():
    run = parse_run(_payout("Payout LCLCNMTX0P8 of $325.50 is pending."))
    words = run_words.context_words(run)
    leaves = structured.run_leaves(run, {"c1"})
    assert not structured.check_claim(run.answer, leaves, words).unmatched
    changed = structured.check_claim("Payout LCLCNMTX0P8 of $325.60 is pending.", leaves, words)
    assert changed.unmatched == ["$325.60"]


# ---------------------------------------------------------------- one weekday table


def test_one_weekday_table_serves_every_reader():
    from agents.checking import run_clock

    assert values.WEEKDAYS["sabato"] == 5 and values.WEEKDAYS["sat"] == 5
    assert "sat" not in run_clock.WEEKDAY and run_clock.WEEKDAY["samstag"] == 5
    assert "maandag" not in run_clock.WEEKDAY
    assert relative_dates.is_relative("on samedi") and not relative_dates.is_relative("on sabato")


# ---------------------------------------------------------------- days from today, mail dates


@pytest.mark.parametrize(
    ("claim", "day"),
    [
        ("The latest message arrived yesterday.", "yesterday"),
        ("Le dernier message est arrivé hier.", "hier"),
        ("Die letzte Nachricht kam gestern.", "gestern"),
        ("Entrega prevista: hoje.", "hoje"),
    ],
)
def test_a_day_counted_from_today_states_a_leafs_date_in_the_users_zone(claim, day):
    # 2026-12-05 01:30 UTC is 4 December in New York, the day before the run's today
    result = {"internalDate": "1796434200000", "eta": "2026-12-05"}
    found = derived_leaves.zoned(
        structured.leaves(result, "get_record", "c1"), [ZoneInfo("America/New_York")]
    )
    context = {run_words.TODAY_KEY + "2026-12-05"}
    matched = structured.check_claim(claim, found, context).matched
    want = "/eta" if day == "hoje" else "/internalDate"
    assert want in {f.pointer.split("c1", 1)[1] for f in matched}
    changed = claim.replace(day, {"hoje": "amanhã", "hier": "demain"}.get(day, "tomorrow"))
    changed = changed.replace("gestern", "morgen") if day == "gestern" else changed
    assert not structured.check_claim(changed, found, context).matched


@pytest.mark.parametrize(
    "value",
    ["Fri, 4 Dec 2026 01:30:00 +0000", "2026-12-04 01:30:00 UTC", "2026-12-03T20:30:00-05:00"],
)
def test_a_mail_date_or_a_utc_time_is_an_instant_stated_in_the_users_zone(value):
    found = derived_leaves.zoned(
        structured.leaves({"date": value}, "get_record", "c1"), [ZoneInfo("America/New_York")]
    )
    assert structured.check_claim("Sent on Thursday, December 3 at 8:30 PM.", found, set()).matched
    assert not structured.check_claim(
        "Sent on Thursday, December 3 at 9:30 PM.", found, set()
    ).matched
    assert not structured.check_claim(
        "Sent on Friday, December 3 at 8:30 PM.", found, set()
    ).matched


def test_a_link_names_the_resource_it_points_to():
    link = "https://compute.example.com/v1/projects/p-1/global/firewalls/allow-tcp-22-203-0"
    found = structured.leaves({"targetLink": link, "status": "DONE"}, "insert_firewall", "c1")
    found += derived_leaves.url_tails(found)
    claim = "Rule allow-tcp-22-203-0 is DONE."
    assert "/targetLink" in {
        f.pointer.split("c1", 1)[1] for f in structured.check_claim(claim, found, set()).matched
    }
    other = structured.check_claim("Rule allow-tcp-22-204-0 is DONE.", found, set())
    assert "/targetLink" not in {f.pointer.split("c1", 1)[1] for f in other.matched}


def test_a_time_of_day_after_its_word_is_no_length_of_time():
    meeting = {"duration": 600, "start": "2027-04-07T10:30:00"}  # ten minutes, at 10:30
    assert values.durations("It starts at 10:00.") == []
    assert "/duration" not in pointers(verdict("Das Meeting beginnt um 10:00.", meeting))
    assert "/duration" in pointers(verdict("Das Meeting dauert 10:00 Minuten.", meeting))


def test_a_reference_number_is_no_unix_time():
    found = derived_leaves.zoned(
        structured.leaves({"support_reference": "3914968265"}, "get_record", "c1"),
        [ZoneInfo("UTC")],
    )
    assert found[0].local == ()


def test_a_length_after_of_is_a_length():
    assert "/duration_ms" in pointers(verdict("Despacito, une durée de 3:49.", TRACK))
    assert "/duration_ms" in pointers(verdict("Despacito, duração de 3:49.", TRACK))
