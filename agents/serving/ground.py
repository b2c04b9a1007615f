"""Ground any tool's output, not only the knowledge base's: given the query and what a tool
returned (JSON, text, an HTTP status, an exception), the same grounded result as `search`.

- an error (an exception, HTTP status >= 400) -> technical_error, its kind read from the status
  and the exception: timeout or unavailable, rate limit, authorization or configuration, unknown
- nothing (null, "", [], {}, only empty values) -> not_found
- content -> its passages indexed by the indexing stage in memory, then retrieval, rerank and
  evidence judge them against the query exactly as they judge the knowledge base's chunks
  (thresholds, unwritten names, negation, re-query), so a result about another client is not
  found whatever the tool said
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, Field

from agents.serving import result as results
from agents.serving.engine import Engine
from stages import contracts, indexing

log = logging.getLogger(__name__)
MAX_PASSAGES = 200
PASSAGE_CHARS = 900  # about one ingestion chunk (stages.ingestion chunk_size)
TOOL_STAGE = "ground-tool-result"  # names the builder in a contract error


class ToolOutput(BaseModel):
    """A tool's raw result: its output, and how the call ended."""

    output: Any = Field(None, description="what the tool returned: JSON value or text")
    http_status: int | None = Field(None, ge=100, le=599, description="the HTTP status, if any")
    error: str | dict[str, Any] | None = Field(
        None, description='an exception: "TimeoutError: ..." or {"type": ..., "message": ...}'
    )
    tool_name: str | None = Field(None, description="titles the passages, e.g. crm_lookup")


def error_kind_of(http_status: int | None, error: str | dict[str, Any] | None) -> str | None:
    """The technical-error kind of a failed call; None when the call did not fail."""
    if isinstance(error, dict):
        text = f"{error.get('type', '')} {error.get('message', '')}".lower()
    else:
        text = (error or "").lower()
    failed = bool(text.strip()) or (http_status is not None and http_status >= 400)
    if not failed:
        return None
    if http_status in (408, 504) or re.search(r"time ?out|timed out|deadline", text):
        return "timeout"
    if http_status == 429 or re.search(r"rate.?limit|too many requests|quota", text):
        return "rate_limit"
    if http_status in (401, 403, 407) or re.search(
        r"auth|permission|forbidden|credential|api.?key|config|not set|missing setting", text
    ):
        return "auth"
    if http_status in (502, 503) or re.search(
        r"unavailable|connect|refused|unreachable|reset|dns|network|no route", text
    ):
        return "unavailable"
    return "unknown"


def passages(output: Any) -> list[tuple[str, str]]:
    """(section, text) passages of a tool's output: one per record of a JSON list, one per
    field of an object, text split at blank lines into passages of at most PASSAGE_CHARS."""
    if isinstance(output, str):
        stripped = output.strip()
        if stripped[:1] in ("{", "["):
            try:
                return passages(json.loads(stripped))
            except ValueError:
                pass
        return [(f"part {i}", t) for i, t in enumerate(_split(stripped), start=1)]
    if isinstance(output, list):
        found = []
        for i, item in enumerate(output, start=1):
            text = _flat(item)
            if text:
                found += [(f"item {i}", t) for t in _split(text)]
        return found[:MAX_PASSAGES]
    if isinstance(output, dict):
        nested = [k for k, v in output.items() if isinstance(v, list) and v]
        if len(nested) == 1 and len(output) <= 3:  # {"results": [...], "total": 3}
            return passages(output[nested[0]])
        text = _flat(output)
        return [("result", t) for t in _split(text)] if text else []
    text = _flat(output)
    return [("result", text)] if text else []


def _flat(value: Any) -> str:
    """A JSON value as plain text ("key: value; ..."); empty when it holds nothing."""
    if value is None:
        return ""
    if isinstance(value, dict):
        parts = [f"{k}: {_flat(v)}" for k, v in value.items() if _flat(v)]
        return "; ".join(parts)
    if isinstance(value, list):
        return "; ".join(t for t in (_flat(v) for v in value) if t)
    return str(value).strip()


