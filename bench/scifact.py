"""SciFact retrieval quality (BEIR test split): nDCG@10 and recall@100 of our retrieval and rerank.

One chunk per abstract, every document eligible for every query; the stages are called through
their public `run()` with their `Config`s. Variants:

- bm25         retrieval with `dense_weight=0` (no query decomposition), top 100
- dense        retrieval with `bm25_weight=0` (no query decomposition), top 100
- fused        retrieval as configured in configs/pipeline.yaml (RRF), with 100 per list / 100 out
- fused+rerank rerank.run over the fused 100; its ranked list first, then the rest of the fused
               order (so recall@100 is the fused pool's, by construction)
- fused+rerank_no_mmr  diagnostic: the same with `mmr_lambda=1` (pure confidence order), to
               tell the scorer's effect from diversification's
"""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import common
from bench.ranking_metrics import evaluate

NAME = "scifact"
DESCRIPTION = "SciFact (BEIR test, 300 queries): nDCG@10 / recall@100 of BM25, dense, RRF, + rerank"
FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")
DEPTH = 100
REFERENCES = {
    "BM25 (BEIR paper)": 0.665,
    "BM25 (Anserini flat)": 0.679,
    "all-MiniLM-L6-v2 (dense)": 0.645,
    "BM25 + MiniLM cross-encoder rerank": 0.688,
    "BM25 + bge-base RRF (Pyserini)": 0.742,
}
TARGET_NDCG10 = 0.72
VARIANTS = ("bm25", "dense", "fused", "fused+rerank")


# ---------------------------------------------------------------- data


def load(folder: Path) -> tuple[list[dict], dict[str, str], dict[str, dict[str, int]]]:
    """Corpus records, test queries (only those with qrels), qrels {qid: {doc: relevance}}."""
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        corpus = [json.loads(line) for line in handle if line.strip()]
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        for row in reader:
            if not row or row[0] == "query-id":
                continue
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                if str(record["_id"]) in qrels:
                    queries[str(record["_id"])] = record["text"]
    return corpus, queries, qrels


def chunks_table(corpus: list[dict]):
    from stages import contracts

    rows = [
        common.chunk_row(str(r["_id"]), r.get("title") or "", r.get("text") or "", "scifact")
        for r in corpus
    ]
    return contracts.from_rows(rows, "chunks")


# ---------------------------------------------------------------- rankings and metrics


def ranking_from_candidates(candidates: list[dict], only: str | None = None) -> dict[str, list]:
    """{qid: [doc_id, ...]} from `candidates` rows in rank order (eligible pool only).

    `only='bm25'|'dense'` keeps rows that list found (a safety net: a weight of 0 already keeps
    the other list out of the fusion).
    """
    ordered = sorted(
        (c for c in candidates if c.get("pool", "eligible") == "eligible"),
        key=lambda c: (c["question_id"], c["rank"]),
    )
    ranking: dict[str, list[str]] = {}
    for c in ordered:
        if only and c.get(f"{only}_rank") is None:
            continue
        docs = ranking.setdefault(c["question_id"], [])
        if c["doc_id"] not in docs:
            docs.append(c["doc_id"])
    return ranking


def reranked_ranking(ranked: list[dict], fused: dict[str, list[str]]) -> dict[str, list[str]]:
    """Rerank's list first (by its rank), then the rest of the fused order, to depth 100."""
    by_question: dict[str, list[tuple[int, str]]] = {}
    for row in ranked:
        by_question.setdefault(row["question_id"], []).append((row["rank"], row["doc_id"]))
    ranking = {}
    for qid in set(fused) | set(by_question):
        head = [doc for _, doc in sorted(by_question.get(qid, []))]
        docs: list[str] = []
        for doc in head + fused.get(qid, []):
            if doc not in docs:
                docs.append(doc)
        ranking[qid] = docs[:DEPTH]
    return ranking


def evaluate_variants(
    qrels: dict[str, dict[str, int]], rankings: dict[str, dict[str, list[str]]]
) -> dict[str, dict[str, float]]:
    """Metrics (pytrec_eval) per variant, averaged over every query in `qrels`."""
    return {name: evaluate(qrels, ranking) for name, ranking in rankings.items()}


# ---------------------------------------------------------------- the bench


# Each retrieval variant's settings on top of the configured ones: one list alone (no query
# decomposition), or the configured fusion; every list DEPTH deep. `bench ranking` uses them too.
DEEP = {"bm25_top_k": DEPTH, "dense_top_k": DEPTH, "top_k": DEPTH}
VARIANT_SETTINGS = {
    "bm25": {**DEEP, "dense_weight": 0.0, "decompose": False},
    "dense": {**DEEP, "bm25_weight": 0.0, "decompose": False},
    "fused": DEEP,
}


def retrieval_configs(user: dict[str, Any]) -> dict[str, Any]:
    from stages import retrieval

    base = common.pipeline_settings("retrieval")
    return {
        variant: common.stage_config(retrieval, {**base, **settings}, user)
        for variant, settings in VARIANT_SETTINGS.items()
    }


