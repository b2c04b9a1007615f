# ruff: noqa: E501 (the templates are sentences in four languages, easier to read unwrapped)
"""Write the frozen detection set `eval/sets/agent-runs-v2`: template-built agent runs over
public-API-shaped tools, valid and mutated, that nothing in the project is fitted on.

Usage:  .venv/bin/python scripts/make_agent_runs_v2.py [--out FOLDER] [--force]

Deterministic (seed SEED): the same records, byte for byte, on every run. Each scenario (a
request in English, Spanish, German or French, the calls an agent makes for it, the tools'
results and an answer) gives three records:

- `correct`: the whole run, its answer restating the results (label: should be emitted);
- `valid_call`: the same run ending on its last call, before the tool ran (should pass);
- one mutated run (should be flagged), its label the mutation: `changed_<kind>` (one argument
  value the user gave, changed by one character or one enum step: date, time, amount, address,
  ip, id, enum; the run ends on that call), `invented_value` (an optional argument set to a value
  nobody gave; ends on that call), `contradiction` (one value of the answer contradicts the
  result) or `unsupported_addition` (the answer adds a fact no result holds).

Runs are rendered in six formats in turn: OpenAI Chat Completions, Anthropic Messages, Gemini,
generic, LangChain message dicts and OpenAI Responses.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.agent_run_sets import check_records, clear, freeze, label_counts

ROOT = Path(__file__).resolve().parents[1]
SET_NAME = "agent-runs-v2"
SEED = 20261128
SCENARIOS = 340
LANGS = ("en", "en", "en", "es", "de", "fr")  # four in ten English, the rest in turn
FORMATS = ("openai", "anthropic", "gemini", "generic", "langchain", "openai_responses")
ARG_KINDS = ("date", "time", "amount", "address", "ip", "id", "enum")
MUTATIONS = (
    *(f"changed_{k}" for k in ARG_KINDS),
    "invented_value",
    "contradiction",
    "unsupported_addition",
)
TARGETS = {
    "valid_call_flag_rate_max": 0.03,
    "valid_run_emitted_min": 0.90,
    "mutation_caught_min": 0.95,
}

# ---------------------------------------------------------------- values, as people write them

MONTHS = {
    "en": [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    "es": [
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ],
    "de": [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
    "fr": [
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ],
}
WEEKDAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
    "de": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
}
SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}


def spoken_date(d: dt.date, lang: str, r: random.Random) -> str:
    """A date as a person writes it in `lang` (the call gets ISO 8601)."""
    m = MONTHS[lang][d.month - 1]
    if lang == "en":
        return r.choice(
            [
                f"{m[:3]} {d.day}, {d.year}",
                f"{m} {d.day}, {d.year}",
                f"{d.day} {m} {d.year}",
                f"{WEEKDAYS['en'][d.weekday()]}, {m} {d.day}, {d.year}",
                f"{d.month}/{d.day}/{d.year}",
            ]
        )
    if lang == "es":
        return r.choice([f"{d.day} de {m} de {d.year}", f"{d.day:02d}/{d.month:02d}/{d.year}"])
    if lang == "de":
        return r.choice([f"{d.day}. {m} {d.year}", f"{d.day:02d}.{d.month:02d}.{d.year}"])
    day = "1er" if d.day == 1 else str(d.day)
    return r.choice([f"{day} {m} {d.year}", f"{d.day:02d}/{d.month:02d}/{d.year}"])


def written_date(d: dt.date, lang: str) -> str:
    """A date as an agent writes it back in its answer."""
    m = MONTHS[lang][d.month - 1]
    return {
        "en": f"{m} {d.day}, {d.year}",
        "es": f"{d.day} de {m} de {d.year}",
        "de": f"{d.day}. {m} {d.year}",
        "fr": f"{d.day} {m} {d.year}",
    }[lang]


def spoken_time(h: int, mi: int, lang: str, r: random.Random) -> str:
    if lang == "en":
        twelve = h % 12 or 12
        half = "am" if h < 12 else "pm"
        options = [f"{twelve}:{mi:02d} {half.upper()}", f"{h:02d}:{mi:02d}"]
        if mi == 0:
            options.append(f"{twelve}{half}")
        return r.choice(options)
    if lang == "es":
        return r.choice([f"a las {h:02d}:{mi:02d}", f"a las {h}:{mi:02d} h"])
    if lang == "de":
        return f"um {h} Uhr" if mi == 0 and r.random() < 0.5 else f"um {h:02d}:{mi:02d} Uhr"
    return f"à {h}h{mi:02d}" if mi else f"à {h}h"


def money(value: float, currency: str, lang: str, r: random.Random | None = None) -> str:
    """An amount as a person writes it: $1,250.50 / 1.250,50 € / 1 250,50 €."""
    cents = round(value * 100) % 100
    whole = int(round(value * 100)) // 100
    if lang == "en":
        body = f"{whole:,}" + (f".{cents:02d}" if cents else "")
        if r and r.random() < 0.3:
            return f"{body} {currency}"
        return f"{SYMBOL[currency]}{body}" if currency in SYMBOL else f"{body} {currency}"
    sep = {"es": ".", "de": ".", "fr": "\u202f"}[lang]
    body = f"{whole:,}".replace(",", sep) + (f",{cents:02d}" if cents else "")
    if r and r.random() < 0.3:
        return f"{body} {currency}"
    return f"{body} {SYMBOL.get(currency, currency)}"


def pick(r: random.Random, options: dict[str, list[str]] | list, lang: str | None = None) -> Any:
    return r.choice(options[lang] if lang is not None else options)


# ---------------------------------------------------------------- one-character changes


def _digit_positions(text: str) -> list[int]:
    return [i for i, c in enumerate(text) if c.isdigit()]


def change_digit(text: str, r: random.Random, positions: list[int] | None = None) -> str:
    """One digit of `text` replaced by another (never the same, never a leading zero issue)."""
    spots = positions if positions is not None else _digit_positions(text)
    at = r.choice(spots)
    choices = [d for d in "0123456789" if d != text[at]]
    return text[:at] + r.choice(choices) + text[at + 1 :]


def change_date(iso: str, r: random.Random) -> str:
    """A valid date one character away (day or month digit)."""
    base = dt.date.fromisoformat(iso[:10])
    for _ in range(50):
        candidate = change_digit(iso[:10], r, [5, 6, 8, 9])
        try:
            if dt.date.fromisoformat(candidate) != base:
                return candidate + iso[10:]
        except ValueError:
            continue
    return (base + dt.timedelta(days=1)).isoformat() + iso[10:]


def change_time(text: str, r: random.Random) -> str:
    """A valid time one digit away, in a HH:MM string or the time part of an ISO datetime."""
    start = text.index("T") + 1 if "T" in text else 0
    for _ in range(50):
        candidate = change_digit(text, r, [start + 1, start + 3])
        hh, mm = int(candidate[start : start + 2]), int(candidate[start + 3 : start + 5])
        if hh < 24 and mm < 60 and candidate != text:
            return candidate
    return text[:start] + "23" + text[start + 2 :]


def change_number(value: float | int, r: random.Random) -> float | int:
    text = str(value)
    spots = [i for i, c in enumerate(text) if c.isdigit() and not (i == 0 and len(text) > 1)]
    spots = spots or _digit_positions(text)
    changed = change_digit(text, r, spots)
    return type(value)(float(changed)) if isinstance(value, float) else int(changed)


def change_ip(ip: str, r: random.Random) -> str:
    parts = ip.split(".")
    k = r.randrange(1, 4)
    octet = parts[k]
    for _ in range(20):
        candidate = change_digit(octet, r)
        if int(candidate) < 256 and candidate != octet and not candidate.startswith("0"):
            parts[k] = candidate
            return ".".join(parts)
    parts[k] = str((int(octet) + 1) % 256)
    return ".".join(parts)


def change_id(value: str, r: random.Random) -> str:
    """One character of an identifier changed: a digit for a digit, a letter for a letter."""
    spots = _digit_positions(value)
    if spots:
        return change_digit(value, r, spots)
    letters = [i for i, c in enumerate(value) if c.isalpha()]
    at = r.choice(letters)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    new = r.choice([c for c in alphabet if c != value[at].lower()])
    new = new.upper() if value[at].isupper() else new
    return value[:at] + new + value[at + 1 :]


# ---------------------------------------------------------------- a scenario


@dataclass
class Call:
    name: str
    args: dict


@dataclass
class Step:
    calls: list[Call]
    results: list[Any]  # one per call: a JSON object, list, or text


@dataclass
class Slot:
    """An argument value that came from the user's words, and how to change it."""

    kind: str  # date, time, amount, address, ip, id, enum
    step: int
    call: int
    path: tuple  # keys into the call's args
    changed: Any  # the value one character (or one enum step) away


@dataclass
class Scenario:
    domain: str
    lang: str
    tools: list[dict]  # {"name", "description", "parameters"}
    request: str
    steps: list[Step]
    answer: str  # with {f0}, {f1}… where the facts go
    facts: list[tuple[Any, Any]]  # (as written, contradicting) per placeholder
    addition: str  # a sentence no result supports, in the answer's language
    slots: list[Slot] = field(default_factory=list)
    invent: tuple[int, int, str, Any] | None = None  # (step, call, optional arg, value)
    system: str | None = None


def tool(name: str, description: str, props: dict, required: list[str]) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": props, "required": required},
    }


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}


def enum(*values: str) -> dict:
    return {"type": "string", "enum": list(values)}


def arr(items: dict) -> dict:
    return {"type": "array", "items": items}


def obj(props: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": props, "required": required or []}


def desc(schema: dict, text: str) -> dict:
    return {**schema, "description": text}


DATE = desc(S, "Date, ISO 8601 (YYYY-MM-DD)")
DATETIME = desc(S, "Date and time, ISO 8601")
TIME = desc(S, "Local time, HH:MM (24 h)")


def a_date(r: random.Random) -> dt.date:
    return dt.date(2026, 1, 1) + dt.timedelta(days=r.randrange(0, 700))


CITIES = {
    "en": [
        ("Boston", "US"),
        ("Seattle", "US"),
        ("Austin", "US"),
        ("Chicago", "US"),
        ("London", "GB"),
        ("Manchester", "GB"),
        ("Toronto", "CA"),
        ("Dublin", "IE"),
    ],
    "es": [("Madrid", "ES"), ("Sevilla", "ES"), ("Valencia", "ES"), ("Bilbao", "ES")],
    "de": [("Berlin", "DE"), ("München", "DE"), ("Hamburg", "DE"), ("Köln", "DE")],
    "fr": [("Paris", "FR"), ("Lyon", "FR"), ("Bordeaux", "FR"), ("Lille", "FR")],
}
STREETS = {
    "en": [
        ("{n} Beacon Street", "Boston", "MA", "02108"),
        ("{n} Pike Street", "Seattle", "WA", "98101"),
        ("{n} Congress Avenue", "Austin", "TX", "78701"),
        ("{n} Baker Street", "London", "", "NW1 6XE"),
        ("{n} Queen Street West", "Toronto", "ON", "M5H 2M9"),
    ],
    "es": [
        ("Calle de Alcalá {n}", "Madrid", "", "28014"),
        ("Avenida de la Constitución {n}", "Sevilla", "", "41004"),
        ("Carrer de Colón {n}", "Valencia", "", "46004"),
    ],
    "de": [
        ("Friedrichstraße {n}", "Berlin", "", "10117"),
        ("Leopoldstraße {n}", "München", "", "80802"),
        ("Mönckebergstraße {n}", "Hamburg", "", "20095"),
    ],
    "fr": [
        ("{n} rue de Rivoli", "Paris", "", "75001"),
        ("{n} rue de la République", "Lyon", "", "69002"),
        ("{n} cours de l'Intendance", "Bordeaux", "", "33000"),
    ],
}
CURRENCY = {"en": "USD", "es": "EUR", "de": "EUR", "fr": "EUR"}
PEOPLE = [
    ("Anna", "Meyer"),
    ("Luis", "García"),
    ("Priya", "Raman"),
    ("Tom", "Becker"),
    ("Claire", "Dubois"),
    ("Kenji", "Sato"),
    ("Maria", "Keller"),
    ("David", "Okafor"),
    ("Sofia", "Romano"),
    ("Jonas", "Weber"),
]


def address(r: random.Random, lang: str) -> tuple[str, str, str, str]:
    street, city, region, postal = r.choice(STREETS[lang])
    return street.format(n=r.randrange(2, 480)), city, region, postal


def L(en: str, es: str, de: str, fr: str) -> dict[str, str]:  # noqa: N802
    return {"en": en, "es": es, "de": de, "fr": fr}


def ident(r: random.Random, prefix: str, digits: int) -> str:
    return prefix + "".join(r.choice("0123456789") for _ in range(digits))


def token(r: random.Random, prefix: str, length: int) -> str:
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
    return prefix + "".join(r.choice(alphabet) for _ in range(length))


def email(first: str, last: str, domain: str = "example.com") -> str:
    plain = last.lower().replace("í", "i").replace("é", "e")
    return f"{first.lower()}.{plain}@{domain}"


# ---------------------------------------------------------------- the domains
# Each builds one scenario for a language from the seeded random source: the tools as a public
# API declares them, what the user asks, the calls, the results and the agent's answer.

WEATHER_SKY = {
    "partly_cloudy": L(
        "partly cloudy", "parcialmente nublado", "teilweise bewölkt", "partiellement nuageux"
    ),
    "light_rain": L("light rain", "lluvia ligera", "leichter Regen", "pluie légère"),
    "clear": L("clear", "despejado", "klar", "dégagé"),
    "overcast": L("overcast", "cubierto", "bedeckt", "couvert"),
}


def d_current_weather(r: random.Random, lang: str) -> Scenario:
    city, country = r.choice(CITIES[lang])
    unit = "fahrenheit" if lang == "en" and country == "US" else "celsius"
    unit_word = L(
        "in fahrenheit" if unit == "fahrenheit" else "in celsius",
        "en grados centígrados",
        "in Grad Celsius",
        "en degrés Celsius",
    )[lang]
    temp = r.randrange(40, 90) if unit == "fahrenheit" else r.randrange(-3, 31)
    sky = r.choice(list(WEATHER_SKY))
    humidity = r.randrange(30, 95)
    request = pick(
        r,
        {
            "en": [
                f"What is the temperature in {city} right now {unit_word}?",
                f"hey, how's the weather in {city}? {unit_word} please",
                f"Current conditions for {city}, {country} {unit_word}?",
            ],
            "es": [f"¿Qué tiempo hace ahora en {city}? Dímelo {unit_word}."],
            "de": [f"Wie ist das Wetter gerade in {city}? Bitte {unit_word}."],
            "fr": [f"Quel temps fait-il à {city} en ce moment ? Réponds {unit_word}."],
        },
        lang,
    )
    result = {
        "location": {"name": city, "country": country},
        "current": {
            "temperature": temp,
            "unit": unit,
            "condition": sky,
            "humidity_pct": humidity,
            "isDaytime": True,
        },
        "status": "success",
    }
    deg = "°F" if unit == "fahrenheit" else "°C"
    sky_w = WEATHER_SKY[sky][lang]
    other_sky = WEATHER_SKY[r.choice([s for s in WEATHER_SKY if s != sky])][lang]
    answer = L(
        "It's currently {f0}" + deg + " and {f1} in " + city + ", with humidity at {f2}%.",
        "Ahora mismo hay {f0} " + deg + " en " + city + ", cielo {f1} y una humedad del {f2} %.",
        "In " + city + " sind es gerade {f0} " + deg + ", {f1}, bei {f2} % Luftfeuchtigkeit.",
        "Il fait actuellement {f0} " + deg + " à " + city + ", temps {f1}, humidité {f2} %.",
    )[lang]
    addition = L(
        "Winds are calm at around 5 mph.",
        "El viento sopla a unos 30 km/h.",
        "Für heute Abend ist Gewitter angesagt.",
        "Des orages sont prévus ce soir.",
    )[lang]
    tools = [
        tool(
            "get_current_weather",
            "Get the current weather for a location",
            {
                "location": desc(S, "City name, e.g. San Francisco"),
                "unit": enum("celsius", "fahrenheit"),
            },
            ["location"],
        )
    ]
    other = "celsius" if unit == "fahrenheit" else "fahrenheit"
    return Scenario(
        "weather",
        lang,
        tools,
        request,
        [Step([Call("get_current_weather", {"location": city, "unit": unit})], [result])],
        answer,
        [(temp, temp + r.choice([-4, -2, 3, 5])), (sky_w, other_sky), (humidity, humidity - 11)],
        addition,
        slots=[Slot("enum", 0, 0, ("unit",), other)],
    )


def d_forecast(r: random.Random, lang: str) -> Scenario:
    city, _ = r.choice(CITIES[lang])
    day = a_date(r)
    spoken = spoken_date(day, lang, r)
    high, low = r.randrange(12, 30), r.randrange(0, 11)
    rain = r.randrange(0, 90, 5)
    request = pick(
        r,
        {
            "en": [
                f"Will it rain in {city} on {spoken}?",
                f"Forecast for {city}, {spoken} — do I need an umbrella?",
            ],
            "es": [f"¿Va a llover en {city} el {spoken}?"],
            "de": [f"Regnet es am {spoken} in {city}?"],
            "fr": [f"Est-ce qu'il va pleuvoir à {city} le {spoken} ?"],
        },
        lang,
    )
    result = {
        "city": city,
        "forecast": [
            {
                "date": day.isoformat(),
                "temp_max_c": high,
                "temp_min_c": low,
                "precipitation_probability": rain,
                "summary": "showers" if rain >= 50 else "mostly_dry",
            }
        ],
        "source": "open-meteo",
    }
    answer = L(
        "For {f0} in "
        + city
        + ": a {f1}% chance of rain, with a high of {f2} °C and a low of "
        + str(low)
        + " °C.",
        "Para el {f0} en " + city + ": probabilidad de lluvia del {f1} %, máxima de {f2} °C y "
        "mínima de " + str(low) + " °C.",
        "Am {f0} in " + city + ": Regenwahrscheinlichkeit {f1} %, Höchstwert {f2} °C, "
        "Tiefstwert " + str(low) + " °C.",
        "Le {f0} à "
        + city
        + " : {f1} % de risque de pluie, maximale {f2} °C, minimale "
        + str(low)
        + " °C.",
    )[lang]
    wrong_day = day + dt.timedelta(days=r.choice([-2, 1, 3]))
    return Scenario(
        "weather",
        lang,
        [
            tool(
                "get_forecast",
                "Daily weather forecast for a city",
                {"city": S, "date": DATE, "days": desc(I, "Number of days, 1-7")},
                ["city", "date"],
            )
        ],
        request,
        [Step([Call("get_forecast", {"city": city, "date": day.isoformat()})], [result])],
        answer,
        [
            (written_date(day, lang), written_date(wrong_day, lang)),
            (rain, (rain + 40) % 100),
            (high, high + 6),
        ],
        L(
            "The UV index will be very high, so bring sunscreen.",
            "Se esperan rachas de viento de hasta 60 km/h.",
            "Am Nachmittag wird Hagel erwartet.",
            "Un épisode de grêle est attendu l'après-midi.",
        )[lang],
        slots=[Slot("date", 0, 0, ("date",), change_date(day.isoformat(), r))],
    )


def d_create_event(r: random.Random, lang: str) -> Scenario:
    day = a_date(r)
    h, mi = r.choice([(9, 0), (10, 30), (14, 0), (15, 15), (16, 45), (18, 0), (20, 0)])
    first, last = r.choice(PEOPLE)
    guest = email(first, last, "acme.io")
    title = pick(
        r,
        {
            "en": ["Quarterly review", "1:1 with " + first, "Design sync", "Budget planning"],
            "es": ["Revisión trimestral", "Reunión con " + first],
            "de": ["Quartalsbesprechung", "Abstimmung mit " + first],
            "fr": ["Revue trimestrielle", "Point avec " + first],
        },
        lang,
    )
    minutes = r.choice([30, 45, 60, 90])
    start = dt.datetime.combine(day, dt.time(h, mi))
    end = start + dt.timedelta(minutes=minutes)
    sd, st = spoken_date(day, lang, r), spoken_time(h, mi, lang, r)
    request = pick(
        r,
        {
            "en": [
                f'Schedule "{title}" on {sd} at {st} for {minutes} minutes and invite {guest}.',
                f"Can you put {title} in my calendar for {sd}, {st}? {minutes} min, add {guest}",
            ],
            "es": [f'Crea el evento "{title}" el {sd} {st}, {minutes} minutos, con {guest}.'],
            "de": [f'Trag "{title}" am {sd} {st} ein, {minutes} Minuten, lade {guest} ein.'],
            "fr": [f"Planifie « {title} » le {sd} {st}, {minutes} minutes, invite {guest}."],
        },
        lang,
    )
    args = {
        "summary": title,
        "start": {"dateTime": start.isoformat(), "timeZone": "Europe/Berlin"},
        "end": {"dateTime": end.isoformat(), "timeZone": "Europe/Berlin"},
        "attendees": [{"email": guest}],
    }
    event_id = token(r, "", 26).lower()
    result = {
        "kind": "calendar#event",
        "id": event_id,
        "status": "confirmed",
        "htmlLink": f"https://calendar.google.com/event?eid={event_id[:12]}",
        "summary": title,
        "start": args["start"],
        "end": args["end"],
        "attendees": [{"email": guest, "responseStatus": "needsAction"}],
    }
    hh = f"{h:02d}:{mi:02d}"
    wrong_hh = f"{(h + 1) % 24:02d}:{mi:02d}"
    answer = L(
        'Done! "'
        + title
        + '" is booked for {f0} at {f1} ('
        + str(minutes)
        + " minutes), and "
        + guest
        + " has been invited.",
        'Listo: "'
        + title
        + '" queda programado el {f0} a las {f1} ('
        + str(minutes)
        + " minutos) y he invitado a "
        + guest
        + ".",
        'Erledigt: "'
        + title
        + '" steht am {f0} um {f1} Uhr im Kalender ('
        + str(minutes)
        + " Minuten), "
        + guest
        + " ist eingeladen.",
        "C'est fait : « "
        + title
        + " » est prévu le {f0} à {f1} ("
        + str(minutes)
        + " minutes), "
        + guest
        + " est invité.",
    )[lang]
    return Scenario(
        "calendar",
        lang,
        [
            tool(
                "create_event",
                "Create an event in the user's primary Google Calendar",
                {
                    "summary": S,
                    "start": obj({"dateTime": DATETIME, "timeZone": S}, ["dateTime"]),
                    "end": obj({"dateTime": DATETIME, "timeZone": S}, ["dateTime"]),
                    "attendees": arr(obj({"email": S}, ["email"])),
                    "location": S,
                    "conferenceData": obj({"createRequest": obj({"requestId": S})}),
                },
                ["summary", "start", "end"],
            ),
            tool(
                "list_events",
                "List events between two dates",
                {"timeMin": DATETIME, "timeMax": DATETIME},
                ["timeMin", "timeMax"],
            ),
        ],
        request,
        [Step([Call("create_event", args)], [result])],
        answer,
        [
            (written_date(day, lang), written_date(day + dt.timedelta(days=2), lang)),
            (hh, wrong_hh),
        ],
        L(
            "I also added a Zoom link to the invitation.",
            "También he reservado la sala Orión.",
            "Ich habe außerdem den Raum Orion reserviert.",
            "J'ai aussi réservé la salle Orion.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("start", "dateTime"), change_date(start.isoformat(), r)),
            Slot("time", 0, 0, ("start", "dateTime"), change_time(start.isoformat(), r)),
        ],
        invent=(0, 0, "location", "Conference Room 4B, 500 Howard Street"),
    )


def d_list_events(r: random.Random, lang: str) -> Scenario:
    day = a_date(r)
    sd = spoken_date(day, lang, r)
    events = []
    titles = r.sample(
        ["Standup", "Hiring panel", "Vendor call", "Roadmap review", "Lunch with Sam"], 3
    )
    for k, hour in enumerate(sorted(r.sample([8, 9, 11, 13, 15, 17], 3))):
        events.append(
            {
                "id": token(r, "evt_", 10),
                "summary": titles[k],
                "start": {"dateTime": f"{day.isoformat()}T{hour:02d}:00:00+02:00"},
                "end": {"dateTime": f"{day.isoformat()}T{hour:02d}:30:00+02:00"},
                "is_recurring": k == 0,
            }
        )
    request = pick(
        r,
        {
            "en": [f"What's on my calendar on {sd}?", f"list my meetings for {sd}"],
            "es": [f"¿Qué tengo en la agenda el {sd}?"],
            "de": [f"Was steht am {sd} in meinem Kalender?"],
            "fr": [f"Qu'est-ce que j'ai dans mon agenda le {sd} ?"],
        },
        lang,
    )
    lines = [f"- {int(e['start']['dateTime'][11:13]):02d}:00 {e['summary']}" for e in events]
    lines[0] = "- {f1} " + events[0]["summary"]
    answer = L(
        "You have {f0} events on " + written_date(day, lang) + ":\n",
        "Tienes {f0} eventos el " + written_date(day, lang) + ":\n",
        "Du hast am " + written_date(day, lang) + " {f0} Termine:\n",
        "Vous avez {f0} événements le " + written_date(day, lang) + " :\n",
    )[lang] + "\n".join(lines)
    h0 = events[0]["start"]["dateTime"][11:13]
    return Scenario(
        "calendar",
        lang,
        [
            tool(
                "list_events",
                "List calendar events between two instants",
                {"timeMin": DATETIME, "timeMax": DATETIME, "maxResults": I},
                ["timeMin", "timeMax"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "list_events",
                        {
                            "timeMin": f"{day.isoformat()}T00:00:00+02:00",
                            "timeMax": f"{day.isoformat()}T23:59:59+02:00",
                        },
                    )
                ],
                [{"items": events, "nextPageToken": None, "timeZone": "Europe/Berlin"}],
            )
        ],
        answer,
        [(3, 4), (f"{h0}:00", f"{int(h0) + 1:02d}:00")],
        L(
            "- 19:00 Dinner with the board",
            "- 19:00 Cena con la dirección",
            "- 19:00 Abendessen mit dem Vorstand",
            "- 19:00 Dîner avec la direction",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("timeMin",), change_date(f"{day.isoformat()}T00:00:00+02:00", r))
        ],
    )


