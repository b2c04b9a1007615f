"""Values as people and programs write them, normalised so that two writings compare equal.

- identifiers across `_`/`-`/`.`/`/`/camelCase/case: "ThinQ_Connect" == "ThinQ Connect" ==
  "thinq-connect" (`ident_key`, `find_ident`);
- numbers with thousands separators, scale words, currencies and units: "$1,234.50",
  "1.2 million", "72°F", "12 %" (`quantities`, `number_of`);
- dates and times in common formats and time zones: "November 1, 2023 at 8pm",
  "2023-11-01T20:00:00", "01/11/2023 20:00", "8:00 PM EST" (`moments`, `moment_of`).

Shared by the agent-run check (structured evidence, argument provenance). Pure functions: no
model, no network.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from dateutil import parser as dateutil_parser

WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def fold(text: str) -> str:
    """Lower case without accents."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def ident_key(text: str) -> str:
    """An identifier or name with every separator and the case dropped: 'ThinQ_Connect',
    'ThinQ Connect', 'thinq-connect' and 'thinqConnect' all read 'thinqconnect'."""
    return "".join(WORD_RE.findall(fold(text)))


def key_words(key: str) -> list[str]:
    """The words of a JSON key or tool name: 'unitOfMeasure' / 'unit_of_measure' -> unit, of,
    measure."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(key))
    spaced = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", " ", spaced)
    return WORD_RE.findall(fold(spaced))


def key_words_cased(key: str) -> list[str]:
    """`key_words` keeping the case: 'ThinQ_Connect' -> ThinQ, Connect (camelCase split only
    where a lower-case letter meets an upper-case one that starts a word)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", " ", str(key))
    return WORD_RE.findall(spaced)


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    """(folded word, start, end) of each word of `text` (letters and digits, no separators)."""
    folded = fold(text)
    if len(folded) != len(text):  # a character that folds to several: offsets on the original
        return [(fold(m.group(0)), m.start(), m.end()) for m in WORD_RE.finditer(text)]
    return [(m.group(0), m.start(), m.end()) for m in WORD_RE.finditer(folded)]


def find_ident(value: str, tokens: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """Character spans of `tokens` (of one text) whose consecutive words spell `value` once
    separators and case are dropped."""
    wanted = ident_key(value)
    if not wanted:
        return []
    found = []
    for i in range(len(tokens)):
        joined = ""
        for j in range(i, len(tokens)):
            joined += tokens[j][0]
            if joined == wanted:
                found.append((tokens[i][1], tokens[j][2]))
                break
            if len(joined) >= len(wanted) or not wanted.startswith(joined):
                break
    return found


# ---------------------------------------------------------------- numbers

SCALES = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "trillion": 1e12,
}
CURRENCY_SYMBOLS = {"$": "usd", "us$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr"}
CURRENCY_CODES = {
    "usd": "usd",
    "dollar": "usd",
    "dollars": "usd",
    "eur": "eur",
    "euro": "eur",
    "euros": "eur",
    "gbp": "gbp",
    "pound": "gbp",
    "pounds": "gbp",
    "jpy": "jpy",
    "yen": "jpy",
    "inr": "inr",
    "rupees": "inr",
    "chf": "chf",
    "cad": "cad",
    "aud": "aud",
    "cny": "cny",
    "yuan": "cny",
}
UNITS = {
    "f": "fahrenheit",
    "°f": "fahrenheit",
    "fahrenheit": "fahrenheit",
    "c": "celsius",
    "°c": "celsius",
    "celsius": "celsius",
    "centigrade": "celsius",
    "%": "percent",
    "percent": "percent",
    "km": "km",
    "kilometers": "km",
    "kilometres": "km",
    "mi": "mile",
    "miles": "mile",
    "mile": "mile",
    "kg": "kg",
    "kilograms": "kg",
    "lb": "lb",
    "lbs": "lb",
    "pounds_weight": "lb",
    "mph": "mph",
    "kmh": "kmh",
    "km/h": "kmh",
    "ms": "ms",
    "s": "second",
    "seconds": "second",
    "minutes": "minute",
    "minute": "minute",
    "min": "minute",
    "mins": "minute",
    "sec": "second",
    "secs": "second",
    "second": "second",
    "segundos": "second",
    "segundo": "second",
    "secondes": "second",
    "seconde": "second",
    "sekunden": "second",
    "sekunde": "second",
    "secondi": "second",
    "minutos": "minute",
    "minuto": "minute",
    "minuten": "minute",
    "minuti": "minute",
    "hours": "hour",
    "hour": "hour",
    "hrs": "hour",
    "h": "hour",
    "horas": "hour",
    "hora": "hour",
    "heures": "hour",
    "heure": "hour",
    "stunden": "hour",
    "stunde": "hour",
    "std": "hour",
    "ore": "hour",
    "days": "day",
    "dias": "day",
    "jours": "day",
    "tage": "day",
    "giorni": "day",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "kib": "kb",
    "mib": "mb",
    "gib": "gb",
    "tib": "tb",
    "ko": "kb",  # kilo-octets, mégaoctets: as French writes bytes
    "mo": "mb",
}
# a decimal comma ("89,99 €", "12,5 %") only before a currency or unit: "5,10 and 15" is a list
_UNIT_AFTER = "|".join(
    re.escape(u) for u in sorted({*CURRENCY_CODES, *UNITS, "€", "$", "£", "¥", "₹"}, key=len)[::-1]
)
# a comma before four or more digits ("taux 1,0602") groups nothing: a decimal comma anywhere; a
# comma before one or two digits is a decimal comma before a unit, or where no other comma and
# digit follows ("Cours: 160,02;", "3,9★"): a list is "5,10,15", "5, 10" or "5,10 and 15"
_NUMBER = (
    r"(?<![\d,])\d+,\d{4,}(?!\d|,\d)"
    r"|\d{1,3}(?:[,.\u202f\u00a0 ']\d{3})+(?:[.,]\d+)?(?![.,]\d)"
    rf"|(?<![\d,])\d+,\d{{1,2}}(?![\d,])(?=\s?(?i:{_UNIT_AFTER})(?!\w))"
    r"|(?<![\d,])\d+,\d{1,2}(?!\d|,\d|\s(?:and|or|y|o|et|ou|und|oder|e|ed)\s\d)"
    r"|\d+(?:\.\d+)?|\.\d+"
)
QUANTITY_RE = re.compile(
    r"(?<![\w.])(?P<sign>[-−+])?(?P<cur>US\$|[$€£¥₹])?\s?(?P<num>" + _NUMBER + r")(?![\w.]*\d)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|mn|bn|[kKmMbB])\b)?"
    r"(?:\s?(?P<unit>%|[€$£¥₹]|percent\b|°\s?[CF]\b|degrees?(?:\s(?:fahrenheit|celsius|[CF]\b))?|"
    r"[A-Za-z]{1,10}\b))?",
)


