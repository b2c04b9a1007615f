# ruff: noqa: E501 (the templates are sentences in six languages, easier to read unwrapped)
"""Write the frozen detection set `eval/sets/agent-runs-v3`: agent runs over tools shaped like
public APIs that agent-runs-v2 does not have, valid and mutated, written before the set's first
measurement by an author who did not read the check's rules; nothing is fitted on it.

Usage:  .venv/bin/python scripts/make_agent_runs_v3.py [--out FOLDER] [--force]

Deterministic (seed SEED): the same records, byte for byte, on every run. The plumbing (the six
run formats, one-character changes, the record and manifest layout) is agent-runs-v2's, whose own
frozen-records test pins it; the tools, requests, values and answers are new. Each scenario (a
request in English, Spanish, German, French, Italian or Portuguese, the calls an agent makes, the
tools' results and an answer) gives three records: `correct` (the whole run), `valid_call` (the
run ending on its last call) and one mutated run: `changed_<kind>` (one argument value the user
gave, changed by one character or one enum step: date, time, amount, address, ip, id, enum),
`invented_value` (an optional argument nobody gave), `contradiction` (one answer value against
the result) or `unsupported_addition` (one sentence no result holds).
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from scripts.agent_run_sets import check_records, clear, freeze, label_counts
from scripts.make_agent_runs_v2 import (
    B,
    Call,
    I,
    N,
    S,
    Slot,
    Step,
    arr,
    change_date,
    change_digit,
    change_id,
    change_ip,
    change_number,
    desc,
    enum,
    get_path,
    obj,
    render,
    set_path,
    tool,
)

ROOT = Path(__file__).resolve().parents[1]
SET_NAME = "agent-runs-v3"
SEED = 20261129
SCENARIOS = 330
# six in twenty English, three Spanish, three German, four French, two Italian, two Portuguese
LANGS = ("en", "es", "de", "fr", "en", "it", "fr", "en", "es", "de",
         "en", "pt", "fr", "en", "de", "es", "en", "fr", "it", "pt")  # fmt: skip
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
LANG_NAMES = {"en": "English", "es": "Spanish", "de": "German", "fr": "French",
              "it": "Italian", "pt": "Portuguese"}  # fmt: skip


def T(en: str, es: str, de: str, fr: str, it: str, pt: str) -> dict[str, str]:  # noqa: N802
    return {"en": en, "es": es, "de": de, "fr": fr, "it": it, "pt": pt}


# ---------------------------------------------------------------- the day the run happens on

ZONES = {  # the user's zone as a system prompt names it (offsets from the tz database, DST included)
    "en": ["America/New_York", "America/Chicago", "Europe/London", "America/Los_Angeles"],
    "es": ["Europe/Madrid", "America/Mexico_City"],
    "de": ["Europe/Berlin", "Europe/Vienna", "Europe/Zurich"],
    "fr": ["Europe/Paris", "Europe/Brussels"],
    "it": ["Europe/Rome"],
    "pt": ["Europe/Lisbon", "America/Sao_Paulo"],
}
WEEKDAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "es": ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"],
    "de": ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
    "fr": ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
    "it": ["lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"],
    "pt": ["segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira",
           "sábado", "domingo"],
}  # fmt: skip
MONTHS = {
    "en": "January February March April May June July August September October November December",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
}
MONTHS = {k: v.split() for k, v in MONTHS.items()}


@dataclass
class Ctx:
    """What a scenario knows beside the request: today's date and the user's time zone (the
    system prompt states both, so relative dates resolve)."""

    lang: str
    today: dt.date
    zone: str

    def system(self, r: random.Random) -> str:
        day = WEEKDAYS["en"][self.today.weekday()]
        return r.choice(
            [
                f"You are a helpful assistant. Today is {day}, {self.today.isoformat()}. The user's time zone is {self.zone}.",
                f"Current date: {self.today.isoformat()} ({day}). User timezone: {self.zone}. Use the tools; do not make up values.",
                f"You are an operations assistant for Northwind. today={self.today.isoformat()} tz={self.zone}. Reply in the user's language.",
            ]
        )

    def tz(self, day: dt.date) -> str:
        """The zone's UTC offset on `day`, as +HH:MM."""
        return utc_offset(self.zone, day)

    def epoch(self, day: dt.date, h: int, mi: int) -> int:
        """Unix seconds of a local wall time in the user's zone."""
        local = dt.datetime(day.year, day.month, day.day, h, mi, tzinfo=ZoneInfo(self.zone))
        return int(local.timestamp())


def utc_offset(zone: str, day: dt.date) -> str:
    seconds = int(
        dt.datetime(day.year, day.month, day.day, 12, tzinfo=ZoneInfo(zone))
        .utcoffset()
        .total_seconds()
    )
    sign = "+" if seconds >= 0 else "-"
    return f"{sign}{abs(seconds) // 3600:02d}:{abs(seconds) % 3600 // 60:02d}"


def relative_day(ctx: Ctx, r: random.Random) -> tuple[dt.date, str]:
    """A day after today and the words a user says for it in their language."""
    lang = ctx.lang
    choice = r.randrange(4)
    if choice == 0:
        return ctx.today + dt.timedelta(days=1), T(
            "tomorrow", "mañana", "morgen", "demain", "domani", "amanhã"
        )[lang]
    if choice == 1:
        return ctx.today + dt.timedelta(days=2), T(
            "the day after tomorrow",
            "pasado mañana",
            "übermorgen",
            "après-demain",
            "dopodomani",
            "depois de amanhã",
        )[lang]
    if choice == 2:  # the coming weekday, never today's own weekday (that would be ambiguous)
        ahead = r.randrange(2, 7)
        day = ctx.today + dt.timedelta(days=ahead)
        name = WEEKDAYS[lang][day.weekday()]
        said = T(f"on {name}", f"el {name}", f"am {name}", f"{name}", f"{name}", f"na {name}")[lang]
        if lang == "pt" and day.weekday() >= 5:
            said = f"no {name}"
        return day, said
    day = ctx.today + dt.timedelta(days=r.randrange(5, 40))
    return day, spoken_date(day, lang, r)


def spoken_date(d: dt.date, lang: str, r: random.Random) -> str:
    m = MONTHS[lang][d.month - 1]
    forms = {
        "en": [
            f"{m} {d.day}",
            f"{m[:3]} {d.day}",
            f"{d.month}/{d.day}",
            f"the {ordinal(d.day)} of {m}",
        ],
        "es": [f"el {d.day} de {m}", f"el {d.day}/{d.month}"],
        "de": [f"am {d.day}. {m}", f"am {d.day}.{d.month}."],
        "fr": [f"le {d.day} {m}", f"le {d.day:02d}/{d.month:02d}"],
        "it": [f"il {d.day} {m}", f"il {d.day}/{d.month}"],
        "pt": [f"dia {d.day} de {m}", f"em {d.day:02d}/{d.month:02d}"],
    }[lang]
    return r.choice(forms)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def written_date(d: dt.date, lang: str) -> str:
    """A date as an agent writes it back."""
    m = MONTHS[lang][d.month - 1]
    wd = WEEKDAYS[lang][d.weekday()]
    return T(
        f"{wd}, {m} {d.day}",
        f"el {wd} {d.day} de {m}",
        f"{wd}, {d.day}. {m}",
        f"{wd} {d.day} {m}",
        f"{wd} {d.day} {m}",
        f"{wd}, {d.day} de {m}",
    )[lang]


def spoken_time(h: int, mi: int, lang: str, r: random.Random) -> str:
    twelve = h % 12 or 12
    if lang == "en":
        half = "am" if h < 12 else "pm"
        forms = [f"{twelve}:{mi:02d}{half}", f"{twelve}:{mi:02d} {half.upper()}"]
        if mi == 0:
            forms += [f"{twelve}{half}", f"{twelve} {half}"]
        return r.choice(forms)
    if lang == "es":
        forms = [f"a las {h}:{mi:02d}"]
        if mi == 0 and h >= 13:
            forms.append(f"a las {twelve} de la tarde" if h < 20 else f"a las {twelve} de la noche")
        return r.choice(forms)
    if lang == "de":
        return r.choice([f"um {h} Uhr" if mi == 0 else f"um {h}.{mi:02d} Uhr", f"um {h}:{mi:02d}"])
    if lang == "fr":
        return r.choice([f"à {h}h{mi:02d}" if mi else f"à {h}h", f"à {h}:{mi:02d}"])
    if lang == "it":
        return r.choice([f"alle {h}" if mi == 0 else f"alle {h}:{mi:02d}", f"alle {h}.{mi:02d}"])
    return r.choice([f"às {h}h{mi:02d}" if mi else f"às {h}h", f"às {h}:{mi:02d}"])


def written_time(h: int, mi: int, lang: str) -> str:
    if lang == "en":
        return f"{h % 12 or 12}:{mi:02d} {'AM' if h < 12 else 'PM'}"
    return f"{h}:{mi:02d}" if lang != "fr" else f"{h}h{mi:02d}"


SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£", "BRL": "R$", "MXN": "MX$", "CHF": "CHF"}


def money(value: float, cur: str, lang: str, r: random.Random | None = None) -> str:
    """An amount as people write it: $1,250.50 / 1.250,50 € / 1 250,50 € / R$ 1.250,50."""
    cents = round(value * 100) % 100
    whole = int(round(value * 100)) // 100
    variant = r.random() if r else 0.9
    if lang == "en":
        body = f"{whole:,}" + (f".{cents:02d}" if cents else "")
        if variant < 0.25 or cur not in SYMBOL:
            return f"{body} {cur}"
        return f"{SYMBOL[cur]}{body}"
    sep = {"fr": " ", "de": "."}.get(lang, ".")
    if lang == "de" and variant < 0.2:
        sep = ""
    body = f"{whole:,}".replace(",", sep) + (f",{cents:02d}" if cents else "")
    if cur == "BRL":
        return f"R$ {body}"
    if variant < 0.25:
        return f"{body} {cur}"
    if lang == "it" and variant < 0.45:
        return f"€ {body}" if cur == "EUR" else f"{body} {cur}"
    return f"{body} {SYMBOL.get(cur, cur)}"


def num(value: float, lang: str, places: int = 1) -> str:
    text = f"{value:.{places}f}"
    return text if lang == "en" else text.replace(".", ",")


def currency(lang: str, r: random.Random) -> str:
    return {"en": r.choice(["USD", "USD", "GBP"]), "pt": r.choice(["EUR", "BRL"])}.get(lang, "EUR")


PEOPLE = [("Ana", "Ruiz"), ("Ben", "Carter"), ("Chiara", "Bianchi"), ("Dmitri", "Volkov"),
          ("Elif", "Yilmaz"), ("Felix", "Hoffmann"), ("Grace", "Lee"), ("Hugo", "Lefèvre"),
          ("Inês", "Costa"), ("Jamal", "Wright"), ("Keiko", "Tanaka"), ("Lena", "Schulz"),
          ("Marco", "Rossi"), ("Nadia", "Haddad"), ("Olga", "Nowak"), ("Pablo", "Herrera")]  # fmt: skip


def mail(first: str, last: str, domain: str) -> str:
    """first.last@domain, accents dropped as mail systems do."""
    plain = unicodedata.normalize("NFKD", f"{first}.{last}".lower())
    return "".join(c for c in plain if c.isascii()) + "@" + domain