STAGES = ["qualification", "proposal", "negotiation", "closed_won"]
STAGE_WORDS = {
    "qualification": L("qualification", "calificación", "Qualifizierung", "qualification"),
    "proposal": L("proposal", "propuesta", "Angebot", "proposition"),
    "negotiation": L("negotiation", "negociación", "Verhandlung", "négociation"),
    "closed_won": L("closed won", "ganada", "gewonnen", "gagnée"),
}


def d_crm_deal(r: random.Random, lang: str) -> Scenario:
    first, last = r.choice(PEOPLE)
    company = r.choice(
        ["Northwind Traders", "Globex GmbH", "Initech", "Acme Iberia", "Umbrella SAS"]
    )
    cur = CURRENCY[lang]
    value = r.choice([4800, 12500, 23990.5, 7250, 99000, 1640.75])
    stage = r.choice(STAGES[:3])
    close = a_date(r)
    contact_id = ident(r, "", 9)
    request = L(
        f"Create a deal for {first} {last} at {company}: {money(value, cur, lang, r)}, stage "
        f"{STAGE_WORDS[stage]['en']}, expected close {spoken_date(close, lang, r)}.",
        f"Crea una oportunidad para {first} {last} de {company}: {money(value, cur, lang, r)}, "
        f"etapa {STAGE_WORDS[stage]['es']}, cierre previsto el {spoken_date(close, lang, r)}.",
        f"Leg einen Deal für {first} {last} von {company} an: {money(value, cur, lang, r)}, "
        f"Phase {STAGE_WORDS[stage]['de']}, Abschluss am {spoken_date(close, lang, r)}.",
        f"Crée une affaire pour {first} {last} chez {company} : {money(value, cur, lang, r)}, "
        f"étape {STAGE_WORDS[stage]['fr']}, clôture prévue le {spoken_date(close, lang, r)}.",
    )[lang]
    search = {
        "total": 1,
        "results": [
            {
                "id": contact_id,
                "properties": {
                    "firstname": first,
                    "lastname": last,
                    "company": company,
                    "email": email(first, last, "corp.example"),
                    "lifecyclestage": "opportunity",
                },
                "archived": False,
            }
        ],
    }
    deal_id = ident(r, "", 10)
    deal_args = {
        "properties": {
            "dealname": f"{company} - {first} {last}",
            "amount": value,
            "deal_currency_code": cur,
            "dealstage": stage,
            "closedate": close.isoformat(),
        },
        "associations": [{"to": {"id": contact_id}, "type": "deal_to_contact"}],
    }
    created = {
        "id": deal_id,
        "properties": {**deal_args["properties"], "pipeline": "default", "hs_is_closed": False},
        "createdAt": "2026-03-04T09:12:44.120Z",
    }
    amount_w = money(value, cur, lang)
    answer = L(
        "I created deal {f0} for "
        + first
        + " "
        + last
        + " ("
        + company
        + "): "
        + amount_w
        + ", stage {f1}, closing {f2}.",
        "He creado la oportunidad {f0} para "
        + first
        + " "
        + last
        + " ("
        + company
        + "): "
        + amount_w
        + ", etapa {f1}, cierre el {f2}.",
        "Deal {f0} für "
        + first
        + " "
        + last
        + " ("
        + company
        + ") ist angelegt: "
        + amount_w
        + ", Phase {f1}, Abschluss am {f2}.",
        "L'affaire {f0} pour "
        + first
        + " "
        + last
        + " ("
        + company
        + ") est créée : "
        + amount_w
        + ", étape {f1}, clôture le {f2}.",
    )[lang]
    other_stage = r.choice([s for s in STAGES if s != stage])
    tools = [
        tool(
            "search_contacts",
            "Search CRM contacts by name, email or company",
            {"query": S, "limit": I},
            ["query"],
        ),
        tool(
            "create_deal",
            "Create a deal in the CRM pipeline and associate it with a contact",
            {
                "properties": obj(
                    {
                        "dealname": S,
                        "amount": N,
                        "deal_currency_code": enum("USD", "EUR", "GBP"),
                        "dealstage": enum(*STAGES),
                        "closedate": DATE,
                        "hubspot_owner_id": S,
                    },
                    ["dealname", "amount", "dealstage"],
                ),
                "associations": arr(obj({"to": obj({"id": S}), "type": S})),
            },
            ["properties"],
        ),
    ]
    return Scenario(
        "crm",
        lang,
        tools,
        request,
        [
            Step([Call("search_contacts", {"query": f"{first} {last}"})], [search]),
            Step([Call("create_deal", deal_args)], [created]),
        ],
        answer,
        [
            (deal_id, change_id(deal_id, r)),
            (STAGE_WORDS[stage][lang], STAGE_WORDS[other_stage][lang]),
            (written_date(close, lang), written_date(close + dt.timedelta(days=7), lang)),
        ],
        L(
            "The deal is assigned to Rachel Green as owner.",
            "La propietaria de la oportunidad es Rachel Green.",
            "Als Verantwortliche ist Rachel Green eingetragen.",
            "La responsable de l'affaire est Rachel Green.",
        )[lang],
        slots=[
            Slot("amount", 1, 0, ("properties", "amount"), change_number(value, r)),
            Slot("date", 1, 0, ("properties", "closedate"), change_date(close.isoformat(), r)),
            Slot("enum", 1, 0, ("properties", "dealstage"), other_stage),
            Slot("id", 1, 0, ("associations", 0, "to", "id"), change_id(contact_id, r)),
        ],
        invent=(1, 0, "hubspot_owner_id", ident(r, "", 8)),
    )


LEAD_STATUS = ["NEW", "OPEN", "IN_PROGRESS", "UNQUALIFIED", "CONNECTED"]
LEAD_WORDS = {
    "OPEN": L("open", "abierto", "offen", "ouvert"),
    "IN_PROGRESS": L("in progress", "en curso", "in Bearbeitung", "en cours"),
    "UNQUALIFIED": L("unqualified", "no cualificado", "nicht qualifiziert", "non qualifié"),
    "CONNECTED": L("connected", "contactado", "kontaktiert", "contacté"),
}


def d_lead_status(r: random.Random, lang: str) -> Scenario:
    lead = ident(r, "00Q5e00000", 6)
    status = r.choice(list(LEAD_WORDS))
    request = pick(
        r,
        {
            "en": [
                f"Mark lead {lead} as {LEAD_WORDS[status]['en']}.",
                f"set lead status for {lead} -> {LEAD_WORDS[status]['en']}",
            ],
            "es": [f"Cambia el estado del lead {lead} a «{LEAD_WORDS[status]['es']}»."],
            "de": [f"Setz den Lead {lead} auf „{LEAD_WORDS[status]['de']}“."],
            "fr": [f"Passe le lead {lead} au statut « {LEAD_WORDS[status]['fr']} »."],
        },
        lang,
    )
    result = {
        "id": lead,
        "success": True,
        "errors": [],
        "record": {
            "Id": lead,
            "Status": status,
            "LastModifiedDate": "2026-02-11T16:20:03.000+0000",
        },
    }
    other = r.choice([s for s in LEAD_WORDS if s != status])
    answer = L(
        "Lead " + lead + " is now marked as {f0}.",
        "El lead " + lead + " ya está como «{f0}».",
        "Lead " + lead + " steht jetzt auf „{f0}“.",
        "Le lead " + lead + " est maintenant « {f0} ».",
    )[lang]
    return Scenario(
        "crm",
        lang,
        [
            tool(
                "update_lead",
                "Update a Salesforce lead's status",
                {"lead_id": S, "status": enum(*LEAD_STATUS), "owner_id": S},
                ["lead_id", "status"],
            ),
            tool("get_lead", "Get a Salesforce lead", {"lead_id": S}, ["lead_id"]),
        ],
        request,
        [Step([Call("update_lead", {"lead_id": lead, "status": status})], [result])],
        answer,
        [(LEAD_WORDS[status][lang], LEAD_WORDS[other][lang])],
        L(
            "An email notification was sent to the lead's owner.",
            "Se ha notificado por correo al propietario.",
            "Der Eigentümer wurde per E-Mail benachrichtigt.",
            "Le propriétaire a été prévenu par e-mail.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("lead_id",), change_id(lead, r)),
            Slot("enum", 0, 0, ("status",), other),
        ],
        invent=(0, 0, "owner_id", ident(r, "0055e00000", 6)),
    )


