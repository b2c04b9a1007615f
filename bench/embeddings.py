"""Embedding runtimes for the packaged all-MiniLM-L6-v2: speed and retrieval quality.

Three runtimes of the same weights (stages/models/embeddings.py): sentence-transformers on torch
(fp32, the default), ONNX Runtime fp32, and ONNX Runtime with int8 weights. For each, on the same
texts and batch sizes as the pipeline:

- chunks/s: SciFact abstracts as indexing embeds them (title + text, batch of
  indexing.Config().embedding_batch_size), the first THROUGHPUT_CHUNKS of the corpus;
- sentences/s: the 300 SciFact test queries, as retrieval embeds questions (one call);
- SciFact nDCG@10 and recall@100 of dense retrieval alone (exact inner product over the whole
  corpus, all 300 test queries), so a runtime's effect on quality is not hidden by BM25.

The rule: int8 is acceptable only where its nDCG@10 stays within 0.005 of fp32's.
Timings depend on the machine's load, so the load average is recorded beside each. Corpus
vectors are cached in bench/.cache/embeddings/ per runtime build (--rebuild-index ignores them):
embedding all 5,183 abstracts is most of the bench's time. `--sizes N` evaluates on a subset of
N abstracts (every judged one, then the corpus order) where the whole corpus takes too long.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import numpy as np

from bench import common
from bench.ranking_metrics import evaluate
from bench.scifact import FILES, load

NAME = "embeddings"
DESCRIPTION = "MiniLM on torch fp32 vs ONNX fp32 vs ONNX int8: chunks/s, sentences/s, nDCG@10"
THROUGHPUT_CHUNKS = 256
MAX_NDCG_DROP = 0.005
DEPTH = 100


def runtimes() -> dict[str, str]:
    from stages.models.embeddings import PACKAGED_EMBEDDING_MODEL as DEFAULT_EMBEDDING_MODEL

    return {
        "torch-fp32": DEFAULT_EMBEDDING_MODEL,
        "onnx-fp32": f"onnx:{DEFAULT_EMBEDDING_MODEL}",
        "onnx-int8": f"onnx-int8:{DEFAULT_EMBEDDING_MODEL}",
    }


def _load() -> dict[str, float]:
    return dict(zip(("1min", "5min", "15min"), (round(x, 2) for x in os.getloadavg()), strict=True))


def _rate(spec: str, texts: list[str], batch_size: int) -> dict[str, Any]:
    from stages.models import embeddings

    embeddings.embed(spec, texts[:8], batch_size)  # model loaded and warm
    before = _load()
    started = time.perf_counter()
    embeddings.embed(spec, texts, batch_size)
    seconds = time.perf_counter() - started
    return {
        "texts": len(texts),
        "seconds": round(seconds, 2),
        "per_second": round(len(texts) / seconds, 1),
        "load_before": before,
        "load_after": _load(),
    }


def _corpus_vectors(spec: str, texts: list[str], batch_size: int, rebuild: bool) -> np.ndarray:
    from stages import indexing

    identity = indexing.model_identity(spec)
    digest = hashlib.sha256("\0".join([identity, str(batch_size), *texts]).encode()).hexdigest()
    path = common.CACHE / "embeddings" / f"{digest[:24]}.npy"
    if path.is_file() and not rebuild:
        return np.load(path)
    from stages.models import embeddings

    vectors = embeddings.embed(spec, texts, batch_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def _subset(corpus: list[dict], qrels: dict[str, dict[str, int]], size: int | None) -> list[dict]:
    if not size or size >= len(corpus):
        return corpus
    judged = {doc for docs in qrels.values() for doc in docs}
    chosen = [r for r in corpus if str(r["_id"]) in judged]
    chosen += [r for r in corpus if str(r["_id"]) not in judged][: max(0, size - len(chosen))]
    return chosen


def run(
    results_dir=None, sizes: list[int] | None = None, rebuild_index: bool = False, **_: Any
) -> dict[str, Any]:
    import faiss

    from stages import indexing

    corpus, queries, qrels = load(common.dataset_dir("scifact", FILES))
    corpus = _subset(corpus, qrels, sizes[0] if sizes else None)
    texts = [
        indexing.chunk_index_text(r.get("title") or "", "", r.get("text") or "") for r in corpus
    ]
    doc_ids = [str(r["_id"]) for r in corpus]
    question_ids, questions = list(queries), list(queries.values())
    batch_size = indexing.Config().embedding_batch_size
    results: dict[str, Any] = {}
    for label, spec in runtimes().items():
        common.console.print(f"  {label}: {spec}", markup=False, emoji=False)
        from stages.models import embeddings

        record: dict[str, Any] = {"spec": spec, "version": embeddings.model_version(spec)}
        record["chunks"] = _rate(spec, texts[:THROUGHPUT_CHUNKS], batch_size)
        record["sentences"] = _rate(spec, questions, 64)
        started = time.perf_counter()
        vectors = _corpus_vectors(spec, texts, batch_size, rebuild_index)
        record["corpus_seconds"] = round(time.perf_counter() - started, 1)
        index = faiss.IndexFlatIP(vectors.shape[1])
        index.add(vectors)
        _, found = index.search(embeddings.embed(spec, questions, 64), DEPTH)
        ranked = {
            q: [doc_ids[i] for i in row if i >= 0]
            for q, row in zip(question_ids, found, strict=True)
        }
        record["metrics"] = evaluate(qrels, ranked, ("ndcg@10", "recall@100"))
        results[label] = record
        common.console.print(
            f"    {record['chunks']['per_second']} chunks/s, {record['sentences']['per_second']} "
            f"sentences/s, nDCG@10 {record['metrics']['ndcg@10']} (load "
            f"{record['chunks']['load_before']['1min']})",
            markup=False,
        )
    reference = results["torch-fp32"]
    for record in results.values():
        record["ndcg10_minus_fp32"] = round(
            record["metrics"]["ndcg@10"] - reference["metrics"]["ndcg@10"], 4
        )
        record["chunks_speedup"] = round(
            record["chunks"]["per_second"] / reference["chunks"]["per_second"], 2
        )
        record["sentences_speedup"] = round(
            record["sentences"]["per_second"] / reference["sentences"]["per_second"], 2
        )
    int8_drop = -results["onnx-int8"]["ndcg10_minus_fp32"]
    payload = {
        "corpus_documents": len(texts),
        "queries": len(questions),
        "throughput_chunks": THROUGHPUT_CHUNKS,
        "batch_size_chunks": batch_size,
        "runtimes": results,
        "int8_within_rule": int8_drop <= MAX_NDCG_DROP,
        "rule": f"int8 only where SciFact nDCG@10 stays within {MAX_NDCG_DROP} of fp32",
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"Dense retrieval on SciFact ({result['corpus_documents']} abstracts, "
        f"{result['queries']} test queries); speeds on {result['throughput_chunks']} abstracts "
        "and the queries, at the load average shown (1 min).",
        "",
        "| runtime | chunks/s | sentences/s | nDCG@10 | Δ vs fp32 | recall@100 | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, record in result["runtimes"].items():
        lines.append(
            f"| {label} | {record['chunks']['per_second']} ({record['chunks_speedup']}×) | "
            f"{record['sentences']['per_second']} ({record['sentences_speedup']}×) | "
            f"{record['metrics']['ndcg@10']} | {record['ndcg10_minus_fp32']:+} | "
            f"{record['metrics']['recall@100']} | {record['chunks']['load_before']['1min']} |"
        )
    verdict = "within" if result["int8_within_rule"] else "NOT within"
    lines += ["", f"int8 is {verdict} the rule: {result['rule']}."]
    return "\n".join(lines)
