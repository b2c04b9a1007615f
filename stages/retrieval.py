"""Stage 3, hybrid retrieval: BM25 + dense (FAISS) fused by reciprocal rank, filters pushed down.

Source selection's decisions are applied *inside* both searches (`stages.common.search`): BM25
never ranks ineligible rows and FAISS only visits eligible ids. A chunk the principal may not read
therefore never becomes a candidate, however well it matches.

Two pools are searched per question: `eligible` (what answers may rest on) and `stale` (documents
the principal may read but that fail the freshness window), so later stages can tell "nothing
relevant" from "only stale evidence" without ever touching a forbidden document.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, model_validator

from stages import contracts
from stages.common import progress, search
from stages.common.text import tokenize
from stages.models import chat, embeddings, settings
from stages.models.errors import LLMError

NAME = "retrieval"
VERSION = "1.3.1"
INPUTS = ("questions", "eligibility", "chunks", "bm25_postings", "bm25_vocab")
INPUTS += ("dense.faiss", "embeddings.npy")  # contract tables and blobs read
OUTPUTS = ("retrieval_queries", "candidates", "retrieval_status", "rewrite_calls")
PER_QUESTION = True  # cached and batched per question

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
    llm_rewriter: bool = Field(False, description="also ask the local LLM for rewrites (slow)")
    llm: settings.LLMSettings = settings.LLMSettings()
    hnsw_ef_search: int = Field(128, ge=1)
    ivf_nprobe: int = Field(16, ge=1)
    embedding_model: str = embeddings.DEFAULT_EMBEDDING_MODEL

    @model_validator(mode="before")
    @classmethod
    def _legacy_llm_keys(cls, data: Any) -> Any:
        return settings.fold_legacy_keys(data, ("llm_model_path",))


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


REWRITE_SCHEMA = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
    "required": ["queries"],
}
REWRITE_PROMPT = (
    "Rewrite the user's question into at most 3 short search queries that would find the "
    "answer in company documents (synonyms, expanded abbreviations, separate parts). "
    'Respond only with JSON like {"queries": ["..."]}.'
)


class LlmRewrites(BaseModel):
    queries: list[str] = Field(max_length=3)


def make_rewrite_client(config: Config) -> chat.ChatClient:
    return chat.chat_client(config.llm, max_tokens=96)


def llm_rewrites(client: Any, question: str) -> tuple[list[str], list[dict]]:
    """Validated rewrites from the model, with one TOOL_CALLS record per attempt; an output
    that still breaks the schema after the bounded retry, or a failure, yields no rewrites."""
    messages = [
        {"role": "system", "content": REWRITE_PROMPT},
        {"role": "user", "content": question},
    ]
    parsed, records = chat.call_validated(
        client, messages, REWRITE_SCHEMA, LlmRewrites.model_validate_json, tool="query_rewrite"
    )
    if parsed is None:  # the original query still runs; a bad rewrite must not stop retrieval
        return [], records
    rewrites = [q.strip() for q in parsed.queries if q.strip() and q.strip() != question]
    return rewrites, records


def rewrite(
    question: str, config: Config, client: chat.LazyClient | None = None
) -> tuple[list[tuple[str, str]], list[dict]]:
    """(query text, kind) pairs, the original first, at most `max_subqueries` in all, and the
    validation records of any model call made for them. `client`: the run's rewrite model."""
    queries = [(question, "original")]
    records: list[dict] = []
    expanded = expand_glossary(question, config.glossary)
    if expanded:
        queries.append((expanded, "glossary"))
    if config.decompose:
        queries.extend((part, "decomposition") for part in decompose(question))
    if config.llm_rewriter and len(queries) < config.max_subqueries:
        client = client or chat.LazyClient(lambda: make_rewrite_client(config))
        try:
            texts, records = llm_rewrites(client.get(), question)
        except LLMError as exc:  # no model: the rule-based rewrites still run
            texts = []
            args = {"model_path": config.llm.path}
            records = [chat.tool_call_record("query_rewrite", 1, "error", [str(exc)[:300]], args)]
        queries.extend((text, "llm") for text in texts)
    return queries[: config.max_subqueries], records