def d_payment_intent(r: random.Random, lang: str) -> Scenario:
    cur = r.choice(["USD", "EUR", "GBP"]) if lang == "en" else "EUR"
    value = r.choice([19.99, 49, 120, 1250.5, 349.9, 75.25])
    cents = int(round(value * 100))
    customer = token(r, "cus_", 14)
    request = L(
        f"Charge customer {customer} {money(value, cur, lang, r)} for the annual plan.",
        f"Cobra {money(value, cur, lang, r)} al cliente {customer} por el plan anual.",
        f"Belaste den Kunden {customer} mit {money(value, cur, lang, r)} für den Jahrestarif.",
        f"Débite {money(value, cur, lang, r)} au client {customer} pour l'abonnement annuel.",
    )[lang]
    pi = token(r, "pi_", 24)
    result = {
        "id": pi,
        "object": "payment_intent",
        "amount": cents,
        "amount_received": cents,
        "currency": cur.lower(),
        "customer": customer,
        "status": "succeeded",
        "livemode": False,
        "payment_method_types": ["card"],
        "created": 1767950000,
    }
    answer = L(
        "The payment of {f0} for customer " + customer + " went through (status: {f1}). "
        "Payment intent: " + pi + ".",
        "El cobro de {f0} al cliente " + customer + " se ha completado (estado: {f1}). "
        "ID: " + pi + ".",
        "Die Zahlung über {f0} von " + customer + " ist durch (Status: {f1}). ID: " + pi + ".",
        "Le paiement de {f0} du client " + customer + " est passé (statut : {f1}). "
        "Identifiant : " + pi + ".",
    )[lang]
    status_w = L("succeeded", "completado", "erfolgreich", "réussi")[lang]
    status_bad = L("requires payment method", "pendiente", "ausstehend", "en attente")[lang]
    return Scenario(
        "payments",
        lang,
        [
            tool(
                "create_payment_intent",
                "Create and confirm a Stripe PaymentIntent. amount is in the smallest currency "
                "unit (cents).",
                {
                    "amount": desc(I, "Amount in the smallest currency unit, e.g. 1099 for $10.99"),
                    "currency": enum("usd", "eur", "gbp"),
                    "customer": S,
                    "description": S,
                    "receipt_email": S,
                    "confirm": B,
                },
                ["amount", "currency"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "create_payment_intent",
                        {
                            "amount": cents,
                            "currency": cur.lower(),
                            "customer": customer,
                            "description": "Annual plan",
                            "confirm": True,
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [(money(value, cur, lang), money(value + 10, cur, lang)), (status_w, status_bad)],
        L(
            "A receipt has been emailed to the customer.",
            "Se ha enviado el recibo por correo al cliente.",
            "Der Beleg wurde dem Kunden per E-Mail geschickt.",
            "Le reçu a été envoyé par e-mail au client.",
        )[lang],
        slots=[
            Slot("amount", 0, 0, ("amount",), change_number(cents, r)),
            Slot("id", 0, 0, ("customer",), change_id(customer, r)),
            Slot(
                "enum",
                0,
                0,
                ("currency",),
                r.choice([c for c in ("usd", "eur", "gbp") if c != cur.lower()]),
            ),
        ],
        invent=(0, 0, "receipt_email", "billing@northwind.example"),
    )


REFUND_REASONS = ["duplicate", "fraudulent", "requested_by_customer"]
REASON_WORDS = {
    "duplicate": L(
        "it was a duplicate charge",
        "fue un cargo duplicado",
        "doppelt abgebucht",
        "débit en double",
    ),
    "fraudulent": L("it's fraud", "es un fraude", "Betrug", "c'est une fraude"),
    "requested_by_customer": L(
        "the customer asked for it",
        "lo pidió el cliente",
        "auf Kundenwunsch",
        "à la demande du client",
    ),
}


def d_refund(r: random.Random, lang: str) -> Scenario:
    charge = token(r, "ch_", 24)
    cur = CURRENCY[lang]
    value = r.choice([15, 42.5, 89.99, 230, 12.3])
    reason = r.choice(REFUND_REASONS)
    request = L(
        f"Refund {money(value, cur, lang, r)} of charge {charge}, {REASON_WORDS[reason]['en']}.",
        f"Reembolsa {money(value, cur, lang, r)} del cargo {charge}; {REASON_WORDS[reason]['es']}.",
        f"Erstatte {money(value, cur, lang, r)} der Zahlung {charge} zurück ({REASON_WORDS[reason]['de']}).",
        f"Rembourse {money(value, cur, lang, r)} sur le paiement {charge} ({REASON_WORDS[reason]['fr']}).",
    )[lang]
    cents = int(round(value * 100))
    refund_id = token(r, "re_", 24)
    result = {
        "id": refund_id,
        "object": "refund",
        "amount": cents,
        "charge": charge,
        "currency": cur.lower(),
        "reason": reason,
        "status": "pending",
        "balance_transaction": None,
    }
    answer = L(
        "Refund " + refund_id + " for {f0} on charge " + charge + " is {f1}.",
        "El reembolso " + refund_id + " de {f0} del cargo " + charge + " está {f1}.",
        "Die Erstattung " + refund_id + " über {f0} zu " + charge + " ist {f1}.",
        "Le remboursement " + refund_id + " de {f0} sur " + charge + " est {f1}.",
    )[lang]
    pending = L("pending", "pendiente", "ausstehend", "en attente")[lang]
    done = L("complete", "completado", "abgeschlossen", "terminé")[lang]
    return Scenario(
        "payments",
        lang,
        [
            tool(
                "create_refund",
                "Refund a Stripe charge, fully or partly (amount in cents)",
                {
                    "charge": S,
                    "amount": desc(I, "Amount to refund in cents"),
                    "reason": enum(*REFUND_REASONS),
                    "metadata": {"type": "object"},
                },
                ["charge"],
            )
        ],
        request,
        [
            Step(
                [Call("create_refund", {"charge": charge, "amount": cents, "reason": reason})],
                [result],
            )
        ],
        answer,
        [(money(value, cur, lang), money(value * 2, cur, lang)), (pending, done)],
        L(
            "The customer's card was also unblocked.",
            "Además, se ha desbloqueado la tarjeta del cliente.",
            "Die Karte des Kunden wurde außerdem entsperrt.",
            "La carte du client a aussi été débloquée.",
        )[lang],
        slots=[
            Slot("amount", 0, 0, ("amount",), change_number(cents, r)),
            Slot("id", 0, 0, ("charge",), change_id(charge, r)),
            Slot("enum", 0, 0, ("reason",), r.choice([x for x in REFUND_REASONS if x != reason])),
        ],
        invent=(0, 0, "metadata", {"ticket": ident(r, "ZD-", 6)}),
    )


def d_invoice(r: random.Random, lang: str) -> Scenario:
    inv = ident(r, "INV-", 4)
    cur = CURRENCY[lang]
    total = r.choice([1250.0, 318.4, 2999.99, 86.5, 12040.0])
    paid = r.random() < 0.6
    due = a_date(r)
    request = pick(
        r,
        {
            "en": [f"Has invoice {inv} been paid?", f"status of {inv}?", f"Is {inv} still open?"],
            "es": [f"¿Está pagada la factura {inv}?"],
            "de": [f"Ist die Rechnung {inv} bezahlt?"],
            "fr": [f"La facture {inv} est-elle payée ?"],
        },
        lang,
    )
    result = {
        "invoice_id": inv,
        "status": "paid" if paid else "open",
        "total": {"value": total, "currency": cur},
        "due_date": due.isoformat(),
        "customer": {"name": "Globex Corporation", "vatId": "DE811234567"},
        "lines": [{"description": "Consulting, March", "qty": 1, "unit_price": total}],
    }
    status_w = {
        True: L("paid", "pagada", "bezahlt", "payée"),
        False: L("still open", "pendiente", "noch offen", "toujours ouverte"),
    }
    answer = L(
        "Invoice " + inv + " is **{f0}**. Total: {f1}, due {f2}.",
        "La factura " + inv + " está **{f0}**. Total: {f1}, vencimiento {f2}.",
        "Rechnung " + inv + " ist **{f0}**. Summe: {f1}, fällig am {f2}.",
        "La facture " + inv + " est **{f0}**. Total : {f1}, échéance le {f2}.",
    )[lang]
    return Scenario(
        "payments",
        lang,
        [tool("get_invoice", "Fetch an invoice by its number", {"invoice_id": S}, ["invoice_id"])],
        request,
        [Step([Call("get_invoice", {"invoice_id": inv})], [result])],
        answer,
        [
            (status_w[paid][lang], status_w[not paid][lang]),
            (money(total, cur, lang), money(total + 100, cur, lang)),
            (written_date(due, lang), written_date(due + dt.timedelta(days=30), lang)),
        ],
        L(
            "A late fee of 2% will apply after the due date.",
            "Se aplicará un recargo del 2 % tras el vencimiento.",
            "Nach Fälligkeit fällt eine Mahngebühr von 2 % an.",
            "Une pénalité de 2 % s'applique après l'échéance.",
        )[lang],
        slots=[Slot("id", 0, 0, ("invoice_id",), change_id(inv, r))],
    )


def a_private_ip(r: random.Random) -> str:
    return r.choice(
        [
            f"10.{r.randrange(0, 40)}.{r.randrange(1, 250)}.{r.randrange(10, 250)}",
            f"192.168.{r.randrange(0, 30)}.{r.randrange(10, 250)}",
            f"172.{r.randrange(16, 31)}.{r.randrange(1, 250)}.{r.randrange(10, 250)}",
        ]
    )


def a_public_ip(r: random.Random) -> str:
    return f"{r.choice([34, 52, 81, 85, 145, 185, 203])}.{r.randrange(10, 250)}.{r.randrange(1, 250)}.{r.randrange(10, 250)}"


def d_firewall(r: random.Random, lang: str) -> Scenario:
    ip = a_public_ip(r)
    port = r.choice([22, 443, 5432, 6379, 8080, 3306])
    proto = "tcp"
    action = r.choice(["allow", "deny"])
    act = {
        "allow": L("Allow", "Permite", "Erlaube", "Autorise"),
        "deny": L("Block", "Bloquea", "Blockiere", "Bloque"),
    }[action][lang]
    request = L(
        f"{act} {proto.upper()} traffic from {ip} to port {port} in the prod security group sg-0a1b2c3d.",
        f"{act} el tráfico {proto.upper()} desde {ip} al puerto {port} en el grupo sg-0a1b2c3d.",
        f"{act} {proto.upper()}-Verkehr von {ip} auf Port {port} in der Gruppe sg-0a1b2c3d.",
        f"{act} le trafic {proto.upper()} de {ip} vers le port {port} dans le groupe sg-0a1b2c3d.",
    )[lang]
    rule_id = token(r, "sgr-", 17).lower()
    args = {
        "group_id": "sg-0a1b2c3d",
        "direction": "ingress",
        "action": action,
        "protocol": proto,
        "port_range": {"from": port, "to": port},
        "cidr": f"{ip}/32",
    }
    result = {"SecurityGroupRuleId": rule_id, "GroupId": "sg-0a1b2c3d", "IsEgress": False,
              "IpProtocol": proto, "FromPort": port, "ToPort": port, "CidrIpv4": f"{ip}/32",
              "Return": True}  # fmt: skip
    answer = L(
        "Rule " + rule_id + " added to sg-0a1b2c3d: " + action + " TCP from {f0}/32 on port {f1}.",
        "Regla " + rule_id + " añadida a sg-0a1b2c3d: TCP desde {f0}/32 al puerto {f1}.",
        "Regel " + rule_id + " in sg-0a1b2c3d angelegt: TCP von {f0}/32 auf Port {f1}.",
        "Règle " + rule_id + " ajoutée à sg-0a1b2c3d : TCP depuis {f0}/32 sur le port {f1}.",
    )[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "add_security_group_rule",
                "Add an inbound or outbound rule to a VPC security group",
                {
                    "group_id": S,
                    "direction": enum("ingress", "egress"),
                    "action": enum("allow", "deny"),
                    "protocol": enum("tcp", "udp", "icmp", "-1"),
                    "port_range": obj({"from": I, "to": I}, ["from", "to"]),
                    "cidr": desc(S, "IPv4 CIDR, e.g. 203.0.113.7/32"),
                    "description": S,
                },
                ["group_id", "direction", "protocol", "cidr"],
            )
        ],
        request,
        [Step([Call("add_security_group_rule", args)], [result])],
        answer,
        [(ip, change_ip(ip, r)), (port, port + 1)],
        L(
            "The change also propagated to the staging group.",
            "El cambio también se ha aplicado a staging.",
            "Die Änderung gilt auch für Staging.",
            "La modification s'applique aussi à la préproduction.",
        )[lang],
        slots=[
            Slot("ip", 0, 0, ("cidr",), change_ip(ip, r) + "/32"),
            Slot("enum", 0, 0, ("action",), "deny" if action == "allow" else "allow"),
            Slot("id", 0, 0, ("group_id",), change_id("sg-0a1b2c3d", r)),
        ],
    )


def d_dns(r: random.Random, lang: str) -> Scenario:
    ip = a_public_ip(r)
    zone = r.choice(["example.com", "acme.io", "shop.example.org"])
    sub = r.choice(["api", "status", "grafana", "vpn", "staging"])
    ttl = r.choice([300, 3600, 600])
    request = L(
        f"Point {sub}.{zone} to {ip} (A record, TTL {ttl}).",
        f"Crea un registro A para {sub}.{zone} que apunte a {ip}, TTL {ttl}.",
        f"Leg einen A-Record {sub}.{zone} → {ip} an, TTL {ttl}.",
        f"Ajoute un enregistrement A {sub}.{zone} vers {ip}, TTL {ttl}.",
    )[lang]
    rec_id = token(r, "", 32).lower()
    result = {
        "success": True,
        "errors": [],
        "result": {"id": rec_id, "type": "A", "name": f"{sub}.{zone}", "content": ip,
                   "ttl": ttl, "proxied": False, "zone_name": zone},
    }  # fmt: skip
    answer = L(
        "Created the A record {f0}.{z} → {f1} with a TTL of {f2} seconds (not proxied).",
        "Registro A creado: {f0}.{z} → {f1}, TTL de {f2} segundos.",
        "A-Record angelegt: {f0}.{z} → {f1}, TTL {f2} Sekunden.",
        "Enregistrement A créé : {f0}.{z} → {f1}, TTL de {f2} secondes.",
    )[lang].replace("{z}", zone)
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "create_dns_record",
                "Create a DNS record in a Cloudflare zone",
                {
                    "zone": S,
                    "type": enum("A", "AAAA", "CNAME", "TXT", "MX"),
                    "name": S,
                    "content": S,
                    "ttl": I,
                    "proxied": B,
                    "comment": S,
                },
                ["zone", "type", "name", "content"],
            ),
            tool("list_dns_records", "List a zone's DNS records", {"zone": S}, ["zone"]),
        ],
        request,
        [
            Step(
                [
                    Call(
                        "create_dns_record",
                        {"zone": zone, "type": "A", "name": sub, "content": ip, "ttl": ttl},
                    )
                ],
                [result],
            )
        ],
        answer,
        [(sub, sub + "2"), (ip, change_ip(ip, r)), (ttl, ttl * 2)],
        L(
            "DNS propagation usually completes within 2 minutes on Cloudflare.",
            "La propagación tarda menos de 2 minutos.",
            "Die Propagierung dauert unter 2 Minuten.",
            "La propagation prend moins de 2 minutes.",
        )[lang],
        slots=[
            Slot("ip", 0, 0, ("content",), change_ip(ip, r)),
            Slot("enum", 0, 0, ("type",), "AAAA"),
        ],
        invent=(0, 0, "comment", "ticket OPS-4471"),
    )


def d_restart(r: random.Random, lang: str) -> Scenario:
    ip = a_private_ip(r)
    service = r.choice(["nginx", "postgresql", "redis-server", "kafka", "payments-api"])
    env = r.choice(["production", "staging"])
    env_w = {
        "production": L("prod", "producción", "Produktion", "production"),
        "staging": L("staging", "staging", "Staging", "préproduction"),
    }[env][lang]
    request = L(
        f"Restart {service} on {ip} ({env_w}).",
        f"Reinicia {service} en el host {ip} ({env_w}).",
        f"Starte {service} auf {ip} neu ({env_w}).",
        f"Redémarre {service} sur {ip} ({env_w}).",
    )[lang]
    pid = r.randrange(1000, 60000)
    result = {"host": ip, "unit": f"{service}.service", "ActiveState": "active",
              "SubState": "running", "MainPID": pid, "restarted_at": "2026-04-02T03:14:07Z",
              "environment": env}  # fmt: skip
    answer = L(
        service + " on {f0} restarted and is {f1} again (PID {f2}).",
        service + " en {f0} se ha reiniciado y está {f1} (PID {f2}).",
        service + " auf {f0} wurde neu gestartet und ist {f1} (PID {f2}).",
        service + " sur {f0} a redémarré et est {f1} (PID {f2}).",
    )[lang]
    running = L("running", "en ejecución", "aktiv", "actif")[lang]
    failed = L("failed", "con error", "fehlgeschlagen", "en échec")[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "restart_service",
                "Restart a systemd service on a host through the ops agent",
                {
                    "host": desc(S, "Host IPv4 address"),
                    "service": S,
                    "environment": enum("production", "staging", "dev"),
                    "drain_seconds": I,
                },
                ["host", "service", "environment"],
            ),
            tool(
                "get_service_status",
                "Status of a systemd service",
                {"host": S, "service": S},
                ["host", "service"],
            ),
        ],
        request,
        [
            Step(
                [Call("restart_service", {"host": ip, "service": service, "environment": env})],
                [result],
            )
        ],
        answer,
        [(ip, change_ip(ip, r)), (running, failed), (pid, pid + 17)],
        L(
            "Memory usage dropped by 40% after the restart.",
            "El uso de memoria bajó un 40 % tras el reinicio.",
            "Der Speicherverbrauch sank danach um 40 %.",
            "La mémoire utilisée a baissé de 40 % après le redémarrage.",
        )[lang],
        slots=[
            Slot("ip", 0, 0, ("host",), change_ip(ip, r)),
            Slot(
                "enum", 0, 0, ("environment",), "staging" if env == "production" else "production"
            ),
        ],
    )


def d_incident(r: random.Random, lang: str) -> Scenario:
    inc = ident(r, "INC00", 5)
    prio = r.choice(["1 - Critical", "2 - High", "3 - Moderate"])
    state = r.choice(["In Progress", "On Hold", "Resolved"])
    group = r.choice(["Network Ops", "DBA Team", "Service Desk"])
    request = pick(
        r,
        {
            "en": [f"What's the status of incident {inc}?", f"who's handling {inc}?"],
            "es": [f"¿En qué estado está la incidencia {inc}?"],
            "de": [f"Wie ist der Stand bei Incident {inc}?"],
            "fr": [f"Où en est l'incident {inc} ?"],
        },
        lang,
    )
    opened = a_date(r)
    result = {"result": {"number": inc, "state": state, "priority": prio,
                         "assignment_group": {"display_value": group},
                         "short_description": "VPN gateway dropping sessions",
                         "opened_at": f"{opened.isoformat()} 07:42:10",
                         "sys_id": token(r, "", 32).lower()}}  # fmt: skip
    answer = L(
        "Incident " + inc + " (VPN gateway dropping sessions) is **{f0}**, priority {f1}, "
        "assigned to {f2}. It was opened on " + written_date(opened, "en") + ".",
        "La incidencia " + inc + " está «{f0}», prioridad {f1}, asignada a {f2}.",
        "Incident " + inc + " ist „{f0}“, Priorität {f1}, zugewiesen an {f2}.",
        "L'incident " + inc + " est « {f0} », priorité {f1}, assigné à {f2}.",
    )[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "get_incident",
                "Get a ServiceNow incident by number",
                {"number": desc(S, "Incident number, e.g. INC0010023"), "fields": arr(S)},
                ["number"],
            )
        ],
        request,
        [Step([Call("get_incident", {"number": inc})], [result])],
        answer,
        [
            (state, r.choice([s for s in ("New", "Closed", "Canceled") if s != state])),
            (prio, r.choice([p for p in ("1 - Critical", "4 - Low") if p != prio])),
            (group, "Desktop Support"),
        ],
        L(
            "A fix is expected to be deployed tonight.",
            "Se espera una solución esta noche.",
            "Ein Fix soll heute Nacht ausgerollt werden.",
            "Un correctif doit être déployé ce soir.",
        )[lang],
        slots=[Slot("id", 0, 0, ("number",), change_id(inc, r))],
    )


