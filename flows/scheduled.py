"""The three scheduled flows that `grounding serve` deploys (see flows/serve.py).

- question-inbox:  answers every question set dropped into a folder (`data/inbox`), once: a
                   record of processed files (name + sha256) skips what was already answered, and
                   `backfill_partition` (idempotent, atomic) writes `<runs_dir>/inbox/<set>/`;
- release-eval:    the nightly release gate (`flows.evaluation.release_eval_flow`) on a frozen set,
                   then the drift check of the latest run (`quality.trend.nightly_check`);
- corpus-reindex:  snapshots the corpus and runs ingestion + indexing only when the snapshot key
                   changed since the last re-index, recording which stages were cache hits.

They are module-level so a deployment's entrypoint (`flows.scheduled.<function>`) imports them;
this module imports Prefect, which is why the CLI side lives apart.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from prefect import flow

from flows.observability import (
    artifact_key,
    install_logging,
    publish_tables,
    stage_row,
    summary_markdown,
    summary_stage_rows,
)
from stages.common import logs

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG = "configs/pipeline.yaml"
INDEX_STAGES = ("ingestion", "indexing")
# by name: a runner that loads this file by path imports it as `scheduled`, outside `flows`
log = logging.getLogger("flows.scheduled")


def _path(value: str | Path) -> Path:
    """Paths in schedules are relative to the project root, wherever the runner was started."""
    path = Path(value)
    return path if path.is_absolute() else ROOT / path


def _settings(config_path: str, overrides: dict[str, Any] | None):
    from flows.pipeline_config import load_config

    return load_config(_path(config_path), overrides or {})


def _flow_logging() -> None:
    """Flow runs execute in a fresh process: log the way the `grounding` CLI that served them
    was told to (it exports GROUNDING_LOG_FORMAT), with the flow run's id as the run_id (what the
    UI shows); leave logging alone otherwise."""
    if logs.FORMAT_ENV in os.environ:
        from prefect.runtime import flow_run

        install_logging(None, None, str(flow_run.id) if flow_run.id else None)


def _write_json(path: Path, data: dict) -> None:
    """Write-then-rename, so a killed run never leaves a half-written record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    os.replace(tmp, path)


def _read_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------- question inbox


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def process_inbox(settings, inbox: Path) -> list[dict]:
    """Answer each question file in `inbox` not yet processed with its current content."""
    from flows.backfill import backfill_partition, partitions

    out_root = settings.runs_dir / "inbox"
    record_path = out_root / "processed.json"
    record = _read_json(record_path)
    if not inbox.is_dir():
        log.warning("inbox %s does not exist: nothing to answer", inbox)
        return []
    outcomes = []
    for path in partitions(str(inbox), None, None):
        digest = _sha256(path)
        seen = record.get(path.name, {})
        if seen.get("sha256") == digest and seen.get("status") in ("done", "skipped"):
            outcomes.append({"file": path.name, "status": "already processed"})
            continue
        with logs.run_scope(f"inbox/{path.stem}"):
            log.info("answering question set %s", path.name)
            try:
                outcome = backfill_partition(settings, path, out_root)
            except Exception as exc:  # one bad file does not stop the others; retried next tick
                log.exception("question set %s failed", path.name)
                outcome = {"partition": path.stem, "status": "failed", "reason": str(exc)}
        record[path.name] = {"sha256": digest, "at": _now(), **outcome}
        _write_json(record_path, record)  # after each file, so a crash loses at most one
        outcomes.append({"file": path.name, **outcome})
    return outcomes


def _publish_inbox(settings, outcomes: list[dict]) -> None:
    rows = [
        {"file": o["file"], "status": o["status"], "questions": o.get("questions", "")}
        for o in outcomes
    ]
    lines = ["# Question inbox", "", "| file | status | questions |", "|---|---|---|"]
    lines += [f"| {r['file']} | {r['status']} | {r['questions']} |" for r in rows]
    if rows:
        publish_tables("question-inbox", rows, "\n".join(lines), "question sets in the inbox")
    for outcome in outcomes:  # stage timings of each set answered in this run
        summary = settings.runs_dir / "inbox" / outcome["file"].rsplit(".", 1)[0] / "summary.json"
        if outcome["status"] == "done" and summary.is_file():
            data = json.loads(summary.read_text())
            stage_rows = summary_stage_rows(data)
            counts = {k: data[k] for k in ("questions", "answered", "refused", "blocked")}
            publish_tables(
                artifact_key("question-inbox", outcome["file"].rsplit(".", 1)[0], "stages"),
                stage_rows,
                summary_markdown(stage_rows, counts, f"Question set {outcome['file']}"),
                "stage timings and cache hits",
            )


