"""Stage 4, rerank: score candidates, diversify (MMR, per-document caps), decide the result state.

The default scorer is a logistic model over two features that ship offline: the MiniLM cosine
between question and chunk, and the share of the question's content words the chunk contains.
Its output is read as the probability that the chunk answers the question, so the thresholds
(0.75 high / 0.55 low by default) yield the four states:

- success         top confidence >= high
- low_relevance   low <= top confidence < high (the answer must carry a caveat)
- not_found       nothing retrieved, or top confidence < low
- technical_error retrieval or scoring failed (`is_error`; the message stays in logs only)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts
from stages.common import models, progress
from stages.common.text import STOPWORDS, content_tokens, coverage, stem

ENTITY_RE = re.compile(r"\b[A-Z][\w&-]{2,}")
NAME = "rerank"
VERSION = "1.0.0"


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    high_threshold: float = Field(0.75, ge=0, le=1)
    low_threshold: float = Field(0.55, ge=0, le=1)
    weight_dense: float = 6.0
    weight_coverage: float = 5.0
    bias: float = -5.5
    entity_floor: float = Field(
        0.5, ge=0, le=1, description="confidence factor when none of the question's names occur"
    )
    top_n: int = Field(8, ge=1, description="chunks passed to evidence extraction")
    per_doc_cap: int = Field(3, ge=1)
    mmr_lambda: float = Field(0.75, ge=0, le=1)
    embedding_model: str = models.DEFAULT_EMBEDDING_MODEL


def calibrated(dense: float, cover: float, entity_cover: float, config: Config) -> float:
    """P(chunk answers the question); a chunk about another named party is scaled down."""
    z = config.weight_dense * dense + config.weight_coverage * cover + config.bias
    entity_factor = config.entity_floor + (1 - config.entity_floor) * entity_cover
    return entity_factor / (1.0 + math.exp(-z))


def named_entities(question: str) -> set[str]:
    """Capitalised words after the first (e.g. 'Initech', 'Contoso'): the parties asked about."""
    names = {w for w in ENTITY_RE.findall(question)[1:] if not w.isupper()}
    return {stem(w.lower()) for w in names if w.lower() not in STOPWORDS}


def state_for(confidence: float | None, config: Config) -> str:
    if confidence is None or confidence < config.low_threshold:
        return "not_found"
    return "success" if confidence >= config.high_threshold else "low_relevance"


def mmr_select(
    confidences: list[float], vectors: np.ndarray, doc_ids: list[str], config: Config
) -> list[int]:
    """Greedy maximal marginal relevance with a per-document cap; returns candidate positions."""
    chosen: list[int] = []
    per_doc: Counter[str] = Counter()
    remaining = list(range(len(confidences)))
    while remaining and len(chosen) < config.top_n:

        def marginal(i: int) -> float:
            redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
            return config.mmr_lambda * confidences[i] - (1 - config.mmr_lambda) * redundancy

        best = max(remaining, key=lambda i: (marginal(i), -i))
        remaining.remove(best)
        if per_doc[doc_ids[best]] >= config.per_doc_cap:
            continue
        per_doc[doc_ids[best]] += 1
        chosen.append(best)
    return chosen


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = inputs["questions"].to_pylist()
    statuses = {r["question_id"]: r for r in inputs["retrieval_status"].to_pylist()}
    chunks: pa.Table = inputs["chunks"]
    row_of = {cid: i for i, cid in enumerate(chunks.column("chunk_id").to_pylist())}
    chunk_text = [
        f"{t} {s} {x}"
        for t, s, x in zip(
            chunks.column("title").to_pylist(),
            chunks.column("section_path").to_pylist(),
            chunks.column("text").to_pylist(),
            strict=True,
        )
    ]
    by_question: dict[tuple[str, str], list[dict]] = {}
    for candidate in inputs["candidates"].to_pylist():
        by_question.setdefault((candidate["question_id"], candidate["pool"]), []).append(candidate)
    ranked_rows, state_rows = [], []
    try:
        index = faiss.read_index(str(Path(inputs["dense.faiss"])), faiss.IO_FLAG_MMAP)
        question_vectors = models.embed(config.embedding_model, [q["question"] for q in questions])
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        rows = [_state(q["question_id"], "technical_error", None, None, message) for q in questions]
        return _outputs([], rows)
    for position, question in enumerate(progress.track(questions, "reranking")):
        qid = question["question_id"]
        status = statuses.get(qid)
        if status is None or status["status"] != "ok":
            error = status["error"] if status else "no retrieval status"
            state_rows.append(_state(qid, "technical_error", None, None, error))
            continue
        query_tokens = set(content_tokens(question["question"]))
        entities = named_entities(question["question"])
        best: dict[str, float | None] = {}
        for pool in ("eligible", "stale"):
            candidates = by_question.get((qid, pool), [])
            rows = [row_of[c["chunk_id"]] for c in candidates]
            vectors = np.vstack([index.reconstruct(r) for r in rows]) if rows else np.zeros((0, 1))
            confidences = []
            for i, row in enumerate(rows):
                tokens = set(content_tokens(chunk_text[row]))
                entity_cover = coverage(entities, tokens) if entities else 1.0
                cosine = float(vectors[i] @ question_vectors[position])
                confidences.append(
                    calibrated(cosine, coverage(query_tokens, tokens), entity_cover, config)
                )
            best[pool] = max(confidences, default=None)
            if pool != "eligible":
                continue
            doc_ids = [c["doc_id"] for c in candidates]
            for rank, i in enumerate(mmr_select(confidences, vectors, doc_ids, config), start=1):
                ranked_rows.append(
                    {
                        "question_id": qid,
                        "chunk_id": candidates[i]["chunk_id"],
                        "doc_id": doc_ids[i],
                        "rank": rank,
                        "confidence": confidences[i],
                    }
                )
        state = state_for(best["eligible"], config)
        stale_would_answer = state_for(best["stale"], config) == "success"
        hint = "stale_only" if state != "success" and stale_would_answer else None
        state_rows.append(_state(qid, state, best["eligible"], hint, None))
    return _outputs(ranked_rows, state_rows)


def _state(
    qid: str, state: str, confidence: float | None, hint: str | None, error: str | None
) -> dict:
    return {
        "question_id": qid,
        "state": state,
        "confidence": confidence,
        "is_error": state == "technical_error",
        "refusal_hint": hint,
        "error": error,
    }


def _outputs(ranked: list[dict], states: list[dict]) -> dict[str, pa.Table]:
    return {
        "ranked": contracts.from_rows(ranked, "ranked"),
        "rerank_status": contracts.from_rows(states, "rerank_status"),
    }
