"""Argument provenance by meaning: where each value of a tool call came from.

Every scalar of a call's arguments is traced, whatever its kind, to what the call could have
taken it from, in order: the tool's declaration (an `enum` or `default` of that argument), the
user's and system turns (each named by its turn), the results and calls before it. A value is
`grounded` when, normalised, it equals something there:

- a date or time by its meaning, in any common writing and language: "2023-11-01T20:00:00" by
  "November 1, 2023 at 8pm", "1. November 2023 um 20 Uhr" or "1er novembre 2023 à 20h"; a
  slashed date that reads either way ("05/03/2027") by both readings; a day's first and last
  minute by the day; an end by another argument's start plus a duration the user wrote ("at
  9:15, 40 minutes");
- a number in any writing and locale ("1,234.5", "1.234,50 €", "1.2 million", "$12"), an
  amount also in minor units ("€49" grounds 4900);
- an IPv4 address or CIDR by its octets (a host with or without /32);
- an enum member by its words in a message, in any of six languages (`enum_words`: its own
  words, its currency or unit symbol, a translation or synonym, a cognate), else by the
  declaration, unless the user's words name another member of that enum that no call chose
  (and not this one): then it is `changed`, naming the member, the words and the message;
- any other value by its words with separators and case dropped ("ThinQ_Connect" by "ThinQ
  Connect"); a value of several words with a number of its own (an address) by its digits
  exactly and its words by prefix ("123 Main St" by "123 Main Street"), each comma part in the
  same message ("Friedrichstraße 299, Berlin").

- a date or time the user wrote relative to the run's clock (the date and zone a run states:
  `run_clock`): "pasado mañana a las 10:30", "am Freitag", "Apr 22", "am 4.3. zwischen 9 und
  17 Uhr", in the zone's offset that day; a Unix time (seconds or milliseconds, an integer or
  a string) by the date and time it is in the run's zone or in UTC;
- an E.164 number by its digits as the user wrote them, with the country code of the run's
  zone added when the user left it out;
- a name the agent composed of the conversation's values ("allow-tcp-5432-10-0-0-0"), a word
  the tool's declaration holds, an integer enum member by the label its description gives
  ("1 = Urgent").

An argument the agent must make up (an idempotency key, a nonce, a request / batch / client
reference id: by its name or its description) holding a fresh value is `generated`: reported,
never flagged. Inside a query or formula (SQL, `field:value`, `IS_BEFORE({Due}, '…')`) the
dates and numbers are checked, not the whole string.

A value that is not grounded is `changed` when something there differs from it by one
character ("10.0.0.6" where the user wrote "10.0.0.5", "2023-11-02T20:00" for "November 1,
2023 at 8pm", one octet, one digit of an amount of three digits or more, or of two beside the
argument's name: "12 replicas"), else `invented` for the kinds a model must not make up (dates
and times, addresses, IPs, keys, identifiers, e-mails, URLs, a code inside a free text) and
`unverified` for the others (a number or text the model may have derived: reported, never
flagged). A date is `unverified` rather than invented when the conversation dates things
relatively ("tomorrow", "next Friday", "in 3 days", a date without its year), which cannot be
resolved without the run's clock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import agents.checking.enum_words as enum_words
import agents.checking.relative_dates as relative_dates
import agents.checking.run_clock as run_clock
from agents.checking.formats import AgentRun, ToolCall
from agents.checking.written_values import (
    composed_of,
    generated,
    random_case,
    unsourced_ids,
)
from stages.common import values

VERSION = "1.4.0"
FLAGGED = ("changed", "invented")
SOURCED = ("grounded", "generated")  # generated: a value the agent must make up (a nonce)
MIN_NEAR_CHARS = 3  # a code or key shorter than this is not traced by its spelling
# a number of fewer digits one digit away is arithmetic or a conversion as often as a copy error
# ("4" for "3 adults and 1 child", 70 for "5 ft 10 in"), unless written beside the argument's
# own name ("scale to 12 replicas" for `replicas`)
MIN_NEAR_DIGITS = 3
IP_RE = re.compile(
    r"^(?:\d{1,3}\.){3}\d{1,3}(?::\d+|/\d{1,2})?$|^[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:/\d{1,3})?$",
    re.I,
)
IPV4_IN_TEXT_RE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?:/\d{1,2})?(?![\w/]|\.\d)")
EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
URL_RE = re.compile(r"^(?:https?|ftp|s3|gs)://|^www\.", re.I)
# an argument written in a query or formula language (SQL, a search query's `field:value`, a
# filter expression): its literals are checked, not the whole string
CODE_LIKE_RE = re.compile(
    r"'[^']*'|\"[^\"]*\"|[<>]=?|!=|==|\b[A-Za-z_]\w*:(?!//)\S|\b[A-Za-z_]\w*\(|\{\w[^}]*\}"
)
# a date inside a longer string ("alb/2027/02/04/", "after:2026/06/21", "'2026-02-12'")
EMBEDDED_DATE_RE = re.compile(r"(?<![\d])(\d{4})([-/.])(\d{2})\2(\d{2})(?!\d)")
# an E.164 or local phone number as a whole value, and one written in a message
PHONE_VALUE_RE = re.compile(r"^\+?[\d\s().-]{7,22}$")
PHONE_IN_TEXT_RE = re.compile(r"(?<![\w.+])\+?\(?\d[\d\s().-]{5,20}\d(?![\w.]\d)")
CAPS_CODE_RE = re.compile(r"^(?=(?:[^A-Z]*[A-Z]){3})[A-Z0-9]+(?:[._-][A-Z0-9]+)*$")
KEY_RE = re.compile(r"^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w.:/-]{6,}$")


@dataclass
class Source:
    name: str  # "user turn 1", "result of get_order#call_1", "declared enum of get_order/fields"
    text: str


@dataclass
class Trace:
    pointer: str  # RFC 6901 pointer into the call's arguments
    value: Any
    kind: str  # date | time | datetime | number | ip | email | url | key | address | identifier
    # | boolean | text
    status: str  # grounded | changed | invented | unverified
    source: str | None = None  # the message (or declaration) the value came from
    near: str | None = None  # for `changed`: the value it differs from by one character
    words: str | None = None  # for an enum member: the words of the message that name it

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def error(self, tool: str) -> str:
        if self.status == "changed" and self.kind == "enum":
            return (
                f"changed enum value at '{self.pointer}': {self.value!r} where {self.source} "
                f"names {self.near!r} ({self.words!r}), another member of the tool's enum"
            )
        if self.status == "changed":
            return (
                f"changed value at '{self.pointer}': {self.value!r} differs by one character "
                f"from {self.near!r} in {self.source}"
            )
        return (
            f"invented {self.kind} at '{self.pointer}': {self.value!r} is not given by the "
            "user, an earlier tool result or the tool's declaration"
        )


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def flat_text(value: Any) -> str:
    """A value as text: a string as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def arg_leaves(args: Any, pointer: str = "") -> list[tuple[str, str, Any]]:
    """(pointer, key, value) of each scalar of the arguments."""
    found: list[tuple[str, str, Any]] = []
    if isinstance(args, dict):
        for key, value in args.items():
            child = f"{pointer}/{_escape(key)}"
            if isinstance(value, dict | list):
                found += arg_leaves(value, child)
            elif value is not None:
                found.append((child, str(key), value))
    elif isinstance(args, list):
        for index, value in enumerate(args):
            child = f"{pointer}/{index}"
            if isinstance(value, dict | list):
                found += arg_leaves(value, child)
            elif value is not None:
                found.append((child, pointer.rsplit("/", 1)[-1], value))
    return found


