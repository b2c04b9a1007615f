"""The Parquet contracts: every table a stage reads or writes, in one place (and the blobs, files
a stage writes beside its tables, in `BLOBS`).

A stage builds each output table from its rows with `table_of(name, rows, stage=...)` (or whole
columns with `table_of_columns`), and so does every other builder of a contract table (the revise
loop, a question file's reader, the gold-evidence axis, the training scripts): every row carries
exactly the contract's fields, with values of its types, or a `ContractError` names the builder,
the row and the field. `conform(table, name)` is
the gate on what the store reads and writes: a table that lacks a column, or whose column cannot be
cast to the contract type, raises `ContractError` naming the table and the column. Extra columns are
dropped so artifacts always carry exactly the contract.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from stages.common.text import MARKER_RE

STRING_LIST = pa.list_(pa.string())

# Where a span of a document's text sits in the original file: document offsets and the anchor as
# JSON in the format's own terms ({"slide": 3}, {"sheet": "Prices", "range": "A4:C4"},
# {"start": "00:01:02.000", "end": "00:01:09.500", "speaker": "Ana"}, {"ticket": "T-42",
# "comment": 3, "author": "Bo", "date": "2026-01-02"}, {"page": 2, "box": [x0, y0, x1, y1],
# "origin": "ocr", "confidence": 0.91}); see stages/formats/anchors.py.
ANCHOR_SPAN = pa.struct([("start", pa.int64()), ("end", pa.int64()), ("anchor", pa.string())])
ANCHOR_SPANS = pa.list_(ANCHOR_SPAN)

CITATION = pa.struct(
    [
        ("evidence_id", pa.string()),
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("title", pa.string()),
        ("section_path", pa.string()),
        ("page_number", pa.int32()),
        ("version", pa.string()),
        ("published_at", pa.date32()),
        ("indexed_at", pa.timestamp("us", tz="UTC")),
        ("confidence", pa.float64()),
        ("is_stale", pa.bool_()),
        ("anchor", pa.string()),  # JSON: the anchor covering the span; null when none
    ]
)

# One atomic claim of an answer, as the guardrail scored it (stage 8).
EVIDENCE_SPAN = pa.struct(
    [
        ("evidence_id", pa.string()),
        ("doc_id", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
    ]
)
CHECK_SCORE = pa.struct([("name", pa.string()), ("version", pa.string()), ("score", pa.float64())])
CLAIM = pa.struct(
    [
        ("text", pa.string()),
        ("evidence_ids", STRING_LIST),  # cited ids; empty = checked against all evidence
        ("evidence_spans", pa.list_(EVIDENCE_SPAN)),  # the spans it was checked against
        ("score", pa.float64()),  # groundedness in [0, 1]
        ("critical", pa.bool_()),  # carries a figure, date, name, identifier or commitment
        ("status", pa.string()),  # supported | weak | unsupported | error | not_a_claim
        ("judge", pa.string()),  # verbatim | llm | nli | none | skipped | error
        ("checks", pa.list_(CHECK_SCORE)),
        ("reasons", STRING_LIST),
        # its span in the answer (null: the LLM decomposer's pieces); score is null for framing
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
    ]
)
TOOL_CALL_VALIDATION = pa.struct(
    [
        ("tool", pa.string()),
        ("attempt", pa.int32()),
        ("args", pa.string()),
        ("status", pa.string()),
        ("errors", STRING_LIST),
    ]
)
CONSISTENCY_PROBE = pa.struct(
    [
        ("claim", pa.string()),
        ("original", pa.string()),  # the claim's critical values
        ("probe_answers", STRING_LIST),
        ("agreement", pa.float64()),
        ("status", pa.string()),  # agree | diverge | not_applicable | proven | error
    ]
)
# Whether an LLM answer copied word for word from its evidence answers the question at all: one
# judge call over the answer and its cited spans (guardrails `answer_sentence_threshold`).
ANSWER_CHECK = pa.struct(
    [
        ("p_yes", pa.float64()),  # the judge's P(yes) that the evidence supports it as the answer
        ("score", pa.float64()),  # p_yes / answer_sentence_threshold, capped at 1
        ("status", pa.string()),  # supported | unsupported | error
        ("judge", pa.string()),  # llm | nli | error
    ]
)

REDACTION = pa.struct([("kind", pa.string()), ("start", pa.int64()), ("end", pa.int64())])

# One record per structured output the pipeline consumed from a model (query rewrite, generator
# JSON, confidence JSON): what was asked, whether the output passed its JSON schema, and why not.
TOOL_CALLS = pa.schema(
    [
        ("question_id", pa.string()),
        ("tool", pa.string()),  # query_rewrite | generate_answer | confidence_check
        ("attempt", pa.int32()),  # 1-based; the last attempt is the one the pipeline kept
        ("args", pa.string()),  # JSON: model id, prompt hash, round… never secrets
        ("status", pa.string()),  # valid | invalid | error
        ("errors", STRING_LIST),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {
    # a revise round's request to the generator: what the guardrails rejected in the last answer
    "revision_requests": pa.schema(
        [
            ("question_id", pa.string()),
            ("round", pa.int32()),
            ("unsupported_claims", STRING_LIST),
            ("feedback", STRING_LIST),
        ]
    ),
    # which revise round decided each question's final answer (round 0 = the first answer)
    "revision_log": pa.schema(
        [
            ("question_id", pa.string()),
            ("round", pa.int32()),
            ("action", pa.string()),
            ("overall_score", pa.float64()),
        ]
    ),
    # the same contract under one name per producer, so the data catalog can wire each one
    "rewrite_calls": TOOL_CALLS,
    "generation_calls": TOOL_CALLS,
    "confidence_calls": TOOL_CALLS,
    # Corpus snapshot: each file's path, size and sha256, and where to read it (`location`, an
    # absolute path); ingestion reads a file when it parses it and checks its sha256, so it is a
    # pure function of this table while memory stays bounded by one file. `content` holds bytes
    # only for small virtual rows (the snapshot's file dates) and for in-memory snapshots.
    "corpus_files": pa.schema(
        [
            ("path", pa.string()),
            ("size_bytes", pa.int64()),
            ("sha256", pa.string()),
            ("content", pa.binary()),
            ("location", pa.binary()),  # the OS's bytes of the path: names need not be UTF-8
        ]
    ),
    "documents": pa.schema(
        [
            ("source_id", pa.string()),
            ("doc_id", pa.string()),
            ("path", pa.string()),
            ("title", pa.string()),
            ("version", pa.string()),
            ("published_at", pa.date32()),
            ("last_modified", pa.date32()),
            ("indexed_at", pa.timestamp("us", tz="UTC")),
            ("permission_set", STRING_LIST),
            ("trust_tier", pa.string()),
            ("language", pa.string()),
            ("subject", pa.string()),
            ("supersedes", STRING_LIST),
            ("doc_type", pa.string()),
            ("text", pa.string()),
            ("anchors", ANCHOR_SPANS),  # anchors beside the text; empty for plain formats
            ("content_hash", pa.string()),
        ]
    ),
    "chunks": pa.schema(
        [
            ("source_id", pa.string()),
            ("doc_id", pa.string()),
            ("chunk_id", pa.string()),
            ("chunk_index", pa.int32()),
            ("title", pa.string()),
            ("section_path", pa.string()),
            ("page_number", pa.int32()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("text", pa.string()),
            ("is_table", pa.bool_()),
            # "ocr" when any of the chunk's text was recognised from an image (a scanned page,
            # a picture), else "text"; ocr_confidence is then the lowest OCR score among its
            # blocks (0..1), so a reader can weigh a citation of recognised text
            ("origin", pa.string()),
            ("ocr_confidence", pa.float64()),
            ("anchors", ANCHOR_SPANS),  # the document's anchor spans that overlap the chunk
            ("published_at", pa.date32()),
            ("last_modified", pa.date32()),
            ("indexed_at", pa.timestamp("us", tz="UTC")),
            ("version", pa.string()),
            ("permission_set", STRING_LIST),
            ("trust_tier", pa.string()),
            ("language", pa.string()),
            ("content_hash", pa.string()),
        ]
    ),
    "ingestion_errors": pa.schema(
        [
            ("path", pa.string()),
            ("error_kind", pa.string()),
            ("severity", pa.string()),
            ("message", pa.string()),
        ]
    ),
    # BM25 as a sparse matrix: one row per (chunk row, term) with its precomputed weight.
    "bm25_postings": pa.schema(
        [("row", pa.int32()), ("term_id", pa.int32()), ("weight", pa.float64())]
    ),
    "bm25_vocab": pa.schema(
        [("term_id", pa.int32()), ("term", pa.string()), ("df", pa.int32()), ("idf", pa.float64())]
    ),
    "questions": pa.schema(
        [
            ("question_id", pa.string()),
            ("question", pa.string()),
            ("principal", pa.string()),
            ("query_type", pa.string()),
            ("language", pa.string()),  # ISO 639-1 as detected, `und` when unsure; null: unknown
        ]
    ),
    "eligibility": pa.schema(
        [
            ("question_id", pa.string()),
            ("doc_id", pa.string()),
            ("eligible", pa.bool_()),
            ("decision", pa.string()),
            ("rule", pa.string()),
            ("reason", pa.string()),
        ]
    ),
    "retrieval_queries": pa.schema(
        [
            ("question_id", pa.string()),
            ("query_index", pa.int32()),
            ("query_text", pa.string()),
            ("rewrite_kind", pa.string()),
        ]
    ),
    "candidates": pa.schema(
        [
            ("question_id", pa.string()),
            ("pool", pa.string()),
            ("chunk_id", pa.string()),
            ("doc_id", pa.string()),
            ("bm25_score", pa.float64()),
            ("bm25_rank", pa.int32()),
            ("dense_score", pa.float64()),
            ("dense_rank", pa.int32()),
            ("fused_score", pa.float64()),
            ("rank", pa.int32()),
        ]
    ),
    "retrieval_status": pa.schema(
        [
            ("question_id", pa.string()),
            ("status", pa.string()),
            ("n_eligible_docs", pa.int32()),
            ("error", pa.string()),
        ]
    ),
    "ranked": pa.schema(
        [
            ("question_id", pa.string()),
            ("chunk_id", pa.string()),
            ("doc_id", pa.string()),
            ("rank", pa.int32()),
            ("confidence", pa.float64()),
            # the sentence the answerability judge found to state the answer (offsets in the
            # chunk's text), on that one chunk; null elsewhere and without a judge
            ("answer_start", pa.int32()),
            ("answer_end", pa.int32()),
        ]
    ),
    "rerank_status": pa.schema(
        [
            ("question_id", pa.string()),
            ("state", pa.string()),
            ("confidence", pa.float64()),
            ("is_error", pa.bool_()),
            ("refusal_hint", pa.string()),
            ("llm_verdict", pa.string()),
            ("error", pa.string()),
            # P(the top evidence answers this exact question) from the answerability judge, when
            # one is configured (it then is the confidence too); null without one
            ("answerability", pa.float64()),
            ("answerability_model", pa.string()),
            # the question's names that no source the principal may read writes (then the state
            # is not_found with confidence 0); null when every name is written or none was checked
            ("unwritten_names", pa.list_(pa.string())),
            # true when the question asks about what is not the case and no top chunk states a
            # negation (then the state is not_found with confidence 0); null when not checked
            ("negation_unstated", pa.bool_()),
        ]
    ),
    "rerank_attempts": pa.schema(
        [
            ("question_id", pa.string()),
            ("attempt", pa.int32()),
            ("query_text", pa.string()),
            ("state", pa.string()),
            ("confidence", pa.float64()),
            ("stop_reason", pa.string()),
        ]
    ),
    "evidence": pa.schema(
        [
            ("question_id", pa.string()),
            ("evidence_id", pa.string()),
            ("sub_question", pa.int32()),
            ("doc_id", pa.string()),
            ("chunk_id", pa.string()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("text", pa.string()),
            ("score", pa.float64()),
            ("title", pa.string()),
            ("section_path", pa.string()),
            ("page_number", pa.int32()),
            ("version", pa.string()),
            ("published_at", pa.date32()),
            ("indexed_at", pa.timestamp("us", tz="UTC")),
            ("is_stale", pa.bool_()),
            ("confidence", pa.float64()),
            ("anchor", pa.string()),  # JSON: the anchor covering the span; null when none
        ]
    ),
    "generations": pa.schema(
        [
            ("question_id", pa.string()),
            ("state", pa.string()),
            ("answer", pa.string()),
            ("caveat", pa.string()),
            ("citations", STRING_LIST),
            ("refusal_reason", pa.string()),
            ("missing", STRING_LIST),
            ("backend", pa.string()),
            ("model_id", pa.string()),
            ("prompt_hash", pa.string()),
            ("latency_ms", pa.float64()),
            ("stop_reason", pa.string()),
            ("attempts", pa.int32()),
            ("cached", pa.bool_()),
            ("tokens_prompt", pa.int64()),
            ("tokens_completion", pa.int64()),
            ("error", pa.string()),  # trace only: never rendered into an answer
        ]
    ),
    "attributions": pa.schema(
        [
            ("question_id", pa.string()),
            ("status", pa.string()),
            ("answer", pa.string()),
            ("rendered_answer", pa.string()),
            ("citations", pa.list_(CITATION)),
            ("unresolved_markers", STRING_LIST),
            ("unmarked_sentences", STRING_LIST),
            ("blocked_reason", pa.string()),
        ]
    ),
    "final_answers": pa.schema(
        [
            ("question_id", pa.string()),
            ("question", pa.string()),
            ("status", pa.string()),
            ("action", pa.string()),
            ("state", pa.string()),
            ("answer", pa.string()),
            ("rendered_answer", pa.string()),
            ("refusal_reason", pa.string()),
            ("missing", STRING_LIST),
            ("citations", pa.list_(CITATION)),
            ("confidence", pa.float64()),
        ]
    ),
    # One HallucinationReport per answer (run_id is added by the flow when it exports a run).
    "hallucination_reports": pa.schema(
        [
            ("question_id", pa.string()),
            ("claims", pa.list_(CLAIM)),
            ("tool_call_validations", pa.list_(TOOL_CALL_VALIDATION)),
            ("consistency_probes", pa.list_(CONSISTENCY_PROBE)),
            ("answer_check", ANSWER_CHECK),  # null: not needed (see ANSWER_CHECK)
            ("overall_score", pa.float64()),
            ("action", pa.string()),  # emit | revise | block
            ("reasons", STRING_LIST),
            ("feedback", STRING_LIST),  # for a revise: the unsupported claims, named plainly
            ("redactions", pa.list_(REDACTION)),
            ("pii_detector", pa.string()),  # presidio | regex
            ("check_versions", STRING_LIST),  # name@version of every check that ran
            ("version", pa.string()),
        ]
    ),
    # One sampled answer of a review batch (quality.review): the draft the gate judged, its
    # claims and evidence as JSON, and its sampling weight.
    "review_items": pa.schema(
        [
            ("answer_id", pa.string()),  # <run_id>/<question_id>
            ("run_id", pa.string()),
            ("question_id", pa.string()),
            ("question", pa.string()),
            ("stratum", pa.string()),  # emitted | revised | blocked | refused
            ("status", pa.string()),
            ("action", pa.string()),
            ("refusal_reason", pa.string()),
            ("draft", pa.string()),  # the answer the gate decided on; null for a refusal
            ("final_answer", pa.string()),
            ("confidence", pa.float64()),
            ("overall_score", pa.float64()),
            ("low_confidence", pa.bool_()),
            ("inclusion_probability", pa.float64()),
            ("weight", pa.float64()),  # answers of the run this one stands for
            ("claims_json", pa.string()),
            ("evidence_json", pa.string()),
            # a disagreements batch (quality/sampled_judging.py): why the item is queued, and
            # the LLM judge's claims and decision; null in a stratified sample
            ("queue_reason", pa.string()),
            ("second_opinion_json", pa.string()),
        ]
    ),
}


class ContractError(ValueError):
    """A table does not match its contract."""


# The output contract beyond its Arrow types: the values a `final_answers` row may take. The
# guardrails gate blocks a row that breaks it and the eval's format_compliance axis counts it,
# both through `final_answer_problems`.
FINAL_STATUSES = ("answered", "refused", "blocked")
GATE_ACTIONS = ("emit", "revise", "block")
REFUSAL_REASONS = (
    "insufficient_evidence",
    "no_permission",
    "stale_only",
    "conflicting_sources",
    "unsupported_language",  # the question's language is one the corpus and models cannot serve
    "technical_error",
)


def final_answer_problems(answer: dict) -> list[str]:
    """Why a `final_answers` row breaks the output contract, one message per rule (empty: it
    complies)."""
    status = answer.get("status")
    problems = []
    if status not in FINAL_STATUSES:
        problems.append(f"unknown status {status!r}")
    if answer.get("action") not in GATE_ACTIONS:
        problems.append(f"unknown action {answer.get('action')!r}")
    if status == "answered":
        problems += _answered_problems(answer)
    elif status in ("refused", "blocked") and answer.get("answer"):
        problems.append(f"a {status} answer carries answer text")
    if status == "refused" and answer.get("refusal_reason") not in REFUSAL_REASONS:
        problems.append(f"unknown refusal_reason {answer.get('refusal_reason')!r}")
    try:
        from_rows([answer], "final_answers")
    except ContractError as exc:
        problems.append(str(exc))
    return problems


def _answered_problems(answer: dict) -> list[str]:
    citations = answer.get("citations") or []
    problems = []
    if not (answer.get("answer") or "").strip():
        problems.append("answered without an answer")
    if not citations:
        problems.append("answered without citations")
    markers = set(MARKER_RE.findall(answer.get("answer") or ""))
    cited = {c.get("evidence_id") for c in citations}
    if markers - cited:
        problems.append(f"markers without a citation: {sorted(markers - cited)}")
    for c in citations:
        if not c.get("doc_id") or c.get("char_start") is None or c.get("char_end") is None:
            problems.append("citation without doc_id or offsets")
        elif c["char_start"] >= c["char_end"]:
            problems.append("citation with an empty span")
    return problems


def schema_of(name: str) -> pa.Schema:
    try:
        return SCHEMAS[name]
    except KeyError:
        raise ContractError(f"no contract named {name!r}; known: {sorted(SCHEMAS)}") from None


def conform(table: pa.Table, name: str) -> pa.Table:
    """Return `table` with exactly the contract's columns and types, or raise naming the column."""
    schema = schema_of(name)
    columns = []
    for field in schema:
        if field.name not in table.column_names:
            raise ContractError(f"table {name!r}: missing column {field.name!r}")
        column = table.column(field.name)
        if column.type != field.type:
            try:
                column = column.cast(field.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise ContractError(
                    f"table {name!r}: column {field.name!r} has type {column.type}, "
                    f"expected {field.type} ({exc})"
                ) from exc
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)


