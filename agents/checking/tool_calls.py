"""Tool-call verification: each call against its tool's declared schema, and its identifiers
against where they could have come from.

Schema: a real JSON Schema validator (jsonschema, Draft 2020-12) over the declared parameters,
after mapping the non-standard type names function-calling datasets use (BFCL's `dict`, `float`,
`tuple`, `any`; Java-style `String`, `HashMap`, `long`…) to JSON Schema. Arguments a tool does
not declare are unknown (`additionalProperties: false` unless the schema says otherwise), so a
call is rejected for an unknown tool, an unknown or missing argument, a wrong type, a value
outside an enum, a pattern or a range.

Provenance: every identifier in the arguments (URL, e-mail, id, file path, account or order
number, long number) must occur in what the user (or the system prompt) wrote, in an earlier
tool result or earlier call, in the tool's declaration (enum, default) or in the configured
allowlist; else the call uses an invented identifier. An argument named like an identifier
(`order_id`, `account`, `email`, `path`…) holds one whatever its shape. Every other value is
traced by its meaning too (`provenance`): a date, time, address, IP or key of no source, or one
character away from what a message holds, rejects the call; the report names the message each
value came from.

Fit: a call of a declared tool should fit the request. With the packaged sentence embedder
(all-MiniLM-L6-v2, `stages.models.embeddings`), the tool's name words and description are
compared in meaning to the request or one of its sentences (cosine >= FIT_SIMILARITY); when the
model cannot be loaded, the lexical rule (a shared content word). The model reads English only,
and real requests it was not fitted on fell under the line, so a poor fit alone is a warning in
the report; the call is rejected only on evidence that holds in any language (`off_request`:
nothing the user wrote occurs in its arguments and a required argument has no source, or the
request writes no digit and a required number argument has a value from no source).
Free-text tools (search, lookup, query…) and calls passing an identifier the user wrote are
exempt.

A rejected call carries `feedback`: the text a runtime sends back to the model for its retry.
Calls of the same tool after a rejected or failed one are its retries: `attempt` counts them.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import numpy as np

import agents.checking.provenance as provenance
from agents.checking.formats import AgentRun, ToolCall
from stages.common import values
from stages.common.text import (
    NUMBER_RE,
    canonical_number,
    content_tokens,
    dates_in,
    sentence_spans,
    stem,
)
from stages.guardrails import groundedness
from stages.models import embeddings

VERSION = "1.7.0"
# Non-standard type names -> JSON Schema; None drops the type (anything goes).
TYPE_NAMES: dict[str, str | None] = {
    "dict": "object",
    "hashmap": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "tuple": "array",
    "list": "array",
    "arraylist": "array",
    "long": "integer",
    "int": "integer",
    "char": "string",
    "str": "string",
    "bool": "boolean",
    "any": None,
    "": None,
}
STANDARD_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
SCHEMA_KEYS_WITH_SCHEMAS = ("items", "additionalProperties", "not", "contains")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")

URL_RE = re.compile(r"\b(?:https?|ftp|s3|gs)://[^\s\"'<>]+|\bwww\.[^\s\"'<>]+", re.IGNORECASE)
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
PATH_RE = re.compile(
    r"(?:^|(?<=\s))(?:~|\.{1,2}|[A-Za-z]:)?[\\/](?:[\w.@-]+[\\/])*[\w.@-]+|"
    r"\b[\w-]+(?:[\\/][\w.-]+)+\.[A-Za-z0-9]{1,5}\b"
)
# Letters and digits mixed, with or without a separator: INV-2026-042, ord_9Xk2, A1B2C3D4.
CODE_RE = re.compile(
    r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+\b"
    r"|\b(?=\w*\d)(?=\w*[A-Za-z])[A-Za-z0-9]{8,}\b"
)
# Seven digits or more (separators allowed): an account, order, phone or card number.
LONG_NUMBER_RE = re.compile(r"(?<![\w.])\d(?:[ -]?\d){6,}(?![\w.])")
ID_NAME_RE = re.compile(
    r"(?:^|_)(?:id|ids|uuid|guid|account|acct|invoice|ticket|sku|iban|email|e_mail|url|uri|"
    r"link|path|filepath|filename)(?:$|_)|(?:account|order|invoice|ticket|phone|card|serial|"
    r"tracking|customer|user)_?(?:number|no|num|id)$|(?<=[a-z])(?:Id|ID|Url|Number)$",
)
# Values an identifier-named argument may hold without being an identifier.
PLAIN_VALUE_RE = re.compile(r"^[A-Za-z][a-z]*(?:[ _][a-z]+)*$")


@dataclass
class Validation:
    call_id: str
    tool: str
    attempt: int
    args: str  # JSON text of the arguments as called
    status: str  # valid | invalid
    errors: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)  # identifiers of no known origin
    feedback: str = ""  # for a rejected call: what a runtime sends the model for its retry
    position: int = 0  # the call's turn: calls of one turn are parallel, not retries
    fit: ToolFit | None = None  # how the tool-fit check decided (None: not checked)
    warnings: list[str] = field(default_factory=list)  # reported, never a rejection
    provenance: list[dict] = field(default_factory=list)  # where each argument value came from

    def as_row(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "attempt": self.attempt,
            "args": self.args,
            "status": self.status,
            "errors": self.errors,
            "warnings": self.warnings,
            "invented_identifiers": self.invented,
            "argument_provenance": self.provenance,
            "tool_fit": None if self.fit is None else self.fit.as_row(),
            "feedback": self.feedback,
        }


# ---------------------------------------------------------------- schemas


def to_json_schema(schema: Any, *, closed: bool = True) -> dict:
    """A declared parameter schema as standard JSON Schema: non-standard type names mapped,
    objects with `properties` closed to undeclared keys (unless they say otherwise)."""
    if not isinstance(schema, dict):
        return {}
    out = copy.deepcopy(schema)
    _normalize(out, closed)
    if "type" not in out and "properties" in out:
        out["type"] = "object"
    return out


def _map_type(value: Any) -> Any:
    if isinstance(value, list):
        mapped = [_map_type(v) for v in value]
        return None if None in mapped else mapped
    if not isinstance(value, str):
        return value
    if value in STANDARD_TYPES:
        return value
    lowered = value.lower()
    if lowered in STANDARD_TYPES:
        return lowered
    return TYPE_NAMES.get(lowered)  # an unknown type name constrains nothing


def _normalize(node: dict, closed: bool) -> None:
    if "type" in node:
        mapped = _map_type(node["type"])
        if mapped is None:
            del node["type"]
        else:
            node["type"] = mapped
    # BFCL writes "optional": true on properties and `default` values of the wrong type
    node.pop("optional", None)
    for key in SCHEMA_KEYS_WITH_SCHEMAS:
        if isinstance(node.get(key), dict):
            _normalize(node[key], closed)
    for key in SCHEMA_LISTS:
        for child in node.get(key) or []:
            if isinstance(child, dict):
                _normalize(child, closed)
    properties = node.get("properties")
    if isinstance(properties, dict):
        required = set(node.get("required") or [])
        for name, child in properties.items():
            if isinstance(child, dict):
                _normalize(child, closed)
                if name not in required:
                    _allow_declared_null(child)
        if closed and "additionalProperties" not in node and "patternProperties" not in node:
            node["additionalProperties"] = False
    if node.get("type") == "array" and "items" in node and node.get("items") in ({}, None):
        node.pop("items")


# "Default is None" (a Python function's optional argument, as BFCL declares them)
DEFAULT_NONE_RE = re.compile(r"(?i)\bdefaults?(?: value)?(?: is|:|=| to)?\s*(?:None|null)\b")


def _allow_declared_null(prop: dict) -> None:
    """An optional argument whose declared default is null (`"default": null`, or "Default is
    None" in its description) accepts null: the tool says so itself."""
    declared = ("default" in prop and prop["default"] is None) or bool(
        DEFAULT_NONE_RE.search(str(prop.get("description") or ""))
    )
    kind = prop.get("type")
    if not declared or kind is None:
        return
    kinds = kind if isinstance(kind, list) else [kind]
    if "null" not in kinds:
        prop["type"] = [*kinds, "null"]


# "Default value is 299792458 m/s." / "Defaults to 'EUR'" / "default: 10": the rest of that
# sentence. Not merged with DEFAULT_NONE_RE on purpose: a value needs its connector (is / : / =
# / to) and a sentence end within 80 characters, while null is declared by the bare word
# ("Default null", 4 BFCL tools) in a sentence of any length.
DEFAULT_VALUE_RE = re.compile(
    r"(?i)\bdefaults?(?: value)?(?: is|:|=| to)\s*(.{1,80}?)(?:\.(?:\s|$)|$|;)"
)


def declared_default(prop: Any) -> str:
    """What a property declares as its default, as text: its `default`, and the value a
    "Default is X" phrase of its description names ("" when it declares none)."""
    if not isinstance(prop, dict):
        return ""
    parts = [provenance.flat_text(prop["default"])] if prop.get("default") is not None else []
    parts += [m.group(1) for m in DEFAULT_VALUE_RE.finditer(str(prop.get("description") or ""))]
    return "\n".join(parts)


def _where(error: jsonschema.ValidationError) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"argument '{path}'" if path else "arguments"


def schema_errors(args: Any, schema: dict) -> list[str]:
    """Plain-words errors of `args` against a JSON Schema (empty: valid)."""
    validator_cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return [f"the tool's declared schema is not valid JSON Schema: {exc.message}"]
    validator = validator_cls(schema, format_checker=jsonschema.FormatChecker())
    errors = []
    for error in sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path)):
        if error.validator == "additionalProperties":
            known = set((error.schema.get("properties") or {}).keys())
            extra = sorted(set(error.instance) - known) if isinstance(error.instance, dict) else []
            where = "/".join(str(p) for p in error.absolute_path)
            prefix = f"{where}/" if where else ""
            errors += [f"unknown argument '{prefix}{name}'" for name in extra]
        elif error.validator == "required":
            missing = re.search(r"'([^']+)' is a required property", error.message)
            name = missing.group(1) if missing else error.message
            where = "/".join(str(p) for p in error.absolute_path)
            errors.append(f"missing required argument '{where + '/' if where else ''}{name}'")
        else:
            errors.append(f"{_where(error)}: {error.message}")
    return errors


