"""Judgment models: a client follows the run's config, never an earlier run's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stages import contracts, rerank, retrieval
from tests.conftest import ALL_DOCS, eligibility_table

QUESTION = "What is the salary band for level L3?"


class FakeLlamaCppClient:
    """Stands in for the in-process GGUF client: its model id is the file it was built for."""

    def __init__(self, model_path, **_settings) -> None:
        self.model_id = Path(model_path).name

    def complete(self, messages, schema):
        from stages.common.llm import Completion

        if "verdict" in schema["properties"]:
            return Completion(text='{"verdict": "HIGH"}')
        return Completion(text='{"queries": ["pay range for L3"]}')


@pytest.fixture
def fake_gguf_client(monkeypatch):
    from stages.common import llm

    monkeypatch.setattr(llm, "LlamaCppClient", FakeLlamaCppClient)


def _model_ids(calls) -> list[str]:
    return [json.loads(row["args"])["model_id"] for row in calls.to_pylist()]


def _rerank_inputs(tiny_index) -> dict:
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": QUESTION, "principal": "p", "query_type": "pricing"}],
        "questions",
    )
    candidate = {
        "question_id": "q1",
        "pool": "eligible",
        "chunk_id": "hr-salaries#0000",
        "doc_id": "hr-salaries",
        "fused_score": 0.03,
        "rank": 1,
    }
    status = {"question_id": "q1", "status": "ok", "n_eligible_docs": 3, "error": None}
    return {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", dict.fromkeys(ALL_DOCS, "eligible")),
        "candidates": contracts.from_rows([candidate], "candidates"),
        "retrieval_status": contracts.from_rows([status], "retrieval_status"),
        "retrieval_queries": contracts.empty("retrieval_queries"),
    }


def test_rerank_check_uses_each_runs_own_model(tiny_index, fake_gguf_client):
    """Two runs in one process (a backfill, `grounding serve`, a Dask worker) with different
    models: the second must ask its own model, or its artifact key records a model it never used."""
    inputs = _rerank_inputs(tiny_index)
    for model in ("first.gguf", "second.gguf"):
        config = rerank.Config(llm_check_query_types=["pricing"], llm_model_path=model)
        assert _model_ids(rerank.run(inputs, config)["confidence_calls"]) == [model]


def test_retrieval_rewriter_uses_each_runs_own_model(tiny_index, fake_gguf_client):
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": QUESTION, "principal": "p", "query_type": "general"}],
        "questions",
    )
    inputs = {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", dict.fromkeys(ALL_DOCS, "eligible")),
    }
    for model in ("first.gguf", "second.gguf"):
        config = retrieval.Config(llm_rewriter=True, llm_model_path=model)
        assert _model_ids(retrieval.run(inputs, config)["rewrite_calls"]) == [model]
