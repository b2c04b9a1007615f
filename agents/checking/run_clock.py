"""The run's clock: today's date and the user's time zone as a run states them, and the dates and
times a message names relative to them.

Agents are told the date ("Current date: 2026-03-30", "Today is Friday, 2026-12-04",
"today=2026-02-22") and the user's zone ("User timezone: Europe/Madrid"), and users write dates
that only that clock resolves: "tomorrow", "pasado mañana", "am Freitag", "lundi", "in 3 days",
a date without its year ("Apr 22", "the 28th of November", "el 4/3", "am 4.3.", "le 25/06"),
times as "a las 8 de la tarde", "alle 20", "às 20h", "zwischen 9 und 17 Uhr". A call writes
them as ISO dates, date-times with or without an offset, or Unix seconds; `moments` gives the
full dates and date-times a message names, each with the zone's offset on that day, so the
provenance check compares them by meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from stages.common import values

# "Current date: 2026-03-30", "Today is Friday, 2026-12-04", "today=2026-02-22", "Heute ist ..."
TODAY_RE = re.compile(
    r"\b(?:today|current date|date|heute|hoy|aujourd'hui|oggi|hoje|fecha|datum)\b"
    r"\W{0,3}(?:is|ist|es|est|è|é)?\W{0,2}(?:[^\W\d]+,?\s+)?(\d{4}-\d{2}-\d{2})\b",
    re.IGNORECASE,
)
TODAY_WORDS_RE = re.compile(
    r"\b(?:today|current date|heute|hoy|aujourd'hui|oggi|hoje)\b\W{0,3}(?:is|ist|es|est|è|é)?",
    re.IGNORECASE,
)
ZONE_RE = re.compile(r"\b(?:[A-Z][A-Za-z]+/[A-Z][A-Za-z_-]+(?:/[A-Z][A-Za-z_-]+)?|UTC)\b")
# Unix time in seconds or milliseconds between 2000 and 2100: a moment, not a count
EPOCH_SECONDS = (946684800, 4102444800)
EPOCH_TEXT_RE = re.compile(r"^\d{10}(?:\.\d{1,6})?$|^\d{13}$")

# full names only: an abbreviation ("Sat", "Mon") alone is no date the user asks for
WEEKDAY = values.weekday_names(("en", "es", "de", "fr", "it", "pt"))
WEEKDAY_RE = re.compile(
    r"\b(" + "|".join(sorted(WEEKDAY, key=len, reverse=True)) + r")(?:-feira)?\b", re.IGNORECASE
)
# words for a day counted from today, longest first so "pasado mañana" is not "mañana"
_DAY_WORDS = (
    (
        2,
        "day after tomorrow|pasado manana|ubermorgen|apres-demain|apres demain|dopodomani|"
        "depois de amanha",
    ),
    (-2, "day before yesterday|anteayer|vorgestern|avant-hier|l'altro ieri|anteontem"),
    (1, "tomorrow|manana|morgen|demain|domani|amanha"),
    (-1, "yesterday|ayer|gestern|hier|ieri|ontem"),
    (
        0,
        "today|tonight|this morning|this afternoon|this evening|hoy|heute|aujourd'hui|oggi|"
        "hoje|stasera|ce soir|esta noche|esta tarde|heute abend",
    ),
)
DAY_WORD_RE = [
    (shift, re.compile(rf"\b(?:{words})\b", re.IGNORECASE)) for shift, words in _DAY_WORDS
]
# the one-word ones ("hoje", "gestern"): a word of a claim that names a day
DAY_WORDS = frozenset(
    phrase for _, words in _DAY_WORDS for phrase in words.split("|") if re.fullmatch(r"\w+", phrase)
)
NEXT_RE = re.compile(
    r"\b(?:next|nachsten?|kommenden?|prochain|proxim[oa]|prossim[oa]|que vem)\s*$", re.IGNORECASE
)
IN_DAYS_RE = re.compile(
    r"\b(?:in|en|dans|tra|fra|em|within|binnen)\s+(\d{1,3})\s*(days?|dias?|jours?|tagen?|"
    r"giorni|weeks?|semanas?|semaines?|wochen|settimane?)\b",
    re.IGNORECASE,
)
_MONTH = "(" + "|".join(sorted(values.MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|\.|º|°)?"
# a date without its year: "Apr 22", "22 April", "the 28th of November", "4. März", "3 de mayo"
MONTH_DAY_RES = (
    (re.compile(rf"\b{_MONTH}\s+(?:the\s+)?{_DAY}(?!\d)", re.IGNORECASE), 1, 2),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+|de\s+)?{_MONTH}(?![^\W\d])", re.IGNORECASE), 2, 1),
)
# "2/4", "4.3.", "04/03", "25/06": both readings (day-month and month-day)
NUMERIC_DAY_RE = re.compile(
    r"(?<![\w./:-])(\d{1,2})([/.])(\d{1,2})(?:\2)?(?![\w/:]|[.,]\d)(?!\s*(?:uhr|h\b|am\b|pm\b))",
    re.IGNORECASE,
)
_PM_AFTER = (
    r"pm|p\.m\.|de la tarde|de la noche|du soir|de l'apres-midi|di sera|del pomeriggio|"
    r"da tarde|da noite|abends|nachmittags|in the evening|in the afternoon|tonight"
)
# an hour after a word that introduces one ("a las 8", "alle 20", "às 20h", "um 9", "zwischen 9
# und 17 Uhr", "between 9 and 5"): read as the hour, and as its afternoon hour when 1-11 with no
# morning word
HOUR_RE = re.compile(
    r"\b(?:at|a las|a la|as|alle(?: ore)?|um|ab|bis|gegen|between|and|und|et|y|e|entre|zwischen|"
    r"to|until|till|from|de|von|dalle|fino alle|vers|jusqu'a|hasta|desde|ate|dès|des)\s+"
    r"(\d{1,2})(?:[:.h](\d{2}))?\s*(h|uhr|hrs|heures?|horas?|ore|o'clock)?"
    rf"(?:\s*({_PM_AFTER}|am\b|a\.m\.|de la manana|du matin|di mattina|da manha|morgens))?"
    r"(?![\d.,:]|\s*(?:%|€|\$|£)|[^\W\d_])"
    r"(?!\s+(?!(?:und|and|et|y|e|bis|to|a|till|until|or|oder|ou|o)\b)[^\W\d_])",
    re.IGNORECASE,
)


# an hour written with its unit anywhere ("demain 7h", "19h30", "17 Uhr")
H_TIME_RE = re.compile(r"(?<![\w.,:])(\d{1,2})\s?(?:h|uhr)(\d{2})?(?![\w])", re.IGNORECASE)


def without_clock(text: str) -> str:
    """A message without the words that state the run's clock ("Today is Friday, 2026-12-04"),
    which date nothing the user asks."""
    folded = values.fold_keeping_length(text)
    for match in reversed(list(TODAY_RE.finditer(folded))):
        text = text[: match.start()] + " " * (match.end() - match.start()) + text[match.end() :]
    return text


@dataclass(frozen=True)
class Clock:
    today: date
    zone: ZoneInfo | None


def clock_of(texts: list[str]) -> Clock | None:
    """The run's today and zone, from the first message that states today's date."""
    zone = None
    for text in texts:
        for name in ZONE_RE.findall(text):
            try:
                zone = ZoneInfo(name)
                break
            except (ZoneInfoNotFoundError, ValueError):
                continue
        if zone:
            break
    for text in texts:
        match = TODAY_RE.search(values.fold_keeping_length(text))
        if match:
            try:
                return Clock(date.fromisoformat(match.group(1)), zone)
            except ValueError:
                continue
    for text in texts:  # "Today is May 5, 2023": a date in any writing right after the words
        for match in TODAY_WORDS_RE.finditer(values.fold_keeping_length(text)):
            after = text[match.end() : match.end() + 40]
            found = [m for m in values.moments(after) if m.date and len(m.date) == 10]
            if found and found[0].start <= 16:
                return Clock(date.fromisoformat(found[0].date), zone)
    return None


def _nearest_year(today: date, month: int, day: int) -> date | None:
    """A date without its year, in the year that puts it nearest today."""
    found = []
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            found.append(date(year, month, day))
        except ValueError:
            continue
    return min(found, key=lambda d: abs((d - today).days)) if found else None


def dates_in(text: str, clock: Clock) -> list[date]:
    """The dates a message names relative to the run's clock."""
    folded = values.fold_keeping_length(text)
    today = clock.today
    found: list[date] = []
    for shift, pattern in DAY_WORD_RE:
        found += [today + timedelta(days=shift) for _ in pattern.finditer(folded)]
        folded = pattern.sub(lambda m: " " * len(m.group(0)), folded)
    for match in WEEKDAY_RE.finditer(folded):
        ahead = (WEEKDAY[match.group(1).lower()] - today.weekday()) % 7
        found.append(today + timedelta(days=ahead or 7))
        if ahead == 0:
            found.append(today)
        if NEXT_RE.search(folded[: match.start()]):
            found.append(today + timedelta(days=(ahead or 7) + 7))
    for match in IN_DAYS_RE.finditer(folded):
        scale = (
            7
            if match.group(2).lower()[0] in "wsg" and not match.group(2).lower().startswith("gi")
            else 1
        )
        found.append(today + timedelta(days=int(match.group(1)) * scale))
    for pattern, month_at, day_at in MONTH_DAY_RES:
        for match in pattern.finditer(folded):
            month = values.MONTHS.get(match.group(month_at).lower().rstrip("."))
            if month:
                found.append(_nearest_year(today, month, int(match.group(day_at))))
    for match in NUMERIC_DAY_RE.finditer(folded):
        a, b = int(match.group(1)), int(match.group(3))
        found += [_nearest_year(today, b, a), _nearest_year(today, a, b)]
    return list(dict.fromkeys(d for d in found if d is not None))