# ---------------------------------------------------------------- provenance


def identifiers(args: Any, key: str = "") -> list[str]:
    """The identifiers in a call's arguments: URLs, e-mails, UUIDs, paths, codes, long numbers;
    and any value of an argument whose name says it is an identifier."""
    found: list[str] = []
    if isinstance(args, dict):
        for name, value in args.items():
            found += identifiers(value, str(name))
    elif isinstance(args, list):
        for value in args:
            found += identifiers(value, key)
    elif isinstance(args, bool) or args is None:
        pass
    elif isinstance(args, int | float):
        text = str(args)
        digits = re.sub(r"\D", "", text)
        if len(digits) >= 7 and isinstance(args, int) or (ID_NAME_RE.search(key) and digits):
            found.append(text)
    elif isinstance(args, str):
        found += _string_identifiers(args, key)
    return list(dict.fromkeys(found))


# the head noun of an argument's name that makes it a text the agent writes ("email_subject",
# "message_body", "invoice_note"), whatever identifier word comes before it
TEXT_HEADS = (
    "subject",
    "body",
    "message",
    "text",
    "title",
    "note",
    "notes",
    "description",
    "comment",
    "content",
    "summary",
    "reason",
    "memo",
    "caption",
    "greeting",
    "instructions",
)


def _names_text(key: str) -> bool:
    words = values.key_words(key)
    return bool(words) and words[-1].lower() in TEXT_HEADS and len(words) > 1


