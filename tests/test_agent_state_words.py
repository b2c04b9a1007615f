"""A record's state and a day relative to the run's date, said in words in the languages agents
answer in, are matched against the result's leaves by construction: the state's words are the
enum vocabulary's, a negated state matches a leaf that says it does not hold (a null whose key
names it, a state that excludes it), and a relative day is the run's date plus its days. Each
rule has a twin where the state or the day is changed and the claim is not supported. The
examples are written here; none is taken from an evaluation set."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from agents.checking import check_run, derived_leaves, run_words, state_words, structured
from agents.checking.run_clock import Clock
from stages.common import values

NO_JUDGE = {"judge": "none"}


def verdict(claim: str, result: dict, tool: str = "get_record", clock: Clock | None = None):
    """The claim's verdict over one result, in a run whose clock is `clock` (its today and the
    user's zone, as `run_leaves` and `context_words` give them to the check)."""
    leaves = structured.leaves(result, tool, "c1")
    words = set(values.key_words(tool))
    if clock is not None:
        leaves = derived_leaves.zoned(leaves, [clock.zone] if clock.zone else [])
        words.add(run_words.TODAY_KEY + clock.today.isoformat())
    return structured.check_claim(claim, leaves, words)


def pointers(result: structured.Verdict) -> set[str]:
    return {f.pointer for f in result.matched}


# ---------------------------------------------------------------- a state in words

MERGE_REQUEST = {
    "iid": 57,
    "title": "Retry webhooks",
    "state": "opened",
    "merge_status": "checking",
    "draft": False,
}


@pytest.mark.parametrize(
    "claim",
    [
        "Merge status is still being checked.",
        "Der Merge-Status wird noch geprüft.",
        "El estado de merge está en verificación.",
        "Le statut de merge est en cours de vérification.",
        "Lo stato del merge è in verifica.",
        "O estado do merge está em verificação.",
    ],
)
def test_a_merge_status_said_in_words_matches_its_leaf(claim):
    result = verdict(claim, MERGE_REQUEST, "gitlab_create_merge_request")
    assert result.status == "supported", result.as_row()
    assert "gitlab_create_merge_request#c1/merge_status" in pointers(result)


@pytest.mark.parametrize(
    "claim",
    [
        "Merge status: can be merged.",
        "Der Merge-Status: hat Konflikte.",
    ],
)
def test_another_merge_status_contradicts_the_leaf(claim):
    result = verdict(claim, MERGE_REQUEST, "gitlab_create_merge_request")
    assert result.status == "contradicted", result.as_row()
    assert result.contradicted[0].pointer.endswith("/merge_status")


INVOICE = {"InvoiceNumber": "INV-0488", "Status": "DRAFT", "Total": 840}
PAID_INVOICE = {"InvoiceNumber": "INV-0488", "Status": "PAID", "Total": 840}


@pytest.mark.parametrize(
    "claim",
    [
        "It is still a draft.",
        "C'est encore un brouillon.",
        "Todavía es un borrador.",
        "Es ist noch ein Entwurf.",
        "È ancora una bozza.",
        "Ainda é um rascunho.",
    ],
)
def test_a_draft_said_in_words_matches_the_status_leaf(claim):
    assert verdict(claim, INVOICE, "xero_create_invoices").status == "supported"
    # the same words over an invoice that is paid: a draft is not paid
    changed = verdict(claim, PAID_INVOICE, "xero_create_invoices")
    assert changed.status == "contradicted", changed.as_row()
    assert changed.contradicted[0].pointer == "xero_create_invoices#c1/Status"


ORDER = {"order": {"name": "#1400", "fulfillment_status": None, "financial_status": "paid"}}
SHIPPED_ORDER = {"order": {"name": "#1400", "fulfillment_status": "fulfilled"}}


@pytest.mark.parametrize(
    "claim",
    [
        "It has not been shipped yet.",
        "Elle n'est pas encore expédiée.",
        "Todavía no se ha enviado.",
        "Sie wurde noch nicht versandt.",
        "Non è ancora stato spedito.",
        "Ainda não foi expedido.",
    ],
)
def test_not_yet_shipped_matches_a_null_fulfillment_and_contradicts_a_fulfilled_one(claim):
    result = verdict(claim, ORDER, "shopify_order_update")
    assert result.status == "supported", result.as_row()
    assert "shopify_order_update#c1/order/fulfillment_status" in pointers(result)
    changed = verdict(claim, SHIPPED_ORDER, "shopify_order_update")
    assert changed.status == "contradicted", changed.as_row()


