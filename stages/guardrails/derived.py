"""Figures a claim derives from its evidence: a sum or difference, a percentage of
two figures, a unit or temperature conversion, a rounding, a figure after "about", a small count
written as a word, a date a timeline writes in two places. The `figures` check passes such a
figure to the judge instead of failing it: it cannot prove the derivation wrong, only that the
figure is not written in the evidence. `numeric`: the words that count as a figure before a noun
(number, ordinal and count words)."""

from __future__ import annotations

import re

from stages.common.text import MONTHS, NUMBER_RE, canonical_number, dates_in, stem, words

APPROX_RE = re.compile(
    r"(?i)(?:\b(?:about|approximately|approx\.?|around|roughly|nearly|almost|over|more than|"
    r"less than|under|up to|some|close to|estimated|an estimated)|~)\s*[€$£]?\s*$"
)
# Unit factors a figure may be converted by (km/mi, kg/lb, m/ft, cm/in, l/gal, yd/m, g/oz, and
# the decimal and time steps): a converted figure is derived, so the judge decides it.
CONVERSIONS = (1.609344, 2.20462, 3.28084, 2.54, 3.78541, 1.0936, 28.3495, 60)
UNIT_RE = re.compile(
    r"(?i)°|\b(?:degrees?|celsius|fahrenheit|km|kilomet(?:er|re)s?|miles?|kg|kilograms?|"
    r"pounds?|lbs?|grams?|ounces?|oz|feet|foot|ft|met(?:er|re)s?|cm|centimet(?:er|re)s?|"
    r"inch(?:es)?|yards?|yd|lit(?:er|re)s?|gallons?|gal|ml|hours?|hrs?|minutes?|mins?|"
    r"seconds?|days?|weeks?|months?|years?|mph|kph|km/h)\b"
)
FUNCTION_WORDS = frozenset(
    ("of", "the", "a", "an", "and", "or", "in", "on", "to", "for", "with", "by")
)
SMALL_COUNTS = {
    w: n
    for n, w in enumerate(
        ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"], 2
    )
}


def _float(value: str) -> float | None:
    try:
        return float(value.rstrip("%").replace(",", ""))
    except ValueError:
        return None


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-9)


def _counted(number: float, claim: str, spans_text: str, numeric: frozenset[str]) -> bool:
    """ "two types" written as a word where the spans put no figure before "types": the items
    the evidence lists, counted. "three founders" where they say "two founders" or "both
    founders" is a changed figure."""
    lowered = claim.lower()
    for word, n in SMALL_COUNTS.items():
        found = re.search(rf"\b{word}\s+([a-z-]+)(?:\s+([a-z-]+))?", lowered)
        if n != number or not found:
            continue
        # "two types", "two main types"; not "of" in "two types of amino acids"
        nouns = {stem(w) for w in found.groups() if w and w not in FUNCTION_WORDS}
        tokens = words(spans_text)
        before = [tokens[i - 1] for i, t in enumerate(tokens) if i and stem(t) in nouns]
        return not any(t.isdigit() or t in numeric for t in before)
    return False


def _timeline_date(value: str, spans_text: str) -> bool:
    """A full date the spans write in two places, as a timeline does ("1765 ... Nov. 1: the
    Stamp Act goes into effect"): its day and month with no year after them, and its year on its
    own. Not when the spans give that day and month another year."""
    found = re.fullmatch(r"date:(\d{4})-(\d{2})-(\d{2})", value)
    if not found:
        return False
    year, month, day = found.group(1), int(found.group(2)), int(found.group(3))
    if any(d[5:] == value[10:] for d in dates_in(spans_text)):
        return False  # "November 1, 1766" in the spans: another year is a changed date
    names = "|".join(sorted((n for n, m in MONTHS.items() if m == month), key=len, reverse=True))
    no_year = r"(?![\w.]*,?\s*\d{4})"
    written = re.search(
        rf"(?i)\b(?:(?:{names})\.?\s+0?{day}(?:st|nd|rd|th)?\b{no_year}"
        rf"|0?{day}(?:st|nd|rd|th)?\s+(?:{names})\b\.?{no_year})",
        spans_text,
    )
    return bool(written) and re.search(rf"(?<!\d){year}(?!\d)", spans_text) is not None


def derivable(
    value: str,
    claim: str,
    held: set[str],
    spans_text: str = "",
    numeric: frozenset[str] = frozenset(),
) -> bool:
    """A figure the spans do not hold but that follows from theirs: a sum or
    difference of two, a ratio as a percentage, a unit or temperature conversion, a rounding
    (or any figure within 15 % after "about"/"over"/"nearly"), the same value with other
    trailing zeros ("92.30" for "92.3"; so a version "3.1" for "3.10" is the judge's to catch),
    a small count written as a word ("two types": the items counted), a date a timeline writes
    as a day and month under its year (`_timeline_date`). Other dates and years are never
    derived."""
    if value.startswith("date:"):
        return _timeline_date(value, spans_text)
    number = _float(value)
    if number is None:
        return False
    if number.is_integer() and 1000 <= number <= 2100 and "%" not in value:
        return False  # a year: a different one is another fact
    if 2 <= number <= 10 and _counted(number, claim, spans_text, numeric):
        return True
    known = sorted({f for v in held if (f := _float(v)) is not None and not v.startswith("date")})
    known = known[:40]
    approx = any(
        APPROX_RE.search(claim[: m.start()])
        for m in NUMBER_RE.finditer(claim)
        if _float(canonical_number(m.group(0))) == number
    )
    # "92.30" for the spans' "92.3": the same value, other trailing zeros (a dropped "%" is not)
    if any(
        _float(v) == number and ("%" in v) == ("%" in value)
        for v in held
        if not v.startswith("date")
    ):
        return True
    for a in known:
        if _close(a, number, 0.15 if approx else 0.05) and (approx or _rounder(number, a)):
            return True
        # a conversion needs a unit: "12 million copies" from "11 million" is no conversion
        converted = any(_close(a * f, number, 0.02) or _close(a / f, number, 0.02)
                        for f in CONVERSIONS)  # fmt: skip
        converted |= abs((a - 32) * 5 / 9 - number) <= 1 or abs(a * 9 / 5 + 32 - number) <= 1
        if converted and a >= 2 and UNIT_RE.search(claim):
            return True
        for b in known:
            if b <= a or a < 2:  # each pair once, of two real figures ("1" is often a word)
                continue
            if abs(a + b - number) < 1e-6 or abs(b - a - number) < 1e-6:
                return True
            if "%" in value and abs(a / b * 100 - number) <= 0.5:
                return True
    return False


def _rounder(value: float, exact: float) -> bool:
    """`value` is `exact` rounded: it has fewer significant digits."""

    def digits(x: float) -> int:
        return len(f"{x:.6g}".replace(".", "").replace("-", "").strip("0"))

    return digits(value) < digits(exact)
