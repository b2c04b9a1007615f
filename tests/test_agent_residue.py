"""A claim whose every value matched a leaf of a JSON result is supported even when it holds
other words, in any of the languages agents answer in, as long as none of them can carry a fact
the match did not check. Each rule has a twin: the same claim with a fact changed or added in
words (a name, a negation, a quantifier, a day, a state, a comparison, a clause) stays open or
is contradicted. The examples are written here; none is taken from a held-out set."""

from __future__ import annotations

import pytest

from agents.checking import structured
from agents.checking.answer_framing import is_framing
from tests.claim_support import verdict

QUOTE = {"sourceAmount": 1250.0, "targetAmount": 1170.86, "targetCurrency": "CHF", "rate": 0.941}
OPERATION = {"name": "operation-1744", "operationType": "insert", "status": "DONE"}
PAYMENT = {"id": "pay_9Qx81", "amount": 50.0, "currency": "USD", "status": "succeeded"}
BUCKET = {
    "KeyCount": 3,
    "Contents": [
        {"Key": "a.log", "Size": 100, "StorageClass": "STANDARD"},
        {"Key": "b.log", "Size": 200, "StorageClass": "STANDARD"},
        {"Key": "c.log", "Size": 300, "StorageClass": "STANDARD"},
    ],
}
MIXED = {
    "Contents": [
        {"Key": "a.log", "StorageClass": "STANDARD"},
        {"Key": "b.log", "StorageClass": "GLACIER"},
    ]
}
OFFERS = {
    "data": [
        {"id": "1", "carrier": "TP", "price": {"total": "1377.49", "currency": "EUR"}},
        {"id": "2", "carrier": "AF", "price": {"total": "1671.27", "currency": "EUR"}},
    ]
}
ORDERS = {"columns": [{"name": "orders"}, {"name": "total"}], "rows": [[149, 36488.84]]}
QUERY_UP = {"query": "SELECT COUNT(*) AS orders, SUM(total) AS total FROM t WHERE total > 100"}
QUERY_DOWN = {"query": "SELECT COUNT(*) AS orders, SUM(total) AS total FROM t WHERE total < 100"}
MESSAGES = {"resultSizeEstimate": 3, "messages": [{"id": "m1"}, {"id": "m2"}, {"id": "m3"}]}


# ---------------------------------------------------------------- ordinary words are residue


@pytest.mark.parametrize(
    "claim, unchecked",
    [
        ("Arriverebbero 1.170,86 CHF al tasso di 0,9410.", ["Arriverebbero"]),
        ("Chegariam 1.170,86 CHF à taxa de 0,9410.", ["Chegariam"]),
        ("You would receive 1,170.86 CHF at a rate of 0.941.", ["receive"]),
        ("Llegarían 1.170,86 CHF con una tasa de 0,941.", ["Llegarían"]),
    ],
)
def test_a_verb_of_any_language_beside_matched_values_is_reported_not_blocking(claim, unchecked):
    result = verdict(claim, QUOTE, "wise_create_quote")
    assert result.status == "supported", result.as_row()
    assert result.unchecked == unchecked
    assert result.as_row()["unchecked_words"] == unchecked
    assert any("words not checked" in r for r in result.reasons())


@pytest.mark.parametrize(
    "claim",
    [
        "Die Operation endete mit Status DONE.",
        "The operation ended with status DONE.",
        "L'opération s'est terminée avec le statut DONE.",
    ],
)
def test_a_state_restated_with_a_plain_verb_is_supported(claim):
    assert verdict(claim, OPERATION, "gce_get_operation").status == "supported"


# ---------------------------------------------------------------- names stay open


@pytest.mark.parametrize(
    "claim",
    [
        "Arriverebbero 1.170,86 CHF presso Revolut al tasso di 0,9410.",  # a name mid-sentence
        "You would receive 1,170.86 CHF at a rate of 0.941 via SEPA.",  # all caps
        "Llegarían 1.170,86 CHF con una tasa de 0,941, plan p2.",  # digits
        "Airbus (CHF) recibiría 1.170,86 CHF a 0,941.",  # a first word before a code
        "Die Operation endete mit Status DONE in octo-org/legacy.",  # a word inside a path
    ],
)
def test_a_name_or_a_code_left_over_keeps_the_claim_open(claim):
    assert verdict(claim, QUOTE | OPERATION, "wise_create_quote").status == "open"