def day_words(text: str) -> list[tuple[int, int, int]]:
    """(days from today, start, end) of each word that names a day counted from today
    ("yesterday", "pasado mañana", "hoje")."""
    folded = values.fold_keeping_length(text)
    found = []
    for shift, pattern in DAY_WORD_RE:
        for match in pattern.finditer(folded):
            found.append((shift, match.start(), match.end()))
        folded = pattern.sub(lambda m: " " * len(m.group(0)), folded)
    return sorted(found, key=lambda f: f[1])


def unresolved(text: str) -> str:
    """The message with what the clock resolves blanked out (the clock's own statement, "today",
    "pasado mañana", "am Freitag", "next Friday", "in 3 days", "Apr 22", "4.3."): what is left
    dates things in ways it does not ("last week", "this weekend", "3 days ago")."""
    folded = values.fold_keeping_length(without_clock(text))
    patterns = [p for _, p in DAY_WORD_RE] + [IN_DAYS_RE, NUMERIC_DAY_RE]
    patterns += [p for p, _, _ in MONTH_DAY_RES]
    patterns.append(re.compile(rf"(?:{NEXT_RE.pattern[:-4]}\s+)?{WEEKDAY_RE.pattern}", re.I))
    for pattern in patterns:
        folded = pattern.sub(lambda m: " " * len(m.group(0)), folded)
    return folded


