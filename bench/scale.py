"""Large corpora: a full build, then what a change costs when the store is warm.

The corpus is built at bench time from BEIR SciFact abstracts (../shared/datasets/scifact, used
for benchmarking only), one Markdown file per abstract, no catalog: the layout of
`grounding run --corpus <folder>`. Sizes above SciFact's 5,183 abstracts repeat them with a
numbered title, so the text differs and every copy is parsed and embedded.

Per size, each build is a child process (snapshot, ingestion, indexing through the executor,
into one store, documents parsed in one process per core as `grounding run` does). Its peak RSS is
reported twice: the largest single process (ru_maxrss from os.wait4, as the `user_folder` bench)
and the largest sum over the child and the parsing processes it starts (sampled every 0.1 s):
1. the full build (cold store);
2. +1 new document and 1 edited one (target: <= 5 % of the full build's time);
3. 1 % of the documents edited (target: <= 10 %);
4. 1 % deleted: no chunk of a deleted document may be left in the chunks, BM25 or FAISS.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "scale"
DESCRIPTION = "1k/5k SciFact abstracts as files: full build, then +1/edit 1, edit 1 %, delete 1 %"
DEFAULT_SIZES = (1000, 5000)
TARGETS = {"add_and_edit_one": 0.05, "edit_one_percent": 0.10, "delete_one_percent": 0.10}


# ---------------------------------------------------------------- the corpus


def abstracts(limit: int) -> list[dict[str, str]]:
    folder = common.dataset_dir("scifact", ("corpus.jsonl",))
    records = []
    with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("text", "").strip():
                records.append(record)
    result = []
    for copy in range(limit // len(records) + 1):
        for record in records:
            if len(result) == limit:
                return result
            title = record["title"] if copy == 0 else f"{record['title']} (copy {copy})"
            name = f"{record['_id']}-{copy}.md"
            result.append({"name": name, "title": title, "text": record["text"]})
    return result


def write_doc(folder: Path, doc: dict[str, str]) -> None:
    (folder / doc["name"]).write_text(f"# {doc['title']}\n\n{doc['text']}\n", encoding="utf-8")


def edit(folder: Path, name: str) -> None:
    path = folder / name
    path.write_text(path.read_text() + "\nThis abstract was revised for the benchmark.\n")


# ---------------------------------------------------------------- one build (in a child process)


def child(corpus: str, store_path: str, out: str, overrides: str = "{}") -> None:
    """Snapshot + ingestion + indexing into `store_path`; timings and counts to `out`.
    `overrides` (JSON, stage -> field -> value) are the bench's `--set` for these two stages."""
    from flows.executor import execute_stage, local_processes, store_source
    from stages import indexing, ingestion
    from stages.common.stat_cache import StatCache
    from stages.common.text import tokenize
    from stages.store import ArtifactStore

    started = time.perf_counter()
    store = ArtifactStore(store_path)
    seconds: dict[str, float] = {}
    with common.timed(seconds, "snapshot"):
        # as the pipeline does (flows.executor.corpus_snapshot): unchanged files are not re-read
        stat_cache = StatCache(Path(store_path) / "corpus.stat" / "bench.json")
        snapshot = ingestion.snapshot_corpus(corpus, stat_cache=stat_cache)
        source = store_source(store, "corpus", snapshot, "corpus_files")
    settings = json.loads(overrides)
    processes = local_processes(None)  # the default runner's: one per CPU core
    ingested = execute_stage(
        store,
        "ingestion",
        ingestion.Config(**settings.get("ingestion", {})),
        {"corpus": source.ref},
        processes=processes,
    )
    seconds["ingestion"] = round(ingested.seconds, 3)
    index_config = indexing.Config(**settings.get("indexing", {}))
    indexed = execute_stage(store, "indexing", index_config, {"ingestion": ingested.ref})
    seconds["indexing"] = round(indexed.seconds, 3)
    total = time.perf_counter() - started
    chunks = store.read_table(ingested.ref, "chunks")
    texts = [
        indexing.chunk_index_text(t, s, x)
        for t, s, x in zip(
            chunks.column("title").to_pylist(),
            chunks.column("section_path").to_pylist(),
            chunks.column("text").to_pylist(),
            strict=True,
        )
    ]
    with common.timed(seconds, "bm25_rebuild_alone"):  # what rebuilding BM25 whole costs
        config = index_config
        indexing.bm25_weights([tokenize(t) for t in texts], config.k1, config.b, config.epsilon)
    computed = {}
    for result in (ingested, indexed):
        computed.update(store.manifest(result.ref).get("parts_computed", {}))
    record = {
        "seconds": seconds,
        "stages_s": round(seconds["snapshot"] + ingested.seconds + indexed.seconds, 3),
        "in_process_s": round(total, 3),
        "documents": store.manifest(ingested.ref)["tables"]["documents"]["rows"],
        "chunks": chunks.num_rows,
        "hashed": stat_cache.hashed,
        "parsed": computed.get("ingestion.parts", 0),
        "embedded": computed.get("indexing.embeddings", 0),
        "parse_processes": processes,
        "refs": {"ingestion": ingested.ref.path, "indexing": indexed.ref.path},
    }
    Path(out).write_text(json.dumps(record))