# ---------------------------------------------------------------- negations stay open


@pytest.mark.parametrize(
    "claim",
    [
        "Die Operation endete nicht mit Status DONE.",
        "L'opération n'est pas terminée, statut DONE.",
        "A operação não terminou, status DONE.",
        "L'operazione non è finita, stato DONE.",
        "La operación nunca terminó, estado DONE.",
        "No: the operation ended with status DONE.",
    ],
)
def test_a_negation_in_any_language_keeps_the_claim_open(claim):
    assert verdict(claim, OPERATION, "gce_get_operation").status != "supported"


# ---------------------------------------------------------------- quantifiers


@pytest.mark.parametrize(
    "claim", ["Tous en STANDARD.", "Alle in STANDARD.", "All in STANDARD.", "Todos en STANDARD."]
)
def test_a_quantifier_true_of_every_item_is_supported(claim):
    assert verdict(claim, BUCKET, "s3_list_objects_v2").status == "supported"


@pytest.mark.parametrize(
    "claim", ["Tous en STANDARD.", "Alles in STANDARD.", "All in STANDARD.", "Tutti in STANDARD."]
)
def test_a_quantifier_false_of_one_item_stays_open(claim):
    assert verdict(claim, MIXED, "s3_list_objects_v2").status == "open"


@pytest.mark.parametrize(
    "claim", ["Only a.log is STANDARD.", "Nur a.log ist STANDARD.", "Seulement a.log en STANDARD."]
)
def test_a_restrictive_quantifier_stays_open(claim):
    assert verdict(claim, BUCKET, "s3_list_objects_v2").status == "open"


# ---------------------------------------------------------------- days and dates


@pytest.mark.parametrize(
    "claim",
    [
        "Die Operation endete gestern mit Status DONE.",
        "L'opération s'est terminée hier, statut DONE.",
        "The operation ended today with status DONE.",
        "A operação terminou hoje, status DONE.",
        "The operation ended on Friday with status DONE.",
    ],
)
def test_a_day_in_words_is_a_value_not_residue(claim):
    assert verdict(claim, OPERATION, "gce_get_operation").status == "open"


# ---------------------------------------------------------------- states said in words


@pytest.mark.parametrize(
    "claim",
    [
        "The payment failed: $50, id pay_9Qx81.",
        "El pago fallido: 50 USD, id pay_9Qx81.",
        "Le paiement a échoué: 50 USD, id pay_9Qx81.",
        "Die Zahlung ist fehlgeschlagen: 50 USD, ID pay_9Qx81.",
        "Payment pay_9Qx81 of $50 was refunded.",
        "Pagamento pay_9Qx81 de 50 USD cancelado.",
    ],
)
def test_a_state_the_result_does_not_hold_is_never_supported(claim):
    assert verdict(claim, PAYMENT, "stripe_get_payment").status != "supported"


@pytest.mark.parametrize(
    "claim",
    [
        "Payment pay_9Qx81 of $50 succeeded.",
        "Pagamento pay_9Qx81 de 50 USD, status succeeded.",
    ],
)
def test_the_state_the_result_holds_is_supported(claim):
    assert verdict(claim, PAYMENT, "stripe_get_payment").status == "supported"


def test_an_action_the_run_holds_nothing_of_stays_open():
    assert verdict("Payment pay_9Qx81 of $50 deleted.", PAYMENT, "stripe_get_payment").status == (
        "open"
    )
    assert verdict("Pago pay_9Qx81 de 50 USD eliminado.", PAYMENT, "stripe_get_payment").status == (
        "open"
    )


# ---------------------------------------------------------------- comparisons and order


