"""Hybrid search over the indexing stage's artifacts, shared by retrieval and rerank's re-query.

Filters are applied inside both searches: BM25 scores outside `allowed` rows are never ranked, and
FAISS visits only allowed ids (an `IDSelectorBatch` in the search parameters; for an approximate
index and a small allowed set, an exact search over just those vectors). A chunk the principal
may not read can therefore never become a candidate, however well it matches.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from stages.common import names
from stages.common.text import tokenize

EXACT_SUBSET_LIMIT = 20_000  # below this many allowed rows an exact scan beats graph/IVF search


@dataclass(frozen=True)
class SearchParams:
    bm25_top_k: int = 50
    dense_top_k: int = 50
    rrf_k: int = 60
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    top_k: int = 30
    hnsw_ef_search: int = 128
    ivf_nprobe: int = 16


class Bm25Index:
    """Scores from precomputed weights: one sparse column slice and a dot product per query."""

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
        self._folded: dict[str, list[int]] | None = None  # `written`'s index
        self._folded_sorted: list[str] = []

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

    def written(self, allowed: np.ndarray) -> names.Vocabulary:
        """The terms of the `allowed` rows (a boolean mask), accent-folded, for the name check."""
        if self._folded is None:  # built on first use: only the name check needs it
            self._folded = defaultdict(list)
            for term, column in self.term_ids.items():
                for form in names.folded_forms(term):
                    self._folded[form].append(column)
            self._folded_sorted = sorted(self._folded)
        folded, ordered = self._folded, self._folded_sorted
        indptr, indices = self.matrix.indptr, self.matrix.indices

        def occurs(term: str) -> bool:
            return any(
                allowed[indices[indptr[c] : indptr[c + 1]]].any() for c in folded.get(term, ())
            )

        def starting(prefix: str) -> list[str]:
            start = bisect.bisect_left(ordered, prefix)
            end = bisect.bisect_left(ordered, prefix + "\uffff")
            return [term for term in ordered[start:end] if occurs(term)]

        return names.Vocabulary(occurs, starting)


def load_faiss(path: Path) -> Any:
    """Memory-mapped when the index type allows it, so large indexes are not read into RAM."""
    try:
        return faiss.read_index(str(path), faiss.IO_FLAG_MMAP)
    except RuntimeError:
        return faiss.read_index(str(path))


class Indexes:
    """The chunk table's row order ties BM25 rows, FAISS ids and the embedding matrix together."""

    def __init__(self, inputs: dict[str, Any]) -> None:
        chunks: pa.Table = inputs["chunks"]
        self.chunk_ids = chunks.column("chunk_id").to_pylist()
        self.doc_ids = chunks.column("doc_id").to_pylist()
        self.rows_by_doc: dict[str, list[int]] = defaultdict(list)
        for row, doc_id in enumerate(self.doc_ids):
            self.rows_by_doc[doc_id].append(row)
        self.bm25 = Bm25Index(inputs["bm25_postings"], inputs["bm25_vocab"], len(self.chunk_ids))
        self.dense = load_faiss(Path(inputs["dense.faiss"]))
        self.vectors = np.load(Path(inputs["embeddings.npy"]), mmap_mode="r")

    def rows_for_docs(self, doc_ids: list[str]) -> np.ndarray:
        rows = sorted(r for d in doc_ids for r in self.rows_by_doc.get(d, []))
        return np.array(rows, dtype=np.int64)

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
    indexes: Indexes, vector: np.ndarray, allowed: np.ndarray, k: int, params: SearchParams
) -> list[tuple[int, float]]:
    if not len(allowed) or indexes.dense.ntotal == 0:
        return []
    k = min(k, len(allowed))
    if isinstance(indexes.dense, faiss.IndexFlat) or len(allowed) > EXACT_SUBSET_LIMIT:
        selector = faiss.IDSelectorBatch(allowed)
        if isinstance(indexes.dense, faiss.IndexHNSW):
            search = faiss.SearchParametersHNSW(sel=selector, efSearch=params.hnsw_ef_search)
        elif isinstance(indexes.dense, faiss.IndexIVF):
            search = faiss.SearchParametersIVF(sel=selector, nprobe=params.ivf_nprobe)
        else:
            search = faiss.SearchParameters(sel=selector)
        scores, ids = indexes.dense.search(vector.reshape(1, -1), k, params=search)
        hits = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
    else:
        similarities = np.asarray(indexes.vectors[allowed]) @ vector
        hits = [(int(allowed[i]), float(similarities[i])) for i in np.argsort(-similarities)[:k]]
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))


@dataclass
class Hit:
    """One fused candidate row: its best rank and score in each search, and the fused result."""

    row: int  # row of the chunks table (and of the FAISS index and embedding matrix)
    bm25_score: float | None = None
    bm25_rank: int | None = None
    dense_score: float | None = None
    dense_rank: int | None = None
    fused_score: float = 0.0  # sum over queries and searches of weight / (rrf_k + rank)
    rank: int = 0  # position after fusion, from 1

    def scores(self) -> dict[str, float | int | None]:
        """The candidate columns (everything but the row)."""
        return {name: value for name, value in vars(self).items() if name != "row"}

    def add(self, kind: str, rank: int, score: float, weight: float, rrf_k: int) -> None:
        """Fold one search's hit in: `kind` is bm25 or dense."""
        self.fused_score += weight / (rrf_k + rank)
        best_rank = getattr(self, f"{kind}_rank")
        if best_rank is None or rank < best_rank:
            setattr(self, f"{kind}_rank", rank)
        best_score = getattr(self, f"{kind}_score")
        setattr(self, f"{kind}_score", score if best_score is None else max(best_score, score))


def hybrid_search(
    indexes: Indexes,
    queries: list[str],
    vectors: np.ndarray,
    allowed: np.ndarray,
    params: SearchParams,
) -> list[Hit]:
    """Reciprocal-rank fusion of BM25 and dense hits over all `queries`, best `top_k` rows."""
    fused: dict[int, Hit] = {}
    for query, vector in zip(queries, vectors, strict=True):
        bm25_hits = top_rows(indexes.bm25_scores(query), allowed, params.bm25_top_k)
        dense_hits = dense_rows(indexes, vector, allowed, params.dense_top_k, params)
        for kind, hits, weight in (
            ("bm25", bm25_hits, params.bm25_weight),
            ("dense", dense_hits, params.dense_weight),
        ):
            if weight == 0:
                continue
            for rank, (row, score) in enumerate(hits, start=1):
                fused.setdefault(row, Hit(row)).add(kind, rank, score, weight, params.rrf_k)
    ranked = sorted(fused.values(), key=lambda hit: (-hit.fused_score, hit.row))[: params.top_k]
    for position, hit in enumerate(ranked, start=1):
        hit.rank = position
    return ranked
