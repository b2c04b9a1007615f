"""Evidence from tool results: what a run's answer may rest on, each span addressed by tool name,
call id and (for a structured result) a JSON pointer.

A JSON result is read as `key: value` lines, one evidence item per record (each object of a list
of objects, e.g. `/results/2`) or one for the whole object, its JSON pointer (RFC 6901) kept as
the span's anchor. A text result is one item. A result that is empty, an error (`is_error`, an
exception or traceback, an HTTP error body) or says nothing was found is not evidence: it is
classified (`kind`) and left out, with the reason.

A span also says what it is `about`: the text values of the arguments its call passed, for a
tool that is not a free-text search. `get_time(city="Tokyo")` returning "14:05 JST" is about
Tokyo, so an answer may name Tokyo (the entities check reads `about` as it reads a document's
title); a search query is the agent's own words and says nothing of what was found.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agents.checking.formats import AgentRun, ToolCall, ToolResult
from agents.checking.tool_calls import is_free_text_tool
from stages.common import values

VERSION = "1.2.0"
MAX_ABOUT_CHARS = 80  # an argument longer than this is content the agent wrote, not a subject
MAX_ITEMS_PER_RESULT = 50  # records beyond this are not read (a dump of a whole table)
MAX_VALUE_CHARS = 20000  # one value (a page of text) beyond this is cut

ERROR_TEXT_RE = re.compile(
    r"^\W*(?:error|exception|fatal|failed|failure|traceback|unhandled|internal server error|"
    r"bad request|unauthori[sz]ed|forbidden|service unavailable|gateway time-?out|timed? ?out|"
    r"rate limit|too many requests|permission denied|access denied|connection (?:refused|reset)|"
    r"(?:http(?:/\d(?:\.\d)?)? )?[45]\d\d\b)"
    r"|Traceback \(most recent call last\)|^\w+(?:Error|Exception)\b[:(]"
    r"|<title>\s*[45]\d\d\b",
    re.IGNORECASE | re.MULTILINE,
)
NOT_FOUND_RE = re.compile(
    r"^\W*(?:no (?:results?|matches|matching \w+|documents?|records?|data|information|entries|"
    r"items|hits)(?: (?:were |was )?(?:found|returned|available))?\b|nothing (?:was )?found|"
    r"not found|(?:0|zero) (?:results?|matches|hits|records?)|"
    r"(?:the )?(?:requested )?\w+(?: \w+)? (?:was|were|could not be|couldn't be) not found|"
    r"(?:i )?(?:could not|couldn't|cannot|can't) find\b|unknown (?:\w+ )?(?:id|identifier)\b|"
    r"does not exist|doesn't exist)",
    re.IGNORECASE,
)
SHORT_RESULT_CHARS = 300  # only a short text is judged an error or not-found message whole
ERROR_KEYS = ("error", "errors", "error_message", "errorMessage", "exception", "fault")
STATUS_KEYS = ("status", "status_code", "statusCode", "code", "http_status")
NOT_FOUND_KEYS = ("found", "exists", "success", "ok")
EMPTY_VALUES = (None, "", [], {})


@dataclass
class Span:
    evidence_id: str  # "E1", "E2"… in the order of the run
    tool: str
    call_id: str | None
    pointer: str  # JSON pointer into the result ("" = the whole result)
    text: str
    about: str = ""  # the call's text arguments: what the result is about

    def anchor(self) -> str:
        return f"{self.tool}#{self.call_id or ''}{self.pointer}"

    def as_row(self) -> dict[str, Any]:
        return {
            "evidence_id": self.evidence_id,
            "tool": self.tool,
            "call_id": self.call_id,
            "pointer": self.pointer,
            "text": self.text,
        }


@dataclass
class ResultKind:
    call_id: str | None
    tool: str
    kind: str  # evidence | empty | error | not_found
    reason: str
    spans: int = 0

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)


# ---------------------------------------------------------------- what a result is


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _is_empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip() or value.strip().lower() in ("null", "none", "[]", "{}", '""')
    if isinstance(value, dict):
        return all(_is_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(_is_empty(v) for v in value)
    return value is None


def classify(result: ToolResult) -> tuple[str, str]:
    """(kind, reason): evidence | empty | error | not_found."""
    content = result.content
    if result.is_error:
        return "error", "the tool reported an error (is_error)"
    if _is_empty(content):
        return "empty", "the tool returned nothing"
    if isinstance(content, dict):
        return _classify_object(content)
    if isinstance(content, str):
        text = content.strip()
        head = text[:SHORT_RESULT_CHARS]
        if "Traceback (most recent call last)" in text or (
            len(text) <= SHORT_RESULT_CHARS and ERROR_TEXT_RE.search(head)
        ):
            return "error", f"the result is an error message: {_short(text)}"
        if len(text) <= SHORT_RESULT_CHARS and NOT_FOUND_RE.search(head):
            return "not_found", f"the result says nothing was found: {_short(text)}"
    return "evidence", ""


def _classify_object(content: dict) -> tuple[str, str]:
    errors = [k for k in ERROR_KEYS if not _is_empty(content.get(k))]
    payload = {k: v for k, v in content.items() if k not in ERROR_KEYS and k not in STATUS_KEYS}
    for key in STATUS_KEYS:
        value = content.get(key)
        code = int(value) if isinstance(value, int) or str(value).isdigit() else None
        if code is not None and 400 <= code <= 599:
            return "error", f"the result carries HTTP status {code}"
        if isinstance(value, str) and value.lower() in ("error", "failed", "failure", "fail"):
            return "error", f"the result's {key} is {value!r}"
        if isinstance(value, str) and value.lower() in ("not_found", "not found", "notfound"):
            return "not_found", f"the result's {key} is {value!r}"
    if errors and _is_empty({k: v for k, v in payload.items() if not _is_meta(k)}):
        return "error", f"the result is an error: {_short(_flat(content[errors[0]]))}"
    for key in NOT_FOUND_KEYS:
        if content.get(key) is False and _is_empty(
            {k: v for k, v in payload.items() if k not in NOT_FOUND_KEYS and not _is_meta(k)}
        ):
            return "not_found", f"the result's {key} is false"
    data = {k: v for k, v in payload.items() if not _is_meta(k)}
    if _is_empty(data):
        return "empty", "the result holds no data (only empty fields and counts)"
    if len(data) == 1 and isinstance(next(iter(data.values())), str):
        text = next(iter(data.values())).strip()
        if len(text) <= SHORT_RESULT_CHARS and NOT_FOUND_RE.search(text):
            return "not_found", f"the result says nothing was found: {_short(text)}"
    return "evidence", ""


META_KEYS = re.compile(
    r"^(?:count|total|total_?count|num_?results|page|page_?size|limit|offset|took|took_ms|"
    r"query|q|request_?id|next|next_?page|cursor|has_more|message|msg|elapsed_ms)$",
    re.IGNORECASE,
)


def _is_meta(key: str) -> bool:
    """Bookkeeping beside the data (counts, the query echoed back): not evidence by itself."""
    return bool(META_KEYS.match(str(key)))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "…"


def _flat(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- JSON as key: value text


def _lines(value: Any, key: str = "") -> list[str]:
    """`key: value` lines of a JSON value; nested keys joined with '.' (the leaf's own key
    first read by the judge), lists of scalars joined by ', '."""
    if isinstance(value, dict):
        lines = []
        for child_key, child in value.items():
            name = f"{key}.{child_key}" if key else str(child_key)
            lines += _lines(child, name)
        return lines
    if isinstance(value, list):
        if all(not isinstance(v, dict | list) for v in value):
            shown = ", ".join(_scalar(v) for v in value if not _is_empty(v))
            return [f"{key}: {shown}" if key else shown] if shown else []
        lines = []
        for index, child in enumerate(value):
            lines += _lines(child, f"{key}[{index}]" if key else f"[{index}]")
        return lines
    if _is_empty(value):
        return []
    text = _scalar(value)[:MAX_VALUE_CHARS]
    return [f"{key}: {text}" if key else text]


# A name written as one token: words joined by _ - . / or camelCase ("ThinQ_Connect",
# "smartHome", "LG-Electronics/HA")
JOINED_NAME_RE = re.compile(
    r"(?=.*[A-Za-z]{2})[A-Za-z0-9]+(?:[_./-][A-Za-z0-9]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*"
)
ISO_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
MONTH_NAMES = [
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
]


def _scalar(value: Any) -> str:
    """A JSON scalar as text; an ISO date also in words ("2026-03-02 (2 March 2026)"), as an
    answer states it, so that its month is not taken for a name the results lack."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    date = ISO_DATE_RE.match(text) if isinstance(value, str) else None
    if date and 1 <= int(date.group(2)) <= 12:
        year, month, day = date.groups()
        return f"{text} ({int(day)} {MONTH_NAMES[int(month) - 1]} {year})"
    if isinstance(value, str) and JOINED_NAME_RE.fullmatch(text):
        # "ThinQ_Connect (ThinQ Connect)": the name as an answer writes it is in evidence too
        return f"{text} ({' '.join(values.key_words_cased(text))})"
    return text


