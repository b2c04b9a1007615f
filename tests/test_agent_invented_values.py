"""Invented argument values by construction, each rule with a twin that must pass: a date no
message gives and no relative word of the user reaches, a sum of money nobody gave, a tag or
label nobody asked for, an id / cursor / e-mail / URL under any argument name or nested, and an
enum member where the user named exactly one other; in several languages. Examples written
here, none taken from an eval set."""

from __future__ import annotations

import datetime as dt

import pytest

from agents.checking import parse_run, provenance, tool_calls

SYSTEM = "Current date: {today} ({weekday}). User timezone: {zone}. Use the tools."
TODAY = "2026-03-30"

PROPERTIES = {
    "title": {"type": "string"},
    "due_date": {"type": "string", "description": "YYYY-MM-DD"},
    "start_date": {"type": "string"},
    "end_date": {"type": "string"},
    "max_price": {"type": "number"},
    "order_value": {"type": "integer", "description": "Order value in cents"},
    "limit": {"type": "integer"},
    "notify": {"type": "boolean"},
    "labels": {"type": "array", "items": {"type": "string"}},
    "tag": {"type": "string"},
    "starting_after": {"type": "string"},
    "page_token": {"type": "string"},
    "cc": {"type": "array", "items": {"type": "string"}},
    "callback": {"type": "object", "properties": {"url": {"type": "string"}}},
    "body": {"type": "string"},
    "cabin": {"type": "string", "enum": ["economy", "premium_economy", "business", "first"]},
    "status": {"type": "string", "enum": ["DRAFT", "SUBMITTED", "AUTHORISED"]},
    "reason": {"type": "string", "enum": ["duplicate", "fraudulent", "requested_by_customer"]},
    "recipient_type": {"type": "string", "enum": ["EMAIL", "PHONE", "PAYPAL_ID"]},
}


def validate(request: str, args: dict, result: dict | None = None) -> tool_calls.Validation:
    day = dt.date.fromisoformat(TODAY)
    system = SYSTEM.format(today=TODAY, weekday=day.strftime("%A"), zone="Europe/Madrid")
    tool = {
        "type": "function",
        "function": {
            "name": "do_it",
            "description": "Carry out an office task",
            "parameters": {"type": "object", "properties": PROPERTIES},
        },
    }
    messages: list[dict] = [
        {"role": "system", "content": system},
        {"role": "user", "content": request},
    ]
    if result is not None:
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c0", "type": "function", "function": {"name": "do_it", "arguments": {}}}
                ],
            },
            {"role": "tool", "tool_call_id": "c0", "content": str(result)},
        ]
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "do_it", "arguments": args}}
            ],
        }
    )
    run = parse_run({"messages": messages, "tools": [tool]})
    # tool fit is another rule's (and English-only): the provenance of the values is checked here
    return tool_calls.verify_call(run.calls[-1], run, [], check_fit=False)


def assert_valid(request: str, args: dict, result: dict | None = None) -> None:
    validation = validate(request, args, result)
    assert validation.status == "valid", validation.errors


def assert_invented(request: str, args: dict, pointer: str, result: dict | None = None) -> dict:
    validation = validate(request, args, result)
    assert validation.status == "invalid", validation.provenance
    trace = next(t for t in validation.provenance if t["pointer"] == pointer)
    assert trace["status"] in ("invented", "changed"), trace
    return trace


# ---------------------------------------------------------------- dates beside relative words


@pytest.mark.parametrize(
    ("request_text", "computed"),
    [
        ("Create a task for the invoices from last month", "2026-02-15"),
        ("Crée une tâche pour les factures du mois dernier", "2026-02-15"),
        ("Crea una tarea para las facturas del mes pasado", "2026-02-15"),
        ("Leg eine Aufgabe für die Rechnungen der letzten Woche an", "2026-03-24"),
        ("Crea un'attività per le fatture del mese scorso", "2026-02-10"),
        ("Cria uma tarefa para as faturas de daqui a 2 semanas, em 2 semanas", "2026-04-13"),
    ],
)
def test_a_date_the_relative_words_reach_is_the_models_computation(
    request_text: str, computed: str
) -> None:
    assert_valid(request_text, {"title": "Invoices", "due_date": computed})