@pytest.mark.parametrize(
    "claim",
    [
        "149 orders above that amount, worth £36,488.84 in total.",
        "149 Bestellungen über dem Betrag, zusammen 36.488,84 £.",
        "149 pedidos por encima de ese importe, en total 36.488,84 £.",
    ],
)
def test_a_direction_restating_the_call_filter_is_supported(claim):
    result = verdict(claim, ORDERS, "run_sql_query", QUERY_UP)
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "149 orders above that amount, worth £36,488.84 in total.",
        "149 orders below that amount, worth £36,488.84 in total.",
    ],
)
def test_a_direction_no_filter_states_or_a_swapped_one_stays_open(claim):
    up_or_none = QUERY_DOWN if "above" in claim else QUERY_UP
    assert verdict(claim, ORDERS, "run_sql_query", up_or_none).status == "open"
    assert verdict(claim, ORDERS, "run_sql_query").status == "open"


@pytest.mark.parametrize(
    "claim",
    [
        "L'offerta più economica costa 1.377,49 €.",
        "The cheapest offer costs €1,377.49.",
        "Das günstigste kostet 1.377,49 €.",
    ],
)
def test_a_superlative_true_of_the_list_is_supported(claim):
    assert verdict(claim, OFFERS, "amadeus_flight_offers_search").status == "supported"


@pytest.mark.parametrize(
    "claim",
    [
        "L'offerta più economica costa 1.671,27 €.",
        "The cheapest offer costs €1,671.27.",
        "The most expensive offer costs €1,377.49.",
        "The first offer costs €1,671.27.",
        "La dernière offre coûte 1 377,49 €.",
    ],
)
def test_a_superlative_or_an_order_the_list_does_not_make_true_stays_open(claim):
    assert verdict(claim, OFFERS, "amadeus_flight_offers_search").status == "open"


# ---------------------------------------------------------------- added clauses and values


@pytest.mark.parametrize(
    "claim",
    [
        "You would receive 1,170.86 CHF at a rate of 0.941, and the transfer is instant.",
        "Arriverebbero 1.170,86 CHF al tasso di 0,9410, e arrivano subito.",
        "Die Operation endete mit Status DONE, und die Pipeline lief durch.",
        "You would receive 1,170.86 CHF at a rate of 0.941; delivery is free.",
        "You would receive 1,170.86 CHF at a rate of 0.941 within three days.",
    ],
)
def test_a_clause_or_a_value_added_in_words_stays_open(claim):
    assert verdict(claim, QUOTE | OPERATION, "wise_create_quote").status == "open"


# ---------------------------------------------------------------- answer particles


@pytest.mark.parametrize(
    "claim",
    [
        "Yes: the operation ended with status DONE.",
        "Oui : l'opération s'est terminée avec le statut DONE.",
        "Sí, la operación terminó con estado DONE.",
        "Ja, die Operation endete mit Status DONE.",
        "Sim: a operação terminou com status DONE.",
    ],
)
def test_a_leading_yes_is_no_fact_by_itself(claim):
    assert verdict(claim, OPERATION, "gce_get_operation").status == "supported"


def test_a_yes_beside_a_zero_or_a_false_value_stays_open():
    assert verdict("Yes: 0 messages.", {"resultSizeEstimate": 0}, "gmail_list").status == "open"
    with_no = {"status": "DONE", "error": False}
    claim = "Yes: status DONE."
    assert verdict(claim, with_no, "gce_get_operation").status == "open"
    assert verdict("Status DONE.", with_no, "gce_get_operation").status == "supported"


def test_a_yes_in_the_middle_is_a_yes_no_value_not_a_particle():
    claim = "The operation ended with status DONE, yes."
    assert verdict(claim, OPERATION, "gce_get_operation").status == "open"


# ---------------------------------------------------------------- what the check itself proves

TRACK = {
    "latestStatusDetail": {"description": "In transit", "scanLocation": {"city": "KÖLN"}},
    "scanEvents": [{"city": "BONN"}, {"city": "KÖLN"}],
}


@pytest.mark.parametrize(
    "claim",
    ["Your package is in transit, last scanned in Köln.", "Dernier scan à Köln, in transit."],
)
def test_last_restating_a_latest_key_is_supported(claim):
    assert verdict(claim, TRACK, "fedex_track").status == "supported"


@pytest.mark.parametrize(
    "claim", ["Your package is in transit, last scanned in Bonn.", "First scanned in Köln."]
)
def test_last_over_a_value_no_latest_key_holds_stays_open(claim):
    assert verdict(claim, TRACK, "fedex_track").status == "open"