def _split(text: str) -> list[str]:
    chunks: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        while paragraph:
            cut = paragraph[:PASSAGE_CHARS]
            if len(paragraph) > PASSAGE_CHARS and " " in cut:
                cut = cut[: cut.rindex(" ")]
            chunks.append(cut.strip())
            paragraph = paragraph[len(cut) :].strip()
    return [c for c in chunks if c][:MAX_PASSAGES]


def ground_tool_result(
    engine: Engine, query: str, raw: ToolOutput, query_type: str | None = None
) -> results.ToolResult:
    """The grounded result of a tool's raw output for `query` (see the module docstring)."""
    kind = error_kind_of(raw.http_status, raw.error)
    if kind:
        return results.technical_error(engine.agents, query, kind, query_type)
    found = passages(raw.output)
    if not found:
        return results.not_found(engine.agents, query, query_type)
    try:
        tables = _judged(engine, query, query_type, found, raw.tool_name or "tool output")
    except Exception:
        log.exception("grounding a tool result failed")
        return results.technical_error(engine.agents, query, "unknown", query_type)
    return engine.result_from(tables, query, query_type)


def tool_chunks(found: list[tuple[str, str]], title: str) -> pa.Table:
    """The `chunks` table of a tool's passages, every passage a document of its own that any
    principal may read; built strictly (`contracts.table_of`), so a field the contract gains
    or renames fails here by name instead of reaching the stages as a silent null."""
    rows = []
    for i, (section, text) in enumerate(found):
        doc_id = f"tool-{i + 1}"
        rows.append(
            {
                "source_id": f"tool:{doc_id}",
                "doc_id": doc_id,
                "chunk_id": f"{doc_id}#0000",
                "chunk_index": 0,
                "title": title,
                "section_path": section,
                "page_number": None,
                "char_start": 0,
                "char_end": len(text),
                "text": text,
                "is_table": False,
                "origin": "text",
                "ocr_confidence": None,
                "anchors": None,
                # a tool's output carries no dates, version, language or file to hash
                "published_at": None,
                "last_modified": None,
                "indexed_at": None,
                "version": None,
                "permission_set": ["everyone"],
                "trust_tier": "verified",
                "language": None,
                "content_hash": None,
            }
        )
    return contracts.table_of("chunks", rows, stage=TOOL_STAGE)


def tool_eligibility(question_id: str, chunks: pa.Table) -> pa.Table:
    """Every passage of `chunks` eligible for the question (strict, as `tool_chunks`)."""
    rows = [
        {
            "question_id": question_id,
            "doc_id": doc_id,
            "eligible": True,
            "decision": "eligible",
            "rule": "",
            "reason": "tool output",
        }
        for doc_id in chunks.column("doc_id").to_pylist()
    ]
    return contracts.table_of("eligibility", rows, stage=TOOL_STAGE)


def _judged(engine: Engine, query: str, query_type, found, title: str) -> dict[str, Any]:
    """Retrieval, rerank and evidence over an in-memory index of the passages."""
    chunks = tool_chunks(found, title)
    built = indexing.run({"chunks": chunks}, engine.config.stage_config("indexing"))
    questions = engine.question(query, "tool", query_type)
    eligibility = tool_eligibility(questions.column("question_id")[0].as_py(), chunks)
    with tempfile.TemporaryDirectory(prefix="grounding-tool-") as folder:
        blobs = {}
        for name in ("dense.faiss", "embeddings.npy"):
            blobs[name] = Path(folder) / name
            blobs[name].write_bytes(built[name])
        tables = {
            "questions": questions,
            "eligibility": eligibility,
            "chunks": chunks,
            "bm25_postings": built["bm25_postings"],
            "bm25_vocab": built["bm25_vocab"],
            **blobs,
        }
        return engine.run_search_stages(tables, ("retrieval", "rerank", "evidence"))