def kind_of(value: Any, key: str = "") -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    text = str(value).strip()
    moment = values.moment_of(text)
    if moment is not None:
        if moment.date and moment.time:
            return "datetime"
        return "date" if moment.date else "time"
    if IP_RE.match(text):
        return "ip"
    if EMAIL_RE.match(text):
        return "email"
    if URL_RE.match(text):
        return "url"
    if text.startswith("+") and PHONE_VALUE_RE.match(text) and 8 <= len(_digit_run(text)) <= 15:
        return "phone"
    if values.number_of(text) is not None:
        return "number"
    if CODE_LIKE_RE.search(text):
        return "code"
    words = [t for t, _, _ in values.tokens_with_spans(text)]
    # an address has a number of its own (a house number, a postcode) beside words; a text
    # whose digits sit inside a code ("Double charge on order ORD-53278") is a text
    standalone = [w.strip(",.;:()") for w in text.split()]
    if (
        " " in text
        and any(w.isdigit() for w in standalone)
        and any(w.isalpha() and len(w) > 1 for w in words)
    ):
        return "address"
    if KEY_RE.match(text):
        return "key"
    return "text"


CHECKED_KINDS = ("date", "time", "datetime", "ip", "email", "url", "key", "address", "phone")


def _argument_schema(schema: Any, pointer: str) -> dict:
    """The declaration of the argument at `pointer` ({} when the schema does not declare it);
    for an array of enum values, its items' declaration with the array's default."""
    node = schema if isinstance(schema, dict) else {}
    for part in [p for p in pointer.split("/") if p]:
        if part.isdigit() and isinstance(node.get("items"), dict):
            node = node["items"]
            continue
        props = node.get("properties") if isinstance(node, dict) else None
        name = part.replace("~1", "/").replace("~0", "~")
        if isinstance(props, dict) and isinstance(props.get(name), dict):
            node = props[name]
        else:
            return {}
    if isinstance(node.get("items"), dict):  # an array of enum values: each item's enum
        node = {**node["items"], **{k: v for k, v in node.items() if k == "default"}}
    return node


