"""An answer that restates a tool result, in any of the languages agents answer in, is matched
against the result's leaves by rules that are right by construction: a yes/no value after its
key, numbers in every common locale, amounts in minor units, durations between a record's start
and end, the tail of an identifier, words that name the run's keys and tools in other languages
or as cognates, recurrence words, and an intro before a colon. Each rule is also shown not to
let a changed or added fact through. The examples are written here; none is taken from a
held-out set."""

from __future__ import annotations

import pytest

from agents.checking import check_run, restatement_words, run_words, structured
from agents.checking.answer_framing import is_framing, strip_source_lead
from stages.common import values
from tests.claim_support import verdict

NO_JUDGE = {"judge": "none"}


# ---------------------------------------------------------------- yes/no after its key

DNS = {"id": "rec_81f2", "name": "api.example.net", "ttl": 300, "proxied": False, "locked": True}


@pytest.mark.parametrize(
    "claim",
    [
        "Record rec_81f2: name api.example.net, ttl 300, proxied false.",
        "Record rec_81f2 with proxied: no and locked: yes.",
        "Registro rec_81f2, proxied es falso, locked sí.",
        "Eintrag rec_81f2: proxied nein, locked ja.",
        "Enregistrement rec_81f2 : proxied non, locked oui.",
    ],
)
def test_a_yes_no_word_after_its_key_is_the_value_it_states(claim):
    result = verdict(claim, DNS, "create_dns_record")
    assert result.status == "supported", result.as_row()
    assert "create_dns_record#c1/proxied" in {f.pointer for f in result.matched}


@pytest.mark.parametrize(
    "claim",
    [
        "Record rec_81f2: ttl 300, proxied true.",
        "Record rec_81f2, locked: no.",
        "Eintrag rec_81f2: proxied ja.",
    ],
)
def test_a_yes_no_word_that_says_otherwise_contradicts_the_leaf(claim):
    result = verdict(claim, DNS, "create_dns_record")
    assert result.status == "contradicted", result.as_row()


# ---------------------------------------------------------------- numbers in every locale


def test_a_comma_before_four_digits_is_a_decimal_comma():
    assert [q.value for q in values.quantities("taux 1,0602")] == [1.0602]
    assert [q.value for q in values.quantities("tasa 0,98765")] == [0.98765]


def test_a_single_group_of_three_is_read_both_ways():
    (one,) = values.quantities("rate 1,060")
    assert one.value == 1060 and one.alt == 1.06
    assert values.same_number(one, 1.06) and values.same_number(one, 1060)
    assert not values.same_number(one, 1.6)


def test_a_list_of_small_numbers_stays_a_list():
    assert [q.value for q in values.quantities("sizes 5,10 and 15")] == [5, 10, 15]


CONVERSION = {"query": {"amount": 250, "to": "GBP"}, "rate": 1.0602, "result": 265.05}


@pytest.mark.parametrize(
    "claim",
    [
        "250 € font environ 265,05 £ (taux 1,0602).",
        "250 € son aproximadamente 265,05 £ (tasa 1,0602).",
        "250 € sind etwa 265,05 £ (Kurs 1,0602).",
    ],
)
def test_a_conversion_written_in_another_locale_matches(claim):
    result = CONVERSION
    assert verdict(claim, result, "convert_currency").status == "supported"


def test_a_changed_rate_in_another_locale_is_not_supported():
    result = CONVERSION
    claim = "250 € font environ 265,05 £ (taux 1,0702)."
    assert verdict(claim, result, "convert_currency").status != "supported"


@pytest.mark.parametrize("claim", ["Total: 9 500 €.", "Total : 9\u202f500 €.", "Total: 9.500 €."])
def test_thousands_separators_of_every_locale_match(claim):
    assert verdict(claim, {"total": 9500, "currency": "EUR"}).status == "supported"


# ---------------------------------------------------------------- amounts in minor units

REFUND = {"id": "re_K2mq81", "amount": 4250, "currency": "eur", "status": "succeeded"}


def test_an_amount_in_minor_units_matches_its_major_units_with_the_currency():
    result = verdict("Refund re_K2mq81 of 42.50 € succeeded.", REFUND, "create_refund")
    assert result.status == "supported", result.as_row()
    assert "create_refund#c1/amount" in {f.pointer for f in result.matched}


