"""Which enum member a user's words name, in en/es/fr/de/it/pt: the member's own words, the
vocabulary's translations and synonyms, cognates; words of another role not read as members;
a call whose member the user did not name is flagged only when they named another. Examples
written here from general knowledge, none taken from an eval set."""

from __future__ import annotations

import re

import pytest

from agents.checking import enum_words, parse_run, tool_calls

# ---------------------------------------------------------------- the vocabulary


def test_every_concept_has_words_in_every_language_and_parses():
    for group, entries in enum_words.VOCABULARY.items():
        assert entries["context"].strip(), group
        for name, entry in entries.items():
            if name == "context":
                continue
            assert entry["members"].strip(), (group, name)
            for language in enum_words.LANGUAGES:
                phrases = [p.strip() for p in entry[language].split(",")]
                assert all(phrases), (group, name, language)
                for phrase in phrases:
                    # a prefix word is looked up by its first three letters
                    for word in re.findall(r"[^\W_]+\*", phrase):
                        assert len(word) >= 4, (group, name, phrase)
    size = enum_words.size()
    assert size["groups"] >= 15 and size["concepts"] >= 100 and size["phrases"] >= 1000


@pytest.mark.parametrize(
    ("member", "text"),
    [
        ("celsius", "Dame el tiempo en Sevilla en grados centígrados"),
        ("celsius", "Quel temps fait-il à Lyon, en degrés Celsius ?"),
        ("celsius", "Che tempo fa a Torino in gradi centigradi?"),
        ("metric", "Wie warm ist es in Köln? Bitte in Grad Celsius."),
        ("fahrenheit", "Qual é a temperatura em Boston em Fahrenheit?"),
        ("km", "Rutas a menos de 5 kilómetros"),
        ("miles", "Distance en miles"),
        ("high", "Erstelle ein Ticket mit hoher Priorität"),
        ("high", "Crea un ticket con prioridad alta"),
        ("high", "Ouvre un ticket, priorité haute"),
        ("high", "Apri un ticket con priorità alta"),
        ("high", "Abra um chamado com prioridade alta"),
        ("low", "Low priority, please"),
        ("urgent", "Es urgente"),
        ("critical", "Severity: critical"),
        ("desc", "Ordena los resultados de forma descendente"),
        ("desc", "Trie par ordre décroissant"),
        ("desc", "Sortiere absteigend"),
        ("asc", "Ordina in modo crescente"),
        ("asc", "Ordem crescente, por favor"),
        ("newest", "Zeig mir die neuesten Bewertungen"),
        ("transit", "¿Cómo llego al museo en transporte público?"),
        ("walking", "Itinéraire à pied jusqu'à la gare"),
        ("bicycling", "Route mit dem Fahrrad zum Bahnhof"),
        ("driving", "Come arrivo in macchina a Firenze?"),
        ("economy", "Reserva un vuelo en clase económica"),
        ("business", "Un billet en classe affaires pour Nice"),
        ("first", "Ein Flug in der ersten Klasse nach Wien"),
        ("WE", "Réunion chaque mercredi"),
        ("thursday", "Toda quinta-feira às 9h"),
        ("sep", "Informe de septiembre"),
        ("gbp", "Paga 20 libras esterlinas"),
        ("cad", "Convertis 50 dollars canadiens"),
        ("jpy", "Cambia 5000 yenes"),
        ("de", "Übersetze das ins Deutsche"),
        ("es", "Traduce esto al español"),
        ("weekly", "Envíame el informe cada semana"),
        ("heat", "Mets le thermostat en mode chauffage"),
        ("off", "Apaga las luces del salón"),
        ("on", "Accendi la luce della cucina"),
        ("disabled", "Desactiva las notificaciones"),
        ("open", "Zeige alle offenen Tickets mit Status offen"),
        ("pending", "Pedidos pendientes"),
        ("cancelled", "Commandes annulées"),
        ("L", "Une chemise taille L"),
    ],
)
def test_the_vocabulary_names_a_member_in_each_language(member, text):
    assert enum_words.naming(member, text) is not None


def test_a_phrase_of_another_concept_takes_its_words():
    assert enum_words.naming("economy", "Un vol en premium economy") is None
    assert enum_words.naming("premium_economy", "Un vol en premium economy")
    assert enum_words.naming("usd", "Convert 50 Canadian dollars") is None
    assert enum_words.naming("cad", "Convert 50 Canadian dollars")


def test_a_number_with_its_symbol_names_a_unit_or_currency():
    assert enum_words.naming("metric", "Es sind 20 °C in Rom") == "20 °C"
    assert enum_words.naming("gbp", "Invoice £20 for the visit") == "£20"
    assert enum_words.naming("usd", "Invoice £20 for the visit") is None


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("priority", "Priorität", True),
        ("economy", "económica", True),
        ("vacation", "vacaciones", True),
        ("pharmacy", "pharmacie", True),
        ("urgent", "urgente", True),
        ("medium", "media", True),
        ("closed", "close", True),  # another English form: named only beside its role
        ("standard", "standing", False),
        ("monday", "money", False),
        ("low", "lower", False),  # too short
    ],
)
def test_cognates(a, b, same):
    assert enum_words.cognate(a, b) is same