def _string_identifiers(value: str, key: str) -> list[str]:
    text = value.strip()
    if not text or values.moment_of(text) is not None:
        return []  # a date or time is traced as one (provenance), not as an identifier
    found = []
    for pattern in (URL_RE, EMAIL_RE, UUID_RE):
        found += [m.group(0).rstrip(".,;)") for m in pattern.finditer(text)]
    rest = text
    for item in found:
        rest = rest.replace(item, " ")
    found += [m.group(0) for m in PATH_RE.finditer(rest) if len(m.group(0)) > 2]
    for item in found:
        rest = rest.replace(item, " ")
    found += [m.group(0) for m in CODE_RE.finditer(rest)]
    found += [m.group(0) for m in LONG_NUMBER_RE.finditer(rest)]
    found = [f for f in found if not is_date(f)]
    named = (
        not found
        and not is_date(text)
        and ID_NAME_RE.search(key)
        and len(text) <= 80
        and not _names_text(key)
    )
    # an argument named as an identifier: its value is one, unless it is plain words
    if named and (any(c.isdigit() for c in text) or not PLAIN_VALUE_RE.match(text)):
        found.append(text)
    return found


SCALED_SHORT_RE = re.compile(r"(\d+(?:\.\d+)?)\s?(k|m|mm|mn|bn|b)\b", re.IGNORECASE)
SHORT_SCALES = {"k": 10**3, "m": 10**6, "mm": 10**6, "mn": 10**6, "b": 10**9, "bn": 10**9}