def records(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """(pointer, value) of each record of a JSON result: every object of a list of objects
    (at any depth), and the rest of the enclosing object as one more record."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        found = []
        for index, child in enumerate(value):
            found += records(child, f"{pointer}/{index}") or [(f"{pointer}/{index}", child)]
        return found
    if isinstance(value, dict):
        found, rest = [], {}
        for key, child in value.items():
            inner = records(child, f"{pointer}/{_escape(key)}") if isinstance(child, list) else []
            if inner:
                found += inner
            elif not _is_meta(key) or not found:
                rest[key] = child
        rest = {k: v for k, v in rest.items() if not _is_meta(k)}
        if found:
            return ([(pointer, rest)] if not _is_empty(rest) else []) + found
        return [(pointer, value)]
    return [(pointer, value)]


def about_call(call: ToolCall | None) -> str:
    """The short text values of a call's arguments, unless its tool is a free-text search."""
    if call is None or call.args_error or is_free_text_tool(call.name):
        return ""
    values: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)
        elif isinstance(value, str) and 0 < len(value.strip()) <= MAX_ABOUT_CHARS:
            values.append(value.strip())

    walk(call.args)
    return "; ".join(values)


def spans_of_result(result: ToolResult, first_id: int, about: str = "") -> list[Span]:
    content = result.content
    if isinstance(content, dict | list):
        spans = []
        for pointer, value in records(content)[:MAX_ITEMS_PER_RESULT]:
            text = "\n".join(_lines(value))
            if text.strip():
                evidence_id = f"E{first_id + len(spans)}"
                spans.append(Span(evidence_id, result.name, result.call_id, pointer, text, about))
        return spans
    text = str(content).strip()
    return [Span(f"E{first_id}", result.name, result.call_id, "", text, about)] if text else []