@pytest.mark.parametrize(
    "claim",
    [
        "Refund re_K2mq81 of $42.50 succeeded.",  # another currency
        "Refund re_K2mq81 of 43.50 € succeeded.",  # another amount
    ],
)
def test_minor_units_need_the_same_currency_and_amount(claim):
    assert verdict(claim, REFUND, "create_refund").status != "supported"


def test_minor_units_are_read_only_beside_a_currency_leaf():
    result = verdict("Order ORD-1 holds 42.50 €.", {"order": "ORD-1", "amount": 4250})
    assert result.status != "supported"


# ---------------------------------------------------------------- durations between start and end

EVENT = {
    "id": "evt_55",
    "summary": "Design sync",
    "start": {"dateTime": "2027-05-04T10:00:00+02:00"},
    "end": {"dateTime": "2027-05-04T11:30:00+02:00"},
}


@pytest.mark.parametrize(
    "claim",
    [
        '"Design sync" is on May 4, 2027 at 10:00 (90 minutes).',
        '"Design sync" el 4 de mayo de 2027 a las 10:00 (90 minutos).',
        '"Design sync" am 4 Mai 2027 um 10:00 (1.5 Stunden).',
    ],
)
def test_a_duration_derived_from_start_and_end_matches(claim):
    result = verdict(claim, EVENT, "create_event")
    assert result.status == "supported", result.as_row()


def test_a_wrong_duration_is_not_supported():
    claim = '"Design sync" is on May 4, 2027 at 10:00 (45 minutes).'
    assert verdict(claim, EVENT, "create_event").status != "supported"


def test_a_duration_matches_only_a_number_of_time():
    claim = '"Design sync" is on May 4, 2027 at 10:00 for 90 guests.'
    assert verdict(claim, EVENT, "create_event").status != "supported"


def test_a_duration_alone_proves_nothing():
    assert verdict("It lasts 90 minutes.", EVENT, "create_event").status != "supported"


# ---------------------------------------------------------------- the tail of an identifier

TRANSFER = {"transfer_id": "tr_77Qa", "creditor": {"iban": "NL91****4417", "name": "Pia Ros"}}


@pytest.mark.parametrize(
    "claim",
    [
        "Transfer tr_77Qa to Pia Ros (IBAN ending in 4417).",
        "Transferencia tr_77Qa a Pia Ros (IBAN que termina en 4417).",
        "Überweisung tr_77Qa an Pia Ros (IBAN endet auf 4417).",
        "Virement tr_77Qa à Pia Ros (IBAN se terminant par 4417).",
    ],
)
def test_a_tail_said_as_a_tail_matches_the_identifier_it_ends(claim):
    result = verdict(claim, TRANSFER, "create_transfer")
    assert result.status == "supported", result.as_row()
    assert "create_transfer#c1/creditor/iban" in {f.pointer for f in result.matched}


def test_a_wrong_tail_or_a_tail_not_said_as_one_does_not_match():
    wrong = "Transfer tr_77Qa to Pia Ros (IBAN ending in 4418)."
    bare = "Transfer tr_77Qa to Pia Ros (IBAN 4417)."
    assert verdict(wrong, TRANSFER, "create_transfer").status != "supported"
    assert verdict(bare, TRANSFER, "create_transfer").status != "supported"


# ---------------------------------------------------------------- words of other languages

SERVICE = {"host": "10.0.4.7", "unit": "postgres.service", "ActiveState": "active", "MainPID": 771}


@pytest.mark.parametrize(
    "claim",
    [
        "postgres on 10.0.4.7 has restarted and is active (PID 771).",
        "postgres en 10.0.4.7 se ha reiniciado y está activo (PID 771).",
        "postgres sur 10.0.4.7 a redémarré et est actif (PID 771).",
        "postgres auf 10.0.4.7 wurde neugestartet und ist aktiv (PID 771).",
    ],
)
def test_a_verb_for_what_the_tool_did_is_covered_in_every_language(claim):
    result = verdict(claim, SERVICE, "restart_service")
    assert result.status == "supported", result.as_row()