class TreeMemory:
    """The largest RSS sum of a process and its descendants, sampled on a thread: ru_maxrss
    sees one process at a time, and the build starts parsing processes."""

    def __init__(self, pid: int, every_s: float = 0.1) -> None:
        self.peak_bytes = 0
        self._pid, self._every = pid, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        import psutil

        try:
            root = psutil.Process(self._pid)
        except psutil.NoSuchProcess:
            return
        while not self._stop.is_set():
            try:
                processes = [root, *root.children(recursive=True)]
            except psutil.Error:  # the build has just ended
                return
            total = 0
            for process in processes:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    continue
            self.peak_bytes = max(self.peak_bytes, total)
            self._stop.wait(self._every)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return round(self.peak_bytes / 2**20, 1)


def build(
    corpus: Path, store: Path, work: Path, label: str, overrides: dict | None = None
) -> dict[str, Any]:
    """One build as a child process: its wall time (imports and model load included) and RSS."""
    out = work / f"{label}.json"
    arguments = ", ".join(repr(str(a)) for a in (corpus, store, out, json.dumps(overrides or {})))
    code = f"from bench.scale import child; child({arguments})"
    log = work / f"{label}.log"
    started = time.perf_counter()
    with open(log, "w") as output:
        process = subprocess.Popen(
            [sys.executable, "-c", code], cwd=common.ROOT, stdout=output, stderr=output
        )
        memory = TreeMemory(process.pid)
        _, status, usage = os.wait4(process.pid, 0)
        tree_mb = memory.stop()
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"build {label} failed: {log.read_text(errors='replace')[-2000:]}")
    record = json.loads(out.read_text())
    record.update(
        wall_s=round(wall, 2),
        peak_rss_mb=round(usage.ru_maxrss / 1024, 1),
        peak_rss_all_processes_mb=tree_mb,
    )
    common.console.print(
        f"{label}: {record['wall_s']} s wall, stages {record['stages_s']} s, parsed "
        f"{record['parsed']}, embedded {record['embedded']}, {record['chunks']} chunks, peak RSS "
        f"{record['peak_rss_mb']} MB (all processes {tree_mb} MB)",
        markup=False,
    )
    return record


def leftovers(record: dict[str, Any], deleted_ids: set[str]) -> dict[str, int]:
    """Chunks of deleted documents in the chunks table, and index rows beyond the chunks."""
    import faiss
    import numpy as np
    import pyarrow.parquet as pq

    ingestion_dir = Path(record["refs"]["ingestion"])
    indexing_dir = Path(record["refs"]["indexing"])
    chunks = pq.read_table(ingestion_dir / "chunks.parquet", columns=["doc_id"])
    doc_ids = chunks.column("doc_id").to_pylist()
    postings = pq.read_table(indexing_dir / "bm25_postings.parquet", columns=["row"])
    rows = postings.column("row").to_numpy()
    dense = faiss.read_index(str(indexing_dir / "dense.faiss"))
    vectors = np.load(indexing_dir / "embeddings.npy")
    return {
        "chunks_of_deleted_docs": sum(d in deleted_ids for d in doc_ids),
        "bm25_rows_beyond_chunks": int((rows >= len(doc_ids)).sum()),
        "faiss_vectors_beyond_chunks": max(0, int(dense.ntotal) - len(doc_ids)),
        "embeddings_beyond_chunks": max(0, len(vectors) - len(doc_ids)),
    }


# ---------------------------------------------------------------- the bench


def _build_s(record: dict[str, Any]) -> float:
    return record["seconds"]["ingestion"] + record["seconds"]["indexing"]