def test_a_cognate_names_a_member_but_another_english_form_only_beside_its_role():
    assert enum_words.naming("vacation", "Solicita vacaciones del 3 al 7 de abril")
    assert enum_words.naming("delivered", "Track the delivery of my order") is None
    assert enum_words.naming("delivered", "Track the delivery status", ["status"])


# ---------------------------------------------------------------- words of another role


@pytest.mark.parametrize(
    ("member", "text", "arg", "tool"),
    [
        ("high", "Create a ticket for the store on the high street", "priority", "create_ticket"),
        ("first", "First, find me a flight to Rome", "cabin_class", "search_flights"),
        ("business", "I'm on a business trip to Rome", "cabin_class", "search_flights"),
        ("may", "You may book it in advance", "month", "get_report"),
        ("de", "Traduce el texto de inglés a francés", "target_language", "translate"),
        ("on", "Book a table on Friday", "power", "set_light"),
        ("no", "No rush, whenever you can", "confirm", "send_reply"),
        ("open", "Open a ticket about the printer", "status", "create_ticket"),
        ("auto", "Mi auto está en el taller", "mode", "set_thermostat"),
        ("normal", "As normal, send the invoice", "priority", "send_invoice"),
    ],
)
def test_a_word_in_another_role_does_not_name_a_member(member, text, arg, tool):
    assert enum_words.naming("low", "The temperature is below zero") is None
    arg_words = enum_words.role_words(arg)
    entity = enum_words.role_words(tool)
    assert enum_words.naming(member, text, arg_words, entity) is None
    # how the user names the member the call chose reads it anyway
    assert enum_words.naming(member, text, arg_words, entity, lenient=True) is not None


@pytest.mark.parametrize(
    ("member", "text", "arg", "tool"),
    [
        ("high", "Set the priority to high", "priority", "create_ticket"),
        ("high", "A high-priority ticket", "priority", "create_ticket"),
        ("Done", "OPS-4123 -> Done", "status", "transition_issue"),
        ("OPEN", "Mark lead 00Q5e as open.", "status", "update_lead"),
        ("open", "Show open tickets", "status", "list_tickets"),
        ("first", "Book a seat in first", "cabin_class", "search_flights"),
        ("may", "Report for May 2024", "month", "get_report"),
        ("de", "language: de", "language", "translate"),
    ],
)
def test_a_word_in_its_role_names_a_member(member, text, arg, tool):
    arg_words = enum_words.role_words(arg)
    entity = enum_words.role_words(tool)
    assert enum_words.naming(member, text, arg_words, entity) is not None


# ---------------------------------------------------------------- the decision on a call

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_ticket",
            "parameters": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]},
                    "severity": {"type": "string", "enum": ["minor", "medium", "major"]},
                },
            },
        },
    },
]


def check(request: str, name: str, args: dict) -> tool_calls.Validation:
    calls = [{"id": "c1", "name": name, "arguments": args}]
    run = parse_run({"question": request, "tools": TOOLS, "tool_calls": calls, "tool_results": []})
    return tool_calls.verify_run(run, [], set())[0]


def enum_row(validation: tool_calls.Validation, pointer: str) -> dict:
    return next(t for t in validation.provenance if t["pointer"] == pointer)


@pytest.mark.parametrize(
    ("request_text", "name", "args", "pointer", "named", "words"),
    [
        (
            "¿Qué tiempo hace en Sevilla? En grados centígrados.",
            "get_weather",
            {"city": "Sevilla", "unit": "fahrenheit"},
            "/unit",
            "celsius",
            "centígrados",
        ),
        (
            "Erstelle ein Ticket 'Drucker defekt' mit hoher Priorität",
            "create_ticket",
            {"title": "Drucker defekt", "priority": "normal"},
            "/priority",
            "high",
            "hoher",
        ),
        (
            "Ouvre un ticket « Imprimante » en urgence",
            "create_ticket",
            {"title": "Imprimante", "priority": "high"},
            "/priority",
            "urgent",
            "urgence",
        ),
    ],
)
def test_a_member_is_changed_when_the_user_named_another(
    request_text, name, args, pointer, named, words
):
    validation = check(request_text, name, args)
    assert validation.status == "invalid"
    trace = enum_row(validation, pointer)
    assert (trace["status"], trace["near"], trace["source"], trace["words"]) == (
        "changed",
        named,
        "user turn 1",
        words,
    )
    error = next(e for e in validation.errors if "changed enum" in e)
    assert repr(named) in error and "user turn 1" in error and repr(words) in error