def _numbers(text: str) -> set[str]:
    """Numbers of a text as digits: '1,234,567' and '1234567' alike, separators dropped;
    "$1.2M" and "5k" at their value."""
    values = {canonical_number(m) for m in NUMBER_RE.findall(text)}
    values |= {re.sub(r"\D", "", m.group(0)) for m in LONG_NUMBER_RE.finditer(text)}
    for match in SCALED_SHORT_RE.finditer(text):
        value = float(match.group(1)) * SHORT_SCALES[match.group(2).lower()]
        values.add(str(int(value)) if value.is_integer() else str(value))
    return {v.replace(",", "") for v in values if v}


def known_from(text: str, identifier: str) -> bool:
    """Whether `identifier` occurs in `text`: case-insensitive, URLs without their trailing
    slash, numbers in any grouping or wording ("1 234 567", "1,234,567", "1.2 million")."""
    lowered = text.lower()
    needle = identifier.lower().rstrip("/")
    if needle and needle in lowered:
        return True
    digits = re.sub(r"[\s,-]", "", identifier)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", digits):
        value = canonical_number(digits.lstrip("-"))
        known = _numbers(text) | groundedness.figure_values(text, evidence=True)
        return value in known or value.removesuffix(".0") in known
    return False


def is_date(value: str) -> bool:
    """A date ("2022-03-11", "01-01-2021", "March 11, 2022") is a value, not an identifier."""
    numeric = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}|(?:19|20)\d\d[-/](?:19|20)?\d\d"
    return bool(dates_in(value)) or bool(re.fullmatch(numeric, value))


def origins_before(run: AgentRun, position: int, allowlist: list[str]) -> str:
    """What a call at `position` may take identifiers from: the user's and system turns, the
    results and calls before it, the allowlist."""
    parts = list(run.user_texts)
    parts += [provenance.flat_text(r.content) for r in run.results if r.position < position]
    parts += [provenance.flat_text(c.args) for c in run.calls if c.position < position]
    parts += allowlist
    return "\n".join(parts)


# ---------------------------------------------------------------- does the tool fit


