"""An agent's answer as agents write it, in English, Spanish, German and French: its framing is
not a claim, a lead-in naming the tool is set aside, a German day ordinal ends no claim, and
values a record holds in two leaves or inside an identifier match structurally. The examples are
written here; none is taken from a held-out set."""

from __future__ import annotations

import pytest

from agents.checking import check_run, structured
from agents.checking.answer_framing import is_framing, strip_source_lead
from agents.checking.check import for_checking
from stages.common import values

NO_JUDGE = {"judge": "none"}

BOOKING_TOOL = {
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Book a table at a restaurant",
        "parameters": {
            "type": "object",
            "properties": {
                "restaurant": {"type": "string"},
                "date": {"type": "string"},
                "time": {"type": "string"},
                "guests": {"type": "integer"},
            },
            "required": ["restaurant", "date", "time", "guests"],
        },
    },
}
BOOKING = {
    "booking_ref": "QX7TZ2",
    "restaurant": "Osteria Nord",
    "date": "2027-03-09",
    "time": "19:30",
    "guests": 3,
    "state": "CONFIRMED",
}


def booking_run(
    answer: str, question: str = "Book Osteria Nord for 3 on 9 March 2027, 19:30"
) -> dict:
    return {
        "run_id": "b-1",
        "question": question,
        "tools": [BOOKING_TOOL],
        "tool_results": [
            {
                "tool": "book_table",
                "call_id": "call_9",
                "args": {
                    "restaurant": "Osteria Nord",
                    "date": "2027-03-09",
                    "time": "19:30",
                    "guests": 3,
                },
                "content": BOOKING,
            }
        ],
        "answer": answer,
    }


@pytest.mark.parametrize(
    "text",
    [
        "Done!",
        "Sure!",
        "¡Por supuesto!",
        "Vale.",
        "Erledigt!",
        "Alles klar.",
        "C'est fait !",
        "Parfait.",
        "Let me know if you need anything else.",
        "Would you like me to add it to your calendar?",
        "Avísame si necesitas otra cosa.",
        "Si deseas modificarla, dímelo.",
        "N'hésitez pas si vous avez besoin d'autre chose.",
        "Si vous souhaitez changer l'heure, dites-le-moi.",
        "Gib mir Bescheid, falls noch etwas fehlt.",
        "Wenn du etwas anpassen möchtest, melde dich.",
        "These figures may change before the end of the day.",
        "Please double-check before you rely on it.",
        "Los precios pueden cambiar sin previo aviso.",
        "Ces informations peuvent encore évoluer.",
        "Die Zeiten könnten sich noch verschieben.",
        "Esto es lo que encontré:",
        "Voici ce que j'ai trouvé :",
        "Hier ist, was ich gefunden habe:",
    ],
)
def test_acknowledgements_offers_hedges_and_lead_ins_are_framing(text):
    assert is_framing(text)


@pytest.mark.parametrize(
    "text",
    [
        "The booking is confirmed for 3 guests.",
        "Your table at Osteria Nord is confirmed.",
        "Die Buchung QX7TZ2 ist bestätigt.",
        "The total may change from 120 €.",  # a hedge that names a value states it
        "Let me know if booking_ref QX7TZ2 is wrong.",
        "Here are 3 tables free tonight:",  # a lead-in with a count is a claim
        "La reserva está confirmada.",
    ],
)
def test_a_sentence_that_states_a_fact_is_not_framing(text):
    assert not is_framing(text)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Según book_table: la reserva QX7TZ2 está confirmada.", "la reserva QX7TZ2"),
        ("Laut book_table: Tisch für 3 Personen.", "Tisch für 3"),
        ("D'après book_table : table pour 3.", "table pour 3"),
        ("According to the book_table result, the table is booked.", "the table is booked"),
        ("Selon meteo.example.fr: il pleut.", "il pleut"),
    ],
)
def test_a_lead_in_naming_the_tool_or_a_site_is_set_aside(text, rest):
    body, start = strip_source_lead(text, {"book_table"})
    assert body.startswith(rest) and text[start:] == body


def test_a_lead_in_naming_something_else_stays():
    text = "According to Reuters, the CEO resigned."
    assert strip_source_lead(text, {"book_table"}) == (text, 0)