def declared(schema: Any, pointer: str) -> list[Source]:
    """The enum values and default a tool's schema declares for the argument at `pointer`."""
    node = _argument_schema(schema, pointer)
    sources = []
    if isinstance(node.get("enum"), list):
        sources.append(Source("the tool's declared enum", "\n".join(map(flat_text, node["enum"]))))
    if "default" in node and node["default"] is not None:
        sources.append(Source("the tool's declared default", flat_text(node["default"])))
    text = str(node.get("description") or "")
    if text:
        sources.append(Source("the argument's description", text))
    return sources


def sources_before(run: AgentRun, call: ToolCall, allowlist: list[str]) -> list[Source]:
    """What the call may take values from: the user's and system turns, earlier results and
    calls (each named), the allowlist."""
    sources = [Source(f"user turn {i + 1}", text) for i, text in enumerate(run.user_texts)]
    sources += [
        Source(f"result of {r.name}#{r.call_id or ''}", flat_text(r.content))
        for r in sorted(run.results, key=lambda r: r.position)
        if r.position < call.position
    ]
    sources += [
        Source(f"arguments of the earlier call {c.name}#{c.call_id}", flat_text(c.args))
        for c in run.calls
        if c.position < call.position
    ]
    if allowlist:
        sources.append(Source("the allowlist", "\n".join(allowlist)))
    return sources


def _number_readings(text: str) -> list[tuple[set[float], values.Quantity]]:
    """Each number of a text with every value its writing may mean: as read, its other
    locale's reading ("4.800"), before its scale, a percent as a share, and an amount with a
    currency in minor units (Stripe's cents: "€49" is 4900)."""
    found = []
    for quantity in values.quantities(text):
        readings = quantity.readings()
        if quantity.unit == "percent":
            readings |= {r / 100 for r in readings}
        if quantity.currency:
            readings |= {round(r * 100, 6) for r in readings}
        found.append((readings, quantity))
    return found


def _same_number(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else values.number_of(value)


def _ip_parts(text: str) -> tuple[tuple[int, ...], int | None] | None:
    """(octets, prefix) of an IPv4 address or CIDR ("10.0.0.5", "85.93.32.142/32")."""
    address, _, prefix = text.strip().partition("/")
    parts = address.split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts), int(prefix) if prefix.isdigit() else None


def _same_host(a: int | None, b: int | None) -> bool:
    """Two prefixes that name the same network: equal, or a host written with or without its
    /32."""
    return a == b or {a, b} <= {None, 32}


def _ips_in(text: str) -> list[tuple[tuple[int, ...], int | None, str]]:
    found = []
    for match in IPV4_IN_TEXT_RE.finditer(text):
        parts = _ip_parts(match.group(0))
        if parts:
            found.append((*parts, match.group(0)))
    return found


def _digit_run(text: str) -> str:
    return re.sub(r"\D", "", text)


def _phone_in(value: str, text: str, country: str | None) -> bool:
    """An E.164 number ("+34612341763") in a message that writes it locally ("612 34 17 63",
    "(617) 555-0134", "0612 34 17 63", "+34 612 34 17 63"): the same digits, with the country
    code of the run's zone added when the message leaves it out."""
    wanted = _digit_run(value)
    for match in PHONE_IN_TEXT_RE.finditer(text):
        written = _digit_run(match.group(0))
        if len(written) < 7:
            continue
        if written == wanted or written.lstrip("0") == wanted.lstrip("0"):
            return True
        if (
            country
            and not match.group(0).startswith("+")
            and wanted == country + written.lstrip("0")
        ):
            return True
    return False


def _grounded_in(
    value: Any,
    kind: str,
    text: str,
    tokens: list[tuple[str, int, int]],
    resolved: list[values.Moment] | None = None,
    country: str | None = None,
) -> bool:
    """Whether a message (`text`, its `tokens`, the dates and times it names by the run's clock:
    `resolved`) holds the value by its meaning."""
    if kind in ("date", "time", "datetime"):
        wanted = values.moment_of(str(value))
        return wanted is not None and any(
            relative_dates.same_when(wanted, m)
            for m in values.moments(text, both_orders=True) + (resolved or [])
        )
    if kind == "phone":
        return _phone_in(str(value), text, country)
    if kind == "number":
        number = _number(value)
        if number is None:
            return False
        if any(_same_number(r, number) for rs, _ in _number_readings(text) for r in rs):
            return True
        # a number that is one word of the text ("6" of "6:30", "200" of "[200,300]"), or a
        # long one written with separators ("555-123-4567"); a short one read across
        # separators would accept "12.34" for 1234
        key = values.ident_key(str(value))
        if any(t == key for t, _, _ in tokens):
            return True
        return len(key) >= 7 and bool(values.find_ident(str(value), tokens))
    if kind == "boolean":
        return True
    if kind == "ip" and (wanted := _ip_parts(str(value))) is not None:
        return any(o == wanted[0] and _same_host(p, wanted[1]) for o, p, _ in _ips_in(text))
    if values.find_ident(str(value), tokens):
        return True
    if kind == "address":
        return _address_in(str(value), tokens)
    return False


