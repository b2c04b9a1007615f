"""Ranking metrics through pytrec_eval (trec_eval's code, as BEIR uses it), not hand-written nDCG.

A run is given as ranked lists of document ids; they are turned into strictly decreasing scores so
trec_eval's tie-breaking (by document id) can never reorder them. Means are taken over every query
in the qrels: a query with no retrieved document counts as 0, as in BEIR.
"""

from __future__ import annotations

import pytrec_eval

# Our name -> (trec_eval measure, key in pytrec_eval's output, depth the run is cut to first)
MEASURES = {
    "ndcg@10": ("ndcg_cut.10", "ndcg_cut_10", None),
    "recall@10": ("recall.10", "recall_10", None),
    "recall@100": ("recall.100", "recall_100", None),
    "mrr@10": ("recip_rank", "recip_rank", 10),
}


def as_scored_run(ranked: dict[str, list[str]], depth: int | None = None) -> dict[str, dict]:
    """{qid: [doc, ...]} best first -> {qid: {doc: score}}, duplicates keep their best rank."""
    run: dict[str, dict[str, float]] = {}
    for qid, docs in ranked.items():
        scores: dict[str, float] = {}
        for position, doc in enumerate(docs[:depth] if depth else docs):
            scores.setdefault(str(doc), float(len(docs) - position))
        if scores:
            run[str(qid)] = scores
    return run


def evaluate(
    qrels: dict[str, dict[str, int]],
    ranked: dict[str, list[str]],
    metrics: tuple[str, ...] = ("ndcg@10", "recall@100", "recall@10", "mrr@10"),
) -> dict[str, float]:
    """Mean of each metric over all queries in `qrels` (missing or empty runs score 0)."""
    qrels = {str(q): {str(d): int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    ranked = {q: docs for q, docs in ranked.items() if str(q) in qrels}
    results: dict[str, float] = {}
    for name in metrics:
        measure, key, depth = MEASURES[name]
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(
            as_scored_run(ranked, depth)
        )
        total = sum(values[key] for values in per_query.values())
        results[name] = round(total / len(qrels), 4) if qrels else 0.0
    return results