def d_scale(r: random.Random, lang: str) -> Scenario:
    dep = r.choice(["checkout-api", "search-worker", "web-frontend", "image-resizer"])
    ns = r.choice(["prod", "shop", "default"])
    replicas = r.choice([2, 3, 4, 6, 8, 12])
    request = L(
        f"Scale deployment {dep} in namespace {ns} to {replicas} replicas.",
        f"Escala el deployment {dep} del namespace {ns} a {replicas} réplicas.",
        f"Skaliere das Deployment {dep} im Namespace {ns} auf {replicas} Replikas.",
        f"Passe le déploiement {dep} (namespace {ns}) à {replicas} réplicas.",
    )[lang]
    result = {"kind": "Scale", "apiVersion": "autoscaling/v1",
              "metadata": {"name": dep, "namespace": ns, "resourceVersion": str(r.randrange(10**6, 10**7))},
              "spec": {"replicas": replicas}, "status": {"replicas": replicas - 1, "selector": f"app={dep}"}}  # fmt: skip
    answer = L(
        "`{f0}` in `" + ns + "` is scaled to {f1} replicas; {f2} are up so far.",
        "`{f0}` en `" + ns + "` escalado a {f1} réplicas; {f2} ya están activas.",
        "`{f0}` in `" + ns + "` läuft jetzt mit {f1} Replikas; {f2} sind bereits oben.",
        "`{f0}` dans `" + ns + "` passe à {f1} réplicas ; {f2} sont déjà prêtes.",
    )[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "scale_deployment",
                "Set the replica count of a Kubernetes deployment",
                {"name": S, "namespace": S, "replicas": desc(I, "Desired replicas, 0-50")},
                ["name", "namespace", "replicas"],
            )
        ],
        request,
        [
            Step(
                [Call("scale_deployment", {"name": dep, "namespace": ns, "replicas": replicas})],
                [result],
            )
        ],
        answer,
        [(dep, dep + "-v2"), (replicas, replicas + 2), (replicas - 1, replicas + 3)],
        L(
            "The HPA minimum was raised to match.",
            "También he subido el mínimo del HPA.",
            "Das HPA-Minimum wurde angepasst.",
            "Le minimum du HPA a été relevé.",
        )[lang],
        slots=[Slot("amount", 0, 0, ("replicas",), change_number(replicas, r))]
        if replicas >= 10
        else [],
    )


def d_geoip(r: random.Random, lang: str) -> Scenario:
    ip = a_public_ip(r)
    city, country = r.choice([("Frankfurt am Main", "DE"), ("Ashburn", "US"), ("Dublin", "IE"),
                              ("Singapore", "SG"), ("São Paulo", "BR")])  # fmt: skip
    asn = r.randrange(1000, 65000)
    request = pick(
        r,
        {
            "en": [f"Where is {ip} located?", f"geoip {ip} pls — which ASN?"],
            "es": [f"¿De dónde es la IP {ip}?"],
            "de": [f"Woher kommt die IP {ip}?"],
            "fr": [f"D'où vient l'adresse IP {ip} ?"],
        },
        lang,
    )
    result = {"ip": ip, "city": city, "country_code": country, "asn": f"AS{asn}",
              "org": "Example Hosting Ltd", "is_proxy": False,
              "location": {"latitude": round(r.uniform(-30, 55), 4), "longitude": round(r.uniform(-80, 120), 4)}}  # fmt: skip
    answer = L(
        "{f0} is in {f1} ({f2}), announced by AS" + str(asn) + " (Example Hosting Ltd). "
        "It is not flagged as a proxy.",
        "{f0} está en {f1} ({f2}), AS" + str(asn) + " (Example Hosting Ltd).",
        "{f0} liegt in {f1} ({f2}), AS" + str(asn) + " (Example Hosting Ltd).",
        "{f0} se trouve à {f1} ({f2}), AS" + str(asn) + " (Example Hosting Ltd).",
    )[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "geoip_lookup",
                "Geolocate an IP address",
                {"ip": S, "lang": enum("en", "es", "de", "fr")},
                ["ip"],
            )
        ],
        request,
        [Step([Call("geoip_lookup", {"ip": ip})], [result])],
        answer,
        [(ip, change_ip(ip, r)), (city, "Amsterdam"), (country, "NL")],
        L(
            "The address belongs to a residential ISP.",
            "La dirección pertenece a un proveedor doméstico.",
            "Die Adresse gehört einem Privatkunden-Provider.",
            "L'adresse appartient à un fournisseur résidentiel.",
        )[lang],
        slots=[Slot("ip", 0, 0, ("ip",), change_ip(ip, r))],
    )


def d_geocode(r: random.Random, lang: str) -> Scenario:
    street, city, region, postal = address(r, lang)
    spoken = (
        f"{street}, {postal} {city}"
        if lang != "en"
        else ", ".join(x for x in (street, city, region) if x)
    )
    request = pick(
        r,
        {
            "en": [f"Get the coordinates of {spoken}.", f"lat/long for {spoken}?"],
            "es": [f"¿Cuáles son las coordenadas de {spoken}?"],
            "de": [f"Gib mir die Koordinaten von {spoken}."],
            "fr": [f"Donne-moi les coordonnées de {spoken}."],
        },
        lang,
    )
    lat, lng = round(r.uniform(35, 55), 6), round(r.uniform(-120, 15), 6)
    result = {"results": [{"formatted_address": f"{street}, {postal} {city}",
                           "geometry": {"location": {"lat": lat, "lng": lng},
                                        "location_type": "ROOFTOP"},
                           "place_id": token(r, "ChIJ", 23)}], "status": "OK"}  # fmt: skip
    answer = L(
        "{f0} is at latitude {f1}, longitude {f2} (rooftop accuracy).",
        "{f0} está en la latitud {f1}, longitud {f2}.",
        "{f0} liegt bei Breite {f1}, Länge {f2}.",
        "{f0} se trouve à la latitude {f1}, longitude {f2}.",
    )[lang]
    wrong_street = change_id(street, r)
    return Scenario(
        "maps",
        lang,
        [
            tool(
                "geocode",
                "Geocode an address (Google Maps Geocoding API)",
                {"address": S, "region": S, "language": S},
                ["address"],
            )
        ],
        request,
        [Step([Call("geocode", {"address": spoken})], [result])],
        answer,
        [(street, wrong_street), (lat, round(lat + 1.5, 6)), (lng, round(lng - 2.25, 6))],
        L(
            "It is a 5-minute walk from the nearest subway station.",
            "Está a 5 minutos a pie del metro.",
            "Die nächste U-Bahn ist 5 Minuten zu Fuß entfernt.",
            "Le métro le plus proche est à 5 minutes à pied.",
        )[lang],
        slots=[Slot("address", 0, 0, ("address",), spoken.replace(street, wrong_street))],
    )


LANDMARKS = {
    "en": ["Union Station", "City Hall", "the Public Library", "Memorial Hospital"],
    "es": ["la Estación Central", "el Ayuntamiento", "el Hospital General"],
    "de": ["Hauptbahnhof", "Rathaus", "Universitätsklinikum"],
    "fr": ["la Gare Centrale", "l'Hôtel de Ville", "l'Hôpital Nord"],
}
MODES = {
    "driving": L("by car", "en coche", "mit dem Auto", "en voiture"),
    "transit": L(
        "by public transport",
        "en transporte público",
        "mit den Öffentlichen",
        "en transports en commun",
    ),
    "bicycling": L("by bike", "en bici", "mit dem Fahrrad", "à vélo"),
    "walking": L("on foot", "a pie", "zu Fuß", "à pied"),
}


def d_directions(r: random.Random, lang: str) -> Scenario:
    o_street, city, _, o_postal = address(r, lang)
    d_street = r.choice(LANDMARKS[lang])
    mode = r.choice(list(MODES))
    day = a_date(r)
    h, mi = r.choice([(7, 30), (8, 0), (17, 15), (9, 45)])
    st = spoken_time(h, mi, lang, r)
    sd = spoken_date(day, lang, r)
    request = L(
        f"How long from {o_street} to {d_street} in {city} {MODES[mode]['en']} if I leave on {sd} at {st}?",
        f"¿Cuánto se tarda de {o_street} a {d_street} ({city}) {MODES[mode]['es']} saliendo el {sd} {st}?",
        f"Wie lange brauche ich von {o_street} zur {d_street} in {city} {MODES[mode]['de']}, Abfahrt {sd} {st}?",
        f"Combien de temps de {o_street} à {d_street} ({city}) {MODES[mode]['fr']}, départ le {sd} {st} ?",
    )[lang]
    minutes = r.randrange(8, 55)
    km = round(r.uniform(1.2, 14.0), 1)
    depart = f"{day.isoformat()}T{h:02d}:{mi:02d}:00"
    args = {
        "origin": f"{o_street}, {city}",
        "destination": f"{d_street}, {city}",
        "mode": mode,
        "departure_time": depart,
    }
    result = {"routes": [{"summary": "via the ring road", "legs": [{
        "distance": {"text": f"{km} km", "value": int(km * 1000)},
        "duration": {"text": f"{minutes} mins", "value": minutes * 60},
        "start_address": f"{o_street}, {o_postal} {city}", "end_address": f"{d_street}, {city}"}]}],
        "status": "OK"}  # fmt: skip
    answer = L(
        "About {f0} minutes ({f1} km) "
        + MODES[mode]["en"]
        + ", leaving at "
        + f"{h:02d}:{mi:02d}"
        + ".",
        "Unos {f0} minutos ({f1} km) " + MODES[mode]["es"] + ".",
        "Etwa {f0} Minuten ({f1} km) " + MODES[mode]["de"] + ".",
        "Environ {f0} minutes ({f1} km) " + MODES[mode]["fr"] + ".",
    )[lang]
    other_mode = r.choice([m for m in MODES if m != mode])
    return Scenario(
        "maps",
        lang,
        [
            tool(
                "get_directions",
                "Route between two places (Google Maps Directions API)",
                {
                    "origin": S,
                    "destination": S,
                    "mode": enum(*MODES),
                    "departure_time": DATETIME,
                    "avoid": arr(enum("tolls", "highways", "ferries")),
                },  # fmt: skip
                ["origin", "destination"],
            )
        ],
        request,
        [Step([Call("get_directions", args)], [result])],
        answer,
        [(minutes, minutes + 12), (km, round(km + 3.1, 1))],
        L(
            "Traffic is light at that hour.",
            "A esa hora apenas hay tráfico.",
            "Um diese Zeit ist wenig Verkehr.",
            "La circulation est fluide à cette heure-là.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("origin",), f"{change_id(o_street, r)}, {city}"),
            Slot("enum", 0, 0, ("mode",), other_mode),
            Slot("time", 0, 0, ("departure_time",), change_time(depart, r)),
            Slot("date", 0, 0, ("departure_time",), change_date(depart, r)),
        ],
    )


PLACE_TYPES = {
    "pharmacy": L("pharmacy", "farmacia", "Apotheke", "pharmacie"),
    "cafe": L("café", "cafetería", "Café", "café"),
    "ev_charging_station": L("EV charger", "cargador eléctrico", "Ladesäule", "borne de recharge"),
}


def d_places(r: random.Random, lang: str) -> Scenario:
    street, city, _, _ = address(r, lang)
    kind = r.choice(list(PLACE_TYPES))
    radius = r.choice([500, 1000, 1500])
    request = L(
        f"Find a {PLACE_TYPES[kind]['en']} open now within {radius} m of {street}, {city}.",
        f"Busca una {PLACE_TYPES[kind]['es']} abierta a menos de {radius} m de {street}, {city}.",
        f"Such eine geöffnete {PLACE_TYPES[kind]['de']} im Umkreis von {radius} m um {street}, {city}.",
        f"Trouve une {PLACE_TYPES[kind]['fr']} ouverte à moins de {radius} m de {street}, {city}.",
    )[lang]
    names = ["Central", "Corner", "Park", "Station", "Riverside"]
    places = [{"name": f"{r.choice(names)} {PLACE_TYPES[kind]['en'].title()}",
               "rating": round(r.uniform(3.6, 4.9), 1), "user_ratings_total": r.randrange(12, 900),
               "opening_hours": {"open_now": True}, "vicinity": address(r, lang)[0],
               "distance_m": r.randrange(80, radius)} for _ in range(2)]  # fmt: skip
    places.sort(key=lambda p: p["distance_m"])
    p0 = places[0]
    answer = L(
        "Closest open option: **{f0}** at " + p0["vicinity"] + ", {f1} m away, rated {f2}. "
        "Another one is " + places[1]["name"] + " (" + str(places[1]["distance_m"]) + " m).",
        "La más cercana abierta: **{f0}** en " + p0["vicinity"] + ", a {f1} m, valoración {f2}.",
        "Am nächsten und geöffnet: **{f0}**, "
        + p0["vicinity"]
        + ", {f1} m entfernt, Bewertung {f2}.",
        "La plus proche ouverte : **{f0}**, " + p0["vicinity"] + ", à {f1} m, note {f2}.",
    )[lang]
    return Scenario(
        "maps",
        lang,
        [
            tool(
                "places_nearby",
                "Search for places near a location (Google Places API)",
                {
                    "location": desc(S, "An address or lat,lng"),
                    "radius": I,
                    "type": enum(*PLACE_TYPES),
                    "open_now": B,
                    "keyword": S,
                },  # fmt: skip
                ["location", "type"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "places_nearby",
                        {
                            "location": f"{street}, {city}",
                            "radius": radius,
                            "type": kind,
                            "open_now": True,
                        },
                    )
                ],
                [{"results": places, "status": "OK"}],
            )
        ],  # fmt: skip
        answer,
        [
            (p0["name"], "Market " + p0["name"].split()[-1]),
            (p0["distance_m"], p0["distance_m"] + 300),
            (p0["rating"], round(p0["rating"] - 1.1, 1)),
        ],  # fmt: skip
        L(
            "It has free parking behind the building.",
            "Tiene aparcamiento gratuito detrás.",
            "Hinter dem Gebäude gibt es kostenlose Parkplätze.",
            "Un parking gratuit se trouve derrière.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("location",), f"{change_id(street, r)}, {city}"),
            Slot("enum", 0, 0, ("type",), r.choice([k for k in PLACE_TYPES if k != kind])),
        ],
    )


def d_web_search(r: random.Random, lang: str) -> Scenario:
    topic = r.choice(
        [
            (
                "Python 3.13 release date",
                "Python 3.13.0 was released on October 7, 2024.",
                "python.org",
                "October 7, 2024",
                "October 2, 2024",
            ),
            (
                "Rust 1.80 LazyLock",
                "Rust 1.80.0 stabilized LazyCell and LazyLock on July 25, 2024.",
                "blog.rust-lang.org",
                "July 25, 2024",
                "June 13, 2024",
            ),
            (
                "Node.js 22 LTS",
                "Node.js 22 entered long-term support on October 29, 2024.",
                "nodejs.org",
                "October 29, 2024",
                "October 15, 2024",
            ),
            (
                "PostgreSQL 17 release",
                "PostgreSQL 17 was released on September 26, 2024.",
                "postgresql.org",
                "September 26, 2024",
                "September 12, 2024",
            ),
        ]
    )
    query, snippet, site, when, wrong = topic
    request = L(
        f"Search the web: {query}?",
        f"Busca en internet: {query}",
        f"Such im Netz nach: {query}",
        f"Cherche sur le web : {query}",
    )[lang]
    result = {"query": query, "results": [
        {"title": f"{query} - {site}", "url": f"https://{site}/news", "snippet": snippet,
         "published": "2024-11-01"},
        {"title": "Community discussion", "url": "https://news.ycombinator.com/item?id=41234567",
         "snippet": "Thread with 312 comments.", "published": "2024-11-02"}]}  # fmt: skip
    answer = L(
        "According to " + site + ", it happened on {f0}. " + snippet.split(" on ")[0] + ".",
        "Según " + site + ", fue el {f0} (" + snippet + ")",
        "Laut " + site + " war es am {f0} (" + snippet + ")",
        "D'après " + site + ", c'était le {f0} (" + snippet + ")",
    )[lang]
    return Scenario(
        "search",
        lang,
        [
            tool(
                "web_search",
                "Search the web and return result snippets",
                {"query": S, "num_results": I, "recency_days": I},
                ["query"],
            )
        ],  # fmt: skip
        request,
        [Step([Call("web_search", {"query": query, "num_results": 5})], [result])],
        answer,
        [(when, wrong)],
        L(
            "It was downloaded over a million times in its first week.",
            "Se descargó más de un millón de veces la primera semana.",
            "In der ersten Woche gab es über eine Million Downloads.",
            "Il a été téléchargé plus d'un million de fois la première semaine.",
        )[lang],
    )


CATEGORIES = {
    "electronics": L("electronics", "electrónica", "Elektronik", "électronique"),
    "home": L("home", "hogar", "Haushalt", "maison"),
    "sports": L("sports", "deportes", "Sport", "sport"),
}