def _name_words(name: str) -> str:
    """'math.factorial' / 'getUserOrders' / 'get_user_orders' as words."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[._\-/]+", " ", spaced)


def _stems(text: str) -> set[str]:
    return {stem(t) for t in content_tokens(text) if not t.isdigit()}


# Tools that take any free-text request (a search, a lookup): they fit every question. Read in
# the tool's name only: BFCL's API tools describe themselves as "Retrieve…", "Find…", and with
# the description read too 2 in 5 irrelevance calls were exempt from the fit check.
GENERIC_TOOL_RE = re.compile(
    r"\b(?:search\w*|query|queries|lookup|look up|retriev\w+|find|browse|fetch|ask|knowledge|"
    r"kb|web|docs?|documents?|faq|sql|database)\b",
    re.IGNORECASE,
)


def is_free_text_tool(name: str) -> bool:
    """A tool that takes any free-text request (search, lookup, query…), by its name."""
    return bool(GENERIC_TOOL_RE.search(_name_words(name)))


# The semantic rule: a tool fits when the cosine similarity of its name words and description
# to the request (or to one sentence of it, for a request of several tasks) is at least this.
# Chosen on BFCL's choose split (even records) by `python -m bench agent_runs`: the threshold
# catching most irrelevance calls with valid runs flagged (any cause) at most 0.01, half the
# issue's 0.02 for a margin (bench/results/agent_runs.json, tool_calls.fit_rule; bench/tool_fit.py
# says why). Adding the parameters' descriptions to the tool's text did not separate valid from
# irrelevance calls better (choose split AUC 0.900 -> 0.905-0.908, no more caught at that rate).
# None: the lexical rule only.
FIT_SIMILARITY = 0.275
FIT_MODEL = embeddings.DEFAULT_EMBEDDING_MODEL  # the packaged all-MiniLM-L6-v2, int8 ONNX
FIT_CACHE_SIZE = 4096  # texts: a run has a request and a few tools
_fit_vectors: dict[tuple[str, str], np.ndarray] = {}
_fit_unavailable: dict[str, str] = {}  # model spec -> why it could not embed
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolFit:
    """Whether a tool fits a request, how that was decided (`rule`: exempt, semantic,
    lexical) and, when it does not fit, why in plain words."""

    fits: bool
    rule: str
    similarity: float | None = None
    reason: str = ""

    def as_row(self) -> dict[str, Any]:
        similarity = None if self.similarity is None else round(self.similarity, 4)
        return {"fits": self.fits, "rule": self.rule, "similarity": similarity}


def clear_fit_cache() -> None:
    """Forget the cached vectors and any model that failed to load (tests; a new model)."""
    _fit_vectors.clear()
    _fit_unavailable.clear()


def _vectors(texts: list[str], model: str) -> np.ndarray | None:
    """L2-normalised vectors of `texts`, cached per text; None when the model cannot embed
    (not installed, files damaged): the caller falls back to the lexical rule."""
    if model in _fit_unavailable:
        return None
    found = {t: _fit_vectors.get((model, t)) for t in texts}
    missing = [t for t, v in found.items() if v is None]
    if missing:
        try:
            vectors = embeddings.embed(model, missing)
        except Exception as exc:  # any failure to load or run the model: never fail the check
            _fit_unavailable[model] = f"{type(exc).__name__}: {exc}"
            log.warning("tool fit: embedding model %s unavailable (%s); lexical rule", model, exc)
            return None
        found.update(zip(missing, vectors, strict=True))
        if len(_fit_vectors) + len(missing) > FIT_CACHE_SIZE:
            _fit_vectors.clear()
        _fit_vectors.update({(model, t): found[t] for t in missing})
    return np.stack([found[t] for t in texts])


def _request_parts(request: str) -> list[str]:
    """The request and, when it has several, each of its sentences (one task each, often)."""
    parts = [request[a:b].strip() for a, b in sentence_spans(request)]
    parts = [p for p in parts if p and p != request.strip()]
    return [request.strip(), *parts]


def fit_similarity(request: str, texts: list[str], model: str = FIT_MODEL) -> float | None:
    """The highest cosine similarity of any of `texts` (a tool's name and description, the spans
    of a result) to the request or one of its sentences, in one embedding call; None when the
    embedding model is unavailable."""
    parts = _request_parts(request)
    vectors = _vectors([*texts, *parts], model)
    if vectors is None:
        return None
    return float(np.max(vectors[len(texts) :] @ vectors[: len(texts)].T))


def tool_fit(
    request: str,
    name: str,
    description: str,
    ids_from_request: bool = False,
    threshold: float | None = FIT_SIMILARITY,
    model: str = FIT_MODEL,
) -> ToolFit:
    """Whether a declared tool fits the request. Exempt: nothing to compare (no request, or a
    tool declared without a description), a free-text tool
    (search, lookup, query…), or a call passing an identifier the user wrote
    (`ids_from_request`). Otherwise, with `threshold` set and the embedding model available, the
    semantic rule: the similarity of the tool's name words and description to the request (or
    one of its sentences) is at least `threshold`. Without the model (or `threshold` None), the
    lexical rule: the name or description shares a content word (stems) with the request. A
    call to a tool that fits in none of these ways was made for a request no declared tool
    serves."""
    if not request.strip() or not description.strip() or ids_from_request:
        # nothing to compare (a bare name such as "now" says too little to reject a call: it
        # scored 0.17 against "What time is it in Tokyo?"), or the user named the call's subject
        return ToolFit(True, "exempt")
    words = f"{_name_words(name)} {description}".strip()
    if is_free_text_tool(name):
        return ToolFit(True, "exempt")  # a free-text tool, by its name
    if threshold is not None:
        similarity = fit_similarity(request, [words], model)
        if similarity is not None:
            if similarity >= threshold:
                return ToolFit(True, "semantic", similarity)
            reason = (
                f"its name and description are not close in meaning to what the user asked "
                f"(similarity {similarity:.3f} < {threshold:g})"
            )
            return ToolFit(False, "semantic", similarity, reason)
    if _stems(request) & _stems(words):
        return ToolFit(True, "lexical")
    reason = "neither its name nor its description shares a word with what the user asked"
    return ToolFit(False, "lexical", None, reason)


# ---------------------------------------------------------------- one call, one run


def feedback_text(tool: str, errors: list[str], schema: dict | None, tools: list[str]) -> str:
    """What a runtime sends back to the model for its retry: what was wrong, what to do."""
    lines = [f"Your call to `{tool}` was rejected and not executed:"]
    lines += [f"- {e}" for e in errors]
    if schema is not None:
        shown = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        lines.append(f"Call `{tool}` again with arguments that match its schema: {shown[:1500]}")
    elif tools:
        lines.append(f"Call one of the declared tools instead: {', '.join(tools)}")
    if any("invented identifier" in e for e in errors):
        lines.append(
            "Use only identifiers the user gave or an earlier tool returned; if you do not have "
            "one, ask the user for it instead of guessing."
        )
    return "\n".join(lines)


def _without_declared_defaults(
    invented: list[str], args: Any, declared: dict | None, tool: str
) -> list[str]:
    """Drop the identifiers an argument holds because its tool declares them as its default
    ("speed_of_light: Default value is 299792458 m/s."): the tool's declaration gave them."""
    schema = (declared or {}).get(tool)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not invented or not isinstance(args, dict) or not isinstance(properties, dict):
        return invented
    given = set()
    for name, value in args.items():
        default = declared_default(properties.get(name))
        if default:
            given |= {i for i in identifiers(value, str(name)) if known_from(default, i)}
    return [i for i in invented if i not in given]