@pytest.mark.parametrize(
    ("request_text", "name", "args", "pointer"),
    [
        ("¿Tiempo en Sevilla en grados centígrados?", "get_weather", {"unit": "celsius"}, "/unit"),
        (
            "Ticket 'Drucker' mit hoher Priorität",
            "create_ticket",
            {"title": "Drucker", "priority": "high"},
            "/priority",
        ),
        (
            "Ticket 'Stampante' con gravità media",
            "create_ticket",
            {"title": "Stampante", "severity": "medium"},
            "/severity",
        ),
    ],
)
def test_a_member_the_user_named_by_translation_is_grounded_in_their_message(
    request_text, name, args, pointer
):
    validation = check(request_text, name, args)
    assert validation.status == "valid", validation.errors
    trace = enum_row(validation, pointer)
    assert (trace["status"], trace["source"]) == ("grounded", "user turn 1")
    assert trace["words"]


@pytest.mark.parametrize(
    ("request_text", "args"),
    [
        # nobody named a priority: the tool's choice stands
        ("Create a ticket 'Printer jam' for the store on the high street", {"priority": "normal"}),
        ("Ticket 'Printer jam': the toner is low", {"priority": "normal"}),
        ("First, open a ticket 'Printer jam'", {"priority": "normal"}),
        # the user named the chosen member too: not a change
        ("Priority high, not urgent: 'Printer jam'", {"priority": "high"}),
        # "media" and "normal" are one concept: the priority named by its synonym
        ("Ticket 'Impresora' de prioridad media", {"priority": "normal"}),
    ],
)
def test_valid_calls_are_not_flagged(request_text, args):
    validation = check(request_text, "create_ticket", {"title": "Printer jam", **args})
    trace = enum_row(validation, "/priority")
    assert trace["status"] == "grounded", trace


# ---------------------------------------------------------------- requests in six languages

DEVICE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {
                    "target": {"type": "string"},
                    argument: {"type": "string", "enum": members},
                },
            },
        },
    }
    for name, argument, members in [
        ("set_thermostat", "mode", ["heat", "cool", "auto", "off"]),
        ("set_light", "state", ["on", "off"]),
        ("search_flights", "cabin_class", ["economy", "premium_economy", "business", "first"]),
        ("get_directions", "mode", ["driving", "walking", "bicycling", "transit"]),
        ("list_messages", "order", ["newest", "oldest"]),
        ("search_products", "sort_order", ["asc", "desc"]),
        ("open_ticket", "priority", ["low", "medium", "high"]),
        ("get_forecast", "unit", ["celsius", "fahrenheit"]),
    ]
]


def device_check(request: str, name: str, args: dict) -> str:
    calls = [{"id": "c1", "name": name, "arguments": {"target": "x", **args}}]
    run = parse_run(
        {"question": request, "tools": DEVICE_TOOLS, "tool_calls": calls, "tool_results": []}
    )
    validation = tool_calls.verify_run(run, [], set())[0]
    (pointer,) = args
    return enum_row(validation, f"/{pointer}")["status"]


@pytest.mark.parametrize(
    ("request_text", "name", "args"),
    [
        ("Pon el aire acondicionado a 24 grados en el salón", "set_thermostat", {"mode": "cool"}),
        ("Set the living room to 21 degrees, it's freezing", "set_thermostat", {"mode": "heat"}),
        ("Schalte das Licht im Wohnzimmer aus", "set_light", {"state": "off"}),
        ("Turn off the lights in the kitchen at 11 pm", "set_light", {"state": "off"}),
        ("Un volo per Parigi, prima possibile", "search_flights", {"cabin_class": "economy"}),
        ("First, a flight for my business trip", "search_flights", {"cabin_class": "economy"}),
        ("Quero ir do aeroporto ao centro de metrô", "get_directions", {"mode": "transit"}),
        ("Directions to the bus stop on Elm Street", "get_directions", {"mode": "driving"}),
        ("Trie mes e-mails du plus récent au plus ancien", "list_messages", {"order": "newest"}),
        ("Crée un ticket : l'imprimante ne marche plus", "open_ticket", {"priority": "medium"}),
        ("Zeig mir die Wettervorhersage für München", "get_forecast", {"unit": "celsius"}),
        ("Weather for Boston, I'm flying out on the first", "get_forecast", {"unit": "fahrenheit"}),
    ],
)  # fmt: skip
def test_valid_requests_in_six_languages_are_not_flagged(request_text, name, args):
    assert device_check(request_text, name, args) == "grounded"


@pytest.mark.parametrize(
    ("request_text", "name", "args"),
    [
        ("Ordena por precio de mayor a menor", "search_products", {"sort_order": "asc"}),
        ("Che tempo fa a Milano in gradi Fahrenheit?", "get_forecast", {"unit": "celsius"}),
        ("Crie um chamado de prioridade baixa", "open_ticket", {"priority": "high"}),
        ("Route zum Flughafen mit dem Fahrrad", "get_directions", {"mode": "driving"}),
        ("Un vol pour Nice en classe affaires", "search_flights", {"cabin_class": "economy"}),
        ("Apaga la luz de la cocina", "set_light", {"state": "on"}),
        ("Mostra prima i messaggi più vecchi", "list_messages", {"order": "newest"}),
    ],
)
def test_a_changed_member_is_caught_in_six_languages(request_text, name, args):
    assert device_check(request_text, name, args) == "changed"