@flow(name="question-inbox", log_prints=True, validate_parameters=False)
def question_inbox_flow(
    inbox: str = "data/inbox",
    config_path: str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
) -> dict:
    """Answer the question sets dropped into `inbox`, each once (per content)."""
    _flow_logging()
    settings = _settings(config_path, overrides)
    outcomes = process_inbox(settings, _path(inbox))
    _publish_inbox(settings, outcomes)
    failed = [o["file"] for o in outcomes if o["status"] == "failed"]
    if failed:  # a failed flow run is what the UI and notifications look at
        raise RuntimeError(f"question sets failed: {', '.join(failed)}")
    return {"files": outcomes}


# ---------------------------------------------------------------- corpus re-index


def reindex(settings, corpus_dir: Path, runner=None) -> dict:
    """Ingestion + indexing when the corpus snapshot changed since the last re-index. `runner`
    runs a stage (flows/executor.py `execute_stage` by default; inside the flow, Prefect tasks
    that spread parsing and embedding over Dask partitions when the config asks for Dask)."""
    from flows.executor import corpus_snapshot, plain_runner, store_source
    from flows.registry import WIRING
    from stages.store import ArtifactStore

    # the store may be a shared fsspec URL: let the config build it when it knows how
    store = (
        settings.artifact_store()
        if hasattr(settings, "artifact_store")
        else ArtifactStore(settings.store)
    )
    snapshot = store_source(store, "corpus", corpus_snapshot(settings, corpus_dir), "corpus_files")
    state_path = settings.runs_dir / "reindex" / "state.json"
    state = _read_json(state_path)
    previous = state.get(str(corpus_dir), {}).get("snapshot_key")
    changed = previous != snapshot.ref.key
    results = {"corpus": snapshot}
    runner = runner or plain_runner(settings)
    if changed:
        for name in INDEX_STAGES:
            refs = {p: results[p].ref for p in set(WIRING[name].values())}
            with logs.stage_scope(name):
                results[name] = runner(store, name, settings.stage_config(name), refs)
                log.info(
                    "stage done in %.2fs (%s)",
                    results[name].seconds,
                    "cache hit" if results[name].ref.cache_hit else "computed",
                )
        state[str(corpus_dir)] = {"snapshot_key": snapshot.ref.key, "at": _now()}
        _write_json(state_path, state)
    log.info("corpus %s: snapshot %s", "changed" if changed else "unchanged", snapshot.ref.key[:12])
    return {
        "corpus": str(corpus_dir),
        "snapshot_key": snapshot.ref.key,
        "previous_key": previous,
        "changed": changed,
        "stages": [stage_row(r) for r in results.values()],
    }


@flow(name="corpus-reindex-stages", validate_parameters=False)
def reindex_stages(settings, corpus_dir: Path, runner) -> dict:
    return reindex(settings, corpus_dir, runner)


@flow(name="corpus-reindex", log_prints=True, validate_parameters=False)
def corpus_reindex_flow(
    corpus: str | None = None,
    config_path: str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
) -> dict:
    """Snapshot the corpus; re-ingest and re-index only when it changed."""
    from flows.pipeline import build_task_runner, stage_runner_for

    _flow_logging()
    settings = _settings(config_path, overrides)
    # the stages run as tasks of a subflow on the configured task runner: on Dask, documents
    # and chunk vectors are computed in partitions over the workers, as in `grounding run`
    stages = reindex_stages.with_options(task_runner=build_task_runner(settings.task_runner))
    corpus_dir = _path(corpus) if corpus else settings.corpus
    outcome = stages(settings, corpus_dir, stage_runner_for(settings.task_runner))
    verdict = "changed: re-indexed" if outcome["changed"] else "unchanged: nothing to do"
    publish_tables(
        "corpus-reindex",
        outcome["stages"],
        summary_markdown(outcome["stages"], {}, f"Corpus {verdict}"),
        f"corpus snapshot {outcome['snapshot_key'][:12]}",
    )
    return outcome


# ---------------------------------------------------------------- nightly release eval


@flow(name="nightly-release-eval", log_prints=True, validate_parameters=False)
def nightly_eval_flow(
    set_name: str = "sample-v2",
    config_path: str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
    store: str | None = None,
    gate: bool = True,
    reports_dir: str = "eval/reports",
) -> dict:
    """The release-eval flow as a subflow; a regressed axis fails the run (never promotes). Then
    the drift check of the latest run in the run ledger: an alarm fails the run too."""
    from flows.evaluation import release_eval_flow
    from quality.trend import nightly_check

    _flow_logging()
    drift = nightly_check(_settings(config_path, overrides))
    outcome = release_eval_flow()(
        set_name,
        str(_path(config_path)),
        overrides or {},
        str(_path(store)) if store else None,
        gate,
        False,
        str(_path(reports_dir)),
    )
    if drift.alarms:  # after the gate ran: one failed run reports both
        raise RuntimeError(f"drift alarms on run {drift.run_id}: {len(drift.alarms)}")
    return {"set": set_name, "passed": outcome.comparison["passed"], "report": outcome.report_dir}


FLOWS = {
    "question-inbox": question_inbox_flow,
    "release-eval": nightly_eval_flow,
    "corpus-reindex": corpus_reindex_flow,
}
