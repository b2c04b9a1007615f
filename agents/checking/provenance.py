"""Argument provenance by meaning: where each value of a tool call came from.

Every scalar of a call's arguments is traced, whatever its kind, to what the call could have
taken it from, in order: the tool's declaration (an `enum` or `default` of that argument), the
user's and system turns (each named by its turn), the results and calls before it. A value is
`grounded` when, normalised, it equals something there:

- a date or time by its meaning: "2023-11-01T20:00:00" is grounded by "November 1, 2023 at
  8pm", "20:00" by "8 PM";
- a number in any writing ("1,234.5", "1.2 million", "$12");
- any other value by its words with separators and case dropped ("ThinQ_Connect" by "ThinQ
  Connect"); a value of several words with a digit (an address) by its digits exactly and its
  words by prefix ("123 Main St" by "123 Main Street").

A value that is not grounded is `changed` when something there differs from it by one
character ("10.0.0.6" where the user wrote "10.0.0.5", "2023-11-02T20:00" for "November 1,
2023 at 8pm"), else `invented` for the kinds a model must not make up (dates and times,
addresses, IPs, keys, identifiers, e-mails, URLs) and `unverified` for the others (a number or
text the model may have derived: reported, never flagged). A date is `unverified` rather than
invented when the conversation dates things relatively ("tomorrow", "next Friday"), which
cannot be resolved without the run's clock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agents.checking.formats import AgentRun, ToolCall
from stages.common import values

VERSION = "1.0.0"
FLAGGED = ("changed", "invented")
MIN_NEAR_CHARS = 3  # "4" for "3 adults and 1 child" is arithmetic, not a copy error
IP_RE = re.compile(
    r"^(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?$|^[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}$", re.I
)
EMAIL_RE = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
URL_RE = re.compile(r"^(?:https?|ftp|s3|gs)://|^www\.", re.I)
KEY_RE = re.compile(r"^(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w.:/-]{6,}$")
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_SPANS = "days?|nights?|weeks?|weekends?|months?|years?|hours?|minutes?|quarters?"
RELATIVE_DATE_RE = re.compile(
    rf"\b(?:today|tonight|tomorrow|yesterday|now|ago|later|{_DAYS}|"
    rf"(?:next|last|this|coming|past|previous|following)\s+(?:{_SPANS}|{_DAYS}|morning|evening|"
    rf"afternoon)|(?:day|week|month) (?:before|after)|\d+\s*(?:{_SPANS})|"
    r"hoy|mañana|ayer|heute|morgen|gestern|aujourd'hui|demain|hier|oggi|domani|ieri|"
    r"vandaag|今日|明日|今天|明天)\b",
    re.IGNORECASE,
)
# A date without its year ("on Nov 1", "1er novembre"): the model adds the year
_MONTHS = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
MONTH_DAY_RE = re.compile(
    rf"\b{_MONTHS}\.?\s*\d{{1,2}}(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th|er)?\s+(?:of\s+)?{_MONTHS}\b(?!,?\s*\d{{4}})",
    re.IGNORECASE,
)


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

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def error(self, tool: str) -> str:
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


def _flat(value: Any) -> str:
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
    if values.number_of(text) is not None:
        return "number"
    words = [t for t, _, _ in values.tokens_with_spans(text)]
    if (
        " " in text
        and any(w.isdigit() for w in words)
        and any(w.isalpha() and len(w) > 1 for w in words)
    ):
        return "address"
    if KEY_RE.match(text):
        return "key"
    return "text"


CHECKED_KINDS = ("date", "time", "datetime", "ip", "email", "url", "key", "address")


def declared(schema: Any, pointer: str) -> list[Source]:
    """The enum values and default a tool's schema declares for the argument at `pointer`."""
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
            return []
    if isinstance(node.get("items"), dict):  # an array of enum values: each item's enum
        node = {**node["items"], **{k: v for k, v in node.items() if k == "default"}}
    sources = []
    if isinstance(node.get("enum"), list):
        sources.append(Source("the tool's declared enum", "\n".join(map(_flat, node["enum"]))))
    if "default" in node and node["default"] is not None:
        sources.append(Source("the tool's declared default", _flat(node["default"])))
    text = str(node.get("description") or "")
    if text:
        sources.append(Source("the argument's description", text))
    return sources


def sources_before(run: AgentRun, call: ToolCall, allowlist: list[str]) -> list[Source]:
    """What the call may take values from: the user's and system turns, earlier results and
    calls (each named), the allowlist."""
    sources = [Source(f"user turn {i + 1}", text) for i, text in enumerate(run.user_texts)]
    sources += [
        Source(f"result of {r.name}#{r.call_id or ''}", _flat(r.content))
        for r in sorted(run.results, key=lambda r: r.position)
        if r.position < call.position
    ]
    sources += [
        Source(f"arguments of the earlier call {c.name}#{c.call_id}", _flat(c.args))
        for c in run.calls
        if c.position < call.position
    ]
    if allowlist:
        sources.append(Source("the allowlist", "\n".join(allowlist)))
    return sources