@dataclass(frozen=True)
class Quantity:
    value: float
    decimals: int  # digits written after the point: "72" rounds what "72.4" states
    written: float  # the number as written, before its scale ("1.2" of "1.2 million")
    unit: str | None  # fahrenheit, celsius, percent, km, …
    currency: str | None  # usd, eur, …
    start: int
    end: int
    # the other reading of a number whose separator is ambiguous: "4.800" is 4.8 in English
    # and 4800 in German, Spanish or French (None: one reading)
    alt: float | None = None

    def readings(self) -> set[float]:
        """Every value the writing may mean: as read, its other reading, before its scale."""
        return {self.value, self.written} | ({self.alt} if self.alt is not None else set())


def _unit(raw: str | None) -> tuple[str | None, str | None]:
    """(unit, currency) of the word after a number."""
    if not raw:
        return None, None
    word = fold(raw).replace(" ", "")
    if word in CURRENCY_SYMBOLS:  # "1.250,50 €": the symbol after the number
        return None, CURRENCY_SYMBOLS[word]
    word = word.removeprefix("degrees").removeprefix("degree") or word
    if word in CURRENCY_CODES:
        return None, CURRENCY_CODES[word]
    return UNITS.get(word), None


def quantities(text: str) -> list[Quantity]:
    """The numbers of a text with their scale, unit and currency; a date's or time's digits
    are not numbers (see `moments`)."""
    blanked = _blank(text, [(m.start, m.end) for m in moments(text)])
    found = []
    for match in QUANTITY_RE.finditer(blanked):
        parsed = parse_number(match.group("num"))
        if parsed is None:
            continue
        value, decimals, alt = parsed
        written = value
        scale_word = match.group("scale")
        end = match.end("num")
        symbol = match.group("cur")
        if scale_word in ("m", "b") and not symbol:
            scale_word = None  # "20 m" is twenty metres; "$20m" twenty million
        if scale_word and scale_word.lower() in SCALES:
            value *= SCALES[scale_word.lower()]
            decimals = 0 if value.is_integer() else decimals
            end = match.end("scale")
        if match.group("sign") in ("-", "−"):
            value = -value
        unit, currency = _unit(match.group("unit"))
        if unit or currency:
            end = match.end("unit")
        currency = CURRENCY_SYMBOLS.get(fold(symbol)) if symbol else currency
        start = match.start("cur") if symbol else match.start("num")
        found.append(Quantity(value, decimals, written, unit, currency, start, end, alt))
    return found


def parse_number(raw: str) -> tuple[float, int, float | None] | None:
    """(value, decimals written, other reading) of a number as written in any common locale:
    "1,234.50" and "1.234,50" and "1 234,50" are 1234.5; "89,99" and "1,0602" are decimals (a
    comma before other than three digits groups nothing); "1,250" is 1250 with 1.25 as its other
    reading, and "4.800" 4.8 with 4800 (a separator before three digits is a decimal point in
    one locale and a group in another)."""
    text = re.sub(r"[\u202f\u00a0 ']", "", raw)
    alt = None
    if "," in text and "." in text:
        point = "," if text.rfind(",") > text.rfind(".") else "."
        group = "." if point == "," else ","
        text = text.replace(group, "").replace(point, ".")
    elif "," in text:
        parts = text.split(",")
        if len(parts) == 2 and len(parts[1]) != 3:
            text = text.replace(",", ".")
        elif len(parts) == 2 and 0 < len(parts[0]) <= 3 and raw.count(",") == 1:
            alt = float(f"{parts[0]}.{parts[1]}")  # "1,060": 1060 in English, 1.06 in French
            text = text.replace(",", "")
        else:
            text = text.replace(",", "")
    elif text.count(".") > 1:
        text = text.replace(".", "")
    elif "." in text and len(text.split(".")[1]) == 3 and 0 < len(text.split(".")[0]) <= 3:
        alt = float(text.replace(".", ""))
    try:
        value = float(text)
    except ValueError:
        return None
    decimals = len(text.split(".")[1]) if "." in text else 0
    return value, decimals, alt


