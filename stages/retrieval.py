"""Stage 3, hybrid retrieval: BM25 + dense (FAISS) fused by reciprocal rank, filters pushed down.

Source selection's decisions are applied *inside* both searches: BM25 scores of ineligible chunks
are masked before top-k selection, and FAISS only visits eligible ids (`IDSelectorBatch`). A chunk
the principal may not read therefore never becomes a candidate, however well it matches.

Two pools are searched per question: `eligible` (what answers may rest on) and `stale` (documents
the principal may read but that fail the freshness window), so later stages can tell "nothing
relevant" from "only stale evidence" without ever touching a forbidden document.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pyarrow as pa
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts
from stages.common import models, progress
from stages.common.text import tokenize

NAME = "retrieval"
VERSION = "1.0.0"

POOLS = {"eligible": ("eligible",), "stale": ("stale",)}
SPLIT_RE = re.compile(
    r"\?\s+(?=\S)|;\s+|,?\s+(?:and|also|plus)\s+(?=(?:what|how|when|where|which|who|whom|whose|is|are|"
    r"does|do|did|can|could|will|would|should|has|have)\b)",
    re.IGNORECASE,
)


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bm25_top_k: int = Field(50, ge=1)
    dense_top_k: int = Field(50, ge=1)
    rrf_k: int = Field(60, ge=1)
    bm25_weight: float = Field(1.0, ge=0)
    dense_weight: float = Field(1.0, ge=0)
    top_k: int = Field(30, ge=1, description="candidates passed on per pool")
    max_subqueries: int = Field(5, ge=1, le=5)
    decompose: bool = True
    glossary: dict[str, str] = Field({}, description="acronym or term -> expansion")
    embedding_model: str = models.DEFAULT_EMBEDDING_MODEL


# ---------------------------------------------------------------- query rewriting


def decompose(question: str) -> list[str]:
    """Split a multi-part question into its parts ("What is X and how long is Y?")."""
    parts = [p.strip(" ?.;,") for p in SPLIT_RE.split(question)]
    parts = [p for p in parts if len(tokenize(p)) >= 3]
    return parts if len(parts) > 1 else []


def expand_glossary(question: str, glossary: dict[str, str]) -> str | None:
    additions = [
        expansion
        for term, expansion in glossary.items()
        if re.search(rf"\b{re.escape(term)}\b", question, re.IGNORECASE)
        and expansion.lower() not in question.lower()
    ]
    return f"{question} ({'; '.join(additions)})" if additions else None


def rewrite(question: str, config: Config) -> list[tuple[str, str]]:
    """(query text, kind) pairs, the original first, at most `max_subqueries` in all."""
    queries = [(question, "original")]
    expanded = expand_glossary(question, config.glossary)
    if expanded:
        queries.append((expanded, "glossary"))
    if config.decompose:
        queries.extend((part, "decomposition") for part in decompose(question))
    return queries[: config.max_subqueries]


# ---------------------------------------------------------------- indexes


class Bm25Index:
    """Scores from the indexing stage's precomputed weights: one sparse column slice per query."""

    def __init__(self, postings: pa.Table, vocab: pa.Table, n_rows: int) -> None:
        self.term_ids = dict(
            zip(vocab.column("term").to_pylist(), vocab.column("term_id").to_pylist(), strict=True)
        )
        self.matrix = sp.csc_matrix(
            (
                postings.column("weight").to_numpy(),
                (postings.column("row").to_numpy(), postings.column("term_id").to_numpy()),
            ),
            shape=(n_rows, len(self.term_ids)),
        )

    def scores_for_tokens(self, tokens: list[str]) -> np.ndarray:
        """rank_bm25 semantics: every query token occurrence adds its term's column."""
        counts: dict[int, int] = defaultdict(int)
        for token in tokens:
            if token in self.term_ids:
                counts[self.term_ids[token]] += 1
        if not counts:
            return np.zeros(self.matrix.shape[0])
        columns = np.fromiter(counts.keys(), dtype=np.int64)
        weights = np.fromiter(counts.values(), dtype=np.float64)
        return np.asarray(self.matrix[:, columns] @ weights).ravel()


class Indexes:
    def __init__(self, inputs: dict[str, Any]) -> None:
        chunks: pa.Table = inputs["chunks"]
        self.chunk_ids = chunks.column("chunk_id").to_pylist()
        self.doc_ids = chunks.column("doc_id").to_pylist()
        self.rows_by_doc: dict[str, list[int]] = defaultdict(list)
        for row, doc_id in enumerate(self.doc_ids):
            self.rows_by_doc[doc_id].append(row)
        self.bm25 = Bm25Index(inputs["bm25_postings"], inputs["bm25_vocab"], len(self.chunk_ids))
        self.dense = faiss.read_index(str(Path(inputs["dense.faiss"])), faiss.IO_FLAG_MMAP)

    def bm25_scores(self, query: str) -> np.ndarray:
        return self.bm25.scores_for_tokens(tokenize(query))


