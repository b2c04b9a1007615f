"""Stage 5, evidence extraction: minimal sentence spans with document offsets, packaged [E1]…[En].

Each retained chunk is split into sentences; a sentence is kept only if it shares content words
with the (sub-)question it serves. Multi-part questions (the retrieval stage's decomposition
rewrites) get evidence per part, so every claim can be attributed downstream. Offsets index the
document's normalized text, so `documents.text[char_start:char_end] == evidence.text`. Each span
carries the anchor covering it in the original file (a slide, a cell range, a time range…), from
the chunk's anchor spans.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter, defaultdict
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts
from stages.common.logs import question_scope
from stages.common.text import content_tokens, sentence_match, sentence_spans, states_nothing
from stages.formats.anchors import anchor_for_span

NAME = "evidence"
VERSION = "1.4.1"
OUTPUTS = ("evidence",)  # contract tables written
INPUTS = ("questions", "ranked", "rerank_status", "chunks", "retrieval_queries")
PER_QUESTION = True  # cached and batched per question
log = logging.getLogger(__name__)

ANSWERABLE_STATES = ("success", "low_relevance")
QUANTITY_QUESTION_RE = re.compile(
    r"\b(how (much|many|long|often|soon|high|low|fast)|when|what date|which (date|version|release)|"
    r"price|cost|fee|rate|limit|percentage|version|deadline|period|cap|amount|number|"
    r"minimum|maximum|days|weeks|months|hours|years)\b",
    re.IGNORECASE,
)


# Added to the judged sentence's score: above any word-match score (at most 1.15), so it leads.
JUDGED_LIFT = 2.0


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_spans: int = Field(8, ge=1)
    min_spans: int = Field(3, ge=1, description="reached only with spans that answer something")
    per_doc_cap: int = Field(3, ge=1)
    min_span_coverage: float = Field(0.15, ge=0, le=1)
    min_span_tokens: int = Field(3, ge=1)
    freshness_window_days: int = Field(182, ge=0)
    as_of: dt.date | None = None


def _sub_questions(question: str, decompositions: list[str]) -> list[str]:
    return decompositions or [question]


def _spans_for(sub: str, chunks: list[dict], config: Config) -> list[dict]:
    """Sentences that match the sub-question, best first. The sentence rerank's answerability
    judge found to state the answer comes first whatever its word match (its score is lifted
    above every other's), so the answer quotes what the judge read."""
    sub_tokens = set(content_tokens(sub))
    wants_quantity = bool(QUANTITY_QUESTION_RE.search(sub))
    spans = []
    for chunk in chunks:
        heading = f"{chunk['title']} {chunk['section_path']}"
        judged_start, judged_end = chunk.get("answer_span") or (None, None)
        for start, end in sentence_spans(chunk["text"]):
            sentence = chunk["text"][start:end]
            judged = judged_start is not None and start < judged_end and judged_start < end
            if not judged and states_nothing(sentence, config.min_span_tokens):
                continue
            score = sentence_match(sub_tokens, sentence, heading, wants_quantity)
            lift = JUDGED_LIFT if judged else 0.0
            if score < config.min_span_coverage and not judged:
                continue
            spans.append(
                {
                    "chunk": chunk,
                    "start": chunk["char_start"] + start,
                    "end": chunk["char_start"] + end,
                    "text": sentence,
                    "score": score * (0.5 + 0.5 * chunk["confidence"]) + lift,
                }
            )
    return sorted(spans, key=lambda s: (-s["score"], s["chunk"]["chunk_id"], s["start"]))


def select_spans(per_sub: list[list[dict]], config: Config) -> list[tuple[int, dict]]:
    """Round-robin over sub-questions, best spans first, with per-document and total caps."""
    chosen: list[tuple[int, dict]] = []
    seen: set[tuple[str, int]] = set()
    per_doc: Counter[str] = Counter()
    cursors = [0] * len(per_sub)
    while len(chosen) < config.max_spans and any(
        c < len(s) for c, s in zip(cursors, per_sub, strict=True)
    ):
        for sub_index, spans in enumerate(per_sub):
            while cursors[sub_index] < len(spans):
                span = spans[cursors[sub_index]]
                cursors[sub_index] += 1
                key = (span["chunk"]["doc_id"], span["start"])
                if key in seen or per_doc[key[0]] >= config.per_doc_cap:
                    continue
                if len(chosen) >= config.min_spans and span["score"] < 0.5 * spans[0]["score"]:
                    cursors[sub_index] = len(spans)  # the rest answer this part much worse
                    break
                seen.add(key)
                per_doc[key[0]] += 1
                chosen.append((sub_index, span))
                break
            if len(chosen) >= config.max_spans:
                break
    return chosen


def _is_stale(chunk: dict, today: dt.date, window: int) -> bool:
    date = chunk["last_modified"] or chunk["published_at"]
    return date is not None and (today - date).days > window


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    today = config.as_of or dt.date.today()
    chunks = {c["chunk_id"]: c for c in inputs["chunks"].to_pylist()}
    states = {r["question_id"]: r["state"] for r in inputs["rerank_status"].to_pylist()}
    ranked = defaultdict(list)
    for row in inputs["ranked"].to_pylist():
        ranked[row["question_id"]].append(
            {
                **chunks[row["chunk_id"]],
                "confidence": row["confidence"],
                "answer_span": (row.get("answer_start"), row.get("answer_end")),
            }
        )
    decompositions = defaultdict(list)
    for row in inputs["retrieval_queries"].to_pylist():
        if row["rewrite_kind"] == "decomposition":
            decompositions[row["question_id"]].append(row["query_text"])
    rows = []
    for question in inputs["questions"].to_pylist():
        qid = question["question_id"]
        if states.get(qid) not in ANSWERABLE_STATES:
            with question_scope(qid):
                log.debug(
                    "no evidence: rerank state %s",
                    states.get(qid),
                    extra={"stage": NAME, "spans": 0},
                )
            continue
        subs = _sub_questions(question["question"], decompositions[qid])
        per_sub = [_spans_for(sub, ranked[qid], config) for sub in subs]
        chosen = select_spans(per_sub, config)
        with question_scope(qid):
            log.debug(
                "%d evidence spans for %d sub-questions from %d ranked chunks",
                len(chosen),
                len(subs),
                len(ranked[qid]),
                extra={"stage": NAME, "spans": len(chosen)},
            )
        for number, (sub_index, span) in enumerate(chosen, start=1):
            chunk = span["chunk"]
            rows.append(
                {
                    "question_id": qid,
                    "evidence_id": f"E{number}",
                    "sub_question": sub_index,
                    "doc_id": chunk["doc_id"],
                    "chunk_id": chunk["chunk_id"],
                    "char_start": span["start"],
                    "char_end": span["end"],
                    "text": span["text"],
                    "score": span["score"],
                    "title": chunk["title"],
                    "section_path": chunk["section_path"],
                    "page_number": chunk["page_number"],
                    "version": chunk["version"],
                    "published_at": chunk["published_at"],
                    "indexed_at": chunk["indexed_at"],
                    "is_stale": _is_stale(chunk, today, config.freshness_window_days),
                    "confidence": chunk["confidence"],
                    "anchor": anchor_for_span(chunk.get("anchors"), span["start"], span["end"]),
                }
            )
    return {"evidence": contracts.table_of("evidence", rows, stage=NAME)}
