"""The `grounding` app: its global options (log format and level) and every command, registered
from the module named for its group (`cli/run.py`, `cli/review.py` …) in the order `--help`
lists them."""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from typing import Annotated

import typer

from cli import agents, artifacts, backfill, check, ingest, quality, review, run, serve, trace, warm
from cli import eval as evaluation
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
    install_logging(log_format.value, log_level, new_run_id(), stage_events=runs_stages)


app.command(epilog=run.RUN_EPILOG)(run.run)
app.command()(run.ask)
app.command()(warm.warm)
app.command()(ingest.ingest)
app.command("eval")(evaluation.evaluation_command)
app.add_typer(artifacts.artifacts_app, name="artifacts")
app.command("trace")(trace.trace_command)
app.command("backfill")(backfill.backfill_command)
app.command("serve")(serve.serve_command)
app.command("check")(check.check_command)
app.command("api")(agents.api)
app.command("mcp")(agents.mcp)
app.command("tools")(agents.tools)
app.command("agent")(agents.agent)
quality.register(app)  # trend, shadow, promote
review.register(app)  # review, calibrate

if __name__ == "__main__":
    app()