def d_search_products(r: random.Random, lang: str) -> Scenario:
    cat = r.choice(list(CATEGORIES))
    item = {"electronics": L("noise-cancelling headphones", "auriculares con cancelación de ruido", "Kopfhörer mit Noise Cancelling", "casque à réduction de bruit"),
            "home": L("espresso machine", "cafetera espresso", "Espressomaschine", "machine à espresso"),
            "sports": L("running shoes", "zapatillas de running", "Laufschuhe", "chaussures de running")}[cat][lang]  # fmt: skip
    cur = CURRENCY[lang]
    cap = r.choice([150, 200, 250, 99.99])
    request = L(
        f"Find {item} under {money(cap, cur, lang, r)}, in stock.",
        f"Busca {item} por menos de {money(cap, cur, lang, r)} con stock.",
        f"Finde {item} unter {money(cap, cur, lang, r)}, lieferbar.",
        f"Trouve des {item} à moins de {money(cap, cur, lang, r)}, en stock.",
    )[lang]
    brands = ["Sonix", "Aurel", "Brevio", "Kestrel", "Noma"]
    products = [{"sku": ident(r, "SKU-", 6), "title": f"{b} {item.split()[0].title()} {r.choice(['Pro', 'Lite', 'X2', '300'])}",
                 "price": {"amount": round(cap - r.uniform(5, 60), 2), "currency": cur},
                 "inStock": True, "rating": round(r.uniform(3.8, 4.8), 1),
                 "shipping": {"free": r.random() < 0.5, "etaDays": r.randrange(1, 6)}}
                for b in r.sample(brands, 3)]  # fmt: skip
    products.sort(key=lambda p: p["price"]["amount"])
    lines = [f"{k + 1}. **{p['title']}** – {money(p['price']['amount'], cur, lang)} (★ {p['rating']})"
             for k, p in enumerate(products)]  # fmt: skip
    lines[0] = "1. **{f0}** – {f1} (★ " + str(products[0]["rating"]) + ")"
    intro = L(
        "Here are 3 options in stock:",
        "Estas son 3 opciones con stock:",
        "Hier sind 3 lieferbare Optionen:",
        "Voici 3 options en stock :",
    )[lang]
    answer = intro + "\n\n" + "\n".join(lines)
    p0 = products[0]
    return Scenario(
        "shop",
        lang,
        [
            tool(
                "search_products",
                "Search the shop's catalogue",
                {
                    "query": S,
                    "category": enum(*CATEGORIES),
                    "max_price": obj({"amount": N, "currency": enum("USD", "EUR")}),
                    "in_stock_only": B,
                    "sort": enum("price_asc", "relevance", "rating"),
                },
                ["query"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "search_products",
                        {
                            "query": item,
                            "category": cat,
                            "max_price": {"amount": cap, "currency": cur},
                            "in_stock_only": True,
                            "sort": "price_asc",
                        },
                    )
                ],
                [{"total": 3, "items": products}],
            )
        ],  # fmt: skip
        answer,
        [
            (p0["title"], p0["title"].replace(p0["title"].split()[0], "Zenith")),
            (money(p0["price"]["amount"], cur, lang), money(p0["price"]["amount"] + 40, cur, lang)),
        ],  # fmt: skip
        L(
            "All three come with a 2-year warranty.",
            "Las tres tienen 2 años de garantía.",
            "Alle drei haben 2 Jahre Garantie.",
            "Les trois ont une garantie de 2 ans.",
        )[lang],
        slots=[
            Slot("amount", 0, 0, ("max_price", "amount"), change_number(cap, r)),
            Slot("enum", 0, 0, ("category",), r.choice([c for c in CATEGORIES if c != cat])),
        ],
    )


ORDER_STATES = {
    "IN_TRANSIT": L("in transit", "en tránsito", "unterwegs", "en cours d'acheminement"),
    "OUT_FOR_DELIVERY": L(
        "out for delivery", "en reparto", "in der Zustellung", "en cours de livraison"
    ),
    "DELIVERED": L("delivered", "entregado", "zugestellt", "livré"),
}


def d_order_status(r: random.Random, lang: str) -> Scenario:
    order = r.choice([ident(r, "ORD-", 5), ident(r, "#", 7), ident(r, "112-", 7)])
    state = r.choice(list(ORDER_STATES))
    carrier = r.choice(["UPS", "DHL", "Correos", "Colissimo", "FedEx"])
    eta = a_date(r)
    request = pick(
        r,
        {
            "en": [f"Where is my order {order}?", f"order {order} — when will it arrive??"],
            "es": [f"¿Dónde está mi pedido {order}?"],
            "de": [f"Wo ist meine Bestellung {order}?"],
            "fr": [f"Où en est ma commande {order} ?"],
        },
        lang,
    )
    tracking = token(r, "1Z", 16).upper()
    result = {"orderId": order, "fulfillmentStatus": state, "carrier": carrier,
              "trackingNumber": tracking, "estimatedDelivery": eta.isoformat(),
              "items": [{"sku": ident(r, "SKU-", 6), "qty": 1}], "giftWrap": False}  # fmt: skip
    other = r.choice([s for s in ORDER_STATES if s != state])
    answer = L(
        "Your order " + order + " is {f0} with " + carrier + " (tracking " + tracking + "). "
        "Estimated delivery: {f1}.",
        "Tu pedido " + order + " está {f0} con " + carrier + " (seguimiento " + tracking + "). "
        "Entrega estimada: {f1}.",
        "Deine Bestellung " + order + " ist {f0} mit " + carrier + " (Sendung " + tracking + "). "
        "Voraussichtliche Zustellung: {f1}.",
        "Votre commande " + order + " est {f0} avec " + carrier + " (suivi " + tracking + "). "
        "Livraison prévue : {f1}.",
    )[lang]
    return Scenario(
        "shop",
        lang,
        [
            tool(
                "get_order",
                "Look up an order by its number",
                {"order_id": S, "include_items": B},
                ["order_id"],
            ),
            tool(
                "cancel_order",
                "Cancel an order that has not shipped",
                {"order_id": S, "reason": S},
                ["order_id"],
            ),
        ],
        request,
        [Step([Call("get_order", {"order_id": order})], [result])],
        answer,
        [
            (ORDER_STATES[state][lang], ORDER_STATES[other][lang]),
            (written_date(eta, lang), written_date(eta + dt.timedelta(days=4), lang)),
        ],  # fmt: skip
        L(
            "The driver will call you 30 minutes before arrival.",
            "El repartidor te llamará 30 minutos antes.",
            "Der Fahrer ruft 30 Minuten vorher an.",
            "Le livreur vous appellera 30 minutes avant.",
        )[lang],
        slots=[Slot("id", 0, 0, ("order_id",), change_id(order, r))],
    )


RETURN_REASONS = {
    "damaged": L("it arrived damaged", "llegó dañado", "kam beschädigt an", "il est arrivé abîmé"),
    "wrong_size": L("wrong size", "la talla no es correcta", "falsche Größe", "mauvaise taille"),
    "not_as_described": L(
        "it's not as described",
        "no es como se describía",
        "entspricht nicht der Beschreibung",
        "non conforme à la description",
    ),
}


def d_return(r: random.Random, lang: str) -> Scenario:
    order = ident(r, "ORD-", 5)
    sku = ident(r, "SKU-", 6)
    reason = r.choice(list(RETURN_REASONS))
    request = L(
        f"I want to return item {sku} from order {order}, {RETURN_REASONS[reason]['en']}.",
        f"Quiero devolver el artículo {sku} del pedido {order}: {RETURN_REASONS[reason]['es']}.",
        f"Ich möchte Artikel {sku} aus Bestellung {order} zurückgeben, {RETURN_REASONS[reason]['de']}.",
        f"Je veux retourner l'article {sku} de la commande {order} : {RETURN_REASONS[reason]['fr']}.",
    )[lang]
    rma = ident(r, "RMA-", 6)
    label_until = a_date(r)
    result = {"rma": rma, "order_id": order, "sku": sku, "reason": reason,
              "refund_method": "original_payment", "label_url": f"https://returns.example.com/{rma}.pdf",
              "drop_off_by": label_until.isoformat(), "status": "AWAITING_DROP_OFF"}  # fmt: skip
    answer = L(
        "Return {f0} is open. Print the label from the link and drop the parcel off by {f1}; the "
        "refund goes back to your original payment method.",
        "Devolución {f0} abierta. Entrega el paquete antes del {f1}; el reembolso irá a tu método "
        "de pago original.",
        "Rücksendung {f0} ist angelegt. Gib das Paket bis zum {f1} ab; die Erstattung geht auf "
        "dein ursprüngliches Zahlungsmittel.",
        "Retour {f0} ouvert. Déposez le colis avant le {f1} ; le remboursement se fera sur votre "
        "moyen de paiement d'origine.",
    )[lang]
    return Scenario(
        "shop",
        lang,
        [
            tool(
                "create_return",
                "Open a return (RMA) for an order line",
                {
                    "order_id": S,
                    "sku": S,
                    "reason": enum(*RETURN_REASONS),
                    "comment": S,
                    "pickup_address": obj({"street": S, "city": S, "postal_code": S}),
                },
                ["order_id", "sku", "reason"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [Call("create_return", {"order_id": order, "sku": sku, "reason": reason})], [result]
            )
        ],
        answer,
        [
            (rma, change_id(rma, r)),
            (
                written_date(label_until, lang),
                written_date(label_until + dt.timedelta(days=9), lang),
            ),
        ],
        L(
            "You'll also get a 10% voucher for your next order.",
            "Además recibirás un cupón del 10 %.",
            "Außerdem bekommst du einen 10-%-Gutschein.",
            "Vous recevrez aussi un bon de 10 %.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("sku",), change_id(sku, r)),
            Slot("enum", 0, 0, ("reason",), r.choice([x for x in RETURN_REASONS if x != reason])),
        ],
        invent=(
            0,
            0,
            "pickup_address",
            {"street": "12 Elm Street", "city": "Springfield", "postal_code": "62704"},
        ),
    )


AIRPORTS = {
    "en": [("BOS", "Boston"), ("SFO", "San Francisco"), ("JFK", "New York"), ("LHR", "London")],
    "es": [("MAD", "Madrid"), ("BCN", "Barcelona"), ("AGP", "Málaga")],
    "de": [("FRA", "Frankfurt"), ("MUC", "München"), ("BER", "Berlin")],
    "fr": [("CDG", "Paris"), ("LYS", "Lyon"), ("NCE", "Nice")],
}
CABINS = {
    "economy": L("economy", "turista", "Economy", "économique"),
    "premium_economy": L("premium economy", "turista premium", "Premium Economy", "premium"),
    "business": L("business", "business", "Business", "affaires"),
}


def d_flights(r: random.Random, lang: str) -> Scenario:
    (o, oc), (d, dc) = r.sample(AIRPORTS[lang] + [("LIS", "Lisbon"), ("AMS", "Amsterdam")], 2)
    day = a_date(r)
    cabin = r.choice(list(CABINS))
    pax = r.choice([1, 2, 3])
    sd = spoken_date(day, lang, r)
    request = L(
        f"Find {pax} {CABINS[cabin]['en']} seat(s) from {oc} to {dc} on {sd}.",
        f"Busca {pax} plaza(s) en {CABINS[cabin]['es']} de {oc} a {dc} el {sd}.",
        f"Such {pax} Platz/Plätze in der {CABINS[cabin]['de']} von {oc} nach {dc} am {sd}.",
        f"Cherche {pax} place(s) en classe {CABINS[cabin]['fr']} de {oc} à {dc} le {sd}.",
    )[lang]
    cur = CURRENCY[lang]
    offers = []
    for _ in range(2):
        dep_h = r.randrange(6, 21)
        offers.append({"id": token(r, "off_", 12), "carrier": r.choice(["IB", "LH", "AF", "BA", "TP"]),
                       "flight_number": str(r.randrange(100, 9999)),
                       "departure": f"{day.isoformat()}T{dep_h:02d}:{r.choice(['05', '20', '40'])}:00",
                       "stops": r.choice([0, 0, 1]),
                       "total_price": {"amount": round(r.uniform(90, 900) * pax, 2), "currency": cur},
                       "cabin": cabin})  # fmt: skip
    offers.sort(key=lambda x: x["total_price"]["amount"])
    best = offers[0]
    dep = best["departure"][11:16]
    answer = L(
        "The cheapest option is {f0} "
        + best["flight_number"]
        + " departing at {f1}, "
        + ("nonstop" if best["stops"] == 0 else "1 stop")
        + ", {f2} in total for "
        + str(pax)
        + " passenger(s).",
        "La opción más barata es {f0} " + best["flight_number"] + " a las {f1}, {f2} en total.",
        "Am günstigsten ist {f0} " + best["flight_number"] + " um {f1} Uhr, insgesamt {f2}.",
        "Le moins cher : {f0} " + best["flight_number"] + " à {f1}, {f2} au total.",
    )[lang]
    price = best["total_price"]["amount"]
    return Scenario(
        "travel",
        lang,
        [
            tool(
                "search_flights",
                "Search flight offers (Duffel-style API)",
                {
                    "origin": desc(S, "IATA code"),
                    "destination": desc(S, "IATA code"),
                    "departure_date": DATE,
                    "return_date": DATE,
                    "cabin_class": enum(*CABINS),
                    "passengers": obj({"adults": I, "children": I}, ["adults"]),
                },
                ["origin", "destination", "departure_date"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "search_flights",
                        {
                            "origin": o,
                            "destination": d,
                            "departure_date": day.isoformat(),
                            "cabin_class": cabin,
                            "passengers": {"adults": pax},
                        },
                    )
                ],
                [{"data": {"offers": offers, "currency": cur}}],
            )
        ],  # fmt: skip
        answer,
        [
            (best["carrier"], "UA" if best["carrier"] != "UA" else "DL"),
            (dep, f"{(int(dep[:2]) + 2) % 24:02d}{dep[2:]}"),
            (money(price, cur, lang), money(price - 55, cur, lang)),
        ],  # fmt: skip
        L(
            "Seats 12A and 12B are still free.",
            "Quedan libres los asientos 12A y 12B.",
            "Die Sitze 12A und 12B sind noch frei.",
            "Les sièges 12A et 12B sont encore libres.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("departure_date",), change_date(day.isoformat(), r)),
            Slot("enum", 0, 0, ("cabin_class",), r.choice([c for c in CABINS if c != cabin])),
            Slot("id", 0, 0, ("destination",), change_id(d, r)),
        ],
        invent=(0, 0, "return_date", (day + dt.timedelta(days=7)).isoformat()),
    )


ROOMS = {
    "double": L("double room", "habitación doble", "Doppelzimmer", "chambre double"),
    "twin": L("twin room", "habitación con dos camas", "Zweibettzimmer", "chambre twin"),
    "suite": L("suite", "suite", "Suite", "suite"),
}


def d_hotel(r: random.Random, lang: str) -> Scenario:
    city, _ = r.choice(CITIES[lang])
    check_in = a_date(r)
    nights = r.choice([1, 2, 3, 5])
    check_out = check_in + dt.timedelta(days=nights)
    room = r.choice(list(ROOMS))
    guests = 2 if room != "suite" else r.choice([2, 3])
    request = L(
        f"Book a {ROOMS[room]['en']} in {city} for {guests} guests, check-in {spoken_date(check_in, lang, r)}, "
        f"check-out {spoken_date(check_out, lang, r)}.",
        f"Reserva una {ROOMS[room]['es']} en {city} para {guests} personas del {spoken_date(check_in, lang, r)} "
        f"al {spoken_date(check_out, lang, r)}.",
        f"Buch ein {ROOMS[room]['de']} in {city} für {guests} Personen vom {spoken_date(check_in, lang, r)} "
        f"bis {spoken_date(check_out, lang, r)}.",
        f"Réserve une {ROOMS[room]['fr']} à {city} pour {guests} personnes du {spoken_date(check_in, lang, r)} "
        f"au {spoken_date(check_out, lang, r)}.",
    )[lang]
    cur = CURRENCY[lang]
    rate = round(r.uniform(89, 320), 2)
    conf = token(r, "HB-", 8).upper()
    hotel = f"Hotel {r.choice(['Aurora', 'Central', 'Meridian', 'Lindenhof', 'Le Marais'])}"
    result = {"confirmation_number": conf, "hotel": {"name": hotel, "city": city},
              "check_in": check_in.isoformat(), "check_out": check_out.isoformat(),
              "room_type": room, "guests": guests, "nightly_rate": {"amount": rate, "currency": cur},
              "total": {"amount": round(rate * nights, 2), "currency": cur},
              "free_cancellation_until": (check_in - dt.timedelta(days=2)).isoformat(),
              "breakfast_included": False}  # fmt: skip
    total = round(rate * nights, 2)
    answer = L(
        "Booked! {f0} at "
        + hotel
        + ", "
        + ROOMS[room]["en"]
        + " from {f1} to "
        + written_date(check_out, "en")
        + " ({f2} total, breakfast not included). Free "
        "cancellation until " + written_date(check_in - dt.timedelta(days=2), "en") + ".",
        "¡Reservado! {f0} en el "
        + hotel
        + " del {f1} al "
        + written_date(check_out, "es")
        + ", {f2} en total.",
        "Gebucht! {f0} im "
        + hotel
        + " vom {f1} bis "
        + written_date(check_out, "de")
        + ", insgesamt {f2}.",
        "Réservé ! {f0} à l'"
        + hotel
        + " du {f1} au "
        + written_date(check_out, "fr")
        + ", {f2} au total.",
    )[lang]
    return Scenario(
        "travel",
        lang,
        [
            tool(
                "book_hotel",
                "Book a hotel room",
                {
                    "city": S,
                    "check_in": DATE,
                    "check_out": DATE,
                    "guests": I,
                    "room_type": enum(*ROOMS),
                    "special_requests": S,
                    "loyalty_number": S,
                },
                ["city", "check_in", "check_out", "guests"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "book_hotel",
                        {
                            "city": city,
                            "check_in": check_in.isoformat(),
                            "check_out": check_out.isoformat(),
                            "guests": guests,
                            "room_type": room,
                        },
                    )
                ],
                [result],
            )
        ],  # fmt: skip
        answer,
        [
            (conf, change_id(conf, r)),
            (written_date(check_in, lang), written_date(check_in + dt.timedelta(days=1), lang)),
            (money(total, cur, lang), money(total + 120, cur, lang)),
        ],  # fmt: skip
        L(
            "The room has a view of the old town.",
            "La habitación tiene vistas al casco antiguo.",
            "Das Zimmer hat Blick auf die Altstadt.",
            "La chambre donne sur la vieille ville.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("check_in",), change_date(check_in.isoformat(), r)),
            Slot("enum", 0, 0, ("room_type",), r.choice([x for x in ROOMS if x != room])),
        ],
        invent=(0, 0, "loyalty_number", ident(r, "MBV", 9)),
    )