@functools.lru_cache(maxsize=16384, typed=True)  # a result's leaves, read for each claim
def number_of(value: object) -> float | None:
    """A JSON leaf as a number: 72, 72.5, "72", "1,234.50", "$12.99", "12%"; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    if not text or len(text) > 40:
        return None
    found = quantities(text)
    if len(found) == 1 and found[0].start <= 1 and len(text) - found[0].end <= 1:
        return found[0].value
    return None


def same_number(claimed: Quantity, value: float) -> bool:
    """The claim's number states `value`: equal, or `value` rounded to the claim's precision
    ("72°F" for 72.4), or a percent written as a share (12% for 0.12), or the other reading
    of an ambiguous writing equal to it."""
    candidates = [value]
    if claimed.unit == "percent":
        candidates.append(value * 100)
    for candidate in candidates:
        if abs(candidate - claimed.value) <= 1e-9 * max(1.0, abs(candidate)):
            return True
        if round(candidate, claimed.decimals) == claimed.value and abs(candidate) >= 1:
            return True
    # a writing read two ways ("12.500 €", "1,060") states the value either reading equals
    return claimed.alt is not None and abs(claimed.alt - value) <= 1e-9 * max(1.0, abs(value))


# ---------------------------------------------------------------- durations, digit groups, networks

_H_WORDS = r"h|hrs?|hours?|std\.?|stunden?|heures?|horas?|ore|ora"
_MIN_WORDS = r"m|mins?\.?|minutes?|minuten?|minutos?|minuti|minuto"
_S_WORDS = r"s|secs?\.?|seconds?|sek\.?|sekunden?|segundos?|secondes?|secondi|segundo"
_AND = r"(?:,?\s*(?:and|und|et|y|e)\s+|\s*)"
# a length of time in parts: "3 min 49 s", "1 h 20 min", "2 Std. 5 Min.", "3m49s"
DURATION_WORDS_RE = re.compile(
    rf"(?<![\w.,])(?:(?P<h>\d{{1,3}})\s?(?:{_H_WORDS})(?![^\W\d_]){_AND})?"
    rf"(?:(?P<m>\d{{1,4}})\s?(?:{_MIN_WORDS})(?![^\W\d_]){_AND})?"
    rf"(?:(?P<s>\d{{1,5}})\s?(?:{_S_WORDS})(?![^\W\d_]))?",
    re.IGNORECASE,
)
# a length of time on a clock's face: "3:49" (minutes and seconds, or hours and minutes),
# "1:02:03" (hours, minutes, seconds); not one with am/pm or a zone after it
DURATION_CLOCK_RE = re.compile(
    r"(?<![\w:.,])(?P<a>\d{1,3}):(?P<b>[0-5]\d)(?::(?P<c>[0-5]\d))?(?![\w:]|[.,]\d)"
    r"(?!\s?(?:[ap]\.?m\b|uhr\b|h\b|utc\b|gmt\b))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Duration:
    """A length of time as written: each reading in seconds with the precision it is written
    to ("3:49" is 229 s to the second, or 3 h 49 min to the minute)."""

    readings: tuple[tuple[float, float], ...]  # (seconds, precision in seconds)
    start: int
    end: int


# a word that puts a time of day after it ("until 8:30", "um 8:15", "a las 10:30"): no duration
TIME_BEFORE_RE = re.compile(
    r"\b(?:at|until|till|by|from|to|between|and|um|bis|ab|von|gegen|à|as|às|a las|a la|"
    r"alle|dalle|fino alle|jusqu'à|jusqu'a|vers|dès|des|depuis|desde|hasta|entre|ate|até)"
    r"\s*$",
    re.IGNORECASE,
)


def durations(text: str) -> list[Duration]:
    """The lengths of time a text writes in parts or on a clock's face (not a clock's face
    after a word that introduces a time of day: "until 8:30")."""
    found = []
    for match in DURATION_CLOCK_RE.finditer(text):
        if TIME_BEFORE_RE.search(text[max(0, match.start() - 12) : match.start()]):
            continue
        a, b, c = int(match.group("a")), int(match.group("b")), match.group("c")
        if c is not None:
            readings = ((a * 3600 + b * 60 + int(c), 1.0),)
        else:
            readings = ((a * 60 + b, 1.0), (a * 3600 + b * 60, 60.0))
        found.append(Duration(readings, match.start(), match.end()))
    for match in DURATION_WORDS_RE.finditer(text):
        parts = [match.group(k) for k in ("h", "m", "s")]
        if not match.group(0).strip() or not any(parts):
            continue
        h, m, sec = (int(p or 0) for p in parts)
        precision = 1.0 if parts[2] else 60.0 if parts[1] else 3600.0
        end = match.end()
        found.append(Duration(((h * 3600 + m * 60 + sec, precision),), match.start(), end))
    return sorted(found, key=lambda d: d.start)


ISO_DURATION_RE = re.compile(
    r"^P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)


def iso_duration_seconds(value: object) -> float | None:
    """An ISO 8601 duration ("PT3M49S", "P1DT2H") in seconds; else None."""
    if not isinstance(value, str):
        return None
    match = ISO_DURATION_RE.match(value.strip())
    if not match or value.strip() in ("P", "PT"):
        return None
    d, h, m, s = (float(match.group(k) or 0) for k in ("d", "h", "m", "s"))
    return d * 86400 + h * 3600 + m * 60 + s


def same_duration(claimed: Duration, seconds: float) -> bool:
    """The claim's length of time states `seconds`: equal to a reading's precision, cut or
    rounded ("3:49" for 229.965 s, as players show it, or for 229.4 s)."""
    for value, precision in claimed.readings:
        units = seconds / precision
        if value / precision in (float(int(units)), float(round(units))):
            return True
    return False


# digits written in groups: "649 1278 2769", "4242-4242", "+1 415 555 0100"
DIGIT_GROUPS_RE = re.compile(r"(?<![\w.,+-])\+?\d+(?:[ .-]\d{2,}){1,5}(?![\w]|[.,-]\d)")
GROUPED_MIN_DIGITS = 6


def digit_groups(text: str) -> list[tuple[str, int, int]]:
    """(the digits joined, start, end) of each run of digit groups a text writes with spaces,
    dashes or dots between them, at least GROUPED_MIN_DIGITS digits in all."""
    found = []
    for match in DIGIT_GROUPS_RE.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= GROUPED_MIN_DIGITS:
            found.append((digits, match.start(), match.end()))
    return found


# an IPv4 address or network ("203.45.86.0/24"), or an IPv6 one with its colons
NETWORK_RE = re.compile(
    r"(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{0,4}){2,7})"
    r"(?:/\d{1,3})?(?![\w:]|\.\d)"
)


@functools.lru_cache(maxsize=16384, typed=True)  # a result's leaves, read for each claim
def network_of(value: object) -> str | None:
    """An IP address or network as one normal writing ("203.45.86.0/24", "10.0.0.1",
    "2001:db8::/32"); else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        if "/" in text:
            return str(ipaddress.ip_network(text, strict=False))
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def networks(text: str) -> list[tuple[str, int, int]]:
    """(normal writing, start, end) of each IP address or network a text writes."""
    found = []
    for match in NETWORK_RE.finditer(text):
        normal = network_of(match.group(0))
        if normal is not None:
            found.append((normal, match.start(), match.end()))
    return found