def test_a_german_day_ordinal_does_not_end_the_claim():
    answer = "Reserviert für 3 Personen am 9. März 2027 um 19:30 Uhr. Das war der 2. Versuch."
    checked = for_checking(answer)
    assert len(checked) == len(answer)  # a claim's offsets stay the answer's own
    assert "am 9  März 2027" in checked and "der 2. Versuch" in checked


def test_a_date_and_time_held_by_two_leaves_of_one_record_match_both():
    leaves = structured.leaves(BOOKING, "book_table", "call_9")
    verdict = structured.check_claim("Booked for March 9, 2027 at 19:30.", leaves, set())
    pointers = {f.pointer for f in verdict.matched}
    assert {"book_table#call_9/date", "book_table#call_9/time"} <= pointers
    assert not verdict.unmatched


def test_a_wrong_time_beside_a_matching_date_does_not_match():
    leaves = structured.leaves(BOOKING, "book_table", "call_9")
    verdict = structured.check_claim("Booked for March 9, 2027 at 20:30.", leaves, set())
    assert verdict.status != "supported" and verdict.unmatched


def test_a_number_inside_a_matched_identifier_is_that_identifier():
    leaves = structured.leaves({"rma": "RET-480213", "state": "open"}, "open_return", "c1")
    assert structured.check_claim("Return RET-480213 is open.", leaves, {"return"}).status == (
        "supported"
    )
    changed = structured.check_claim("Return RET-480214 is open.", leaves, {"return"})
    assert changed.status != "supported"


def test_function_words_of_other_languages_are_not_residual():
    leaves = structured.leaves(BOOKING, "book_table", "call_9")
    verdict = structured.check_claim("Osteria Nord: QX7TZ2, 3 guests, la date est 2027-03-09.",
                                     leaves, set())  # fmt: skip
    assert "la" not in verdict.residual and "est" not in verdict.residual


def test_a_restatement_with_framing_in_german_is_emitted_with_its_pointers():
    answer = "Erledigt! Buchung QX7TZ2: Osteria Nord, 3 guests, 2027-03-09, 19:30. Sag Bescheid, wenn du etwas ändern möchtest."  # noqa: E501
    report = check_run(booking_run(answer), NO_JUDGE)
    statuses = [c["status"] for c in report["claims"]]
    assert statuses.count("not_a_claim") == 2
    assert report["action"] == "emit", report["claims"]


def test_a_changed_value_behind_framing_is_still_caught():
    answer = "Erledigt! Buchung QX7TZ2: Osteria Nord, 4 guests, 2027-03-09, 19:30. Sag Bescheid, wenn du etwas ändern möchtest."  # noqa: E501
    report = check_run(booking_run(answer), NO_JUDGE)
    assert report["action"] != "emit"


def test_a_tool_lead_in_in_spanish_is_checked_on_what_follows():
    answer = "Según book_table: QX7TZ2, Osteria Nord, 2027-03-09 19:30."
    report = check_run(booking_run(answer), NO_JUDGE)
    claim = report["claims"][0]
    assert claim["status"] == "supported" and claim["judge"] == "structured"
    assert report["action"] == "emit"


# ---------------------------------------------------------------- states in other words

TICKET = {"ticket": "HD-20417", "status": "in_progress", "priority": "high", "paid": False}


@pytest.mark.parametrize(
    "claim",
    [
        "Ticket HD-20417 is in progress.",
        "El ticket HD-20417 está en curso.",
        "Ticket HD-20417 ist jetzt in Bearbeitung.",
        "Le ticket HD-20417 est en cours.",
    ],
)
def test_a_state_said_in_another_language_matches_its_leaf(claim):
    leaves = structured.leaves(TICKET, "get_ticket", "t1")
    verdict = structured.check_claim(claim, leaves, {"ticket", "get"})
    assert verdict.status == "supported", verdict.as_row()
    assert "get_ticket#t1/status" in {f.pointer for f in verdict.matched}


@pytest.mark.parametrize(
    "claim",
    [
        "Ticket HD-20417 is closed.",
        "El ticket HD-20417 está cerrado.",
        "Ticket HD-20417 ist geschlossen.",
        "Le ticket HD-20417 est fermé.",
    ],
)
def test_the_state_that_excludes_the_leaf_contradicts_it(claim):
    leaves = structured.leaves({**TICKET, "status": "open"}, "get_ticket", "t1")
    verdict = structured.check_claim(claim, leaves, {"ticket", "get"})
    assert verdict.status == "contradicted"
    assert verdict.contradicted[0].pointer == "get_ticket#t1/status"