def d_restaurant(r: random.Random, lang: str) -> Scenario:
    name = r.choice(
        ["Trattoria Roma", "Casa Lucía", "Zum Goldenen Hirsch", "Chez Marcel", "Blue Fin"]
    )
    day = a_date(r)
    h, mi = r.choice([(19, 0), (19, 30), (20, 0), (20, 30), (12, 30), (13, 0)])
    size = r.choice([2, 4, 5, 6])
    rest_id = ident(r, "rst_", 6)
    request = L(
        f"Table for {size} at {name} on {spoken_date(day, lang, r)} at {spoken_time(h, mi, lang, r)}, please.",
        f"Mesa para {size} en {name} el {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}, por favor.",
        f"Einen Tisch für {size} im {name} am {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}, bitte.",
        f"Une table pour {size} chez {name} le {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}, s'il vous plaît.",
    )[lang]
    search = {
        "restaurants": [{"id": rest_id, "name": name, "cuisine": "european", "price_level": 2}]
    }
    code = token(r, "", 6).upper()
    booking = {"reservation_id": code, "restaurant_id": rest_id, "date": day.isoformat(),
               "time": f"{h:02d}:{mi:02d}", "party_size": size, "status": "CONFIRMED",
               "cancellation_policy": "free until 24h before"}  # fmt: skip
    answer = L(
        "You're booked at "
        + name
        + " for {f0} people on {f1} at {f2}. Confirmation code: "
        + code
        + ". Cancellation is free until 24 hours before.",
        "Reserva hecha en "
        + name
        + " para {f0} personas el {f1} a las {f2}. Código: "
        + code
        + ".",
        "Reserviert im " + name + " für {f0} Personen am {f1} um {f2} Uhr. Code: " + code + ".",
        "Réservation chez " + name + " pour {f0} personnes le {f1} à {f2}. Code : " + code + ".",
    )[lang]
    return Scenario(
        "restaurant",
        lang,
        [
            tool("find_restaurant", "Find a restaurant by name", {"name": S, "city": S}, ["name"]),
            tool(
                "reserve_table",
                "Reserve a table",
                {
                    "restaurant_id": S,
                    "date": DATE,
                    "time": TIME,
                    "party_size": I,
                    "notes": S,
                    "phone": S,
                },
                ["restaurant_id", "date", "time", "party_size"],
            ),
        ],  # fmt: skip
        request,
        [
            Step([Call("find_restaurant", {"name": name})], [search]),
            Step(
                [
                    Call(
                        "reserve_table",
                        {
                            "restaurant_id": rest_id,
                            "date": day.isoformat(),
                            "time": f"{h:02d}:{mi:02d}",
                            "party_size": size,
                        },
                    )
                ],
                [booking],
            ),
        ],  # fmt: skip
        answer,
        [
            (size, size + 2),
            (written_date(day, lang), written_date(day + dt.timedelta(days=1), lang)),
            (f"{h:02d}:{mi:02d}", f"{h - 1:02d}:{mi:02d}"),
        ],  # fmt: skip
        L(
            "They've noted it's a birthday celebration.",
            "Han anotado que es una celebración de cumpleaños.",
            "Sie haben notiert, dass es ein Geburtstag ist.",
            "Ils ont noté qu'il s'agit d'un anniversaire.",
        )[lang],
        slots=[
            Slot("date", 1, 0, ("date",), change_date(day.isoformat(), r)),
            Slot("time", 1, 0, ("time",), change_time(f"{h:02d}:{mi:02d}", r)),
            Slot("id", 1, 0, ("restaurant_id",), change_id(rest_id, r)),
        ],
        invent=(1, 0, "phone", "+1 617 555 0142"),
    )


PRIORITIES = {
    "urgent": L("urgent", "urgente", "dringend", "urgente"),
    "high": L("high priority", "prioridad alta", "hohe Priorität", "priorité haute"),
    "normal": L("normal priority", "prioridad normal", "normale Priorität", "priorité normale"),
    "low": L("low priority", "prioridad baja", "niedrige Priorität", "priorité basse"),
}


def d_ticket(r: random.Random, lang: str) -> Scenario:
    first, last = r.choice(PEOPLE)
    mail = email(first, last)
    order = ident(r, "ORD-", 5)
    prio = r.choice(list(PRIORITIES))
    subject = L(
        "Double charge on order",
        "Cobro duplicado en el pedido",
        "Doppelte Abbuchung bei Bestellung",
        "Double débit sur la commande",
    )[lang]
    request = L(
        f"Open a {PRIORITIES[prio]['en']} ticket for {mail}: they were charged twice for {order}.",
        f"Abre un ticket ({PRIORITIES[prio]['es']}) para {mail}: le cobraron dos veces el pedido {order}.",
        f"Erstelle ein Ticket ({PRIORITIES[prio]['de']}) für {mail}: Bestellung {order} wurde doppelt abgebucht.",
        f"Ouvre un ticket ({PRIORITIES[prio]['fr']}) pour {mail} : la commande {order} a été débitée deux fois.",
    )[lang]
    tid = r.randrange(10000, 99999)
    result = {"ticket": {"id": tid, "subject": f"{subject} {order}", "priority": prio, "status": "new",
                         "requester": {"email": mail}, "tags": ["billing", "duplicate_charge"],
                         "custom_fields": [{"id": 360001, "value": order}],
                         "created_at": "2026-05-06T10:01:12Z"}}  # fmt: skip
    answer = L(
        "Ticket #{f0} is open for " + mail + " ({f1}), tagged billing and duplicate charge.",
        "Ticket #{f0} abierto para " + mail + " ({f1}).",
        "Ticket #{f0} für " + mail + " ist angelegt ({f1}).",
        "Ticket n° {f0} ouvert pour " + mail + " ({f1}).",
    )[lang]
    other = r.choice([p for p in PRIORITIES if p != prio])
    return Scenario(
        "support",
        lang,
        [
            tool(
                "create_ticket",
                "Create a Zendesk ticket",
                {
                    "subject": S,
                    "comment": obj({"body": S}, ["body"]),
                    "priority": enum(*PRIORITIES),
                    "requester_email": S,
                    "order_id": S,
                    "assignee_id": I,
                    "tags": arr(S),
                },
                ["subject", "comment", "requester_email"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "create_ticket",
                        {
                            "subject": f"{subject} {order}",
                            "comment": {"body": request},
                            "priority": prio,
                            "requester_email": mail,
                            "order_id": order,
                        },
                    )
                ],
                [result],
            )
        ],  # fmt: skip
        answer,
        [(tid, tid + 1), (PRIORITIES[prio][lang], PRIORITIES[other][lang])],
        L(
            "The customer will get a reply within 4 hours per the SLA.",
            "El cliente recibirá respuesta en 4 horas según el SLA.",
            "Laut SLA bekommt der Kunde binnen 4 Stunden Antwort.",
            "Selon le SLA, le client aura une réponse sous 4 heures.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("order_id",), change_id(order, r)),
            Slot("enum", 0, 0, ("priority",), other),
        ],
        invent=(0, 0, "assignee_id", 381726),
    )


def d_github(r: random.Random, lang: str) -> Scenario:
    repo = r.choice(
        ["acme/web-app", "octo-org/billing-service", "pallets/flask-demo", "team-x/infra"]
    )
    title = L(
        "Login fails on Safari 17",
        "El login falla en Safari 17",
        "Login schlägt in Safari 17 fehl",
        "La connexion échoue sous Safari 17",
    )[lang]
    labels = r.choice([["bug"], ["bug", "frontend"], ["bug", "p1"]])
    assignee = r.choice(["mkeller", "dokafor", "sromano", "jweber"])
    request = L(
        f'Open an issue in {repo} titled "{title}", labels {", ".join(labels)}, assign @{assignee}.',
        f'Abre un issue en {repo} con el título "{title}", etiquetas {", ".join(labels)}, asignado a @{assignee}.',
        f'Leg in {repo} ein Issue "{title}" an, Labels {", ".join(labels)}, zuständig @{assignee}.',
        f"Crée une issue dans {repo} intitulée « {title} », labels {', '.join(labels)}, assignée à @{assignee}.",
    )[lang]
    number = r.randrange(100, 4000)
    owner, name = repo.split("/")
    result = {"number": number, "html_url": f"https://github.com/{repo}/issues/{number}", "state": "open",
              "title": title, "labels": [{"name": x} for x in labels],
              "assignees": [{"login": assignee}], "user": {"login": "support-bot"}}  # fmt: skip
    answer = L(
        'Created {f0}#{f1}: "'
        + title
        + '" (labels: '
        + ", ".join(labels)
        + "), assigned to @{f2}.",
        'Creado {f0}#{f1}: "' + title + '", asignado a @{f2}.',
        'Angelegt: {f0}#{f1} "' + title + '", zugewiesen an @{f2}.',
        "Créée : {f0}#{f1} « " + title + " », assignée à @{f2}.",
    )[lang]
    return Scenario(
        "devtools",
        lang,
        [
            tool(
                "create_issue",
                "Create a GitHub issue",
                {
                    "owner": S,
                    "repo": S,
                    "title": S,
                    "body": S,
                    "labels": arr(S),
                    "assignees": arr(S),
                    "milestone": I,
                },
                ["owner", "repo", "title"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "create_issue",
                        {
                            "owner": owner,
                            "repo": name,
                            "title": title,
                            "labels": labels,
                            "assignees": [assignee],
                        },
                    )
                ],
                [result],
            )
        ],  # fmt: skip
        answer,
        [(repo, repo + "-legacy"), (number, number + 10), (assignee, "octocat")],
        L(
            "It was added to the Q3 milestone.",
            "Se ha añadido al hito del tercer trimestre.",
            "Es wurde dem Q3-Meilenstein zugeordnet.",
            "Elle a été ajoutée au jalon du T3.",
        )[lang],
    )


TRANSITIONS = {
    "In Progress": L("in progress", "en curso", "in Arbeit", "en cours"),
    "In Review": L("in review", "en revisión", "im Review", "en revue"),
    "Done": L("done", "hecha", "erledigt", "terminée"),
    "Blocked": L("blocked", "bloqueada", "blockiert", "bloquée"),
}


def d_jira(r: random.Random, lang: str) -> Scenario:
    key = f"{r.choice(['OPS', 'PAY', 'WEB', 'DATA'])}-{r.randrange(100, 9999)}"
    target = r.choice(list(TRANSITIONS))
    request = pick(
        r,
        {
            "en": [f"Move {key} to {TRANSITIONS[target]['en']}.", f"{key} -> {target}"],
            "es": [f"Pasa {key} a «{TRANSITIONS[target]['es']}»."],
            "de": [f"Setz {key} auf „{TRANSITIONS[target]['de']}“."],
            "fr": [f"Passe {key} en « {TRANSITIONS[target]['fr']} »."],
        },
        lang,
    )
    result = {"key": key, "fields": {"status": {"name": target, "statusCategory": {"key": "indeterminate" if target != "Done" else "done"}},
                                     "updated": "2026-06-01T12:00:00.000+0000"}}  # fmt: skip
    other = r.choice([t for t in TRANSITIONS if t != target])
    answer = L(
        "{f0} is now **{f1}**.",
        "{f0} ya está «{f1}».",
        "{f0} steht jetzt auf „{f1}“.",
        "{f0} est maintenant « {f1} ».",
    )[lang]
    return Scenario(
        "devtools",
        lang,
        [
            tool(
                "transition_issue",
                "Transition a Jira issue to a status",
                {"issue_key": desc(S, "e.g. PROJ-123"), "status": enum(*TRANSITIONS), "comment": S},
                ["issue_key", "status"],
            ),
            tool("get_issue", "Get a Jira issue", {"issue_key": S}, ["issue_key"]),
        ],  # fmt: skip
        request,
        [Step([Call("transition_issue", {"issue_key": key, "status": target})], [result])],
        answer,
        [(key, change_id(key, r)), (TRANSITIONS[target][lang], TRANSITIONS[other][lang])],
        L(
            "The reporter has been notified by email.",
            "Se ha avisado al informador por correo.",
            "Der Melder wurde per E-Mail informiert.",
            "Le rapporteur a été prévenu par e-mail.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("issue_key",), change_id(key, r)),
            Slot("enum", 0, 0, ("status",), other),
        ],
        invent=(0, 0, "comment", "Verified on staging build 2026.06.01-3"),
    )


LEAVE = {
    "vacation": L("vacation", "vacaciones", "Urlaub", "congés payés"),
    "sick": L("sick leave", "baja por enfermedad", "Krankmeldung", "arrêt maladie"),
    "parental": L("parental leave", "permiso parental", "Elternzeit", "congé parental"),
}


def d_time_off(r: random.Random, lang: str) -> Scenario:
    emp = ident(r, "E", 5)
    start = a_date(r)
    days = r.choice([1, 2, 4, 9])
    end = start + dt.timedelta(days=days)
    kind = r.choice(list(LEAVE))
    request = L(
        f"Request {LEAVE[kind]['en']} for employee {emp} from {spoken_date(start, lang, r)} to {spoken_date(end, lang, r)}.",
        f"Solicita {LEAVE[kind]['es']} para el empleado {emp} del {spoken_date(start, lang, r)} al {spoken_date(end, lang, r)}.",
        f"Beantrage {LEAVE[kind]['de']} für Mitarbeiter {emp} vom {spoken_date(start, lang, r)} bis {spoken_date(end, lang, r)}.",
        f"Pose des {LEAVE[kind]['fr']} pour le salarié {emp} du {spoken_date(start, lang, r)} au {spoken_date(end, lang, r)}.",
    )[lang]
    req_id = ident(r, "TOR-", 6)
    balance = round(r.uniform(2, 25), 1)
    result = {"request_id": req_id, "employee_id": emp, "type": kind, "start_date": start.isoformat(),
              "end_date": end.isoformat(), "status": "PENDING_APPROVAL",
              "approver": {"name": "Maria Keller"}, "remaining_balance_days": balance}  # fmt: skip
    answer = L(
        "Request {f0} is pending approval by Maria Keller ({f1} to "
        + written_date(end, "en")
        + "). You'll have {f2} days left.",
        "La solicitud {f0} está pendiente de aprobación de Maria Keller (del {f1} al "
        + written_date(end, "es")
        + "). Te quedarán {f2} días.",
        "Antrag {f0} wartet auf Freigabe durch Maria Keller ({f1} bis "
        + written_date(end, "de")
        + "). Danach bleiben {f2} Tage.",
        "La demande {f0} attend la validation de Maria Keller (du {f1} au "
        + written_date(end, "fr")
        + "). Il restera {f2} jours.",
    )[lang]
    return Scenario(
        "hr",
        lang,
        [
            tool(
                "request_time_off",
                "Submit a time-off request in the HR system",
                {
                    "employee_id": S,
                    "type": enum(*LEAVE),
                    "start_date": DATE,
                    "end_date": DATE,
                    "half_day": B,
                    "note": S,
                },
                ["employee_id", "type", "start_date", "end_date"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "request_time_off",
                        {
                            "employee_id": emp,
                            "type": kind,
                            "start_date": start.isoformat(),
                            "end_date": end.isoformat(),
                        },
                    )
                ],
                [result],
            )
        ],  # fmt: skip
        answer,
        [
            (req_id, change_id(req_id, r)),
            (written_date(start, lang), written_date(start + dt.timedelta(days=3), lang)),
            (balance, round(balance + 5, 1)),
        ],  # fmt: skip
        L(
            "Your manager usually approves within a day.",
            "Tu responsable suele aprobar en un día.",
            "Die Freigabe dauert meist einen Tag.",
            "La validation prend en général un jour.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("start_date",), change_date(start.isoformat(), r)),
            Slot("id", 0, 0, ("employee_id",), change_id(emp, r)),
            Slot("enum", 0, 0, ("type",), r.choice([k for k in LEAVE if k != kind])),
        ],
        invent=(0, 0, "note", "Covering: Tom Becker (E40213)"),
    )


def iban(r: random.Random, country: str) -> str:
    body = "".join(r.choice("0123456789") for _ in range(18))
    return f"{country}{r.randrange(10, 99)}{body}"


def spaced(value: str) -> str:
    return " ".join(value[k : k + 4] for k in range(0, len(value), 4))


def d_transfer(r: random.Random, lang: str) -> Scenario:
    country = {"en": "GB", "es": "ES", "de": "DE", "fr": "FR"}[lang]
    to_iban = iban(r, country)
    first, last = r.choice(PEOPLE)
    cur = "GBP" if lang == "en" else "EUR"
    value = r.choice([250, 1200, 89.9, 4500, 37.5])
    day = a_date(r)
    written_iban = spaced(to_iban) if r.random() < 0.5 else to_iban
    request = L(
        f"Send {money(value, cur, lang, r)} to {first} {last}, IBAN {written_iban}, on {spoken_date(day, lang, r)}. Reference: rent.",
        f"Transfiere {money(value, cur, lang, r)} a {first} {last}, IBAN {written_iban}, el {spoken_date(day, lang, r)}. Concepto: alquiler.",
        f"Überweise {money(value, cur, lang, r)} an {first} {last}, IBAN {written_iban}, am {spoken_date(day, lang, r)}. Verwendungszweck: Miete.",
        f"Vire {money(value, cur, lang, r)} à {first} {last}, IBAN {written_iban}, le {spoken_date(day, lang, r)}. Motif : loyer.",
    )[lang]
    ref = L("rent", "alquiler", "Miete", "loyer")[lang]
    tid = token(r, "tr_", 16)
    args = {"from_account": "main", "creditor": {"name": f"{first} {last}", "iban": to_iban},
            "amount": {"value": value, "currency": cur}, "execution_date": day.isoformat(),
            "reference": ref}  # fmt: skip
    result = {"transfer_id": tid, "status": "SCHEDULED", "execution_date": day.isoformat(),
              "amount": {"value": value, "currency": cur},
              "creditor": {"name": f"{first} {last}", "iban_masked": to_iban[:4] + "****" + to_iban[-4:]},
              "fee": {"value": 0, "currency": cur}, "instant": False}  # fmt: skip
    answer = L(
        "Scheduled: {f0} to "
        + first
        + " "
        + last
        + " (IBAN ending "
        + to_iban[-4:]
        + ") on {f1}, no fee. Transfer ID "
        + tid
        + ".",
        "Programado: {f0} a "
        + first
        + " "
        + last
        + " (IBAN terminado en "
        + to_iban[-4:]
        + ") el {f1}, sin comisión.",
        "Geplant: {f0} an "
        + first
        + " "
        + last
        + " (IBAN endet auf "
        + to_iban[-4:]
        + ") am {f1}, gebührenfrei.",
        "Programmé : {f0} à "
        + first
        + " "
        + last
        + " (IBAN se terminant par "
        + to_iban[-4:]
        + ") le {f1}, sans frais.",
    )[lang]
    return Scenario(
        "banking",
        lang,
        [
            tool(
                "create_transfer",
                "Create a SEPA / Faster Payments credit transfer",
                {
                    "from_account": enum("main", "savings"),
                    "creditor": obj({"name": S, "iban": S}, ["name", "iban"]),
                    "amount": obj(
                        {"value": N, "currency": enum("EUR", "GBP", "USD")}, ["value", "currency"]
                    ),
                    "execution_date": DATE,
                    "reference": S,
                    "instant": B,
                },
                ["creditor", "amount"],
            ),
            tool(
                "get_balance",
                "Balance of an account",
                {"account": enum("main", "savings")},
                ["account"],
            ),
        ],  # fmt: skip
        request,
        [Step([Call("create_transfer", args)], [result])],
        answer,
        [
            (money(value, cur, lang), money(value + 100, cur, lang)),
            (written_date(day, lang), written_date(day + dt.timedelta(days=2), lang)),
        ],  # fmt: skip
        L(
            "It will arrive within seconds as an instant payment.",
            "Llegará en segundos como transferencia inmediata.",
            "Sie kommt als Echtzeitüberweisung in Sekunden an.",
            "Il arrivera en quelques secondes en virement instantané.",
        )[lang],
        slots=[
            Slot("amount", 0, 0, ("amount", "value"), change_number(value, r)),
            Slot("id", 0, 0, ("creditor", "iban"), change_id(to_iban, r)),
            Slot("date", 0, 0, ("execution_date",), change_date(day.isoformat(), r)),
        ],
        invent=(0, 0, "reference", "INV-2026-0412"),
    )