# ---------------------------------------------------------------- dates and times

TZ_OFFSETS = {
    "utc": 0,
    "gmt": 0,
    "z": 0,
    "est": -5,
    "edt": -4,
    "cst": -6,
    "cdt": -5,
    "mst": -7,
    "mdt": -6,
    "pst": -8,
    "pdt": -7,
    "cet": 1,
    "cest": 2,
    "bst": 1,
    "ist": 5.5,
    "jst": 9,
    "aest": 10,
    "aedt": 11,
}
_TZ = r"(?:\s?(?P<tz>UTC|GMT|Z|[ECMP][SD]T|CES?T|BST|IST|JST|AES?DT|AEST|[+-]\d{2}:?\d{2}))?"
TIME_RE = re.compile(
    r"(?<![\w:.])(?:T)?(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d))?(?::(?P<s>[0-5]\d)(?:\.\d+)?)?"
    r"(?:\s?(?P<ampm>[ap]\.?m\.?)(?![a-z]))?" + _TZ + r"(?![\w])",
    re.IGNORECASE,
)
NUMERIC_DATE_RE = re.compile(
    r"(?<![\w/.-])(?P<a>\d{1,4})(?P<sep>[/.-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{2,4})"
    r"(?![\w/-]|[.:]\d)"  # a full stop after the year ends the sentence, not the date
)
# Month names as the calendars of the languages people write requests in name them
# (English, Spanish, French, German, Italian, Portuguese, Dutch), folded (no accents)
_MONTH_NAMES = (
    "january jan enero janvier janv januar janner jaenner gennaio janeiro januari",
    "february feb febrero fevrier fevr februar febbraio fevereiro februari",
    "march mar marzo mars marz maerz marco maart",
    "april apr abril avril aprile",
    "may mayo mai maggio maio mei",
    "june jun junio juin juni giugno junho",
    "july jul julio juillet juil juli luglio julho",
    "august aug agosto aout augustus",
    "september sep sept septiembre setiembre septembre settembre setembro",
    "october oct octubre octobre oktober okt ottobre outubro",
    "november nov noviembre novembre novembro",
    "december dec diciembre dic decembre dezember dez dicembre dezembro",
)
MONTHS = {name: n for n, names in enumerate(_MONTH_NAMES, start=1) for name in names.split()}
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
# after a bare number, "may" and "mar" are more often a verb or a word than a month ("2 may")
_MONTH_AFTER_DAY = (
    "(" + "|".join(sorted(set(MONTHS) - {"may", "mar"}, key=len, reverse=True)) + r")\.?"
)
# a day's ordinal or the words between day, month and year: "1st", "1er", "2.", "1º",
# "12 de septiembre de 2027", "the 3rd of May"
_DAY = r"(\d{1,2})(?:st|nd|rd|th|er|\.|º|°)?"
DATE_PATTERNS = (
    (
        re.compile(
            rf"\b{_DAY}\s+(?:de\s+|of\s+)?{_MONTH}(?:,\s*|\s+)(?:de\s+|del\s+)?(\d{{4}})\b", re.I
        ),
        ("d", "m", "y"),
    ),
    (
        re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I),
        ("m", "d", "y"),
    ),
    (re.compile(rf"\b{_MONTH},?\s+(?:de\s+)?(\d{{4}})\b", re.I), ("m", "y")),
    # a day of a month with no year ("Friday, August 21", "jueves 18 de marzo"): any year's
    (re.compile(rf"\b{_DAY}\s+(?:de\s+|of\s+)?{_MONTH_AFTER_DAY}(?!\w)", re.I), ("d", "m")),
    (re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?(?![\w:.,]\d|\w)", re.I), ("m", "d")),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), ("y", "mn", "d")),
    # a month of a year in digits: "04-2022", "04/2022", "2022-04"
    (re.compile(r"(?<![\w/.-])(0?[1-9]|1[0-2])[-/](\d{4})(?![\w/-]|[.]\d)"), ("mn", "y")),
    (re.compile(r"(?<![\w/.-])(\d{4})-(0[1-9]|1[0-2])(?![\w/-]|[.]\d)"), ("y", "mn")),
)
# Weekday names (Monday first, as `datetime.weekday` counts) by language, folded: the one table
# the agent-run check reads (a date written after one must fall on that day; the run's clock
# resolves "am Freitag"; provenance calls "lundi" relative)
WEEKDAY_NAMES = {
    "en": "monday tuesday wednesday thursday friday saturday sunday",
    "es": "lunes martes miercoles jueves viernes sabado domingo",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonntag",
    "it": "lunedi martedi mercoledi giovedi venerdi sabato domenica",
    "pt": "segunda terca quarta quinta sexta sabado domingo",
    "nl": "maandag dinsdag woensdag donderdag vrijdag zaterdag zondag",
}
# abbreviations and other names, read before a date only (a "Sat" or "Mon" alone dates nothing)
WEEKDAY_OTHER_NAMES = ("mon", "tue tues", "wed", "thu thurs", "fri", "sat sonnabend", "sun")