@pytest.mark.parametrize(
    "claim", ["It has shipped.", "Elle est expédiée.", "Sie ist versandt.", "Já foi expedido."]
)
def test_shipped_over_a_null_fulfillment_is_a_contradiction(claim):
    result = verdict(claim, ORDER, "shopify_order_update")
    assert result.status == "contradicted", result.as_row()


def test_a_null_whose_key_names_the_state_says_it_is_not_so():
    result = verdict("It is not shipped yet.", {"id": "p_1", "shipped_at": None})
    assert result.status == "supported", result.as_row()
    assert verdict("It is shipped.", {"id": "p_1", "shipped_at": None}).status == "contradicted"


def tracking(code: str, description: str) -> dict:
    return {
        "trackingNumber": "118563842701",
        "latestStatusDetail": {"code": code, "description": description, "city": "MEMPHIS"},
    }


OUT_FOR_DELIVERY = tracking("OD", "On FedEx vehicle for delivery")
IN_TRANSIT = tracking("IT", "In transit")
DELIVERED = tracking("DL", "Delivered")


@pytest.mark.parametrize(
    "claim",
    [
        "It is out for delivery.",
        "Está en reparto.",
        "Il est en cours de livraison.",
        "Es ist in Zustellung.",
        "È in consegna.",
        "Está em distribuição.",
    ],
)
def test_out_for_delivery_in_words_matches_the_carriers_description(claim):
    result = verdict(claim, OUT_FOR_DELIVERY, "fedex_track_by_number")
    assert result.status == "supported", result.as_row()
    changed = verdict(claim, DELIVERED, "fedex_track_by_number")
    assert changed.status == "contradicted", changed.as_row()


@pytest.mark.parametrize(
    "claim",
    [
        "It was delivered.",
        "Il est livré.",
        "Es wurde zugestellt.",
        "È stato consegnato.",
    ],
)
def test_delivered_over_a_package_in_transit_is_a_contradiction(claim):
    result = verdict(claim, IN_TRANSIT, "fedex_track_by_number")
    assert result.status == "contradicted", result.as_row()
    assert verdict(claim, DELIVERED, "fedex_track_by_number").status == "supported"


def test_a_state_a_leaf_implies_matches_and_a_finer_one_does_not():
    # a package out for delivery has shipped; one merely shipped may not be out for delivery
    assert verdict("It has shipped.", OUT_FOR_DELIVERY).status == "supported"
    shipped = {"trackingNumber": "1185", "status": "shipped"}
    assert verdict("It is out for delivery.", shipped).status != "supported"


INCIDENT = {"incident": {"incident_number": 1730, "status": "triggered", "urgency": "high"}}
LOW_INCIDENT = {"incident": {"incident_number": 1730, "status": "triggered", "urgency": "low"}}


@pytest.mark.parametrize(
    "claim",
    [
        "Incident #1730 is triggered (high urgency).",
        "L'incidente #1730 è attivo (urgenza alta).",
        "L'incident #1730 est déclenché (urgence haute).",
        "El incidente #1730 está activo (urgencia alta).",
        "Incident #1730 ist ausgelöst (Dringlichkeit hoch).",
        "O incidente #1730 foi acionado (urgência alta).",
    ],
)
def test_an_incidents_state_and_urgency_in_words_match(claim):
    result = verdict(claim, INCIDENT, "pagerduty_create_incident")
    assert result.status == "supported", result.as_row()
    assert "pagerduty_create_incident#c1/incident/urgency" in pointers(result)
    changed = verdict(claim, LOW_INCIDENT, "pagerduty_create_incident")
    assert changed.status == "contradicted", changed.as_row()


def test_a_resolved_incident_said_open_is_a_contradiction():
    resolved = {"incident": {"incident_number": 1730, "status": "resolved"}}
    assert verdict("L'incidente #1730 è attivo.", resolved).status == "contradicted"
    assert verdict("Incident #1730 is still open.", resolved).status == "contradicted"