def d_fx(r: random.Random, lang: str) -> Scenario:
    src, dst = r.choice(
        [("USD", "EUR"), ("EUR", "GBP"), ("EUR", "USD"), ("GBP", "EUR"), ("EUR", "JPY")]
    )
    value = r.choice([100, 250, 1000, 1999.99, 75.5])
    rate = {"USD": 0.92, "EUR": 1.08, "GBP": 1.17}[src] if dst != "JPY" else 163.4
    rate = (
        round(rate + r.uniform(-0.02, 0.02), 4)
        if dst != "JPY"
        else round(rate + r.uniform(-2, 2), 2)
    )
    converted = round(value * rate, 2)
    request = pick(
        r,
        {
            "en": [
                f"How much is {money(value, src, 'en', r)} in {dst}?",
                f"convert {value} {src} to {dst}",
            ],
            "es": [f"¿Cuánto son {money(value, src, 'es', r)} en {dst}?"],
            "de": [f"Wie viel sind {money(value, src, 'de', r)} in {dst}?"],
            "fr": [f"Combien font {money(value, src, 'fr', r)} en {dst} ?"],
        },
        lang,
    )
    result = {"success": True, "query": {"from": src, "to": dst, "amount": value},
              "info": {"rate": rate, "timestamp": 1767225600}, "date": "2026-01-01", "result": converted}  # fmt: skip
    shown = f"{converted:,.2f} {dst}" if lang == "en" else money(converted, dst, lang)
    wrong = (
        f"{converted * 1.1:,.2f} {dst}"
        if lang == "en"
        else money(round(converted * 1.1, 2), dst, lang)
    )
    answer = L(
        money(value, src, "en") + " is about {f0} at a rate of {f1} (as of 2026-01-01).",
        money(value, src, "es") + " son unos {f0} (tipo {f1}).",
        money(value, src, "de") + " sind etwa {f0} (Kurs {f1}).",
        money(value, src, "fr") + " font environ {f0} (taux {f1}).",
    )[lang]
    rate_w = str(rate) if lang == "en" else str(rate).replace(".", ",")
    wrong_rate = round(rate * 1.05, 4)
    wrong_rate_w = str(wrong_rate) if lang == "en" else str(wrong_rate).replace(".", ",")
    return Scenario(
        "finance",
        lang,
        [
            tool(
                "convert_currency",
                "Convert an amount between currencies at today's rate",
                {
                    "from": desc(S, "ISO 4217 code"),
                    "to": desc(S, "ISO 4217 code"),
                    "amount": N,
                    "date": DATE,
                },
                ["from", "to", "amount"],
            )
        ],  # fmt: skip
        request,
        [Step([Call("convert_currency", {"from": src, "to": dst, "amount": value})], [result])],
        answer,
        [(shown, wrong), (rate_w, wrong_rate_w)],
        L(
            "Banks typically add a 3% margin on top of this rate.",
            "Los bancos suelen añadir un margen del 3 %.",
            "Banken schlagen meist 3 % auf.",
            "Les banques ajoutent en général une marge de 3 %.",
        )[lang],
        slots=[Slot("amount", 0, 0, ("amount",), change_number(value, r))],
        invent=(0, 0, "date", "2025-12-24"),
    )


SERVICES = {
    "express": L("express", "exprés", "Express", "express"),
    "standard": L("standard", "estándar", "Standard", "standard"),
    "economy": L("economy", "económico", "Economy", "économique"),
}


def d_shipment(r: random.Random, lang: str) -> Scenario:
    first, last = r.choice(PEOPLE)
    street, city, region, postal = address(r, lang)
    weight = r.choice([0.8, 1.5, 2.25, 4, 12.5])
    service = r.choice(list(SERVICES))
    line = ", ".join(
        x
        for x in (
            street,
            f"{postal} {city}" if lang != "en" else city,
            region if lang == "en" else "",
        )
        if x
    )
    if lang == "en" and postal:
        line += f" {postal}"
    request = L(
        f"Create {'an' if service == 'express' or service == 'economy' else 'a'} {SERVICES[service]['en']} shipping label to {first} {last}, {line}. Parcel weighs {weight} kg.",
        f"Crea una etiqueta de envío {SERVICES[service]['es']} para {first} {last}, {line}. Pesa {str(weight).replace('.', ',')} kg.",
        f"Erstelle ein {SERVICES[service]['de']}-Versandlabel an {first} {last}, {line}. Gewicht {str(weight).replace('.', ',')} kg.",
        f"Crée une étiquette {SERVICES[service]['fr']} pour {first} {last}, {line}. Le colis pèse {str(weight).replace('.', ',')} kg.",
    )[lang]
    country = {"en": "US", "es": "ES", "de": "DE", "fr": "FR"}[lang]
    if lang == "en" and city in ("London",):
        country = "GB"
    if lang == "en" and city == "Toronto":
        country = "CA"
    to = {
        "name": f"{first} {last}",
        "street1": street,
        "city": city,
        "zip": postal,
        "country": country,
    }
    if region:
        to["state"] = region
    tracking = token(r, "", 22).upper()
    cost = round(r.uniform(6, 48), 2)
    cur = "USD" if lang == "en" else "EUR"
    result = {"object_id": token(r, "", 32).lower(), "status": "SUCCESS", "tracking_number": tracking,
              "label_url": f"https://shippo-delivery.example/{tracking}.pdf",
              "rate": {"amount": str(cost), "currency": cur, "servicelevel": {"token": service}},
              "eta": (a_date(r)).isoformat(), "address_to": {**to, "is_residential": True}}  # fmt: skip
    answer = L(
        "Label created for "
        + first
        + " "
        + last
        + " at {f0}: tracking {f1}, postage {f2} ("
        + SERVICES[service]["en"]
        + ").",
        "Etiqueta creada para " + first + " " + last + " en {f0}: seguimiento {f1}, franqueo {f2}.",
        "Label für " + first + " " + last + ", {f0}, erstellt: Sendungsnummer {f1}, Porto {f2}.",
        "Étiquette créée pour "
        + first
        + " "
        + last
        + ", {f0} : suivi {f1}, affranchissement {f2}.",
    )[lang]
    wrong_street = change_id(street, r)
    return Scenario(
        "shipping",
        lang,
        [
            tool(
                "create_shipment",
                "Buy a shipping label (Shippo-style API)",
                {
                    "address_to": obj(
                        {
                            "name": S,
                            "street1": S,
                            "city": S,
                            "state": S,
                            "zip": S,
                            "country": desc(S, "ISO 3166-1 alpha-2"),
                        },
                        ["name", "street1", "city", "zip", "country"],
                    ),
                    "parcel": obj(
                        {"weight": N, "mass_unit": enum("kg", "lb")}, ["weight", "mass_unit"]
                    ),
                    "servicelevel": enum(*SERVICES),
                    "insurance_amount": N,
                    "signature": B,
                },
                ["address_to", "parcel"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [
                    Call(
                        "create_shipment",
                        {
                            "address_to": to,
                            "parcel": {"weight": weight, "mass_unit": "kg"},
                            "servicelevel": service,
                        },
                    )
                ],
                [result],
            )
        ],  # fmt: skip
        answer,
        [
            (street, wrong_street),
            (tracking, change_id(tracking, r)),
            (money(cost, cur, lang), money(cost + 9, cur, lang)),
        ],  # fmt: skip
        L(
            "Pickup is scheduled for tomorrow morning.",
            "La recogida está programada para mañana por la mañana.",
            "Die Abholung ist für morgen früh geplant.",
            "L'enlèvement est prévu demain matin.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("address_to", "street1"), wrong_street),
            Slot("address", 0, 0, ("address_to", "zip"), change_id(postal, r)),
            Slot("enum", 0, 0, ("servicelevel",), r.choice([x for x in SERVICES if x != service])),
        ],
        invent=(0, 0, "insurance_amount", 250),
    )


HVAC = {
    "heat": L("heating", "calefacción", "Heizen", "chauffage"),
    "cool": L("cooling", "aire acondicionado", "Kühlen", "climatisation"),
    "eco": L("eco mode", "modo eco", "Eco-Modus", "mode éco"),
}


def d_thermostat(r: random.Random, lang: str) -> Scenario:
    device = r.choice(
        ["LivingRoomThermostat", "Upstairs_Hallway", "ThinQ_Connect_AC", "nest-kitchen-01"]
    )
    mode = r.choice(list(HVAC))
    temp = r.choice([19, 20, 21.5, 22, 23])
    h = r.choice([6, 7, 17, 18, 22])
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", device).replace("_", " ").replace("-", " ")
    request = L(
        f"Set the {words} to {temp}° in {HVAC[mode]['en']} starting at {spoken_time(h, 0, 'en', r)}.",
        f"Pon el termostato {words} a {str(temp).replace('.', ',')} °C en {HVAC[mode]['es']} desde {spoken_time(h, 0, 'es', r)}.",
        f"Stell das Thermostat {words} {spoken_time(h, 0, 'de', r)} auf {str(temp).replace('.', ',')} °C, {HVAC[mode]['de']}.",
        f"Règle le thermostat {words} sur {str(temp).replace('.', ',')} °C en {HVAC[mode]['fr']} {spoken_time(h, 0, 'fr', r)}.",
    )[lang]
    result = {"deviceId": device, "traits": {"ThermostatMode": {"mode": mode.upper()},
              "ThermostatTemperatureSetpoint": {"targetCelsius": temp}},
              "schedule": {"start": f"{h:02d}:00", "repeat": "DAILY"}, "online": True}  # fmt: skip
    answer = L(
        "Done: {f0} will switch to " + HVAC[mode]["en"] + " at {f1}, target {f2} °C, every day.",
        "Hecho: {f0} pasará a " + HVAC[mode]["es"] + " a las {f1}, objetivo {f2} °C.",
        "Erledigt: {f0} schaltet um {f1} auf " + HVAC[mode]["de"] + ", Ziel {f2} °C.",
        "C'est fait : {f0} passera en " + HVAC[mode]["fr"] + " à {f1}, consigne {f2} °C.",
    )[lang]
    temp_w = str(temp) if lang == "en" else str(temp).replace(".", ",")
    return Scenario(
        "smart_home",
        lang,
        [
            tool(
                "set_thermostat",
                "Set a smart thermostat's mode, setpoint and daily start time",
                {"device_id": S, "mode": enum(*HVAC), "target_celsius": N, "start_time": TIME},
                ["device_id", "mode", "target_celsius"],
            ),
            tool("list_devices", "List the home's devices", {"room": S}, []),
        ],  # fmt: skip
        request,
        [
            Step(
                [Call("list_devices", {})],
                [{"devices": [{"deviceId": device, "type": "THERMOSTAT", "displayName": words}]}],
            ),
            Step(
                [
                    Call(
                        "set_thermostat",
                        {
                            "device_id": device,
                            "mode": mode,
                            "target_celsius": temp,
                            "start_time": f"{h:02d}:00",
                        },
                    )
                ],
                [result],
            ),
        ],  # fmt: skip
        answer,
        [
            (words, words.replace(words.split()[0], "Garage")),
            (f"{h:02d}:00", f"{(h + 2) % 24:02d}:00"),
            (temp_w, str(temp + 3) if lang == "en" else str(temp + 3).replace(".", ",")),
        ],  # fmt: skip
        L(
            "That should cut your energy bill by about 15%.",
            "Eso reducirá tu factura un 15 % aproximadamente.",
            "Das spart rund 15 % Energiekosten.",
            "Cela réduira votre facture d'environ 15 %.",
        )[lang],
        slots=[
            Slot("time", 1, 0, ("start_time",), change_time(f"{h:02d}:00", r)),
            Slot("enum", 1, 0, ("mode",), r.choice([m for m in HVAC if m != mode])),
        ],
    )


def d_send_email(r: random.Random, lang: str) -> Scenario:
    first, last = r.choice(PEOPLE)
    to = email(first, last, "partner.example")
    day = a_date(r)
    h, mi = r.choice([(8, 0), (9, 30), (14, 0), (7, 45)])
    subject = L(
        "Contract renewal",
        "Renovación del contrato",
        "Vertragsverlängerung",
        "Renouvellement du contrat",
    )[lang]
    request = L(
        f'Email {to} with subject "{subject}" saying the draft is attached; send it on {spoken_date(day, lang, r)} at {spoken_time(h, mi, lang, r)}.',
        f'Escribe a {to} con asunto "{subject}" diciendo que va el borrador adjunto; envíalo el {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}.',
        f'Schreib {to} mit Betreff "{subject}", dass der Entwurf anhängt; versende sie am {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}.',
        f"Écris à {to}, objet « {subject} », que le brouillon est en pièce jointe ; envoie-le le {spoken_date(day, lang, r)} {spoken_time(h, mi, lang, r)}.",
    )[lang]
    body = L(
        "Hi, please find the draft attached.",
        "Hola, te adjunto el borrador.",
        "Hallo, anbei der Entwurf.",
        "Bonjour, vous trouverez le brouillon en pièce jointe.",
    )[lang]
    at = f"{day.isoformat()}T{h:02d}:{mi:02d}:00"
    msg_id = token(r, "", 16).lower()
    result = {"id": msg_id, "threadId": msg_id, "labelIds": ["SCHEDULED"], "scheduledFor": at,
              "to": [to], "subject": subject}  # fmt: skip
    answer = L(
        'Your email to {f0} ("' + subject + '") is scheduled for {f1} at {f2}.',
        "Tu correo a {f0} («" + subject + "») se enviará el {f1} a las {f2}.",
        "Deine E-Mail an {f0} („" + subject + "“) geht am {f1} um {f2} Uhr raus.",
        "Votre e-mail à {f0} (« " + subject + " ») partira le {f1} à {f2}.",
    )[lang]
    hm = f"{h:02d}:{mi:02d}"
    return Scenario(
        "email",
        lang,
        [
            tool(
                "send_email",
                "Send or schedule an email from the user's Gmail account",
                {"to": arr(S), "cc": arr(S), "subject": S, "body": S, "send_at": DATETIME},
                ["to", "subject", "body"],
            )
        ],  # fmt: skip
        request,
        [
            Step(
                [Call("send_email", {"to": [to], "subject": subject, "body": body, "send_at": at})],
                [result],
            )
        ],
        answer,
        [
            (to, to.replace("partner", "partners")),
            (written_date(day, lang), written_date(day + dt.timedelta(days=1), lang)),
            (hm, f"{h + 1:02d}:{mi:02d}"),
        ],  # fmt: skip
        L(
            "I also copied your manager.",
            "También he puesto en copia a tu responsable.",
            "Deine Vorgesetzte ist in Kopie.",
            "J'ai aussi mis votre responsable en copie.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("send_at",), change_date(at, r)),
            Slot("time", 0, 0, ("send_at",), change_time(at, r)),
            Slot("id", 0, 0, ("to", 0), to.replace(first.lower(), change_id(first.lower(), r))),
        ],
        invent=(0, 0, "cc", ["legal@northwind.example"]),
    )


DOMAINS: list[Callable[[random.Random, str], Scenario]] = [
    d_current_weather, d_forecast, d_create_event, d_list_events, d_crm_deal, d_lead_status,
    d_payment_intent, d_refund, d_invoice, d_firewall, d_dns, d_restart, d_incident, d_scale,
    d_geoip, d_geocode, d_directions, d_places, d_web_search, d_search_products, d_order_status,
    d_return, d_flights, d_hotel, d_restaurant, d_ticket, d_github, d_jira, d_time_off,
    d_transfer, d_fx, d_shipment, d_thermostat, d_send_email,
]  # fmt: skip


# ---------------------------------------------------------------- answers as agents write them

INTROS = {
    "en": ["Sure!", "Here's what I found:", "Good news:", "All set."],
    "es": ["¡Claro!", "Esto es lo que he encontrado:", "Listo."],
    "de": ["Klar!", "Folgendes habe ich gefunden:", "Alles klar."],
    "fr": ["Bien sûr !", "Voici ce que j'ai trouvé :", "C'est noté."],
}
SOURCES = {
    "en": ["According to {tool}: ", "Based on what {tool} returned: ", "From the {tool} result: "],
    "es": ["Según {tool}: ", "Con los datos de {tool}: "],
    "de": ["Laut {tool}: ", "Nach den Daten von {tool}: "],
    "fr": ["D'après {tool} : ", "Selon {tool} : "],
}
HEDGES = {
    "en": [
        "This is based on the data available right now, so it may change.",
        "I'd double-check this before relying on it.",
    ],
    "es": ["Ten en cuenta que los datos pueden cambiar."],
    "de": ["Die Angaben können sich noch ändern."],
    "fr": ["Ces informations peuvent encore évoluer."],
}
OFFERS = {
    "en": ["Let me know if you'd like me to change anything.", "Anything else I can help with?"],
    "es": ["¿Necesitas algo más?", "Si quieres cambiar algo, dímelo."],
    "de": ["Kann ich sonst noch helfen?", "Sag Bescheid, wenn du etwas ändern möchtest."],
    "fr": ["Autre chose ?", "Dites-moi si vous voulez modifier quelque chose."],
}
STYLES = ("plain", "intro", "source", "hedge", "offer", "bold", "json_restate")
SYSTEMS = [
    None,
    "You are a helpful assistant with access to tools. Use them to answer.",
    "You are Acme's operations copilot. Call tools when needed; never guess values.",
    "Answer in the user's language. Be concise.",
]


def key_words(key: str) -> str:
    """`temp_max_c` / `isDaytime` -> `temp max c` / `is daytime`: keys as agents write them."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").lower()


def scalar_leaves(value: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and depth < 2:
        found = []
        for key, item in value.items():
            found += scalar_leaves(item, key, depth + 1)
        return found
    if isinstance(value, str | int | float | bool) and value is not None and prefix:
        return [(prefix, value)]
    return []


def json_restatement(sc: Scenario, r: random.Random) -> tuple[str, list[tuple[Any, Any]]] | None:
    """ "The get_x call returned status success with location Boston, unit fahrenheit.": an
    English agent restating a JSON result key by key."""
    step = sc.steps[-1]
    result = step.results[-1]
    leaves = [
        (k, v)
        for k, v in scalar_leaves(result)
        if not (isinstance(v, str) and (len(v) > 40 or v.startswith("http")))
    ]
    numbers = [
        i
        for i, (_, v) in enumerate(leaves)
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    if len(leaves) < 2 or not numbers:
        return None
    chosen = sorted(set(r.sample(range(len(leaves)), min(4, len(leaves))) + [numbers[0]]))
    parts, facts = [], []
    for index in chosen:
        key, value = leaves[index]
        if isinstance(value, bool):
            shown = "true" if value else "false"
            parts.append(f"{key_words(key)} {shown}")
            continue
        if isinstance(value, int | float):
            parts.append(f"{key_words(key)} {{f{len(facts)}}}")
            facts.append((value, change_number(value, r)))
        else:
            parts.append(f"{key_words(key)} {value}")
    head = f"The {step.calls[-1].name} call returned "
    return head + ", ".join(parts) + ".", facts


def styled(sc: Scenario, r: random.Random) -> tuple[str, list[tuple[Any, Any]], str]:
    """(answer template, facts, style): the scenario's answer dressed as agents dress it."""
    style = r.choice(STYLES if sc.lang == "en" else STYLES[:-1])
    answer, facts = sc.answer, sc.facts
    tool_name = sc.steps[-1].calls[-1].name
    if style == "json_restate":
        restated = json_restatement(sc, r)
        if restated is None:
            style = "plain"
        else:
            answer, facts = restated
    if style == "intro":
        sep = "\n\n" if "\n" in answer or r.random() < 0.5 else " "
        answer = r.choice(INTROS[sc.lang]) + sep + answer
    elif style == "source":
        answer = r.choice(SOURCES[sc.lang]).format(tool=tool_name) + answer
    elif style == "hedge":
        answer = answer + " " + r.choice(HEDGES[sc.lang])
    elif style == "offer":
        answer = answer + "\n\n" + r.choice(OFFERS[sc.lang])
    elif style == "bold" and "**" not in answer:
        answer = re.sub(r"\{(f\d+)\}", r"**{\1}**", answer)
    return answer, facts, style


def fill(template: str, facts: list[tuple[Any, Any]], wrong: int | None = None) -> str:
    values = {f"f{i}": (w if i == wrong else right) for i, (right, w) in enumerate(facts)}
    return template.format(**{k: str(v) for k, v in values.items()})


def with_addition(answer: str, addition: str, lang: str) -> str:
    """The unsupported sentence placed where agents add such things: before a closing offer,
    as a last bullet of a list, or at the end."""
    for offer in OFFERS[lang]:
        if answer.endswith(offer):
            return answer[: -len(offer)].rstrip() + " " + addition + "\n\n" + offer
    if addition.startswith("- ") or answer.rstrip().splitlines()[-1].lstrip()[:2] in ("- ", "1."):
        return answer.rstrip() + "\n" + (addition if addition.startswith("- ") else "- " + addition)
    return answer.rstrip() + " " + addition


# ---------------------------------------------------------------- runs in six formats


def set_path(args: dict, path: tuple, value: Any) -> dict:
    out = json.loads(json.dumps(args))
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def get_path(args: Any, path: tuple) -> Any:
    for key in path:
        args = args[key]
    return args


def upper_types(schema: Any) -> Any:
    """Gemini's OpenAPI subset written with upper-case type names, as its docs do."""
    if isinstance(schema, dict):
        return {
            k: (v.upper() if k == "type" and isinstance(v, str) else upper_types(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [upper_types(v) for v in schema]
    return schema


def render(
    fmt: str,
    run_id: str,
    sc: Scenario,
    steps: list[Step],
    open_calls: list[Call] | None,
    answer: str | None,
    r: random.Random,
) -> dict:
    """One run in `fmt`: the completed `steps` (calls and results), then either `open_calls` (the
    run ends on them, before the tools ran) or the final `answer`."""
    ids = [
        [f"{k}{j}" for j in range(len(s.calls))]
        for k, s in enumerate([*steps, Step(open_calls or [], [])])
    ]
    prefix = {"openai": "call_", "anthropic": "toolu_01", "langchain": "call_", "openai_responses": "call_",
              "generic": "c", "gemini": ""}[fmt]  # fmt: skip
    salt = token(r, "", 6)
    ids = [[f"{prefix}{salt}{i}" for i in row] for row in ids]
    turns = [(s.calls, s.results, ids[k]) for k, s in enumerate(steps)]
    if open_calls:
        turns.append((open_calls, None, ids[len(steps)]))
    system = sc.system
    run: dict[str, Any] = {"run_id": run_id}
    if fmt == "openai":
        run["model"] = "gpt-4o-2024-08-06"
        run["tools"] = [{"type": "function", "function": t} for t in sc.tools]
        msgs: list[dict] = [{"role": "system", "content": system}] if system else []
        msgs.append({"role": "user", "content": sc.request})
        for calls, results, cid in turns:
            msgs.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid[j], "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)}}
                for j, c in enumerate(calls)]})  # fmt: skip
            for j, res in enumerate(results or []):
                msgs.append(
                    {
                        "role": "tool",
                        "tool_call_id": cid[j],
                        "content": json.dumps(res, ensure_ascii=False),
                    }
                )
        if answer is not None:
            msgs.append({"role": "assistant", "content": answer})
        run["messages"] = msgs
    elif fmt == "anthropic":
        run["model"] = "claude-sonnet-4-5"
        run["tools"] = [
            {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
            for t in sc.tools
        ]
        if system:
            run["system"] = system
        msgs = [{"role": "user", "content": sc.request}]
        for calls, results, cid in turns:
            blocks: list[dict] = []
            if r.random() < 0.5:
                blocks.append(
                    {
                        "type": "text",
                        "text": r.choice(["Let me check that.", "I'll look that up.", "On it."]),
                    }
                )
            blocks += [
                {"type": "tool_use", "id": cid[j], "name": c.name, "input": c.args}
                for j, c in enumerate(calls)
            ]
            msgs.append({"role": "assistant", "content": blocks})
            if results is not None:
                msgs.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": cid[j],
                     "content": json.dumps(res, ensure_ascii=False) if r.random() < 0.5
                     else [{"type": "text", "text": json.dumps(res, ensure_ascii=False)}]}
                    for j, res in enumerate(results)]})  # fmt: skip
        if answer is not None:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
        run["messages"] = msgs
    elif fmt == "gemini":
        run["model"] = "gemini-2.5-flash"
        decls = [dict(t) for t in sc.tools]
        if r.random() < 0.5:
            decls = [{**t, "parameters": upper_types(t["parameters"])} for t in decls]
        run["tools"] = [{"functionDeclarations": decls}]
        if system:
            run["systemInstruction"] = {"parts": [{"text": system}]}
        contents = [{"role": "user", "parts": [{"text": sc.request}]}]
        for calls, results, _ in turns:
            contents.append(
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": c.name, "args": c.args}} for c in calls],
                }
            )
            if results is not None:
                contents.append({"role": "user", "parts": [
                    {"functionResponse": {"name": c.name, "response": res if isinstance(res, dict) else {"result": res}}}
                    for c, res in zip(calls, results, strict=True)]})  # fmt: skip
        if answer is not None:
            contents.append({"role": "model", "parts": [{"text": answer}]})
        run["contents"] = contents
    elif fmt == "generic":
        if r.random() < 0.5:
            run["tools"] = [
                {"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]}
                for t in sc.tools
            ]
        else:
            run["tools"] = [{"type": "function", "function": t} for t in sc.tools]
        if system:
            run["system"] = system
        run["question"] = sc.request
        run["tool_calls"] = [{"id": cid[j], "name": c.name, "arguments": c.args}
                             for calls, _, cid in turns for j, c in enumerate(calls)]  # fmt: skip
        run["tool_results"] = [{"tool": c.name, "call_id": cid[j], "content": res}
                               for calls, results, cid in turns if results is not None
                               for j, (c, res) in enumerate(zip(calls, results, strict=True))]  # fmt: skip
        if answer is not None:
            run["answer"] = answer
    elif fmt == "langchain":
        run["tools"] = [{"type": "function", "function": t} for t in sc.tools]
        msgs = [{"type": "system", "data": {"content": system}}] if system else []
        msgs.append({"type": "human", "data": {"content": sc.request}})
        for calls, results, cid in turns:
            msgs.append({"type": "ai", "data": {"content": "", "tool_calls": [
                {"name": c.name, "args": c.args, "id": cid[j], "type": "tool_call"} for j, c in enumerate(calls)],
                "response_metadata": {"model_name": "gpt-4o-mini"}}})  # fmt: skip
            for j, (c, res) in enumerate(zip(calls, results or [], strict=False)):
                msgs.append({"type": "tool", "data": {"content": json.dumps(res, ensure_ascii=False),
                                                      "tool_call_id": cid[j], "name": c.name}})  # fmt: skip
        if answer is not None:
            msgs.append({"type": "ai", "data": {"content": answer}})
        run["messages"] = msgs
    else:  # openai_responses
        run["model"] = "gpt-4.1"
        run["tools"] = [{"type": "function", **t} for t in sc.tools]
        if system:
            run["instructions"] = system
        items: list[dict] = [
            {"role": "user", "content": [{"type": "input_text", "text": sc.request}]}
        ]
        for calls, results, cid in turns:
            items += [{"type": "function_call", "call_id": cid[j], "name": c.name,
                       "arguments": json.dumps(c.args, ensure_ascii=False)} for j, c in enumerate(calls)]  # fmt: skip
            items += [{"type": "function_call_output", "call_id": cid[j], "output": json.dumps(res, ensure_ascii=False)}
                      for j, res in enumerate(results or [])]  # fmt: skip
        output = []
        if answer is not None:
            output = [{"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": answer}]}]  # fmt: skip
        elif open_calls:  # the response being checked is the one that made the calls
            count = len(open_calls)
            items, output = items[:-count], items[-count:]
        run["input"], run["output"] = items, output
    return run