def off_request(call: ToolCall, request: str, traces: list[provenance.Trace], schema: Any) -> str:
    """Why a call is off the request on evidence that holds in any language ("" when there is
    none): nothing of what the user wrote occurs in the call's arguments, and a required
    argument has a value from no source; or the request writes no digit and a required number
    argument has a value from no source. Asked only of a call whose tool fit is poor: a
    similarity alone never rejects a call."""
    if call.args_error or not isinstance(call.args, dict):
        return ""
    required = set((schema.get("required") or []) if isinstance(schema, dict) else [])
    checked = [t for t in traces if not required or _top(t.pointer) in required]
    which = "required argument" if required else "argument"
    wanted = {t for t, _, _ in values.tokens_with_spans(request) if len(t) > 1 or t.isdigit()}
    used = {t for t, _, _ in values.tokens_with_spans(provenance.flat_text(call.args))}
    unsourced = [t.pointer for t in checked if t.status not in provenance.SOURCED]
    if unsourced and not wanted & used:
        return (
            f"nothing the user wrote occurs in its arguments and the {which}(s) "
            f"{', '.join(unsourced)} have no source"
        )
    # a number the tool needs, where the request writes no digit at all: the call's figures
    # come from nowhere, whatever words it took from the request
    numbers = [t.pointer for t in checked if t.kind == "number" and t.status != "grounded"]
    if numbers and not re.search(r"\d", request):
        return (
            f"the request writes no number and the {which}(s) {', '.join(numbers)} hold "
            "numbers from no source"
        )
    return ""  # every (required) value has a source, or the call takes the user's words


def _top(pointer: str) -> str:
    return pointer.split("/")[1].replace("~1", "/").replace("~0", "~") if pointer else ""