def _address_in(value: str, tokens: list[tuple[str, int, int]]) -> bool:
    """'123 Main St' in '… 123 Main Street …': its digit groups exactly, in order and next to
    each other, each word as a prefix of the word at its place; an address of parts
    ('Friedrichstraße 299, Berlin') when each part is in the same text."""
    parts = [p for p in value.split(",") if p.strip()]
    if len(parts) > 1:
        return all(
            _address_in(p, tokens) if any(c.isdigit() for c in p) else values.find_ident(p, tokens)
            for p in parts
        )
    wanted = [t for t, _, _ in values.tokens_with_spans(value)]
    words = [t for t, _, _ in tokens]
    for start in range(len(words) - len(wanted) + 1):
        window = words[start : start + len(wanted)]
        if all(
            w == t if w.isdigit() else (t.startswith(w) or w.startswith(t))
            for w, t in zip(wanted, window, strict=True)
        ):
            return True
    return False


def _beside(name: str, start: int, end: int, tokens: list[tuple[str, int, int]]) -> bool:
    """The word just before or after text[start:end] is the argument's name (or its form)."""
    words = [w for w in values.key_words(name) if len(w) >= 3]
    before = [t for t, _, e in tokens if e <= start][-1:]
    after = [t for t, s, _ in tokens if s >= end][:1]
    return any(t.startswith(w[:4]) and w.startswith(t[:4]) for t in before + after for w in words)


def _near(
    value: Any,
    tokens: list[tuple[str, int, int]],
    text: str,
    kind: str,
    name: str = "",
    resolved: list[values.Moment] | None = None,
) -> str | None:
    """Something of the source one character away from the value: a copy error."""
    key = values.ident_key(str(value))
    number = _number(value) if kind == "number" else None
    if number is not None:
        shown = _digits(number)
        short = len(shown.replace(".", "")) < MIN_NEAR_DIGITS
        if short and len(shown) < 2:
            return None
        written = _number_readings(text)
        money = short and _names_amount(name) and not _derivable(number, written)
        for readings, quantity in written:
            if (
                short
                and not _beside(name, quantity.start, quantity.end, tokens)
                and not (money and quantity.currency)
            ):
                continue
            if any(_one_edit(_digits(r), shown, substitution_only=True) for r in readings):
                return text[quantity.start : quantity.end]
        return None
    if kind == "ip" and (wanted := _ip_parts(str(value))) is not None:
        for octets, prefix, shown in _ips_in(text):
            differ = [(a, b) for a, b in zip(octets, wanted[0], strict=True) if a != b]
            if (
                len(differ) == 1
                and _one_edit(str(differ[0][0]), str(differ[0][1]))
                and _same_host(prefix, wanted[1])
            ):
                return shown
        return None
    if len(key) < MIN_NEAR_CHARS:
        return None
    # a word one letter away is a plural or an inflection, not a copy error; a code in capitals
    # ("BBVA.MC", a ticker) is not inflected: one letter of it replaced is a copy error
    caps = bool(CAPS_CODE_RE.match(str(value)))
    if not any(c.isdigit() for c in key) and not random_case(str(value)) and not caps:
        return None
    size = len(values.tokens_with_spans(str(value))) or 1
    for width in {size - 1, size, size + 1} - {0}:
        for start in range(len(tokens) - width + 1):
            window = tokens[start : start + width]
            joined = "".join(t for t, _, _ in window)
            shown = text[window[0][1] : window[-1][2]]
            if caps and not (len(joined) == len(key) and shown == shown.upper()):
                continue
            if joined != key and _one_edit(joined, key):
                return text[window[0][1] : window[-1][2]]
    if isinstance(value, str) and (wanted := values.moment_of(value)) is not None:
        for moment in values.moments(text, both_orders=True):
            shown = text[moment.start : moment.end]
            if relative_dates.one_digit_off(wanted, moment):
                return shown
        return relative_dates.resolved_one_off(wanted, resolved or [])
    return None


# the words of an argument's name that make it a sum of money ("/items/0/amount/value")
MONEY_NAME_WORDS = ("amount", "price", "cost", "fee", "money", "budget", "betrag", "importe")
# and those of an amount that may be a total of anything ("total_outcomes" of a deck of cards):
# one digit off a given amount is a changed one, but a total nobody gave is not invented money
AMOUNT_WORDS = (*MONEY_NAME_WORDS, "total", "sum")


def _names_amount(name: str, words: tuple[str, ...] = AMOUNT_WORDS) -> bool:
    return any(w.lower().startswith(words) for w in values.key_words(name))


