"""Reading a user's question file (JSONL, JSON, CSV or Parquet) record by record.

A file comes the way people make them: a broken JSON line, a record without a question, a
question of only spaces, an id used twice, a pasted document instead of a question. Each such
record becomes one `InputError` (line, id, field, reason) and every good record is still
answered, the way pandas' readers skip bad lines with `on_bad_lines` and say which. `strict`
keeps all-or-nothing: any input error refuses the whole file, with every reason listed.

Only a file that cannot be read at all (missing, an unknown type, not Parquet) is a
`QuestionError` without strict.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from stages import contracts
from stages.common.languages import detect_language

QUESTION_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
# A question is what a person types: a few hundred characters, a long one with context pasted
# in a few thousand. Beyond this it is a document, not a question, and the embedder (256 tokens)
# and the LLM's context would only see its start.
MAX_QUESTION_CHARS = 4000
# `grounding run` / `backfill`: finished, but some records were not questions (see --help)
EXIT_INPUT_ERRORS = 3
TEXT_FIELDS = ("question_id", "principal", "query_type")
SHOWN_ERRORS = 20  # a strict refusal lists this many reasons, then a count
BUILDER = "question-file"  # names the builder in a contract error

INPUT_ERRORS_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),  # line in the file (JSONL, CSV); null for JSON and Parquet
        ("record", pa.int64()),  # 1-based record number; null for a line that is no record
        ("question_id", pa.string()),
        ("field", pa.string()),
        ("reason", pa.string()),
    ]
)


class QuestionError(ValueError):
    """The question file cannot be used at all (or, with strict, has any bad record)."""


@dataclass(frozen=True)
class InputError:
    line: int | None
    record: int | None
    question_id: str | None
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"record {self.record}"
        named = f" (id {self.question_id!r})" if self.question_id else ""
        return f"{where}{named}: {self.field}: {self.reason}"


@dataclass
class QuestionFile:
    """The good records as a `questions` table, and one error per record that was not."""

    path: Path
    table: pa.Table
    errors: list[InputError] = field(default_factory=list)

    def errors_table(self) -> pa.Table:
        return errors_table(self.errors)


def errors_table(errors: list[InputError]) -> pa.Table:
    return pa.Table.from_pylist([asdict(e) for e in errors], schema=INPUT_ERRORS_SCHEMA)


@dataclass
class _Raw:
    line: int | None
    record: int | None
    value: Any = None
    error: InputError | None = None


def read_question_file(
    path: Path, default_principal: str, default_query_type: str, strict: bool = False
) -> QuestionFile:
    """Every good record of `path`, and every bad one as an `InputError`, in file order."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise QuestionError(f"question file not found: {path}")
    readers = {".jsonl": _jsonl, ".json": _json, ".csv": _csv, ".parquet": _parquet}
    if suffix not in readers:
        allowed = ", ".join(QUESTION_SUFFIXES)
        raise QuestionError(f"{path}: unsupported question file type {suffix!r} (use {allowed})")
    raws = list(readers[suffix](path))
    table, errors = _validated(raws, default_principal, default_query_type)
    if strict and errors:
        raise QuestionError(f"{path}: {describe_errors(errors)}")
    return QuestionFile(path, table, errors)


def load_questions(path: Path, default_principal: str, default_query_type: str) -> pa.Table:
    """All-or-nothing: the questions of `path`, or a `QuestionError` naming every bad record."""
    return read_question_file(path, default_principal, default_query_type, strict=True).table


def questions_table(
    records: list[dict], default_principal: str, default_query_type: str, origin: str = "questions"
) -> pa.Table:
    """Records already in memory (an eval set, a served request) as a `questions` table; any
    bad record refuses them all, since there is no file and no user to report lines to."""
    table, errors = _validated(
        [_Raw(None, number, record) for number, record in enumerate(records, start=1)],
        default_principal,
        default_query_type,
    )
    if errors:
        raise QuestionError(f"{origin}: {describe_errors(errors)}")
    return table


def describe_errors(errors: list[InputError]) -> str:
    shown = "; ".join(str(e) for e in errors[:SHOWN_ERRORS])
    more = len(errors) - SHOWN_ERRORS
    return shown + (f"; and {more} more" if more > 0 else "")


# ---------------------------------------------------------------- readers


def _jsonl(path: Path) -> Iterator[_Raw]:
    record = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield _Raw(number, None, error=_error(number, None, "line", _not_utf8(exc)))
                continue
            if not text.strip():
                continue
            record += 1
            try:
                yield _Raw(number, record, json.loads(text))
            except json.JSONDecodeError as exc:
                reason = f"not valid JSON: {exc.msg} at column {exc.colno}"
                yield _Raw(number, record, error=_error(number, record, "line", reason))