def hexid(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def digits(r: random.Random, n: int) -> str:
    return str(r.randrange(1, 10)) + "".join(r.choice("0123456789") for _ in range(n - 1))


def alnum(r: random.Random, n: int, upper: bool = False) -> str:
    alphabet = (
        "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789" if upper else "abcdefghijkmnopqrstuvwxyz0123456789"
    )
    return "".join(r.choice(alphabet) for _ in range(n))


def change_epoch(value: int, r: random.Random) -> int:
    """One digit of a Unix time changed, so the instant moves by minutes to hours."""
    text = str(value)
    return int(change_digit(text, r, [len(text) - 4, len(text) - 5]))


def change_text_digit(text: str, fragment: str, r: random.Random) -> str:
    """`text` with one digit of `fragment` (found in it) changed."""
    at = text.index(fragment)
    spots = [at + i for i, c in enumerate(fragment) if c.isdigit()]
    return change_digit(text, r, spots)


def change_address(address: str, r: random.Random) -> str:
    """A house number or postcode digit changed."""
    return change_digit(address, r)


@dataclass
class Scenario:
    domain: str
    lang: str
    tools: list[dict]
    request: str
    steps: list[Step]
    answer: str  # prose with {f0}, {f1}… where the facts go
    facts: list[tuple[Any, Any]]  # (as written, contradicting)
    addition: str
    slots: list[Slot] = field(default_factory=list)
    invent: tuple[int, int, str, Any] | None = None
    system: str | None = None
    rows: list[tuple[str, int]] = field(default_factory=list)  # (label, fact) for lists/tables


# ---------------------------------------------------------------- the domains
# Each builds one scenario from the seeded random source and the run's context: the tools as the
# public API declares them, what the user asks, the calls, the results and the agent's answer.


def d_slack_schedule(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    first, last = r.choice(PEOPLE)
    addr = mail(first, last, "northwind.io")
    day, said_day = relative_day(ctx, r)
    h, mi = r.choice([(9, 0), (9, 30), (8, 15), (14, 0), (17, 45)])
    said_time = spoken_time(h, mi, lang, r)
    text = T(
        "Reminder: the quarterly numbers are due today",
        "Recordatorio: hoy hay que entregar las cifras del trimestre",
        "Erinnerung: heute sind die Quartalszahlen fällig",
        "Rappel : les chiffres du trimestre sont attendus aujourd'hui",
        "Promemoria: oggi vanno consegnati i numeri del trimestre",
        "Lembrete: os números do trimestre são para hoje",
    )[lang]
    request = T(
        f'can you DM {addr} on slack {said_day} at {said_time}: "{text}"',
        f'Mándale un mensaje por Slack a {addr} {said_day} {said_time} que diga: "{text}"',
        f'Schick {addr} {said_day} {said_time} eine Slack-Nachricht: "{text}"',
        f"Programme un message Slack pour {addr} {said_day} {said_time} : « {text} »",
        f'Programma un messaggio Slack per {addr} {said_day} {said_time}: "{text}"',
        f'Agenda uma mensagem no Slack para {addr} {said_day} {said_time}: "{text}"',
    )[lang]
    uid = "U0" + alnum(r, 9, upper=True)
    post_at = ctx.epoch(day, h, mi)
    msg_id = "Q0" + alnum(r, 9, upper=True)
    res1 = {"ok": True, "user": {"id": uid, "team_id": "T0" + alnum(r, 8, upper=True), "name": first.lower(),
            "real_name": f"{first} {last}", "tz": ctx.zone, "is_bot": False, "deleted": False}}  # fmt: skip
    res2 = {"ok": True, "channel": uid, "scheduled_message_id": msg_id, "post_at": post_at,
            "message": {"text": text, "type": "message", "bot_id": "B0" + alnum(r, 8, upper=True)}}  # fmt: skip
    when = f"{written_date(day, lang)}, {written_time(h, mi, lang)}"
    answer = T(
        "Done: your message to {f0} is scheduled for {f1} (scheduled message ID {f2}).",
        "Listo: el mensaje para {f0} queda programado para {f1} (ID del mensaje programado: {f2}).",
        "Erledigt: Die Nachricht an {f0} ist für {f1} geplant (ID der geplanten Nachricht: {f2}).",
        "C'est fait : le message pour {f0} est programmé pour {f1} (identifiant : {f2}).",
        "Fatto: il messaggio per {f0} è programmato per {f1} (ID del messaggio programmato: {f2}).",
        "Pronto: a mensagem para {f0} está agendada para {f1} (ID da mensagem agendada: {f2}).",
    )[lang]
    wrong = f"{written_date(day, lang)}, {written_time((h + 1) % 24, mi, lang)}"
    return Scenario(
        "chat",
        lang,
        [
            tool(
                "users_lookupByEmail",
                "Slack: find a user with an email address",
                {"email": S},
                ["email"],
            ),
            tool(
                "chat_scheduleMessage",
                "Slack: schedule a message to be sent to a channel or DM at a later time",
                {
                    "channel": desc(S, "Channel, private group or DM channel ID to send to"),
                    "text": S,
                    "post_at": desc(I, "Unix timestamp (seconds) when the message is sent"),
                    "thread_ts": desc(S, "Parent message's ts to reply in a thread"),
                    "unfurl_links": B,
                },
                ["channel", "post_at", "text"],
            ),
        ],
        request,
        [
            Step([Call("users_lookupByEmail", {"email": addr})], [res1]),
            Step(
                [Call("chat_scheduleMessage", {"channel": uid, "text": text, "post_at": post_at})],
                [res2],
            ),
        ],
        answer,
        [
            (f"{first} {last}", f"{first} {r.choice(PEOPLE)[1]}"),
            (when, wrong),
            (msg_id, change_id(msg_id, r)),
        ],
        T(
            "They usually reply within the hour.",
            "Suele contestar en menos de una hora.",
            "Meist antwortet sie innerhalb einer Stunde.",
            "Cette personne répond en général dans l'heure.",
            "Di solito risponde entro un'ora.",
            "Essa pessoa costuma responder em menos de uma hora.",
        )[lang],
        slots=[
            Slot("time", 1, 0, ("post_at",), change_epoch(post_at, r)),
            Slot("id", 0, 0, ("email",), change_id(addr, r)),
        ],
        invent=(1, 0, "thread_ts", f"{post_at - 86400 * 3}.{digits(r, 6)}"),
        rows=[
            (
                T(
                    "Recipient",
                    "Destinatario",
                    "Empfänger",
                    "Destinataire",
                    "Destinatario",
                    "Destinatário",
                )[lang],
                0,
            ),
            (T("When", "Cuándo", "Wann", "Quand", "Quando", "Quando")[lang], 1),
            ("ID", 2),
        ],
    )


LINEAR_PRIORITY = {1: T("urgent", "urgente", "dringend", "urgente", "urgente", "urgente"),
                   2: T("high", "alta", "hoch", "haute", "alta", "alta"),
                   3: T("medium", "media", "mittel", "moyenne", "media", "média"),
                   4: T("low", "baja", "niedrig", "basse", "bassa", "baixa")}  # fmt: skip


def d_linear_issue(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    team = r.choice(["ENG", "MOB", "WEB", "OPS"])
    due, said_due = relative_day(ctx, r)
    prio = r.choice([1, 2, 3, 4])
    pw = LINEAR_PRIORITY[prio][lang]
    title = T(
        "Checkout button unresponsive on Safari",
        "El botón de pago no responde en Safari",
        "Checkout-Button reagiert nicht in Safari",
        "Le bouton de paiement ne répond pas sous Safari",
        "Il pulsante di pagamento non risponde su Safari",
        "Botão de pagamento não responde no Safari",
    )[lang]
    request = T(
        f"open a linear issue in {team}: '{title}', {pw} priority, due {said_due}",
        f"Crea una incidencia en Linear en el equipo {team}: «{title}», prioridad {pw}, para {said_due}",
        f"Leg in Linear im Team {team} ein Issue an: „{title}“, Priorität {pw}, fällig {said_due}",
        f"Crée un ticket Linear dans l'équipe {team} : « {title} », priorité {pw}, échéance {said_due}",
        f'Apri una issue su Linear nel team {team}: "{title}", priorità {pw}, scadenza {said_due}',
        f'Abre uma issue no Linear na equipe {team}: "{title}", prioridade {pw}, prazo {said_due}',
    )[lang]
    team_id = f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}"
    number = r.randrange(100, 2400)
    res1 = {
        "data": {
            "teams": {
                "nodes": [
                    {
                        "id": team_id,
                        "key": team,
                        "name": {
                            "ENG": "Engineering",
                            "MOB": "Mobile",
                            "WEB": "Web",
                            "OPS": "Operations",
                        }[team],
                    }
                ]
            }
        }
    }
    res2 = {
        "data": {
            "issueCreate": {
                "success": True,
                "issue": {
                    "id": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
                    "identifier": f"{team}-{number}",
                    "title": title,
                    "priority": prio,
                    "priorityLabel": {1: "Urgent", 2: "High", 3: "Medium", 4: "Low"}[prio],
                    "dueDate": due.isoformat(),
                    "state": {"name": "Todo", "type": "unstarted"},
                    "url": f"https://linear.app/northwind/issue/{team}-{number}",
                },
            }
        }
    }
    answer = T(
        'Created **{f0}**: "' + title + "\" with {f1} priority, due {f2}. It's in Todo.",
        "He creado **{f0}**: «" + title + "», prioridad {f1}, con vencimiento {f2}. Está en Todo.",
        "Angelegt: **{f0}** „" + title + "“, Priorität {f1}, fällig {f2}. Status: Todo.",
        "Ticket **{f0}** créé : « " + title + " », priorité {f1}, échéance {f2}. Statut : Todo.",
        'Ho creato **{f0}**: "' + title + '", priorità {f1}, scadenza {f2}. Stato: Todo.',
        'Criei **{f0}**: "' + title + '", prioridade {f1}, prazo {f2}. Estado: Todo.',
    )[lang]
    other = r.choice([p for p in LINEAR_PRIORITY if p != prio])
    return Scenario(
        "issues",
        lang,
        [
            tool(
                "linear_teams",
                "Linear GraphQL: list teams, optionally filtered by key",
                {"key": S},
                [],
            ),
            tool(
                "linear_issue_create",
                "Linear GraphQL issueCreate mutation",
                {
                    "teamId": S,
                    "title": S,
                    "description": S,
                    "priority": desc(
                        {"type": "integer", "enum": [0, 1, 2, 3, 4]},
                        "0 = No priority, 1 = Urgent, 2 = High, 3 = Medium, 4 = Low",
                    ),
                    "dueDate": desc(S, "TimelessDate, YYYY-MM-DD"),
                    "assigneeId": S,
                    "labelIds": arr(S),
                },
                ["teamId", "title"],
            ),
        ],
        request,
        [
            Step([Call("linear_teams", {"key": team})], [res1]),
            Step(
                [
                    Call(
                        "linear_issue_create",
                        {
                            "teamId": team_id,
                            "title": title,
                            "priority": prio,
                            "dueDate": due.isoformat(),
                        },
                    )
                ],
                [res2],
            ),
        ],
        answer,
        [
            (f"{team}-{number}", f"{team}-{number + r.choice([1, 10, -3])}"),
            (pw, LINEAR_PRIORITY[other][lang]),
            (
                written_date(due, lang),
                written_date(due + dt.timedelta(days=r.choice([1, 7])), lang),
            ),
        ],
        T(
            "It has been added to the current sprint.",
            "Se ha añadido al sprint actual.",
            "Es wurde dem aktuellen Sprint hinzugefügt.",
            "Il a été ajouté au sprint en cours.",
            "È stata aggiunta allo sprint corrente.",
            "Foi adicionada ao sprint atual.",
        )[lang],
        slots=[
            Slot("date", 1, 0, ("dueDate",), change_date(due.isoformat(), r)),
            Slot("enum", 1, 0, ("priority",), prio + 1 if prio < 4 else 3),
            Slot("id", 0, 0, ("key",), change_id(team, r)),
        ],
        invent=(
            1,
            0,
            "assigneeId",
            f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
        ),
        rows=[
            ("Issue", 0),
            (
                T("Priority", "Prioridad", "Priorität", "Priorité", "Priorità", "Prioridade")[lang],
                1,
            ),
            (T("Due", "Vence", "Fällig", "Échéance", "Scadenza", "Prazo")[lang], 2),
        ],
    )


def d_notion_query(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    db = hexid(r, 32)
    dashed = f"{db[:8]}-{db[8:12]}-{db[12:16]}-{db[16:20]}-{db[20:]}"
    status = r.choice(["In progress", "Blocked", "Not started"])
    sw = {
        "In progress": T(
            "in progress", "en curso", "in Bearbeitung", "en cours", "in corso", "em andamento"
        ),
        "Blocked": T("blocked", "bloqueadas", "blockiert", "bloquées", "bloccate", "bloqueadas"),
        "Not started": T(
            "not started",
            "sin empezar",
            "nicht begonnen",
            "non commencées",
            "non iniziate",
            "não iniciadas",
        ),
    }[status][lang]
    url = f"https://www.notion.so/northwind/Roadmap-{db}?v={hexid(r, 32)}"
    request = T(
        f"which tasks are {sw} in this db? {url}",
        f"¿Qué tareas están {sw} en esta base de datos? {url}",
        f"Welche Aufgaben sind in dieser Datenbank {sw}? {url}",
        f"Quelles tâches sont {sw} dans cette base ? {url}",
        f"Quali attività sono {sw} in questo database? {url}",
        f"Quais tarefas estão {sw} neste banco de dados? {url}",
    )[lang]
    names = r.sample(
        [
            "Migrate billing to v2 API",
            "Onboarding email sequence",
            "SOC 2 evidence export",
            "Dark mode for dashboard",
            "Retire legacy cron jobs",
            "Price page A/B test",
        ],
        2,
    )
    owners = r.sample(PEOPLE, 2)
    dues = [ctx.today + dt.timedelta(days=r.randrange(3, 30)) for _ in names]
    results = [
        {
            "object": "page",
            "id": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
            "created_time": f"{(ctx.today - dt.timedelta(days=40)).isoformat()}T09:12:00.000Z",
            "properties": {
                "Name": {"type": "title", "title": [{"plain_text": n}]},
                "Status": {"type": "status", "status": {"name": status, "color": "blue"}},
                "Owner": {"type": "people", "people": [{"name": f"{o[0]} {o[1]}"}]},
                "Due": {"type": "date", "date": {"start": d.isoformat(), "end": None}},
            },
        }
        for n, o, d in zip(names, owners, dues, strict=True)
    ]
    result = {
        "object": "list",
        "results": results,
        "next_cursor": None,
        "has_more": False,
        "type": "page_or_database",
    }
    intro = T(
        f"Two tasks are {sw}:",
        f"Hay dos tareas {sw}:",
        f"Zwei Aufgaben sind {sw}:",
        f"Deux tâches sont {sw} :",
        f"Due attività sono {sw}:",
        f"Duas tarefas estão {sw}:",
    )[lang]
    due_w = T("due", "vence el", "fällig am", "échéance", "scadenza", "prazo")[lang]
    answer = (
        intro
        + "\n\n"
        + "\n".join(
            f"- **{n}** ({o[0]} {o[1]}), {due_w} {{f{i}}}"
            for i, (n, o) in enumerate(zip(names, owners, strict=True))
        )
    )
    slots = [Slot("id", 0, 0, ("database_id",), change_id(dashed, r))]
    return Scenario(
        "docs",
        lang,
        [
            tool(
                "notion_query_database",
                "Notion API: query a database with a filter; returns a paginated list of pages",
                {
                    "database_id": S,
                    "filter": obj({"property": S, "status": obj({"equals": S})}),
                    "sorts": arr(
                        obj({"property": S, "direction": enum("ascending", "descending")})
                    ),
                    "start_cursor": S,
                    "page_size": desc(I, "Max 100"),
                },
                ["database_id"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "notion_query_database",
                        {
                            "database_id": dashed,
                            "filter": {"property": "Status", "status": {"equals": status}},
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [(written_date(d, lang), written_date(d + dt.timedelta(days=2), lang)) for d in dues],
        "- "
        + T(
            "Both are on track for the next release.",
            "Las dos van en plazo para la próxima versión.",
            "Beide liegen für das nächste Release im Plan.",
            "Les deux sont dans les temps pour la prochaine version.",
            "Entrambe sono in linea con il prossimo rilascio.",
            "As duas estão no prazo para a próxima versão.",
        )[lang],
        slots=slots,
        invent=(
            0,
            0,
            "start_cursor",
            f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
        ),
    )


def d_gmail(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    first, last = r.choice(PEOPLE)
    sender = mail(first, last, r.choice(["acme-logistics.com", "contoso.eu", "globex.com"]))
    since = ctx.today - dt.timedelta(days=r.randrange(3, 20))
    said = spoken_date(since, lang, r)
    request = T(
        f"did {sender} email me anything since {said}? whats the latest one about",
        f"¿Me ha escrito {sender} desde {said}? ¿De qué va el último correo?",
        f"Hat mir {sender} seit {said.replace('am ', '')} etwas geschickt? Worum geht es in der letzten Mail?",
        f"Est-ce que {sender} m'a écrit depuis {said} ? De quoi parle le dernier mail ?",
        f"{sender} mi ha scritto qualcosa dal {said.replace('il ', '')}? Di cosa parla l'ultima mail?",
        f"O {sender} me mandou algum e-mail desde {said.replace('dia ', '').replace('em ', '')}? Sobre o que é o último?",
    )[lang]
    q = f"from:{sender} after:{since.year}/{since.month:02d}/{since.day:02d}"
    ids = [hexid(r, 16) for _ in range(3)]
    res1 = {"messages": [{"id": i, "threadId": i} for i in ids], "resultSizeEstimate": 3}
    sent = ctx.today - dt.timedelta(days=1)
    h = r.randrange(8, 18)
    ms = ctx.epoch(sent, h, 5) * 1000
    subject = r.choice(
        ["Revised delivery schedule", "Invoice 4471 overdue", "Contract renewal – next steps"]
    )
    res2 = {
        "id": ids[0],
        "threadId": ids[0],
        "labelIds": ["INBOX", "UNREAD"],
        "internalDate": str(ms),
        "snippet": f"Hi, please find attached the {subject.lower()}. Let me know by Friday if it works for you.",
        "payload": {
            "mimeType": "multipart/mixed",
            "headers": [
                {"name": "From", "value": f"{first} {last} <{sender}>"},
                {"name": "Subject", "value": subject},
                {
                    "name": "Date",
                    "value": f"{WEEKDAYS['en'][sent.weekday()][:3]}, {sent.day} {MONTHS['en'][sent.month - 1][:3]} {sent.year} {h:02d}:05:00 {ctx.tz(sent).replace(':', '')}",
                },
            ],
        },
    }
    answer = T(
        "Yes: {f0} messages from "
        + first
        + ' since then. The latest, "{f1}", arrived {f2}; '
        + first
        + " asks you to confirm by Friday whether the attachment works for you.",
        "Sí: {f0} correos de "
        + first
        + " desde entonces. El último, «{f1}», llegó {f2}; "
        + first
        + " te pide que confirmes antes del viernes si te va bien lo adjunto.",
        "Ja: {f0} Nachrichten von "
        + first
        + " seitdem. Die letzte, „{f1}“, kam {f2}; "
        + first
        + " bittet dich, bis Freitag zu bestätigen, ob der Anhang passt.",
        "Oui : {f0} messages de "
        + first
        + " depuis. Le dernier, « {f1} », est arrivé {f2} ; "
        + first
        + " vous demande de confirmer d'ici vendredi si la pièce jointe vous convient.",
        "Sì: {f0} messaggi di "
        + first
        + ' da allora. L\'ultimo, "{f1}", è arrivato {f2}; '
        + first
        + " chiede di confermare entro venerdì se l'allegato va bene.",
        "Sim: {f0} mensagens de "
        + first
        + ' desde então. A última, "{f1}", chegou {f2}; '
        + first
        + " pede que confirme até sexta se o anexo serve.",
    )[lang]
    yesterday = T("yesterday", "ayer", "gestern", "hier", "ieri", "ontem")[lang]
    other_subject = r.choice(
        [
            s
            for s in [
                "Revised delivery schedule",
                "Invoice 4471 overdue",
                "Contract renewal – next steps",
            ]
            if s != subject
        ]
    )
    return Scenario(
        "email",
        lang,
        [
            tool(
                "gmail_users_messages_list",
                "Gmail API users.messages.list: message ids matching a Gmail search query",
                {
                    "userId": desc(S, "'me' for the authenticated user"),
                    "q": desc(S, "Gmail search syntax, e.g. from:x after:YYYY/MM/DD"),
                    "maxResults": I,
                    "labelIds": arr(S),
                    "includeSpamTrash": B,
                },
                ["userId"],
            ),
            tool(
                "gmail_users_messages_get",
                "Gmail API users.messages.get",
                {"userId": S, "id": S, "format": enum("minimal", "full", "raw", "metadata")},
                ["userId", "id"],
            ),
        ],
        request,
        [
            Step([Call("gmail_users_messages_list", {"userId": "me", "q": q})], [res1]),
            Step(
                [
                    Call(
                        "gmail_users_messages_get", {"userId": "me", "id": ids[0], "format": "full"}
                    )
                ],
                [res2],
            ),
        ],
        answer,
        [
            (3, 4),
            (subject, other_subject),
            (
                yesterday,
                T(
                    "this morning",
                    "esta mañana",
                    "heute Morgen",
                    "ce matin",
                    "stamattina",
                    "hoje de manhã",
                )[lang],
            ),
        ],
        T(
            "It's marked as important.",
            "Está marcado como importante.",
            "Sie ist als wichtig markiert.",
            "Il est marqué comme important.",
            "È contrassegnata come importante.",
            "Está marcada como importante.",
        )[lang],
        slots=[
            Slot(
                "date",
                0,
                0,
                ("q",),
                q.replace(
                    since.isoformat().replace("-", "/"),
                    change_date(since.isoformat(), r).replace("-", "/"),
                ),
            ),
            Slot(
                "id",
                0,
                0,
                ("q",),
                q.replace(sender, change_id(sender.split("@")[0], r) + "@" + sender.split("@")[1]),
            ),
        ],
        invent=(0, 0, "labelIds", ["Label_" + digits(r, 19)]),
    )


DRIVE_ROLES = {"reader": T("view", "ver", "ansehen", "consulter", "vedere", "ver"),
               "commenter": T("comment", "comentar", "kommentieren", "commenter", "commentare", "comentar"),
               "writer": T("edit", "editar", "bearbeiten", "modifier", "modificare", "editar")}  # fmt: skip


def d_drive_share(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    first, last = r.choice(PEOPLE)
    addr = mail(first, last, r.choice(["gmail.com", "contoso.eu", "northwind.io"]))
    role = r.choice(list(DRIVE_ROLES))
    name = T(
        "Budget 2027",
        "Presupuesto 2027",
        "Budget 2027",
        "Budget 2027",
        "Budget 2027",
        "Orçamento 2027",
    )[lang]
    rw = DRIVE_ROLES[role][lang]
    request = T(
        f"share the '{name}' sheet with {addr}, they should be able to {rw} only",
        f"Comparte la hoja «{name}» con {addr}; solo debe poder {rw}",
        f"Teile die Tabelle „{name}“ mit {addr}, nur mit dem Recht zu {rw}",
        f"Partage la feuille « {name} » avec {addr}, en droit de {rw} seulement",
        f'Condividi il foglio "{name}" con {addr}, solo per {rw}',
        f'Compartilha a planilha "{name}" com {addr}, só para {rw}',
    )[lang]
    fid = "1" + alnum(r, 43).replace("l", "L")
    res1 = {
        "kind": "drive#fileList",
        "incompleteSearch": False,
        "files": [
            {
                "kind": "drive#file",
                "id": fid,
                "name": name,
                "mimeType": "application/vnd.google-apps.spreadsheet",
                "modifiedTime": f"{(ctx.today - dt.timedelta(days=2)).isoformat()}T16:41:07.512Z",
            }
        ],
    }
    pid = digits(r, 20)
    res2 = {
        "kind": "drive#permission",
        "id": pid,
        "type": "user",
        "emailAddress": addr,
        "role": role,
        "displayName": f"{first} {last}",
        "pendingOwner": False,
    }
    answer = T(
        'Shared "' + name + '" with {f0} as {f1}.',
        "He compartido «" + name + "» con {f0} como {f1}.",
        "„" + name + "“ ist jetzt mit {f0} geteilt, Rolle: {f1}.",
        "« " + name + " » est partagé avec {f0} en tant que {f1}.",
        'Ho condiviso "' + name + '" con {f0} come {f1}.',
        'Compartilhei "' + name + '" com {f0} como {f1}.',
    )[lang]
    others = [x for x in DRIVE_ROLES if x != role]
    return Scenario(
        "files",
        lang,
        [
            tool(
                "drive_files_list",
                "Google Drive API files.list",
                {"q": desc(S, "Search query, e.g. name = 'x'"), "pageSize": I, "fields": S},
                [],
            ),
            tool(
                "drive_permissions_create",
                "Google Drive API permissions.create: share a file",
                {
                    "fileId": S,
                    "role": enum(
                        "owner", "organizer", "fileOrganizer", "writer", "commenter", "reader"
                    ),
                    "type": enum("user", "group", "domain", "anyone"),
                    "emailAddress": S,
                    "sendNotificationEmail": B,
                    "emailMessage": S,
                    "expirationTime": desc(S, "RFC 3339 date-time"),
                },
                ["fileId", "role", "type"],
            ),
        ],
        request,
        [
            Step(
                [
                    Call(
                        "drive_files_list",
                        {"q": f"name = '{name}' and trashed = false", "pageSize": 5},
                    )
                ],
                [res1],
            ),
            Step(
                [
                    Call(
                        "drive_permissions_create",
                        {"fileId": fid, "role": role, "type": "user", "emailAddress": addr},
                    )
                ],
                [res2],
            ),
        ],
        answer,
        [(addr, change_id(addr, r)), (role, r.choice(others))],
        T(
            "They already had access to last year's version.",
            "Ya tenía acceso a la versión del año pasado.",
            "Auf die Version vom letzten Jahr hatte die Person schon Zugriff.",
            "Cette personne avait déjà accès à la version de l'an dernier.",
            "Aveva già accesso alla versione dell'anno scorso.",
            "Essa pessoa já tinha acesso à versão do ano passado.",
        )[lang],
        slots=[
            Slot(
                "enum",
                1,
                0,
                ("role",),
                {"reader": "commenter", "commenter": "writer", "writer": "commenter"}[role],
            ),
            Slot("id", 1, 0, ("emailAddress",), change_id(addr, r)),
        ],
        invent=(
            1,
            0,
            "expirationTime",
            f"{(ctx.today + dt.timedelta(days=30)).isoformat()}T00:00:00Z",
        ),
    )


STREETS = {
    "en": [("{n} Mission Street", "San Francisco", "CA", "94105", "US"), ("{n} Wabash Avenue", "Chicago", "IL", "60611", "US"),
           ("{n} Newbury Street", "Boston", "MA", "02116", "US"), ("{n} Oxford Road", "Manchester", "", "M1 5QA", "GB")],
    "es": [("Calle de Fuencarral {n}", "Madrid", "", "28004", "ES"), ("Carrer de Mallorca {n}", "Barcelona", "", "08036", "ES"),
           ("Avenida Reforma {n}", "Ciudad de México", "CDMX", "06600", "MX")],
    "de": [("Torstraße {n}", "Berlin", "", "10119", "DE"), ("Sendlinger Straße {n}", "München", "", "80331", "DE"),
           ("Mariahilfer Straße {n}", "Wien", "", "1060", "AT")],
    "fr": [("{n} rue Oberkampf", "Paris", "", "75011", "FR"), ("{n} rue Sainte-Catherine", "Bordeaux", "", "33000", "FR"),
           ("{n} avenue Louise", "Bruxelles", "", "1050", "BE")],
    "it": [("Via Torino {n}", "Milano", "MI", "20123", "IT"), ("Via del Corso {n}", "Roma", "RM", "00186", "IT")],
    "pt": [("Rua Augusta {n}", "Lisboa", "", "1100-053", "PT"), ("Rua Oscar Freire {n}", "São Paulo", "SP", "01426-001", "BR")],
}  # fmt: skip


def street(r: random.Random, lang: str) -> tuple[str, str, str, str, str]:
    line, city, region, postal, country = r.choice(STREETS[lang])
    return line.format(n=r.randrange(3, 290)), city, region, postal, country


def d_shopify_address(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    number = r.randrange(1001, 1999)
    line, city, region, postal, country = street(r, lang)
    request = T(
        f"Customer on order #{number} moved, pls change the shipping address to {line}, {postal} {city}",
        f"El cliente del pedido #{number} se ha mudado: cambia la dirección de envío a {line}, {postal} {city}",
        f"Die Kundin von Bestellung #{number} ist umgezogen, bitte Lieferadresse ändern auf {line}, {postal} {city}",
        f"Le client de la commande #{number} a déménagé : mets l'adresse de livraison à jour, {line}, {postal} {city}",
        f"Il cliente dell'ordine #{number} ha traslocato, cambia l'indirizzo di spedizione in {line}, {postal} {city}",
        f"O cliente do pedido #{number} mudou de casa, altera a morada de entrega para {line}, {postal} {city}",
    )[lang]
    oid = int(digits(r, 13))
    first, last = r.choice(PEOPLE)
    total = f"{r.randrange(20, 400)}.{r.choice(['00', '50', '95', '99'])}"
    cur = currency(lang, r)
    res1 = {
        "orders": [
            {
                "id": oid,
                "name": f"#{number}",
                "financial_status": "paid",
                "fulfillment_status": None,
                "total_price": total,
                "currency": cur,
                "shipping_address": {
                    "first_name": first,
                    "last_name": last,
                    "address1": street(r, lang)[0],
                    "city": city,
                    "zip": postal,
                    "country_code": country,
                },
            }
        ]
    }
    new_addr = {"address1": line, "city": city, "zip": postal, "country_code": country}
    if region:
        new_addr["province_code"] = region
    res2 = {
        "order": {
            "id": oid,
            "name": f"#{number}",
            "updated_at": f"{ctx.today.isoformat()}T10:22:31{ctx.tz(ctx.today)}",
            "shipping_address": {"first_name": first, "last_name": last, **new_addr},
            "fulfillment_status": None,
        }
    }
    answer = T(
        "Order {f0} now ships to **{f1}, {f2} " + city + "**. It hasn't been fulfilled yet.",
        "El pedido {f0} se enviará ahora a **{f1}, {f2} " + city + "**. Aún no se ha preparado.",
        "Bestellung {f0} geht jetzt an **{f1}, {f2} " + city + "**. Sie ist noch nicht versandt.",
        "La commande {f0} sera livrée au **{f1}, {f2} "
        + city
        + "**. Elle n'est pas encore expédiée.",
        "L'ordine {f0} ora va spedito a **{f1}, {f2} " + city + "**. Non è ancora evaso.",
        "O pedido {f0} passa a ser entregue em **{f1}, {f2} "
        + city
        + "**. Ainda não foi expedido.",
    )[lang]
    return Scenario(
        "shop",
        lang,
        [
            tool(
                "shopify_orders_list",
                "Shopify Admin REST: list orders (filter by name, status)",
                {"name": S, "status": enum("open", "closed", "cancelled", "any"), "limit": I},
                [],
            ),
            tool(
                "shopify_order_update",
                "Shopify Admin REST: update an order's shipping address, note or tags",
                {
                    "order_id": I,
                    "shipping_address": obj(
                        {
                            "address1": S,
                            "address2": S,
                            "city": S,
                            "province_code": S,
                            "zip": S,
                            "country_code": S,
                        }
                    ),
                    "note": S,
                    "email": S,
                },
                ["order_id"],
            ),
        ],
        request,
        [
            Step([Call("shopify_orders_list", {"name": f"#{number}", "status": "any"})], [res1]),
            Step(
                [Call("shopify_order_update", {"order_id": oid, "shipping_address": new_addr})],
                [res2],
            ),
        ],
        answer,
        [
            (f"#{number}", f"#{number + 1}"),
            (line, change_address(line, r)),
            (postal, change_digit(postal, r)),
        ],
        T(
            "Delivery should take 2–3 business days.",
            "La entrega tardará entre 2 y 3 días laborables.",
            "Die Zustellung dauert 2–3 Werktage.",
            "La livraison prendra 2 à 3 jours ouvrés.",
            "La consegna richiederà 2–3 giorni lavorativi.",
            "A entrega deve demorar 2 a 3 dias úteis.",
        )[lang],
        slots=[
            Slot("address", 1, 0, ("shipping_address", "address1"), change_address(line, r)),
            Slot("address", 1, 0, ("shipping_address", "zip"), change_digit(postal, r)),
            Slot("id", 0, 0, ("name",), f"#{change_digit(str(number), r)}"),
        ],
        invent=(1, 0, "email", mail(first, last, "gmail.com")),
    )


def d_square_refund(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    cur = currency(lang, r)
    amount = r.choice([12.5, 18, 45.9, 64.25, 120, 1250.5])
    cents = round(amount * 100)
    pay = alnum(r, 29, upper=True).replace("0", "X")[:22] + "MwqeD"
    request = T(
        f"refund {money(amount, cur, lang, r)} on square payment {pay}, customer was double charged",
        f"Devuelve {money(amount, cur, lang, r)} del pago de Square {pay}, se le cobró dos veces",
        f"Erstatte {money(amount, cur, lang, r)} auf die Square-Zahlung {pay}, doppelt belastet",
        f"Rembourse {money(amount, cur, lang, r)} sur le paiement Square {pay}, le client a été débité deux fois",
        f"Rimborsa {money(amount, cur, lang, r)} sul pagamento Square {pay}, addebito doppio",
        f"Reembolsa {money(amount, cur, lang, r)} do pagamento Square {pay}, o cliente foi cobrado duas vezes",
    )[lang]
    rid = pay[:20] + "_" + alnum(r, 26, upper=True)
    result = {
        "refund": {
            "id": rid,
            "status": "PENDING",
            "amount_money": {"amount": cents, "currency": cur},
            "payment_id": pay,
            "order_id": alnum(r, 24, upper=True),
            "location_id": "L" + alnum(r, 12, upper=True),
            "created_at": f"{ctx.today.isoformat()}T14:03:55.120Z",
            "reason": "Double charge",
        }
    }
    answer = T(
        "I've issued a refund of {f0} on payment " + pay + ". Its status is {f1}.",
        "He emitido un reembolso de {f0} sobre el pago " + pay + ". Su estado es {f1}.",
        "Ich habe {f0} auf die Zahlung " + pay + " erstattet. Status: {f1}.",
        "J'ai émis un remboursement de {f0} sur le paiement " + pay + ". Statut : {f1}.",
        "Ho emesso un rimborso di {f0} sul pagamento " + pay + ". Stato: {f1}.",
        "Emiti um reembolso de {f0} no pagamento " + pay + ". Estado: {f1}.",
    )[lang]
    pend = T("pending", "pendiente", "ausstehend", "en attente", "in sospeso", "pendente")[lang]
    done = T("completed", "completado", "abgeschlossen", "terminé", "completato", "concluído")[lang]
    return Scenario(
        "payments",
        lang,
        [
            tool(
                "square_refund_payment",
                "Square Refunds API: refund a payment (amount in the smallest denomination)",
                {
                    "idempotency_key": S,
                    "payment_id": S,
                    "amount_money": obj({"amount": I, "currency": S}, ["amount", "currency"]),
                    "reason": S,
                    "location_id": S,
                    "team_member_id": S,
                },
                ["idempotency_key", "payment_id", "amount_money"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "square_refund_payment",
                        {
                            "idempotency_key": f"{hexid(r, 8)}-{hexid(r, 4)}-4{hexid(r, 3)}-a{hexid(r, 3)}-{hexid(r, 12)}",
                            "payment_id": pay,
                            "amount_money": {"amount": cents, "currency": cur},
                            "reason": "Double charge",
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [(money(amount, cur, lang), money(amount * 2, cur, lang)), (pend, done)],
        T(
            "The customer has been notified by email.",
            "Se ha avisado al cliente por correo.",
            "Der Kunde wurde per E-Mail informiert.",
            "Le client a été prévenu par e-mail.",
            "Il cliente è stato avvisato via email.",
            "O cliente foi avisado por e-mail.",
        )[lang],
        slots=[
            Slot("amount", 0, 0, ("amount_money", "amount"), change_number(cents, r)),
            Slot("id", 0, 0, ("payment_id",), change_id(pay, r)),
        ],
        invent=(0, 0, "team_member_id", "TM" + alnum(r, 14, upper=True)),
        rows=[
            (
                T("Refund", "Reembolso", "Erstattung", "Remboursement", "Rimborso", "Reembolso")[
                    lang
                ],
                0,
            ),
            ("Status", 1),
        ],
    )


def d_paypal_payout(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    first, last = r.choice(PEOPLE)
    to = mail(
        first, last, r.choice(["gmail.com", "outlook.com", "studio-" + last.lower()[:4] + ".com"])
    )
    cur = {"en": "USD", "pt": "BRL"}.get(lang, "EUR")
    amount = r.choice([80, 150, 325.5, 1200, 2450.75])
    value = f"{amount:.2f}"
    request = T(
        f"Send a PayPal payout of {money(amount, cur, lang, r)} to {to} for the logo work",
        f"Envía un pago de PayPal de {money(amount, cur, lang, r)} a {to} por el diseño del logo",
        f"Schick {to} per PayPal {money(amount, cur, lang, r)} für das Logo",
        f"Envoie un paiement PayPal de {money(amount, cur, lang, r)} à {to} pour le logo",
        f"Manda un pagamento PayPal di {money(amount, cur, lang, r)} a {to} per il logo",
        f"Manda um pagamento PayPal de {money(amount, cur, lang, r)} para {to} pelo logotipo",
    )[lang]
    batch = "Payouts_" + ctx.today.strftime("%Y%m%d") + "_" + digits(r, 4)
    pb = alnum(r, 13, upper=True)
    result = {
        "batch_header": {
            "payout_batch_id": pb,
            "batch_status": "PENDING",
            "sender_batch_header": {
                "sender_batch_id": batch,
                "email_subject": "You have a payout!",
            },
        },
        "links": [
            {
                "href": f"https://api-m.paypal.com/v1/payments/payouts/{pb}",
                "rel": "self",
                "method": "GET",
            }
        ],
    }
    answer = T(
        "The payout to {f0} is on its way: {f1}, batch {f2}, currently pending.",
        "El pago a {f0} está en marcha: {f1}, lote {f2}, de momento pendiente.",
        "Die Auszahlung an {f0} läuft: {f1}, Batch {f2}, derzeit ausstehend.",
        "Le paiement à {f0} est lancé : {f1}, lot {f2}, pour l'instant en attente.",
        "Il pagamento a {f0} è partito: {f1}, batch {f2}, per ora in sospeso.",
        "O pagamento para {f0} está a caminho: {f1}, lote {f2}, por enquanto pendente.",
    )[lang]
    return Scenario(
        "payments",
        lang,
        [
            tool(
                "paypal_create_payout",
                "PayPal Payouts API: send money to one or more recipients",
                {
                    "sender_batch_header": obj(
                        {"sender_batch_id": S, "email_subject": S, "email_message": S}
                    ),
                    "items": arr(
                        obj(
                            {
                                "recipient_type": enum("EMAIL", "PHONE", "PAYPAL_ID"),
                                "amount": obj(
                                    {"value": desc(S, "Decimal string, e.g. 10.00"), "currency": S}
                                ),
                                "receiver": S,
                                "note": S,
                                "sender_item_id": S,
                            }
                        )
                    ),
                },
                ["sender_batch_header", "items"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "paypal_create_payout",
                        {
                            "sender_batch_header": {
                                "sender_batch_id": batch,
                                "email_subject": "You have a payout!",
                            },
                            "items": [
                                {
                                    "recipient_type": "EMAIL",
                                    "amount": {"value": value, "currency": cur},
                                    "receiver": to,
                                    "note": "Logo work",
                                }
                            ],
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (to, change_id(to, r)),
            (money(amount, cur, lang), money(amount + 100, cur, lang)),
            (pb, change_id(pb, r)),
        ],
        T(
            "PayPal's fee for this payout is 2%.",
            "La comisión de PayPal por este pago es del 2 %.",
            "PayPal berechnet dafür 2 % Gebühr.",
            "PayPal prélève 2 % de frais sur ce paiement.",
            "La commissione PayPal è del 2%.",
            "A taxa do PayPal para este pagamento é de 2%.",
        )[lang],
        slots=[
            Slot(
                "amount", 0, 0, ("items", 0, "amount", "value"), f"{change_number(amount, r):.2f}"
            ),
            Slot("id", 0, 0, ("items", 0, "receiver"), change_id(to, r)),
        ],
        invent=(
            0,
            0,
            "items",
            [
                {
                    "recipient_type": "EMAIL",
                    "amount": {"value": value, "currency": cur},
                    "receiver": to,
                    "note": "Logo work",
                    "sender_item_id": "INV-" + digits(r, 5),
                }
            ],
        ),
        rows=[
            (
                T(
                    "Recipient",
                    "Destinatario",
                    "Empfänger",
                    "Destinataire",
                    "Destinatario",
                    "Destinatário",
                )[lang],
                0,
            ),
            (T("Amount", "Importe", "Betrag", "Montant", "Importo", "Valor")[lang], 1),
            ("Batch", 2),
        ],
    )


def d_twilio_sms(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    area = {
        "en": ("+1", "(617) 555-{a}{b}", "617555{a}{b}"),
        "es": ("+34", "612 34 {a} {b}", "61234{a}{b}"),
        "de": ("+49", "0151 2345 {a}{b}", "15123456{a}{b}"),
        "fr": ("+33", "06 12 34 {a} {b}", "612 34{a}{b}"),
        "it": ("+39", "347 123 {a}{b}", "347123{a}{b}"),
        "pt": ("+351", "91 234 {a}{b}", "91234{a}{b}"),
    }[lang]
    a, b = f"{r.randrange(10, 99)}", f"{r.randrange(10, 99)}"
    spoken = area[1].format(a=a, b=b)
    e164 = area[0] + area[2].format(a=a, b=b).replace(" ", "")
    if lang == "de":
        e164 = "+49" + spoken.replace(" ", "")[1:]
    body = T(
        "Your table is ready! Please come to the host stand.",
        "¡Tu mesa está lista! Acércate a la entrada.",
        "Ihr Tisch ist bereit! Bitte kommen Sie zum Empfang.",
        "Votre table est prête ! Présentez-vous à l'accueil.",
        "Il vostro tavolo è pronto! Venite all'ingresso.",
        "A sua mesa está pronta! Dirija-se à receção.",
    )[lang]
    request = T(
        f'text {spoken}: "{body}"',
        f"Manda un SMS al {spoken}: «{body}»",
        f"Schick eine SMS an {spoken}: „{body}“",
        f"Envoie un SMS au {spoken} : « {body} »",
        f'Manda un SMS al {spoken}: "{body}"',
        f'Envia um SMS para o {spoken}: "{body}"',
    )[lang]
    sid = "SM" + hexid(r, 32)
    sender = "+1857" + digits(r, 7) if lang == "en" else "Northwind"
    sent = f"{WEEKDAYS['en'][ctx.today.weekday()][:3]}, {ctx.today.day:02d} {MONTHS['en'][ctx.today.month - 1][:3]} {ctx.today.year} 18:41:09 +0000"
    result = {
        "sid": sid,
        "status": "queued",
        "to": e164,
        "from": sender,
        "body": body,
        "num_segments": "1",
        "price": None,
        "price_unit": "USD",
        "direction": "outbound-api",
        "date_created": sent,
        "error_code": None,
    }
    answer = T(
        "Text queued to {f0} (message SID {f1}).",
        "SMS en cola para {f0} (SID {f1}).",
        "SMS an {f0} ist in der Warteschlange (SID {f1}).",
        "SMS en file d'attente pour {f0} (SID {f1}).",
        "SMS in coda per {f0} (SID {f1}).",
        "SMS em fila para {f0} (SID {f1}).",
    )[lang]
    return Scenario(
        "messaging",
        lang,
        [
            tool(
                "twilio_messages_create",
                "Twilio Programmable Messaging: send an SMS",
                {
                    "To": desc(S, "E.164 number"),
                    "From": S,
                    "Body": S,
                    "MessagingServiceSid": S,
                    "StatusCallback": S,
                    "SendAt": desc(S, "ISO 8601, for scheduled messages"),
                    "ScheduleType": enum("fixed"),
                },
                ["To", "Body"],
            )
        ],
        request,
        [Step([Call("twilio_messages_create", {"To": e164, "Body": body})], [result])],
        answer,
        [(e164, change_digit(e164, r)), (sid, change_id(sid, r))],
        T(
            "It was delivered a few seconds later.",
            "Se entregó unos segundos después.",
            "Sie wurde wenige Sekunden später zugestellt.",
            "Il a été remis quelques secondes plus tard.",
            "È stato consegnato pochi secondi dopo.",
            "Foi entregue segundos depois.",
        )[lang],
        slots=[
            Slot(
                "id",
                0,
                0,
                ("To",),
                change_digit(e164, r, [i for i, c in enumerate(e164) if c.isdigit()][-4:]),
            )
        ],
        invent=(0, 0, "SendAt", f"{(ctx.today + dt.timedelta(days=1)).isoformat()}T09:00:00Z"),
        rows=[(T("To", "Para", "An", "À", "A", "Para")[lang], 0), ("SID", 1)],
    )


def private_ip(r: random.Random) -> str:
    return r.choice([f"10.{r.randrange(0, 255)}.{r.randrange(1, 255)}.{r.randrange(2, 250)}",
                     f"172.{r.randrange(16, 32)}.{r.randrange(0, 255)}.{r.randrange(2, 250)}",
                     f"192.168.{r.randrange(0, 255)}.{r.randrange(2, 250)}"])  # fmt: skip


def d_ec2_stop(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    ip = private_ip(r)
    region = r.choice(["us-east-1", "eu-west-1", "eu-central-1", "sa-east-1"])
    request = T(
        f"stop the ec2 box with private ip {ip} in {region}, it's burning money",
        f"Para la instancia EC2 con IP privada {ip} en {region}",
        f"Stopp bitte die EC2-Instanz mit der privaten IP {ip} in {region}",
        f"Arrête l'instance EC2 dont l'IP privée est {ip} ({region})",
        f"Ferma l'istanza EC2 con IP privato {ip} in {region}",
        f"Para a instância EC2 com IP privado {ip} em {region}",
    )[lang]
    iid = "i-0" + hexid(r, 16)
    itype = r.choice(["t3.large", "m5.xlarge", "c6i.2xlarge", "r6g.large"])
    launched = ctx.today - dt.timedelta(days=r.randrange(2, 90))
    res1 = {
        "Reservations": [
            {
                "ReservationId": "r-0" + hexid(r, 16),
                "OwnerId": digits(r, 12),
                "Instances": [
                    {
                        "InstanceId": iid,
                        "InstanceType": itype,
                        "PrivateIpAddress": ip,
                        "State": {"Code": 16, "Name": "running"},
                        "LaunchTime": f"{launched.isoformat()}T07:{r.randrange(10, 59)}:12+00:00",
                        "Placement": {"AvailabilityZone": region + "a"},
                        "Tags": [
                            {
                                "Key": "Name",
                                "Value": r.choice(
                                    ["batch-worker", "legacy-reporting", "staging-api"]
                                ),
                            }
                        ],
                    }
                ],
            }
        ]
    }
    res2 = {
        "StoppingInstances": [
            {
                "InstanceId": iid,
                "CurrentState": {"Code": 64, "Name": "stopping"},
                "PreviousState": {"Code": 16, "Name": "running"},
            }
        ]
    }
    name = res1["Reservations"][0]["Instances"][0]["Tags"][0]["Value"]
    answer = T(
        "Stopping {f0} (" + name + ", {f1}). It was running and is now in state {f2}.",
        "Deteniendo {f0} (" + name + ", {f1}). Estaba en ejecución y ahora está en estado {f2}.",
        "{f0} (" + name + ", {f1}) wird gestoppt: vorher running, jetzt {f2}.",
        "Arrêt de {f0} ("
        + name
        + ", {f1}) en cours : elle était running, elle est maintenant {f2}.",
        "Sto fermando {f0} (" + name + ", {f1}): era running, ora è {f2}.",
        "A parar {f0} (" + name + ", {f1}): estava running e agora está {f2}.",
    )[lang]
    return Scenario(
        "cloud",
        lang,
        [
            tool(
                "ec2_describe_instances",
                "AWS EC2 DescribeInstances",
                {
                    "Region": S,
                    "InstanceIds": arr(S),
                    "Filters": arr(obj({"Name": S, "Values": arr(S)})),
                    "MaxResults": I,
                },
                [],
            ),
            tool(
                "ec2_stop_instances",
                "AWS EC2 StopInstances",
                {"Region": S, "InstanceIds": arr(S), "Hibernate": B, "Force": B},
                ["InstanceIds"],
            ),
        ],
        request,
        [
            Step(
                [
                    Call(
                        "ec2_describe_instances",
                        {
                            "Region": region,
                            "Filters": [{"Name": "private-ip-address", "Values": [ip]}],
                        },
                    )
                ],
                [res1],
            ),
            Step([Call("ec2_stop_instances", {"Region": region, "InstanceIds": [iid]})], [res2]),
        ],
        answer,
        [
            (iid, change_id(iid, r)),
            (itype, r.choice(["t3.micro", "m5.large"])),
            ("stopping", "stopped"),
        ],
        T(
            "Its EBS volumes were deleted as well.",
            "También se han borrado sus volúmenes EBS.",
            "Die EBS-Volumes wurden ebenfalls gelöscht.",
            "Ses volumes EBS ont aussi été supprimés.",
            "Anche i volumi EBS sono stati eliminati.",
            "Os volumes EBS também foram apagados.",
        )[lang],
        slots=[
            Slot("ip", 0, 0, ("Filters", 0, "Values", 0), change_ip(ip, r)),
            Slot("id", 0, 0, ("Region",), region.replace("-1", "-2")),
        ],
        invent=(0, 0, "InstanceIds", ["i-0" + hexid(r, 16)]),
    )


def d_s3_list(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    bucket = (
        r.choice(["northwind-prod-logs", "acme-data-lake", "nw-backups-eu"]) + "-" + digits(r, 4)
    )
    day = ctx.today - dt.timedelta(days=r.randrange(1, 9))
    said = spoken_date(day, lang, r)
    prefix = f"alb/{day.year}/{day.month:02d}/{day.day:02d}/"
    request = T(
        f"what log files landed in s3://{bucket} under alb/ for {said}?",
        f"¿Qué ficheros de log hay en s3://{bucket}, carpeta alb/, del {said.replace('el ', '')}?",
        f"Welche Logdateien liegen in s3://{bucket} unter alb/ für den {said.replace('am ', '')}?",
        f"Quels fichiers de logs y a-t-il dans s3://{bucket} sous alb/ pour {said} ?",
        f"Quali file di log ci sono in s3://{bucket} sotto alb/ per {said}?",
        f"Que ficheiros de log há em s3://{bucket} em alb/ para {said.replace('dia ', 'o dia ')}?",
    )[lang]
    sizes = [r.randrange(200_000, 9_000_000) for _ in range(3)]
    keys = [
        f"{prefix}{digits(r, 12)}_elasticloadbalancing_{r.choice(['eu-west-1', 'us-east-1'])}_app.web.{hexid(r, 16)}_{day.strftime('%Y%m%d')}T{h:02d}00Z.log.gz"
        for h in (6, 12, 18)
    ]
    result = {
        "IsTruncated": False,
        "Name": bucket,
        "Prefix": prefix,
        "KeyCount": 3,
        "MaxKeys": 1000,
        "Contents": [
            {
                "Key": k,
                "Size": s,
                "LastModified": f"{day.isoformat()}T{h:02d}:05:{r.randrange(10, 59)}.000Z",
                "StorageClass": "STANDARD",
                "ETag": f'"{hexid(r, 32)}"',
            }
            for k, s, h in zip(keys, sizes, (6, 12, 18), strict=True)
        ],
    }
    total_mb = sum(sizes) / 1_000_000
    answer = T(
        "{f0} files under "
        + prefix
        + ", about {f1} MB in total, written at 06:05, 12:05 and 18:05 UTC. All are in STANDARD storage.",
        "Hay {f0} ficheros en "
        + prefix
        + ", unos {f1} MB en total, escritos a las 06:05, 12:05 y 18:05 UTC. Todos en STANDARD.",
        "{f0} Dateien unter "
        + prefix
        + ", zusammen etwa {f1} MB, geschrieben um 06:05, 12:05 und 18:05 UTC. Alle in STANDARD.",
        "{f0} fichiers sous "
        + prefix
        + ", environ {f1} Mo au total, écrits à 06:05, 12:05 et 18:05 UTC. Tous en STANDARD.",
        "{f0} file in "
        + prefix
        + ", circa {f1} MB in totale, scritti alle 06:05, 12:05 e 18:05 UTC. Tutti in STANDARD.",
        "{f0} ficheiros em "
        + prefix
        + ", cerca de {f1} MB no total, escritos às 06:05, 12:05 e 18:05 UTC. Todos em STANDARD.",
    )[lang]
    return Scenario(
        "cloud",
        lang,
        [
            tool(
                "s3_list_objects_v2",
                "AWS S3 ListObjectsV2",
                {
                    "Bucket": S,
                    "Prefix": S,
                    "Delimiter": S,
                    "MaxKeys": I,
                    "ContinuationToken": S,
                    "StartAfter": S,
                },
                ["Bucket"],
            )
        ],
        request,
        [Step([Call("s3_list_objects_v2", {"Bucket": bucket, "Prefix": prefix})], [result])],
        answer,
        [(3, 5), (num(total_mb, lang), num(total_mb * 3, lang))],
        T(
            "They are replicated to us-west-2.",
            "Se replican en us-west-2.",
            "Sie werden nach us-west-2 repliziert.",
            "Ils sont répliqués vers us-west-2.",
            "Sono replicati in us-west-2.",
            "São replicados para us-west-2.",
        )[lang],
        slots=[
            Slot(
                "date",
                0,
                0,
                ("Prefix",),
                "alb/" + change_date(day.isoformat(), r).replace("-", "/") + "/",
            ),
            Slot("id", 0, 0, ("Bucket",), change_id(bucket, r)),
        ],
        invent=(0, 0, "StartAfter", keys[0]),
    )


def d_k8s_pod_ip(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    ip = f"10.{r.choice([42, 244, 96])}.{r.randrange(0, 40)}.{r.randrange(2, 250)}"
    ns = r.choice(["payments", "checkout", "search", "default"])
    request = T(
        f"which pod in the {ns} namespace has IP {ip}? seeing weird traffic from it",
        f"¿Qué pod del namespace {ns} tiene la IP {ip}?",
        f"Welcher Pod im Namespace {ns} hat die IP {ip}?",
        f"Quel pod du namespace {ns} a l'IP {ip} ?",
        f"Quale pod nel namespace {ns} ha l'IP {ip}?",
        f"Qual pod no namespace {ns} tem o IP {ip}?",
    )[lang]
    app = r.choice(["api", "worker", "gateway"])
    pod = f"{ns}-{app}-{hexid(r, 10)}-{alnum(r, 5)}"
    node = f"ip-10-0-{r.randrange(1, 9)}-{r.randrange(10, 250)}.{r.choice(['eu-west-1', 'us-east-2'])}.compute.internal"
    restarts = r.randrange(0, 6)
    start = ctx.today - dt.timedelta(days=r.randrange(1, 12))
    result = {
        "apiVersion": "v1",
        "kind": "PodList",
        "metadata": {"resourceVersion": digits(r, 8)},
        "items": [
            {
                "metadata": {"name": pod, "namespace": ns, "labels": {"app": f"{ns}-{app}"}},
                "spec": {"nodeName": node},
                "status": {
                    "phase": "Running",
                    "podIP": ip,
                    "startTime": f"{start.isoformat()}T03:17:44Z",
                    "containerStatuses": [
                        {
                            "name": app,
                            "ready": True,
                            "restartCount": restarts,
                            "image": f"registry.northwind.io/{ns}/{app}:1.{r.randrange(2, 30)}.0",
                        }
                    ],
                },
            }
        ],
    }
    answer = T(
        "It's **{f0}** (app "
        + ns
        + "-"
        + app
        + "), running on node {f1} since {f2}, with {f3} restarts.",
        "Es **{f0}** (app "
        + ns
        + "-"
        + app
        + "), corriendo en el nodo {f1} desde {f2}, con {f3} reinicios.",
        "Das ist **{f0}** (App "
        + ns
        + "-"
        + app
        + "), läuft auf Node {f1} seit {f2}, {f3} Neustarts.",
        "C'est **{f0}** (app "
        + ns
        + "-"
        + app
        + "), sur le nœud {f1} depuis {f2}, avec {f3} redémarrages.",
        "È **{f0}** (app " + ns + "-" + app + "), sul nodo {f1} dal {f2}, con {f3} riavvii.",
        "É o **{f0}** (app " + ns + "-" + app + "), no nó {f1} desde {f2}, com {f3} reinícios.",
    )[lang]
    since = T(
        f"{MONTHS['en'][start.month - 1]} {start.day}",
        f"el {start.day} de {MONTHS['es'][start.month - 1]}",
        f"{start.day}. {MONTHS['de'][start.month - 1]}",
        f"le {start.day} {MONTHS['fr'][start.month - 1]}",
        f"{start.day} {MONTHS['it'][start.month - 1]}",
        f"{start.day} de {MONTHS['pt'][start.month - 1]}",
    )[lang]
    wrong_since = since.replace(str(start.day), str((start.day % 27) + 1), 1)
    return Scenario(
        "kubernetes",
        lang,
        [
            tool(
                "k8s_list_pods",
                "Kubernetes: list pods in a namespace (CoreV1 listNamespacedPod)",
                {
                    "namespace": S,
                    "labelSelector": S,
                    "fieldSelector": desc(S, "e.g. status.podIP=10.0.0.1"),
                    "limit": I,
                },
                ["namespace"],
            )
        ],
        request,
        [
            Step(
                [Call("k8s_list_pods", {"namespace": ns, "fieldSelector": f"status.podIP={ip}"})],
                [result],
            )
        ],
        answer,
        [
            (pod, change_id(pod, r)),
            (node, change_id(node, r)),
            (since, wrong_since),
            (restarts, restarts + 3),
        ],
        T(
            "Its memory usage is close to the limit.",
            "Su uso de memoria está cerca del límite.",
            "Der Speicherverbrauch liegt nahe am Limit.",
            "Sa consommation mémoire est proche de la limite.",
            "L'uso di memoria è vicino al limite.",
            "O uso de memória está perto do limite.",
        )[lang],
        slots=[Slot("ip", 0, 0, ("fieldSelector",), f"status.podIP={change_ip(ip, r)}")],
        invent=(0, 0, "labelSelector", f"app={ns}-{app},pod-template-hash={hexid(r, 10)}"),
        rows=[
            ("Pod", 0),
            ("Node", 1),
            (
                T("Restarts", "Reinicios", "Neustarts", "Redémarrages", "Riavvii", "Reinícios")[
                    lang
                ],
                3,
            ),
        ],
    )


PD_URGENCY = {
    "high": T("high", "alta", "hoch", "haute", "alta", "alta"),
    "low": T("low", "baja", "niedrig", "basse", "bassa", "baixa"),
}


def d_pagerduty(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    service = "P" + alnum(r, 6, upper=True)
    urgency = r.choice(["high", "low"])
    uw = PD_URGENCY[urgency][lang]
    title = T(
        "Checkout latency above 2s",
        "Latencia del checkout por encima de 2 s",
        "Checkout-Latenz über 2 s",
        "Latence du checkout au-dessus de 2 s",
        "Latenza del checkout oltre 2 s",
        "Latência do checkout acima de 2 s",
    )[lang]
    request = T(
        f"page the on-call for service {service}: {title}, {uw} urgency",
        f"Abre un incidente de PagerDuty en el servicio {service}: {title}, urgencia {uw}",
        f"Lös in PagerDuty einen Incident für Service {service} aus: {title}, Dringlichkeit {uw}",
        f"Déclenche un incident PagerDuty sur le service {service} : {title}, urgence {uw}",
        f"Apri un incidente PagerDuty sul servizio {service}: {title}, urgenza {uw}",
        f"Abre um incidente no PagerDuty no serviço {service}: {title}, urgência {uw}",
    )[lang]
    inc = "Q" + alnum(r, 13, upper=True)
    number = r.randrange(1200, 9800)
    first, last = r.choice(PEOPLE)
    result = {
        "incident": {
            "id": inc,
            "type": "incident",
            "incident_number": number,
            "title": title,
            "status": "triggered",
            "urgency": urgency,
            "service": {"id": service, "type": "service_reference", "summary": "Checkout API"},
            "assignments": [
                {
                    "assignee": {
                        "id": "P" + alnum(r, 6, upper=True),
                        "type": "user_reference",
                        "summary": f"{first} {last}",
                    }
                }
            ],
            "created_at": f"{ctx.today.isoformat()}T21:14:03Z",
            "html_url": f"https://northwind.pagerduty.com/incidents/{inc}",
        }
    }
    answer = T(
        "Incident #{f0} is triggered on Checkout API ({f1} urgency) and assigned to {f2}.",
        "El incidente #{f0} está activo en Checkout API (urgencia {f1}) y asignado a {f2}.",
        "Incident #{f0} ist für Checkout API ausgelöst (Dringlichkeit {f1}), zugewiesen an {f2}.",
        "L'incident n° {f0} est déclenché sur Checkout API (urgence {f1}) et assigné à {f2}.",
        "L'incidente #{f0} è attivo su Checkout API (urgenza {f1}) e assegnato a {f2}.",
        "O incidente #{f0} foi acionado no Checkout API (urgência {f1}) e atribuído a {f2}.",
    )[lang]
    other = "low" if urgency == "high" else "high"
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "pagerduty_create_incident",
                "PagerDuty REST: create an incident",
                {
                    "incident": obj(
                        {
                            "type": enum("incident"),
                            "title": S,
                            "service": obj({"id": S, "type": enum("service_reference")}),
                            "urgency": enum("high", "low"),
                            "body": obj({"type": S, "details": S}),
                            "escalation_policy": obj(
                                {"id": S, "type": enum("escalation_policy_reference")}
                            ),
                        },
                        ["type", "title", "service"],
                    ),
                    "from": desc(S, "Email of a valid PagerDuty user"),
                },
                ["incident"],
            ),
            tool(
                "pagerduty_list_oncalls",
                "PagerDuty REST: who is on call",
                {"schedule_ids": arr(S), "since": S, "until": S},
                [],
            ),
        ],
        request,
        [
            Step(
                [
                    Call(
                        "pagerduty_create_incident",
                        {
                            "incident": {
                                "type": "incident",
                                "title": title,
                                "service": {"id": service, "type": "service_reference"},
                                "urgency": urgency,
                            }
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (number, number + 11),
            (uw, PD_URGENCY[other][lang]),
            (f"{first} {last}", f"{r.choice(PEOPLE)[0]} {last}"),
        ],
        T(
            "The on-call acknowledged it within 2 minutes.",
            "La guardia lo reconoció en 2 minutos.",
            "Die Rufbereitschaft hat ihn nach 2 Minuten bestätigt.",
            "L'astreinte l'a acquitté en 2 minutes.",
            "Il reperibile l'ha preso in carico in 2 minuti.",
            "O plantão reconheceu em 2 minutos.",
        )[lang],
        slots=[
            Slot("enum", 0, 0, ("incident", "urgency"), other),
            Slot("id", 0, 0, ("incident", "service", "id"), change_id(service, r)),
        ],
        invent=(
            0,
            0,
            "incident",
            {
                "type": "incident",
                "title": title,
                "service": {"id": service, "type": "service_reference"},
                "urgency": urgency,
                "escalation_policy": {
                    "id": "P" + alnum(r, 6, upper=True),
                    "type": "escalation_policy_reference",
                },
            },
        ),
    )


def d_datadog_mute(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    monitor = int(digits(r, 8))
    h, mi = r.choice([(18, 0), (20, 30), (23, 0), (7, 0)])
    day = ctx.today if h > 12 else ctx.today + dt.timedelta(days=1)
    said = spoken_time(h, mi, lang, r)
    when_word = (
        ""
        if h > 12
        else " " + T("tomorrow", "mañana", "morgen", "demain", "domani", "amanhã")[lang]
    )
    request = T(
        f"mute datadog monitor {monitor} until{when_word} {said}, we're doing the db migration",
        f"Silencia el monitor {monitor} de Datadog hasta{when_word} {said.replace('a las', 'las')}, estamos migrando la base de datos",
        f"Schalte den Datadog-Monitor {monitor} bis{when_word} {said.replace('um ', '')} stumm, wir migrieren die DB",
        f"Mets en sourdine le moniteur Datadog {monitor} jusqu'à{when_word} {said.replace('à ', '')}, on migre la base",
        f"Silenzia il monitor Datadog {monitor} fino{when_word} {said}, stiamo migrando il DB",
        f"Silencia o monitor {monitor} do Datadog até{when_word} {said.replace('às ', 'às ')}, estamos a migrar a base de dados",
    )[lang]
    end = ctx.epoch(day, h, mi)
    result = {
        "id": monitor,
        "name": "[prod] Postgres replication lag > 30s",
        "type": "query alert",
        "overall_state": "Alert",
        "options": {"silenced": {"*": end}},
        "modified": f"{ctx.today.isoformat()}T16:02:11.000000+00:00",
    }
    answer = T(
        'Monitor {f0} ("[prod] Postgres replication lag > 30s") is muted until {f1}. Its current state is {f2}.',
        "El monitor {f0} («[prod] Postgres replication lag > 30s») queda silenciado hasta las {f1}. Estado actual: {f2}.",
        "Monitor {f0} („[prod] Postgres replication lag > 30s“) ist bis {f1} Uhr stummgeschaltet. Aktueller Zustand: {f2}.",
        "Le moniteur {f0} (« [prod] Postgres replication lag > 30s ») est en sourdine jusqu'à {f1}. État actuel : {f2}.",
        'Il monitor {f0} ("[prod] Postgres replication lag > 30s") è silenziato fino alle {f1}. Stato attuale: {f2}.',
        'O monitor {f0} ("[prod] Postgres replication lag > 30s") está silenciado até às {f1}. Estado atual: {f2}.',
    )[lang]
    return Scenario(
        "devops",
        lang,
        [
            tool(
                "datadog_mute_monitor",
                "Datadog API v1: mute a monitor",
                {"monitor_id": I, "scope": S, "end": desc(I, "POSIX timestamp when the mute ends")},
                ["monitor_id"],
            )
        ],
        request,
        [Step([Call("datadog_mute_monitor", {"monitor_id": monitor, "end": end})], [result])],
        answer,
        [
            (monitor, change_number(monitor, r)),
            (written_time(h, mi, lang), written_time((h + 2) % 24, mi, lang)),
            ("Alert", "OK"),
        ],
        T(
            "No alerts fired in the last 24 hours.",
            "No ha saltado ninguna alerta en las últimas 24 horas.",
            "In den letzten 24 Stunden gab es keinen Alarm.",
            "Aucune alerte ces dernières 24 heures.",
            "Nessun allarme nelle ultime 24 ore.",
            "Nenhum alerta nas últimas 24 horas.",
        )[lang],
        slots=[
            Slot("time", 0, 0, ("end",), change_epoch(end, r)),
            Slot("id", 0, 0, ("monitor_id",), change_number(monitor, r)),
        ],
        invent=(0, 0, "scope", "host:db-replica-" + digits(r, 2)),
    )


def d_gitlab_mr(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    project = r.choice(["platform/billing-service", "web/storefront", "data/etl-jobs"])
    ticket = f"{r.choice(['PAY', 'WEB', 'DATA'])}-{r.randrange(100, 999)}"
    branch = f"{r.choice(['feature', 'fix'])}/{ticket.lower()}-{r.choice(['retry-webhooks', 'vat-rounding', 'null-currency'])}"
    target = r.choice(["main", "develop"])
    request = T(
        f"open an MR in {project} from {branch} into {target}, title it '{ticket}: {branch.split('-', 2)[-1].replace('-', ' ')}'",
        f"Abre una merge request en {project} de {branch} a {target}, con título «{ticket}: {branch.split('-', 2)[-1].replace('-', ' ')}»",
        f"Mach in {project} einen MR von {branch} nach {target} auf, Titel „{ticket}: {branch.split('-', 2)[-1].replace('-', ' ')}“",
        f"Ouvre une MR dans {project} de {branch} vers {target}, titre « {ticket}: {branch.split('-', 2)[-1].replace('-', ' ')} »",
        f'Apri una MR in {project} da {branch} verso {target}, titolo "{ticket}: {branch.split("-", 2)[-1].replace("-", " ")}"',
        f'Abre um MR em {project} de {branch} para {target}, título "{ticket}: {branch.split("-", 2)[-1].replace("-", " ")}"',
    )[lang]
    title = f"{ticket}: {branch.split('-', 2)[-1].replace('-', ' ')}"
    iid = r.randrange(40, 900)
    result = {
        "id": int(digits(r, 9)),
        "iid": iid,
        "project_id": int(digits(r, 5)),
        "title": title,
        "state": "opened",
        "source_branch": branch,
        "target_branch": target,
        "merge_status": "checking",
        "draft": False,
        "author": {"username": "agent-bot"},
        "web_url": f"https://gitlab.northwind.io/{project}/-/merge_requests/{iid}",
        "created_at": f"{ctx.today.isoformat()}T11:48:20.615{ctx.tz(ctx.today)}",
    }
    answer = T(
        'Opened !{f0} "' + title + '" ({f1} → {f2}). Merge status is still being checked.',
        "He abierto la !{f0} «"
        + title
        + "» ({f1} → {f2}). El estado de fusión aún se está comprobando.",
        "MR !{f0} „" + title + "“ ist offen ({f1} → {f2}). Der Merge-Status wird noch geprüft.",
        "MR !{f0} « "
        + title
        + " » ouverte ({f1} → {f2}). Le statut de fusion est encore en cours de vérification.",
        'Ho aperto la !{f0} "' + title + '" ({f1} → {f2}). Lo stato di merge è ancora in verifica.',
        'Abri o !{f0} "'
        + title
        + '" ({f1} → {f2}). O estado de merge ainda está a ser verificado.',
    )[lang]
    return Scenario(
        "devtools",
        lang,
        [
            tool(
                "gitlab_create_merge_request",
                "GitLab REST: POST /projects/:id/merge_requests",
                {
                    "id": desc(S, "Project ID or URL-encoded path"),
                    "source_branch": S,
                    "target_branch": S,
                    "title": S,
                    "assignee_id": I,
                    "reviewer_ids": arr(I),
                    "remove_source_branch": B,
                    "squash": B,
                    "labels": S,
                },
                ["id", "source_branch", "target_branch", "title"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "gitlab_create_merge_request",
                        {
                            "id": project,
                            "source_branch": branch,
                            "target_branch": target,
                            "title": title,
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (iid, iid + 1),
            (branch, branch.replace(ticket.lower(), change_id(ticket.lower(), r))),
            (target, "develop" if target == "main" else "main"),
        ],
        T(
            "The pipeline passed.",
            "El pipeline ha pasado.",
            "Die Pipeline ist grün.",
            "Le pipeline est passé.",
            "La pipeline è passata.",
            "O pipeline passou.",
        )[lang],
        slots=[
            Slot(
                "id",
                0,
                0,
                ("source_branch",),
                branch.replace(ticket.lower(), change_id(ticket.lower(), r)),
            )
        ],
        invent=(0, 0, "reviewer_ids", [int(digits(r, 4))]),
    )


def d_abuseipdb(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    ip = f"{r.choice([45, 91, 103, 185, 194])}.{r.randrange(1, 255)}.{r.randrange(0, 255)}.{r.randrange(1, 254)}"
    days = r.choice([30, 90])
    request = T(
        f"is {ip} known for abuse? check the last {days} days",
        f"¿La IP {ip} tiene reportes de abuso? Mira los últimos {days} días",
        f"Ist {ip} als Angreifer bekannt? Prüf die letzten {days} Tage",
        f"L'IP {ip} est-elle signalée pour abus ? Regarde les {days} derniers jours",
        f"L'IP {ip} è segnalata per abusi? Controlla gli ultimi {days} giorni",
        f"O IP {ip} tem denúncias de abuso? Vê os últimos {days} dias",
    )[lang]
    score = r.choice([0, 12, 67, 100])
    reports = 0 if score == 0 else r.randrange(3, 400)
    country = r.choice(["NL", "SG", "RU", "US", "BR"])
    isp = r.choice(["DigitalOcean LLC", "OVH SAS", "Hetzner Online GmbH", "Contabo GmbH"])
    result = {
        "data": {
            "ipAddress": ip,
            "isPublic": True,
            "ipVersion": 4,
            "isWhitelisted": False,
            "abuseConfidenceScore": score,
            "countryCode": country,
            "usageType": "Data Center/Web Hosting/Transit",
            "isp": isp,
            "domain": isp.split()[0].lower() + ".com",
            "totalReports": reports,
            "numDistinctUsers": min(reports, r.randrange(1, 90)) if reports else 0,
            "lastReportedAt": f"{(ctx.today - dt.timedelta(days=1)).isoformat()}T22:41:03+00:00"
            if reports
            else None,
        }
    }
    answer = T(
        ip
        + " has an abuse confidence score of {f0}% with {f1} reports in the last "
        + str(days)
        + " days. It belongs to {f2} ({f3}).",
        ip
        + " tiene una puntuación de abuso del {f0} % con {f1} reportes en los últimos "
        + str(days)
        + " días. Pertenece a {f2} ({f3}).",
        ip
        + " hat einen Abuse-Score von {f0} % bei {f1} Meldungen in den letzten "
        + str(days)
        + " Tagen. Sie gehört zu {f2} ({f3}).",
        ip
        + " a un score d'abus de {f0} % avec {f1} signalements sur les "
        + str(days)
        + " derniers jours. Elle appartient à {f2} ({f3}).",
        ip
        + " ha un punteggio di abuso del {f0}% con {f1} segnalazioni negli ultimi "
        + str(days)
        + " giorni. Appartiene a {f2} ({f3}).",
        ip
        + " tem uma pontuação de abuso de {f0}% com {f1} denúncias nos últimos "
        + str(days)
        + " dias. Pertence a {f2} ({f3}).",
    )[lang]
    return Scenario(
        "security",
        lang,
        [
            tool(
                "abuseipdb_check",
                "AbuseIPDB API v2: check an IP address",
                {"ipAddress": S, "maxAgeInDays": desc(I, "1-365, default 30"), "verbose": B},
                ["ipAddress"],
            )
        ],
        request,
        [Step([Call("abuseipdb_check", {"ipAddress": ip, "maxAgeInDays": days})], [result])],
        answer,
        [
            (score, (score + 40) % 101),
            (reports, reports + 25),
            (isp, r.choice([x for x in ["Amazon.com Inc.", "Google LLC"]])),
            (country, "DE"),
        ],
        T(
            "It is also listed on Spamhaus.",
            "También figura en Spamhaus.",
            "Sie steht auch auf der Spamhaus-Liste.",
            "Elle figure aussi sur Spamhaus.",
            "È anche nella lista Spamhaus.",
            "Também consta da lista Spamhaus.",
        )[lang],
        slots=[Slot("ip", 0, 0, ("ipAddress",), change_ip(ip, r))],
        invent=None,
        rows=[
            ("Score", 0),
            (
                T("Reports", "Reportes", "Meldungen", "Signalements", "Segnalazioni", "Denúncias")[
                    lang
                ],
                1,
            ),
            ("ISP", 2),
        ],
    )


def d_gcp_firewall(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    cidr = f"{r.choice([203, 198, 81, 62])}.{r.randrange(0, 255)}.{r.randrange(0, 255)}.0/{r.choice([24, 28])}"
    port = r.choice([443, 5432, 22, 8443])
    project = r.choice(["nw-prod-311402", "acme-analytics", "storefront-eu"])
    request = T(
        f"in GCP project {project} allow tcp {port} ingress from {cidr} on the default network",
        f"En el proyecto de GCP {project}, permite entrada TCP {port} desde {cidr} en la red default",
        f"Im GCP-Projekt {project} bitte eingehend TCP {port} von {cidr} im Netz default erlauben",
        f"Dans le projet GCP {project}, autorise le TCP {port} entrant depuis {cidr} sur le réseau default",
        f"Nel progetto GCP {project} consenti TCP {port} in ingresso da {cidr} sulla rete default",
        f"No projeto GCP {project}, permite entrada TCP {port} a partir de {cidr} na rede default",
    )[lang]
    name = f"allow-tcp-{port}-{cidr.split('/')[0].replace('.', '-')}"
    op = "operation-" + digits(r, 13) + "-" + hexid(r, 13)
    result = {
        "kind": "compute#operation",
        "id": digits(r, 19),
        "name": op,
        "operationType": "insert",
        "status": "DONE",
        "progress": 100,
        "targetLink": f"https://www.googleapis.com/compute/v1/projects/{project}/global/firewalls/{name}",
        "insertTime": f"{ctx.today.isoformat()}T08:14:51.203-08:00",
        "user": "agent@" + project + ".iam.gserviceaccount.com",
    }
    answer = T(
        "Firewall rule `{f0}` is in place: ingress TCP {f1} from {f2} on default. The insert operation finished with status {f3}.",
        "La regla `{f0}` ya está: entrada TCP {f1} desde {f2} en default. La operación terminó con estado {f3}.",
        "Die Regel `{f0}` steht: eingehend TCP {f1} von {f2} im Netz default. Die Operation endete mit Status {f3}.",
        "La règle `{f0}` est en place : TCP {f1} entrant depuis {f2} sur default. L'opération s'est terminée avec le statut {f3}.",
        "La regola `{f0}` è attiva: TCP {f1} in ingresso da {f2} su default. L'operazione è terminata con stato {f3}.",
        "A regra `{f0}` está ativa: entrada TCP {f1} a partir de {f2} na rede default. A operação terminou com estado {f3}.",
    )[lang]
    body = {
        "name": name,
        "network": f"projects/{project}/global/networks/default",
        "direction": "INGRESS",
        "sourceRanges": [cidr],
        "allowed": [{"IPProtocol": "tcp", "ports": [str(port)]}],
    }
    return Scenario(
        "cloud",
        lang,
        [
            tool(
                "gcp_firewalls_insert",
                "Google Compute Engine API: firewalls.insert",
                {
                    "project": S,
                    "firewall": obj(
                        {
                            "name": S,
                            "network": S,
                            "direction": enum("INGRESS", "EGRESS"),
                            "priority": I,
                            "sourceRanges": arr(S),
                            "targetTags": arr(S),
                            "allowed": arr(obj({"IPProtocol": S, "ports": arr(S)})),
                        },
                        ["name"],
                    ),
                },
                ["project", "firewall"],
            )
        ],
        request,
        [Step([Call("gcp_firewalls_insert", {"project": project, "firewall": body})], [result])],
        answer,
        [
            (name, name.replace(str(port), str(port + 1))),
            (port, port + 1),
            (cidr, change_ip(cidr.split("/")[0], r) + "/" + cidr.split("/")[1]),
            ("DONE", "PENDING"),
        ],
        T(
            "It applies to every VM in the project.",
            "Se aplica a todas las VM del proyecto.",
            "Sie gilt für alle VMs im Projekt.",
            "Elle s'applique à toutes les VM du projet.",
            "Si applica a tutte le VM del progetto.",
            "Aplica-se a todas as VMs do projeto.",
        )[lang],
        slots=[
            Slot(
                "ip",
                0,
                0,
                ("firewall", "sourceRanges", 0),
                change_ip(cidr.split("/")[0], r) + "/" + cidr.split("/")[1],
            ),
            Slot("enum", 0, 0, ("firewall", "direction"), "EGRESS"),
        ],
        invent=(
            0,
            0,
            "firewall",
            {**body, "targetTags": ["db-" + r.choice(["primary", "replica"])]},
        ),
    )


def d_open_meteo(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    place = r.choice(
        {
            "en": [
                ("Denver", 39.73915, -104.9847, "America/Denver", "US"),
                ("Leeds", 53.79648, -1.54785, "Europe/London", "GB"),
            ],
            "es": [
                ("Zaragoza", 41.65606, -0.87734, "Europe/Madrid", "ES"),
                ("Málaga", 36.72016, -4.42034, "Europe/Madrid", "ES"),
            ],
            "de": [
                ("Leipzig", 51.33962, 12.37129, "Europe/Berlin", "DE"),
                ("Graz", 47.06667, 15.45, "Europe/Vienna", "AT"),
            ],
            "fr": [
                ("Nantes", 47.21725, -1.55336, "Europe/Paris", "FR"),
                ("Lyon", 45.74846, 4.84671, "Europe/Paris", "FR"),
            ],
            "it": [
                ("Bologna", 44.49381, 11.33875, "Europe/Rome", "IT"),
                ("Torino", 45.07049, 7.68682, "Europe/Rome", "IT"),
            ],
            "pt": [
                ("Porto", 41.14961, -8.61099, "Europe/Lisbon", "PT"),
                ("Curitiba", -25.42778, -49.27306, "America/Sao_Paulo", "BR"),
            ],
        }[lang]
    )
    city, lat, lon, zone, country = place
    day, said = relative_day(ctx, r)
    request = T(
        f"hourly temps for {city} {said}? planning a run in the morning",
        f"¿Qué temperaturas hará en {city} {said} por la mañana? Quiero salir a correr",
        f"Wie warm wird es {said} morgens in {city}? Ich will laufen gehen",
        f"Quelles températures à {city} {said} matin ? Je veux aller courir",
        f"Che temperature ci saranno a {city} {said} mattina? Voglio andare a correre",
        f"Que temperaturas vai fazer no {city} {said} de manhã? Quero ir correr"
        if city == "Porto"
        else f"Que temperaturas vai fazer em {city} {said} de manhã? Quero ir correr",
    )[lang]
    res1 = {
        "results": [
            {
                "id": int(digits(r, 7)),
                "name": city,
                "latitude": lat,
                "longitude": lon,
                "country_code": country,
                "timezone": zone,
                "population": int(digits(r, 6)),
            }
        ],
        "generationtime_ms": 0.61,
    }
    hours = [f"{day.isoformat()}T{h:02d}:00" for h in range(6, 11)]
    base = r.randrange(-2, 16)
    temps = [round(base + i * 0.9 + r.random(), 1) for i in range(5)]
    rain = [r.choice([0, 0, 5, 10, 20]) for _ in range(5)]
    res2 = {
        "latitude": round(lat, 2),
        "longitude": round(lon, 2),
        "timezone": zone,
        "utc_offset_seconds": int(
            dt.datetime(day.year, day.month, day.day, 12, tzinfo=ZoneInfo(zone))
            .utcoffset()
            .total_seconds()
        ),
        "hourly_units": {
            "time": "iso8601",
            "temperature_2m": "°C",
            "precipitation_probability": "%",
        },
        "hourly": {"time": hours, "temperature_2m": temps, "precipitation_probability": rain},
    }
    head = T(
        f"Morning in {city}, {written_date(day, 'en')}:",
        f"Mañana de {written_date(day, 'es')} en {city}:",
        f"{city}, {written_date(day, 'de')}, morgens:",
        f"À {city}, {written_date(day, 'fr')} matin :",
        f"A {city}, {written_date(day, 'it')} mattina:",
        f"Em {city}, {written_date(day, 'pt')} de manhã:",
    )[lang]
    rain_w = T("rain", "lluvia", "Regen", "pluie", "pioggia", "chuva")[lang]
    lines = [
        f"- {h[-5:]}: {{f{i}}} °C, {rain_w} {rain[i]} %"
        for i, h in enumerate(hours)
        if i in (0, 2, 4)
    ]
    answer = head + "\n" + "\n".join(lines)
    facts = [(num(t, lang), num(t + 4, lang)) for t in temps]
    return Scenario(
        "weather",
        lang,
        [
            tool(
                "open_meteo_geocoding",
                "Open-Meteo Geocoding API: search a place name",
                {"name": S, "count": I, "language": S},
                ["name"],
            ),
            tool(
                "open_meteo_forecast",
                "Open-Meteo Forecast API",
                {
                    "latitude": N,
                    "longitude": N,
                    "hourly": arr(S),
                    "daily": arr(S),
                    "start_date": desc(S, "yyyy-mm-dd"),
                    "end_date": desc(S, "yyyy-mm-dd"),
                    "timezone": S,
                    "temperature_unit": enum("celsius", "fahrenheit"),
                },
                ["latitude", "longitude"],
            ),
        ],
        request,
        [
            Step([Call("open_meteo_geocoding", {"name": city, "count": 1})], [res1]),
            Step(
                [
                    Call(
                        "open_meteo_forecast",
                        {
                            "latitude": lat,
                            "longitude": lon,
                            "hourly": ["temperature_2m", "precipitation_probability"],
                            "start_date": day.isoformat(),
                            "end_date": day.isoformat(),
                            "timezone": zone,
                        },
                    )
                ],
                [res2],
            ),
        ],
        answer,
        facts,
        "- "
        + T(
            "Wind: light breeze from the west.",
            "Viento: brisa suave del oeste.",
            "Wind: leichte Brise aus West.",
            "Vent : petite brise d'ouest.",
            "Vento: brezza leggera da ovest.",
            "Vento: brisa leve de oeste.",
        )[lang],
        slots=[Slot("date", 1, 0, ("start_date",), change_date(day.isoformat(), r))],
        invent=(1, 0, "temperature_unit", "fahrenheit") if lang != "en" else None,
    )


YELP_SORT = {"rating": T("best rated", "mejor valorados", "am besten bewertet", "les mieux notés", "con le migliori recensioni", "mais bem avaliados"),
             "distance": T("closest", "más cercanos", "am nächsten", "les plus proches", "più vicini", "mais perto"),
             "review_count": T("most reviewed", "con más reseñas", "mit den meisten Bewertungen", "les plus commentés", "con più recensioni", "com mais avaliações")}  # fmt: skip


def d_yelp(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    line, city, region, postal, country = street(r, lang)
    food = T("ramen", "tapas", "vegan", "brunch", "pizza", "sushi")[lang]
    sort = r.choice(list(YELP_SORT))
    request = T(
        f"{YELP_SORT[sort][lang]} {food} places near {line}, {city}?",
        f"Sitios de {food} {YELP_SORT[sort][lang]} cerca de {line}, {city}",
        f"{food.capitalize()} in der Nähe von {line}, {city}, {YELP_SORT[sort][lang]} zuerst",
        f"Des restos de {food} près du {line}, {city}, {YELP_SORT[sort][lang]} d'abord",
        f"Posti per {food} vicino a {line}, {city}, prima quelli {YELP_SORT[sort][lang]}",
        f"Sítios de {food} perto da {line}, {city}, {YELP_SORT[sort][lang]} primeiro",
    )[lang]
    names = r.sample(
        [
            "Kintsugi",
            "La Pepita",
            "Green Fork",
            "Bottega 21",
            "Casa Nómada",
            "Umami Corner",
            "Le Petit Zinc",
        ],
        2,
    )
    biz = [
        {
            "id": alnum(r, 22),
            "alias": n.lower().replace(" ", "-") + "-" + city.lower().split()[0],
            "name": n,
            "rating": r.choice([4.0, 4.5, 4.7, 3.9]),
            "review_count": r.randrange(40, 1900),
            "price": r.choice(["$", "$$", "$$$"]),
            "is_closed": False,
            "distance": round(r.uniform(120, 1400), 1),
            "location": {
                "address1": street(r, lang)[0],
                "city": city,
                "zip_code": postal,
                "country": country,
                "display_address": [street(r, lang)[0], f"{postal} {city}"],
            },
        }
        for n in names
    ]
    result = {"businesses": biz, "total": r.randrange(12, 140)}
    a, b = biz
    answer = T(
        "Top results:\n\n1. **"
        + a["name"]
        + "**: {f0}★ ({f1} reviews), about {f2} m away\n2. **"
        + b["name"]
        + "**: {f3}★ ({f4} reviews)",
        "Resultados:\n\n1. **"
        + a["name"]
        + "**: {f0}★ ({f1} reseñas), a unos {f2} m\n2. **"
        + b["name"]
        + "**: {f3}★ ({f4} reseñas)",
        "Ergebnisse:\n\n1. **"
        + a["name"]
        + "**: {f0}★ ({f1} Bewertungen), etwa {f2} m entfernt\n2. **"
        + b["name"]
        + "**: {f3}★ ({f4} Bewertungen)",
        "Résultats :\n\n1. **"
        + a["name"]
        + "** : {f0}★ ({f1} avis), à environ {f2} m\n2. **"
        + b["name"]
        + "** : {f3}★ ({f4} avis)",
        "Risultati:\n\n1. **"
        + a["name"]
        + "**: {f0}★ ({f1} recensioni), a circa {f2} m\n2. **"
        + b["name"]
        + "**: {f3}★ ({f4} recensioni)",
        "Resultados:\n\n1. **"
        + a["name"]
        + "**: {f0}★ ({f1} avaliações), a cerca de {f2} m\n2. **"
        + b["name"]
        + "**: {f3}★ ({f4} avaliações)",
    )[lang]
    facts = [
        (num(a["rating"], lang), num(a["rating"] - 1, lang)),
        (a["review_count"], a["review_count"] + 300),
        (round(a["distance"]), round(a["distance"]) + 900),
        (num(b["rating"], lang), num(b["rating"] - 1.2, lang)),
        (b["review_count"], b["review_count"] * 2 + 7),
    ]
    return Scenario(
        "local",
        lang,
        [
            tool(
                "yelp_business_search",
                "Yelp Fusion API: /v3/businesses/search",
                {
                    "location": S,
                    "latitude": N,
                    "longitude": N,
                    "term": S,
                    "categories": S,
                    "price": desc(S, "1,2,3,4"),
                    "open_now": B,
                    "open_at": desc(I, "Unix time"),
                    "sort_by": enum("best_match", "rating", "review_count", "distance"),
                    "limit": I,
                },
                [],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "yelp_business_search",
                        {"location": f"{line}, {city}", "term": food, "sort_by": sort, "limit": 2},
                    )
                ],
                [result],
            )
        ],
        answer,
        facts,
        T(
            "Both take reservations.",
            "Los dos aceptan reservas.",
            "Beide nehmen Reservierungen an.",
            "Les deux prennent les réservations.",
            "Entrambi accettano prenotazioni.",
            "Os dois aceitam reservas.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("location",), f"{change_address(line, r)}, {city}"),
            Slot(
                "enum",
                0,
                0,
                ("sort_by",),
                {"rating": "review_count", "distance": "rating", "review_count": "rating"}[sort],
            ),
        ],
        invent=(0, 0, "price", "2,3"),
    )


CABIN = {"ECONOMY": T("economy", "turista", "Economy", "économique", "economy", "económica"),
         "PREMIUM_ECONOMY": T("premium economy", "turista premium", "Premium Economy", "premium éco", "premium economy", "económica premium"),
         "BUSINESS": T("business", "business", "Business", "affaires", "business", "executiva")}  # fmt: skip
IATA = {"en": [("BOS", "Boston"), ("ORD", "Chicago"), ("LHR", "London")], "es": [("MAD", "Madrid"), ("BCN", "Barcelona")],
        "de": [("FRA", "Frankfurt"), ("MUC", "München")], "fr": [("CDG", "Paris"), ("LYS", "Lyon")],
        "it": [("FCO", "Roma"), ("MXP", "Milano")], "pt": [("LIS", "Lisboa"), ("GRU", "São Paulo")]}  # fmt: skip
DEST = [
    ("JFK", "New York"),
    ("ATH", "Athens"),
    ("KEF", "Reykjavík"),
    ("NRT", "Tokyo"),
    ("YUL", "Montréal"),
    ("DUB", "Dublin"),
]


def d_amadeus(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    (orig, ocity), (dest, dcity) = r.choice(IATA[lang]), r.choice(DEST)
    day, said = (
        relative_day(ctx, r)
        if r.random() < 0.4
        else (ctx.today + dt.timedelta(days=r.randrange(20, 120)), None)
    )
    said = said or spoken_date(day, lang, r)
    cabin = r.choice(list(CABIN))
    adults = r.choice([1, 2, 3])
    people = T(
        f"{adults} adult{'s' if adults > 1 else ''}",
        f"{adults} adulto{'s' if adults > 1 else ''}",
        f"{adults} Erwachsene",
        f"{adults} adulte{'s' if adults > 1 else ''}",
        f"{adults} adult{'i' if adults > 1 else 'o'}",
        f"{adults} adulto{'s' if adults > 1 else ''}",
    )[lang]
    request = T(
        f"cheapest {CABIN[cabin]['en']} flights {orig} to {dest} {said}, {people}",
        f"Vuelos más baratos en {CABIN[cabin]['es']} de {ocity} a {dcity} {said}, {people}",
        f"Günstigste Flüge {ocity}–{dcity} {said} in {CABIN[cabin]['de']}, {people}",
        f"Vols les moins chers en classe {CABIN[cabin]['fr']} de {ocity} à {dcity} {said}, {people}",
        f"Voli più economici in {CABIN[cabin]['it']} da {ocity} a {dcity} {said}, {people}",
        f"Voos mais baratos em classe {CABIN[cabin]['pt']} de {ocity} para {dcity} {said}, {people}",
    )[lang]
    cur = {"en": "USD", "pt": "EUR"}.get(lang, "EUR")
    offers = []
    for _ in range(2):
        total = round(r.uniform(180, 2400), 2)
        dep_h, dur_h, dur_m = r.randrange(6, 22), r.randrange(2, 13), r.choice([0, 15, 35, 50])
        offers.append(
            {
                "type": "flight-offer",
                "id": str(len(offers) + 1),
                "numberOfBookableSeats": r.randrange(1, 9),
                "itineraries": [
                    {
                        "duration": f"PT{dur_h}H{dur_m}M" if dur_m else f"PT{dur_h}H",
                        "segments": [
                            {
                                "departure": {
                                    "iataCode": orig,
                                    "at": f"{day.isoformat()}T{dep_h:02d}:{r.choice(['05', '40', '55'])}:00",
                                },
                                "arrival": {"iataCode": dest},
                                "carrierCode": r.choice(["IB", "LH", "AF", "TP", "AZ", "UA", "BA"]),
                                "number": str(r.randrange(100, 9999)),
                            }
                        ],
                    }
                ],
                "price": {
                    "currency": cur,
                    "total": f"{total:.2f}",
                    "base": f"{total * 0.8:.2f}",
                    "grandTotal": f"{total:.2f}",
                },
                "travelerPricings": [
                    {"travelerType": "ADULT", "fareDetailsBySegment": [{"cabin": cabin}]}
                ],
            }
        )
    offers.sort(key=lambda o: float(o["price"]["total"]))
    result = {"meta": {"count": 2}, "data": offers, "dictionaries": {"carriers": {}}}
    o1 = offers[0]
    seg = o1["itineraries"][0]["segments"][0]
    dep = seg["departure"]["at"][11:16]
    total = float(o1["price"]["total"])
    answer = T(
        "The cheapest offer is {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", departing {f1}, flight time "
        + o1["itineraries"][0]["duration"][2:].lower()
        + "). The other option costs {f2}.",
        "La oferta más barata cuesta {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", sale a las {f1}). La otra opción cuesta {f2}.",
        "Das günstigste Angebot kostet {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", Abflug {f1} Uhr). Die andere Option kostet {f2}.",
        "L'offre la moins chère est à {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", départ à {f1}). L'autre option coûte {f2}.",
        "L'offerta più economica costa {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", partenza alle {f1}). L'altra opzione costa {f2}.",
        "A oferta mais barata custa {f0} ("
        + seg["carrierCode"]
        + " "
        + seg["number"]
        + ", partida às {f1}). A outra opção custa {f2}.",
    )[lang]
    if adults > 1:
        answer = answer.replace(
            "{f0}",
            "{f0} "
            + T("in total", "en total", "insgesamt", "au total", "in totale", "no total")[lang],
            1,
        )
    second = float(offers[1]["price"]["total"])
    args = {
        "originLocationCode": orig,
        "destinationLocationCode": dest,
        "departureDate": day.isoformat(),
        "adults": adults,
        "travelClass": cabin,
        "currencyCode": cur,
        "max": 2,
    }
    return Scenario(
        "travel",
        lang,
        [
            tool(
                "amadeus_flight_offers_search",
                "Amadeus Self-Service: GET /v2/shopping/flight-offers",
                {
                    "originLocationCode": desc(S, "IATA code"),
                    "destinationLocationCode": desc(S, "IATA code"),
                    "departureDate": desc(S, "YYYY-MM-DD"),
                    "returnDate": S,
                    "adults": I,
                    "travelClass": enum("ECONOMY", "PREMIUM_ECONOMY", "BUSINESS", "FIRST"),
                    "nonStop": B,
                    "currencyCode": S,
                    "maxPrice": desc(I, "Maximum price per traveler, no decimals"),
                    "max": I,
                },
                ["originLocationCode", "destinationLocationCode", "departureDate", "adults"],
            )
        ],
        request,
        [Step([Call("amadeus_flight_offers_search", args)], [result])],
        answer,
        [
            (money(total, cur, lang), money(total + 85, cur, lang)),
            (dep, f"{(int(dep[:2]) + 3) % 24:02d}{dep[2:]}"),
            (money(second, cur, lang), money(second - 60, cur, lang)),
        ],
        T(
            "Both fares include a checked bag.",
            "Las dos tarifas incluyen maleta facturada.",
            "Beide Tarife enthalten ein Aufgabegepäck.",
            "Les deux tarifs incluent un bagage en soute.",
            "Entrambe le tariffe includono un bagaglio da stiva.",
            "As duas tarifas incluem bagagem de porão.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("departureDate",), change_date(day.isoformat(), r)),
            Slot(
                "enum",
                0,
                0,
                ("travelClass",),
                {"ECONOMY": "PREMIUM_ECONOMY", "PREMIUM_ECONOMY": "BUSINESS", "BUSINESS": "FIRST"}[
                    cabin
                ],
            ),
            *(
                [Slot("id", 0, 0, ("originLocationCode",), change_id(orig, r))]
                if lang == "en"
                else []
            ),
        ],
        invent=(0, 0, "maxPrice", r.choice([500, 800, 1200])),
    )


MODES = {"driving": T("driving", "en coche", "mit dem Auto", "en voiture", "in macchina", "de carro"),
         "transit": T("by transit", "en transporte público", "mit den Öffis", "en transports en commun", "coi mezzi pubblici", "de transportes públicos"),
         "bicycling": T("by bike", "en bici", "mit dem Rad", "à vélo", "in bici", "de bicicleta")}  # fmt: skip


def d_distance_matrix(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    o_line, city = street(r, lang)[:2]
    d_line = o_line
    while d_line == o_line:  # two addresses of the same city
        template = r.choice([s for s in STREETS[lang] if s[1] == city])[0]
        d_line = template.format(n=r.randrange(3, 290))
    mode = r.choice(list(MODES))
    request = T(
        f"how long from {o_line} to {d_line} in {city} {MODES[mode]['en']}?",
        f"¿Cuánto se tarda {MODES[mode]['es']} de {o_line} a {d_line}, en {city}?",
        f"Wie lange brauche ich {MODES[mode]['de']} von der {o_line} zur {d_line} in {city}?",
        f"Combien de temps {MODES[mode]['fr']} du {o_line} au {d_line} à {city} ?",
        f"Quanto ci vuole {MODES[mode]['it']} da {o_line} a {d_line} a {city}?",
        f"Quanto tempo demora {MODES[mode]['pt']} da {o_line} até à {d_line}, em {city}?",
    )[lang]
    km = round(r.uniform(1.2, 14), 1)
    minutes = int(km * {"driving": 3.1, "transit": 4.2, "bicycling": 4.6}[mode]) + r.randrange(2, 9)
    result = {
        "destination_addresses": [f"{d_line}, {city}"],
        "origin_addresses": [f"{o_line}, {city}"],
        "status": "OK",
        "rows": [
            {
                "elements": [
                    {
                        "status": "OK",
                        "distance": {"text": f"{km} km", "value": int(km * 1000)},
                        "duration": {
                            "text": f"{minutes} mins",
                            "value": minutes * 60 + r.randrange(0, 59),
                        },
                    }
                ]
            }
        ],
    }
    answer = T(
        "About {f0} minutes " + MODES[mode]["en"] + " ({f1} km).",
        "Unos {f0} minutos " + MODES[mode]["es"] + " ({f1} km).",
        "Etwa {f0} Minuten " + MODES[mode]["de"] + " ({f1} km).",
        "Environ {f0} minutes " + MODES[mode]["fr"] + " ({f1} km).",
        "Circa {f0} minuti " + MODES[mode]["it"] + " ({f1} km).",
        "Cerca de {f0} minutos " + MODES[mode]["pt"] + " ({f1} km).",
    )[lang]
    return Scenario(
        "maps",
        lang,
        [
            tool(
                "google_distance_matrix",
                "Google Maps Distance Matrix API: travel distance and time between origins and destinations",
                {
                    "origins": desc(S, "Addresses or lat,lng separated by |"),
                    "destinations": S,
                    "mode": enum("driving", "walking", "bicycling", "transit"),
                    "departure_time": desc(S, "'now' or Unix seconds"),
                    "units": enum("metric", "imperial"),
                    "avoid": enum("tolls", "highways", "ferries"),
                },
                ["origins", "destinations"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "google_distance_matrix",
                        {
                            "origins": f"{o_line}, {city}",
                            "destinations": f"{d_line}, {city}",
                            "mode": mode,
                            "units": "metric",
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [(minutes, minutes + 12), (num(km, lang), num(km + 3, lang))],
        T(
            "Traffic is light at the moment.",
            "Ahora mismo hay poco tráfico.",
            "Im Moment ist wenig Verkehr.",
            "La circulation est fluide en ce moment.",
            "Al momento il traffico è scorrevole.",
            "Neste momento há pouco trânsito.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("origins",), f"{change_address(o_line, r)}, {city}"),
            Slot("address", 0, 0, ("destinations",), f"{change_address(d_line, r)}, {city}"),
            Slot(
                "enum",
                0,
                0,
                ("mode",),
                {"driving": "walking", "transit": "driving", "bicycling": "walking"}[mode],
            ),
        ],
        invent=(0, 0, "departure_time", str(ctx.epoch(ctx.today, 8, 30))),
    )


def d_spotify(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    song, artist = r.choice(
        [
            ("Clair de Lune", "Claude Debussy"),
            ("Bohemian Rhapsody", "Queen"),
            ("Despacito", "Luis Fonsi"),
            ("Águas de Março", "Elis Regina"),
            ("Azzurro", "Adriano Celentano"),
            ("99 Luftballons", "Nena"),
        ]
    )
    playlist = alnum(r, 22).replace("l", "L")
    request = T(
        f"add {song} by {artist} to my playlist https://open.spotify.com/playlist/{playlist}",
        f"Añade «{song}» de {artist} a mi lista https://open.spotify.com/playlist/{playlist}",
        f"Füg „{song}“ von {artist} zu meiner Playlist hinzu: https://open.spotify.com/playlist/{playlist}",
        f"Ajoute « {song} » de {artist} à ma playlist https://open.spotify.com/playlist/{playlist}",
        f'Aggiungi "{song}" di {artist} alla mia playlist https://open.spotify.com/playlist/{playlist}',
        f'Adiciona "{song}" de {artist} à minha playlist https://open.spotify.com/playlist/{playlist}',
    )[lang]
    tid = alnum(r, 22)
    ms = r.randrange(150_000, 360_000)
    album = r.choice(
        ["Greatest Hits", "Suite bergamasque", "Vida", "Elis & Tom", "A Night at the Opera"]
    )
    res1 = {
        "tracks": {
            "href": "https://api.spotify.com/v1/search?offset=0&limit=1",
            "limit": 1,
            "offset": 0,
            "total": r.randrange(80, 900),
            "next": "https://api.spotify.com/v1/search?offset=1&limit=1",
            "items": [
                {
                    "id": tid,
                    "uri": f"spotify:track:{tid}",
                    "name": song,
                    "duration_ms": ms,
                    "explicit": False,
                    "popularity": r.randrange(40, 95),
                    "artists": [{"id": alnum(r, 22), "name": artist}],
                    "album": {"name": album, "release_date": str(r.randrange(1965, 2020))},
                }
            ],
        }
    }
    snap = alnum(r, 32)
    res2 = {"snapshot_id": snap}
    mins, secs = divmod(ms // 1000, 60)
    answer = T(
        'Added "{f0}" by ' + artist + " ({f1}, from *" + album + "*) to your playlist.",
        "He añadido «{f0}» de " + artist + " ({f1}, del álbum *" + album + "*) a tu lista.",
        "„{f0}“ von " + artist + " ({f1}, aus *" + album + "*) ist jetzt in deiner Playlist.",
        "« {f0} » de " + artist + " ({f1}, extrait de *" + album + "*) a été ajouté à ta playlist.",
        'Ho aggiunto "{f0}" di '
        + artist
        + " ({f1}, dall'album *"
        + album
        + "*) alla tua playlist.",
        'Adicionei "{f0}" de ' + artist + " ({f1}, do álbum *" + album + "*) à tua playlist.",
    )[lang]
    return Scenario(
        "music",
        lang,
        [
            tool(
                "spotify_search",
                "Spotify Web API: search for items",
                {
                    "q": S,
                    "type": arr(enum("album", "artist", "playlist", "track")),
                    "market": S,
                    "limit": I,
                    "offset": I,
                },
                ["q", "type"],
            ),
            tool(
                "spotify_add_items_to_playlist",
                "Spotify Web API: add items to a playlist",
                {"playlist_id": S, "uris": arr(S), "position": I},
                ["playlist_id", "uris"],
            ),
        ],
        request,
        [
            Step(
                [
                    Call(
                        "spotify_search",
                        {"q": f"track:{song} artist:{artist}", "type": ["track"], "limit": 1},
                    )
                ],
                [res1],
            ),
            Step(
                [
                    Call(
                        "spotify_add_items_to_playlist",
                        {"playlist_id": playlist, "uris": [f"spotify:track:{tid}"]},
                    )
                ],
                [res2],
            ),
        ],
        answer,
        [
            (song, r.choice(["Yesterday", "Volare", "La Bamba"])),
            (f"{mins}:{secs:02d}", f"{mins + 1}:{secs:02d}"),
        ],
        T(
            "It's now the first song in the playlist.",
            "Ahora es la primera canción de la lista.",
            "Er steht jetzt ganz oben in der Playlist.",
            "Il est maintenant en tête de la playlist.",
            "Ora è il primo brano della playlist.",
            "Agora é a primeira música da playlist.",
        )[lang],
        slots=[Slot("id", 1, 0, ("playlist_id",), change_id(playlist, r))],
        invent=(1, 0, "position", 0),
    )


def d_airtable(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    base = "app" + alnum(r, 14)
    cutoff = ctx.today + dt.timedelta(days=r.randrange(3, 25))
    said = spoken_date(cutoff, lang, r)
    table = T("Invoices", "Facturas", "Rechnungen", "Factures", "Fatture", "Faturas")[lang]
    request = T(
        f"in airtable base {base}, which {table} are unpaid and due before {said}?",
        f"En la base de Airtable {base}, ¿qué facturas están sin pagar y vencen antes del {said.replace('el ', '')}?",
        f"Welche Rechnungen in der Airtable-Base {base} sind offen und vor dem {said.replace('am ', '')} fällig?",
        f"Dans la base Airtable {base}, quelles factures sont impayées avec une échéance avant le {said.replace('le ', '')} ?",
        f"Nella base Airtable {base}, quali fatture non sono pagate e scadono prima del {said.replace('il ', '')}?",
        f"Na base do Airtable {base}, que faturas estão por pagar e vencem antes de {said.replace('dia ', '').replace('em ', '')}?",
    )[lang]
    cur = currency(lang, r)
    clients = r.sample(
        ["Globex", "Initech", "Umbrella Corp", "Hooli", "Stark Industries", "Wayne Enterprises"], 2
    )
    amounts = [round(r.uniform(300, 9000), 2) for _ in clients]
    dues = sorted(cutoff - dt.timedelta(days=r.randrange(1, 15)) for _ in clients)
    formula = f"AND({{Status}} != 'Paid', IS_BEFORE({{Due date}}, '{cutoff.isoformat()}'))"
    result = {
        "records": [
            {
                "id": "rec" + alnum(r, 14),
                "createdTime": f"{(ctx.today - dt.timedelta(days=30)).isoformat()}T10:00:00.000Z",
                "fields": {
                    "Client": c,
                    "Amount": a,
                    "Currency": cur,
                    "Status": "Sent",
                    "Due date": d.isoformat(),
                    "Invoice #": f"INV-{r.randrange(1000, 9999)}",
                },
            }
            for c, a, d in zip(clients, amounts, dues, strict=True)
        ]
    }
    unit = T("due", "vence el", "fällig am", "échéance le", "scadenza", "vence a")[lang]
    answer = T(
        "Two unpaid invoices are due before then:",
        "Hay dos facturas sin pagar que vencen antes:",
        "Zwei offene Rechnungen sind vorher fällig:",
        "Deux factures impayées arrivent à échéance avant :",
        "Due fatture non pagate scadono prima:",
        "Há duas faturas por pagar que vencem antes:",
    )[lang]
    answer += (
        "\n\n| Client | "
        + T("Amount", "Importe", "Betrag", "Montant", "Importo", "Valor")[lang]
        + " | "
        + unit
        + " |\n|---|---|---|\n"
    )
    answer += "\n".join(f"| {c} | {{f{2 * i}}} | {{f{2 * i + 1}}} |" for i, c in enumerate(clients))
    facts = []
    for a, d in zip(amounts, dues, strict=True):
        facts += [
            (money(a, cur, lang), money(a + 1000, cur, lang)),
            (d.isoformat(), (d + dt.timedelta(days=9)).isoformat()),
        ]
    return Scenario(
        "database",
        lang,
        [
            tool(
                "airtable_list_records",
                "Airtable Web API: list records of a table",
                {
                    "baseId": S,
                    "tableIdOrName": S,
                    "filterByFormula": S,
                    "maxRecords": I,
                    "pageSize": I,
                    "offset": S,
                    "view": S,
                    "sort": arr(obj({"field": S, "direction": enum("asc", "desc")})),
                },
                ["baseId", "tableIdOrName"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "airtable_list_records",
                        {"baseId": base, "tableIdOrName": table, "filterByFormula": formula},
                    )
                ],
                [result],
            )
        ],
        answer,
        facts,
        "| Hooli Europe | " + money(250, cur, lang) + " | " + cutoff.isoformat() + " |",
        slots=[
            Slot(
                "date",
                0,
                0,
                ("filterByFormula",),
                formula.replace(cutoff.isoformat(), change_date(cutoff.isoformat(), r)),
            ),
            Slot("id", 0, 0, ("baseId",), change_id(base, r)),
        ],
        invent=(0, 0, "view", "viw" + alnum(r, 14)),
    )


COLLECTION = {"charge_automatically": T("charge the card automatically", "cobrar la tarjeta automáticamente", "die Karte automatisch belasten",
                                        "prélever la carte automatiquement", "addebitare la carta in automatico", "cobrar o cartão automaticamente"),
              "send_invoice": T("send an invoice", "enviar factura", "eine Rechnung schicken", "envoyer une facture", "inviare fattura", "enviar fatura")}  # fmt: skip


def d_stripe_subscription(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    customer = "cus_" + alnum(r, 14)
    price = "price_1" + alnum(r, 23)
    trial = r.choice([7, 14, 30])
    method = r.choice(list(COLLECTION))
    request = T(
        f"subscribe {customer} to {price} with a {trial}-day trial, {COLLECTION[method]['en']}",
        f"Suscribe a {customer} al precio {price} con {trial} días de prueba; {COLLECTION[method]['es']}",
        f"Leg für {customer} ein Abo auf {price} an, {trial} Tage Testphase, {COLLECTION[method]['de']}",
        f"Abonne {customer} au tarif {price} avec {trial} jours d'essai ; {COLLECTION[method]['fr']}",
        f"Abbona {customer} al prezzo {price} con {trial} giorni di prova; {COLLECTION[method]['it']}",
        f"Cria a assinatura de {customer} no preço {price} com {trial} dias de teste; {COLLECTION[method]['pt']}",
    )[lang]
    sub = "sub_1" + alnum(r, 23)
    start = ctx.epoch(ctx.today, 15, 2)
    end = start + trial * 86400
    unit = r.choice([900, 2900, 4900, 19900])
    cur = "usd" if lang == "en" else "eur"
    args: dict[str, Any] = {
        "customer": customer,
        "items": [{"price": price}],
        "trial_period_days": trial,
        "collection_method": method,
    }
    if method == "send_invoice":
        args["days_until_due"] = 30 if lang == "en" else 14
        request += T(
            ", net 30",
            ", con 14 días para pagar",
            ", Zahlungsziel 14 Tage",
            ", paiement à 14 jours",
            ", pagamento a 14 giorni",
            ", com 14 dias para pagar",
        )[lang]
    result = {
        "id": sub,
        "object": "subscription",
        "customer": customer,
        "status": "trialing",
        "collection_method": method,
        "trial_start": start,
        "trial_end": end,
        "current_period_end": end,
        "cancel_at_period_end": False,
        "items": {
            "object": "list",
            "data": [
                {
                    "id": "si_" + alnum(r, 14),
                    "price": {
                        "id": price,
                        "unit_amount": unit,
                        "currency": cur,
                        "recurring": {"interval": "month"},
                    },
                    "quantity": 1,
                }
            ],
        },
    }
    end_day = ctx.today + dt.timedelta(days=trial)
    answer = T(
        "Subscription {f0} is **trialing** until {f1}; after that it's {f2} a month.",
        "La suscripción {f0} está **en prueba** hasta {f1}; después cuesta {f2} al mes.",
        "Das Abo {f0} ist bis {f1} in der **Testphase**; danach kostet es {f2} im Monat.",
        "L'abonnement {f0} est **en essai** jusqu'au {f1} ; ensuite {f2} par mois.",
        "L'abbonamento {f0} è **in prova** fino a {f1}; poi costa {f2} al mese.",
        "A assinatura {f0} está **em teste** até {f1}; depois custa {f2} por mês.",
    )[lang]
    return Scenario(
        "billing",
        lang,
        [
            tool(
                "stripe_create_subscription",
                "Stripe API: POST /v1/subscriptions",
                {
                    "customer": S,
                    "items": arr(obj({"price": S, "quantity": I})),
                    "trial_period_days": I,
                    "trial_end": desc(I, "Unix timestamp"),
                    "collection_method": enum("charge_automatically", "send_invoice"),
                    "days_until_due": I,
                    "coupon": S,
                    "default_payment_method": S,
                },
                ["customer", "items"],
            )
        ],
        request,
        [Step([Call("stripe_create_subscription", args)], [result])],
        answer,
        [
            (sub, change_id(sub, r)),
            (written_date(end_day, lang), written_date(end_day + dt.timedelta(days=7), lang)),
            (money(unit / 100, cur.upper(), lang), money(unit / 100 + 10, cur.upper(), lang)),
        ],
        T(
            "The first invoice includes a 20% discount.",
            "La primera factura lleva un 20 % de descuento.",
            "Die erste Rechnung enthält 20 % Rabatt.",
            "La première facture inclut une remise de 20 %.",
            "La prima fattura include uno sconto del 20%.",
            "A primeira fatura inclui 20% de desconto.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("customer",), change_id(customer, r)),
            Slot(
                "enum",
                0,
                0,
                ("collection_method",),
                "send_invoice" if method == "charge_automatically" else "charge_automatically",
            ),
        ],
        invent=(0, 0, "default_payment_method", "pm_1" + alnum(r, 23)),
        rows=[
            (
                T("Subscription", "Suscripción", "Abo", "Abonnement", "Abbonamento", "Assinatura")[
                    lang
                ],
                0,
            ),
            (
                T(
                    "Trial ends",
                    "Fin de la prueba",
                    "Testphase bis",
                    "Fin de l'essai",
                    "Fine prova",
                    "Fim do teste",
                )[lang],
                1,
            ),
            (T("Price", "Precio", "Preis", "Prix", "Prezzo", "Preço")[lang], 2),
        ],
    )


def d_xero_invoice(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    client = r.choice(
        ["Bluebird Cafe", "Ridgeway Builders", "Studio Lumen", "Fratelli Conti", "Padaria Estrela"]
    )
    cur = {"en": r.choice(["USD", "GBP"]), "pt": "EUR"}.get(lang, "EUR")
    hours = r.choice([6, 12, 20])
    rate = r.choice([85, 95.5, 120, 140])
    due, said = (
        relative_day(ctx, r) if r.random() < 0.3 else (ctx.today + dt.timedelta(days=30), None)
    )
    said_due = said or spoken_date(due, lang, r)
    request = T(
        f"draft an invoice to {client}: {hours} hours consulting at {money(rate, cur, lang, r)}/h, due {said_due}",
        f"Prepara un borrador de factura para {client}: {hours} horas de consultoría a {money(rate, cur, lang, r)}/h, vencimiento {said_due}",
        f"Erstell einen Rechnungsentwurf für {client}: {hours} Stunden Beratung à {money(rate, cur, lang, r)}/Std., fällig {said_due}",
        f"Prépare un brouillon de facture pour {client} : {hours} heures de conseil à {money(rate, cur, lang, r)}/h, échéance {said_due}",
        f"Prepara una bozza di fattura per {client}: {hours} ore di consulenza a {money(rate, cur, lang, r)}/h, scadenza {said_due}",
        f"Prepara um rascunho de fatura para {client}: {hours} horas de consultoria a {money(rate, cur, lang, r)}/h, vencimento {said_due}",
    )[lang]
    total = round(hours * rate, 2)
    inv = f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}"
    number = f"INV-{r.randrange(100, 999):04d}"
    line = {
        "Description": "Consulting",
        "Quantity": hours,
        "UnitAmount": rate,
        "AccountCode": "200",
    }
    result = {
        "Id": hexid(r, 8),
        "Status": "OK",
        "Invoices": [
            {
                "Type": "ACCREC",
                "InvoiceID": inv,
                "InvoiceNumber": number,
                "Status": "DRAFT",
                "Contact": {
                    "ContactID": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
                    "Name": client,
                },
                "DateString": f"{ctx.today.isoformat()}T00:00:00",
                "DueDateString": f"{due.isoformat()}T00:00:00",
                "CurrencyCode": cur,
                "LineAmountTypes": "Exclusive",
                "SubTotal": total,
                "TotalTax": 0.0,
                "Total": total,
                "AmountDue": total,
                "LineItems": [
                    {
                        **line,
                        "LineAmount": total,
                        "LineItemID": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
                    }
                ],
            }
        ],
    }
    answer = T(
        "Draft {f0} for "
        + client
        + " is ready: "
        + str(hours)
        + " h × {f1} = **{f2}**, due {f3}. It's still a draft.",
        "Borrador {f0} para "
        + client
        + " listo: "
        + str(hours)
        + " h × {f1} = **{f2}**, vence {f3}. Sigue en borrador.",
        "Entwurf {f0} für "
        + client
        + " steht: "
        + str(hours)
        + " Std. × {f1} = **{f2}**, fällig {f3}. Noch ein Entwurf.",
        "Brouillon {f0} pour "
        + client
        + " prêt : "
        + str(hours)
        + " h × {f1} = **{f2}**, échéance {f3}. C'est encore un brouillon.",
        "Bozza {f0} per "
        + client
        + " pronta: "
        + str(hours)
        + " h × {f1} = **{f2}**, scadenza {f3}. È ancora una bozza.",
        "Rascunho {f0} para "
        + client
        + " pronto: "
        + str(hours)
        + " h × {f1} = **{f2}**, vence {f3}. Ainda é um rascunho.",
    )[lang]
    return Scenario(
        "accounting",
        lang,
        [
            tool(
                "xero_create_invoices",
                "Xero Accounting API: PUT /Invoices",
                {
                    "Invoices": arr(
                        obj(
                            {
                                "Type": enum("ACCREC", "ACCPAY"),
                                "Contact": obj({"ContactID": S, "Name": S}),
                                "LineItems": arr(
                                    obj(
                                        {
                                            "Description": S,
                                            "Quantity": N,
                                            "UnitAmount": N,
                                            "AccountCode": S,
                                            "TaxType": S,
                                        }
                                    )
                                ),
                                "Date": S,
                                "DueDate": desc(S, "YYYY-MM-DD"),
                                "CurrencyCode": S,
                                "Status": enum("DRAFT", "SUBMITTED", "AUTHORISED"),
                                "Reference": S,
                            }
                        )
                    )
                },
                ["Invoices"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "xero_create_invoices",
                        {
                            "Invoices": [
                                {
                                    "Type": "ACCREC",
                                    "Contact": {"Name": client},
                                    "LineItems": [line],
                                    "DueDate": due.isoformat(),
                                    "CurrencyCode": cur,
                                    "Status": "DRAFT",
                                }
                            ]
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (number, change_id(number, r)),
            (money(rate, cur, lang), money(rate + 5, cur, lang)),
            (money(total, cur, lang), money(total + 100, cur, lang)),
            (written_date(due, lang), written_date(due + dt.timedelta(days=1), lang)),
        ],
        T(
            "VAT at 20% will be added when it's approved.",
            "Al aprobarla se añadirá el 21 % de IVA.",
            "Bei Freigabe kommen 19 % MwSt. dazu.",
            "La TVA à 20 % sera ajoutée à la validation.",
            "All'approvazione si aggiungerà l'IVA al 22%.",
            "Ao aprovar será acrescentado IVA de 23%.",
        )[lang],
        slots=[
            Slot(
                "amount",
                0,
                0,
                ("Invoices", 0, "LineItems", 0, "UnitAmount"),
                change_number(rate, r),
            ),
            Slot("date", 0, 0, ("Invoices", 0, "DueDate"), change_date(due.isoformat(), r)),
            Slot("enum", 0, 0, ("Invoices", 0, "Status"), "SUBMITTED"),
        ],
        invent=(
            0,
            0,
            "Invoices",
            [
                {
                    "Type": "ACCREC",
                    "Contact": {"Name": client},
                    "LineItems": [line],
                    "DueDate": due.isoformat(),
                    "CurrencyCode": cur,
                    "Status": "DRAFT",
                    "Reference": "PO-" + digits(r, 5),
                }
            ],
        ),
        rows=[
            (T("Invoice", "Factura", "Rechnung", "Facture", "Fattura", "Fatura")[lang], 0),
            (T("Rate", "Tarifa", "Satz", "Taux", "Tariffa", "Taxa")[lang], 1),
            ("Total", 2),
            (T("Due", "Vence", "Fällig", "Échéance", "Scadenza", "Vencimento")[lang], 3),
        ],
    )


FEDEX_STATUS = {"IT": T("in transit", "en tránsito", "unterwegs", "en transit", "in transito", "em trânsito"),
                "OD": T("out for delivery", "en reparto", "in Zustellung", "en cours de livraison", "in consegna", "em distribuição"),
                "DL": T("delivered", "entregado", "zugestellt", "livré", "consegnato", "entregue")}  # fmt: skip


def d_fedex(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    number = digits(r, 12)
    spaced = " ".join([number[:4], number[4:8], number[8:]]) if r.random() < 0.4 else number
    request = T(
        f"where's my fedex package {spaced}??",
        f"¿Dónde está mi paquete de FedEx {spaced}?",
        f"Wo ist mein FedEx-Paket {spaced}?",
        f"Où en est mon colis FedEx {spaced} ?",
        f"Dov'è il mio pacco FedEx {spaced}?",
        f"Onde está a minha encomenda FedEx {spaced}?",
    )[lang]
    code = r.choice(["IT", "OD"])
    city, cc = r.choice(
        [
            ("MEMPHIS", "US"),
            ("INDIANAPOLIS", "US"),
            ("PARIS", "FR"),
            ("KÖLN", "DE"),
            ("MILANO", "IT"),
            ("MADRID", "ES"),
        ]
    )
    eta = ctx.today + dt.timedelta(days=0 if code == "OD" else r.randrange(1, 4))
    off = {"US": "-05:00", "FR": "+01:00", "DE": "+01:00", "IT": "+01:00", "ES": "+01:00"}[cc]
    result = {
        "transactionId": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
        "output": {
            "completeTrackResults": [
                {
                    "trackingNumber": number,
                    "trackResults": [
                        {
                            "trackingNumberInfo": {"trackingNumber": number, "carrierCode": "FDXE"},
                            "latestStatusDetail": {
                                "code": code,
                                "derivedCode": code,
                                "statusByLocale": {
                                    "IT": "In transit",
                                    "OD": "On FedEx vehicle for delivery",
                                }[code],
                                "description": {
                                    "IT": "In transit",
                                    "OD": "On FedEx vehicle for delivery",
                                }[code],
                                "scanLocation": {"city": city, "countryCode": cc},
                            },
                            "dateAndTimes": [
                                {
                                    "type": "ESTIMATED_DELIVERY",
                                    "dateTime": f"{eta.isoformat()}T{'12:00:00' if code == 'IT' else '18:00:00'}{off}",
                                },
                                {
                                    "type": "SHIP",
                                    "dateTime": f"{(ctx.today - dt.timedelta(days=3)).isoformat()}T00:00:00{off}",
                                },
                            ],
                            "serviceDetail": {
                                "type": "INTERNATIONAL_PRIORITY",
                                "description": "FedEx International Priority",
                            },
                        }
                    ],
                }
            ]
        },
    }
    city_w = city.title()
    eta_w = (
        T("today", "hoy", "heute", "aujourd'hui", "oggi", "hoje")[lang]
        if code == "OD"
        else written_date(eta, lang)
    )
    answer = T(
        "Your package is **{f0}**, last scanned in {f1}. Estimated delivery: {f2}.",
        "Tu paquete está **{f0}**; último escaneo en {f1}. Entrega estimada: {f2}.",
        "Dein Paket ist **{f0}**, zuletzt gescannt in {f1}. Voraussichtliche Zustellung: {f2}.",
        "Votre colis est **{f0}**, dernier scan à {f1}. Livraison estimée : {f2}.",
        "Il pacco è **{f0}**, ultima scansione a {f1}. Consegna prevista: {f2}.",
        "A encomenda está **{f0}**, última leitura em {f1}. Entrega prevista: {f2}.",
    )[lang]
    other = "OD" if code == "IT" else "DL"
    return Scenario(
        "shipping",
        lang,
        [
            tool(
                "fedex_track_by_number",
                "FedEx Track API: POST /track/v1/trackingnumbers",
                {
                    "trackingInfo": arr(
                        obj(
                            {
                                "trackingNumberInfo": obj(
                                    {
                                        "trackingNumber": S,
                                        "carrierCode": S,
                                        "trackingNumberUniqueId": S,
                                    }
                                ),
                                "shipDateBegin": S,
                                "shipDateEnd": S,
                            }
                        )
                    ),
                    "includeDetailedScans": B,
                },
                ["trackingInfo", "includeDetailedScans"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "fedex_track_by_number",
                        {
                            "trackingInfo": [{"trackingNumberInfo": {"trackingNumber": number}}],
                            "includeDetailedScans": False,
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (FEDEX_STATUS[code][lang], FEDEX_STATUS[other][lang]),
            (city_w, "Louisville" if city_w != "Louisville" else "Memphis"),
            (eta_w, written_date(eta + dt.timedelta(days=2), lang)),
        ],
        T(
            "It requires a signature on delivery.",
            "Hará falta firmar en la entrega.",
            "Bei Zustellung ist eine Unterschrift nötig.",
            "Une signature sera demandée à la livraison.",
            "Alla consegna serve una firma.",
            "Será pedida assinatura na entrega.",
        )[lang],
        slots=[
            Slot(
                "id",
                0,
                0,
                ("trackingInfo", 0, "trackingNumberInfo", "trackingNumber"),
                change_id(number, r),
            )
        ],
        invent=(
            0,
            0,
            "trackingInfo",
            [
                {
                    "trackingNumberInfo": {"trackingNumber": number},
                    "shipDateBegin": (ctx.today - dt.timedelta(days=10)).isoformat(),
                }
            ],
        ),
        rows=[
            ("Status", 0),
            (
                T(
                    "Last scan",
                    "Último escaneo",
                    "Letzter Scan",
                    "Dernier scan",
                    "Ultima scansione",
                    "Última leitura",
                )[lang],
                1,
            ),
            (
                T(
                    "ETA",
                    "Entrega estimada",
                    "Zustellung",
                    "Livraison estimée",
                    "Consegna prevista",
                    "Entrega prevista",
                )[lang],
                2,
            ),
        ],
    )


def d_wise_quote(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    src = {"en": "GBP", "pt": "EUR"}.get(lang, "EUR")
    dst = r.choice([c for c in ["USD", "BRL", "CHF", "MXN", "JPY"] if c != src])
    amount = r.choice([250, 1000, 1250.5, 3200, 480.75])
    request = T(
        f"how much would {dst} would they get if I send {money(amount, src, lang, r)} with wise?",
        f"Si envío {money(amount, src, lang, r)} con Wise, ¿cuántos {dst} recibe?",
        f"Wenn ich {money(amount, src, lang, r)} mit Wise schicke, wie viel {dst} kommt an?",
        f"Si j'envoie {money(amount, src, lang, r)} avec Wise, combien de {dst} arrivent ?",
        f"Se mando {money(amount, src, lang, r)} con Wise, quanti {dst} arrivano?",
        f"Se eu enviar {money(amount, src, lang, r)} pela Wise, quantos {dst} chegam?",
    )[lang]
    rate = (
        {"USD": 1.0842, "BRL": 6.2113, "CHF": 0.9391, "MXN": 19.874, "JPY": 162.41}[dst]
        * (1.17 if src == "GBP" else 1)
        * r.uniform(0.98, 1.02)
    )
    rate = round(rate, 4)
    fee = round(0.0045 * amount + 0.6, 2)
    target = round((amount - fee) * rate, 2)
    profile = int(digits(r, 8))
    result = {
        "id": f"{hexid(r, 8)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 4)}-{hexid(r, 12)}",
        "sourceCurrency": src,
        "targetCurrency": dst,
        "sourceAmount": amount,
        "rate": rate,
        "rateType": "FIXED",
        "payOut": "BANK_TRANSFER",
        "createdTime": f"{ctx.today.isoformat()}T09:31:07Z",
        "rateExpirationTime": f"{(ctx.today + dt.timedelta(days=2)).isoformat()}T09:31:07Z",
        "paymentOptions": [
            {
                "payIn": "BANK_TRANSFER",
                "payOut": "BANK_TRANSFER",
                "fee": {"total": fee, "transferwise": fee, "payIn": 0.0},
                "sourceAmount": amount,
                "targetAmount": target,
                "estimatedDelivery": f"{(ctx.today + dt.timedelta(days=1)).isoformat()}T14:00:00Z",
            }
        ],
    }
    answer = T(
        "They'd receive **{f0}** at a rate of {f1}, after Wise's fee of {f2}.",
        "Recibiría **{f0}** con un tipo de {f1}, tras la comisión de Wise de {f2}.",
        "Ankommen würden **{f0}** bei einem Kurs von {f1}, nach der Wise-Gebühr von {f2}.",
        "La personne recevrait **{f0}** au taux de {f1}, après les frais Wise de {f2}.",
        "Arriverebbero **{f0}** al tasso di {f1}, dopo la commissione Wise di {f2}.",
        "Chegariam **{f0}** à taxa de {f1}, depois da taxa da Wise de {f2}.",
    )[lang]
    tw = (
        f"{target:,.2f} {dst}"
        if lang == "en"
        else f"{target:,.2f}".replace(",", "X")
        .replace(".", ",")
        .replace("X", "." if lang != "fr" else " ")
        + f" {dst}"
    )
    tw_bad = f"{target * 1.1:,.2f} {dst}"
    return Scenario(
        "fx",
        lang,
        [
            tool(
                "wise_create_quote",
                "Wise Platform API: POST /v3/profiles/{profileId}/quotes",
                {
                    "profileId": I,
                    "sourceCurrency": S,
                    "targetCurrency": S,
                    "sourceAmount": N,
                    "targetAmount": N,
                    "payOut": enum("BANK_TRANSFER", "BALANCE", "SWIFT"),
                },
                ["sourceCurrency", "targetCurrency"],
            ),
            tool("wise_list_profiles", "Wise Platform API: GET /v2/profiles", {}, []),
        ],
        request,
        [
            Step(
                [Call("wise_list_profiles", {})],
                [[{"id": profile, "type": "PERSONAL", "fullName": "Northwind Ops"}]],
            ),
            Step(
                [
                    Call(
                        "wise_create_quote",
                        {
                            "profileId": profile,
                            "sourceCurrency": src,
                            "targetCurrency": dst,
                            "sourceAmount": amount,
                        },
                    )
                ],
                [result],
            ),
        ],
        answer,
        [
            (tw, tw_bad if lang == "en" else tw_bad.replace(",", " ").replace(".", ",")),
            (num(rate, lang, 4), num(rate * 1.05, lang, 4)),
            (money(fee, src, lang), money(fee + 7, src, lang)),
        ],
        T(
            "The money should arrive in seconds.",
            "El dinero llegará en segundos.",
            "Das Geld kommt in Sekunden an.",
            "L'argent arrivera en quelques secondes.",
            "I soldi arriveranno in pochi secondi.",
            "O dinheiro chega em segundos.",
        )[lang],
        slots=[Slot("amount", 1, 0, ("sourceAmount",), change_number(amount, r))],
        invent=(1, 0, "targetAmount", round(target + 100, 2)),
        rows=[
            (
                T("They receive", "Recibe", "Kommt an", "Montant reçu", "Arrivano", "Recebe")[lang],
                0,
            ),
            (T("Rate", "Tipo", "Kurs", "Taux", "Tasso", "Taxa")[lang], 1),
            (T("Fee", "Comisión", "Gebühr", "Frais", "Commissione", "Taxa Wise")[lang], 2),
        ],
    )


def d_stock_quote(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    symbol, company = r.choice(
        [
            ("MSFT", "Microsoft"),
            ("SAP", "SAP"),
            ("ASML", "ASML"),
            ("NVDA", "NVIDIA"),
            ("IBE.MC", "Iberdrola"),
            ("ENI.MI", "Eni"),
            ("PETR4.SA", "Petrobras"),
        ]
    )
    request = T(
        f"{symbol} quote?",
        f"¿A cuánto cotiza {symbol}?",
        f"Wie steht {symbol} gerade?",
        f"Cours de {symbol} ?",
        f"Quotazione di {symbol}?",
        f"Cotação de {symbol}?",
    )[lang]
    price = round(r.uniform(8, 900), 2)
    change = round(price * r.uniform(-0.03, 0.03), 2)
    pct = change / (price - change) * 100
    day = ctx.today - dt.timedelta(
        days=1 if ctx.today.weekday() not in (0, 6) else 3 if ctx.today.weekday() == 0 else 2
    )
    result = {
        "Global Quote": {
            "01. symbol": symbol,
            "02. open": f"{price - change * 0.4:.4f}",
            "03. high": f"{price + abs(change):.4f}",
            "04. low": f"{price - abs(change) * 1.2:.4f}",
            "05. price": f"{price:.4f}",
            "06. volume": digits(r, 8),
            "07. latest trading day": day.isoformat(),
            "08. previous close": f"{price - change:.4f}",
            "09. change": f"{change:.4f}",
            "10. change percent": f"{pct:.4f}%",
        }
    }
    sign = "+" if change >= 0 else "-"
    answer = T(
        company
        + " ("
        + symbol
        + ") last traded at {f0}, {f1} ({f2}%) on the day (latest trading day "
        + day.isoformat()
        + ").",
        company
        + " ("
        + symbol
        + ") cotizó por última vez a {f0}, {f1} ({f2} %) en la sesión del "
        + day.isoformat()
        + ".",
        company
        + " ("
        + symbol
        + ") stand zuletzt bei {f0}, {f1} ({f2} %) am Handelstag "
        + day.isoformat()
        + ".",
        company
        + " ("
        + symbol
        + ") : dernier cours {f0}, {f1} ({f2} %) sur la séance du "
        + day.isoformat()
        + ".",
        company
        + " ("
        + symbol
        + ") ha chiuso l'ultima seduta ("
        + day.isoformat()
        + ") a {f0}, {f1} ({f2}%).",
        company
        + " ("
        + symbol
        + ") fechou a última sessão ("
        + day.isoformat()
        + ") a {f0}, {f1} ({f2}%).",
    )[lang]
    return Scenario(
        "finance",
        lang,
        [
            tool(
                "alpha_vantage_global_quote",
                "Alpha Vantage: function=GLOBAL_QUOTE, latest price and volume for a ticker",
                {"symbol": S, "datatype": enum("json", "csv")},
                ["symbol"],
            )
        ],
        request,
        [Step([Call("alpha_vantage_global_quote", {"symbol": symbol})], [result])],
        answer,
        [
            (num(price, lang, 2), num(price + 4.1, lang, 2)),
            (
                sign + num(abs(change), lang, 2),
                ("-" if sign == "+" else "+") + num(abs(change), lang, 2),
            ),
            (sign + num(abs(pct), lang, 2), sign + num(abs(pct) + 2, lang, 2)),
        ],
        T(
            "Analysts rate it a buy.",
            "Los analistas recomiendan comprar.",
            "Analysten empfehlen Kaufen.",
            "Les analystes le recommandent à l'achat.",
            "Gli analisti consigliano di comprare.",
            "Os analistas recomendam compra.",
        )[lang],
        slots=[Slot("id", 0, 0, ("symbol",), change_id(symbol, r))],
        invent=None,
    )


def d_sql(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    since = ctx.today - dt.timedelta(days=r.randrange(7, 60))
    said = spoken_date(since, lang, r)
    cur = currency(lang, r) if lang != "pt" else "EUR"
    floor = r.choice([100, 500, 1000, 2500])
    request = T(
        f"how many orders over {money(floor, cur, lang, r)} since {said}, and what's the total?",
        f"¿Cuántos pedidos de más de {money(floor, cur, lang, r)} ha habido desde {said.replace('el ', 'el ')}, y cuánto suman?",
        f"Wie viele Bestellungen über {money(floor, cur, lang, r)} gab es seit {said.replace('am ', 'dem ')}, und was ist die Summe?",
        f"Combien de commandes de plus de {money(floor, cur, lang, r)} depuis {said}, et pour quel total ?",
        f"Quanti ordini sopra {money(floor, cur, lang, r)} dal {said.replace('il ', '')}, e per che totale?",
        f"Quantas encomendas acima de {money(floor, cur, lang, r)} desde {said.replace('dia ', '').replace('em ', '')}, e qual o total?",
    )[lang]
    query = (
        f"SELECT COUNT(*) AS orders, SUM(total_cents) / 100.0 AS total FROM orders WHERE currency = '{cur}' "
        f"AND total_cents > {floor * 100} AND created_at >= '{since.isoformat()}'"
    )
    count = r.randrange(3, 400)
    total = round(count * floor * r.uniform(1.2, 2.5), 2)
    result = {
        "columns": [{"name": "orders", "type": "bigint"}, {"name": "total", "type": "numeric"}],
        "rows": [[count, f"{total:.2f}"]],
        "row_count": 1,
        "elapsed_ms": r.randrange(12, 900),
    }
    answer = T(
        "{f0} orders above that amount since then, worth **{f1}** in total.",
        "{f0} pedidos por encima de ese importe desde entonces, por un total de **{f1}**.",
        "{f0} Bestellungen über dem Betrag seitdem, zusammen **{f1}**.",
        "{f0} commandes au-dessus de ce montant depuis, pour un total de **{f1}**.",
        "{f0} ordini sopra quell'importo da allora, per un totale di **{f1}**.",
        "{f0} encomendas acima desse valor desde então, num total de **{f1}**.",
    )[lang]
    return Scenario(
        "database",
        lang,
        [
            tool(
                "run_sql_query",
                "Run a read-only SQL query against the analytics warehouse (PostgreSQL)",
                {
                    "query": S,
                    "database": enum("analytics", "billing"),
                    "timeout_ms": I,
                    "max_rows": I,
                },
                ["query"],
            )
        ],
        request,
        [Step([Call("run_sql_query", {"query": query, "database": "analytics"})], [result])],
        answer,
        [(count, count + 14), (money(total, cur, lang), money(total * 0.8, cur, lang))],
        T(
            "That's up 12% on the previous period.",
            "Es un 12 % más que en el periodo anterior.",
            "Das sind 12 % mehr als im Vorzeitraum.",
            "C'est 12 % de plus que sur la période précédente.",
            "È il 12% in più rispetto al periodo precedente.",
            "São mais 12% do que no período anterior.",
        )[lang],
        slots=[
            Slot(
                "date",
                0,
                0,
                ("query",),
                query.replace(since.isoformat(), change_date(since.isoformat(), r)),
            ),
            Slot(
                "amount",
                0,
                0,
                ("query",),
                query.replace(f"> {floor * 100}", f"> {change_number(floor, r) * 100}"),
            ),
        ],
        invent=None,
    )


def d_zoom(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    day, said_day = relative_day(ctx, r)
    h, mi = r.choice([(9, 0), (10, 30), (15, 0), (16, 30), (11, 15)])
    minutes = r.choice([30, 45, 60, 90])
    topic = T(
        "Vendor demo",
        "Demo del proveedor",
        "Lieferanten-Demo",
        "Démo fournisseur",
        "Demo del fornitore",
        "Demo do fornecedor",
    )[lang]
    dur = T(
        f"{minutes} min",
        f"{minutes} minutos",
        f"{minutes} Minuten",
        f"{minutes} minutes",
        f"{minutes} minuti",
        f"{minutes} minutos",
    )[lang]
    request = T(
        f"set up a zoom called '{topic}' {said_day} {spoken_time(h, mi, lang, r)}, {dur}",
        f"Crea un Zoom «{topic}» {said_day} {spoken_time(h, mi, lang, r)}, de {dur}",
        f"Leg ein Zoom-Meeting „{topic}“ an, {said_day} {spoken_time(h, mi, lang, r)}, {dur}",
        f"Crée un Zoom « {topic} » {said_day} {spoken_time(h, mi, lang, r)}, {dur}",
        f'Crea uno Zoom "{topic}" {said_day} {spoken_time(h, mi, lang, r)}, {dur}',
        f'Cria um Zoom "{topic}" {said_day} {spoken_time(h, mi, lang, r)}, de {dur}',
    )[lang]
    local = f"{day.isoformat()}T{h:02d}:{mi:02d}:00"
    utc = dt.datetime(day.year, day.month, day.day, h, mi, tzinfo=ZoneInfo(ctx.zone)).astimezone(
        dt.UTC
    )
    mid = int(digits(r, 11))
    pwd = alnum(r, 6)
    result = {
        "id": mid,
        "uuid": alnum(r, 22) + "==",
        "topic": topic,
        "type": 2,
        "start_time": utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration": minutes,
        "timezone": ctx.zone,
        "created_at": f"{ctx.today.isoformat()}T13:10:44Z",
        "join_url": f"https://us06web.zoom.us/j/{mid}?pwd={alnum(r, 32)}",
        "password": pwd,
        "settings": {"waiting_room": True, "join_before_host": False},
    }
    mid_w = f"{str(mid)[:3]} {str(mid)[3:7]} {str(mid)[7:]}"
    answer = T(
        'Your Zoom "'
        + topic
        + '" is booked for {f0} at {f1} ('
        + ctx.zone
        + "), {f2} minutes. Meeting ID {f3}, passcode "
        + pwd
        + ".",
        "Tu Zoom «"
        + topic
        + "» queda para {f0} a las {f1} ("
        + ctx.zone
        + "), {f2} minutos. ID de reunión {f3}, código "
        + pwd
        + ".",
        "Dein Zoom „"
        + topic
        + "“ ist für {f0} um {f1} Uhr ("
        + ctx.zone
        + ") angelegt, {f2} Minuten. Meeting-ID {f3}, Kenncode "
        + pwd
        + ".",
        "Votre Zoom « "
        + topic
        + " » est prévu {f0} à {f1} ("
        + ctx.zone
        + "), {f2} minutes. ID de réunion {f3}, code "
        + pwd
        + ".",
        'Lo Zoom "'
        + topic
        + '" è fissato per {f0} alle {f1} ('
        + ctx.zone
        + "), {f2} minuti. ID riunione {f3}, passcode "
        + pwd
        + ".",
        'O Zoom "'
        + topic
        + '" ficou marcado para {f0} às {f1} ('
        + ctx.zone
        + "), {f2} minutos. ID da reunião {f3}, senha "
        + pwd
        + ".",
    )[lang]
    return Scenario(
        "meetings",
        lang,
        [
            tool(
                "zoom_create_meeting",
                "Zoom API: POST /users/me/meetings",
                {
                    "topic": S,
                    "type": desc(I, "2 = scheduled"),
                    "start_time": desc(S, "yyyy-MM-ddTHH:mm:ss in the given timezone"),
                    "duration": desc(I, "minutes"),
                    "timezone": S,
                    "agenda": S,
                    "password": S,
                    "settings": obj(
                        {"waiting_room": B, "join_before_host": B, "alternative_hosts": S}
                    ),
                },
                ["topic"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "zoom_create_meeting",
                        {
                            "topic": topic,
                            "type": 2,
                            "start_time": local,
                            "duration": minutes,
                            "timezone": ctx.zone,
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (written_date(day, lang), written_date(day + dt.timedelta(days=1), lang)),
            (written_time(h, mi, lang), written_time((h + 1) % 24, mi, lang)),
            (minutes, minutes + 15),
            (mid_w, change_id(mid_w, r)),
        ],
        T(
            "Zoom will record it to the cloud automatically.",
            "Zoom lo grabará en la nube automáticamente.",
            "Zoom zeichnet es automatisch in der Cloud auf.",
            "Zoom l'enregistrera automatiquement dans le cloud.",
            "Zoom lo registrerà in automatico nel cloud.",
            "O Zoom vai gravar automaticamente na nuvem.",
        )[lang],
        slots=[
            Slot("time", 0, 0, ("start_time",), change_time_iso(local, r)),
            Slot("date", 0, 0, ("start_time",), change_date(local, r)),
        ],
        invent=(0, 0, "settings", {"alternative_hosts": mail(*r.choice(PEOPLE), "northwind.io")}),
        rows=[
            (T("Date", "Fecha", "Datum", "Date", "Data", "Data")[lang], 0),
            (T("Time", "Hora", "Uhrzeit", "Heure", "Ora", "Hora")[lang], 1),
            ("ID", 3),
        ],
    )


def change_time_iso(value: str, r: random.Random) -> str:
    """The hour or minute of an ISO date-time changed by one digit, still a valid time."""
    start = value.index("T") + 1
    for _ in range(50):
        candidate = change_digit(value, r, [start + 1, start + 3])
        hh, mm = int(candidate[start : start + 2]), int(candidate[start + 3 : start + 5])
        if hh < 24 and mm < 60 and candidate != value:
            return candidate
    return value[:start] + "23" + value[start + 2 :]


def d_gcal_freebusy(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    day, said = relative_day(ctx, r)
    people = r.sample(PEOPLE, 2)
    mails = [mail(first, last, "northwind.io") for first, last in people]
    request = T(
        f"are {mails[0]} and {mails[1]} free {said} between 9 and 5?",
        f"¿Están libres {mails[0]} y {mails[1]} {said} entre las 9 y las 17?",
        f"Haben {mails[0]} und {mails[1]} {said} zwischen 9 und 17 Uhr Zeit?",
        f"Est-ce que {mails[0]} et {mails[1]} sont libres {said} entre 9h et 17h ?",
        f"{mails[0]} e {mails[1]} sono liberi {said} tra le 9 e le 17?",
        f"O {mails[0]} e o {mails[1]} estão livres {said} entre as 9h e as 17h?",
    )[lang]
    tz = ctx.tz(day)
    t_min, t_max = f"{day.isoformat()}T09:00:00{tz}", f"{day.isoformat()}T17:00:00{tz}"
    slots_busy = [(10, 0, 11, 30), (14, 0, 15, 0)]
    a, b = r.sample(slots_busy, 1)[0], (13, 0, 13, 30)
    calendars = {
        mails[0]: {
            "busy": [
                {
                    "start": f"{day.isoformat()}T{a[0]:02d}:{a[1]:02d}:00{tz}",
                    "end": f"{day.isoformat()}T{a[2]:02d}:{a[3]:02d}:00{tz}",
                }
            ]
        },
        mails[1]: {
            "busy": [
                {
                    "start": f"{day.isoformat()}T{b[0]:02d}:{b[1]:02d}:00{tz}",
                    "end": f"{day.isoformat()}T{b[2]:02d}:{b[3]:02d}:00{tz}",
                }
            ]
        },
    }
    result = {
        "kind": "calendar#freeBusy",
        "timeMin": t_min,
        "timeMax": t_max,
        "calendars": calendars,
    }
    fw = [
        (people[0][0], written_time(a[0], a[1], lang), written_time(a[2], a[3], lang)),
        (people[1][0], written_time(13, 0, lang), written_time(13, 30, lang)),
    ]
    answer = T(
        "Not entirely: {f0} is busy from {f1} to {f2}, and {f3} from {f4} to {f5}. The rest of the window is free for both.",
        "No del todo: {f0} está ocupado de {f1} a {f2} y {f3} de {f4} a {f5}. El resto de la franja está libre para los dos.",
        "Nicht ganz: {f0} ist von {f1} bis {f2} belegt, {f3} von {f4} bis {f5}. Der Rest des Zeitraums ist für beide frei.",
        "Pas tout à fait : {f0} est pris de {f1} à {f2}, et {f3} de {f4} à {f5}. Le reste du créneau est libre pour les deux.",
        "Non del tutto: {f0} è occupato dalle {f1} alle {f2}, e {f3} dalle {f4} alle {f5}. Il resto della fascia è libero per entrambi.",
        "Não totalmente: {f0} está ocupado das {f1} às {f2}, e {f3} das {f4} às {f5}. O resto do período está livre para os dois.",
    )[lang]
    facts = [
        (fw[0][0], fw[1][0]),
        (fw[0][1], written_time(a[0] + 1, a[1], lang)),
        (fw[0][2], written_time(a[2] + 1, a[3], lang)),
        (fw[1][0], fw[0][0]),
        (fw[1][1], written_time(12, 0, lang)),
        (fw[1][2], written_time(14, 30, lang)),
    ]
    return Scenario(
        "calendar",
        lang,
        [
            tool(
                "google_calendar_freebusy_query",
                "Google Calendar API: freebusy.query",
                {
                    "timeMin": desc(S, "RFC 3339 with offset"),
                    "timeMax": desc(S, "RFC 3339 with offset"),
                    "timeZone": S,
                    "items": arr(obj({"id": S})),
                },
                ["timeMin", "timeMax", "items"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "google_calendar_freebusy_query",
                        {
                            "timeMin": t_min,
                            "timeMax": t_max,
                            "timeZone": ctx.zone,
                            "items": [{"id": m} for m in mails],
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        facts,
        T(
            "Both have blocked time for lunch.",
            "Los dos tienen bloqueada la hora de comer.",
            "Beide haben die Mittagspause geblockt.",
            "Les deux ont bloqué la pause déjeuner.",
            "Entrambi hanno bloccato la pausa pranzo.",
            "Os dois têm a hora de almoço bloqueada.",
        )[lang],
        slots=[
            Slot("date", 0, 0, ("timeMin",), change_date(t_min, r)),
            Slot("time", 0, 0, ("timeMax",), change_time_iso(t_max, r)),
            Slot("id", 0, 0, ("items", 1, "id"), change_id(mails[1], r)),
        ],
        invent=(
            0,
            0,
            "items",
            [{"id": m} for m in mails]
            + [{"id": mail(*r.choice([p for p in PEOPLE if p not in people]), "northwind.io")}],
        ),
    )


TODOIST_PRIO = {
    4: T("p1", "p1", "P1", "p1", "p1", "p1"),
    3: T("p2", "p2", "P2", "p2", "p2", "p2"),
    2: T("p3", "p3", "P3", "p3", "p3", "p3"),
}


def d_todoist(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    day, said = relative_day(ctx, r)
    h, mi = r.choice([(8, 0), (12, 30), (18, 0), (19, 45)])
    prio = r.choice([4, 3, 2])
    content = T(
        "Call the landlord about the heating",
        "Llamar al casero por la calefacción",
        "Vermieter wegen der Heizung anrufen",
        "Appeler le propriétaire pour le chauffage",
        "Chiamare il padrone di casa per il riscaldamento",
        "Ligar ao senhorio por causa do aquecimento",
    )[lang]
    request = T(
        f"todoist: '{content}' {said} {spoken_time(h, mi, lang, r)}, {TODOIST_PRIO[prio]['en']}",
        f"Añade en Todoist «{content}» {said} {spoken_time(h, mi, lang, r)}, prioridad {TODOIST_PRIO[prio]['es']}",
        f"Todoist: „{content}“ {said} {spoken_time(h, mi, lang, r)}, Priorität {TODOIST_PRIO[prio]['de']}",
        f"Ajoute dans Todoist « {content} » {said} {spoken_time(h, mi, lang, r)}, priorité {TODOIST_PRIO[prio]['fr']}",
        f'Aggiungi su Todoist "{content}" {said} {spoken_time(h, mi, lang, r)}, priorità {TODOIST_PRIO[prio]["it"]}',
        f'Adiciona no Todoist "{content}" {said} {spoken_time(h, mi, lang, r)}, prioridade {TODOIST_PRIO[prio]["pt"]}',
    )[lang]
    due = f"{day.isoformat()}T{h:02d}:{mi:02d}:00"
    tid = digits(r, 10)
    result = {
        "id": tid,
        "content": content,
        "priority": prio,
        "project_id": digits(r, 10),
        "is_completed": False,
        "due": {
            "date": day.isoformat(),
            "datetime": due,
            "string": f"{MONTHS['en'][day.month - 1][:3]} {day.day} {h % 12 or 12}{':' + str(mi) if mi else ''}{'am' if h < 12 else 'pm'}",
            "timezone": ctx.zone,
            "is_recurring": False,
        },
        "url": f"https://app.todoist.com/app/task/{tid}",
        "created_at": f"{ctx.today.isoformat()}T07:52:19.000000Z",
    }
    answer = T(
        'Added "' + content + '" for {f0} at {f1}, priority {f2}.',
        "Añadida «" + content + "» para {f0} a las {f1}, prioridad {f2}.",
        "„" + content + "“ ist für {f0} um {f1} Uhr eingetragen, Priorität {f2}.",
        "« " + content + " » ajoutée pour {f0} à {f1}, priorité {f2}.",
        'Aggiunta "' + content + '" per {f0} alle {f1}, priorità {f2}.',
        'Adicionada "' + content + '" para {f0} às {f1}, prioridade {f2}.',
    )[lang]
    return Scenario(
        "tasks",
        lang,
        [
            tool(
                "todoist_create_task",
                "Todoist REST API v2: create a task. priority: 4 is the highest (shown as p1), 1 is normal (p4)",
                {
                    "content": S,
                    "description": S,
                    "project_id": S,
                    "due_string": S,
                    "due_date": desc(S, "YYYY-MM-DD"),
                    "due_datetime": desc(S, "RFC 3339, local floating time without offset"),
                    "priority": {"type": "integer", "enum": [1, 2, 3, 4]},
                    "labels": arr(S),
                    "assignee_id": S,
                },
                ["content"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "todoist_create_task",
                        {"content": content, "due_datetime": due, "priority": prio},
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (written_date(day, lang), written_date(day + dt.timedelta(days=1), lang)),
            (written_time(h, mi, lang), written_time((h + 2) % 24, mi, lang)),
            (TODOIST_PRIO[prio][lang], TODOIST_PRIO[prio - 1 if prio > 2 else 3][lang]),
        ],
        T(
            "You'll get a reminder 30 minutes before.",
            "Recibirás un recordatorio 30 minutos antes.",
            "Du bekommst 30 Minuten vorher eine Erinnerung.",
            "Vous recevrez un rappel 30 minutes avant.",
            "Riceverai un promemoria 30 minuti prima.",
            "Vais receber um lembrete 30 minutos antes.",
        )[lang],
        slots=[
            Slot("time", 0, 0, ("due_datetime",), change_time_iso(due, r)),
            Slot("date", 0, 0, ("due_datetime",), change_date(due, r)),
            Slot("enum", 0, 0, ("priority",), prio - 1),
        ],
        invent=(0, 0, "project_id", digits(r, 10)),
    )


def d_mailchimp(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    first, last = r.choice(PEOPLE)
    addr = mail(
        first,
        last,
        r.choice(["gmail.com", "yahoo.fr", "web.de", "libero.it", "sapo.pt", "hotmail.es"]),
    )
    lst = hexid(r, 10)
    pending = r.random() < 0.5
    extra = {
        True: T(
            " with double opt-in",
            " con doble opt-in",
            " mit Double-Opt-in",
            " avec double opt-in",
            " con double opt-in",
            " com double opt-in",
        ),
        False: T("", "", "", "", "", ""),
    }[pending][lang]
    request = T(
        f"add {first} {last} ({addr}) to mailchimp list {lst}{extra}",
        f"Añade a {first} {last} ({addr}) a la lista {lst} de Mailchimp{extra}",
        f"Trag {first} {last} ({addr}) in die Mailchimp-Liste {lst} ein{extra}",
        f"Ajoute {first} {last} ({addr}) à la liste Mailchimp {lst}{extra}",
        f"Aggiungi {first} {last} ({addr}) alla lista Mailchimp {lst}{extra}",
        f"Adiciona {first} {last} ({addr}) à lista {lst} do Mailchimp{extra}",
    )[lang]
    status = "pending" if pending else "subscribed"
    result = {
        "id": hexid(r, 32),
        "email_address": addr,
        "unique_email_id": hexid(r, 10),
        "status": status,
        "list_id": lst,
        "merge_fields": {"FNAME": first, "LNAME": last},
        "timestamp_signup": "",
        "last_changed": f"{ctx.today.isoformat()}T10:04:51+00:00",
        "member_rating": 2,
        "email_type": "html",
    }
    answer = T(
        first + " " + last + " ({f0}) is now on list " + lst + " with status **{f1}**.",
        first + " " + last + " ({f0}) ya está en la lista " + lst + " con estado **{f1}**.",
        first + " " + last + " ({f0}) steht jetzt auf der Liste " + lst + ", Status **{f1}**.",
        first + " " + last + " ({f0}) est maintenant dans la liste " + lst + ", statut **{f1}**.",
        first + " " + last + " ({f0}) è ora nella lista " + lst + " con stato **{f1}**.",
        first + " " + last + " ({f0}) está agora na lista " + lst + " com estado **{f1}**.",
    )[lang]
    return Scenario(
        "marketing",
        lang,
        [
            tool(
                "mailchimp_add_list_member",
                "Mailchimp Marketing API: POST /lists/{list_id}/members",
                {
                    "list_id": S,
                    "email_address": S,
                    "status": enum(
                        "subscribed", "unsubscribed", "cleaned", "pending", "transactional"
                    ),
                    "merge_fields": obj({"FNAME": S, "LNAME": S}),
                    "tags": arr(S),
                    "language": S,
                    "vip": B,
                },
                ["list_id", "email_address", "status"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "mailchimp_add_list_member",
                        {
                            "list_id": lst,
                            "email_address": addr,
                            "status": status,
                            "merge_fields": {"FNAME": first, "LNAME": last},
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (addr, change_id(addr, r)),
            (status, "pending" if status == "subscribed" else "subscribed"),
        ],
        T(
            "A welcome email went out right away.",
            "Se le ha enviado un correo de bienvenida.",
            "Eine Willkommensmail ging sofort raus.",
            "Un e-mail de bienvenue est parti aussitôt.",
            "È partita subito un'email di benvenuto.",
            "Foi enviado logo um e-mail de boas-vindas.",
        )[lang],
        slots=[
            Slot("id", 0, 0, ("list_id",), change_id(lst, r)),
            Slot("id", 0, 0, ("email_address",), change_id(addr, r)),
            Slot("enum", 0, 0, ("status",), "pending" if status == "subscribed" else "subscribed"),
        ],
        invent=(0, 0, "tags", ["vip-" + str(ctx.today.year)]),
        rows=[("Email", 0), ("Status", 1)],
    )


def d_stock_compare(r: random.Random, ctx: Ctx) -> Scenario:
    """Two quotes fetched by parallel calls in one step."""
    lang = ctx.lang
    pair = r.choice(
        [
            (("KO", "Coca-Cola"), ("PEP", "PepsiCo")),
            (("BMW.DE", "BMW"), ("MBG.DE", "Mercedes-Benz")),
            (("SAN.MC", "Santander"), ("BBVA.MC", "BBVA")),
            (("ISP.MI", "Intesa Sanpaolo"), ("UCG.MI", "UniCredit")),
            (("AIR.PA", "Airbus"), ("SAF.PA", "Safran")),
            (("VALE3.SA", "Vale"), ("ITUB4.SA", "Itaú")),
        ]
    )
    (s1, c1), (s2, c2) = pair
    request = T(
        f"compare {s1} and {s2} today",
        f"Compara {s1} y {s2} hoy",
        f"Vergleich mal {s1} und {s2} heute",
        f"Compare {s1} et {s2} aujourd'hui",
        f"Confronta {s1} e {s2} oggi",
        f"Compara {s1} e {s2} hoje",
    )[lang]
    quotes, results = [], []
    for sym in (s1, s2):
        price = round(r.uniform(5, 300), 2)
        pct = round(r.uniform(-3, 3), 2)
        if abs(pct) < 0.05:
            pct = 0.4
        prev = round(price / (1 + pct / 100), 4)
        quotes.append((price, pct))
        results.append(
            {
                "Global Quote": {
                    "01. symbol": sym,
                    "05. price": f"{price:.4f}",
                    "07. latest trading day": ctx.today.isoformat(),
                    "08. previous close": f"{prev:.4f}",
                    "09. change": f"{price - prev:.4f}",
                    "10. change percent": f"{pct:.4f}%",
                }
            }
        )
    (p1, q1), (p2, q2) = quotes

    def signed(v: float) -> str:
        return ("+" if v >= 0 else "-") + num(abs(v), lang, 2)

    header = T(
        "| | Price | Change |",
        "| | Precio | Variación |",
        "| | Kurs | Veränderung |",
        "| | Cours | Variation |",
        "| | Prezzo | Variazione |",
        "| | Preço | Variação |",
    )[lang]
    answer = (
        header
        + "\n|---|---|---|\n"
        + f"| {c1} ({s1}) | {{f0}} | {{f1}} % |\n| {c2} ({s2}) | {{f2}} | {{f3}} % |"
    )
    return Scenario(
        "finance",
        lang,
        [
            tool(
                "alpha_vantage_global_quote",
                "Alpha Vantage: function=GLOBAL_QUOTE, latest price and volume for a ticker",
                {"symbol": S, "datatype": enum("json", "csv")},
                ["symbol"],
            ),
            tool(
                "alpha_vantage_symbol_search",
                "Alpha Vantage: function=SYMBOL_SEARCH",
                {"keywords": S},
                ["keywords"],
            ),
        ],
        request,
        [
            Step(
                [
                    Call("alpha_vantage_global_quote", {"symbol": s1}),
                    Call("alpha_vantage_global_quote", {"symbol": s2}),
                ],
                results,
            )
        ],
        answer,
        [
            (num(p1, lang, 2), num(p1 * 1.1, lang, 2)),
            (signed(q1), signed(-q1)),
            (num(p2, lang, 2), num(p2 + 3, lang, 2)),
            (signed(q2), signed(q2 + 1.5)),
        ],
        f"| {T('Volume', 'Volumen', 'Volumen', 'Volume', 'Volume', 'Volume')[lang]} | {digits(r, 7)} | |",
        slots=[Slot("id", 0, 1, ("symbol",), change_id(s2, r))],
        invent=None,
    )


def d_doordash_quote(r: random.Random, ctx: Ctx) -> Scenario:
    lang = ctx.lang
    p_line, city = street(r, lang)[:2]
    d_line = ""
    while not d_line or d_line == p_line:
        d_line = r.choice([s for s in STREETS[lang] if s[1] == city])[0].format(
            n=r.randrange(3, 290)
        )
    cur = {"en": "USD", "pt": "EUR"}.get(lang, "EUR")
    value = r.choice([38.5, 64, 120.75, 245])
    request = T(
        f"get me a doordash drive quote: pickup {p_line}, {city}, dropoff {d_line}, order value {money(value, cur, lang, r)}",
        f"Pide un presupuesto a DoorDash Drive: recogida en {p_line}, {city}, entrega en {d_line}, pedido de {money(value, cur, lang, r)}",
        f"Hol ein DoorDash-Drive-Angebot: Abholung {p_line}, {city}, Lieferung {d_line}, Bestellwert {money(value, cur, lang, r)}",
        f"Demande un devis DoorDash Drive : retrait au {p_line}, {city}, livraison au {d_line}, commande de {money(value, cur, lang, r)}",
        f"Chiedi un preventivo a DoorDash Drive: ritiro in {p_line}, {city}, consegna in {d_line}, ordine da {money(value, cur, lang, r)}",
        f"Pede uma cotação ao DoorDash Drive: recolha na {p_line}, {city}, entrega na {d_line}, encomenda de {money(value, cur, lang, r)}",
    )[lang]
    ext = "D-" + digits(r, 6)
    fee = r.choice([675, 799, 975, 1150])
    pick_at = dt.datetime(
        ctx.today.year,
        ctx.today.month,
        ctx.today.day,
        18,
        r.choice([5, 20, 35]),
        tzinfo=ZoneInfo(ctx.zone),
    )
    drop_at = pick_at + dt.timedelta(minutes=r.choice([18, 25, 31]))
    result = {"external_delivery_id": ext, "delivery_status": "quote", "currency": cur, "fee": fee, "order_value": round(value * 100),
              "pickup_address": f"{p_line}, {city}", "dropoff_address": f"{d_line}, {city}",
              "pickup_time_estimated": pick_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "dropoff_time_estimated": drop_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "support_reference": digits(r, 10), "tracking_url": f"https://track.doordash.com/share/{hexid(r, 24)}"}  # fmt: skip
    drop = written_time(drop_at.hour, drop_at.minute, lang)
    answer = T(
        "DoorDash quotes **{f0}** for this delivery (quote {f1}). Estimated drop-off around {f2} your time.",
        "DoorDash cobra **{f0}** por esta entrega (presupuesto {f1}). Entrega estimada hacia las {f2}, hora local.",
        "DoorDash verlangt **{f0}** für die Lieferung (Angebot {f1}). Voraussichtliche Zustellung gegen {f2} Uhr Ortszeit.",
        "DoorDash propose **{f0}** pour cette livraison (devis {f1}). Livraison estimée vers {f2}, heure locale.",
        "DoorDash chiede **{f0}** per questa consegna (preventivo {f1}). Consegna prevista verso le {f2}, ora locale.",
        "A DoorDash cobra **{f0}** por esta entrega (cotação {f1}). Entrega prevista por volta das {f2}, hora local.",
    )[lang]
    return Scenario(
        "delivery",
        lang,
        [
            tool(
                "doordash_create_quote",
                "DoorDash Drive API v2: POST /drive/v2/quotes (fee in cents)",
                {
                    "external_delivery_id": S,
                    "pickup_address": S,
                    "pickup_phone_number": S,
                    "pickup_business_name": S,
                    "dropoff_address": S,
                    "dropoff_phone_number": S,
                    "order_value": desc(I, "cents"),
                    "pickup_time": desc(S, "ISO 8601"),
                    "dropoff_instructions": S,
                },
                ["external_delivery_id", "pickup_address", "dropoff_address"],
            )
        ],
        request,
        [
            Step(
                [
                    Call(
                        "doordash_create_quote",
                        {
                            "external_delivery_id": ext,
                            "pickup_address": f"{p_line}, {city}",
                            "dropoff_address": f"{d_line}, {city}",
                            "order_value": round(value * 100),
                        },
                    )
                ],
                [result],
            )
        ],
        answer,
        [
            (money(fee / 100, cur, lang), money(fee / 100 + 3, cur, lang)),
            (ext, change_id(ext, r)),
            (drop, written_time(drop_at.hour + 1, drop_at.minute, lang)),
        ],
        T(
            "Dashers in the area are rated 4.8 on average.",
            "Los repartidores de la zona tienen una nota media de 4,8.",
            "Fahrer in der Gegend haben im Schnitt 4,8 Sterne.",
            "Les livreurs du secteur sont notés 4,8 en moyenne.",
            "I rider della zona hanno in media 4,8.",
            "Os estafetas da zona têm nota média de 4,8.",
        )[lang],
        slots=[
            Slot("address", 0, 0, ("pickup_address",), f"{change_address(p_line, r)}, {city}"),
            Slot("address", 0, 0, ("dropoff_address",), f"{change_address(d_line, r)}, {city}"),
            Slot("amount", 0, 0, ("order_value",), change_number(round(value * 100), r)),
        ],
        invent=(
            0,
            0,
            "pickup_phone_number",
            "+1" + digits(r, 10) if lang == "en" else "+34" + digits(r, 9),
        ),
        rows=[
            (T("Fee", "Tarifa", "Gebühr", "Frais", "Costo", "Taxa")[lang], 0),
            (T("Quote", "Presupuesto", "Angebot", "Devis", "Preventivo", "Cotação")[lang], 1),
        ],
    )


DOMAINS = [
    d_slack_schedule, d_linear_issue, d_notion_query, d_gmail, d_drive_share, d_shopify_address, d_square_refund, d_paypal_payout,
    d_twilio_sms, d_ec2_stop, d_s3_list, d_k8s_pod_ip, d_pagerduty, d_datadog_mute, d_gitlab_mr, d_abuseipdb, d_gcp_firewall,
    d_open_meteo, d_yelp, d_amadeus, d_distance_matrix, d_spotify, d_airtable, d_stripe_subscription, d_xero_invoice, d_fedex,
    d_wise_quote, d_stock_quote, d_sql, d_zoom, d_gcal_freebusy, d_todoist, d_mailchimp, d_stock_compare, d_doordash_quote,
]  # fmt: skip


# ---------------------------------------------------------------- answers as agents write them

INTROS = {
    "en": ["Sure thing!", "Done ✅", "Okay, here you go:", "I checked for you."],
    "es": ["¡Hecho!", "Vale, aquí lo tienes:", "Lo he comprobado."],
    "de": ["Erledigt!", "Okay, hier ist es:", "Hab nachgesehen."],
    "fr": ["C'est fait !", "Voilà :", "J'ai vérifié."],
    "it": ["Fatto!", "Ecco qui:", "Ho controllato."],
    "pt": ["Feito!", "Aqui está:", "Já verifiquei."],
}
SOURCES = {
    "en": ["Per {tool}, ", "From the {tool} response: ", "The API ({tool}) says: "],
    "es": ["Según la respuesta de {tool}: ", "De {tool}: "],
    "de": ["Laut Antwort von {tool}: ", "Aus {tool}: "],
    "fr": ["D'après la réponse de {tool} : ", "Selon {tool} : "],
    "it": ["Secondo {tool}: ", "Dalla risposta di {tool}: "],
    "pt": ["Segundo {tool}: ", "Pela resposta de {tool}: "],
}
HEDGES = {
    "en": [
        "Worth double-checking in the app if it matters.",
        "That's what the API returned just now.",
    ],
    "es": [
        "Es lo que devolvió la API ahora mismo.",
        "Conviene revisarlo en la app si es importante.",
    ],
    "de": ["So hat es die API gerade zurückgegeben.", "Im Zweifel lieber in der App nachsehen."],
    "fr": ["C'est ce que l'API vient de renvoyer.", "À vérifier dans l'appli si c'est important."],
    "it": [
        "È quello che ha restituito l'API in questo momento.",
        "Meglio ricontrollare nell'app se è importante.",
    ],
    "pt": ["Foi o que a API devolveu agora.", "Se for importante, confirma na app."],
}
OFFERS = {
    "en": [
        "Want me to do anything else with it?",
        "Let me know if you need more details.",
        "Happy to help with anything else!",
    ],
    "es": ["¿Quieres que haga algo más?", "Si necesitas más detalles, dímelo."],
    "de": ["Soll ich noch etwas erledigen?", "Sag Bescheid, wenn du mehr Details brauchst."],
    "fr": ["Je peux faire autre chose ?", "Dites-moi si vous voulez plus de détails."],
    "it": ["Vuoi che faccia altro?", "Fammi sapere se ti servono altri dettagli."],
    "pt": ["Queres que faça mais alguma coisa?", "Diz-me se precisares de mais detalhes."],
}
SUMMARY = T("Summary:", "Resumen:", "Zusammenfassung:", "Résumé :", "Riepilogo:", "Resumo:")
STYLES = ("plain", "intro", "source", "hedge", "offer", "bold", "rows", "intro_offer")


def styled(sc: Scenario, r: random.Random) -> tuple[str, str]:
    """(answer template, style): the scenario's answer dressed as agents dress it."""
    style = r.choice(STYLES)
    answer = sc.answer
    tool_name = sc.steps[-1].calls[-1].name
    if style == "rows":
        if len(sc.rows) < 2:
            style = "plain"
        else:  # a partial restatement as a key: value list
            chosen = sorted(
                r.sample(sc.rows, r.randrange(2, len(sc.rows) + 1)), key=lambda row: row[1]
            )
            lead = SUMMARY[sc.lang] if r.random() < 0.5 else r.choice(INTROS[sc.lang])
            bullet = r.choice(["- ", "* ", "• "])
            answer = lead + "\n" + "\n".join(f"{bullet}{label}: {{f{i}}}" for label, i in chosen)
    if style == "intro":
        answer = r.choice(INTROS[sc.lang]) + ("\n\n" if "\n" in answer else " ") + answer
    elif style == "source":
        answer = r.choice(SOURCES[sc.lang]).format(tool=tool_name) + answer
    elif style == "hedge":
        answer = answer + ("\n\n" if "\n" in answer else " ") + r.choice(HEDGES[sc.lang])
    elif style == "offer":
        answer = answer + "\n\n" + r.choice(OFFERS[sc.lang])
    elif style == "intro_offer":
        answer = r.choice(INTROS[sc.lang]) + "\n\n" + answer + "\n\n" + r.choice(OFFERS[sc.lang])
    elif style == "bold" and "**" not in answer and "|" not in answer:
        answer = re.sub(r"\{(f\d+)\}", r"**{\1}**", answer)
    return answer, style


def placeholders(template: str) -> list[int]:
    return sorted({int(m) for m in re.findall(r"\{f(\d+)\}", template)})


def fill(template: str, facts: list[tuple[Any, Any]], wrong: int | None = None) -> str:
    values = {f"f{i}": (w if i == wrong else right) for i, (right, w) in enumerate(facts)}
    return template.format(**{k: str(v) for k, v in values.items()})


def with_addition(answer: str, addition: str, lang: str) -> str:
    """The unsupported sentence where agents add such things: a last table row or bullet, before
    a closing offer, or at the end."""
    lines = answer.rstrip().splitlines()
    if addition.startswith("|"):
        rows = [i for i, line in enumerate(lines) if line.startswith("|")]
        if rows:
            lines.insert(rows[-1] + 1, addition)
            return "\n".join(lines)
        return (
            answer.rstrip()
            + " "
            + T(
                "Volume was unusually high.",
                "El volumen fue inusualmente alto.",
                "Das Volumen war ungewöhnlich hoch.",
                "Le volume était inhabituellement élevé.",
                "Il volume è stato insolitamente alto.",
                "O volume foi invulgarmente alto.",
            )[lang]
        )
    for offer in OFFERS[lang]:
        if answer.endswith(offer):
            return (
                answer[: -len(offer)].rstrip() + " " + addition.removeprefix("- ") + "\n\n" + offer
            )
    if lines[-1].lstrip()[:2] in ("- ", "* ", "• "):
        return answer.rstrip() + "\n" + lines[-1].lstrip()[:2] + addition.removeprefix("- ")
    return answer.rstrip() + " " + addition.removeprefix("- ")


# ---------------------------------------------------------------- the set


def contexts(count: int, seed: int) -> list[Ctx]:
    r = random.Random(seed + 7)
    out = []
    for index in range(count):
        lang = LANGS[index % len(LANGS)]
        zone = r.choice(ZONES[lang])
        today = dt.date(2026, 1, 5) + dt.timedelta(days=r.randrange(0, 520))
        out.append(Ctx(lang, today, zone))
    return out


def scenarios(count: int = SCENARIOS, seed: int = SEED) -> list[Scenario]:
    r = random.Random(seed)
    built = []
    for index, ctx in enumerate(contexts(count, seed)):
        domain = DOMAINS[(index + index // len(LANGS)) % len(DOMAINS)]
        sc = domain(r, ctx)
        sc.system = ctx.system(r)
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
        base = f"v3-{index:04d}"
        template, style = styled(sc, r)
        answer = fill(template, sc.facts)
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
            if before == slot.changed:
                raise SystemExit(f"{run_id}: the mutation changed nothing")
            calls = list(sc.steps[slot.step].calls)
            calls[slot.call] = Call(call.name, set_path(call.args, slot.path, slot.changed))
            run = render(fmt, run_id, sc, sc.steps[: slot.step], calls, None, r)
            detail = {"tool": call.name, "argument": "/" + "/".join(map(str, slot.path)),
                      "user_value": before, "call_value": slot.changed}  # fmt: skip
        elif kind == "invented_value":
            step, number, key, value = sc.invent
            call = sc.steps[step].calls[number]
            calls = list(sc.steps[step].calls)
            calls[number] = Call(call.name, {**call.args, key: value})
            if calls[number].args == call.args:
                raise SystemExit(f"{run_id}: the invented value changed nothing")
            run = render(fmt, run_id, sc, sc.steps[:step], calls, None, r)
            detail = {"tool": call.name, "argument": f"/{key}", "call_value": value}
        elif kind == "contradiction":
            shown = [
                i for i in placeholders(template) if str(sc.facts[i][0]) != str(sc.facts[i][1])
            ]
            wrong = r.choice(shown)
            run = render(fmt, run_id, sc, sc.steps, None, fill(template, sc.facts, wrong), r)
            detail = {"result_value": sc.facts[wrong][0], "answer_value": sc.facts[wrong][1]}
        else:
            run = render(
                fmt, run_id, sc, sc.steps, None, with_addition(answer, sc.addition, sc.lang), r
            )
            detail = {"addition": sc.addition}
        out.append(
            {"id": run_id, "label": kind, "kind": kind, **meta, "mutation": detail, "run": run}
        )
    return out


README = """# agent-runs-v3: held-out agent runs, valid and mutated, written blind

A detection set (`eval/detection.py`) of agent runs that **nothing in this project was fitted
on**: no threshold, rule, word list or model was chosen by looking at these records. It was
written and frozen (committed) **before its first measurement**, by an author who had not read the
check's rules (`agents/checking/*.py`, except `formats.py` for the run formats it reads), so,
unlike agent-runs-v2 (whose failures were read to improve the check), its figures are blind.
Later changes to the check are measured on it, never tuned to it; reading its failures to fix
the check makes it as stale as v2, and a new set (`agent-runs-v4`) is then due. A wrong label
found after freezing is reported and fixed in a new version, never edited here.

## How it was written

By `scripts/make_agent_runs_v3.py` (seed {seed}; rerunning it writes these files byte for
byte), whose templates were written for this set by an AI coding agent of the project's team,
without running the check on any of them. It reuses only agent-runs-v2's plumbing (the six run
formats, one-character changes, the record layout); the tools, requests, values and answers are
new: {scenarios} scenarios over {tools} tool declarations shaped like public APIs that v2 does
not have ({tool_names}), in {domains} domains ({domain_names}). No record is taken from a public
data set.

Each scenario is a request in one of six languages ({languages}), the calls an agent makes for
it (one or two steps; a second step uses an id the first returned: a Slack user id, a Linear team
id, a Drive file id, a Shopify order id, an EC2 instance id, a Spotify track uri, a Wise profile;
some runs declare two tools and use one; one kind makes two calls in parallel), the tools'
JSON results and an answer in the request's language, rendered in one of six run formats in turn
(OpenAI Chat Completions, Anthropic Messages, Gemini, generic, LangChain message dicts, OpenAI
Responses). A system prompt states today's date and the user's time zone, so relative dates
("tomorrow", "pasado mañana", "am Freitag", "dopodomani") and local times resolve.

Values are written as users write them: informal requests, a few typos, relative and local dates
("the 3rd of March", "el 4/3", "am 4.3.", "em 04/03"), times ("8:30pm", "a las 8 de la tarde",
"um 20.30 Uhr", "à 20h30", "alle 20", "às 20h"), amounts in local formats ("$1,250.50",
"1.250,50 €", "1 250,50 €", "€ 1.250,50", "R$ 1.250,50"), phone numbers as people say them
("(617) 555-0134" -> E.164), a Notion URL whose id the call writes dashed, addresses, IPs and
CIDRs, emails, ids of many shapes (`cus_…`, `U0…`, `i-0…`, `rec…`, uuids, tracking numbers,
tickers). Calls carry them as the APIs want them: ISO 8601 with offsets, local floating
date-times with a time-zone field, Unix seconds, dates inside a Gmail query, an S3 prefix or a SQL
string, cents, decimal strings, SCREAMING_CASE / camelCase / snake_case enums, integer enums
(Linear's and Todoist's priorities). Results come flat, nested, as arrays of objects, in
`data` / `items` / `results` / `records` envelopes, with pagination fields, nulls and booleans.
Answers are written the way agents write them: restatements, markdown lists, tables and bold, an
intro, the source named, a hedge about the data, an offer of more help, rounded figures ("about
12.3 MB"), a time converted to the user's zone from a UTC result, partial restatements as
"key: value" lists. Every `correct` answer states only what the results hold.

## Records and labels

Each scenario gives three records (`pair` names the scenario):

| label | what | should be |
|---|---|---|
| `correct` | the whole run; the answer restates the results | emitted |
| `valid_call` | the same run ending on its last call, before the tool ran | not flagged |
| `changed_date`, `changed_time`, `changed_amount`, `changed_address`, `changed_ip`, `changed_id`, `changed_enum` | one argument value the user gave, changed by one character (one enum step for `enum`); the run ends on that call | flagged |
| `invented_value` | an optional argument set to a value nobody gave (an id, email, date, amount, tag, cursor); ends on that call | flagged |
| `contradiction` | one value of the answer contradicts the result | flagged |
| `unsupported_addition` | the answer adds a sentence (or a table row) no result supports | flagged |

`mutation` says what was changed (the argument's JSON pointer, the user's value and the call's;
or the answer's value against the result's; or the added sentence). Counts: {counts}. Languages
(scenarios): {lang_counts}. Formats: {format_counts}.

Flagged = the report's action is not `emit` (`agents.checking.detection.check_record`). The
bench `python -m bench agent_runs_v3` also reads each report: per call (a valid call rejected),
per mutation whether the changed call itself was rejected, and each rate by language and format.

## Targets

On this set, held out:

- valid tool calls flagged <= 0.03 (all causes);
- runs whose answer restates a valid result (`correct`) emitted >= 0.90;
- each mutation kind caught (flagged) >= 0.95, changed values of every kind included.
"""


def write(folder: Path, force: bool = False) -> dict:
    clear(folder, force, "-v4")
    rows = records()
    check_records(rows)
    counts = label_counts(rows)
    valid = [row for row in rows if row["label"] == "correct"]
    scs = scenarios()
    tools = sorted({t["name"] for sc in scs for t in sc.tools})
    domains = sorted({sc.domain for sc in scs})
    langs = sorted({sc.lang for sc in scs})

    def tally(key: str) -> str:
        found: dict[str, int] = {}
        for row in valid:
            found[row[key]] = found.get(row[key], 0) + 1
        return ", ".join(f"{k} {v}" for k, v in sorted(found.items()))

    text = README.format(
        seed=SEED,
        scenarios=len(scs),
        tools=len(tools),
        tool_names=", ".join(f"`{t}`" for t in tools),
        domains=len(domains),
        domain_names=", ".join(domains),
        languages=", ".join(LANG_NAMES[lang] for lang in langs),
        counts=", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        lang_counts=tally("lang"),
        format_counts=tally("format"),
    )
    return freeze(
        folder,
        rows,
        text,
        {
            "name": SET_NAME,
            "description": "Held-out agent runs written blind from templates (seed "
            f"{SEED}) over public-API tools agent-runs-v2 does not have, in six languages: "
            "valid runs and calls, and runs with one changed, invented or contradicting value; "
            "flagged = the report's action is not emit. Frozen before its first measurement; "
            "nothing was fitted on it.",
            "checker": "agents.checking.detection.check_record",
            "overrides": {"agent_runs": {}},
            "source": "scripts/make_agent_runs_v3.py (written for this project; no public data)",
            "seed": SEED,
            "targets": TARGETS,
            "counts": dict(sorted(counts.items())),
            "tools": len(tools),
            "languages": langs,
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