def test_a_verb_the_run_holds_nothing_of_stays_for_the_judge():
    claim = "postgres sur 10.0.4.7 a été supprimé (PID 771)."  # deleted: no delete in the run
    assert verdict(claim, SERVICE, "restart_service").status == "open"


@pytest.mark.parametrize(
    "claim",
    [
        "postgres on 10.0.4.7 is active (PID 771) and the on-call engineer was paged.",
        "postgres en 10.0.4.7 está activo (PID 771) y he avisado al cliente.",
        "postgres sur 10.0.4.7 est actif (PID 771) et le client a été prévenu.",
    ],
)
def test_an_added_fact_still_goes_to_the_judge(claim):
    assert verdict(claim, SERVICE, "restart_service").status == "open"


DEAL = {"id": "4410", "properties": {"amount": 8000, "dealstage": "qualification"}}


@pytest.mark.parametrize(
    "claim",
    [
        "He creado la oportunidad 4410: 8.000 €, etapa calificación.",
        "J'ai créé l'opportunité 4410 : 8 000 €, étape qualification.",
    ],
)
def test_cognates_and_key_words_of_other_languages_are_covered(claim):
    result = verdict(claim, DEAL, "create_deal")
    assert result.status == "supported", result.as_row()


def test_cognates_need_long_alike_roots():
    assert restatement_words.cognate("oportunidad", {"opportunity"})
    assert restatement_words.cognate("blockiert", {"blocked"})
    assert not restatement_words.cognate("ordenador", {"order"})
    assert not restatement_words.cognate("pago", {"page"})  # too short to tell


# ---------------------------------------------------------------- recurrence words


@pytest.mark.parametrize("claim", ["DEV-9: target 21 °C, every day.", "DEV-9: 21 °C, jeden Tag."])
def test_a_recurrence_said_in_words_matches_its_leaf(claim):
    result = {"device": "DEV-9", "target": 21, "repeat": "DAILY"}
    assert verdict(claim, result, "set_thermostat").status == "supported"


def test_another_recurrence_contradicts_nothing_it_does_not_exclude_but_is_not_supported():
    result = {"device": "DEV-9", "target": 21, "repeat": "DAILY"}
    assert verdict("DEV-9: target 21 °C, every week.", result, "set_thermostat").status != (
        "supported"
    )


# ---------------------------------------------------------------- intros before a colon


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Done: DEV-9 heats to 21 °C.", "DEV-9 heats to 21 °C."),
        ("Listo: la reserva QX7 está confirmada.", "la reserva QX7 está confirmada."),
        ("Voici ce que j'ai trouvé : `web` passe à 3 réplicas.", "`web` passe à 3 réplicas."),
        ("Folgendes habe ich gefunden:\n\nRetoure R-1 ist angelegt.", "Retoure R-1 ist angelegt."),
        ("Laut create_transfer: Erledigt: 250 € an Pia Ros.", "250 € an Pia Ros."),
    ],
)
def test_an_intro_before_a_colon_is_set_aside(text, rest):
    body, start = strip_source_lead(text, {"create_transfer"})
    assert body == rest and text[start:] == rest


@pytest.mark.parametrize("text", ["Note: the fee is 3 €.", "Status: open.", "Total: 250 €."])
def test_a_label_before_a_colon_is_not_an_intro(text):
    assert strip_source_lead(text, set()) == (text, 0)


@pytest.mark.parametrize(
    "text",
    ["Anything else I can help with?", "¿Necesitas algo más?", "Brauchst du sonst noch etwas?"],
)
def test_an_offer_of_more_help_is_framing(text):
    assert is_framing(text)


# ---------------------------------------------------------------- whole runs, no judge


def _run(answer: str, content: dict, tool: str = "restart_service") -> dict:
    return {
        "run_id": "r-1",
        "question": "Restart postgres on 10.0.4.7",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": tool,
                    "description": "Restart a systemd unit on a host",
                    "parameters": {
                        "type": "object",
                        "properties": {"host": {"type": "string"}, "unit": {"type": "string"}},
                        "required": ["host", "unit"],
                    },
                },
            }
        ],
        "tool_results": [
            {
                "tool": tool,
                "call_id": "call_1",
                "args": {"host": "10.0.4.7", "unit": "postgres"},
                "content": content,
            }
        ],
        "answer": answer,
    }