MEETING = {"id": 64912782769, "start_time": "2027-05-01T16:30:00Z", "topic": "Demo"}


def test_a_date_label_beside_the_date_it_gives_is_supported():
    assert verdict("Fecha: el sábado 1 de mayo", MEETING, "zoom_meeting").status == "supported"
    assert verdict("Fecha: el sábado 8 de mayo", MEETING, "zoom_meeting").status != "supported"


@pytest.mark.parametrize(
    "claim",
    ["Oui : 3 messages de Grace depuis.", "Yes: 3 messages since then.", "Sí: 3 mensajes."],
)
def test_a_count_of_the_list_the_claim_names_proves_it(claim):
    args = {"q": "from:grace.lee@contoso.eu"}
    assert verdict(claim, MESSAGES, "gmail_messages_list", args).status == "supported"


@pytest.mark.parametrize("claim", ["Oui : 4 messages de Grace depuis.", "Yes: 3 threads."])
def test_a_wrong_count_or_a_count_of_nothing_named_is_not_supported(claim):
    assert verdict(claim, MESSAGES, "gmail_messages_list").status != "supported"


PAYOUT = {"batch_header": {"payout_batch_id": "6S6BDMBQ0EPS4", "batch_status": "PENDING"}}
PAYOUT_ARGS = {"receiver": "ines.costa@outlook.com", "amount": "80"}


def test_a_clause_whose_values_the_call_passed_lends_its_words():
    claim = "The payout to ines.costa@outlook.com is on its way: $80, batch 6S6BDMBQ0EPS4."
    result = verdict(claim, PAYOUT, "paypal_create_payout", PAYOUT_ARGS)
    assert result.status == "supported", result.as_row()
    assert result.unchecked == ["way"]


def test_an_address_changed_by_a_letter_is_never_a_cognate():
    claim = "The payout to ines.costa@outlaok.com is on its way: $80, batch 6S6BDMBQ0EPS4."
    assert verdict(claim, PAYOUT, "paypal_create_payout", PAYOUT_ARGS).status == "open"


# ---------------------------------------------------------------- "no" in Portuguese

POD = {"name": "search-worker-ab6da7", "nodeName": "ip-10-0-8-183", "restartCount": 2}


def test_portuguese_no_is_in_the_not_a_negation():
    leaves = structured.leaves(POD, "k8s_list_pods", "c1")
    claim = "É o search-worker-ab6da7, no nó ip-10-0-8-183, com 2 reinícios."
    assert structured.check_claim(claim, leaves, set(), "pt").status == "supported"


@pytest.mark.parametrize(
    "claim, language",
    [
        ("El pod search-worker-ab6da7 no está en ip-10-0-8-183, 2 reinicios.", "es"),
        ("O search-worker-ab6da7 não está no nó ip-10-0-8-183, com 2 reinícios.", "pt"),
        ("É o search-worker-ab6da7, no nó ip-10-0-8-183, com 2 reinícios.", None),
    ],
)
def test_no_stays_a_negation_outside_portuguese_and_nao_in_it(claim, language):
    leaves = structured.leaves(POD, "k8s_list_pods", "c1")
    assert structured.check_claim(claim, leaves, set(), language).status != "supported"


# ---------------------------------------------------------------- a table's header row

TABLE = (
    "Secondo get_quote: | | Prezzo | Variazione |\n|---|---|---|\n"
    "| Santander (SAN.MC) | 294,09 | -2,32 % |\n| Stato | aperto |"
)


def test_a_table_header_row_is_framing():
    assert is_framing("Secondo get_quote: | | Prezzo | Variazione |", {"get_quote"}, TABLE)


@pytest.mark.parametrize(
    "row, answer",
    [
        ("| Stato | aperto |", TABLE),  # a row under the header states a value
        ("| | Prezzo | Variazione |", "| | Prezzo | Variazione |\n| SAN.MC | 294,09 | -2 % |"),
        ("| Totale 120 € | Prezzo |", "| Totale 120 € | Prezzo |\n|---|---|"),  # a figure
    ],
)
def test_a_row_that_is_no_header_or_holds_a_figure_is_not_framing(row, answer):
    assert not is_framing(row, set(), answer)