@pytest.mark.parametrize(
    "request_text",
    [
        "Create a task for the invoices from last month",
        "Crée une tâche pour les factures du mois dernier",
        "Crea una tarea para las facturas del mes pasado",
        "Leg eine Aufgabe für die Rechnungen der letzten Woche an",
    ],
)
def test_a_date_far_from_every_date_the_run_names_is_invented(request_text: str) -> None:
    trace = assert_invented(
        request_text, {"title": "Invoices", "due_date": "2027-09-17"}, "/due_date"
    )
    assert trace["kind"] == "date"


def test_a_year_span_reaches_a_year_back() -> None:
    assert_valid(
        "Export last year's invoices",
        {"title": "Export", "start_date": "2025-01-01", "end_date": "2025-12-31"},
    )


def test_a_date_counted_from_a_results_date() -> None:
    # the result's date is an anchor: "a week after the order" is the model's computation
    assert_valid(
        "Set the follow-up a week after the order date",
        {"title": "Follow-up", "due_date": "2027-09-24"},
        result={"order": {"created": "2027-09-17"}},
    )


# ---------------------------------------------------------------- sums of money


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        ("Flights to Rome under $450", {"max_price": 450}),
        ("Vols pour Rome à moins de 450 €", {"max_price": 450}),
        ("Commande de 120,75 € livrée au 70 rue Oberkampf", {"order_value": 12075}),
        ("2 Tickets zu je 40 €, bitte", {"max_price": 80}),
        ("Split the 90 EUR bill between 3 of us", {"max_price": 30}),
        ("Find me flights to Rome", {"max_price": 0}),
    ],
)
def test_an_amount_given_or_computed_is_not_invented(request_text: str, args: dict) -> None:
    assert_valid(request_text, args)


@pytest.mark.parametrize(
    ("request_text", "args", "pointer"),
    [
        ("Find me flights to Rome", {"max_price": 1375.5}, "/max_price"),
        ("Busca vuelos a Roma", {"max_price": 1375.5}, "/max_price"),
        ("Commande livrée au 70 rue Oberkampf", {"order_value": 137550}, "/order_value"),
    ],
)
def test_an_amount_nobody_gave_is_invented(request_text: str, args: dict, pointer: str) -> None:
    assert assert_invented(request_text, args, pointer)["kind"] == "amount"


def test_a_page_size_and_a_boolean_are_the_agents_choice() -> None:
    assert_valid("Find me flights to Rome", {"limit": 37, "notify": True})


# ---------------------------------------------------------------- tags and labels


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        ("Create a task to review the onboarding doc", {"labels": ["onboarding"]}),
        ("Crée une tâche avec l'étiquette facturation", {"labels": ["billing"]}),
        ("Erstelle eine Aufgabe mit dem Label Rechnung", {"tag": "invoice"}),
        ("Crea una tarea con la etiqueta urgente", {"labels": ["urgent"]}),
    ],
)
def test_a_label_the_user_asked_for_is_not_invented(request_text: str, args: dict) -> None:
    assert_valid(request_text, args)


@pytest.mark.parametrize(
    "request_text",
    [
        "Create a task to call the bank",
        "Crée une tâche pour appeler la banque",
        "Erstelle eine Aufgabe: die Bank anrufen",
    ],
)
def test_a_label_nobody_asked_for_is_invented(request_text: str) -> None:
    trace = assert_invented(request_text, {"labels": ["quarterly-review"]}, "/labels/0")
    assert trace["kind"] == "tag"


def test_free_text_the_agent_writes_is_not_a_label() -> None:
    assert_valid("Create a task to call the bank", {"title": "Call the bank about the loan"})


