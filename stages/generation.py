"""Stage 6, constrained generation: an answer whose every sentence cites evidence, or a refusal.

The result state from rerank reaches the backend as structured content, never an empty string:
`not_found` and `technical_error` arrive with `is_error: true` and an instruction not to answer
from the model's own knowledge. A refusal is structured (`answer: null`, `refusal_reason`,
`missing`), and a technical error never leaks internal details into the answer text.

Backends implement `Backend.generate(request) -> Output`. This module ships the deterministic
`extractive` backend (composes the answer from evidence spans, each with its marker).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from typing import Any, Literal, Protocol

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts

NAME = "generation"
VERSION = "1.1.0"
PROMPT_VERSION = "1"

REFUSAL_REASONS = (
    "insufficient_evidence",
    "no_permission",
    "stale_only",
    "conflicting_sources",
    "technical_error",
)
STATE_INSTRUCTIONS = {
    "success": "Answer only from the evidence. Cite an evidence id for every claim.",
    "low_relevance": "The evidence is only partly relevant: answer with a caveat, or refuse.",
    "not_found": "No relevant evidence. Do not answer from your own knowledge: refuse.",
    "technical_error": "Retrieval failed. Do not answer from your own knowledge: refuse.",
}
LOW_RELEVANCE_CAVEAT = "The available sources only partly match this question; please verify."
STALE_CAVEAT = "Some of these sources are older than the freshness window; newer terms may apply."


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["extractive"] = "extractive"
    sentences_per_part: int = Field(2, ge=1, le=5)
    second_sentence_ratio: float = Field(0.85, ge=0, le=1)


class EvidenceItem(BaseModel):
    evidence_id: str
    text: str
    sub_question: int
    score: float
    is_stale: bool


class Request(BaseModel):
    """What every backend receives: the question, the state as data, and packaged evidence."""

    question: str
    state: str
    is_error: bool
    instruction: str
    refusal_hint: str | None
    sub_questions: list[str]
    evidence: list[EvidenceItem]


class Output(BaseModel):
    answer: str | None
    citations: list[str]
    refusal_reason: str | None
    missing: list[str]
    caveat: str | None = None
    model_id: str
    stop_reason: str


class Backend(Protocol):
    def generate(self, request: Request) -> Output: ...


class ExtractiveBackend:
    """Deterministic: the best span(s) per question part, verbatim, each with its marker."""

    model_id = "extractive-v1"

    def __init__(self, config: Config) -> None:
        self.config = config

    def generate(self, request: Request) -> Output:
        if request.is_error or request.state not in ("success", "low_relevance"):
            return self._refusal(request, request.refusal_hint or _default_reason(request.state))
        if request.refusal_hint == "stale_only":  # only outdated documents would answer this
            return self._refusal(request, "stale_only")
        by_part: dict[int, list[EvidenceItem]] = defaultdict(list)
        for item in request.evidence:
            by_part[item.sub_question].append(item)
        chosen, missing = [], []
        for part, sub_question in enumerate(request.sub_questions):
            items = sorted(by_part.get(part, []), key=lambda e: -e.score)
            if not items:
                missing.append(sub_question)
                continue
            keep = [
                i for i in items if i.score >= self.config.second_sentence_ratio * items[0].score
            ]
            chosen.extend(keep[: self.config.sentences_per_part])
        if not chosen:
            return self._refusal(request, "insufficient_evidence")
        unique = list({item.evidence_id: item for item in chosen}.values())
        sentences = [f"{_as_sentence(item.text)} [{item.evidence_id}]" for item in unique]
        caveats = []
        if request.state == "low_relevance":
            caveats.append(LOW_RELEVANCE_CAVEAT)
        if any(item.is_stale for item in unique):
            caveats.append(STALE_CAVEAT)
        return Output(
            answer=" ".join(sentences),
            citations=[item.evidence_id for item in unique],
            refusal_reason=None,
            missing=missing,
            caveat=" ".join(caveats) or None,
            model_id=self.model_id,
            stop_reason="complete" if not missing else "partial",
        )

    def _refusal(self, request: Request, reason: str) -> Output:
        return Output(
            answer=None,
            citations=[],
            refusal_reason=reason,
            missing=request.sub_questions,
            model_id=self.model_id,
            stop_reason="refusal",
        )


def _default_reason(state: str) -> str:
    return "technical_error" if state == "technical_error" else "insufficient_evidence"


def _as_sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text.endswith((".", "!", "?")) else text + "."


def make_backend(config: Config) -> Backend:
    return ExtractiveBackend(config)


def build_request(
    question: dict, status: dict | None, evidence: list[dict], subs: list[str]
) -> Request:
    state = status["state"] if status else "technical_error"
    return Request(
        question=question["question"],
        state=state,
        is_error=state in ("not_found", "technical_error"),
        instruction=STATE_INSTRUCTIONS[state],
        refusal_hint=status["refusal_hint"] if status else None,
        sub_questions=subs or [question["question"]],
        evidence=[EvidenceItem.model_validate(e) for e in evidence],
    )


def prompt_hash(request: Request) -> str:
    payload = json.dumps({"v": PROMPT_VERSION, **request.model_dump()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    statuses = {r["question_id"]: r for r in inputs["rerank_status"].to_pylist()}
    evidence = defaultdict(list)
    for row in inputs["evidence"].to_pylist():
        evidence[row["question_id"]].append(row)
    subs = defaultdict(list)
    for row in inputs["retrieval_queries"].to_pylist():
        if row["rewrite_kind"] == "decomposition":
            subs[row["question_id"]].append(row["query_text"])
    backend = make_backend(config)
    rows = []
    for question in inputs["questions"].to_pylist():
        qid = question["question_id"]
        request = build_request(question, statuses.get(qid), evidence[qid], subs[qid])
        started = time.perf_counter()
        output = backend.generate(request)
        rows.append(
            {
                "question_id": qid,
                "state": request.state,
                **output.model_dump(exclude={"model_id", "stop_reason"}),
                "backend": config.backend,
                "model_id": output.model_id,
                "prompt_hash": prompt_hash(request),
                "latency_ms": (time.perf_counter() - started) * 1000,
                "stop_reason": output.stop_reason,
            }
        )
    return {"generations": contracts.from_rows(rows, "generations")}