def collect(run: AgentRun) -> tuple[list[Span], list[ResultKind]]:
    """The run's evidence spans, and what each tool result was (evidence or why not)."""
    spans: list[Span] = []
    kinds: list[ResultKind] = []
    calls = {c.call_id: c for c in run.calls if c.call_id}
    for result in sorted(run.results, key=lambda r: r.position):
        kind, reason = classify(result)
        about = about_call(calls.get(result.call_id or ""))
        found = spans_of_result(result, len(spans) + 1, about) if kind == "evidence" else []
        if kind == "evidence" and not found:
            kind, reason = "empty", "the tool returned nothing"
        spans += found
        kinds.append(ResultKind(result.call_id, result.name, kind, reason, len(found)))
    return spans, kinds


def as_checker_evidence(spans: list[Span]) -> dict[str, dict]:
    """The spans in the claim checker's evidence form (`stages.guardrails.check_answer`): the
    tool's name as the title, `tool#call_id/pointer` as the section, the call id as doc_id."""
    return {
        s.evidence_id: {
            "evidence_id": s.evidence_id,
            "text": s.text,
            "title": s.tool,
            "section_path": s.anchor(),
            "about": s.about,
            "doc_id": s.call_id or s.tool,
            "char_start": 0,
            "char_end": len(s.text),
        }
        for s in spans
    }
