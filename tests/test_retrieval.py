"""Retrieval: exact BM25, filters inside the search, determinism, bounded rewriting."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from stages import contracts, indexing, retrieval
from stages.common import search
from tests.conftest import ALL_DOCS, eligibility_table


@pytest.mark.parametrize("seed", range(6))
def test_bm25_scores_equal_rank_bm25(seed):
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(rng.randint(5, 60))]
    corpus = [
        [
            rng.choice(vocabulary[: rng.randint(3, len(vocabulary))])
            for _ in range(rng.randint(1, 40))
        ]
        for _ in range(rng.randint(2, 80))
    ]
    postings, vocab = indexing.bm25_weights(corpus, k1=1.5, b=0.75, epsilon=0.25)
    index = search.Bm25Index(postings, vocab, len(corpus))
    oracle = BM25Okapi(corpus, k1=1.5, b=0.75, epsilon=0.25)
    for _ in range(10):
        query = [rng.choice(vocabulary + ["unseen"]) for _ in range(rng.randint(1, 6))]
        np.testing.assert_allclose(
            index.scores_for_tokens(query), oracle.get_scores(query), rtol=1e-12, atol=1e-12
        )


def test_common_terms_get_the_epsilon_floor_like_rank_bm25():
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["rare"]]
    postings, vocab = indexing.bm25_weights(corpus, 1.5, 0.75, 0.25)
    idf = dict(zip(vocab.column("term").to_pylist(), vocab.column("idf").to_pylist(), strict=True))
    assert idf["common"] == pytest.approx(BM25Okapi(corpus).idf["common"])
    assert idf["common"] > 0


def _run(
    tiny_index,
    decisions: dict[str, str],
    question="What is the salary band for level L3?",
    **config,
):
    questions = contracts.from_rows(
        [{"question_id": "q1", "question": question, "principal": "p", "query_type": "general"}],
        "questions",
    )
    inputs = {
        **tiny_index,
        "questions": questions,
        "eligibility": eligibility_table("q1", decisions),
    }
    return retrieval.run(inputs, retrieval.Config(**config))


def test_restricted_chunk_never_appears_even_as_the_best_match(tiny_index):
    open_run = _run(tiny_index, dict.fromkeys(ALL_DOCS, "eligible"))
    best = open_run["candidates"].to_pylist()[0]
    assert best["doc_id"] == "hr-salaries" and best["rank"] == 1  # it *is* the best match
    restricted = _run(
        tiny_index, {**dict.fromkeys(ALL_DOCS, "eligible"), "hr-salaries": "excluded"}
    )
    docs = {c["doc_id"] for c in restricted["candidates"].to_pylist()}
    assert "hr-salaries" not in docs
    assert docs  # the search still ran over what the principal may read


def test_filter_applies_to_both_retrievers_even_with_huge_top_k(tiny_index):
    result = _run(
        tiny_index,
        {"hr-salaries": "excluded", "handbook": "eligible", "pricing": "excluded"},
        bm25_top_k=1000,
        dense_top_k=1000,
    )
    assert {c["doc_id"] for c in result["candidates"].to_pylist()} == {"handbook"}


def test_stale_documents_are_searched_in_their_own_pool(tiny_index):
    result = _run(
        tiny_index, {"hr-salaries": "stale", "handbook": "eligible", "pricing": "excluded"}
    )
    pools = {(c["pool"], c["doc_id"]) for c in result["candidates"].to_pylist()}
    assert ("stale", "hr-salaries") in pools
    assert ("eligible", "hr-salaries") not in pools


def test_same_inputs_give_identical_candidates_and_scores(tiny_index):
    first = _run(tiny_index, dict.fromkeys(ALL_DOCS, "eligible"))
    second = _run(tiny_index, dict.fromkeys(ALL_DOCS, "eligible"))
    for name in first:
        assert first[name].equals(second[name]), name


def test_rewrites_are_bounded_and_recorded(tiny_index):
    question = (
        "What is the SLA uptime and how long is the MSA notice period and what does the DPA say "
        "and who owns the HR policy and when was the price list published?"
    )
    config = retrieval.Config(
        glossary={"SLA": "Service Level Agreement", "MSA": "Master Service Agreement"},
        max_subqueries=4,
    )
    rewrites, records = retrieval.rewrite(question, config)
    assert records == []  # no model was asked
    assert len(rewrites) == 4
    assert rewrites[0] == (question, "original")
    assert rewrites[1][1] == "glossary" and "Service Level Agreement" in rewrites[1][0]
    assert all(kind == "decomposition" for _, kind in rewrites[2:])
    recorded = _run(tiny_index, dict.fromkeys(ALL_DOCS, "eligible"), question=question)[
        "retrieval_queries"
    ]
    assert 1 < recorded.num_rows <= 5


def test_single_questions_are_not_decomposed():
    assert retrieval.decompose("How much does the Enterprise plan cost per user per month?") == []
    parts = retrieval.decompose(
        "What is the Business plan price and how long is the notice period?"
    )
    assert parts == ["What is the Business plan price", "how long is the notice period"]


def test_a_broken_index_is_a_technical_error_for_every_question(tiny_index, tmp_path):
    broken = tmp_path / "dense.faiss"
    broken.write_bytes(b"not a faiss index")
    questions = contracts.from_rows(
        [
            {"question_id": q, "question": "salary?", "principal": "p", "query_type": "general"}
            for q in ("q1", "q2")
        ],
        "questions",
    )
    inputs = {
        **tiny_index,
        "dense.faiss": broken,
        "questions": questions,
        "eligibility": eligibility_table("q1", {}),
    }
    statuses = retrieval.run(inputs, retrieval.Config())["retrieval_status"].to_pylist()
    assert [s["status"] for s in statuses] == ["error", "error"]
    assert all(s["error"] for s in statuses)


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_indexes_keep_the_filter(tiny_index, tmp_path, kind):
    outputs = indexing.run(
        {"chunks": tiny_index["chunks"]}, indexing.Config(faiss_index=kind, ivf_nlist=1)
    )
    for blob in ("dense.faiss", "embeddings.npy"):
        (tmp_path / blob).write_bytes(outputs[blob])
    inputs = {
        **tiny_index,
        "dense.faiss": tmp_path / "dense.faiss",
        "embeddings.npy": tmp_path / "embeddings.npy",
    }
    info = outputs["index_info.json"].decode()
    assert {"hnsw": "IndexHNSWFlat", "ivf": "IndexIVFFlat"}[kind] in info
    restricted = _run(inputs, {**dict.fromkeys(ALL_DOCS, "eligible"), "hr-salaries": "excluded"})
    assert "hr-salaries" not in {c["doc_id"] for c in restricted["candidates"].to_pylist()}
    opened = _run(inputs, dict.fromkeys(ALL_DOCS, "eligible"))
    assert opened["candidates"].to_pylist()[0]["doc_id"] == "hr-salaries"


def test_index_type_follows_corpus_size():
    config = indexing.Config(exact_below=1000)
    assert indexing.index_type(999, config) == "flat"
    assert indexing.index_type(1000, config) == "hnsw"
    assert indexing.index_type(10, indexing.Config(faiss_index="ivf")) == "ivf"


class ScriptedClient:
    """Replies in turn (the last one repeats) and keeps every message list it was sent."""

    model_id = "scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict]] = []

    def complete(self, messages, schema):
        from stages.models.chat import Completion

        self.sent.append(messages)
        return Completion(text=self.replies[min(len(self.sent), len(self.replies)) - 1])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"queries": ["L3 pay range", "salary bands by level"]}',
            ["L3 pay range", "salary bands by level"],
        ),
        ('{"queries": ["a", "b", "c", "d"]}', []),  # over the schema's bound: rejected whole
        ("not json", []),
        ('{"answer": "56,000"}', []),
    ],
)
def test_llm_rewrites_are_validated(reply, expected):
    rewrites, records = retrieval.llm_rewrites(ScriptedClient(reply), "What is the L3 salary band?")
    assert rewrites == expected
    statuses = [r["status"] for r in records]
    # a valid reply is accepted at once; an invalid one is fed back once, then given up
    assert statuses == (["valid"] if expected else ["invalid", "invalid"])
    assert all(r["tool"] == "query_rewrite" for r in records)


def test_an_invalid_rewrite_is_fed_back_and_the_retry_recorded():
    client = ScriptedClient("not json", '{"queries": ["L3 pay range"]}')
    rewrites, records = retrieval.llm_rewrites(client, "What is the L3 salary band?")
    assert rewrites == ["L3 pay range"]
    assert [(r["attempt"], r["status"]) for r in records] == [(1, "invalid"), (2, "valid")]
    assert records[0]["errors"] and "rejected" in client.sent[1][-1]["content"]
    assert json.loads(records[0]["args"])["model_id"] == "scripted"


def test_llm_rewrites_are_recorded_and_bounded(monkeypatch):
    client = ScriptedClient('{"queries": ["x one", "x two", "x three"]}')
    monkeypatch.setattr(retrieval, "make_rewrite_client", lambda config: client)
    config = retrieval.Config(llm_rewriter=True, max_subqueries=3)
    rewrites, records = retrieval.rewrite("What is the L3 salary band?", config)
    assert [r["status"] for r in records] == ["valid"]
    assert rewrites == [
        ("What is the L3 salary band?", "original"),
        ("x one", "llm"),
        ("x two", "llm"),
    ]
