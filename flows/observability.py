"""What a run tells its operators: stage timings and cache hits as Prefect artifacts, log lines
per stage with the run and stage in context.

`stage_rows` is pure (a PipelineResult or a run's summary.json in, rows out); `publish_*` create
the artifacts only inside a Prefect flow run, so plain-Python callers (tests, backfill) pay nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import secrets
from typing import TYPE_CHECKING, Any

from stages.common import logs

if TYPE_CHECKING:
    from flows.results import PipelineResult, StageResult

log = logging.getLogger(__name__)
ROW_FIELDS = ("stage", "version", "key", "seconds", "cache_hit", "rows")


# ---------------------------------------------------------------- rows


def _version(stage: str) -> str:
    from flows.executor import SOURCE_VERSION
    from flows.registry import STAGES

    return STAGES[stage].VERSION if stage in STAGES else SOURCE_VERSION


def _rows_text(rows: dict[str, int]) -> str:
    return ", ".join(f"{name}={count}" for name, count in rows.items())


def stage_row(result: StageResult) -> dict[str, Any]:
    return {
        "stage": result.stage,
        "version": _version(result.stage),
        "key": result.ref.key,
        "seconds": round(result.seconds, 3),
        "cache_hit": bool(result.ref.cache_hit),
        "rows": _rows_text(result.rows),
    }


def stage_rows(result: PipelineResult) -> list[dict[str, Any]]:
    """One row per stage (and source) in execution order: stage, version, key, seconds,
    cache_hit, rows. A cache hit is the artifact store finding the key already written, the same
    rule the run summary uses."""
    return [stage_row(r) for r in result.results.values()]


def summary_stage_rows(summary: dict) -> list[dict[str, Any]]:
    """The same rows from a run folder's summary.json (what backfill and the inbox leave)."""
    return [
        {
            "stage": name,
            "version": _version(name),
            "key": info["key"],
            "seconds": info["seconds"],
            "cache_hit": bool(info["cache_hit"]),
            "rows": _rows_text(info["rows"]),
        }
        for name, info in summary["stages"].items()
    ]


def status_counts(result: PipelineResult) -> dict[str, int]:
    counts = {"questions": result.final_answers.num_rows}
    for status in result.final_answers.column("status").to_pylist():
        counts[status] = counts.get(status, 0) + 1
    return counts


def summary_markdown(rows: list[dict[str, Any]], counts: dict[str, int], title: str) -> str:
    hits = sum(r["cache_hit"] for r in rows)
    total = sum(r["seconds"] for r in rows)
    lines = [
        f"# {title}",
        "",
        ", ".join(f"{name} {count}" for name, count in counts.items()),
        "",
        f"cache hits {hits}/{len(rows)}, stage time {total:.2f}s",
        "",
        "| stage | version | seconds | cache | rows |",
        "|---|---|---:|---|---|",
    ]
    for r in rows:
        cache = "hit" if r["cache_hit"] else "miss"
        lines.append(
            f"| {r['stage']} | {r['version']} | {r['seconds']:.3f} | {cache} | {r['rows']} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- Prefect artifacts


def artifact_key(*parts: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")


def in_flow_run() -> bool:
    from prefect.context import FlowRunContext

    return FlowRunContext.get() is not None


def publish_tables(key: str, rows: list[dict[str, Any]], markdown: str, description: str) -> bool:
    """A table artifact `key` and a markdown artifact `key-summary`, only inside a flow run."""
    if not in_flow_run():
        return False
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    create_table_artifact(table=rows, key=key, description=description)
    create_markdown_artifact(markdown=markdown, key=f"{key}-summary", description=description)
    return True


def publish_run_artifacts(result: PipelineResult, name: str = "grounding-run") -> bool:
    """Stage timings and cache hits of a pipeline run, called at the end of the pipeline flow.
    The key is stable (`grounding-run-stages`) so the UI shows the history of every run."""
    rows = stage_rows(result)
    counts = status_counts(result)
    hits = sum(r["cache_hit"] for r in rows)
    log.info(
        "run finished: %s, cache hits %d/%d",
        ", ".join(f"{k} {v}" for k, v in counts.items()),
        hits,
        len(rows),
        extra={"cache_hits": hits, "stages": len(rows), **counts},
    )
    title = f"Pipeline run {logs.current_run_id() or ''}".strip()
    return publish_tables(
        artifact_key(name, "stages"),
        rows,
        summary_markdown(rows, counts, title),
        "stage timings and cache hits",
    )


# ---------------------------------------------------------------- logging hooks


def new_run_id() -> str:
    """The id a CLI run's log lines and its runs/<run_id>/ folder carry: UTC start time, process
    id and a random suffix (two runs in one process and one second stay apart)."""
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{os.getpid()}-{secrets.token_hex(2)}"


def log_stage_event(event: str, stage: str, result: StageResult | None) -> None:
    """A pipeline stage listener: the stage in context while it runs, a timing line when done."""
    if event == "start":
        logs.set_stage(stage)
        log.debug("stage started")
        return
    logs.set_stage(stage)
    if result is not None:
        log.info(
            "stage done in %.2fs (%s)",
            result.seconds,
            "cache hit" if result.ref.cache_hit else "computed",
            extra={
                "seconds": round(result.seconds, 3),
                "cache_hit": bool(result.ref.cache_hit),
                "key": result.ref.key,
            },
        )
    logs.set_stage(None)


_installed = False


def install_logging(
    log_format: str | None, level: str | None, run_id: str | None, stage_events: bool = True
) -> None:
    """Configure log output and, once per process, the per-stage listener (which imports the
    executor, and with it every stage module: `stage_events=False` keeps `--help` fast)."""
    global _installed
    if log_format == "json" and stage_events:
        import prefect  # noqa: F401 - Prefect installs its console handlers on import; replace them
    logs.configure(log_format, level)  # type: ignore[arg-type]
    if run_id:
        logs.set_run_id(run_id)
        os.environ[logs.RUN_ID_ENV] = run_id
    if stage_events and not _installed:
        from flows.executor import on_stage_event

        on_stage_event(log_stage_event)
        _installed = True