# ---------------------------------------------------------------- the set


def scenarios(count: int = SCENARIOS, seed: int = SEED) -> list[Scenario]:
    r = random.Random(seed)
    built = []
    for index in range(count):
        domain = DOMAINS[index % len(DOMAINS)]
        lang = LANGS[(index // len(DOMAINS) + index) % len(LANGS)]
        sc = domain(r, lang)
        sc.system = SYSTEMS[r.randrange(len(SYSTEMS))]
        built.append(sc)
    return built


def allowed_mutations(sc: Scenario) -> list[str]:
    kinds = [f"changed_{slot.kind}" for slot in sc.slots]
    if sc.invent is not None:
        kinds.append("invented_value")
    return sorted(set(kinds)) + ["contradiction", "unsupported_addition"]


def records(count: int = SCENARIOS, seed: int = SEED) -> list[dict]:
    r = random.Random(seed + 1)
    tally = dict.fromkeys(MUTATIONS, 0)
    out = []
    for index, sc in enumerate(scenarios(count, seed)):
        fmt = FORMATS[index % len(FORMATS)]
        base = f"v2-{index:04d}"
        template, facts, style = styled(sc, r)
        answer = fill(template, facts)
        meta = {"domain": sc.domain, "lang": sc.lang, "format": fmt, "style": style, "pair": base,
                "tools": [t["name"] for t in sc.tools],
                "calls": sum(len(s.calls) for s in sc.steps)}  # fmt: skip
        out.append({"id": base, "label": "correct", "kind": "valid_run", **meta,
                    "run": render(fmt, base, sc, sc.steps, None, answer, r)})  # fmt: skip
        last = sc.steps[-1]
        out.append({"id": f"{base}:call", "label": "valid_call", "kind": "valid_call", **meta,
                    "run": render(fmt, f"{base}:call", sc, sc.steps[:-1], last.calls, None, r)})  # fmt: skip
        options = allowed_mutations(sc)
        least = min(tally[k] for k in options)
        kind = r.choice([k for k in options if tally[k] == least])
        tally[kind] += 1
        run_id = f"{base}:{kind}"
        detail: dict[str, Any]
        if kind.startswith("changed_"):
            slot = r.choice([s for s in sc.slots if f"changed_{s.kind}" == kind])
            call = sc.steps[slot.step].calls[slot.call]
            before = get_path(call.args, slot.path)
            changed = slot.changed
            if isinstance(before, str) and isinstance(changed, str) and before == changed:
                raise SystemExit(f"{run_id}: the mutation changed nothing")
            calls = list(sc.steps[slot.step].calls)
            calls[slot.call] = Call(call.name, set_path(call.args, slot.path, changed))
            run = render(fmt, run_id, sc, sc.steps[: slot.step], calls, None, r)
            detail = {"tool": call.name, "argument": "/" + "/".join(map(str, slot.path)),
                      "user_value": before, "call_value": changed}  # fmt: skip
        elif kind == "invented_value":
            step, number, key, value = sc.invent
            call = sc.steps[step].calls[number]
            calls = list(sc.steps[step].calls)
            calls[number] = Call(call.name, {**call.args, key: value})
            run = render(fmt, run_id, sc, sc.steps[:step], calls, None, r)
            detail = {"tool": call.name, "argument": f"/{key}", "call_value": value}
        elif kind == "contradiction":
            wrong = r.randrange(len(facts))
            run = render(fmt, run_id, sc, sc.steps, None, fill(template, facts, wrong), r)
            detail = {"result_value": facts[wrong][0], "answer_value": facts[wrong][1]}
        else:
            run = render(
                fmt, run_id, sc, sc.steps, None, with_addition(answer, sc.addition, sc.lang), r
            )
            detail = {"addition": sc.addition}
        out.append(
            {"id": run_id, "label": kind, "kind": kind, **meta, "mutation": detail, "run": run}
        )
    return out


README = """# agent-runs-v2: held-out agent runs, valid and mutated

A detection set (`eval/detection.py`) of agent runs that **nothing in this project was fitted
on**: no threshold, rule, word list or model was chosen by looking at these records. It was
written and frozen before its first measurement; later changes to the checker are measured on
it, never tuned to it. A new version of the set is a new folder (`agent-runs-v3`), never an edit.

## How it was written

By `scripts/make_agent_runs_v2.py` (seed {seed}; rerunning it writes these files byte for
byte), whose templates were written for this set by an AI coding agent of the project's team,
without running the checker on any of them: {scenarios} scenarios
over {tools} tool declarations shaped like public APIs ({domains}), no record taken from a
public data set. Each scenario is a request in English, Spanish, German or French, the calls an
agent makes for it (one or two steps; a second step uses an id the first returned), the tools'
JSON results and an answer in the request's language, rendered in one of six run formats in
turn (OpenAI Chat Completions, Anthropic Messages, Gemini, generic, LangChain message dicts,
OpenAI Responses).

Values come in every kind and as people write them: dates ("Nov 1, 2026", "1. November 2026",
"01/11/2026" in the request; ISO 8601 in the call), times ("8pm", "um 20 Uhr", "à 20h"),
amounts with currencies ("$1,250.50", "1.250,50 €"; Stripe's cents in the call), addresses,
IPs and CIDRs, ids and keys, enums, booleans, nested objects and arrays. Results use snake_case,
camelCase and ENUM_CASE names that answers restate in words ("IN_TRANSIT" -> "in transit",
"ThinQ_Connect_AC" -> "ThinQ Connect AC"). Answers are written as agents write them: restatements,
markdown lists and bold, an intro ("Sure!"), the source named ("According to get_invoice: "),
a hedge, an offer of more help, or a JSON result restated key by key ("The get_forecast call
returned temp max c 21, ...").

## Records and labels

Each scenario gives three records (`pair` names the scenario):

| label | what | should be |
|---|---|---|
| `correct` | the whole run; the answer restates the results | emitted |
| `valid_call` | the same run ending on its last call, before the tool ran | not flagged |
| `changed_date`, `changed_time`, `changed_amount`, `changed_address`, `changed_ip`, `changed_id`, `changed_enum` | one argument value the user gave, changed by one character (one enum step for `enum`); the run ends on that call | flagged |
| `invented_value` | an optional argument set to a value nobody gave (an email, id, date, address, amount); ends on that call | flagged |
| `contradiction` | one value of the answer contradicts the result | flagged |
| `unsupported_addition` | the answer adds a sentence no result supports | flagged |

`mutation` says what was changed (the argument's JSON pointer, the user's value and the call's;
or the answer's value against the result's; or the added sentence). Counts: {counts}.

Flagged = the report's action is not `emit` (`agents.checking.detection.check_record`). The
bench `python -m bench agent_runs_v2` also reads each report: per call (a valid call rejected),
per mutation whether the changed call itself was rejected, and each rate by language and format.

## Targets

On this set, held out:

- valid tool calls flagged <= 0.03 (all causes);
- runs whose answer restates a valid result (`correct`) emitted >= 0.90;
- each mutation kind caught (flagged) >= 0.95, changed values of every kind included.
"""


def write(folder: Path, force: bool = False) -> dict:
    clear(folder, force, "-v3")
    rows = records()
    check_records(rows)
    counts = label_counts(rows)
    scs = scenarios()
    tools = sorted({t["name"] for sc in scs for t in sc.tools})
    domains = sorted({sc.domain for sc in scs})
    text = README.format(
        seed=SEED,
        scenarios=len(scs),
        tools=len(tools),
        domains=", ".join(domains),
        counts=", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
    )
    return freeze(
        folder,
        rows,
        text,
        {
            "name": SET_NAME,
            "description": "Held-out agent runs written from templates (seed "
            f"{SEED}): valid runs and calls, and runs with one changed, invented or "
            "contradicting value; flagged = the report's action is not emit. Nothing was "
            "fitted on it.",
            "checker": "agents.checking.detection.check_record",
            "overrides": {"agent_runs": {}},
            "source": "scripts/make_agent_runs_v2.py (written for this project; no public data)",
            "seed": SEED,
            "targets": TARGETS,
            "counts": dict(sorted(counts.items())),
            "tools": len(tools),
            "languages": sorted({sc.lang for sc in scs}),
            "formats": list(FORMATS),
        },
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "eval" / "sets" / SET_NAME)
    parser.add_argument("--force", action="store_true", help="rewrite an existing folder")
    args = parser.parse_args(argv)
    manifest = write(args.out, args.force)
    print(f"{args.out}: {sum(manifest['counts'].values())} records, {manifest['counts']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
