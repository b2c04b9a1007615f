"""When a call's date or time comes from the conversation: the words that date things relative
to the run's clock (six languages), the durations a user gives, a date or time one digit off
another, an end computed from a start and a duration, and how far from the dates a run names a
computed date may lie."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from stages.common import values

_DAYS = "|".join(sorted(values.weekday_names(("en", "es", "de", "fr")), key=len, reverse=True))
_SPANS = "days?|nights?|weeks?|weekends?|months?|years?|hours?|minutes?|quarters?"
RELATIVE_DATE_RE = re.compile(
    rf"\b(?:today|tonight|tomorrow|yesterday|now|ago|later|{_DAYS}|"
    rf"(?:next|last|this|coming|past|previous|following)\s+(?:{_SPANS}|{_DAYS}|morning|evening|"
    rf"afternoon)|(?:day|week|month) (?:before|after)|in\s+\d+\s*(?:{_SPANS})|"
    rf"\d+\s*(?:{_SPANS})\s+(?:from|after|before|later|earlier)|"
    r"hoy|mañana|ayer|heute|morgen|gestern|aujourd'hui|demain|hier|oggi|domani|ieri|"
    r"vandaag|今日|明日|今天|明天)\b",
    re.IGNORECASE,
)
# a calendar span before or after today in es/fr/de/it/pt ("le mois dernier", "la semana que
# viene", "nächste Woche", "il mese scorso", "há 3 semanas", "dans 2 semaines"), folded
_SPAN_WORDS = (
    r"(?:d[ií]as?|jours?|tage?n?|giorni|semanas?|semaines?|wochen?|wochenenden?|settimane?|"
    r"mes(?:es)?|mois|monate?n?|mesi|mese|anos?|annees?|ans|jahre?n?|anni|anno|trimestres?|"
    r"quartale?|trimestri|fin de semana|week-?end)"
)
_SPAN_QUALIFIERS = (
    r"(?:dernier|derniere|prochain|prochaine|passee?|pasad[oa]|proxim[oa]|que viene|"
    r"letzte[nrs]?|naechste[nrs]?|nachste[nrs]?|vergangene[nrs]?|kommende[nrs]?|vorige[nrs]?|"
    r"scors[oa]|prossim[oa]|passad[oa]|que vem|anterior|precedente|ultim[oa]s?)"
)
RELATIVE_SPAN_RE = re.compile(
    rf"\b{_SPAN_QUALIFIERS}\s+(?:\w+\s+)?{_SPAN_WORDS}\b|\b{_SPAN_WORDS}\s+(?:\w+\s+)?"
    rf"{_SPAN_QUALIFIERS}\b|\b(?:dans|en|in|tra|fra|em|dentro de|hace|il y a|vor|fa|ha)\s+"
    rf"\d+\s+{_SPAN_WORDS}\b|\b\d+\s+{_SPAN_WORDS}\s+(?:fa|atras|plus tard|spater|dopo)\b",
    re.IGNORECASE,
)
# A date without its year ("on Nov 1", "1er novembre", "el 3 de mayo"): the model adds the year
_MONTHS = "(?:" + "|".join(sorted(values.MONTHS, key=len, reverse=True)) + ")"
MONTH_DAY_RE = re.compile(
    rf"\b{_MONTHS}\.?\s*\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th|er|\.)?\s+(?:of\s+|de\s+)?{_MONTHS}\b"
    rf"(?!\.?,?\s*(?:de\s+|del\s+)?\d{{4}})",
    re.IGNORECASE,
)
# a duration the user gave ("30 min", "45 Minuten", "3 nights", "2 semanas"): an end computed
# from a start is grounded by the two
DURATION_RE = re.compile(
    r"(?<![\w.,])(?P<n>\d+(?:[.,]\d+)?)\s?(?P<unit>min(?:ute)?s?|minut[oe]s?|minuten|mn|"
    r"h|hrs?|hours?|heures?|horas?|stunden?|ore|days?|d[ií]as?|jours?|tage?n?|giorni|nights?|"
    r"noches?|nuits?|n[aä]chte?|notti|weeks?|semanas?|semaines?|wochen?|settimane?)\b",
    re.IGNORECASE,
)
# unit prefixes (folded) -> minutes or days, in the order they are tried
_UNIT_PREFIXES = (
    ("min", 1, "minutes"),
    ("mn", 1, "minutes"),
    ("h", 60, "minutes"),
    ("stund", 60, "minutes"),
    ("ore", 60, "minutes"),
    ("sem", 7, "days"),
    ("set", 7, "days"),
    ("w", 7, "days"),
    ("", 1, "days"),  # days, días, jours, Tage, giorni, nights, noches, nuits, Nächte, notti
)


def durations(text: str) -> list[tuple[float, str]]:
    """(amount, "minutes" | "days") of each duration written in a text."""
    found = []
    for match in DURATION_RE.finditer(values.fold_keeping_length(text)):
        amount = float(match.group("n").replace(",", "."))
        unit = match.group("unit").lower()
        _, scale, kind = next(u for u in _UNIT_PREFIXES if unit.startswith(u[0]))
        found.append((amount * scale, kind))
    return found


def is_relative(text: str) -> bool:
    """The text dates something relative to the run's clock ("tomorrow", "next Friday", "in 3
    days", a date without its year); a weekday written beside its full date ("Tuesday, May 4,
    2027") is not."""
    dated = [m.start for m in values.moments(text) if m.date and len(m.date) == 10]
    folded = values.fold_keeping_length(text)
    for match in RELATIVE_DATE_RE.finditer(folded):
        if re.fullmatch(_DAYS, match.group(0), re.IGNORECASE) and any(
            0 <= start - match.end() <= 4 for start in dated
        ):
            continue
        return True
    return bool(MONTH_DAY_RE.search(folded) or RELATIVE_SPAN_RE.search(folded))