def _derivable(number: float, written: list[tuple[set[float], values.Quantity]]) -> bool:
    """The number is the sum or product of two numbers of the text ("2 tickets at $40": 80):
    arithmetic, not a copy error."""
    found = [r for readings, _ in written for r in readings]
    return any(
        _same_number(a + b, number) or _same_number(a * b, number)
        for i, a in enumerate(found)
        for b in found[i + 1 :]
    )


def _digits(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(round(float(number), 6))


def _one_edit(a: str, b: str, substitution_only: bool = False) -> bool:
    """Levenshtein distance exactly 1 (`substitution_only`: the same length; a number with a
    digit more is a conversion as often as a typo: 100 m -> 1000 mm... is not, 1.5 h -> 90 is)."""
    if abs(len(a) - len(b)) > (0 if substitution_only else 1) or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _inflected(member: str, tokens: list[tuple[str, int, int]]) -> bool:
    """Each word of a member in a message in some form ("ratings" for "rating",
    "chronologically" for "chronological", "toll" for "tolls"): how a user names the member
    the call chose, never taken as naming another."""
    words = {t for t, _, _ in tokens}
    wanted = values.key_words(member)
    return bool(wanted) and all(
        any(w.startswith(m) or (len(w) >= 4 and m.startswith(w)) for w in words) for m in wanted
    )


def _own_words(member: str, tokens: list[tuple[str, int, int]], roles: tuple) -> bool:
    """A member's own words, each of four letters or more and none the tool's or the
    argument's name ("fraud" for `fraudulent`; not "PayPal ... id" for `PAYPAL_ID` of a PayPal
    tool), in some form in a message."""
    words = [w.lower() for w in values.key_words(member)]
    named = {w.lower() for group in roles for w in group}
    return (
        bool(words)
        and all(len(w) >= 4 and w not in named for w in words)
        and _inflected(member, tokens)
    )


def _enum_choice(
    value: Any,
    enum: Any,
    tokenized: list[tuple[Source, list[tuple[str, int, int]]]],
    chosen_elsewhere: set[str],
    roles: tuple[list[str], list[str]],
) -> tuple[str, str | None, str | None, str | None]:
    """How a declared enum member was chosen: ("grounded", message, None, words) when a
    message names it (`enum_words`: its own words, a translation or synonym, a cognate);
    ("changed", user turn, other member, words) when the user's words name another member
    of the enum (or several that are one concept) that no call of the run chose, and none
    names this one; ("declared", None, None, None) otherwise (the tool's own choice: a
    default, a member the request implies). `roles`: the argument's and the tool's name
    words, beside which a word of several roles ("high", "first") names a member."""
    if not isinstance(enum, list) or not isinstance(value, str) or value not in enum:
        return "declared", None, None, None
    arg_words, entity_words = roles
    for source, tokens in tokenized:
        user = source.name.startswith("user turn")
        words = enum_words.naming(value, source.text, arg_words, entity_words, lenient=user)
        if words is None and _inflected(value, tokens):
            words = value
        if words is not None:
            return "grounded", source.name, None, words
    members = [
        m
        for m in enum
        if isinstance(m, str)
        and m != value
        and m not in chosen_elsewhere
        and re.search(r"[^\W\d]", m)
    ]
    mine = enum_words.concepts_of(value)
    users = [s for s, _ in tokenized if s.name.startswith("user turn")]
    for source in users:
        named = [
            (m, words)
            for m in members
            if (words := enum_words.naming(m, source.text, arg_words, entity_words))
        ]
        # members that spell one concept ("normal" and "medium") are one choice
        concepts = [enum_words.concepts_of(m) for m, _ in named]
        if (
            named
            and not any(c & mine for c in concepts)
            and (len(named) == 1 or all(concepts[0] & c for c in concepts[1:]))
        ):
            return "changed", source.name, named[0][0], named[0][1]
    # the user's words read as they ground a call ("brouillon", "fraud") name exactly one
    # member of the whole enum, in the whole conversation, and it is another; a weak word
    # ("high street", "the toner is low", "bus stop") names nothing without its role beside it
    weak = enum_words.tables().weak_words
    lenient = [
        (source.name, m, words)
        for source, tokens in tokenized
        if source.name.startswith("user turn")
        for m in enum
        if isinstance(m, str)
        and (
            words := enum_words.naming(m, source.text, arg_words, entity_words, lenient=True)
            or (m if _own_words(m, tokens, roles) else None)
        )
    ]
    lenient = [(w, m, words) for w, m, words in lenient if values.ident_key(words) not in weak]
    if len({m for _, m, _ in lenient}) == 1 and lenient[0][1] in members:
        where, other, words = lenient[0]
        return "changed", where, other, words
    return "declared", None, None, None


ENUM_LABEL_RE = re.compile(
    r"(?<![\w.])(-?\d+)\s*(?:=|:|→|->|–|-)\s*([^\W\d][^,;=\n]*?)\s*(?=[,;\n]|$)"
)


def _enum_labels(node: dict) -> dict[int, str]:
    """The label of each member of an integer enum, as its description writes them ("0 = No
    priority, 1 = Urgent, 2 = High"); {} unless every member has one."""
    enum = node.get("enum")
    if (
        not isinstance(enum, list)
        or not enum
        or not all(isinstance(m, int) and not isinstance(m, bool) for m in enum)
    ):
        return {}
    found = {
        int(m.group(1)): m.group(2).strip()
        for m in ENUM_LABEL_RE.finditer(str(node.get("description") or ""))
    }
    labels = {m: found[m] for m in enum if m in found}
    return labels if len(labels) == len(enum) and len(set(labels.values())) == len(enum) else {}


def trace_call(
    call: ToolCall, run: AgentRun, allowlist: list[str], identifiers: set[str]
) -> list[Trace]:
    """Where each argument value of `call` came from. `identifiers`: values the identifier
    rules of tool_calls found (checked as identifiers whatever their shape)."""
    if call.args_error:
        return []
    schema = (run.tools or {}).get(call.name)
    sources = sources_before(run, call, allowlist)
    tokenized = [(s, values.tokens_with_spans(s.text)) for s in sources]
    users = [s for s in sources if s.name.startswith("user turn")]
    clock = run_clock.clock_of(run.user_texts)
    # with the run's clock, only what it does not resolve ("last week") dates things relatively
    relative = any(
        relative_dates.is_relative(run_clock.unresolved(s.text) if clock else s.text) for s in users
    )
    spans = [d for s in users for d in relative_dates.durations(s.text)]
    resolved = {s.name: run_clock.moments(s.text, clock) for s in users}
    anchors = relative_dates.anchors(sources, resolved, clock)
    reach = relative_dates.reach(users, spans)
    country = run_clock.calling_code(clock)
    leaves = arg_leaves(call.args)
    # values the run's calls chose (a user naming two members for two calls or two items), and
    # the words of the other tools' names and arguments ("my playlist" names the playlist another
    # call adds to, not the type this search looks for)
    chosen = {
        str(v)
        for c in run.calls
        for _, _, v in arg_leaves(c.args if not c.args_error else {})
        if isinstance(v, str)
    }
    chosen |= _other_roles(call, run)
    declaration = _declaration_source(run, call.name)
    traces = []
    for pointer, key, value in leaves:
        path = " ".join(p for p in pointer.split("/") if p and not p.isdigit())
        kind = kind_of(value, key)
        if kind == "text" and str(value) in identifiers:
            kind = "identifier"
        node = _argument_schema(schema, pointer)
        roles = (enum_words.role_words(key), enum_words.role_words(call.name))
        labels = _enum_labels(node)
        if labels and not isinstance(value, bool) and value in labels:
            # an integer enum its description names ("1 = Urgent, 2 = High"): by its labels
            how, where, other, words = _enum_choice(
                labels[value], list(labels.values()), tokenized, set(), roles
            )
            other = next((str(k) for k, v in labels.items() if v == other), other)
        else:
            how, where, other, words = _enum_choice(
                value, node.get("enum"), tokenized, chosen, roles
            )
        if how == "grounded":
            traces.append(Trace(pointer, value, kind, "grounded", where, words=words))
            continue
        if how == "changed":
            traces.append(Trace(pointer, value, "enum", "changed", where, other, words))
            continue
        own = [(s, values.tokens_with_spans(s.text)) for s in declared(schema, pointer)]
        found = next(
            (
                s.name
                for s, tokens in own + tokenized
                if _grounded_in(value, kind, s.text, tokens, resolved.get(s.name), country)
            ),
            None,
        )
        if found is not None:
            traces.append(Trace(pointer, value, kind, "grounded", found))
            continue
        if kind in ("date", "time", "datetime") and (
            base := relative_dates.computed_end(value, pointer, leaves, spans)
        ):
            traces.append(
                Trace(pointer, value, kind, "grounded", f"'{base}' plus a duration the user gave")
            )
            continue
        if (stamp := _epoch_trace(pointer, value, users, resolved, clock, relative)) is not None:
            traces.append(stamp)
            continue
        near = next(
            (
                (s.name, n)
                for s, tokens in tokenized
                if (n := _near(value, tokens, s.text, kind, path, resolved.get(s.name)))
            ),
            None,
        )
        inner = (
            _embedded_date_trace(pointer, value, users, resolved)
            if near is None and kind in ("text", "key", "address", "code", "identifier")
            else None
        )
        if inner is None and near is None and kind == "code":
            inner = _code_number_trace(pointer, value, tokenized, path)
        if inner is not None:
            traces.append(inner)
            continue
        if near is None and kind in ("key", "identifier", "text") and generated(key, node, value):
            traces.append(Trace(pointer, value, kind, "generated", "made by the agent"))
            continue
        if (
            near is None
            and kind in ("key", "identifier")
            and (parts := composed_of(str(value), key, tokenized, declaration))
        ):
            traces.append(Trace(pointer, value, kind, "grounded", f"composed of {parts}"))
            continue
        if (
            near is None
            and kind in ("key", "identifier", "text")
            and declaration
            and _grounded_in(
                value, kind, declaration.text, values.tokens_with_spans(declaration.text)
            )
        ):
            traces.append(Trace(pointer, value, kind, "grounded", declaration.name))
            continue
        if kind in ("date", "datetime") and relative:
            # "3 nights from 1st June", "last week": a date the model computed, unless it is one
            # digit away from a date the run's clock resolves ("pasado mañana")
            wanted = values.moment_of(str(value))
            off = next(
                (
                    (name, n)
                    for name, ms in resolved.items()
                    if wanted and (n := relative_dates.resolved_one_off(wanted, ms))
                ),
                None,
            )
            if off:
                traces.append(Trace(pointer, value, kind, "changed", off[0], off[1]))
            elif wanted and relative_dates.beyond_reach(wanted, anchors, reach):
                traces.append(Trace(pointer, value, kind, "invented"))
            else:
                traces.append(Trace(pointer, value, kind, "unverified"))
        elif near is not None:
            traces.append(Trace(pointer, value, kind, "changed", near[0], near[1]))
        elif kind in CHECKED_KINDS or kind == "identifier":
            traces.append(Trace(pointer, value, kind, "invented"))
        elif kind == "text" and _unsourced_label(str(value), path, tokenized):
            traces.append(Trace(pointer, value, "tag", "invented"))
        elif kind == "number" and _unsourced_amount(value, path, node, tokenized):
            traces.append(Trace(pointer, value, "amount", "invented"))
        elif kind in ("text", "address", "code") and (
            missing := unsourced_ids(str(value), tokenized)
        ):
            traces.append(Trace(pointer, missing[0], "key", "invented"))
        else:
            traces.append(Trace(pointer, value, kind, "unverified"))
    return traces


# an argument that tags or labels a record, and the words a user asks for one with (six
# languages, folded)
LABEL_NAME_WORDS = ("tag", "tags", "label", "labels", "hashtag", "hashtags")
LABEL_REQUEST_RE = re.compile(
    r"\b(?:tag|label|etiquet|etikett|schlagw|etichett|rotul|marcador|hashtag|stichw)\w*",
    re.IGNORECASE,
)


def _unsourced_label(
    value: str, path: str, tokenized: list[tuple[Source, list[tuple[str, int, int]]]]
) -> bool:
    """A tag or label (the argument is named so) that the user asked for in no words: none of
    its words is a word of a message or result (in any form), and no user turn speaks of tags
    or labels at all (when one does, the agent may have translated the user's label)."""
    if not any(w.lower() in LABEL_NAME_WORDS for w in values.key_words(path)):
        return False
    words = [w.lower() for w in values.key_words(value) if len(w) >= 3]
    if not words:
        return False
    for source, tokens in tokenized:
        if source.name.startswith("user turn") and LABEL_REQUEST_RE.search(
            values.fold_keeping_length(source.text)
        ):
            return False
        known = {t for t, _, _ in tokens}
        if any(
            t == w or (min(len(t), len(w)) >= 4 and (t.startswith(w[:4]) and w.startswith(t[:4])))
            for w in words
            for t in known
        ):
            return False
    return True


# the words of an argument's description that make it a sum of money
MONEY_DESCRIPTION_RE = re.compile(
    r"\bcents?\b|minor units?|\bprice\b|\bcurrency\b|\bmonetary\b", re.IGNORECASE
)


def _unsourced_amount(
    value: Any,
    path: str,
    node: dict,
    tokenized: list[tuple[Source, list[tuple[str, int, int]]]],
) -> bool:
    """A sum of money (the argument's name says so: "amount", "maxPrice", "insurance_amount")
    that no message or result holds, in any writing or unit, and that no two of their numbers
    make by one step of arithmetic (a total, a share, a difference, a split): invented. Zero
    and a declared default are the tool's own."""
    number = _number(value)
    money = _names_amount(path, MONEY_NAME_WORDS)
    money = money or bool(MONEY_DESCRIPTION_RE.search(str(node.get("description") or "")))
    if number is None or number == 0 or not money or "default" in node:
        return False
    known = [r for s, _ in tokenized for readings, _ in _number_readings(s.text) for r in readings]
    for i, a in enumerate(known):
        for b in known[i:]:
            candidates = (a + b, a * b, abs(a - b), a / b if b else None, b / a if a else None)
            if any(c is not None and _same_number(round(c, 2), number) for c in candidates):
                return False
            if any(c is not None and _same_number(round(c * 100, 2), number) for c in candidates):
                return False  # the same in minor units
    return True


def _other_roles(call: ToolCall, run: AgentRun) -> set[str]:
    """The words of the names of the run's other tools (called or declared) and of their
    arguments."""
    names = {c.name for c in run.calls} | set(run.tools or {})
    names.discard(call.name)
    words: set[str] = set()
    for name in names:
        words |= set(values.key_words(name))
        props = ((run.tools or {}).get(name) or {}).get("properties")
        if isinstance(props, dict):
            for prop in props:
                words |= set(values.key_words(str(prop)))
    return words


def _declaration_source(run: AgentRun, tool: str) -> Source | None:
    """The tool's own description and every description in its schema: the values a
    declaration names ("hourly: temperature_2m, precipitation, ...")."""
    parts = [run.tool_descriptions.get(tool, "")]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "description" and isinstance(v, str):
                    parts.append(v)
                elif k == "enum" and isinstance(v, list):
                    parts.append("\n".join(map(flat_text, v)))
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk((run.tools or {}).get(tool))
    text = "\n".join(p for p in parts if p)
    return Source("the tool's declaration", text) if text.strip() else None


def _epoch_trace(
    pointer: str,
    value: Any,
    users: list[Source],
    resolved: dict[str, list[values.Moment]],
    clock: run_clock.Clock | None,
    relative: bool = False,
) -> Trace | None:
    """A Unix time (seconds or milliseconds) that is a date and time a message names, read in
    the run's zone or in UTC: grounded; one digit of its date or time away from one: changed.
    One written as a string that no message dates ("thread_ts": "1802106000.510561"): invented,
    as a long number is, unless the messages date things relatively ("in two hours")."""
    zoned = run_clock.epoch_moment(value, clock)
    if zoned is None:
        return None
    utc = run_clock.epoch_moment(value, None)
    floating = values.Moment(utc.date, utc.time, None, 0, 0) if utc else None
    readings = [m for m in (zoned, floating) if m is not None]
    for source in users:
        known = values.moments(source.text, both_orders=True) + resolved.get(source.name, [])
        full = [m for m in known if m.date and len(m.date) == 10 and m.time]
        if any(relative_dates.same_when(w, m) for w in readings for m in full):
            return Trace(pointer, value, "timestamp", "grounded", source.name)
    for source in users:
        for wanted in readings:
            near = relative_dates.resolved_one_off(wanted, resolved.get(source.name, []))
            if near:
                return Trace(pointer, value, "timestamp", "changed", source.name, near)
    if isinstance(value, str) and not relative:
        return Trace(pointer, value, "timestamp", "invented")
    return None


def _embedded_date_trace(
    pointer: str, value: Any, users: list[Source], resolved: dict[str, list[values.Moment]]
) -> Trace | None:
    """A date inside a longer string (an S3 prefix "alb/2027/02/04/", a search query's
    "after:2026/06/21", a SQL literal) one digit away from a date a message names, and named
    by none: changed. Grounded or unrelated dates leave the string to the other rules."""
    text = str(value)
    for match in EMBEDDED_DATE_RE.finditer(text):
        if match.start() == 0 and match.end() == len(text):
            continue
        iso = f"{match.group(1)}-{match.group(3)}-{match.group(4)}"
        wanted = values.moment_of(iso)
        if wanted is None:
            continue
        known = {
            s.name: values.moments(s.text, both_orders=True) + resolved.get(s.name, [])
            for s in users
        }
        if any(relative_dates.same_when(wanted, m) for ms in known.values() for m in ms):
            continue
        for name, moments in known.items():
            near = next(
                (
                    m.date
                    for m in moments
                    if m.date
                    and len(m.date) == 10
                    and m.time is None
                    and relative_dates.one_digit_off(wanted, m)
                ),
                None,
            )
            if near:
                return Trace(pointer, match.group(0), "date", "changed", name, near)
    return None


CODE_NUMBER_RE = re.compile(r"(?<![\w.:/-])\d+(?:\.\d+)?(?![\w.:/-])")


def _code_number_trace(
    pointer: str,
    value: Any,
    tokenized: list[tuple[Source, list[tuple[str, int, int]]]],
    path: str,
) -> Trace | None:
    """A number inside a query or formula ("total_cents > 250200") that no message holds and
    that is one digit away from a number a message writes ("over £2,500"): changed."""
    for match in CODE_NUMBER_RE.finditer(str(value)):
        number = match.group(0)
        if any(_grounded_in(number, "number", s.text, tokens) for s, tokens in tokenized):
            continue
        for source, tokens in tokenized:
            near = _near(number, tokens, source.text, "number", path)
            if near:
                return Trace(pointer, number, "number", "changed", source.name, near)
    return None