def _grounded_in(value: Any, kind: str, text: str, tokens: list[tuple[str, int, int]]) -> bool:
    if kind in ("date", "time", "datetime"):
        wanted = values.moment_of(str(value))
        return wanted is not None and any(_same_when(wanted, m) for m in values.moments(text))
    if kind == "number":
        number = float(value) if isinstance(value, int | float) else values.number_of(value)
        if number is None:
            return False
        for quantity in values.quantities(text):
            for written in (quantity.value, quantity.written):
                if abs(written - number) <= 1e-9 * max(1.0, abs(number)):
                    return True
            if quantity.unit == "percent" and abs(quantity.value / 100 - number) <= 1e-9:
                return True
        return bool(values.find_ident(str(value), tokens))
    if kind == "boolean":
        return True
    if values.find_ident(str(value), tokens):
        return True
    if kind == "address":
        return _address_in(str(value), tokens)
    return False


def _same_when(wanted: values.Moment, known: values.Moment) -> bool:
    """An argument's date/time equals a written one: every part the argument has that the
    written one states (a date-time argument for "November 1, 2023 at 8pm" at 20:00)."""
    if wanted.date is not None and not (known.date and wanted.date.startswith(known.date)):
        return False
    if wanted.time is not None and known.time is not None:
        other = known.at(wanted.offset) if wanted.offset is not None else known
        return other.time == wanted.time
    # a time the written date does not state is not grounded by it (midnight: a bare date)
    return wanted.time is None or wanted.time == "00:00"


def _address_in(value: str, tokens: list[tuple[str, int, int]]) -> bool:
    """'123 Main St' in '… 123 Main Street …': its digit groups exactly, in order and next to
    each other, each word as a prefix of the word at its place."""
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


def _near(value: Any, tokens: list[tuple[str, int, int]], text: str) -> str | None:
    """Something of the source one character away from the value: a copy error."""
    key = values.ident_key(str(value))
    if len(key) < MIN_NEAR_CHARS or not any(c.isdigit() for c in key):
        return None  # a word one letter away is a plural or an inflection, not a copy error
    number = float(value) if isinstance(value, int | float) else values.number_of(value)
    if number is not None:
        shown = _digits(number)
        for quantity in values.quantities(text):
            for written in {quantity.value, quantity.written}:
                if _one_edit(_digits(written), shown, substitution_only=True):
                    return text[quantity.start : quantity.end]
        return None
    size = len(values.tokens_with_spans(str(value))) or 1
    for width in {size - 1, size, size + 1} - {0}:
        for start in range(len(tokens) - width + 1):
            window = tokens[start : start + width]
            joined = "".join(t for t, _, _ in window)
            if joined != key and _one_edit(joined, key):
                return text[window[0][1] : window[-1][2]]
    if isinstance(value, str) and (wanted := values.moment_of(value)) is not None:
        for moment in values.moments(text):
            shown = text[moment.start : moment.end]
            if _moment_one_off(wanted, moment):
                return shown
    return None


def _digits(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _moment_one_off(wanted: values.Moment, known: values.Moment) -> bool:
    """The same moment but for one digit of its date or time, written in any format."""
    a = (wanted.date or "") + (wanted.time or "")
    if known.date:
        b = (known.date or "") + (known.time or "")
    else:
        b = (wanted.date or "") + (known.time or "")
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def _one_edit(a: str, b: str, substitution_only: bool = False) -> bool:
    """Levenshtein distance exactly 1 (`substitution_only`: the same length; a number with a
    digit more is a conversion as often as a typo: 100 m -> 1000 mm... is not, 1.5 h -> 90 is)."""
    if abs(len(a) - len(b)) > (0 if substitution_only else 1) or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


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
    relative = any(
        RELATIVE_DATE_RE.search(s.text) or MONTH_DAY_RE.search(s.text)
        for s in sources
        if s.name.startswith("user turn")
    )
    traces = []
    for pointer, key, value in arg_leaves(call.args):
        kind = kind_of(value, key)
        if kind == "text" and str(value) in identifiers:
            kind = "identifier"
        own = [(s, values.tokens_with_spans(s.text)) for s in declared(schema, pointer)]
        found = next(
            (s.name for s, tokens in own + tokenized if _grounded_in(value, kind, s.text, tokens)),
            None,
        )
        if found is not None:
            traces.append(Trace(pointer, value, kind, "grounded", found))
            continue
        near = next(
            ((s.name, n) for s, tokens in tokenized if (n := _near(value, tokens, s.text))),
            None,
        )
        if kind in ("date", "datetime") and relative:
            # "3 nights from 1st June", "yesterday": a date the model computed
            traces.append(Trace(pointer, value, kind, "unverified"))
        elif near is not None:
            traces.append(Trace(pointer, value, kind, "changed", near[0], near[1]))
        elif kind in CHECKED_KINDS or kind == "identifier":
            traces.append(Trace(pointer, value, kind, "invented"))
        else:
            traces.append(Trace(pointer, value, kind, "unverified"))
    return traces