def run_size(size: int, work: Path, overrides: dict | None = None) -> dict[str, Any]:
    docs = abstracts(size)
    corpus, store = work / f"corpus-{size}", work / f"store-{size}"
    corpus.mkdir()
    for doc in docs:
        write_doc(corpus, doc)
    full = build(corpus, store, work, f"{size}-full", overrides)
    extra = abstracts(size + 1)[-1]
    write_doc(corpus, extra)
    edit(corpus, docs[0]["name"])
    add_and_edit = build(corpus, store, work, f"{size}-add-and-edit-one", overrides)
    step = 100  # every 100th document: 1 %
    for doc in docs[1::step]:
        edit(corpus, doc["name"])
    edit_percent = build(corpus, store, work, f"{size}-edit-one-percent", overrides)
    deleted = docs[2::step]
    for doc in deleted:
        (corpus / doc["name"]).unlink()
    delete_percent = build(corpus, store, work, f"{size}-delete-one-percent", overrides)
    left = leftovers(delete_percent, {Path(d["name"]).stem for d in deleted})
    assert not any(left.values()), f"deleted documents left in the indexes: {left}"
    reruns = {
        "add_and_edit_one": add_and_edit,
        "edit_one_percent": edit_percent,
        "delete_one_percent": delete_percent,
    }
    for record in (full, *reruns.values()):
        record.pop("refs")
    return {
        "documents": size,
        "full": full,
        "reruns": reruns,
        "ratios": {
            name: {
                "wall": round(record["wall_s"] / full["wall_s"], 4),
                "stages": round(record["stages_s"] / full["stages_s"], 4),
                # the issue's measure: the two stages' own seconds, without Python's start-up
                "ingestion_indexing": round(_build_s(record) / _build_s(full), 4),
                "target": TARGETS[name],
            }
            for name, record in reruns.items()
        },
        "deleted_documents": len(deleted),
        "leftovers_after_delete": left,
    }


def result_name(overrides: dict | None, sizes: list[int]) -> str:
    """`scale`, or `scale-<sizes>-<settings>` for other sizes or a run with `--set`, so the
    default run's figures stay where the README reads them."""
    settings = [] if tuple(sizes) == DEFAULT_SIZES else ["-".join(str(n) for n in sizes)]
    settings += [
        f"{field}-{value}"
        for fields in (overrides or {}).values()
        for field, value in fields.items()
    ]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(settings)).strip("-")[:80]
    return f"{NAME}-{slug}" if slug else NAME


def run(
    results_dir: Path | None = None,
    sizes: list[int] | None = None,
    overrides: dict | None = None,
    **_: Any,
) -> dict[str, Any]:
    overrides = {k: v for k, v in (overrides or {}).items() if k in ("ingestion", "indexing")}
    sizes = list(sizes or DEFAULT_SIZES)
    abstracts(1)  # Skipped now, not after a build, when the data set is absent
    started = time.perf_counter()
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for size in sizes:
            common.console.rule(f"{size} documents")
            results[str(size)] = run_size(size, Path(tmp), overrides)
    payload = {
        "status": "ok",
        "sizes": results,
        "overrides": overrides,
        "cpu_count": os.cpu_count(),
        "runtime_s": round(time.perf_counter() - started, 1),
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
    }
    common.write_result(result_name(overrides, sizes), payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        "| documents | build | chunks | wall s | ingestion s | indexing s | parsed | embedded "
        "| peak RSS MB, one process / all | vs full: wall / ingestion+indexing (target) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for size, figures in result["sizes"].items():
        builds = {"full": figures["full"], **figures["reruns"]}
        for name, record in builds.items():
            ratio = figures["ratios"].get(name)
            shown = "–"
            if ratio:
                own = ratio.get("ingestion_indexing", _build_s(record) / _build_s(figures["full"]))
                shown = f"{ratio['wall']:.3f} / {own:.3f} (<= {ratio['target']})"
            lines.append(
                f"| {size} | {name.replace('_', ' ')} | {record['chunks']} | {record['wall_s']} "
                f"| {record['seconds']['ingestion']} | {record['seconds']['indexing']} "
                f"| {record['parsed']} | {record['embedded']} | {record['peak_rss_mb']} / "
                f"{record.get('peak_rss_all_processes_mb', '–')} | {shown} |"
            )
    lines.append("")
    lines.append(
        "Wall = the child process that snapshots, ingests and indexes (imports and model load "
        "included). After deleting 1 %, chunks/BM25/FAISS rows of deleted documents: "
        + ", ".join(
            f"{size}: {sum(f['leftovers_after_delete'].values())}"
            for size, f in result["sizes"].items()
        )
        + ". BM25 is rebuilt whole on every change: "
        + ", ".join(
            f"{size} docs {f['full']['seconds']['bm25_rebuild_alone']} s"
            for size, f in result["sizes"].items()
        )
        + "."
    )
    return "\n".join(lines)
