"""`grounding backfill`: the pipeline over many question sets, idempotent and resumable.

Each question file is a partition. Its answers land in `<runs_dir>/backfill/<partition>/` through
the same atomic write as a run, so a partition is either complete or absent. A partition whose
folder holds the answers of the current pipeline (same final artifact key) is skipped; anything
else is (re)computed, and the artifact store means only stages whose inputs changed do work.
Kill it at any point and run it again: it finishes the rest, with nothing duplicated or lost.

Partitions run `--workers` at a time in a bounded thread pool, after the shared stages (ingestion,
indexing) are built once; per-question caching means questions already answered by this
pipeline in any partition are not computed again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()
QUESTION_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")  # as flows.question_files reads


def partitions(pattern: str, since: dt.date | None, until: dt.date | None) -> list[Path]:
    """Question files from a folder or a glob, optionally by modification date."""
    base = Path(pattern)
    files = sorted(base.iterdir()) if base.is_dir() else sorted(Path().glob(pattern))
    chosen = []
    for path in files:
        if path.suffix.lower() not in QUESTION_SUFFIXES or not path.is_file():
            continue
        modified = dt.date.fromtimestamp(path.stat().st_mtime)
        if (since and modified < since) or (until and modified > until):
            continue
        chosen.append(path)
    return chosen


def _done_key(folder: Path) -> str | None:
    summary = folder / "summary.json"
    if not summary.is_file():
        return None
    return json.loads(summary.read_text())["stages"].get("revise", {}).get("key")


def backfill_partition(settings, path: Path, out_root: Path, strict: bool = False) -> dict:
    """Run one partition unless its answers for this exact pipeline already exist. Its bad
    records are skipped and listed (`input_errors.parquet`), unless `strict`."""
    from flows.executor import run_stages
    from flows.question_files import QuestionError, read_question_file
    from flows.runs import summarize, write_run

    started = time.perf_counter()
    read = read_question_file(
        path, settings.default_principal, settings.default_query_type, strict=strict
    )
    table = read.table
    counts = {"questions": table.num_rows, "input_errors": len(read.errors)}
    if not table.num_rows:
        raise QuestionError(f"{path}: no record can be answered ({len(read.errors)} input errors)")
    result = run_stages(settings, table)
    folder = out_root / path.stem
    key = result.final_ref.key
    if _done_key(folder) == key:
        return {"partition": path.stem, "status": "skipped", **counts}
    store = settings.artifact_store()
    summary = summarize(result, store, time.perf_counter() - started)
    summary["input_errors"] = len(read.errors)
    summary["input_error_lines"] = [str(error) for error in read.errors]
    if folder.exists():  # answers of an older pipeline: replace them whole
        import shutil

        shutil.rmtree(folder)
    write_run(out_root, path.stem, result, store, summary, input_errors=read.errors_table())
    return {"partition": path.stem, "status": "done", **counts}


def _question_count(path: Path) -> int:
    from flows.question_files import read_question_file

    try:
        return read_question_file(path, "employee", "general").table.num_rows
    except Exception:  # a bad file fails in its partition, with the reason, not here
        return 0


Progress = Callable[[dict], None]


def run_backfill(
    settings,
    chosen: list[Path],
    out_root: Path,
    workers: int,
    progress: Progress | None = None,
    strict: bool = False,
) -> list[dict]:
    """Answer the partitions, `workers` at a time; one failure does not stop the others.
    Returns one outcome per partition, in the partitions' order."""
    from flows.executor import run_shared_stages

    # once, not raced by every partition; if it fails (an unreadable corpus…), each partition
    # fails on its own with the reason
    with contextlib.suppress(Exception):
        run_shared_stages(settings)
    lock = threading.Lock()

    def one(path: Path) -> dict:
        try:
            outcome = backfill_partition(settings, path, out_root, strict)
        except Exception as exc:
            outcome = {
                "partition": path.stem,
                "status": "failed",
                "reason": f"{type(exc).__name__}: {exc}",
            }
        if progress:
            with lock:
                progress(outcome)
        return outcome

    outcomes: dict[Path, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="backfill") as pool:
        futures = {pool.submit(one, path): path for path in chosen}
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
    return [outcomes[path] for path in chosen]