def times_in(text: str) -> list[str]:
    """The times of day ('HH:MM') a message names, in any of the common writings."""
    folded = values.fold_keeping_length(text)
    found = [m.time for m in values.moments(text) if m.time]
    for match in H_TIME_RE.finditer(folded):
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        if hour <= 24 and minute <= 59:
            found.append(f"{hour % 24:02d}:{minute:02d}")
    for match in HOUR_RE.finditer(folded):
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        if hour > 24 or minute > 59:
            continue
        marker = (match.group(4) or "").lower()
        pm = bool(marker) and not re.match(
            r"am|a\.m|de la manana|du matin|di mattina|da manha|"
            r"morgens",
            marker,
        )
        if pm and hour < 12:
            found.append(f"{hour + 12:02d}:{minute:02d}")
            continue
        found.append(f"{hour % 24:02d}:{minute:02d}")
        if not marker and 1 <= hour <= 11:
            found.append(f"{hour + 12:02d}:{minute:02d}")
    return list(dict.fromkeys(found))


def _offset(clock: Clock, day: date, time: str | None) -> float | None:
    if clock.zone is None:
        return None
    hour, minute = (int(p) for p in (time or "12:00").split(":"))
    local = datetime(day.year, day.month, day.day, hour % 24, minute, tzinfo=clock.zone)
    delta = local.utcoffset()
    return delta.total_seconds() / 3600 if delta is not None else None