def test_a_state_word_in_passing_contradicts_nothing():
    # "low" of the stock is no urgency; "active" users are no incident's status
    result = verdict("Stock is low for incident #1730.", INCIDENT)
    assert result.status != "contradicted", result.as_row()
    assert verdict("Urgence basse.", LOW_INCIDENT).status == "supported"


def test_states_said_reports_the_negation_with_the_state():
    said = state_words.states_said(
        "Elle n'est pas encore expédiée.", structured.leaves(ORDER, "t", "c1"), []
    )
    assert [(s.text, s.relation) for s in said] == [("n'est pas encore expédiée", "matches")]


# ---------------------------------------------------------------- relative days

PARIS = Clock(date(2026, 5, 25), ZoneInfo("Europe/Paris"))
MESSAGE = {"id": "a4eb", "subject": "Contract renewal", "date": "2026-05-24T13:05:00+02:00"}


@pytest.mark.parametrize(
    "claim",
    [
        "The message Contract renewal arrived yesterday.",
        "Le message Contract renewal est arrivé hier.",
        "El mensaje Contract renewal llegó ayer.",
        "Die Nachricht Contract renewal kam gestern.",
        "Il messaggio Contract renewal è arrivato ieri.",
        "A mensagem Contract renewal chegou ontem.",
    ],
)
def test_yesterday_matches_a_date_of_the_day_before_the_runs_date(claim):
    result = verdict(claim, MESSAGE, "gmail_get", PARIS)
    assert "gmail_get#c1/date" in pointers(result), result.as_row()
    two_days_back = {**MESSAGE, "date": "2026-05-23T13:05:00+02:00"}
    changed = verdict(claim, two_days_back, "gmail_get", PARIS)
    assert "gmail_get#c1/date" not in pointers(changed)
    assert changed.status != "supported", changed.as_row()


@pytest.mark.parametrize(
    ("claim", "shift"),
    [
        ("Delivery expected: today.", 0),
        ("Entrega prevista: hoje.", 0),
        ("Livraison prévue : demain.", 1),
        ("Zustellung erwartet: morgen.", 1),
        ("Consegna prevista: domani.", 1),
        ("Entrega prevista: mañana.", 1),
    ],
)
def test_a_relative_day_matches_the_estimated_delivery_and_a_wrong_one_does_not(claim, shift):
    day = f"2026-05-{25 + shift}"
    shipment = {"type": "ESTIMATED_DELIVERY", "dateTime": f"{day}T18:00:00-05:00"}
    result = verdict(claim, shipment, "fedex_track", PARIS)
    assert "fedex_track#c1/dateTime" in pointers(result), result.as_row()
    assert result.status != "contradicted"
    wrong = {**shipment, "dateTime": f"2026-05-{27 + shift}T18:00:00-05:00"}
    changed = verdict(claim, wrong, "fedex_track", PARIS)
    assert changed.status != "supported" and not pointers(changed), changed.as_row()


def test_a_date_time_is_read_in_its_own_zone_and_in_the_runs():
    # 18:00 in Memphis on the 25th is past midnight in Paris: "today" reads either day
    late = {"type": "ESTIMATED_DELIVERY", "dateTime": "2026-05-25T18:00:00-05:00"}
    for claim in ("Delivery: today.", "Delivery: tomorrow."):
        assert verdict(claim, late, "fedex_track", PARIS).status == "supported"
    assert verdict("Delivery: yesterday.", late, "fedex_track", PARIS).status != "supported"


def test_email_header_dates_and_unix_milliseconds_are_days_too():
    header = {"subject": "Renewal", "Date": "Sun, 24 May 2026 13:05:00 +0200"}
    assert "gmail_get#c1/Date" in pointers(
        verdict("Renewal arrived yesterday.", header, "gmail_get", PARIS)
    )
    unix = {"subject": "Renewal", "internalDate": "1779620700000"}  # 2026-05-24 13:05 Paris
    assert "gmail_get#c1/internalDate" in pointers(
        verdict("Renewal arrived yesterday.", unix, "gmail_get", PARIS)
    )
    assert verdict("Renewal arrived today.", unix, "gmail_get", PARIS).status != "supported"


