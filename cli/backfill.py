"""`grounding backfill`: many question files answered as partitions (`flows.backfill`), with
progress bars over partitions and questions, and a summary of what was done, skipped or failed."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings
from flows.backfill import partitions, run_backfill

console = Console()


def _question_count(path: Path) -> int:
    from flows.question_files import read_question_file

    try:
        return read_question_file(path, "employee", "general").table.num_rows
    except Exception:  # a bad file fails in its partition, with the reason, not here
        return 0


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
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
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
    settings = load_settings(config, set_)
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
