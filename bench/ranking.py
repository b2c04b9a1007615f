"""Ranking on the project's own eval sets: does rerank ever rank below the fused list or dense
alone? ("the full stack must never rank below the fused list or dense alone on any
corpus you benchmark: SciFact, the SQuAD slice as a retrieval set, the sample").

Each set runs through the pipeline as `grounding eval` runs it (ingestion, indexing and source
selection: permissions before retrieval). Then, as `bench scifact` does, the retrieval stage is
called once per variant over the same inputs, and rerank over the fused candidates:

- bm25, dense   one list alone (`dense_weight` / `bm25_weight` 0, no query decomposition)
- fused         retrieval as configured (RRF)
- fused+rerank  rerank's list (`top_n` 10), then the rest of the fused order

Relevance: a question's gold documents (the SQuAD paragraph; the sample's gold document ids),
answerable questions only. Chunks are mapped to their documents; a document counts once, at its
first rank. Scored with pytrec_eval as SciFact is: nDCG@10, recall@10, MRR@10, recall@100.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench import common
from bench.ranking_metrics import evaluate as score_rankings
from bench.scifact import VARIANT_SETTINGS, ranking_from_candidates, reranked_ranking

NAME = "ranking"
DESCRIPTION = "rerank vs fused vs dense on the eval sets (SQuAD slice, sample): nDCG@10, MRR@10"
SETS = ("squad2-dev-v1", "sample-v1", "sample-v2", "cross-topic-v1")
VARIANTS = ("bm25", "dense", "fused", "fused+rerank")
WORK = common.CACHE / "ranking"


def qrels_of(rows: list[dict]) -> dict[str, dict[str, int]]:
    """{question id: {gold doc id: 1}} for the answerable questions that name gold documents."""
    return {
        r["question_id"]: dict.fromkeys(r["gold_doc_ids"], 1)
        for r in rows
        if r["expected_behavior"] == "answer" and r.get("gold_doc_ids")
    }


def variant_configs(config: Any) -> dict[str, Any]:
    """The retrieval variants (`bench scifact`'s), on the set's own retrieval config."""
    base = config.stage_config("retrieval")
    return {variant: base.model_copy(update=update) for variant, update in VARIANT_SETTINGS.items()}


def rank_set(set_name: str, store: Path) -> dict[str, Any]:
    from flows.evaluation import evaluate
    from flows.executor import _load_inputs
    from stages import rerank, retrieval

    run = evaluate(set_name, store=store)
    artifacts = run.config.artifact_store()
    refs = {name: result.ref for name, result in run.stage_results.items()}
    inputs = _load_inputs(artifacts, "retrieval", refs)
    qrels = qrels_of(run.per_question)
    rankings: dict[str, dict[str, list[str]]] = {}
    seconds: dict[str, float] = {}
    fused_outputs = None
    for variant, config in variant_configs(run.config).items():
        started = time.perf_counter()
        outputs = retrieval.run(inputs, config)
        seconds[variant] = round(time.perf_counter() - started, 2)
        only = {"bm25": "bm25", "dense": "dense"}.get(variant)
        rankings[variant] = ranking_from_candidates(outputs["candidates"].to_pylist(), only)
        if variant == "fused":
            fused_outputs = outputs
    rerank_config = run.config.stage_config("rerank").model_copy(update={"top_n": 10})
    started = time.perf_counter()
    # rerank reads retrieval's inputs plus the fused list's outputs
    reranked = rerank.run({**inputs, **fused_outputs}, rerank_config)
    seconds["fused+rerank"] = round(time.perf_counter() - started, 2)
    rankings["fused+rerank"] = reranked_ranking(reranked["ranked"].to_pylist(), rankings["fused"])
    metrics = {variant: score_rankings(qrels, rankings[variant]) for variant in VARIANTS}
    rerank_ndcg = metrics["fused+rerank"]["ndcg@10"]
    return {
        "set": set_name,
        "questions_scored": len(qrels),
        "metrics": metrics,
        "rerank_not_below": {
            other: bool(rerank_ndcg >= metrics[other]["ndcg@10"]) for other in ("fused", "dense")
        },
        "seconds": seconds,
    }


def run(
    results_dir: Path | None = None,
    sets: tuple[str, ...] = SETS,
    store: Path = WORK / "store",
    **_: Any,
) -> dict[str, Any]:
    started = time.perf_counter()
    results = []
    for set_name in sets:
        common.console.print(f"  {set_name}: pipeline, then retrieval variants and rerank")
        results.append(rank_set(set_name, store))
    payload = {
        "status": "ok",
        "sets": results,
        "target": "fused+rerank nDCG@10 >= fused and >= dense on every set",
        "met": all(all(r["rerank_not_below"].values()) for r in results),
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
        "machine": common.machine_info(),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    rows = [
        "| set | questions | variant | nDCG@10 | recall@10 | MRR@10 | recall@100 |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for entry in result["sets"]:
        for variant, m in entry["metrics"].items():
            rows.append(
                f"| {entry['set']} | {entry['questions_scored']} | {variant} | "
                f"{m['ndcg@10']:.4f} | {m['recall@10']:.4f} | {m['mrr@10']:.4f} | "
                f"{m['recall@100']:.4f} |"
            )
    verdict = "met" if result["met"] else "not met"
    below = [
        f"{e['set']} (below {', '.join(k for k, ok in e['rerank_not_below'].items() if not ok)})"
        for e in result["sets"]
        if not all(e["rerank_not_below"].values())
    ]
    tail = f" Rerank ranks below on: {'; '.join(below)}." if below else ""
    return "\n".join(
        rows
        + [
            "",
            f"Target: {result['target']}: **{verdict}**.{tail} Gold: each answerable question's "
            "gold documents; a document counts at its first chunk's rank.",
        ]
    )
