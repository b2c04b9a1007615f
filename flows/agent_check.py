"""The agent-run check over run-log files: in process (`check_items`), and as a batch whose
partitions are content-addressed artifacts, in plain Python (`run_agent_check`) or as the Prefect
flow `agent-run-check` (`agent_check_flow`). `grounding check` (`cli/check.py`) runs them.

Each run-log file is a partition: its runs, tool-call validations, claims and reports are written
as one content-addressed artifact (`<store>/agent_check/<key>/`, key = sha256 of the file's bytes,
the check's version and config), atomically, so a file already checked with the same settings is
skipped: kill the batch at any point and run it again to finish the rest, like `grounding
backfill`. A nightly deployment of the flow can audit yesterday's logs.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from pathlib import Path
from typing import Any

STAGE = "agent_check"
TABLES = ("agent_runs", "agent_tool_calls", "agent_claims", "agent_reports")


# ---------------------------------------------------------------- one batch, in process


def check_items(items: list, config: Any, progress: Any = None) -> list[dict]:
    """Reports of the parsed runs, and an error row for each one that could not be read.
    A run that fails in the checker (a bug, a model crash) is an error row too; the batch goes
    on."""
    from agents.checking import RunError, check_run, make_toolkit

    toolkit = make_toolkit(config)
    rows = []
    for item in items:
        if isinstance(item, RunError):
            rows.append({"run_id": item.run_id, "source": item.source, "error": item.error})
        else:
            try:
                rows.append(check_run(item, config, toolkit=toolkit))
            except Exception as exc:  # one run's failure is its own
                first = (str(exc).splitlines() or [""])[0][:300]
                rows.append(
                    {"run_id": item.run_id, "source": "", "error": f"{type(exc).__name__}: {first}"}
                )
        if progress is not None:
            progress(rows[-1])
    return rows


# ---------------------------------------------------------------- artifacts: the batch flow


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    strings = pa.list_(pa.string())
    return {
        "agent_runs": pa.schema(
            [("run_id", pa.string()), ("source", pa.string()), ("format", pa.string()),
             ("question", pa.string()), ("answer", pa.string()), ("tool_calls", pa.int32()),
             ("tool_results", pa.int32()), ("error", pa.string())]
        ),
        "agent_tool_calls": pa.schema(
            [("run_id", pa.string()), ("call_id", pa.string()), ("tool", pa.string()),
             ("attempt", pa.int32()), ("args", pa.string()), ("status", pa.string()),
             ("errors", strings), ("invented_identifiers", strings), ("feedback", pa.string())]
        ),
        "agent_claims": pa.schema(
            [("run_id", pa.string()), ("text", pa.string()), ("score", pa.float64()),
             ("critical", pa.bool_()), ("status", pa.string()), ("judge", pa.string()),
             ("anchors", strings), ("reasons", strings)]
        ),
        "agent_reports": pa.schema(
            [("run_id", pa.string()), ("action", pa.string()), ("overall_score", pa.float64()),
             ("diagnosis", pa.string()), ("reasons", strings), ("feedback", strings),
             ("refusal", pa.string()), ("judge_calls", pa.int32()), ("seconds", pa.float64()),
             ("version", pa.string()), ("report", pa.string())]
        ),
    }  # fmt: skip


def artifact_tables(items: list, rows: list[dict]) -> dict[str, Any]:
    """The four tables of one partition (runs, tool-call validations, claims, reports)."""
    import pyarrow as pa

    from agents.checking import RunError

    runs, calls, claims, reports = [], [], [], []
    by_id = {r["run_id"]: r for r in rows}
    for item in items:
        row = by_id.get(item.run_id, {})
        if isinstance(item, RunError):
            runs.append({"run_id": item.run_id, "source": item.source, "error": item.error})
            continue
        runs.append(
            {
                "run_id": item.run_id,
                "source": "",
                "format": item.format,
                "question": item.question,
                "answer": item.answer,
                "tool_calls": len(item.calls),
                "tool_results": len(item.results),
                "error": row.get("error"),
            }
        )
        if "error" in row or not row:
            continue
        calls += [{"run_id": item.run_id, **v} for v in row["tool_call_validations"]]
        claims += [
            {
                "run_id": item.run_id,
                **{k: c.get(k) for k in ("text", "score", "critical", "status", "judge")},
                "anchors": [s.get("anchor") for s in c.get("evidence_spans") or []],
                "reasons": c.get("reasons") or [],
            }
            for c in row["claims"]
        ]
        reports.append(
            {
                "run_id": item.run_id,
                "action": row["action"],
                "overall_score": row["overall_score"],
                "diagnosis": row["diagnosis"]["mode"],
                "reasons": row["reasons"],
                "feedback": row["feedback"],
                "refusal": row["refusal"],
                "judge_calls": row["judge_calls"],
                "seconds": row["seconds"],
                "version": row["version"],
                "report": json.dumps(row, default=str),
            }
        )
    schemas = _schemas()
    data = {"agent_runs": runs, "agent_tool_calls": calls, "agent_claims": claims}
    data["agent_reports"] = reports
    return {
        name: pa.Table.from_pylist(
            [{f: r.get(f) for f in schemas[name].names} for r in data[name]],
            schema=schemas[name],
        )
        for name in TABLES
    }


def _parquet_bytes(table: Any) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def partition_key(path: Path, config: Any) -> tuple[str, str]:
    """(artifact key, the file's sha256): same name and bytes, same check, same settings = same
    key (the name counts: a run without an id is named after its file)."""
    from agents.checking import VERSION
    from stages.store import artifact_key

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    inputs = {"file": digest, "name": path.name}
    return artifact_key(STAGE, VERSION, config.model_dump(mode="json"), inputs), digest


def check_partition(path: Path, store: Any, config: Any) -> dict:
    """One run-log file: skipped when its artifact exists, else checked and written."""
    from agents.checking import VERSION, formats

    started = time.perf_counter()
    key, digest = partition_key(path, config)
    if (ref := store.lookup(STAGE, key)) is not None:
        # checked before with these settings: its counts come from the written reports
        import pyarrow.parquet as pq

        runs = pq.read_table(store.blob_path(ref, "agent_runs.parquet"), columns=["error"])
        reports = pq.read_table(store.blob_path(ref, "agent_reports.parquet"), columns=["action"])
        actions = reports.column("action").to_pylist()
        errors = sum(e is not None for e in runs.column("error").to_pylist())
        counts = {a: actions.count(a) for a in ("emit", "revise", "block")} | {"error": errors}
        return {"partition": path.name, "status": "skipped", "key": key, **counts}
    items = list(formats.read_file(path))
    rows = check_items(items, config)
    tables = artifact_tables(items, rows)
    ref = store.write(
        STAGE,
        key,
        version=VERSION,
        config=config.model_dump(mode="json"),
        input_keys={"file": digest, "name": path.name},
        # Parquet files beside the manifest: the contracts module holds the pipeline's tables;
        # these are the audit's own, their schemas in this module
        outputs={f"{name}.parquet": _parquet_bytes(t) for name, t in tables.items()},
        started_at=started,
        extra={"source": str(path), "runs": len(items)},
    )
    actions = [r.get("action", "error") for r in rows]
    return {
        "partition": path.name,
        "status": "done",
        "key": key,
        "path": ref.path,
        "runs": len(items),
        **{a: actions.count(a) for a in ("emit", "revise", "block", "error")},
    }


def run_agent_check(folder: Path, store_root: Path | str, config: Any) -> list[dict]:
    """Every run-log file under `folder` (one partition each); a failure stays in its own."""
    from agents.checking import formats
    from stages.store import ArtifactStore

    store = ArtifactStore(store_root)
    outcomes = []
    for path in formats.iter_sources(Path(folder)):
        try:
            outcomes.append(check_partition(path, store, config))
        except Exception as exc:
            reason = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
            outcomes.append({"partition": path.name, "status": "failed", "reason": reason})
    return outcomes


def read_partition(store_root: Path | str, key: str, name: str) -> Any:
    """One table of a written partition (`agent_reports`, `agent_claims`…)."""
    import pyarrow.parquet as pq

    from stages.store import ArtifactStore

    store = ArtifactStore(store_root)
    ref = store.lookup(STAGE, key)
    if ref is None:
        raise FileNotFoundError(f"no {STAGE} artifact {key}")
    return pq.read_table(store.blob_path(ref, f"{name}.parquet"))


def agent_check_flow(folder: str, store_root: str, config: dict) -> list[dict]:
    """The Prefect flow `agent-run-check`: one task per run-log file (built on first use, so
    the command imports Prefect only when it runs the flow)."""
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from agents.checking import Config, formats
    from stages.store import ArtifactStore

    settings = Config(**config)

    @task(name="check-run-log", cache_policy=NO_CACHE, persist_result=False)
    def one(path: str) -> dict:
        return check_partition(Path(path), ArtifactStore(store_root), settings)

    @flow(name="agent-run-check", log_prints=True, validate_parameters=False)
    def run(folder: str) -> list[dict]:
        futures = [one.submit(str(p)) for p in formats.iter_sources(Path(folder))]
        outcomes = []
        for future, path in zip(futures, formats.iter_sources(Path(folder)), strict=True):
            try:
                outcomes.append(future.result())
            except Exception as exc:
                outcomes.append({"partition": path.name, "status": "failed", "reason": str(exc)})
        return outcomes

    return run(folder)