def _json(path: Path) -> Iterator[_Raw]:
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise QuestionError(f"{path}: {_not_utf8(exc)}") from exc
    except json.JSONDecodeError as exc:
        # one broken JSON document holds no readable record: say where it breaks
        where = f"line {exc.lineno}, column {exc.colno}"
        raise QuestionError(f"{path}: not valid JSON: {exc.msg} at {where}") from exc
    if isinstance(document, dict) and isinstance(document.get("questions"), list):
        document = document["questions"]
    if not isinstance(document, list):
        raise QuestionError(
            f"{path}: a JSON question file is a list of records (or {{'questions': [...]}}), "
            f"not {_type_name(document)}"
        )
    for number, value in enumerate(document, start=1):
        yield _Raw(None, number, value)


def _csv(path: Path) -> Iterator[_Raw]:
    # surrogateescape: a byte that is not UTF-8 spoils its own row, not the file
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        record = 0
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            record += 1
            if any(_has_surrogates(cell) for cell in row):
                reason = "not valid UTF-8 text"
                yield _Raw(line, record, error=_error(line, record, "line", reason))
            elif len(row) > len(header):
                reason = f"{len(row)} fields, but the header has {len(header)}"
                yield _Raw(line, record, error=_error(line, record, "line", reason))
            else:
                # a short row leaves its last columns empty, as pandas reads it
                yield _Raw(line, record, {k: v for k, v in zip(header, row, strict=False) if v})


def _parquet(path: Path) -> Iterator[_Raw]:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as exc:
        raise QuestionError(f"{path}: not a readable Parquet file ({exc})") from exc
    for number, value in enumerate(rows, start=1):
        yield _Raw(None, number, value)


# ---------------------------------------------------------------- records


def _validated(
    raws: list[_Raw], default_principal: str, default_query_type: str
) -> tuple[pa.Table, list[InputError]]:
    errors: list[InputError] = []
    rows: list[dict] = []
    places: list[_Raw] = []
    for raw in raws:
        if raw.error:
            errors.append(raw.error)
            continue
        row, error = _record(raw, default_principal, default_query_type)
        if error:
            errors.append(error)
        else:
            rows.append(row)
            places.append(raw)
    kept, duplicates = _without_duplicates(rows, places)
    errors += duplicates
    errors.sort(key=lambda e: (e.line or 0, e.record or 0))
    # each row is written whole by `_record` (a user's omitted optional column is filled there),
    # so the table is built strictly: a field `_record` forgot fails by name, not as a null
    return contracts.table_of("questions", kept, stage=BUILDER), errors


def _record(raw: _Raw, default_principal: str, default_query_type: str):
    value, line, record = raw.value, raw.line, raw.record
    if not isinstance(value, dict):
        reason = f"wrong type: a record is an object with a 'question', not {_type_name(value)}"
        return None, _error(line, record, "record", reason)
    given_id = value.get("question_id")
    if isinstance(given_id, bool) or not isinstance(given_id, (str, int, type(None))):
        reason = f"wrong type: question_id is text or a whole number, not {_type_name(given_id)}"
        return None, _error(line, record, "question_id", reason)
    question_id = str(given_id).strip() if given_id is not None else ""
    question_id = question_id or f"q{record:05d}"
    named = question_id if given_id is not None else None
    question = value.get("question")
    if question is None:
        return None, _error(line, record, "question", "no 'question'", named)
    if not isinstance(question, str):
        reason = f"wrong type: question is text, not {_type_name(question)}"
        return None, _error(line, record, "question", reason, named)
    if not question.strip():
        return None, _error(line, record, "question", "empty (only whitespace)", named)
    if len(question) > MAX_QUESTION_CHARS:
        reason = f"{len(question):,} characters, over the limit of {MAX_QUESTION_CHARS:,}"
        return None, _error(line, record, "question", reason, named)
    for name in ("principal", "query_type"):
        given = value.get(name)
        if given is not None and not isinstance(given, str):
            reason = f"wrong type: {name} is text, not {_type_name(given)}"
            return None, _error(line, record, name, reason, named)
    text = question.strip()
    return {
        "question_id": question_id,
        "question": text,
        "principal": str(value.get("principal") or default_principal),
        "query_type": str(value.get("query_type") or default_query_type),
        "language": detect_language(text),
    }, None


def _without_duplicates(
    rows: list[dict], places: list[_Raw]
) -> tuple[list[dict], list[InputError]]:
    """The first record of each id is kept; each later one is an error naming where the first
    one is, so a user can tell which of the two to rename."""
    first: dict[str, _Raw] = {}
    kept, errors = [], []
    for row, place in zip(rows, places, strict=True):
        qid = row["question_id"]
        if qid in first:
            seen = first[qid]
            where = f"line {seen.line}" if seen.line is not None else f"record {seen.record}"
            reason = f"duplicate question_id {qid!r} (first used on {where}); this one is skipped"
            errors.append(_error(place.line, place.record, "question_id", reason, qid))
            continue
        first[qid] = place
        kept.append(row)
    return kept, errors


def _error(
    line: int | None, record: int | None, field_name: str, reason: str, qid: str | None = None
) -> InputError:
    return InputError(line, record, qid, field_name, reason)


def _type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", float: "a number"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int) else type(value).__name__)


def _not_utf8(exc: UnicodeDecodeError) -> str:
    return f"not valid UTF-8 text (byte 0x{exc.object[exc.start]:02x} at {exc.start})"


def _has_surrogates(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)