# ---------------------------------------------------------------- a change said by its direction

QUOTE_DOWN = {"symbol": "IBE.MC", "price": "826.59", "change": "-22.38", "changePercent": "-2.64%"}


@pytest.mark.parametrize(
    "claim",
    [
        "IBE.MC fell -22.38 (-2.64%) to 826.59.",
        "IBE.MC baisse de -2,64 %, à 826,59.",
        "IBE.MC ist um -2,64 % gefallen, auf 826,59.",
    ],
)
def test_a_direction_the_matched_change_has_is_checked(claim):
    result = verdict(claim, QUOTE_DOWN, "get_quote")
    assert result.status == "supported", result.as_row()
    assert not {"fell", "baisse", "gefallen"} & set(result.unchecked)


@pytest.mark.parametrize(
    "claim",
    [
        "IBE.MC rose -22.38 (-2.64%) to 826.59.",
        "IBE.MC subió -2,64 %, a 826,59.",
        "IBE.MC fell to 826.59.",  # no change matched: nothing to say the direction of
    ],
)
def test_a_direction_the_matched_change_does_not_have_stays_open(claim):
    assert verdict(claim, QUOTE_DOWN, "get_quote").status == "open"


def test_an_amount_the_call_sent_is_read_by_its_value():
    args = {"receiver": "ines.costa@outlook.com", "amount": "325.50"}
    said = "The payout to ines.costa@outlook.com is on its way: $325.50, batch 6S6BDMBQ0EPS4."
    changed = said.replace("325.50", "352.50")
    assert verdict(said, PAYOUT, "paypal_create_payout", args).status == "supported"
    assert verdict(changed, PAYOUT, "paypal_create_payout", args).status != "supported"


QUOTE_CENTS = {"external_delivery_id": "D-653966", "currency": "USD", "fee": 675}


def test_a_fee_in_cents_beside_its_currency_is_read_in_dollars():
    said = "DoorDash quotes $6.75 for this delivery (quote D-653966)."
    assert verdict(said, QUOTE_CENTS, "doordash_create_quote").unmatched == []
    for other in ("$6.57 for", "€6.75 for"):
        changed = said.replace("$6.75 for", other)
        assert verdict(changed, QUOTE_CENTS, "doordash_create_quote").status != "supported"


# ---------------------------------------------------------------- a hedge inside a claim

INCIDENT = {"incident": {"incident_number": 1590, "status": "triggered", "urgency": "low"}}


@pytest.mark.parametrize(
    "claim",
    [
        "L'incident n° 1590 est déclenché. À vérifier dans l'appli si c'est important.",
        "Incident 1590 is triggered. Worth double-checking in the app if it matters.",
        "Vorfall 1590 ist ausgelöst. Bitte in der App prüfen, falls wichtig.",
    ],
)
def test_a_hedge_sentence_inside_a_claim_is_set_aside(claim):
    result = verdict(claim, INCIDENT, "pagerduty_create_incident")
    assert result.status == "supported", result.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "L'incident n° 1590 est déclenché. Le client a été prévenu.",
        "L'incident n° 1590 n'est pas déclenché.",
        "Incident 1590 is triggered. The customer was told.",
    ],
)
def test_a_sentence_of_fact_or_a_negation_beside_it_is_not(claim):
    assert verdict(claim, INCIDENT, "pagerduty_create_incident").status != "supported"


@pytest.mark.parametrize(
    "claim, supported",
    [
        ("Il pacco è in transito, ultima scansione a Köln.", True),
        ("A encomenda está em trânsito em Köln.", True),
        ("Il pacco è stato consegnato a Köln.", False),  # delivered: a state it does not hold
        ("Il pacco è in transito, ultima scansione a Bonn.", False),
    ],
)
def test_the_thing_a_tracking_call_tracks_and_its_states(claim, supported):
    tracked = {
        "trackingNumber": "902065261688",
        **TRACK,
        "latestStatusDetail": {"statusByLocale": "In transit", "scanLocation": {"city": "KÖLN"}},
    }
    result = verdict(claim, tracked, "fedex_track_by_number")
    assert (result.status == "supported") is supported, result.as_row()
