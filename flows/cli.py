"""`grounding`: run the pipeline, ask one question. `grounding --help` lists the commands."""

from __future__ import annotations

import os
import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from flows.backfill import backfill_command
from flows.evaluation import evaluation_command
from flows.ops import artifacts_app, trace_command
from flows.options import ConfigOption, SetOption, load_settings
from flows.serve import serve_command
from stages.common.offline import apply_offline_environment

apply_offline_environment()
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

app = typer.Typer(
    help="Offline answer-grounding pipeline: cited answers or structured refusals, with an audit "
    "report per answer.",
    no_args_is_help=True,
    add_completion=False,
    # docstrings are wrapped at 100 columns in the source; markdown reflows them to the terminal
    rich_markup_mode="markdown",
)
console = Console()


class LogFormat(StrEnum):
    text = "text"
    json = "json"


STAGE_COMMANDS = ("run", "ask", "eval", "backfill", "serve", "ingest")


@app.callback()
def main(
    ctx: typer.Context,
    log_format: Annotated[
        LogFormat,
        typer.Option(
            "--log-format",
            help="Log lines on stderr as text, or one JSON object per line (time, level, logger, "
            "message, run_id, question_id, stage).",
            envvar="GROUNDING_LOG_FORMAT",
        ),
    ] = LogFormat.text,
    log_level: Annotated[
        str,
        typer.Option(
            "--log-level",
            help="Level of the pipeline's own loggers: DEBUG (per question), INFO (per stage), "
            "WARNING, ERROR. Other libraries stay at WARNING.",
            envvar="GROUNDING_LOG_LEVEL",
        ),
    ] = "WARNING",
) -> None:
    """Offline answer-grounding pipeline: cited answers or structured refusals, with an audit
    report per answer."""
    from flows.observability import install_logging, new_run_id

    if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise typer.BadParameter(f"unknown level {log_level!r}", param_hint="--log-level")
    # Commands that run stages get the per-stage log lines; the listener imports Prefect, which
    # a `--help` should not wait for.
    runs_stages = ctx.invoked_subcommand in STAGE_COMMANDS and "--help" not in sys.argv
    if log_format is LogFormat.json and runs_stages:
        import prefect  # noqa: F401 - Prefect installs its console handlers on import; replace them

    install_logging(log_format.value, log_level, new_run_id(), stage_events=runs_stages)


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


@app.command(
    epilog="Exit codes: 0 every record answered; 2 config error, or the question file cannot be "
    "read at all (or, with --strict, has a bad record); 3 finished with input errors: the good "
    "records were answered and each bad one is a row of input_errors.parquet."
)
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


@app.command()
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