@pytest.mark.parametrize(
    ("state", "claim"),
    [
        ("confirmed", "La reunión HD-20417 queda programada."),  # scheduled and confirmed
        ("confirmed", "Reserva HD-20417 hecha."),
        ("succeeded", "Il fait 5 °C, paiement HD-20417."),  # "il fait": it is, not "done"
    ],
)
def test_states_that_may_hold_together_do_not_contradict(state, claim):
    leaves = structured.leaves({**TICKET, "status": state}, "get_ticket", "t1")
    assert structured.check_claim(claim, leaves, {"ticket"}).status != "contradicted"


def test_a_word_ending_a_key_written_as_one_word_is_that_key():
    leaves = structured.leaves({"deal": "D-77", "dealstage": "proposal"}, "create_deal", "d1")
    verdict = structured.check_claim("Deal D-77, stage proposal.", leaves, set())
    assert verdict.status == "supported", verdict.as_row()


def test_a_value_that_is_no_state_has_no_other_words():
    assert values.state_spans("Osteria Nord", "Osteria Nord is open") == []
    assert values.state_spans("open", "Reopening soon") == []


def test_a_german_restatement_is_not_failed_for_its_nouns():
    run = booking_run("Die Reservierung QX7TZ2 ist bestätigt: Osteria Nord, 2027-03-09, 19:30.")
    run["tool_results"][0]["content"] = {**BOOKING, "state": "confirmed"}
    report = check_run(run, NO_JUDGE)
    claim = report["claims"][0]
    assert not any("name not in evidence" in r for r in claim["reasons"]), claim


def test_known_words_are_keys_and_non_english_capitalised_residue():
    from agents.checking.check import _known_words

    leaves = structured.leaves({"pid": 4242, "service": "nginx"}, "restart", "r1")
    text = "Der Dienst nginx läuft wieder (PID 4242)."
    known = _known_words(text, leaves, "de").split()
    assert "PID" in known and "Dienst" in known
    english = "The Acme service nginx runs again (PID 4242)."
    for language in ("en", "und"):  # a name stays a name
        assert "Acme" not in _known_words(english, leaves, language).split()


@pytest.mark.parametrize(
    "text",
    [
        "Done ✅",
        "Fatto!",
        "Feito!",
        "I checked for you.",
        "J'ai vérifié.",
        "Ho controllato.",
        "Fammi sapere se ti servono altri dettagli.",
        "Diz-me se precisares de mais detalhes.",
        "Worth double-checking in the app if it matters.",
        "Conviene revisarlo en la app si es importante.",
        "Im Zweifel lieber in der App nachsehen.",
        "Se for importante, confirma na app.",
        "That's what the API returned just now.",
        "C'est ce que l'API vient de renvoyer.",
        "So hat es die API gerade zurückgegeben.",
    ],
)
def test_framing_in_six_languages_states_nothing_to_check(text):
    assert is_framing(text)


@pytest.mark.parametrize(
    "text",
    [
        "I checked: the order shipped on 3 May.",
        "That's what the API returned for order 55.",
        "Fatto: ordine 1400 spedito.",
        "Se for importante, o total é 42 €.",
    ],
)
def test_framing_words_beside_a_value_still_state_it(text):
    assert not is_framing(text)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("The API (get_quote) says: AIR.PA at 160,02", "AIR.PA at 160,02"),
        ("Dalla risposta di get_quote: AIR.PA a 160,02", "AIR.PA a 160,02"),
        ("Laut Antwort von get_quote: AIR.PA bei 160,02", "AIR.PA bei 160,02"),
        ("Segundo get_quote: AIR.PA a 160,02", "AIR.PA a 160,02"),
    ],
)
def test_a_lead_in_naming_the_tool_in_more_languages_is_set_aside(text, rest):
    assert strip_source_lead(text, {"get_quote"})[0] == rest


def test_a_lead_in_naming_no_tool_of_the_run_stays():
    text = "Dalla risposta di Milano: 5 ordini"
    assert strip_source_lead(text, {"get_quote"})[0] == text
