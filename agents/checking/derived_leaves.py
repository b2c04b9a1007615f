"""Leaf values written the way answers write them: a result's instant in the user's zone, its
lengths of time on a clock's face, and the total of one field over a list's items.

- An instant (a Unix time, or a date-time with a zone: "2027-04-07T16:30:00Z") is what the answer
  restates in the run's zone (from the system prompt, via `run_clock`) or in a zone the answer
  names ("10:30 (America/Mexico_City)"): `zoned` gives each leaf its moments in those zones.
- A length of time (`duration_ms: 229965`, `length_seconds`, "PT3M49S") is what "3:49" or "3 min
  49 s" states: `seconds_of`.
- A total ("3 files, about 16.0 MB in total") is the sum of one numeric field over every item of
  a list, in the units the answer writes (bytes as kB/MB/GB in both bases): `totals` gives derived
  leaves (like a list's count, they alone prove nothing) that name the pointers summed, and
  `says_total` reads whether a claim's number is said to be a total.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import agents.checking.run_clock as run_clock
from stages.common import values

# ---------------------------------------------------------------- instants in a zone

# keys of a number that is no instant, though its digits would read as one
_NOT_TIME = "id ids number no phone count total size amount reference ref code tracking account zip"
ID_WORDS = frozenset(_NOT_TIME.split())


def instant_of(leaf: Any) -> datetime | None:
    """A leaf's value as an instant (UTC): a Unix time (not under an identifier's key), or a
    date-time that states its zone."""
    value = leaf.value
    if isinstance(value, int | str) and not isinstance(value, bool):
        if set(values.key_words(leaf.key)) & ID_WORDS:
            return None
        moment = run_clock.epoch_moment(value, None)  # in UTC
        if moment is not None:
            return datetime.fromisoformat(f"{moment.date}T{moment.time}+00:00")
    moment = values.moment_of(value)
    if moment is None or moment.offset is None or not moment.time or not moment.date:
        return None
    if len(moment.date) != 10:
        return None
    local = datetime.fromisoformat(f"{moment.date}T{moment.time}")
    return local.replace(tzinfo=UTC) - timedelta(hours=moment.offset)


def moment_in(when: datetime, zone: ZoneInfo) -> values.Moment:
    """An instant as a moment on the clocks of `zone` (with that zone's offset then)."""
    local = when.astimezone(zone)
    delta = local.utcoffset()
    offset = delta.total_seconds() / 3600 if delta is not None else 0.0
    return values.Moment(local.date().isoformat(), local.strftime("%H:%M"), offset, 0, 0)


def zones_of(texts: list[str], answer: str | None) -> list[ZoneInfo]:
    """The run's zone (the first a system or user turn names, as `run_clock` reads it) and the
    zones the answer names ("(America/Mexico_City)")."""
    clock = run_clock.clock_of(texts)
    found = [clock.zone] if clock and clock.zone else []
    for name in run_clock.ZONE_RE.findall(answer or ""):
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        if all(str(z.key) != str(zone.key) for z in found):
            found.append(zone)
    return found


def zoned(found: list[Any], zones: list[ZoneInfo]) -> list[Any]:
    """Each leaf that is an instant, with its moments in `zones` (`local`): what "8:30 PM" or
    "Sonntag, 8. November, 8:15" restates in the user's zone."""
    if not zones:
        return found
    out = []
    for leaf in found:
        when = None if leaf.derived else instant_of(leaf)
        if when is None:
            out.append(leaf)
        else:
            local = tuple(moment_in(when, zone) for zone in zones)
            out.append(dataclasses.replace(leaf, local=local))
    return out


# ---------------------------------------------------------------- a resource's name in its link

URL_RE = re.compile(r"^https?://[^\s/]+/\S*?([^/?#\s]+)/?(?:[?#]\S*)?$")
TAIL_MIN_CHARS = 6


def url_tails(found: list[Any]) -> list[Any]:
    """The last path segment of each link a result holds (".../firewalls/allow-tcp-22-203-0"),
    as a leaf of its own at the link's pointer: the name of the resource the link points to."""
    out = []
    for leaf in found:
        if leaf.derived or not isinstance(leaf.value, str):
            continue
        match = URL_RE.match(leaf.value.strip())
        if match and len(match.group(1)) >= TAIL_MIN_CHARS and not match.group(1).isdigit():
            out.append(dataclasses.replace(leaf, value=match.group(1)))
    return out


# ---------------------------------------------------------------- lengths of time

DURATION_KEYS = frozenset({"duration", "length", "runtime", "elapsed", "playtime"})
# a key word that says the unit of its length of time, in seconds
KEY_UNITS = {
    "ms": 0.001,
    "millis": 0.001,
    "milliseconds": 0.001,
    "msec": 0.001,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "seconds": 1.0,
    "min": 60.0,
    "mins": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hours": 3600.0,
}


def seconds_of(leaf: Any) -> list[float]:
    """A length-of-time leaf in seconds: its key says it (`duration_ms`, `length_seconds`,
    `duration`), in the unit its key names (seconds or minutes when it names none), or an ISO
    8601 duration ("PT3M49S"); [] for any other leaf."""
    if leaf.derived or isinstance(leaf.value, bool):
        return []
    iso = values.iso_duration_seconds(leaf.value)
    if iso is not None:
        return [iso]
    words = values.key_words(leaf.key)
    if not set(words) & DURATION_KEYS and not (
        "seconds" in words or "milliseconds" in words or "ms" in words[-1:]
    ):
        return []
    if not isinstance(leaf.value, int | float):
        return []
    units = [KEY_UNITS[w] for w in words if w in KEY_UNITS]
    return [leaf.value * u for u in (units[:1] or [1.0, 60.0])]


# ---------------------------------------------------------------- totals over a list

BYTE_KEYS = frozenset({"size", "bytes", "filesize", "length"})
BYTE_UNITS = (("kb", 1), ("mb", 2), ("gb", 3), ("tb", 4))
MAX_NAMED = 4  # pointers named in a total's report before "…"
_SEGMENT_INDEX = re.compile(r"^\d+$")


def totals(found: list[Any]) -> list[Any]:
    """The sum of one numeric field over every item of a list (at least two), as derived
    leaves: bytes also in kB, MB, GB and TB (1000 and 1024 bases)."""
    groups: dict[tuple, list[Any]] = {}
    counts: dict[tuple, int] = {}
    for leaf in found:
        if leaf.derived:
            if isinstance(leaf.value, int) and leaf.key != "duration":
                counts[(leaf.tool, leaf.call_id, leaf.pointer)] = leaf.value
            continue
        if isinstance(leaf.value, bool) or not isinstance(leaf.value, int | float):
            continue
        parts = leaf.pointer.split("/")
        index = max((i for i, p in enumerate(parts) if _SEGMENT_INDEX.match(p)), default=None)
        if index is None:
            continue
        base, rest = "/".join(parts[:index]), "/".join(parts[index + 1 :])
        groups.setdefault((leaf.tool, leaf.call_id, base, rest), []).append(leaf)
    out = []
    for (tool, call_id, base, rest), items in groups.items():
        if len(items) < 2 or counts.get((tool, call_id, base)) != len(items):
            continue  # every item of the list holds the field, once
        if set(values.key_words(items[0].key)) & {"id", "ids"}:
            continue
        total = sum(leaf.value for leaf in items)
        named = [leaf.pointer for leaf in items]
        shown = ", ".join(named[:MAX_NAMED]) + (", …" if len(named) > MAX_NAMED else "")
        pointer = f"{base}/*" + (f"/{rest}" if rest else "")
        sample = items[0]
        total_leaf = dataclasses.replace(
            sample, pointer=pointer, value=total, derived=True, via=f"sum of {shown}", local=()
        )
        out.append(total_leaf)
        if set(values.key_words(sample.key)) & BYTE_KEYS:
            for unit, power in BYTE_UNITS:
                for base_ in (1000, 1024):
                    out.append(
                        dataclasses.replace(total_leaf, value=total / base_**power, unit=unit)
                    )
    return out


_TOTAL_AFTER = (
    r"in total|in all|total|au total|en tout|insgesamt|zusammen|gesamt|en total|in totale|"
    r"no total|ao todo|combined|altogether|overall"
)
_TOTAL_BEFORE = (
    r"total|totaling|totalling|totale|insgesamt|zusammen|gesamt|en total|au total|in totale|"
    r"no total|sum|summe|somme|suma|soma"
)
_ROUGHLY = (
    r"about|around|approximately|roughly|some|environ|etwa|rund|ca\.?|circa|unos|unas|"
    r"aproximadamente|cerca de|quasi|of|de|di|von|du|des|da|do|is|sind|est|es|e|:|="
)
TOTAL_AFTER_RE = re.compile(rf"^\W{{0,3}}(?:{_TOTAL_AFTER})\b", re.IGNORECASE)
TOTAL_BEFORE_RE = re.compile(
    rf"\b(?:{_TOTAL_BEFORE})\b\W{{0,3}}(?:(?:{_ROUGHLY})\W{{0,2}}){{0,3}}$", re.IGNORECASE
)


def is_total(leaf: Any) -> bool:
    return bool(leaf.derived and leaf.via.startswith("sum of"))


def says_total(claim: str, start: int, end: int) -> bool:
    """The claim says the number at start:end is a total ("16.0 MB in total", "insgesamt etwa
    16 MB", "un total de 3 €")."""
    folded = values.fold_keeping_length(claim)
    return bool(
        TOTAL_AFTER_RE.search(folded[end : end + 16])
        or TOTAL_BEFORE_RE.search(folded[max(0, start - 40) : start])
    )
