"""Confidence calibration of the rerank stage on SQuAD 2.0 dev (8 articles, 301 paragraphs).

Corpus: one chunk per paragraph, all eligible. For each question: retrieval.run + rerank.run as
configured in configs/pipeline.yaml. Label 1 when the top-ranked chunk is the question's own
paragraph AND the question is answerable, else 0; the confidence is rerank's (the top chunk's
probability, 0 when nothing was retrieved). Reported: a 10-bin reliability table, ECE, and the
share of each rerank state for answerable vs unanswerable questions.

The learned ranker (configs/ranker.yaml, scripts/train_ranker.py) is fitted on some articles of
this same file, so the articles it never saw (the frozen eval sets' and its own held-out ones) are
reported apart from its training articles.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from bench import common

NAME = "calibration"
DESCRIPTION = "SQuAD 2.0 dev: rerank confidence reliability (10 bins), ECE, result states"
FILES = ("dev_articles.json",)
N_BINS = 10
STATES = ("success", "low_relevance", "not_found", "technical_error")
# Never seen by scripts/train_ranker.py: the frozen eval sets' articles and its held-out ones.
HELD_OUT_ARTICLES = {
    "Normans",
    "Huguenot",
    "Packet_switching",
    "Imperialism",
    "French_and_Indian_War",
}


def load(folder: Path) -> tuple[list[dict], list[dict]]:
    """Chunk rows (one per paragraph); question records (id, text, doc_id, answerable, article)."""
    articles = json.loads((folder / "dev_articles.json").read_text(encoding="utf-8"))["data"]
    chunks, questions = [], []
    for a, article in enumerate(articles):
        title = article["title"].replace("_", " ")
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"a{a:02d}p{p:03d}"
            chunks.append(common.chunk_row(doc_id, title, paragraph["context"], "squad2"))
            for qa in paragraph["qas"]:
                questions.append(
                    {
                        "question_id": qa["id"],
                        "question": qa["question"],
                        "doc_id": doc_id,
                        "answerable": not qa.get("is_impossible", False),
                        "article": article["title"],
                    }
                )
    return chunks, questions


def reliability(confidences: list[float], labels: list[int], n_bins: int = N_BINS) -> dict:
    """Equal-width bins on [0, 1]: per bin mean confidence, accuracy, count; ECE, Brier."""
    conf = np.clip(np.asarray(confidences, dtype=np.float64), 0.0, 1.0)
    label = np.asarray(labels, dtype=np.float64)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)  # 1.0 falls in the last bin
    table, ece = [], 0.0
    for b in range(n_bins):
        mask = bins == b
        count = int(mask.sum())
        row = {
            "bin": f"[{b / n_bins:.1f}, {(b + 1) / n_bins:.1f}{']' if b == n_bins - 1 else ')'}",
            "count": count,
            "mean_confidence": None,
            "accuracy": None,
        }
        if count:
            row["mean_confidence"] = round(float(conf[mask].mean()), 4)
            row["accuracy"] = round(float(label[mask].mean()), 4)
            ece += count / len(conf) * abs(float(label[mask].mean()) - float(conf[mask].mean()))
        table.append(row)
    return {
        "n": len(conf),
        "ece": round(ece, 4) if len(conf) else None,
        "brier": round(float(np.mean((conf - label) ** 2)), 4) if len(conf) else None,
        "mean_confidence": round(float(conf.mean()), 4) if len(conf) else None,
        "accuracy": round(float(label.mean()), 4) if len(conf) else None,
        "bins": table,
    }


def state_shares(states: list[str]) -> dict[str, Any]:
    counts = Counter(states)
    total = len(states)
    return {
        "n": total,
        **{s: round(counts.get(s, 0) / total, 4) if total else None for s in STATES},
        "counts": {s: counts.get(s, 0) for s in STATES},
    }


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    rebuild_index: bool = False,
    **_: Any,
) -> dict[str, Any]:
    from stages import contracts, indexing, rerank, retrieval

    folder = common.dataset_dir("squad2", FILES)  # raises Skipped when absent
    overrides = overrides or {}
    started = time.perf_counter()
    timings: dict[str, float] = {}
    with common.timed(timings, "load_s"):
        chunk_rows, records = load(folder)
        chunks = contracts.from_rows(chunk_rows, "chunks")
    n_unanswerable = sum(not r["answerable"] for r in records)
    common.console.print(
        f"  {len(chunk_rows)} paragraphs, {len(records):,} questions "
        f"({n_unanswerable:,} unanswerable)"
    )
    index_config = common.stage_config(
        indexing, common.pipeline_settings("indexing"), overrides.get("indexing")
    )
    with common.timed(timings, "index_s"):
        index, cache = common.cached_index(chunks, index_config, NAME, rebuild=rebuild_index)
    questions = common.questions_table([(r["question_id"], r["question"]) for r in records])
    eligibility = common.all_eligible(
        [r["question_id"] for r in records], [c["doc_id"] for c in chunk_rows]
    )
    inputs = common.stage_inputs(chunks, index, questions, eligibility)
    retrieval_config = common.stage_config(
        retrieval, common.pipeline_settings("retrieval"), overrides.get("retrieval")
    )
    rerank_config = common.stage_config(
        rerank, common.pipeline_settings("rerank"), overrides.get("rerank")
    )
    common.console.print("  retrieval.run")
    with common.timed(timings, "retrieval_s"):
        found = retrieval.run(inputs, retrieval_config)
    common.console.print("  rerank.run")
    with common.timed(timings, "rerank_s"):
        reranked = rerank.run({**inputs, **found}, rerank_config)
    top: dict[str, str] = {}
    for row in reranked["ranked"].to_pylist():
        if row["rank"] == 1:
            top[row["question_id"]] = row["doc_id"]
    status = {r["question_id"]: r for r in reranked["rerank_status"].to_pylist()}
    examples = []
    for r in records:
        s = status.get(r["question_id"], {})
        confidence = s.get("confidence")
        examples.append(
            {
                **r,
                "state": s.get("state", "technical_error"),
                "confidence": 0.0 if confidence is None else float(confidence),
                "top_is_own": top.get(r["question_id"]) == r["doc_id"],
            }
        )
    for e in examples:
        e["label"] = int(e["answerable"] and e["top_is_own"])

    def subset(rows: list[dict]) -> dict[str, Any]:
        return reliability([e["confidence"] for e in rows], [e["label"] for e in rows])

    held_out = [e for e in examples if e["article"] in HELD_OUT_ARTICLES]
    train = [e for e in examples if e["article"] not in HELD_OUT_ARTICLES]
    answerable = [e for e in examples if e["answerable"]]
    unanswerable = [e for e in examples if not e["answerable"]]
    payload = {
        "status": "ok",
        "data": {
            "folder": "../shared/datasets/squad2",
            "n_paragraphs": len(chunk_rows),
            "n_questions": len(records),
            "n_unanswerable": n_unanswerable,
        },
        "label": "top-ranked chunk is the question's own paragraph AND the question is answerable",
        "all": subset(examples),
        "held_out": subset(held_out),
        "held_out_articles": sorted(HELD_OUT_ARTICLES),
        "training": subset(train),
        "top1_own_paragraph_rate_answerable": round(
            float(np.mean([e["top_is_own"] for e in answerable])), 4
        ),
        "states": {
            "answerable": state_shares([e["state"] for e in answerable]),
            "unanswerable": state_shares([e["state"] for e in unanswerable]),
            "answerable_held_out": state_shares([e["state"] for e in held_out if e["answerable"]]),
            "unanswerable_held_out": state_shares(
                [e["state"] for e in held_out if not e["answerable"]]
            ),
        },
        "configs": {
            "indexing": index_config.model_dump(mode="json"),
            "retrieval": retrieval_config.model_dump(mode="json"),
            "rerank": rerank_config.model_dump(mode="json"),
            "overrides": overrides,
        },
        "index": cache,
        "timings": timings,
        "peak_rss_mb": common.peak_rss_mb(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def _reliability_table(block: dict[str, Any]) -> list[str]:
    lines = ["| confidence bin | count | mean confidence | accuracy |", "|---|---:|---:|---:|"]
    for row in block["bins"]:
        mean = "–" if row["mean_confidence"] is None else f"{row['mean_confidence']:.3f}"
        accuracy = "–" if row["accuracy"] is None else f"{row['accuracy']:.3f}"
        lines.append(f"| {row['bin']} | {row['count']} | {mean} | {accuracy} |")
    return lines


def summarize(result: dict[str, Any]) -> str:
    everything, held = result["all"], result["held_out"]
    train = result["training"]
    lines = [
        f"{result['data']['n_questions']:,} questions ({result['data']['n_unanswerable']:,} "
        f"unanswerable) over {result['data']['n_paragraphs']} paragraphs. Label: "
        f"{result['label']}.",
        "",
        f"ECE (10 bins): all {everything['ece']:.4f} · held out "
        f"({', '.join(result['held_out_articles'])}, never trained on) {held['ece']:.4f} "
        f"(n={held['n']}) · ranker training "
        f"{train['ece']:.4f} (n={train['n']}). "
        f"Brier (all) {everything['brier']:.4f}; mean confidence "
        f"{everything['mean_confidence']:.3f} vs accuracy {everything['accuracy']:.3f}. "
        "Top-1 is the own paragraph for "
        f"{result['top1_own_paragraph_rate_answerable']:.1%} of answerable questions.",
        "",
        "All questions:",
        "",
        *_reliability_table(everything),
        "",
        "| questions | n | success | low_relevance | not_found | technical_error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, shares in result["states"].items():
        lines.append(
            f"| {name.replace('_', ' ')} | {shares['n']} | "
            + " | ".join(f"{shares[s]:.1%}" if shares[s] is not None else "–" for s in STATES)
            + " |"
        )
    return "\n".join(lines)
