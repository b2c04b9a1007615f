"""The run ledger: one row per run and metric, in the artifact store under `ledger/`.

Each run adds one Parquet file of its own (`ledger/<time>-<run id>-<nonce>.parquet`), written
under a temporary name and renamed (one PUT on object storage), so an append is atomic, two runs
appending at once never overwrite each other, and a killed run leaves no half row. The folder
holds no `manifest.json`, so `grounding artifacts gc` never takes it for an artifact.

Metric kinds, and what `quality.drift` does with each:
- proportion: `successes` of `trials` (answer-state mix, refusal/block/revise rates, ingestion
  error rate): a two-proportion test against the baseline window;
- distribution: the raw `values` (answer confidence, claim scores, the retrieval top score per
  question): a population-stability index against the baseline window's values;
- count and seconds (questions, documents, stage seconds): recorded and plotted, never alarmed on
  by themselves (a cached stage takes 0 s; a corpus may grow).
The corpus snapshot key, the question set's key (the run's stream), the stages' config digest and
versions are columns of every row.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from flows.results import PipelineResult
    from stages.store import ArtifactStore

log = logging.getLogger(__name__)

LEDGER_FOLDER = "ledger"
SOURCES = ("corpus", "questions")
LEDGER_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("recorded_at", pa.string()),  # ISO 8601 UTC with microseconds: the ledger's order
        ("stream", pa.string()),  # the question set's key: runs compared are on the same set
        ("corpus_snapshot", pa.string()),
        ("config_key", pa.string()),  # digest of every stage's config
        ("stage_versions", pa.string()),  # JSON {stage: VERSION}
        ("metric", pa.string()),
        ("kind", pa.string()),  # proportion | distribution | count | seconds
        ("value", pa.float64()),  # the rate, the mean, the count or the seconds
        ("successes", pa.int64()),
        ("trials", pa.int64()),
        ("values", pa.list_(pa.float64())),
        ("items", pa.list_(pa.string())),  # corpus.documents: the doc ids
    ]
)
KINDS = ("proportion", "distribution", "count", "seconds")


def _metric(metric: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"metric": metric, "kind": kind, **fields}


def proportion(metric: str, successes: int, trials: int) -> dict[str, Any]:
    value = successes / trials if trials else None
    return _metric(metric, "proportion", value=value, successes=successes, trials=trials)


def distribution(metric: str, values: list[float]) -> dict[str, Any]:
    clean = [float(v) for v in values if v is not None]
    mean = sum(clean) / len(clean) if clean else None
    return _metric(metric, "distribution", value=mean, values=clean)


def run_metrics(result: PipelineResult, store: ArtifactStore, summary: dict) -> list[dict]:
    """The metrics of one run, from its answers, reports and stage artifacts."""
    answers = result.final_answers
    n = answers.num_rows
    statuses = answers.column("status").to_pylist()
    states = answers.column("state").to_pylist()
    actions = answers.column("action").to_pylist()
    metrics = [_metric("run.questions", "count", value=float(n))]
    for status in ("answered", "refused", "blocked"):
        metrics.append(proportion(f"rate.{status}", statuses.count(status), n))
    metrics.append(proportion("rate.revised", actions.count("revise"), n))
    for state in sorted({s for s in states if s}):
        metrics.append(proportion(f"state.{state}", states.count(state), n))
    metrics.append(distribution("dist.confidence", answers.column("confidence").to_pylist()))
    scores = [
        claim["score"]
        for claims in result.reports.column("claims").to_pylist()
        for claim in claims or []
    ]
    metrics.append(distribution("dist.claim_score", scores))
    metrics.append(distribution("dist.retrieval_top_score", _top_scores(result, store)))
    files = result.results["corpus"].rows.get("corpus_files", 0)
    errors = int(summary.get("ingestion_errors", 0))
    metrics.append(proportion("ingestion.error_rate", min(errors, files), files))
    metrics.append(_metric("ingestion.errors", "count", value=float(errors)))
    documents = store.read_table(result.refs["ingestion"], "documents").column("doc_id")
    doc_ids = sorted(set(documents.to_pylist()))
    metrics.append(_metric("corpus.documents", "count", value=float(len(doc_ids)), items=doc_ids))
    for name, stage in result.results.items():
        metrics.append(_metric(f"seconds.{name}", "seconds", value=round(stage.seconds, 4)))
    metrics.append(_metric("seconds.wall", "seconds", value=summary.get("wall_seconds")))
    return metrics


def _top_scores(result: PipelineResult, store: ArtifactStore) -> list[float]:
    """Per question, the best dense (cosine) score among its retrieved candidates: what drops
    when the documents that answered a question are gone. Fused scores are rank-based (RRF), so
    they would not move."""
    candidates = store.read_table(result.refs["retrieval"], "candidates")
    if candidates.num_rows == 0:
        return []
    best = candidates.group_by("question_id").aggregate([("dense_score", "max")])
    return [v for v in best.column("dense_score_max").to_pylist() if v is not None]


def _config_key(store: ArtifactStore, result: PipelineResult) -> tuple[str, dict[str, str]]:
    """A digest of every stage's config and each stage's VERSION, from the artifacts' manifests
    (what the run really used, not what the code says today)."""
    configs, versions = {}, {}
    for name, stage in result.results.items():
        if name in SOURCES:
            continue
        manifest = store.manifest(stage.ref)
        configs[name] = manifest.get("config", {})
        versions[name] = str(manifest.get("version", ""))
    digest = hashlib.sha256(json.dumps(configs, sort_keys=True, default=str).encode())
    return digest.hexdigest(), versions


def ledger_rows(
    run_id: str, result: PipelineResult, store: ArtifactStore, summary: dict
) -> pa.Table:
    config_key, versions = _config_key(store, result)
    common = {
        "run_id": run_id,
        "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="microseconds"),
        "stream": result.refs["questions"].key,
        "corpus_snapshot": result.refs["corpus"].key,
        "config_key": config_key,
        "stage_versions": json.dumps(versions, sort_keys=True),
    }
    rows = [{**common, **m} for m in run_metrics(result, store, summary)]
    return pa.Table.from_pylist(rows, schema=LEDGER_SCHEMA)


def write_rows(store: ArtifactStore, table: pa.Table) -> str:
    """Add a run's rows as a new file of the ledger, atomically; returns where."""
    run_id = table.column("run_id")[0].as_py() if table.num_rows else "empty"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)
    name = f"{stamp}-{safe}-{uuid.uuid4().hex[:8]}.parquet"
    table = table.cast(LEDGER_SCHEMA)
    if store.remote:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        path = f"{store.base}/{LEDGER_FOLDER}/{name}"
        store.fs.pipe_file(path, sink.getvalue().to_pybytes())  # one PUT: atomic
        return f"{store.url}/{LEDGER_FOLDER}/{name}"
    folder = Path(store.root) / LEDGER_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    # not `.tmp-`: `artifacts gc` removes `*/.tmp-*` folders and this is a file
    tmp = folder / f".writing-{name}"
    try:
        pq.write_table(table, tmp)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, folder / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return str(folder / name)