# ---------------------------------------------------------------- indexes


def search_params(config: Config) -> search.SearchParams:
    return search.SearchParams(
        bm25_top_k=config.bm25_top_k,
        dense_top_k=config.dense_top_k,
        rrf_k=config.rrf_k,
        bm25_weight=config.bm25_weight,
        dense_weight=config.dense_weight,
        top_k=config.top_k,
        hnsw_ef_search=config.hnsw_ef_search,
        ivf_nprobe=config.ivf_nprobe,
    )


def candidate_rows(
    question_id: str, pool: str, hits: list[search.Hit], indexes: search.Indexes
) -> list[dict]:
    return [
        {
            "question_id": question_id,
            "pool": pool,
            "chunk_id": indexes.chunk_ids[hit.row],
            "doc_id": indexes.doc_ids[hit.row],
            **hit.scores(),
        }
        for hit in hits
    ]


# ---------------------------------------------------------------- stage entry point


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = inputs["questions"].to_pylist()
    decisions = defaultdict(lambda: defaultdict(list))
    for row in inputs["eligibility"].select(["question_id", "doc_id", "decision"]).to_pylist():
        decisions[row["question_id"]][row["decision"]].append(row["doc_id"])
    query_rows, calls = [], []
    rewrites = {}
    client = chat.LazyClient(lambda: make_rewrite_client(config))  # this run's model only
    for question in questions:
        qid = question["question_id"]
        rewrites[qid], records = rewrite(question["question"], config, client)
        calls += [{"question_id": qid, **r} for r in records]
        for index, (text, kind) in enumerate(rewrites[qid]):
            query_rows.append(
                {
                    "question_id": qid,
                    "query_index": index,
                    "query_text": text,
                    "rewrite_kind": kind,
                }
            )
    candidates, statuses = [], []
    try:
        indexes = search.Indexes(inputs)
        all_queries = [row["query_text"] for row in query_rows]
        all_vectors = (
            embeddings.embed(config.embedding_model, all_queries) if indexes.chunk_ids else None
        )
    except Exception as exc:  # an index or model failure is a technical error for every question
        message = f"{type(exc).__name__}: {exc}"
        statuses = [_status(q["question_id"], "error", 0, message) for q in questions]
        return _outputs(query_rows, [], statuses, calls)
    offset = 0
    params = search_params(config)
    for question in progress.track(questions, "retrieving"):
        qid = question["question_id"]
        texts = [text for text, _ in rewrites[qid]]
        vectors = all_vectors[offset : offset + len(texts)] if all_vectors is not None else None
        offset += len(texts)
        eligible_docs = decisions[qid]["eligible"]
        try:
            for pool, pool_decisions in POOLS.items():
                docs = [d for decision in pool_decisions for d in decisions[qid][decision]]
                allowed = indexes.rows_for_docs(docs)
                if len(allowed) and vectors is not None:
                    hits = search.hybrid_search(indexes, texts, vectors, allowed, params)
                    candidates.extend(candidate_rows(qid, pool, hits, indexes))
            statuses.append(_status(qid, "ok", len(eligible_docs), None))
        except Exception as exc:
            statuses.append(
                _status(qid, "error", len(eligible_docs), f"{type(exc).__name__}: {exc}")
            )
    return _outputs(query_rows, candidates, statuses, calls)


def _status(question_id: str, status: str, n_eligible: int, error: str | None) -> dict:
    return {
        "question_id": question_id,
        "status": status,
        "n_eligible_docs": n_eligible,
        "error": error,
    }


def _outputs(
    query_rows: list[dict], candidates: list[dict], statuses: list[dict], calls: list[dict]
) -> dict[str, pa.Table]:
    return {
        "retrieval_queries": contracts.table_of("retrieval_queries", query_rows, stage=NAME),
        "candidates": contracts.table_of("candidates", candidates, stage=NAME),
        "retrieval_status": contracts.table_of("retrieval_status", statuses, stage=NAME),
        "rewrite_calls": contracts.table_of("rewrite_calls", calls, stage=NAME),
    }
