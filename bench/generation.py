"""Generation backends on SQuAD 2.0 dev: speed and answer quality per backend.

All 301 paragraphs are the corpus; retrieval, rerank and evidence run once, then each backend
answers from the same evidence. Reported per backend: answers/s, p50/p95 latency, the share of
answerable questions whose answer contains a gold answer, and the share of unanswerable questions
refused. The extractive backend answers every question; an LLM backend answers a stratified
subset (`--llm-questions`, default 40) because it generates ~9 tokens/s on 2 cores.

`openai_compatible` is measured against llama.cpp's own OpenAI-compatible server (`python -m
stages.models.server`, xllamacpp), started on 127.0.0.1 with the same local GGUF, so its row shows
the HTTP path's cost over `llama_cpp`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import calibration, common

NAME = "generation"
DESCRIPTION = (
    "SQuAD 2.0 dev: per generation backend, answers/s, p50 latency, gold-answer and refusal shares"
)
FILES = ("dev_articles.json",)
LLM_QUESTIONS = 40


def _subset(records: list[dict], n: int) -> list[dict]:
    """First n/2 answerable and n/2 unanswerable questions, in corpus order (deterministic)."""
    answerable = [r for r in records if r["answerable"]][: n // 2]
    unanswerable = [r for r in records if not r["answerable"]][: n - len(answerable)]
    return answerable + unanswerable


def _score(records: list[dict], generations: list[dict]) -> dict[str, Any]:
    by_id = {g["question_id"]: g for g in generations}
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    contains = sum(
        1
        for r in answerable
        if by_id[r["question_id"]]["answer"]
        and any(g.lower() in by_id[r["question_id"]]["answer"].lower() for g in r["gold"])
    )
    refused = sum(1 for r in unanswerable if by_id[r["question_id"]]["answer"] is None)
    latencies = [g["latency_ms"] / 1000 for g in generations]
    return {
        "n": len(records),
        "answerable_with_gold": round(contains / len(answerable), 4) if answerable else None,
        "unanswerable_refused": round(refused / len(unanswerable), 4) if unanswerable else None,
        "answered": sum(1 for g in generations if g["answer"] is not None),
        "technical_errors": sum(1 for g in generations if g["refusal_reason"] == "technical_error"),
        "latency": common.latency_stats(latencies),
        "answers_per_s": round(len(generations) / max(sum(latencies), 1e-9), 3),
    }


@contextlib.contextmanager
def _served(backend: str, settings: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """For openai_compatible without a configured base_url, serve the local GGUF meanwhile."""
    from stages.models.files import DEFAULT_MODEL_PATH
    from stages.models.server import local_openai_server
    from stages.models.settings import fold_legacy_keys

    folded = fold_legacy_keys(settings, ("model_path", "base_url", "model"))
    llm = folded.get("llm") or {}
    if backend != "openai_compatible" or llm.get("base_url"):
        yield settings
        return
    model_path = llm.get("path") or DEFAULT_MODEL_PATH
    with local_openai_server(model_path, alias="local") as base_url:
        yield {**folded, "llm": {**llm, "base_url": base_url, "model": "local"}}


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    rebuild_index: bool = False,
    llm_questions: int = LLM_QUESTIONS,
    backends: tuple[str, ...] = ("extractive", "llama_cpp", "openai_compatible"),
    **_: Any,
) -> dict[str, Any]:
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    from stages import contracts, evidence, generation, indexing, rerank, retrieval

    folder = common.dataset_dir("squad2", FILES)  # raises Skipped when absent
    overrides = overrides or {}
    chunk_rows, records = calibration.load(folder)
    gold = {}
    for article in json.loads((folder / "dev_articles.json").read_text())["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                gold[qa["id"]] = [a["text"] for a in qa.get("answers", [])]
    for r in records:
        r["gold"] = gold[r["question_id"]]
    chunks = contracts.from_rows(chunk_rows, "chunks")
    config = {
        m.NAME: common.stage_config(m, common.pipeline_settings(m.NAME), overrides.get(m.NAME))
        for m in (indexing, retrieval, rerank, evidence)
    }
    index, _ = common.cached_index(chunks, config["indexing"], NAME, rebuild=rebuild_index)
    questions = common.questions_table([(r["question_id"], r["question"]) for r in records])
    eligibility = common.all_eligible(
        [r["question_id"] for r in records], [c["doc_id"] for c in chunk_rows]
    )
    inputs = common.stage_inputs(chunks, index, questions, eligibility)
    common.console.print(f"  {len(records):,} questions: retrieval, rerank, evidence")
    found = retrieval.run(inputs, config["retrieval"])
    reranked = rerank.run({**inputs, **found}, config["rerank"])
    packed = evidence.run({**inputs, **found, **reranked}, config["evidence"])
    stage_inputs = {**inputs, **found, **reranked, **packed}
    results: dict[str, Any] = {}
    for backend in backends:
        chosen = records if backend == "extractive" else _subset(records, llm_questions)
        ids = {r["question_id"] for r in chosen}
        subset = {
            name: table.filter(pc.is_in(table["question_id"], pa.array(sorted(ids))))
            if "question_id" in table.column_names
            else table
            for name, table in stage_inputs.items()
            if hasattr(table, "column_names")
        }
        base = {**common.pipeline_settings("generation"), "backend": backend, "cache_dir": None}
        common.console.print(f"  backend {backend}: {len(chosen)} questions")
        started = time.perf_counter()
        try:
            with _served(backend, base) as settings_dict:
                settings = common.stage_config(
                    generation, settings_dict, overrides.get("generation")
                )
                out = generation.run(subset, settings)["generations"].to_pylist()
        except Exception as exc:  # a backend that cannot start is reported, not fatal
            results[backend] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        results[backend] = {
            **_score(chosen, out),
            "wall_s": round(time.perf_counter() - started, 2),
            "model_id": out[0]["model_id"] if out else None,
        }
    payload = {
        "bench": NAME,
        "data": {"n_paragraphs": len(chunk_rows), "n_questions": len(records)},
        "llm_questions": llm_questions,
        "backends": results,
        "machine": common.machine_info(),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"{result['data']['n_questions']:,} SQuAD 2.0 dev questions over "
        f"{result['data']['n_paragraphs']} paragraphs; LLM backends on a stratified subset of "
        f"{result['llm_questions']}.",
        "",
        "| backend | n | answers/s | p50 s | p95 s | answerable with gold | unanswerable refused |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in result["backends"].items():
        if "error" in r:
            lines.append(f"| {name} | – | – | – | – | error: {r['error']} | |")
            continue
        lat = r["latency"]
        lines.append(
            f"| {name} | {r['n']} | {r['answers_per_s']} | {lat['p50_ms'] / 1000:.3f} | "
            f"{lat['p95_ms'] / 1000:.3f} | {r['answerable_with_gold']:.1%} | "
            f"{r['unanswerable_refused']:.1%} |"
        )
    return "\n".join(lines)