def weekday_names(languages: tuple[str, ...] | None = None, other: bool = False) -> dict[str, int]:
    """Folded weekday name -> its number (Monday 0), in `languages` (all when None), with the
    abbreviations and other names when `other`."""
    rows = [WEEKDAY_NAMES[code] for code in languages or WEEKDAY_NAMES]
    found = {name: n for row in rows for n, name in enumerate(row.split())}
    if other:
        found |= {name: n for n, names in enumerate(WEEKDAY_OTHER_NAMES) for name in names.split()}
    return found


WEEKDAYS = weekday_names(other=True)
# "Friday, ", "el jueves ", "quarta-feira, ", "am Freitag, den ": what stands before a date
WEEKDAY_BEFORE_RE = re.compile(
    r"\b(?P<day>" + "|".join(sorted(WEEKDAYS, key=len, reverse=True)) + r")\.?"
    r"(?:-feira)?,?\s+(?:the\s+|den\s+|le\s+|el\s+|il\s+|o\s+|dia\s+)?$",
    re.IGNORECASE,
)
# clock times written with "h" or "Uhr" ("19h", "20h30", "17 h 15", "20 Uhr", "20.30 Uhr"); a
# bare "19h" only after a word that introduces a time ("à 19h"): "2 h" alone is a duration
H_TIME_RE = re.compile(
    r"(?<![\w:.,])(?P<h>[01]?\d|2[0-3])(?:\s?h\s?(?P<m>[0-5]\d)|[.:](?P<m2>[0-5]\d)\s?uhr|"
    r"\s?uhr)(?!\w)"
    r"|\b(?:à|at|um|vers|dès|las|les|alle|ore|om|kl|ab|bis|gegen)\s(?P<h2>[01]?\d|2[0-3])\s?h(?!\w)",
    re.IGNORECASE,
)
ISO_DATETIME_RE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2}|\s?(?:UTC|GMT)\b)?(?![\w])"  # "2027-04-07 16:30:00 UTC" as well
)
MONTH_DOT_RE = re.compile(
    r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|"
    r"june|july|august|september|october|november|december)\.(?=\d)",
    re.IGNORECASE,
)
NOON_RE = re.compile(r"\b(noon|midday|midnight)\b", re.IGNORECASE)
# what joins a date to its time: "November 1, 2023 at 8pm", "1 Nov 2023, 20:00", "am 1.11. um"
CONNECTOR_RE = re.compile(
    r"[\s,]*(?:at|@|um|à|a las|a la|às|alle ore|alle|om|kl\.?|T)?[\s,]*", re.IGNORECASE
)