def same_when(wanted: values.Moment, known: values.Moment) -> bool:
    """An argument's date/time equals a written one: every part the argument has that the
    written one states (a date-time argument for "November 1, 2023 at 8pm" at 20:00)."""
    if wanted.date is not None and not (known.date and wanted.date.startswith(known.date)):
        return False
    if wanted.time is not None and known.time is not None:
        other = known.at(wanted.offset) if wanted.offset is not None else known
        return other.time == wanted.time
    # a time the written date does not state is not grounded by it, but for the day's own
    # bounds (a range over "October 3": 00:00 to 23:59:59)
    return wanted.time is None or (wanted.time in ("00:00", "23:59") and known.date is not None)


def resolved_one_off(wanted: values.Moment, resolved: list[values.Moment]) -> str | None:
    """A date or time one digit away from one a message names by the run's clock ("pasado
    mañana a las 10:30" for 10:40), in the argument's zone when it writes one."""
    for moment in resolved:
        known = moment.at(wanted.offset) if wanted.offset is not None else moment
        if known.date and wanted.date and wanted.time is None and known.time is not None:
            continue
        if one_digit_off(wanted, known):
            return f"{known.date or ''}T{known.time or ''}".strip("T")
    return None


def one_digit_off(wanted: values.Moment, known: values.Moment) -> bool:
    """The same moment but for one digit of its date or time, written in any format."""
    a = (wanted.date or "") + (wanted.time or "")
    if known.date:
        b = (known.date or "") + (known.time or "")
    else:
        b = (wanted.date or "") + (known.time or "")
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def as_datetime(moment: values.Moment) -> datetime | None:
    if not moment.date or len(moment.date) != 10:
        return None
    return datetime.fromisoformat(f"{moment.date}T{moment.time or '00:00'}")


def computed_end(
    value: Any, pointer: str, leaves: list[tuple[str, str, Any]], spans: list[tuple[float, str]]
) -> str | None:
    """An end the model computed: another date or time of the same call plus a duration the
    user wrote ("at 18:00, 30 minutes" -> end 18:30; "from June 1 for 3 nights" -> June 4).
    Returns the other argument's pointer."""
    wanted = values.moment_of(str(value))
    end = as_datetime(wanted) if wanted else None
    if end is None:
        return None
    for other, _, start_value in leaves:
        start_moment = values.moment_of(str(start_value)) if other != pointer else None
        start = as_datetime(start_moment) if start_moment else None
        if start is None:
            continue
        for amount, unit in spans:
            step = timedelta(minutes=amount) if unit == "minutes" else timedelta(days=amount)
            if unit == "days" and wanted.time != (start_moment.time if start_moment else None):
                continue
            if start + step == end:
                return other
    return None


# the calendar units a user's words span ("last month", "dans 3 semaines", "letztes Jahr"), in
# days; a date the model computed from them lies within twice the span of a date the run names
# (a calendar month before today starts up to 62 days back)
_UNIT_DAYS = (
    (r"years?|a[nñ]os?|ann[ée]es?|ans|jahre?n?|anni|anno", 366),
    (r"quarters?|trimestres?|quartale?|trimestri", 92),
    (r"months?|mes(?:es)?|mois|monate?n?|mesi|mese|m[eê]s", 31),
    (r"weeks?|weekends?|semanas?|semaines?|wochen?|wochenenden?|settimane?|fins? de semana", 7),
)
_UNIT_RES = [
    (re.compile(rf"(?:(\d+)\s*)?\b(?:{words})\b", re.IGNORECASE), days)
    for words, days in _UNIT_DAYS
]
MIN_REACH_DAYS = 14  # "tomorrow", "am Freitag", "in 3 days": within two weeks of today


def reach(users: list[Any], spans: list[tuple[float, str]]) -> int:
    """How far (days) from a date the run names a date the model computed from the user's
    relative words may lie: twice the longest calendar span they name, plus the durations."""
    longest = 0
    for source in users:
        text = values.fold_keeping_length(source.text)
        for pattern, days in _UNIT_RES:
            for match in pattern.finditer(text):
                longest = max(longest, int(match.group(1) or 1) * days)
    given = sum(amount for amount, unit in spans if unit == "days")
    return int(max(MIN_REACH_DAYS, 2 * longest + MIN_REACH_DAYS // 2) + given)


def anchors(
    sources: list[Any], resolved: dict[str, list[values.Moment]], clock: Any
) -> list[datetime]:
    """The days a computed date may be counted from: the run's today, every full date the
    messages, results and earlier calls write, and those the run's clock resolves."""
    days = [datetime.combine(clock.today, datetime.min.time())] if clock else []
    for source in sources:
        for moment in values.moments(source.text) + resolved.get(source.name, []):
            day = as_datetime(values.Moment(moment.date, None, None, 0, 0))
            if day is not None:
                days.append(day)
    return days


def beyond_reach(wanted: values.Moment, anchors: list[datetime], reach: int) -> bool:
    """A date farther than `reach` days from every date the run names or counts from: not a
    computation the user's relative words ask for. With no date to count from, unknown."""
    day = as_datetime(values.Moment(wanted.date, None, None, 0, 0))
    if day is None or not anchors:
        return False
    return all(abs((day - anchor).days) > reach for anchor in anchors)