def test_a_french_restatement_with_an_intro_is_emitted_without_a_judge():
    answer = "Voici ce que j'ai trouvé : postgres sur 10.0.4.7 a redémarré et est actif (PID 771)."
    report = check_run(_run(answer, SERVICE), NO_JUDGE)
    assert report["action"] == "emit", report["claims"]
    assert any(c["judge"] == "structured" for c in report["claims"])


def test_a_french_restatement_with_a_changed_pid_is_not_emitted():
    answer = "Voici ce que j'ai trouvé : postgres sur 10.0.4.7 a redémarré et est actif (PID 772)."
    report = check_run(_run(answer, SERVICE), NO_JUDGE)
    assert report["action"] != "emit"


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ("proxied false.", False),
        ("proxied: yes, ttl 300", True),
        ("proxied = no and ttl 300", False),
        ("proxied, no smoking", None),  # a comma parts the key from what follows
        ("proxied no smoking", None),  # the word starts another phrase
    ],
)
def test_a_yes_no_word_is_read_only_as_the_value_of_its_key(claim, said):
    tokens = values.tokens_with_spans(claim)
    found = structured._yes_no_after(claim, tokens, len("proxied"))
    assert (found[0] if found else None) == said


# ---------------------------------------------------------------- states of yes/no keys and enums

PLACE = {"place_id": "pl_31", "name": "Café Lumen", "open_now": True}


@pytest.mark.parametrize(
    "claim",
    ["Café Lumen is open now.", "Café Lumen está abierta ahora.", "Café Lumen ist geöffnet."],
)
def test_a_yes_no_key_said_as_a_state_in_another_language_matches(claim):
    result = verdict(claim, PLACE, "find_place")
    assert result.status == "supported", result.as_row()


def test_a_state_said_of_a_false_yes_no_key_contradicts_it():
    result = verdict("Café Lumen está abierta ahora.", {**PLACE, "open_now": False}, "find_place")
    assert result.status == "contradicted"


@pytest.mark.parametrize(
    "claim", ["Return R-7 is awaiting drop-off.", "La devolución R-7 está pendiente de entrega."]
)
def test_the_state_word_of_an_enum_member_of_several_words_matches_it(claim):
    result = verdict(claim, {"rma": "R-7", "status": "AWAITING_DROP_OFF"}, "create_return")
    assert "create_return#c1/status" in {f.pointer for f in result.matched}, result.as_row()


def test_a_title_is_no_state():
    assert values.state_spans("Trail Running Shoe", "the running shoe") == []


@pytest.mark.parametrize("claim", ["Timeout: 30 seconds.", "Timeout: 30 Sekunden.", "30 segundos"])
def test_seconds_in_every_language_are_a_unit(claim):
    assert [q.unit for q in values.quantities(claim)] == ["second"]


# ---------------------------------------------------------------- markdown, texts, contractions


def test_emphasis_marks_do_not_part_a_value_from_its_unit_or_a_name():
    from agents.checking.check import unemphasised

    assert unemphasised("About **48** minutes (**2.9** km)") == "About 48 minutes (2.9 km)"
    assert unemphasised("**status**.acme.io, `web-1`") == "status.acme.io, web-1"
    assert unemphasised("3 * 4 = 12") == "3 * 4 = 12"


def test_a_bold_restatement_is_emitted_without_a_judge():
    answer = "**postgres** on **10.0.4.7** restarted, PID **771**, state **active**."
    report = check_run(_run(answer, SERVICE), NO_JUDGE)
    assert report["action"] == "emit", report["claims"]


def test_a_number_with_its_unit_inside_a_text_the_claim_restates_matches():
    result = {"reservation_id": "RS-1", "cancellation_policy": "free until 24h before"}
    assert verdict("Cancellation is free until 24 hours before.", result).status == "supported"
    assert verdict("Cancellation is free until 48 hours before.", result).status != "supported"


def test_a_number_inside_a_matched_name_is_not_read_in_another_record():
    result = {
        "items": [
            {"title": "Kestrel Noise-Cancelling 300", "price": 67.69},
            {"title": "Brevio Noise-Cancelling 300", "price": 79.15},
        ]
    }
    assert verdict("Brevio Noise-Cancelling 300 – $79.15", result).status == "supported"