def rerank_config(user: dict[str, Any]) -> Any:
    from stages import rerank

    # top_n 10: nDCG@10 needs ten reranked documents (the pipeline passes 8 on to evidence)
    return common.stage_config(rerank, {**common.pipeline_settings("rerank"), "top_n": 10}, user)


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    rebuild_index: bool = False,
    **_: Any,
) -> dict[str, Any]:
    from stages import indexing, rerank, retrieval

    folder = common.dataset_dir("scifact", FILES)  # raises Skipped when absent
    overrides = overrides or {}
    started = time.perf_counter()
    timings: dict[str, float] = {}
    with common.timed(timings, "load_s"):
        corpus, queries, qrels = load(folder)
        chunks = chunks_table(corpus)
    common.console.print(
        f"  {len(corpus):,} abstracts, {len(queries)} test queries, "
        f"{sum(len(d) for d in qrels.values())} qrels"
    )
    index_config = common.stage_config(
        indexing, common.pipeline_settings("indexing"), overrides.get("indexing")
    )
    common.console.print("  indexing (cached under bench/.cache/ once built)")
    with common.timed(timings, "index_s"):
        index, cache = common.cached_index(chunks, index_config, NAME, rebuild=rebuild_index)
    questions = common.questions_table(sorted(queries.items()))
    eligibility = common.all_eligible(list(queries), chunks.column("doc_id").to_pylist())
    inputs = common.stage_inputs(chunks, index, questions, eligibility)
    configs = retrieval_configs(overrides.get("retrieval", {}))
    rankings: dict[str, dict[str, list[str]]] = {}
    outputs: dict[str, dict[str, Any]] = {}
    for variant, config in configs.items():
        common.console.print(f"  retrieval.run: {variant}")
        with common.timed(timings, f"retrieval_{variant}_s"):
            outputs[variant] = retrieval.run(inputs, config)
        errors = [
            s for s in outputs[variant]["retrieval_status"].to_pylist() if s["status"] != "ok"
        ]
        if errors:
            raise RuntimeError(f"retrieval.run ({variant}) failed: {errors[0]}")
        only = {"bm25": "bm25", "dense": "dense"}.get(variant)
        rankings[variant] = ranking_from_candidates(
            outputs[variant]["candidates"].to_pylist(), only
        )
    rr_config = rerank_config(overrides.get("rerank", {}))
    common.console.print("  rerank.run over the fused candidates")
    with common.timed(timings, "rerank_s"):
        reranked = rerank.run({**inputs, **outputs["fused"]}, rr_config)
    rankings["fused+rerank"] = reranked_ranking(reranked["ranked"].to_pylist(), rankings["fused"])
    no_mmr = None
    if "mmr_lambda" in rerank.Config.model_fields and "mmr_lambda" not in overrides.get(
        "rerank", {}
    ):
        no_mmr = rr_config.model_copy(update={"mmr_lambda": 1.0})
        common.console.print("  rerank.run with mmr_lambda=1 (diagnostic)")
        with common.timed(timings, "rerank_no_mmr_s"):
            plain = rerank.run({**inputs, **outputs["fused"]}, no_mmr)
        rankings["fused+rerank_no_mmr"] = reranked_ranking(
            plain["ranked"].to_pylist(), rankings["fused"]
        )
    metrics = evaluate_variants(qrels, rankings)
    states = Counter(reranked["rerank_status"].column("state").to_pylist())
    rewrites = Counter(outputs["fused"]["retrieval_queries"].column("rewrite_kind").to_pylist())
    measured = metrics["fused+rerank"]["ndcg@10"]
    payload = {
        "status": "ok",
        "data": {
            "folder": "../shared/datasets/scifact",
            "n_docs": len(corpus),
            "n_queries": len(queries),
            "n_qrels": sum(len(d) for d in qrels.values()),
        },
        "metrics": metrics,
        "references_ndcg@10": REFERENCES,
        "target": {
            "metric": "ndcg@10 of fused+rerank",
            "required": TARGET_NDCG10,
            "measured": measured,
            "met": bool(measured >= TARGET_NDCG10),
        },
        "configs": {
            "indexing": index_config.model_dump(mode="json"),
            **{f"retrieval_{k}": v.model_dump(mode="json") for k, v in configs.items()},
            "rerank": rr_config.model_dump(mode="json"),
            "rerank_no_mmr": no_mmr.model_dump(mode="json") if no_mmr else None,
            "overrides": overrides,
        },
        "index": {**cache, "info": _index_info(index)},
        "rerank_states": dict(states),
        "fused_query_rewrites": dict(rewrites),
        "timings": timings,
        "peak_rss_mb": common.peak_rss_mb(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def _index_info(index: dict[str, Any]) -> dict[str, Any] | None:
    path = index.get("index_info.json")
    return json.loads(Path(path).read_text()) if path else None


def summarize(result: dict[str, Any]) -> str:
    rows = [
        "| variant | nDCG@10 | recall@100 | recall@10 | MRR@10 |",
        "|---|---:|---:|---:|---:|",
    ]
    for variant, m in result["metrics"].items():
        rows.append(
            f"| {variant} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} | {m['recall@10']:.4f} "
            f"| {m['mrr@10']:.4f} |"
        )
    refs = "; ".join(f"{k} {v:.3f}" for k, v in result["references_ndcg@10"].items())
    target = result["target"]
    data = result["data"]
    index = result["index"]
    cache = "hit" if index.get("hit") else f"built in {index.get('build_seconds')} s"
    if "fused+rerank_no_mmr" in result["metrics"]:
        rows.append(
            "\n`fused+rerank_no_mmr` is a diagnostic: the same rerank with `mmr_lambda=1` "
            "(confidence order, no diversification)."
        )
    return "\n".join(
        rows
        + [
            "",
            f"{data['n_queries']} test queries over {data['n_docs']:,} abstracts. "
            f"Published nDCG@10: {refs}.",
            "",
            f"Target: {target['metric']} ≥ {target['required']} — measured "
            f"{target['measured']:.4f} ({'met' if target['met'] else 'NOT met'}). "
            f"Rerank states: {result['rerank_states']}. Index cache {cache}.",
        ]
    )