def _progress_bars(chosen: list[Path]):
    """Rich progress over partitions and over questions."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counts = {path.stem: _question_count(path) for path in chosen}
    bars = Progress(
        TextColumn("{task.description:<11}"),
        BarColumn(bar_width=30),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    partitions_bar = bars.add_task("partitions", total=len(chosen))
    questions_bar = bars.add_task("questions", total=sum(counts.values()))

    def advance(outcome: dict) -> None:
        bars.advance(partitions_bar)
        bars.advance(questions_bar, counts.get(outcome["partition"], 0))

    return bars, advance


def backfill_command(
    questions: Annotated[
        str, typer.Option("--questions", help="Folder or glob of question files.")
    ],
    since: Annotated[
        str | None, typer.Option(help="Only files modified on/after YYYY-MM-DD.")
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Only files modified on/before YYYY-MM-DD.")
    ] = None,
    config: Annotated[Path, typer.Option("--config", "-c", help="Pipeline config.")] = Path(
        "configs/pipeline.yaml"
    ),
    set_: Annotated[
        list[str], typer.Option("--set", help="Override a setting: key=value or stage.field=value.")
    ] = [],  # noqa: B006 - typer needs a literal default
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Partitions at once (default: backfill_workers)."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="A file with any bad record fails as a whole partition."),
    ] = False,
) -> None:
    """Answer many question sets; rerun after any interruption to finish the rest.

    A bad record (unreadable line, no or empty question, duplicate id…) is skipped and listed in
    its partition's input_errors.parquet. Exit codes: 0 all done; 1 a partition failed; 3 all
    partitions finished, some with input errors."""
    from flows.options import caches_under_the_store
    from flows.pipeline_config import load_config, parse_overrides

    settings = load_config(config, parse_overrides(set_))
    caches_under_the_store(settings)
    out_root = settings.runs_dir / "backfill"
    out_root.mkdir(parents=True, exist_ok=True)
    chosen = partitions(
        questions,
        dt.date.fromisoformat(since) if since else None,
        dt.date.fromisoformat(until) if until else None,
    )
    bars, advance = _progress_bars(chosen)
    with bars:
        outcomes = run_backfill(
            settings, chosen, out_root, workers or settings.backfill_workers, advance, strict
        )
    summary = {
        "finished_at": dt.datetime.now(dt.UTC).isoformat(),
        "done": sum(o["status"] == "done" for o in outcomes),
        "skipped": sum(o["status"] == "skipped" for o in outcomes),
        "failed": sum(o["status"] == "failed" for o in outcomes),
        "input_errors": sum(o.get("input_errors", 0) for o in outcomes),
        "partitions": outcomes,
    }
    (out_root / "backfill_summary.json").write_text(json.dumps(summary, indent=2))
    console.print(
        f"partitions: {summary['done']} done, {summary['skipped']} skipped, "
        f"{summary['failed']} failed | input errors {summary['input_errors']}"
    )
    for outcome in outcomes:
        if outcome["status"] == "failed":
            console.print(f"  {outcome['partition']}: {outcome['reason']}", markup=False)
        elif outcome.get("input_errors"):
            console.print(
                f"  {outcome['partition']}: {outcome['input_errors']} input errors "
                f"(see {out_root / outcome['partition'] / 'input_errors.parquet'})",
                markup=False,
            )
    from flows.question_files import EXIT_INPUT_ERRORS

    code = 1 if summary["failed"] else EXIT_INPUT_ERRORS if summary["input_errors"] else 0
    raise typer.Exit(code)