def test_a_day_word_needs_the_runs_clock_and_look_alikes_are_no_days():
    assert verdict("Delivery expected: today.", {"eta": "2026-05-25"}).status != "supported"
    assert state_words.day_words("Hier ist die Nachricht.") == []
    assert state_words.day_words("Llegó esta mañana.") == []
    assert [shift for shift, _, _ in state_words.day_words("Heute Morgen kam sie.")] == [0]
    assert [shift for shift, _, _ in state_words.day_words("Il est arrivé hier.")] == [-1]


def test_a_run_in_words_is_emitted_and_its_changed_twin_is_not():
    def run(status: str, answer: str) -> dict:
        return {
            "system": "Current date: 2026-05-25 (Monday). User timezone: Europe/Paris.",
            "question": "Where is my order #1400?",
            "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"name": "#1400"}}],
            "tool_results": [
                {
                    "call_id": "c1",
                    "tool": "get_order",
                    "content": {
                        "order": {
                            "name": "#1400",
                            "fulfillment_status": status,
                            "updated_at": "2026-05-24T10:22:31+02:00",
                        }
                    },
                }
            ],
            "answer": answer,
        }

    answer = "Commande #1400 modifiée hier. Elle n'est pas encore expédiée."
    report = check_run(run(None, answer), NO_JUDGE)
    assert report["action"] == "emit", [(c["text"], c["status"]) for c in report["claims"]]
    changed = check_run(run("fulfilled", answer), NO_JUDGE)
    assert changed["action"] != "emit"


@pytest.mark.parametrize(
    "claim",
    [
        "O pedido #1400 passa a ser entregue em Rua Augusta 229.",
        "La commande #1400 sera livrée au 58 rue Oberkampf.",
        "Das Paket wird morgen zugestellt.",
    ],
)
def test_where_or_when_a_record_will_get_a_state_contradicts_no_state(claim):
    assert verdict(claim, ORDER, "shopify_order_update").status != "contradicted"
    assert verdict(claim, IN_TRANSIT, "fedex_track_by_number").status != "contradicted"


def test_the_event_a_date_key_names_is_no_state():
    incident = {"number": "INC0060300", "state": "Resolved", "opened_at": "2027-11-18 07:42:10"}
    assert verdict("It was opened on November 18, 2027.", incident).status != "contradicted"
    assert verdict("It was opened by Jane.", incident).status != "contradicted"
    assert verdict("It is open.", {"number": "INC1", "state": "Resolved"}).status == (
        "contradicted"
    )


def test_a_day_word_that_is_a_key_of_the_result_is_no_unmatched_day():
    forecast = {"today": {"high": 21, "low": 12}, "updated": "2026-05-20T06:00:00Z"}
    result = verdict("Today: high 21, low 12.", forecast, "get_forecast", PARIS)
    assert result.status == "supported", result.as_row()
    assert "Today" not in result.unmatched


@pytest.mark.parametrize(
    "claim",
    ["The operation ended with status DONE.", "Die Operation endete mit Status DONE."],
)
def test_a_verb_of_the_state_matches_and_is_not_supported_over_another_state(claim):
    assert verdict(claim, {"name": "operation-1", "status": "DONE"}).status == "supported"
    failed = verdict(claim, {"name": "operation-1", "status": "FAILED"})
    assert failed.status != "supported", failed.as_row()


ADDRESS_CHANGE = {
    "order": {
        "name": "#1172",
        "fulfillment_status": None,
        "shipping_address": {"address1": "58 rue Oberkampf", "city": "Paris", "zip": "75011"},
    }
}


@pytest.mark.parametrize(
    "claim",
    [
        "La commande #1172 sera livrée au 58 rue Oberkampf, 75011 Paris.",
        "O pedido #1172 passa a ser entregue em 58 rue Oberkampf, 75011 Paris.",
        "Order #1172 will be delivered to 58 rue Oberkampf, 75011 Paris.",
    ],
)
def test_delivered_to_the_shipping_address_is_that_address(claim):
    result = verdict(claim, ADDRESS_CHANGE, "shopify_order_update")
    assert result.status == "supported", result.as_row()
    assert "shopify_order_update#c1/order/shipping_address/address1" in pointers(result)
    moved = verdict(claim.replace("58 rue", "85 rue"), ADDRESS_CHANGE, "shopify_order_update")
    assert moved.status != "supported", moved.as_row()