def test_the_pieces_of_an_english_contraction_are_not_residual():
    result = verdict("You're booked: RS-1.", {"reservation_id": "RS-1"}, "book_table")
    assert "re" not in result.residual


# ---------------------------------------------------------------- key synonyms, negated flags, args

FORECAST = {"date": "2027-07-19", "temp_max_c": 14, "temp_min_c": 6, "precip_probability": 65}


@pytest.mark.parametrize(
    "claim",
    [
        "On July 19, 2027: a 65% chance of rain, a high of 14 °C and a low of 6 °C.",
        "El 19 de julio de 2027: probabilidad de lluvia 65 %, máxima 14 °C, mínima 6 °C.",
    ],
)
def test_high_low_and_chance_stand_for_max_min_and_probability(claim):
    assert verdict(claim, FORECAST, "get_forecast").status == "supported"


def test_a_wrong_high_is_still_not_supported():
    claim = "On July 19, 2027: a 65% chance of rain, a high of 15 °C and a low of 6 °C."
    assert verdict(claim, FORECAST, "get_forecast").status != "supported"


def test_a_negation_that_is_a_yes_no_value_is_no_residue():
    claim = "Record rec_81f2: api.example.net, TTL 300 (not proxied)."
    assert verdict(claim, DNS, "create_dns_record").status == "supported"
    assert verdict(claim.replace("not proxied", "not locked"), DNS, "create_dns_record").status == (
        "contradicted"
    )


def _route_leaves():
    result = {"routes": [{"distance": {"text": "2.9 km"}, "duration": {"text": "48 mins"}}]}
    return structured.leaves(result, "get_directions", "c1")


def test_a_time_the_call_passed_is_covered_when_the_result_holds_no_time():
    run = {
        "run_id": "d-1",
        "question": "How long to the library, leaving at 08:00?",
        "tool_results": [
            {
                "tool": "get_directions",
                "call_id": "c1",
                "args": {"destination": "library", "departure_time": "08:00"},
                "content": {"legs": [{"duration": {"text": "48 mins"}}]},
            }
        ],
        "answer": "x",
    }
    from agents.checking import formats

    context = run_words.context_words(formats.parse_run(run))
    claim = "About 48 minutes, leaving at 08:00."
    assert structured.check_claim(claim, _route_leaves(), context).unmatched == []
    other = structured.check_claim("About 48 minutes, leaving at 09:00.", _route_leaves(), context)
    assert other.unmatched == ["09:00"]


RETURN = {
    "rma": "RMA-4410",
    "refund_method": "original_payment",
    "drop_off_by": "2027-11-09",
    "status": "AWAITING_DROP_OFF",
}


@pytest.mark.parametrize(
    "claim",
    [
        "Gib das Paket bis zum 9 November 2027 ab; die Erstattung geht auf dein ursprüngliches "
        "Zahlungsmittel.",
        "Entrega el paquete antes del 9 de noviembre de 2027; el reembolso irá a tu método de "
        "pago original.",
    ],
)
def test_a_return_said_as_what_to_do_restates_its_leaves(claim):
    result = verdict(claim, RETURN, "create_return")
    assert result.status == "supported", result.as_row()


def test_a_changed_drop_off_date_is_not_supported():
    claim = "Gib das Paket bis zum 19 November 2027 ab."
    assert verdict(claim, RETURN, "create_return").status != "supported"


# ---------------------------------------------------------------- a day of a month, no year

TASK = {"id": "tsk_51", "title": "Quarterly report", "due_date": "2026-08-11", "priority": 2}


@pytest.mark.parametrize(
    "claim",
    [
        "Task tsk_51 is due Tuesday, August 11.",
        "La tarea tsk_51 vence el martes 11 de agosto.",
        "La tâche tsk_51 est due le mardi 11 août.",
        "Aufgabe tsk_51 ist fällig am Dienstag, 11. August.",
        "Il compito tsk_51 scade martedì 11 agosto.",
        "A tarefa tsk_51 vence terça-feira, 11 de agosto.",
    ],
)
def test_a_day_of_a_month_with_its_weekday_matches_the_date_of_any_year(claim):
    result = verdict(claim, TASK, "create_task")
    assert result.status == "supported", result.as_row()
    assert "create_task#c1/due_date" in {f.pointer for f in result.matched}