def top_rows(scores: np.ndarray, allowed: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Best `k` allowed rows by score, ties broken by row for determinism; zero scores dropped."""
    if not len(allowed):
        return []
    masked = scores[allowed]
    order = np.lexsort((allowed, -masked))[:k]
    return [(int(allowed[i]), float(masked[i])) for i in order if masked[i] > 0]


def dense_rows(
    indexes: Indexes, vector: np.ndarray, allowed: np.ndarray, k: int
) -> list[tuple[int, float]]:
    if not len(allowed) or indexes.dense.ntotal == 0:
        return []
    params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed.astype(np.int64)))
    scores, ids = indexes.dense.search(vector.reshape(1, -1), min(k, len(allowed)), params=params)
    hits = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


def fuse(
    question_id: str,
    pool: str,
    queries: list[str],
    vectors: np.ndarray,
    allowed: np.ndarray,
    indexes: Indexes,
    config: Config,
) -> list[dict]:
    fused: dict[int, dict] = {}
    for query, vector in zip(queries, vectors, strict=True):
        bm25_hits = top_rows(indexes.bm25_scores(query), allowed, config.bm25_top_k)
        dense_hits = dense_rows(indexes, vector, allowed, config.dense_top_k)
        for kind, hits, weight in (
            ("bm25", bm25_hits, config.bm25_weight),
            ("dense", dense_hits, config.dense_weight),
        ):
            for rank, (row, score) in enumerate(hits, start=1):
                entry = fused.setdefault(row, _empty_candidate(question_id, pool, row, indexes))
                entry["fused_score"] += weight / (config.rrf_k + rank)
                if entry[f"{kind}_rank"] is None or rank < entry[f"{kind}_rank"]:
                    entry[f"{kind}_rank"] = rank
                entry[f"{kind}_score"] = max(entry[f"{kind}_score"] or -np.inf, score)
    ranked = sorted(fused.items(), key=lambda item: (-item[1]["fused_score"], item[0]))[
        : config.top_k
    ]
    for position, (_, entry) in enumerate(ranked, start=1):
        entry["rank"] = position
    return [entry for _, entry in ranked]


def _empty_candidate(question_id: str, pool: str, row: int, indexes: Indexes) -> dict:
    return {
        "question_id": question_id,
        "pool": pool,
        "chunk_id": indexes.chunk_ids[row],
        "doc_id": indexes.doc_ids[row],
        "bm25_score": None,
        "bm25_rank": None,
        "dense_score": None,
        "dense_rank": None,
        "fused_score": 0.0,
        "rank": 0,
    }


# ---------------------------------------------------------------- stage entry point


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = inputs["questions"].to_pylist()
    decisions = defaultdict(lambda: defaultdict(list))
    for row in inputs["eligibility"].select(["question_id", "doc_id", "decision"]).to_pylist():
        decisions[row["question_id"]][row["decision"]].append(row["doc_id"])
    query_rows = []
    rewrites = {}
    for question in questions:
        rewrites[question["question_id"]] = rewrite(question["question"], config)
        for index, (text, kind) in enumerate(rewrites[question["question_id"]]):
            query_rows.append(
                {
                    "question_id": question["question_id"],
                    "query_index": index,
                    "query_text": text,
                    "rewrite_kind": kind,
                }
            )
    candidates, statuses = [], []
    try:
        indexes = Indexes(inputs)
        all_queries = [row["query_text"] for row in query_rows]
        all_vectors = (
            models.embed(config.embedding_model, all_queries) if indexes.chunk_ids else None
        )
    except Exception as exc:  # an index or model failure is a technical error for every question
        message = f"{type(exc).__name__}: {exc}"
        statuses = [_status(q["question_id"], "error", 0, message) for q in questions]
        return _outputs(query_rows, [], statuses)
    offset = 0
    for question in progress.track(questions, "retrieving"):
        qid = question["question_id"]
        texts = [text for text, _ in rewrites[qid]]
        vectors = all_vectors[offset : offset + len(texts)] if all_vectors is not None else None
        offset += len(texts)
        eligible_docs = decisions[qid]["eligible"]
        try:
            for pool, pool_decisions in POOLS.items():
                docs = [d for decision in pool_decisions for d in decisions[qid][decision]]
                allowed = np.array(
                    sorted(r for d in docs for r in indexes.rows_by_doc.get(d, [])), dtype=np.int64
                )
                if len(allowed) and vectors is not None:
                    candidates.extend(fuse(qid, pool, texts, vectors, allowed, indexes, config))
            statuses.append(_status(qid, "ok", len(eligible_docs), None))
        except Exception as exc:
            statuses.append(
                _status(qid, "error", len(eligible_docs), f"{type(exc).__name__}: {exc}")
            )
    return _outputs(query_rows, candidates, statuses)


def _status(question_id: str, status: str, n_eligible: int, error: str | None) -> dict:
    return {
        "question_id": question_id,
        "status": status,
        "n_eligible_docs": n_eligible,
        "error": error,
    }


def _outputs(
    query_rows: list[dict], candidates: list[dict], statuses: list[dict]
) -> dict[str, pa.Table]:
    return {
        "retrieval_queries": contracts.from_rows(query_rows, "retrieval_queries"),
        "candidates": contracts.from_rows(candidates, "candidates"),
        "retrieval_status": contracts.from_rows(statuses, "retrieval_status"),
    }