@dataclass(frozen=True)
class Moment:
    """A date and/or time as written: `date` 'YYYY-MM-DD' or 'YYYY-MM' (None: a time alone),
    `time` 'HH:MM' (None: a date alone), `offset` in hours when a zone was written."""

    date: str | None
    time: str | None
    offset: float | None
    start: int
    end: int
    weekday: int | None = None  # the day of the week written before the date (Monday 0)
    lead: int = 0  # how many characters before `start` name that weekday ("Friday, ")

    def at(self, offset: float | None) -> Moment:
        """The same instant in another zone (unchanged when either zone is unknown)."""
        if offset is None or self.offset is None or self.time is None or offset == self.offset:
            return self
        day = self.date if self.date and len(self.date) == 10 else "2000-01-01"
        when = datetime.fromisoformat(f"{day}T{self.time}") + timedelta(hours=offset - self.offset)
        date = when.date().isoformat() if self.date and len(self.date) == 10 else self.date
        return Moment(
            date, when.strftime("%H:%M"), offset, self.start, self.end, self.weekday, self.lead
        )


def _offset(raw: str | None) -> float | None:
    if not raw:
        return None
    word = raw.lower()
    if word in TZ_OFFSETS:
        return float(TZ_OFFSETS[word])
    sign = -1 if word.startswith("-") else 1
    digits = re.sub(r"\D", "", word)
    return sign * (int(digits[:2]) + int(digits[2:4] or 0) / 60)