def moments(text: str, clock: Clock | None) -> list[values.Moment]:
    """The full dates and date-times a message names by the run's clock: each date it names
    (relative, without its year, or written in full) alone and with each time it names; times
    named without a date on today and tomorrow. Each carries the zone's offset that day."""
    if clock is None:
        return []
    days = dates_in(text, clock)
    days += [
        date.fromisoformat(m.date)
        for m in values.moments(text, both_orders=True)
        if m.date and len(m.date) == 10 and m.time is None
    ]
    times = times_in(text)
    if times and not days:
        days = [clock.today, clock.today + timedelta(days=1)]
    found = []
    for day in dict.fromkeys(days):
        found.append(values.Moment(day.isoformat(), None, _offset(clock, day, None), 0, 0))
        found += [
            values.Moment(day.isoformat(), t, _offset(clock, day, t), 0, 0)
            for t in times
            if t != "24:00"
        ]
    return found


def epoch_moment(value: object, clock: Clock | None) -> values.Moment | None:
    """A Unix time in seconds or milliseconds (an integer, or a string of one with a fraction
    of a second, as Slack's "1802106000.510561") as a date-time in the run's zone (UTC when the
    run names none)."""
    if isinstance(value, str) and EPOCH_TEXT_RE.match(value.strip()):
        value = int(value.strip().split(".")[0])
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    seconds = value / 1000 if value > EPOCH_SECONDS[1] else value
    if not EPOCH_SECONDS[0] <= seconds <= EPOCH_SECONDS[1] or seconds != int(seconds):
        return None
    zone = clock.zone if clock and clock.zone else UTC
    when = datetime.fromtimestamp(seconds, tz=zone)
    delta = when.utcoffset()
    offset = delta.total_seconds() / 3600 if delta is not None else 0.0
    return values.Moment(when.date().isoformat(), when.strftime("%H:%M"), offset, 0, 0)


def _zone_countries() -> dict[str, str]:
    """IANA zone -> ISO country, from the zone table tzdata ships."""
    found: dict[str, str] = {}
    try:
        from importlib.resources import files

        table = files("tzdata").joinpath("zoneinfo", "zone.tab").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return found
    for line in table.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and not line.startswith("#"):
            found[parts[2]] = parts[0]
    return found


_COUNTRIES: dict[str, str] | None = None


def calling_code(clock: Clock | None) -> str | None:
    """The telephone country code of the run's zone ("34" for Europe/Madrid)."""
    global _COUNTRIES
    if clock is None or clock.zone is None:
        return None
    if _COUNTRIES is None:
        _COUNTRIES = _zone_countries()
    country = _COUNTRIES.get(str(clock.zone.key))
    if not country:
        return None
    import phonenumbers

    code = phonenumbers.country_code_for_region(country)
    return str(code) if code else None