def verify_call(
    call: ToolCall,
    run: AgentRun,
    allowlist: list[str],
    attempt: int = 1,
    check_fit: bool = True,
    fit_threshold: float | None = FIT_SIMILARITY,
) -> Validation:
    errors: list[str] = []
    schema = None
    declared = run.tools
    if call.args_error:
        errors.append(call.args_error)
    elif declared is not None and call.name not in declared:
        errors.append(f"unknown tool '{call.name}' (declared: {', '.join(sorted(declared))})")
    elif declared is not None:
        schema = to_json_schema(declared[call.name])
        errors += schema_errors(call.args, schema)
    invented: list[str] = []
    traces: list[provenance.Trace] = []
    if not call.args_error:
        origins = origins_before(run, call.position, allowlist)
        found = identifiers(call.args)
        traces = provenance.trace_call(call, run, allowlist, set(found))
        # a value grounded, or one the agent must make up itself (an idempotency key)
        grounded = [str(t.value) for t in traces if t.status in provenance.SOURCED]
        invented = [i for i in found if not known_from(origins, i)]
        invented = _without_declared_defaults(invented, call.args, declared, call.name)
        # a value the tool's declaration (enum, default) or a message grounds is not invented
        invented = [
            i
            for i in invented
            if not (
                any(i in g for g in grounded)
                and not any(
                    i in str(t.value) and t.status not in provenance.SOURCED for t in traces
                )
            )
        ]
        errors += [
            f"invented identifier '{i}': not given by the user, an earlier tool result or "
            "the allowlist"
            for i in invented
        ]
        errors += [
            t.error(call.name)
            for t in traces
            if t.status in provenance.FLAGGED
            and not any(i in str(t.value) for i in invented)
            and (t.status == "changed" or t.kind != "identifier")
        ]
    fit = None
    warnings: list[str] = []
    if check_fit and declared is not None and call.name in declared:
        request = run.question or "\n".join(run.user_texts)
        description = run.tool_descriptions.get(call.name, "")
        from_request = any(
            known_from(request, i) for i in identifiers(call.args if not call.args_error else {})
        )
        fit = tool_fit(request, call.name, description, from_request, fit_threshold)
        if not fit.fits:
            off = off_request(call, request, traces, declared[call.name])
            if off:
                errors.append(f"tool '{call.name}' does not fit the request: {off}; {fit.reason}")
            else:
                warnings.append(f"tool '{call.name}' may not fit the request: {fit.reason}")
    status = "invalid" if errors else "valid"
    feedback = feedback_text(call.name, errors, schema, sorted(declared or {})) if errors else ""
    return Validation(
        call.call_id,
        call.name,
        attempt,
        provenance.flat_text(call.args) if not isinstance(call.args, str) else call.args,
        status,
        errors,
        invented,
        feedback,
        fit=fit,
        warnings=warnings,
        provenance=[t.as_row() for t in traces],
    )


def verify_run(
    run: AgentRun,
    allowlist: list[str],
    failed_result: set[str],
    check_fit: bool = True,
    fit_threshold: float | None = FIT_SIMILARITY,
) -> list[Validation]:
    """Every call of the run, in order. A call of a tool in a later turn than a rejected call of
    that tool, or than one whose result was an error (`failed_result`: call ids), is its next
    attempt; calls of one turn are parallel calls, each attempt 1 of its own."""
    validations = []
    attempts: dict[str, int] = {}
    failed_at: dict[str, int] = {}  # tool -> the turn of its last failed call
    for call in sorted(run.calls, key=lambda c: c.position):
        if call.name in failed_at and failed_at[call.name] < call.position:
            attempts[call.name] = attempts.get(call.name, 1) + 1
            del failed_at[call.name]
        attempt = attempts.setdefault(call.name, 1)
        validation = verify_call(call, run, allowlist, attempt, check_fit, fit_threshold)
        validation.position = call.position
        if validation.status != "valid" or call.call_id in failed_result:
            failed_at[call.name] = call.position
        validations.append(validation)
    return validations


def rejected_tools(validations: list[Validation]) -> list[Validation]:
    """The rejected calls that no valid call of the same tool in a later turn replaced."""
    return [
        v
        for v in validations
        if v.status != "valid"
        and not any(
            w.tool == v.tool and w.status == "valid" and w.position > v.position
            for w in validations
        )
    ]
