"""The stages in execution order and how artifacts flow between them (a small data catalog).

`WIRING[stage]` maps each input name (a contract table or blob) to the artifact that provides it:
another stage, or one of the two sources, `corpus` and `questions`.
"""

from __future__ import annotations

from types import ModuleType

from stages import (
    attribution,
    evidence,
    generation,
    guardrails,
    indexing,
    ingestion,
    rerank,
    retrieval,
    source_selection,
)

STAGES: dict[str, ModuleType] = {
    module.NAME: module
    for module in (
        ingestion,
        indexing,
        source_selection,
        retrieval,
        rerank,
        evidence,
        generation,
        attribution,
        guardrails,
    )
}

WIRING: dict[str, dict[str, str]] = {
    "ingestion": {"corpus_files": "corpus"},
    "indexing": {"chunks": "ingestion"},
    "source_selection": {"documents": "ingestion", "questions": "questions"},
    "retrieval": {
        "questions": "questions",
        "eligibility": "source_selection",
        "chunks": "ingestion",
        "bm25_postings": "indexing",
        "bm25_vocab": "indexing",
        "dense.faiss": "indexing",
        "embeddings.npy": "indexing",
    },
    "rerank": {
        "questions": "questions",
        "eligibility": "source_selection",
        "candidates": "retrieval",
        "retrieval_status": "retrieval",
        "retrieval_queries": "retrieval",
        "chunks": "ingestion",
        "bm25_postings": "indexing",
        "bm25_vocab": "indexing",
        "dense.faiss": "indexing",
        "embeddings.npy": "indexing",
    },
    "evidence": {
        "questions": "questions",
        "ranked": "rerank",
        "rerank_status": "rerank",
        "chunks": "ingestion",
        "retrieval_queries": "retrieval",
    },
    "generation": {
        "questions": "questions",
        "rerank_status": "rerank",
        "evidence": "evidence",
        "retrieval_queries": "retrieval",
    },
    "attribution": {"generations": "generation", "evidence": "evidence"},
    "guardrails": {
        "questions": "questions",
        "generations": "generation",
        "rerank_status": "rerank",
        "evidence": "evidence",
        "attributions": "attribution",
        "generation_calls": "generation",
        "rewrite_calls": "retrieval",
        "confidence_calls": "rerank",
    },
}

# A revise round re-runs generation with the guardrails' findings as an extra input.
REVISION_INPUT = "revision_requests"