# ---------------------------------------------------------------- ids, cursors, e-mails, URLs


@pytest.mark.parametrize(
    ("args", "pointer"),
    [
        ({"starting_after": "cus_Q7hZ2mXk41pL"}, "/starting_after"),
        ({"page_token": "Y3Vyc29yOjQ4MTk3NQ"}, "/page_token"),
        ({"cc": ["dana.whitfield@quillmark.net"]}, "/cc/0"),
        ({"callback": {"url": "https://files.quillmark.net/share/7f3k9q"}}, "/callback/url"),
    ],
)
def test_an_identifier_under_any_name_or_nested_is_invented(args: dict, pointer: str) -> None:
    validation = validate("List my customers", args)
    assert validation.status == "invalid", validation.provenance


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        ("List customers after cus_Q7hZ2mXk41pL", {"starting_after": "cus_Q7hZ2mXk41pL"}),
        ("Copia a dana.whitfield@quillmark.net", {"cc": ["dana.whitfield@quillmark.net"]}),
        (
            "Rappelle https://files.quillmark.net/share/7f3k9q quand c'est prêt",
            {"callback": {"url": "https://files.quillmark.net/share/7f3k9q"}},
        ),
    ],
)
def test_an_identifier_the_user_gave_is_grounded(request_text: str, args: dict) -> None:
    assert_valid(request_text, args)


def test_a_cursor_an_earlier_result_returned_is_grounded() -> None:
    assert_valid(
        "List all my customers",
        {"page_token": "Y3Vyc29yOjQ4MTk3NQ"},
        result={"data": [], "next_page_token": "Y3Vyc29yOjQ4MTk3NQ"},
    )


# ---------------------------------------------------------------- enum members


@pytest.mark.parametrize(
    ("request_text", "named", "other"),
    [
        ("Prépare un brouillon de facture pour Ridgeway", "DRAFT", "SUBMITTED"),
        ("Prepara un borrador de factura para Ridgeway", "DRAFT", "AUTHORISED"),
        ("Refund charge ch_1 in full, it's fraud", "fraudulent", "duplicate"),
    ],
)
def test_an_enum_member_the_user_named_another_of(
    request_text: str, named: str, other: str
) -> None:
    key = next(k for k, v in PROPERTIES.items() if named in (v.get("enum") or []))
    assert_valid(request_text, {key: named})
    trace = assert_invented(request_text, {key: other}, f"/{key}")
    assert trace["status"] == "changed" and trace["near"] == named


def test_an_enum_member_nobody_named_is_the_tools_choice() -> None:
    assert_valid("Find flights from Lisbon to Berlin", {"cabin": "premium_economy"})


@pytest.mark.parametrize(
    "request_text",
    ["Un volo per Parigi, prima possibile", "A flight to Paris, my business trip, the first one"],
)
def test_a_weak_word_names_no_member_to_flag(request_text: str) -> None:
    # "prima possibile" is "as soon as possible", not first class; a business trip is no cabin
    assert_valid(request_text, {"cabin": "economy"})


def test_a_members_short_words_in_passing_name_nothing() -> None:
    # "PayPal" and "id" in passing are not the member PAYPAL_ID
    assert_valid(
        "Pay ana.ruiz@northwind.io 20 EUR via PayPal, the id of the item is 5",
        {"recipient_type": "EMAIL"},
    )


def test_probe_kinds_read_from_declarations() -> None:
    from bench.invented_probe import kind_of_argument

    assert kind_of_argument("start_cursor", {"type": "string"}) == "cursor"
    assert kind_of_argument("reviewer_ids", {"type": "array", "items": {"type": "integer"}}) == "id"
    assert kind_of_argument("order_value", {"type": "integer", "description": "cents"}) == "amount"
    assert kind_of_argument("page_size", {"type": "integer"}) == "count"
    assert kind_of_argument("sender_batch_id", {"type": "string"}) == "generated"
    assert provenance.VERSION >= "1.4.0"