@app.command()
def warm(
    config: ConfigOption = Path("configs/pipeline.yaml"),
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Save the local LLM's system prompts' KV states (generator, judge, probes), so a fresh
    `ask` restores them instead of reading them again (about 6 s on 2 cores). `make setup`
    runs it; prompts saved before are found, not read again. Exits 1 when the model cannot be
    loaded."""
    from flows.warm import warm as warm_prompts

    settings = load_settings(config, set_)
    rows = warm_prompts(settings)
    table = Table(title="system prompts' KV states")
    for column in ("stage", "prompt", "status", "seconds"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.stage, row.prompt, row.status, f"{row.seconds:.2f}")
    console.print(table)
    sys.exit(1 if any(row.status.startswith("error") for row in rows) else 0)


@app.command()
def ingest(
    folder: Annotated[
        Path | None,
        typer.Argument(help="Corpus folder (default: the config's corpus).", show_default=False),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Dry run: list per file what would be ingested with which metadata, and why "
            "any file would not be; writes nothing.",
        ),
    ] = False,
    config: ConfigOption = Path("configs/pipeline.yaml"),
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Ingest and index a corpus folder, listing every file: ingested (doc id, title, tier,
    permission groups, date, encoding, chunks) or not, with the reason.

    Files without a catalog.yaml entry or sidecar get the defaults from
    stages.ingestion (default_trust_tier, default_permission_set), the title from the
    document and the date from the file. Exits 1 when no file is usable.
    """
    from flows.executor import corpus_snapshot
    from stages import ingestion
    from stages.source_selection import accepting_query_types

    settings = load_settings(config, set_)
    root = (folder or settings.corpus).resolve()
    if not root.is_dir():
        console.print(f"[red]not a folder:[/red] {root}")
        raise typer.Exit(2)
    ingest_config = settings.stage_config("ingestion")
    if check:  # writes nothing, not even the stat cache
        snapshot = ingestion.snapshot_corpus(
            root,
            ingest_config.max_file_bytes,
            follow_symlinks_outside_root=ingest_config.follow_symlinks_outside_root,
        )
    else:  # the run's own snapshot below then reuses these hashes
        snapshot = corpus_snapshot(settings, root)
    if check:
        rows = ingestion.check(snapshot, ingest_config)
    else:
        from flows.executor import run_shared_stages

        settings.corpus = root
        results = run_shared_stages(settings)
        rows = _rows_from_artifact(settings.artifact_store(), results["ingestion"].ref, snapshot)
    _print_ingest_rows(rows, root)
    usable = [r for r in rows if r["ingested"]]
    console.print(
        f"{len(usable)} of {len(rows)} files ingested | "
        f"{sum(1 for r in rows if r['error_kind'])} not ingested | "
        f"{sum(len(r['warnings']) for r in rows)} warnings"
    )
    policy = settings.stage_config("source_selection")
    for tier in sorted({r["trust_tier"] for r in usable}):
        accepted = accepting_query_types(policy, tier)
        count = sum(1 for r in usable if r["trust_tier"] == tier)
        if not accepted:
            console.print(
                f"[yellow]warning:[/yellow] {count} documents at tier {tier}: no query type "
                "accepts that tier, so they can never be cited (set trust_tier in catalog.yaml "
                "or stages.ingestion.default_trust_tier)"
            )
        elif accepted != set(policy.query_types):
            console.print(
                f"note: {count} documents at tier {tier} are citable only for query types "
                f"{', '.join(sorted(accepted))}"
            )
    if not usable:
        console.print("[red]nothing usable:[/red] no file in this folder can be ingested")
        raise typer.Exit(1)


def _rows_from_artifact(store, ref, snapshot) -> list[dict]:
    """The per-file rows of `ingestion.check`, read back from a built ingestion artifact."""
    from stages import ingestion

    documents = store.read_table(ref, "documents").drop_columns(["text"]).to_pylist()
    chunks = store.read_table(ref, "chunks").select(["doc_id"]).column("doc_id").to_pylist()
    errors = store.read_table(ref, "ingestion_errors").to_pylist()
    by_path = {d["path"]: d for d in documents}
    rows = []
    paths = [p for p in snapshot.column("path").to_pylist() if p != ingestion.FILE_DATES_PATH]
    for path in paths + sorted({e["path"] for e in errors} - set(paths)):
        doc = by_path.get(path)
        problems = [e for e in errors if e["path"] == path]
        failed = [e for e in problems if e["severity"] == "error"]
        rows.append(
            {
                "path": path,
                "ingested": doc is not None,
                "doc_id": doc and doc["doc_id"],
                "title": doc and doc["title"],
                "trust_tier": doc and doc["trust_tier"],
                "permission_set": doc and doc["permission_set"],
                "date": doc and (doc["last_modified"] or doc["published_at"]),
                "encoding": None,
                "chunks": chunks.count(doc["doc_id"]) if doc else 0,
                "error_kind": failed[0]["error_kind"] if failed else None,
                "reason": "; ".join(e["message"] for e in failed) or None,
                "warnings": [
                    f"{e['error_kind']}: {e['message']}" for e in problems if e not in failed
                ],
            }
        )
    return rows


METADATA_NAMES = (
    ".meta.yaml",
    ".meta.yml",
    ".meta.json",
    "catalog.yaml",
    "catalog.yml",
    "catalog.json",
)


def _print_ingest_rows(rows: list[dict], root: Path) -> None:
    """One line per file (greppable, any terminal width), its warnings indented below it."""
    from stages import ingestion

    console.print(f"corpus {root}", markup=False)
    defaulted = 0
    for row in rows:
        if row["ingested"]:
            details = [
                f"tier {row['trust_tier']}",
                f"groups {', '.join(row['permission_set'])}",
                f"dated {row['date'] or '-'}",
                *([row["encoding"]] if row["encoding"] else []),
                f"{row['chunks']} chunks",
            ]
            described = f"{row['doc_id']} {row['title']!r} ({'; '.join(details)})"
            line = f"ingested  {row['path']} -> {described}"
        elif row["error_kind"]:
            line = f"NOT       {row['path']}: {row['error_kind']}: {row['reason']}"
        elif row["path"].endswith(ingestion.SIDECAR_SUFFIXES + ingestion.CATALOG_NAMES):
            line = f"metadata  {row['path']}"
        else:
            line = f"skipped   {row['path']}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        for warning in row["warnings"]:
            if warning.startswith("missing_metadata:"):
                defaulted += 1
                continue
            console.print(f"          ! {warning}", markup=False, highlight=False, soft_wrap=True)
    if defaulted:
        console.print(
            f"{defaulted} files have no catalog entry or sidecar: default tier, groups and the "
            "file's date were used (see README, Corpus metadata)",
            markup=False,
            highlight=False,
        )


app.command("eval")(evaluation_command)
app.add_typer(artifacts_app, name="artifacts")
app.command("trace")(trace_command)
app.command("backfill")(backfill_command)
app.command("serve")(serve_command)
# -- agent-run check: registered below this line --
app.command("check")(__import__("flows.agent_check", fromlist=["_"]).check_command)
# -- agent serving: registered below this line --
from agents.serving import commands as agent_commands  # noqa: E402 - registered here

app.command("api")(agent_commands.api)
app.command("mcp")(agent_commands.mcp)
app.command("tools")(agent_commands.tools)
app.command("agent")(agent_commands.agent)
__import__("flows.quality_commands", fromlist=["_"]).register(app)  # trend, shadow, promote
__import__("flows.review_commands", fromlist=["_"]).register(app)  # review, calibrate

if __name__ == "__main__":
    app()