def _clock(match: re.Match) -> str | None:
    hour = int(match.group("h"))
    minute = int(match.group("m") or 0)
    ampm = (match.group("ampm") or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    elif match.group("m") is None:
        return None  # a bare number is not a time
    return f"{hour:02d}:{minute:02d}"


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with each span written as spaces: its other offsets kept."""
    return _blank(text, spans)


def _numeric_date(match: re.Match, both_orders: bool = False) -> list[str]:
    """'2023-11-01', '11/01/2023' (US order, unless the first part cannot be a month) or
    '01.11.2023' (day first, as dots are written) as 'YYYY-MM-DD'; with `both_orders` a slashed
    date that reads either way gives both."""
    a, b, c, sep = match.group("a"), match.group("b"), match.group("c"), match.group("sep")
    if len(a) == 4:
        orders = [(int(a), int(b), int(c))]
    elif len(c) in (2, 4):
        year = int(c) if len(c) == 4 else 2000 + int(c)
        first, second = int(a), int(b)
        day_first = sep == "." or first > 12
        orders = [(year, second, first) if day_first else (year, first, second)]
        if both_orders and not day_first and second <= 12 and first != second:
            orders.append((year, second, first))
    else:
        return []
    found = []
    for year, month, day in orders:
        try:
            found.append(datetime(year, month, day).date().isoformat())
        except ValueError:
            continue
    return found


def fold_keeping_length(text: str) -> str:
    """`fold` character by character where that keeps each character one character: the
    offsets of the folded text are those of the original."""
    out = []
    for char in text:
        folded = fold(char)
        out.append(folded if len(folded) == 1 else char.lower() if len(char.lower()) == 1 else char)
    return "".join(out)


def moments(text: str, both_orders: bool = False) -> list[Moment]:
    """The dates and times written in a text, in order: ISO date-times, dates in words or
    digits, clock times (with am/pm or minutes, and a zone when written), noon/midnight. A
    date followed within a few words by a time ("November 1, 2023 at 8pm") is one moment.
    `both_orders`: a numeric date whose day and month could be either ("04/08/2026": 8 April
    as most of the world reads it, 4 August as the US does) is two moments at one place."""
    found: list[Moment] = []
    taken: list[tuple[int, int]] = []
    text = MONTH_DOT_RE.sub(lambda m: m.group(1) + " ", text)  # "March.11" as "March 11"
    for match in ISO_DATETIME_RE.finditer(text):
        written = re.sub(r"\s?(?:UTC|GMT)$", "Z", match.group(0))
        try:
            when = dateutil_parser.isoparse(written.replace(" ", "T"))
        except ValueError:
            continue
        offset = when.utcoffset().total_seconds() / 3600 if when.tzinfo else None
        found.append(
            Moment(
                when.date().isoformat(),
                when.strftime("%H:%M"),
                offset,
                match.start(),
                match.end(),
            )
        )
        taken.append(match.span())
    rest = _blank(text, taken)
    dates: list[tuple[str, int, int]] = []
    weekdays: dict[int, tuple[int, int]] = {}  # a date's start -> its weekday, the words' length
    folded = fold_keeping_length(rest)  # "März", "août" as the month table holds them
    for pattern, order in DATE_PATTERNS:
        for match in pattern.finditer(folded):
            parts = dict(zip(order, match.groups(), strict=True))
            month = int(parts["mn"]) if "mn" in parts else MONTHS[parts["m"].lower()]
            # a date with no year is "--MM-DD" (ISO 8601's form): it matches that day of any year
            year = int(parts["y"]) if "y" in parts else 2000  # a leap year: 29 February is a day
            iso = f"{year:04d}-{month:02d}"
            if "d" in parts:
                try:
                    iso = datetime(year, month, int(parts["d"])).date().isoformat()
                except ValueError:
                    continue
            if "y" not in parts:
                iso = "-" + iso[4:]
            start = match.start()
            before = WEEKDAY_BEFORE_RE.search(folded[max(0, start - 24) : start])
            if before and "d" in parts:
                weekdays[start] = (WEEKDAYS[before.group("day").lower()], len(before.group(0)))
            dates.append((iso, start, match.end()))
        folded = _blank(folded, [(m.start(), m.end()) for m in pattern.finditer(folded)])
    rest = _blank(rest, [(s, e) for _, s, e in dates])
    for match in NUMERIC_DATE_RE.finditer(rest):
        for iso in _numeric_date(match, both_orders):
            dates.append((iso, match.start(), match.end()))
    rest = _blank(rest, [(s, e) for _, s, e in dates])
    times: list[tuple[str, float | None, int, int]] = []
    for match in H_TIME_RE.finditer(rest):
        hour = match.group("h") or match.group("h2")
        minute = match.group("m") or match.group("m2") or "00"
        start = match.start("h") if match.group("h") else match.start("h2")
        times.append((f"{int(hour):02d}:{minute}", None, start, match.end()))
    rest = _blank(rest, [(s, e) for _, _, s, e in times])
    for match in TIME_RE.finditer(rest):
        clock = _clock(match)
        if clock:
            times.append((clock, _offset(match.group("tz")), match.start(), match.end()))
    for match in NOON_RE.finditer(rest):
        clock = "00:00" if match.group(1).lower() == "midnight" else "12:00"
        times.append((clock, None, match.start(), match.end()))
    used: dict[int, int] = {}  # a time -> the start of its date (two readings share it)
    for iso, start, end in sorted(dates, key=lambda d: d[1]):
        pair = next(
            (
                (i, t)
                for i, t in enumerate(times)
                if used.get(i, start) == start
                and 0 <= t[2] - end <= 12
                and CONNECTOR_RE.fullmatch(text[end : t[2]])
            ),
            None,
        )
        if pair:
            i, (clock, offset, _, tend) = pair
            used[i] = start
            found.append(Moment(iso, clock, offset, start, tend, *weekdays.get(start, (None, 0))))
        else:
            found.append(Moment(iso, None, None, start, end, *weekdays.get(start, (None, 0))))
    for i, (clock, offset, start, end) in enumerate(times):
        if i not in used:
            found.append(Moment(None, clock, offset, start, end))
    return sorted(found, key=lambda m: m.start)


@functools.lru_cache(maxsize=16384, typed=True)
def moment_of(value: object) -> Moment | None:
    """A JSON leaf or argument that is one date or time as a whole ('2023-11-01T20:00:00Z',
    'November 1, 2023', '20:00'); else None."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 60:
        return None
    found = moments(text)
    # its weekday before it, as mail headers write a date ("Thu, 4 Feb 2027 18:05:00 +0000")
    if len(found) == 1 and found[0].start - found[0].lead <= 1 and len(text) - found[0].end <= 1:
        return found[0]
    return None


def same_moment(claimed: Moment, known: Moment) -> bool:
    """What the claim writes of a moment agrees with a known one: the same date (or month),
    and the same clock time, in the claim's zone when both name one."""
    other = known.at(claimed.offset) if claimed.offset is not None else known
    if claimed.date is not None and not _same_day(claimed, other.date):
        return False
    if claimed.time is not None and claimed.time != other.time:
        return False
    return claimed.date is not None or claimed.time is not None


# ---------------------------------------------------------------- states, in other words

# The states a record is in, as APIs name them, and how an answer says them in English, Spanish,
# German and French (folded: lower case, no accents). One state is one row; a leaf whose value
# folds to a word of a row is said by any word of that row.
_STATES = (
    "open|opened|abierto|abierta|abierta|offen|geoffnet|ouvert|ouverte",
    "closed|cerrado|cerrada|geschlossen|ferme|fermee",
    "done|completed|complete|finished|hecho|hecha|completado|completada|terminado|terminada|"
    "erledigt|abgeschlossen|fertig|termine|terminee",
    "pending|awaiting|pendiente|ausstehend|offen|en attente",
    "active|running|activo|activa|en ejecucion|aktiv|lauft|actif|active|en cours d'execution",
    "inactive|stopped|inactivo|inactiva|detenido|detenida|inaktiv|gestoppt|inactif|arrete",
    "paid|pagado|pagada|bezahlt|paye|payee",
    "unpaid|impagado|impagada|pendiente de pago|unbezahlt|offen|impaye|impayee",
    "succeeded|success|successful|exitoso|exitosa|completado|realizado|erfolgreich|reussi|reussie",
    "failed|failure|fallido|fallida|fehlgeschlagen|echoue|echouee",
    "cancelled|canceled|cancelado|cancelada|storniert|abgesagt|annule|annulee",
    "confirmed|confirmado|confirmada|bestatigt|confirme|confirmee",
    "in progress|in_progress|en curso|en progreso|in bearbeitung|en cours",
    "scheduled|programado|programada|geplant|planifie|planifiee|prevu|prevue",
    "shipped|enviado|enviada|versandt|verschickt|expedie|expediee",
    "delivered|entregado|entregada|zugestellt|geliefert|livre|livree",
    "approved|aprobado|aprobada|genehmigt|approuve|approuvee",
    "rejected|declined|rechazado|rechazada|abgelehnt|rejete|rejetee|refuse|refusee",
    "qualified|calificado|calificada|qualifiziert|qualifie|qualifiee",
    "unqualified|no calificado|no calificada|nicht qualifiziert|non qualifie|non qualifiee",
    "restarted|reiniciado|reiniciada|neu gestartet|redemarre|redemarree",
    "available|disponible|verfugbar",
    "daily|every day|each day|diario|diaria|a diario|cada dia|todos los dias|taglich|jeden tag|"
    "quotidien|quotidienne|tous les jours|chaque jour|ogni giorno|giornaliero|todos os dias",
    "weekly|every week|each week|semanal|cada semana|wochentlich|jede woche|hebdomadaire|"
    "chaque semaine|toutes les semaines|settimanale|ogni settimana",
    "monthly|every month|each month|mensual|cada mes|monatlich|jeden monat|mensuel|mensuelle|"
    "chaque mois|tous les mois|mensile|ogni mese",
)
# States that exclude each other (the first word of each row): a record said to be in one while
# its leaf holds the other is contradicted. Other states may hold together ("scheduled" and
# "confirmed", "done" and "paid").
_OPPOSITES = (
    ("open", "closed"),
    ("paid", "unpaid"),
    ("succeeded", "failed"),
    ("active", "inactive"),
    ("confirmed", "cancelled"),
    ("approved", "rejected"),
    ("qualified", "unqualified"),
)
STATE_WORDS: dict[str, frozenset[str]] = {}
for _row in _STATES:
    _words = frozenset(_row.split("|"))
    for _word in _words:
        STATE_WORDS[_word] = STATE_WORDS.get(_word, frozenset()) | _words


_ROWS = {row.split("|")[0]: frozenset(row.split("|")) for row in _STATES}
OPPOSITE_WORDS: dict[str, frozenset[str]] = {}
for _a, _b in _OPPOSITES:
    for _word in _ROWS[_a]:
        OPPOSITE_WORDS[_word] = OPPOSITE_WORDS.get(_word, frozenset()) | _ROWS[_b]
    for _word in _ROWS[_b]:
        OPPOSITE_WORDS[_word] = OPPOSITE_WORDS.get(_word, frozenset()) | _ROWS[_a]


def state_spans(value: object, text: str) -> list[tuple[int, int]]:
    """Where `text` says the state `value` holds ("abierto" for "open", "réussi" for
    "succeeded"), in any of the languages of STATE_WORDS; [] for a value that is no state."""
    return _spans_of(STATE_WORDS, value, text)


def opposite_state_spans(value: object, text: str) -> list[tuple[int, int]]:
    """Where `text` says a state that excludes the state `value` holds ("cerrado" for
    "open"); [] for a value with no opposite."""
    return _spans_of(OPPOSITE_WORDS, value, text)


# an enum member written as one token: "AWAITING_DROP_OFF", "pending_review" (not a title)
ENUM_VALUE_RE = re.compile(r"[A-Z]+(?:[_-][A-Z]+){1,3}|[a-z]+(?:[_-][a-z]+){1,3}")


def _spans_of(table: dict[str, frozenset[str]], value: object, text: str) -> list[tuple[int, int]]:
    if not isinstance(value, str):
        return []
    said = table.get(fold(value).replace("_", " ").strip())
    if not said and table is STATE_WORDS and ENUM_VALUE_RE.fullmatch(value):
        # an enum member of several words ("AWAITING_DROP_OFF"): its state word, "awaiting"
        words = re.findall(r"[a-z]+", fold(value))
        said = frozenset().union(*(table.get(w, frozenset()) for w in words)) if words else None
    if not said:
        return []
    folded = fold_keeping_length(text)
    found = []
    for word in sorted(said, key=len, reverse=True):
        pattern = r"(?<![\w])" + r"[\s_-]+".join(map(re.escape, word.split())) + r"(?![\w])"
        for match in re.finditer(pattern, folded):
            if not any(s <= match.start() < e for s, e in found):
                found.append(match.span())
    return sorted(found)


def _same_day(claimed: Moment, known: str | None) -> bool:
    """The claimed date (or month, or "--MM-DD": a day of any year) is the known one's, and the
    weekday written before it, if any, is the known date's."""
    if known is None or claimed.date is None:
        return False
    if claimed.date.startswith("--"):
        if known.startswith("--") or len(known) != 10 or known[4:] != claimed.date[1:]:
            return known == claimed.date and claimed.weekday is None
    elif not known.startswith(claimed.date):
        return False
    if claimed.weekday is not None:
        return len(known) == 10 and datetime.fromisoformat(known).weekday() == claimed.weekday
    return True