def empty(name: str) -> pa.Table:
    return schema_of(name).empty_table()


def table_of(name: str, rows: Iterable[Mapping[str, Any]], *, stage: str) -> pa.Table:
    """The contract table `name` built from the row dicts `stage` wrote, with the contract's schema.

    Strict where `from_rows` is lenient, because a stage's rows are its output: every row (and
    every struct inside it, at any depth) names each field of the contract and no other, so a
    field left out is an error, never a silent null, and a value of the wrong type (a string for a
    number, a float for an integer, which Arrow would truncate) is an error too. Each error is a
    `ContractError` naming the stage, the table, the row (its index and question_id when it has
    one) and the field."""
    schema = schema_of(name)
    rows = list(rows)
    shape = _shape(schema)
    for index, row in enumerate(rows):
        if problem := _row_problem(row, shape):
            raise ContractError(f"{_where(stage, name, index, row)}: {problem}")
    arrays = []
    for field in schema:
        values = [row[field.name] for row in rows]
        try:
            arrays.append(pa.array(values, type=field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
            index = next((i for i, v in enumerate(values) if not _converts(v, field.type)), 0)
            raise ContractError(
                f"{_where(stage, name, index, rows[index])}: field {field.name!r} "
                f"expects {field.type}, got {_shown(values[index])} ({exc})"
            ) from exc
    return pa.Table.from_arrays(arrays, schema=schema)


def table_of_columns(name: str, columns: Mapping[str, Sequence[Any]], *, stage: str) -> pa.Table:
    """The contract table `name` built column by column (for a stage that computes whole columns,
    such as the BM25 postings): exactly the contract's columns, each converted without loss (a
    float for an integer column is an error, not a truncation); errors name the stage, the table
    and the column."""
    schema = schema_of(name)
    where = f"stage {stage!r}, table {name!r}"
    if missing := [n for n in schema.names if n not in columns]:
        raise ContractError(f"{where}: missing column {missing[0]!r}" + _and_more(missing))
    if extra := [n for n in columns if n not in schema.names]:
        raise ContractError(
            f"{where}: column {extra[0]!r} is not in the contract" + _and_more(extra)
        )
    arrays = []
    for field in schema:
        values = columns[field.name]
        try:
            # inferred first, then cast safely: pa.array(..., type=int) would truncate floats
            arrays.append(pa.array(values).cast(field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise ContractError(
                f"{where}: column {field.name!r} expects {field.type}: {exc}"
            ) from exc
    return pa.Table.from_arrays(arrays, schema=schema)


def _where(stage: str, name: str, index: int, row: Any) -> str:
    question = row.get("question_id") if isinstance(row, Mapping) else None
    about = f" (question_id {question!r})" if question is not None else ""
    return f"stage {stage!r}, table {name!r}, row {index}{about}"


def _shown(value: Any) -> str:
    text = repr(value)
    return (
        f"{text[:60]}… ({type(value).__name__})"
        if len(text) > 60
        else f"{text} ({type(value).__name__})"
    )


@dataclass(frozen=True)
class _Shape:
    """What a row (or a struct inside one) must carry, read once per table from its Arrow type."""

    names: tuple[str, ...]
    keys: frozenset[str]
    integers: tuple[tuple[str, pa.DataType], ...]  # Arrow would truncate a float here, silently
    structs: tuple[tuple[str, _Shape], ...]
    struct_lists: tuple[tuple[str, _Shape], ...]


def _shape(fields: pa.Schema | pa.StructType) -> _Shape:
    fields = list(fields)
    kinds = [(f.name, f.type) for f in fields]
    return _Shape(
        names=tuple(name for name, _ in kinds),
        keys=frozenset(name for name, _ in kinds),
        integers=tuple((name, kind) for name, kind in kinds if pa.types.is_integer(kind)),
        structs=tuple((n, _shape(k)) for n, k in kinds if pa.types.is_struct(k)),
        struct_lists=tuple(
            (n, _shape(k.value_type))
            for n, k in kinds
            if pa.types.is_list(k) and pa.types.is_struct(k.value_type)
        ),
    )


def _row_problem(row: Any, shape: _Shape, path: str = "") -> str | None:
    """Why `row` does not carry exactly the fields of `shape` (recursing into structs and lists
    of them), or None."""
    if not isinstance(row, Mapping):
        where = f"field {path!r}" if path else "the row"
        return f"{where} is a {type(row).__name__}, not a mapping of the contract's fields"
    if row.keys() != shape.keys:
        missing = [n for n in shape.names if n not in row]
        if missing:
            return f"missing field {path + missing[0]!r}" + _and_more(missing)
        extra = [k for k in row if k not in shape.keys]
        return f"field {path + str(extra[0])!r} is not in the contract" + _and_more(extra)
    for name, kind in shape.integers:
        if isinstance(row[name], float):
            return f"field {path + name!r} expects {kind}, got {_shown(row[name])}"
    for name, inner in shape.structs:
        if row[name] is not None and (problem := _row_problem(row[name], inner, f"{path}{name}.")):
            return problem
    for name, inner in shape.struct_lists:
        for i, item in enumerate(row[name] or ()):
            if item is not None and (problem := _row_problem(item, inner, f"{path}{name}[{i}].")):
                return problem
    return None


def _and_more(names: list) -> str:
    return f" (and {len(names) - 1} more: {sorted(map(str, names[1:]))})" if len(names) > 1 else ""


def _converts(value: Any, kind: pa.DataType) -> bool:
    try:
        pa.array([value], type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return False
    return True


def from_rows(rows: list[dict], name: str) -> pa.Table:
    """Build a contract table from row dicts (missing keys become nulls): for tests and the
    benches' corpora made from public data sets; what the product builds goes through
    `table_of`."""
    schema = schema_of(name)
    if not rows:
        return schema.empty_table()
    unknown = set().union(*(row.keys() for row in rows)) - set(schema.names)
    if unknown:
        raise ContractError(f"table {name!r}: unknown columns {sorted(unknown)}")
    arrays = []
    for field in schema:
        try:
            arrays.append(pa.array([row.get(field.name) for row in rows], type=field.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ContractError(f"table {name!r}: column {field.name!r}: {exc}") from exc
    return pa.Table.from_arrays(arrays, schema=schema)


# Files a stage writes beside its tables, read by path rather than as Arrow: name -> format. Bump
# the format when the file's layout changes, as a table's schema change changes its fingerprint.
BLOBS: dict[str, str] = {
    # FAISS index over the rows of embeddings.npy (flat, HNSW or IVF; inner product)
    "dense.faiss": "faiss-ip-1",
    # float32 [n_chunks, dim], L2-normalised, rows in the order of the chunks table
    "embeddings.npy": "npy-float32-l2-1",
}


def fingerprint(name: str) -> str:
    """Stable hash of a contract (table schema or blob format), recorded in manifests so
    readers can detect drift."""
    described = f"{name}:{BLOBS[name]}" if name in BLOBS else schema_of(name).to_string()
    return hashlib.sha256(described.encode()).hexdigest()[:16]