def append_run(
    store: ArtifactStore, run_id: str, result: PipelineResult, summary: dict
) -> str | None:
    """Record a finished run in the ledger. A failure is logged and the run stands: its folder
    is already written and is what its users read; the ledger misses one point."""
    try:
        return write_rows(store, ledger_rows(run_id, result, store, summary))
    except Exception:
        log.exception("run %s: could not append to the run ledger", run_id)
        return None


def read_ledger(store: ArtifactStore) -> pa.Table:
    """Every run's rows in the order they were recorded (empty when no run was recorded)."""
    if store.remote:
        store.fs.invalidate_cache()
        paths = sorted(store.fs.glob(f"{store.base}/{LEDGER_FOLDER}/*.parquet"))
        paths = [p for p in paths if not p.rsplit("/", 1)[-1].startswith(".")]
        tables = [pq.read_table(store.fs.open(p, "rb")) for p in paths]
    else:
        folder = Path(store.root) / LEDGER_FOLDER
        paths = sorted(folder.glob("[!.]*.parquet")) if folder.is_dir() else []
        tables = [pq.read_table(p) for p in paths]
    if not tables:
        return LEDGER_SCHEMA.empty_table()
    table = pa.concat_tables([t.cast(LEDGER_SCHEMA) for t in tables])
    order = pc.sort_indices(table, [("recorded_at", "ascending"), ("run_id", "ascending")])
    return table.take(order)
