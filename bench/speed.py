"""Speed: BM25 scoring against rank_bm25, index build, FAISS flat search, retrieval.run latency.

Synthetic data so it runs anywhere: chunks of ~30 tokens drawn from a Zipf-distributed vocabulary
(like real text: a few very common words, a long tail of rare ones) and random unit vectors.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from rank_bm25 import BM25Okapi
from rich.progress import track

from bench import common

NAME = "speed"
DESCRIPTION = (
    "BM25 sparse scoring vs rank_bm25, bm25_weights build time, FAISS flat search, "
    "retrieval.run latency (synthetic data; no data set needed)"
)
SIZES = (10_000, 100_000)
N_QUERIES = 50
VOCAB_SIZE = 50_000
DIMENSION = 384
TARGET_SPEEDUP = 20.0


def pseudo_words(n: int) -> list[str]:
    """Distinct letters-only words, so the project's tokenizer keeps each one whole."""
    letters = "bcdfghjklmnpqrstvwxz"
    words = []
    for i in range(n):
        word, value = "", i
        while True:
            word = letters[value % 20] + word
            value //= 20
            if value == 0:
                break
        words.append(f"q{word}o")
    return words


def synthetic_corpus(
    n_docs: int, seed: int = 0, vocab_size: int = VOCAB_SIZE, n_queries: int = N_QUERIES
) -> tuple[list[list[str]], list[list[str]]]:
    """`n_docs` chunks of 20–40 Zipf(s=1) tokens, and `n_queries` queries of 2–6 tokens."""
    rng = np.random.default_rng(seed)
    vocab = np.asarray(pseudo_words(vocab_size), dtype=object)
    weights = 1.0 / np.arange(1, vocab_size + 1)
    probabilities = weights / weights.sum()
    lengths = rng.integers(20, 41, size=n_docs)
    ids = rng.choice(vocab_size, size=int(lengths.sum()), p=probabilities)
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    corpus = [vocab[ids[s:e]].tolist() for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
    query_lengths = rng.integers(2, 7, size=n_queries)
    queries = [
        vocab[rng.choice(vocab_size, size=k, p=probabilities)].tolist() for k in query_lengths
    ]
    return corpus, queries


def bench_bm25(corpus: list[list[str]], queries: list[list[str]]) -> dict[str, Any]:
    from stages import indexing

    config = indexing.Config()
    result: dict[str, Any] = {"n_chunks": len(corpus), "n_queries": len(queries)}
    bm25_index = common.bm25_index_class()
    warm_postings, warm_vocab = indexing.bm25_weights([["warm", "up"]], 1.5, 0.75, 0.25)
    bm25_index(warm_postings, warm_vocab, 1).scores_for_tokens(["warm"])  # imports, first calls
    started = time.perf_counter()
    postings, vocab = indexing.bm25_weights(corpus, config.k1, config.b, config.epsilon)
    weights_seconds = time.perf_counter() - started
    started = time.perf_counter()
    index = bm25_index(postings, vocab, len(corpus))
    matrix_seconds = time.perf_counter() - started
    started = time.perf_counter()
    oracle = BM25Okapi(corpus, k1=config.k1, b=config.b, epsilon=config.epsilon)
    oracle_seconds = time.perf_counter() - started
    matrix = index.matrix
    result["build"] = {
        "bm25_weights_s": round(weights_seconds, 3),
        "bm25_index_matrix_s": round(matrix_seconds, 3),
        "ours_total_s": round(weights_seconds + matrix_seconds, 3),
        "rank_bm25_s": round(oracle_seconds, 3),
        "n_postings": postings.num_rows,
        "vocab_size": vocab.num_rows,
        "matrix_mb": round(
            (matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes) / 2**20, 1
        ),
    }
    # warm both paths once (first sparse slice allocates; first numpy call imports lazily)
    index.scores_for_tokens(queries[0])
    oracle.get_scores(queries[0])
    ours, theirs, max_diff, top10_same = [], [], 0.0, 0
    for query in queries:
        started = time.perf_counter()
        mine = index.scores_for_tokens(query)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        reference = oracle.get_scores(query)
        theirs.append(time.perf_counter() - started)
        max_diff = max(max_diff, float(np.max(np.abs(mine - reference))))
        order_mine = np.lexsort((np.arange(len(mine)), -mine))[:10]
        order_ref = np.lexsort((np.arange(len(reference)), -reference))[:10]
        top10_same += int(np.array_equal(order_mine, order_ref))
    ours_stats, theirs_stats = common.latency_stats(ours), common.latency_stats(theirs)
    result["query"] = {
        "ours": ours_stats,
        "rank_bm25": theirs_stats,
        "speedup_mean": round(theirs_stats["mean_ms"] / max(ours_stats["mean_ms"], 1e-9), 1),
        "speedup_p50": round(theirs_stats["p50_ms"] / max(ours_stats["p50_ms"], 1e-9), 1),
        "max_abs_score_diff": max_diff,
        "scores_equal": bool(max_diff <= 1e-9),
        "identical_top10_share": round(top10_same / len(queries), 4),
    }
    return result


def _search_latencies(index: Any, queries: np.ndarray, k: int, params: Any = None) -> list[float]:
    index.search(queries[:1], k, params=params)  # warm-up
    latencies = []
    for query in queries:
        started = time.perf_counter()
        index.search(query.reshape(1, -1), k, params=params)
        latencies.append(time.perf_counter() - started)
    return latencies


def bench_faiss(n_vectors: int, n_queries: int, seed: int = 0, k: int = 50) -> dict[str, Any]:
    """Exact IndexFlatIP as asked; plus HNSW where the indexing stage would pick it."""
    from stages import indexing, retrieval

    vectors = random_unit_vectors(n_vectors, seed)
    queries = random_unit_vectors(n_queries, seed + 1)
    k = min(k, n_vectors)
    started = time.perf_counter()
    index = faiss.IndexFlatIP(DIMENSION)
    index.add(vectors)
    build = time.perf_counter() - started
    single = _search_latencies(index, queries, k)
    # retrieval always passes an id selector (the eligibility filter): measure that path too
    selector = faiss.IDSelectorBatch(np.arange(n_vectors, dtype=np.int64))
    selected = _search_latencies(index, queries, k, faiss.SearchParameters(sel=selector))
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(
        1
    )  # one query per request: OpenMP fan-out can cost more than it saves
    try:
        one_thread = _search_latencies(index, queries, k)
    finally:
        faiss.omp_set_num_threads(threads)
    started = time.perf_counter()
    _, exact_ids = index.search(queries, k)
    batched = time.perf_counter() - started
    result: dict[str, Any] = {
        "n_vectors": n_vectors,
        "dimension": DIMENSION,
        "k": k,
        "index": "IndexFlatIP",
        "add_s": round(build, 3),
        "single_query": common.latency_stats(single),
        "single_query_with_id_selector": common.latency_stats(selected),
        "single_query_1_thread": common.latency_stats(one_thread),
        "batched_ms_per_query": round(batched * 1000 / n_queries, 4),
        "faiss_threads": threads,
    }
    config = indexing.Config()
    exact_below = getattr(config, "exact_below", None)
    if exact_below is not None and n_vectors >= exact_below and hasattr(config, "hnsw_m"):
        ef_search = getattr(retrieval.Config(), "hnsw_ef_search", 128)
        started = time.perf_counter()
        hnsw = faiss.IndexHNSWFlat(DIMENSION, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = config.hnsw_ef_construction
        hnsw.add(vectors)
        hnsw_build = time.perf_counter() - started
        params = faiss.SearchParametersHNSW(efSearch=ef_search)
        latencies = _search_latencies(hnsw, queries, k, params)
        _, approx_ids = hnsw.search(queries, k, params=params)
        overlap = np.mean(
            [len(set(a) & set(e)) / k for a, e in zip(approx_ids, exact_ids, strict=True)]
        )
        result["hnsw_as_indexing_builds_it"] = {
            "why": f"indexing's faiss_index=auto picks HNSW at >= {exact_below:,} vectors",
            "m": config.hnsw_m,
            "ef_construction": config.hnsw_ef_construction,
            "ef_search": ef_search,
            "build_s": round(hnsw_build, 2),
            "single_query": common.latency_stats(latencies),
            f"recall_at_{k}_vs_exact": round(float(overlap), 4),
        }
    return result


def random_unit_vectors(n: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIMENSION), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def bench_retrieval_run(n_chunks: int, n_queries: int, seed: int = 0) -> dict[str, Any]:
    """`retrieval.run` end to end over synthetic chunks with random chunk embeddings.

    The index comes from `indexing.run` itself (so it has whatever artifacts the stage makes
    today), with the embedder swapped for random unit vectors while it runs; queries are
    embedded by the real model inside `retrieval.run`.
    """
    from stages import contracts, indexing, retrieval
    from stages.models import embeddings

    corpus, queries = synthetic_corpus(n_chunks, seed=seed + 1, n_queries=n_queries)
    rows = [
        common.chunk_row(f"syn{i:06d}", f"synthetic {i}", " ".join(tokens), "synthetic")
        for i, tokens in enumerate(corpus)
    ]
    chunks = contracts.from_rows(rows, "chunks")
    counter = iter(range(10**9))
    real_embed = embeddings.embed
    embeddings.embed = lambda spec, texts, *a, **k: random_unit_vectors(len(texts), next(counter))
    try:
        started = time.perf_counter()
        outputs = indexing.run({"chunks": chunks}, indexing.Config())
        index_seconds = time.perf_counter() - started
    finally:
        embeddings.embed = real_embed
    doc_ids = [r["doc_id"] for r in rows]
    questions = [(f"s{i:03d}", " ".join(q)) for i, q in enumerate(queries)]
    retrieval_config = common.stage_config(retrieval, {})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "index"
        common.save_index_outputs(outputs, folder)
        base = {**common.load_index_folder(folder), "chunks": chunks}
        embeddings.embed(
            retrieval_config.embedding_model, ["warm up"]
        )  # model load is not per query

        def call(batch: list[tuple[str, str]]) -> float:
            inputs = {
                **base,
                "questions": common.questions_table(batch),
                "eligibility": common.all_eligible([q for q, _ in batch], doc_ids),
            }
            started = time.perf_counter()
            result = retrieval.run(inputs, retrieval_config)
            elapsed = time.perf_counter() - started
            statuses = result["retrieval_status"].column("status").to_pylist()
            if any(s != "ok" for s in statuses):
                raise RuntimeError(f"retrieval.run failed: {result['retrieval_status']}")
            return elapsed

        call(questions[:1])  # warm-up
        per_call = [call([q]) for q in track(questions, "  retrieval.run, one question per call")]
        batched = call(questions)
        embedding = []  # the query-embedding share of a call, measured alone
        for _, text in questions:
            started = time.perf_counter()
            embeddings.embed(retrieval_config.embedding_model, [text])
            embedding.append(time.perf_counter() - started)
    return {
        "n_chunks": n_chunks,
        "n_queries": n_queries,
        "indexing_run_s_random_embeddings": round(index_seconds, 2),
        "retrieval_config": retrieval_config.model_dump(mode="json"),
        "one_question_per_call": common.latency_stats(per_call),
        "batched_ms_per_question": round(batched * 1000 / n_queries, 3),
        "query_embedding_alone": common.latency_stats(embedding),
        "note": "each call includes query embedding (MiniLM), index loading and eligibility "
        "handling; chunk embeddings are random unit vectors",
    }


def run(
    sizes: tuple[int, ...] | None = SIZES,
    n_queries: int = N_QUERIES,
    e2e_chunks: int | None = 10_000,
    results_dir: Path | None = None,
    **_: Any,
) -> dict[str, Any]:
    sizes = tuple(sizes or SIZES)  # `python -m bench` passes sizes=None when --sizes is absent
    started = time.perf_counter()
    payload: dict[str, Any] = {
        "params": {
            "sizes": list(sizes),
            "n_queries": n_queries,
            "vocab_size": VOCAB_SIZE,
            "zipf_s": 1.0,
            "tokens_per_chunk": "uniform 20-40",
            "query_tokens": "uniform 2-6",
            "e2e_chunks": e2e_chunks,
        },
        "bm25": {},
        "faiss": {},
        "peak_rss_mb": {},
    }
    for size in sizes:
        common.console.print(f"  [bold]{size:,}[/] chunks: synthetic corpus")
        corpus, queries = synthetic_corpus(size, seed=size, n_queries=n_queries)
        common.console.print(
            f"  [bold]{size:,}[/] chunks: BM25 build + {n_queries} queries, ours vs rank_bm25"
        )
        bm25 = bench_bm25(corpus, queries)
        del corpus
        payload["bm25"][str(size)] = bm25
        q = bm25["query"]
        common.console.print(
            f"    ours {q['ours']['mean_ms']:.3f} ms/query, "
            f"rank_bm25 {q['rank_bm25']['mean_ms']:.2f} ms/query, ×{q['speedup_mean']}, "
            f"max |diff| {q['max_abs_score_diff']:.2e}"
        )
        common.console.print(f"  [bold]{size:,}[/] vectors: FAISS flat search")
        payload["faiss"][str(size)] = bench_faiss(size, n_queries, seed=size)
        payload["peak_rss_mb"][f"after_{size}"] = common.peak_rss_mb()
    if e2e_chunks:
        common.console.print(f"  retrieval.run end to end over {e2e_chunks:,} chunks")
        payload["retrieval_run"] = bench_retrieval_run(e2e_chunks, n_queries)
        payload["peak_rss_mb"]["after_retrieval_run"] = common.peak_rss_mb()
    largest = str(max(sizes))
    speedup = payload["bm25"][largest]["query"]["speedup_mean"]
    payload["target"] = {
        "bm25_speedup_at": int(largest),
        "required": TARGET_SPEEDUP,
        "measured": speedup,
        "met": bool(speedup >= TARGET_SPEEDUP),
    }
    payload["peak_rss_mb"]["process"] = common.peak_rss_mb()
    payload["runtime_s"] = round(time.perf_counter() - started, 1)
    payload["status"] = "ok"
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        "| chunks | ours ms/query (p50 / p95) | rank_bm25 ms/query (p50 / p95) | speed-up (mean) "
        "| max abs diff | build: bm25_weights + matrix s | rank_bm25 build s |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    for size, bm25 in result["bm25"].items():
        q, b = bm25["query"], bm25["build"]
        lines.append(
            f"| {int(size):,} | {q['ours']['mean_ms']:.3f} ({q['ours']['p50_ms']:.3f} / "
            f"{q['ours']['p95_ms']:.3f}) | {q['rank_bm25']['mean_ms']:.2f} "
            f"({q['rank_bm25']['p50_ms']:.2f} / {q['rank_bm25']['p95_ms']:.2f}) "
            f"| ×{q['speedup_mean']} | {q['max_abs_score_diff']:.1e} "
            f"| {b['bm25_weights_s']} + {b['bm25_index_matrix_s']} | {b['rank_bm25_s']} |"
        )
    target = result["target"]
    lines += [
        "",
        f"Target: ≥ ×{target['required']:.0f} at {target['bm25_speedup_at']:,} chunks — "
        f"measured ×{target['measured']} ({'met' if target['met'] else 'NOT met'}).",
        "",
        "| vectors (384-d) | add s | single query p50 / p95 ms | with IDSelectorBatch p50 / p95 ms "
        "| 1 OpenMP thread p50 / p95 ms | batched ms/query | k |",
        "|---:|---:|---|---|---|---:|---:|",
    ]
    for size, f in result["faiss"].items():
        one, sel = f["single_query"], f["single_query_with_id_selector"]
        t1 = f.get("single_query_1_thread") or {"p50_ms": float("nan"), "p95_ms": float("nan")}
        lines.append(
            f"| {int(size):,} | {f['add_s']} | {one['p50_ms']:.2f} / {one['p95_ms']:.2f} "
            f"| {sel['p50_ms']:.2f} / {sel['p95_ms']:.2f} "
            f"| {t1['p50_ms']:.2f} / {t1['p95_ms']:.2f} "
            f"| {f['batched_ms_per_query']:.3f} | {f['k']} |"
        )
    for size, f in result["faiss"].items():
        hnsw = f.get("hnsw_as_indexing_builds_it")
        if hnsw:
            recall = next(v for k, v in hnsw.items() if k.startswith("recall_at_"))
            lines += [
                "",
                f"HNSW at {int(size):,} vectors ({hnsw['why']}; M={hnsw['m']}, "
                f"efConstruction={hnsw['ef_construction']}, efSearch={hnsw['ef_search']}): "
                f"build {hnsw['build_s']} s, single query p50 {hnsw['single_query']['p50_ms']:.2f}"
                f" / p95 {hnsw['single_query']['p95_ms']:.2f} ms, recall@{f['k']} vs exact "
                f"{recall:.3f} (uniformly random 384-d vectors are the worst case for a graph "
                "index, so this is a pessimistic figure, not recall on real embeddings).",
            ]
    if "retrieval_run" in result:
        r = result["retrieval_run"]
        one = r["one_question_per_call"]
        lines += [
            "",
            f"`retrieval.run` over {r['n_chunks']:,} chunks: one question per call p50 "
            f"{one['p50_ms']:.1f} ms / p95 {one['p95_ms']:.1f} ms; {r['n_queries']} questions in "
            f"one call {r['batched_ms_per_question']:.1f} ms per question ({r['note']})."
            + (
                f" Embedding one query alone: p50 {emb['p50_ms']:.1f} / p95 {emb['p95_ms']:.1f} ms."
                if (emb := r.get("query_embedding_alone"))
                else ""
            ),
        ]
    rss = ", ".join(f"{k} {v} MB" for k, v in result["peak_rss_mb"].items())
    lines += ["", f"Peak RSS (process, cumulative): {rss}."]
    return "\n".join(lines)
