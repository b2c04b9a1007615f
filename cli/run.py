"""`grounding run` and `grounding ask`: the stages on a question file or on one question, with
progress bars and a run summary."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cli.options import ConfigOption, SetOption, load_settings

console = Console()
RUN_EPILOG = (
    "Exit codes: 0 every record answered; 2 config error, or the question file cannot be "
    "read at all (or, with --strict, has a bad record); 3 finished with input errors: the good "
    "records were answered and each bad one is a row of input_errors.parquet."
)


class StageProgress:
    """One progress line per stage: spinner while it runs, then 'computed' or 'cache hit'."""

    def __init__(self, enabled: bool) -> None:
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.enabled = enabled
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<18}"),
            BarColumn(bar_width=20),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=console,
            disable=not enabled,
        )
        self.tasks: dict[str, int] = {}

    def __call__(self, event: str, stage: str, result) -> None:
        if event == "start":
            self.tasks[stage] = self.progress.add_task(stage, total=1, status="running")
        elif stage in self.tasks:
            status = "cache hit" if result and result.ref.cache_hit else "computed"
            self.progress.update(self.tasks[stage], completed=1, status=status)


def _run_pipeline(config, records: list[dict], show_progress: bool, in_flow: bool = True):
    """The stages as a Prefect flow run, or (in_flow False) in this process without one."""
    from flows import executor
    from stages.common import progress

    progress.enable(show_progress, console)  # stage bars nest in the same live display
    bars = StageProgress(show_progress)
    executor.on_stage_event(bars)
    started = time.perf_counter()
    with bars.progress:
        if in_flow:
            from flows import pipeline  # imports Prefect (about 1 s), which a plain ask never needs

            result = pipeline.run_pipeline_flow(config, records)
        else:
            questions = executor.questions_table(
                records, config.default_principal, config.default_query_type
            )
            result = executor.run_stages(config, questions)
    return result, time.perf_counter() - started


def _summary_table(summary: dict) -> Table:
    table = Table(title="Run summary", show_lines=False)
    table.add_column("stage")
    table.add_column("seconds", justify="right")
    table.add_column("cache", justify="center")
    table.add_column("rows")
    for name, info in summary["stages"].items():
        rows = ", ".join(f"{k}={v}" for k, v in info["rows"].items())
        table.add_row(name, f"{info['seconds']:.2f}", "hit" if info["cache_hit"] else "miss", rows)
    return table


def run(
    config: ConfigOption = Path("configs/pipeline.yaml"),
    questions: Annotated[
        Path | None,
        typer.Option(
            help="Question file (JSONL, JSON, CSV or Parquet). Each bad record (unreadable line, "
            "no or empty question, over 4,000 characters, duplicate id, wrong type) is listed "
            "with its line and skipped; the others are answered."
        ),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="Corpus folder; without a catalog.yaml, files get the default metadata."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="All or nothing: any bad record refuses the whole file (exit 2)."
        ),
    ] = False,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    progress: Annotated[bool, typer.Option(help="Draw progress bars.")] = True,
) -> None:
    """Run all stages on a question set and write runs/<run_id>/ (answers, reports, trace)."""
    from rich.markup import escape

    from flows.question_files import (
        EXIT_INPUT_ERRORS,
        QuestionError,
        errors_table,
        read_question_file,
    )
    from flows.runs import new_run_id, selection_warnings, summarize, write_run

    settings = load_settings(config, set_)
    if corpus:
        settings.corpus = corpus.resolve()
    path = questions.resolve() if questions else settings.questions
    try:
        read = read_question_file(
            path, settings.default_principal, settings.default_query_type, strict=strict
        )
    except QuestionError as exc:
        console.print(f"[red]question error:[/red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    _print_input_errors(read.errors)
    if not read.table.num_rows:
        console.print(f"[red]question error:[/red] {escape(str(path))}: no record can be answered")
        raise typer.Exit(2)
    result, seconds = _run_pipeline(settings, read.table.to_pylist(), progress)
    store = settings.artifact_store()
    summary = summarize(result, store, seconds)
    summary["input_errors"] = len(read.errors)
    summary["input_error_lines"] = [str(error) for error in read.errors]
    summary["warnings"] = selection_warnings(result, store)
    run_id = new_run_id(result)
    run_dir = write_run(
        settings.runs_dir, run_id, result, store, summary, input_errors=errors_table(read.errors)
    )
    console.print(_summary_table(summary))
    hits = sum(1 for s in summary["stages"].values() if s["cache_hit"])
    console.print(
        f"questions {summary['questions']} | answered {summary['answered']} | refused "
        f"{summary['refused']} | blocked {summary['blocked']} | errors {summary['errors']} | "
        f"input errors {summary['input_errors']} | "
        f"ingestion errors {summary['ingestion_errors']} | "
        f"warnings {summary['ingestion_warnings']} | "
        f"cache hits {hits}/{len(summary['stages'])} | {summary['wall_seconds']:.1f}s"
    )
    for warning in summary["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    console.print(f"wrote {run_dir}")
    if read.errors:
        console.print(
            f"finished with {len(read.errors)} input errors: see {run_dir / 'input_errors.parquet'}"
        )
        raise typer.Exit(EXIT_INPUT_ERRORS)


def _print_input_errors(errors, limit: int = 20) -> None:
    """One line per bad record (the first `limit`), before the run starts."""
    for error in errors[:limit]:
        console.print(f"input error: {error}", markup=False, highlight=False, soft_wrap=True)
    if len(errors) > limit:
        console.print(f"... and {len(errors) - limit} more input errors", markup=False)


def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    principal: Annotated[
        str | None, typer.Option(help="Who is asking (configs/principals.yaml).")
    ] = None,
    query_type: Annotated[
        str | None, typer.Option(help="Query type (configs/sources.yaml).")
    ] = None,
    config: ConfigOption = Path("configs/pipeline.yaml"),
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    progress: Annotated[bool, typer.Option(help="Draw progress bars.")] = False,
    flow: Annotated[
        bool,
        typer.Option(
            help="Run as a Prefect flow run (seen in the Prefect UI). Off by default: the "
            "flow run's bookkeeping costs about 10 s, more than answering from a built index."
        ),
    ] = False,
    timings: Annotated[
        bool, typer.Option(help="Print each stage's seconds and cache hit after the answer.")
    ] = False,
) -> None:
    """Answer one question: prints the cited answer, or the structured refusal."""
    from flows.question_files import QuestionError, questions_table
    from flows.runs import selection_warnings, summarize

    settings = load_settings(config, set_)
    record = {
        "question_id": "ask",
        "question": question,
        "principal": principal or settings.default_principal,
        "query_type": query_type or settings.default_query_type,
    }
    try:  # an empty question or one over the length limit: one line, no traceback
        questions_table([record], settings.default_principal, settings.default_query_type)
    except QuestionError as exc:
        console.print(f"question error: {exc}", markup=False, highlight=False)
        raise typer.Exit(2) from exc
    result, seconds = _run_pipeline(settings, [record], progress, in_flow=flow)
    answer = result.final_answers.to_pylist()[0]
    console.print(answer["rendered_answer"] or "(no answer)")
    if answer["status"] == "answered":
        # the rendered answer lists each source for a person; these lines locate the spans
        for citation in answer["citations"]:
            console.print(
                f"  [{citation['evidence_id']}] doc {citation['doc_id']}, "
                f"chars {citation['char_start']}–{citation['char_end']}",
                markup=False,
                highlight=False,
            )
    else:
        console.print(
            f"  status: {answer['status']}; refusal_reason: {answer['refusal_reason']}; "
            f"missing: {answer['missing']}"
        )
        store = settings.artifact_store()
        status = store.read_table(result.refs["rerank"], "rerank_status").to_pylist()[0]
        if status.get("unwritten_names"):  # say why: the sources never name what was asked
            unnamed = ", ".join(status["unwritten_names"])
            console.print(f"  no source you may read mentions: {unnamed}")
        if status.get("negation_unstated"):
            console.print("  it asks what is not the case; the best evidence states no negation")
        for warning in selection_warnings(result, store, [record["question_id"]]):
            console.print(f"  [yellow]warning:[/yellow] {warning}")
    if timings:
        console.print(_summary_table(summarize(result, settings.artifact_store(), seconds)))
    sys.exit(0)