@pytest.mark.parametrize(
    "claim",
    [
        "Task tsk_51 is due Tuesday, August 12.",  # the day changed
        "Task tsk_51 is due Wednesday, August 11.",  # the weekday is not that date's
        "La tarea tsk_51 vence el jueves 11 de agosto.",
        "Aufgabe tsk_51 ist fällig am Dienstag, 11. September.",
        "A tarefa tsk_51 vence sexta-feira, 11 de agosto.",
    ],
)
def test_a_changed_day_or_a_weekday_that_is_not_the_dates_is_not_supported(claim):
    assert verdict(claim, TASK, "create_task").status != "supported"


def test_a_number_before_may_is_not_read_as_a_date():
    assert values.moments("2 may arrive late") == []


# ---------------------------------------------------------------- decimal commas

QUOTE = {"symbol": "AIR.PA", "price": 160.02, "change_percent": -2.84, "rate": 0.941}


@pytest.mark.parametrize(
    "claim",
    [
        "AIR.PA; price: 160,02; change: -2,84 %",
        "AIR.PA: rate 0,9410, price 160,02.",
    ],
)
def test_a_decimal_comma_before_punctuation_is_a_decimal(claim):
    assert verdict(claim, QUOTE, "get_quote").status == "supported"


def test_a_changed_decimal_after_a_comma_is_not_supported():
    assert verdict("AIR.PA; price: 160,09; change: -2,84 %", QUOTE, "get_quote").status != (
        "supported"
    )
    assert [q.value for q in values.quantities("sizes 5,10 and 15")] == [5, 10, 15]


# ---------------------------------------------------------------- Italian and Portuguese

ORDER = {"order_id": "A-1400", "status": "shipped", "city": "Lisboa", "total": 42.5}


@pytest.mark.parametrize(
    "claim",
    [
        "L'ordine A-1400 è nello stato shipped, con un totale di 42,50 €.",
        "O pedido A-1400 está com o estado shipped, com um total de 42,50 €.",
    ],
)
def test_italian_and_portuguese_function_words_are_not_residual(claim):
    assert verdict(claim, ORDER, "get_order").status == "supported"


@pytest.mark.parametrize(
    "claim",
    [
        "L'ordine A-1400 è nello stato shipped, con un totale di 45,50 €.",
        "O pedido A-1400 está com o estado shipped, entregue ontem em Porto.",
    ],
)
def test_a_changed_or_added_fact_in_italian_or_portuguese_is_not_supported(claim):
    assert verdict(claim, ORDER, "get_order").status != "supported"


# ---------------------------------------------------------------- negations and identifiers

ISSUE = {"id": "WEB-2094", "title": "Pay button does not respond", "priority": "urgent"}


def test_a_negation_inside_a_matched_value_is_the_values_own():
    claim = 'Created WEB-2094: "Pay button does not respond", priority urgent.'
    assert verdict(claim, ISSUE, "create_issue").status == "supported"


def test_a_negation_outside_the_values_still_keeps_the_claim_open():
    claim = 'WEB-2094 "Pay button does not respond" was not created.'
    assert verdict(claim, ISSUE, "create_issue").status != "supported"


INSTANCE = {"InstanceId": "i-0c4b856f2566c7d8e", "State": "stopping", "Email": "ana@gmail.com"}


@pytest.mark.parametrize(
    "claim",
    [
        "Stopping i-0c6b856f2566c7d8e.",
        "Instanz i-0c4b856f2566c7d9e wird gestoppt.",
        "Notification sent to ana@gmaql.com.",
    ],
)
def test_an_identifier_one_character_off_the_results_contradicts_it(claim):
    result = verdict(claim, INSTANCE, "ec2_stop_instances")
    assert result.status == "contradicted", result.as_row()


def test_the_identifier_as_the_result_holds_it_is_not_a_contradiction():
    result = verdict("Stopping i-0c4b856f2566c7d8e.", INSTANCE, "ec2_stop_instances")
    assert result.status != "contradicted"
