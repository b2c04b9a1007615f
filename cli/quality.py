"""`grounding trend`, `grounding shadow` and `grounding promote`: the CLI of `quality/`.

`register(app)` adds them to the `grounding` app; every import beyond typer is inside a command,
so `grounding ask` pays nothing for them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings

console = Console()
# exit statuses a scheduler reads: 1 = the check ran and found something, 2 = it could not run
FOUND, CANNOT = 1, 2


def trend(
    run: Annotated[
        str | None, typer.Option("--run", help="The run to check (default: the latest).")
    ] = None,
    window: Annotated[int, typer.Option(min=1, help="Baseline: this many earlier runs.")] = 10,
    png: Annotated[
        Path | None,
        typer.Option(help="Where to write the plot (default: <runs_dir>/trend/<run>.png)."),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the checks as JSON instead of a table.")
    ] = False,
    all_streams: Annotated[
        bool,
        typer.Option(
            "--all-streams",
            help="Compare with earlier runs on any question set (default: the same set only).",
        ),
    ] = False,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Check a run's metrics from the run ledger against a baseline window of earlier runs:
    rates by a two-proportion test, distributions by population-stability index, the corpus
    snapshot by identity. Prints the checks, writes a PNG; exits 1 on any alarm (for
    schedulers), 2 when it cannot check."""
    from quality.drift import DriftConfig, check_run, log_alarms
    from quality.ledger import read_ledger
    from quality.trend import history_rows, plot, table_rows

    settings = load_settings(config, set_)
    ledger = read_ledger(settings.artifact_store())
    if ledger.num_rows == 0:
        console.print(f"[red]the run ledger in {settings.store} is empty:[/red] run a question set")
        raise typer.Exit(CANNOT)
    try:
        report = check_run(ledger, run, DriftConfig(window=window, same_stream=not all_streams))
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(CANNOT) from exc
    log_alarms(report)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in report.run_id or "run")
    written = plot(report, png or settings.runs_dir / "trend" / f"{safe}.png")
    if json_out:
        shown = {**report.to_json(), "history": history_rows(report)}
        print(json.dumps({**shown, "png": str(written) if written else None}, indent=2))
    else:
        _print_history(history_rows(report))
        _print(report, table_rows(report))
        if written:
            console.print(f"wrote {written}", markup=False, highlight=False, soft_wrap=True)
    sys.exit(FOUND if report.alarms else 0)


def _print_history(rows: list[dict]) -> None:
    """The runs compared, oldest first, one line each under a header."""
    if not rows:
        return
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    for line in [dict(zip(widths, widths, strict=True)), *rows]:
        text = "  ".join(
            f"{str(line[k]):>{w}}" if k != "run" else f"{line[k]:<{w}}" for k, w in widths.items()
        )
        console.print(text, markup=False, highlight=False, soft_wrap=True)
    console.print()


def _print(report, rows) -> None:
    """One line per check, alarms first: readable at any terminal width."""
    console.print(
        f"run {report.run_id} against {len(report.baseline_runs)} baseline run(s): "
        f"{len(report.alarms)} alarm(s)",
        markup=False,
        highlight=False,
    )
    for note in report.context:
        console.print(f"  {note}", markup=False, highlight=False)
    width = max((len(r["metric"]) for r in rows), default=0)
    for row in rows:
        stat = f"{row['test']}={row['statistic']}" if row["statistic"] else row["test"]
        line = (
            f"{row['alarm'] or 'ok':<5} {row['metric']:<{width}}  {row['baseline']:>12} -> "
            f"{row['value']:<12}  {stat:<12} {row['band']:<16} {row['note']}"
        )
        style = "red" if row["alarm"] else None
        console.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True, style=style)


def shadow(
    candidate: Annotated[
        Path, typer.Option("--candidate", help="The candidate pipeline config YAML.")
    ],
    run: Annotated[
        str | None, typer.Option("--run", help="The run to replay (default: the latest).")
    ] = None,
    candidate_set: Annotated[
        list[str],
        typer.Option("--candidate-set", help="Override a candidate setting: stage.field=value."),
    ] = [],  # noqa: B006 - typer needs a literal default
    verdicts: Annotated[
        Path | None,
        typer.Option(help="Human verdicts (question_id, verdict) besides those in the store."),
    ] = None,
    eval_sets: Annotated[
        str | None,
        typer.Option(
            "--eval-sets",
            help="Also evaluate these frozen eval sets (comma list, or `all`) for both configs; "
            "expensive, so only when asked.",
        ),
    ] = None,
    max_worse: Annotated[int, typer.Option(help="Bound: answers verdicts say got worse.")] = 0,
    max_lost_answers: Annotated[
        float, typer.Option(help="Bound: share of questions answered now and not by it.")
    ] = 0.05,
    max_new_unsupported_claims: Annotated[
        int, typer.Option(help="Bound: newly emitted claims its own check found unsupported.")
    ] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Replay a run's questions with a candidate config (same store and caches, answers kept
    apart under <runs_dir>/shadow/) and report what would change: status transitions, changed
    answers, claims newly emitted or withheld, answers human verdicts say got worse or better.
    Exits 1 when the report is outside its bounds, 2 when it cannot run."""
    from quality.shadow import ShadowBounds, ShadowError, evaluate_sets, frozen_sets, shadow_run

    candidate_settings = load_settings(candidate, candidate_set)
    # the run's settings last: the LLM's KV cache follows the store both replays share
    settings = load_settings(config, set_)
    bounds = ShadowBounds(
        max_worse=max_worse,
        max_lost_answers=max_lost_answers,
        max_new_unsupported_claims=max_new_unsupported_claims,
    )
    try:
        names = frozen_sets(eval_sets) if eval_sets else []
        evals = (lambda: evaluate_sets(names, config, candidate, settings.store)) if names else None
        report = shadow_run(
            settings, candidate_settings, candidate, config, run, bounds, verdicts, evals
        )
    except ShadowError as exc:
        console.print(f"[red]shadow:[/red] {exc}")
        raise typer.Exit(CANNOT) from exc
    if json_out:
        print(json.dumps(report, indent=2, default=str))
    else:
        from quality.shadow import report_markdown

        console.print(report_markdown(report), markup=False, highlight=False, soft_wrap=True)
        console.print(f"wrote {report['shadow_run']}", markup=False, highlight=False)
    sys.exit(0 if report["within_bounds"] else FOUND)


def promote(
    candidate: Annotated[Path, typer.Argument(help="The candidate pipeline config YAML.")],
    report: Annotated[
        Path | None,
        typer.Option(help="The shadow report (default: the newest of this exact config)."),
    ] = None,
    gate_set: Annotated[
        str,
        typer.Option(help="Frozen eval set(s) of the release gate, when the report has none."),
    ] = "sample-v2",
    reports_dir: Annotated[
        Path | None,
        typer.Option(help="Where the gate writes its reports (default: <runs_dir>/gate-reports)."),
    ] = None,
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Record the promotion of a candidate config (JSON under <store>/promotions/, naming both
    configs, the runs and the reports), only when its shadow report is within its bounds and the
    release gate passes. Exits 1 and records nothing otherwise."""
    from quality.shadow import ShadowError, frozen_sets
    from quality.shadow import promote as record_promotion

    settings = load_settings(config, set_)
    # beside the runs, not in eval/reports: a promotion's gate run is no release record
    gate_reports = reports_dir or settings.runs_dir / "gate-reports"

    def gate(path: Path) -> dict:
        from flows.evaluation import release_eval

        outcomes = {}
        for name in frozen_sets(gate_set):
            outcome = release_eval(
                name, path, {}, settings.store, gate=False, reports_dir=gate_reports
            )
            outcomes[name] = {
                "passed": outcome.comparison["passed"],
                "failures": outcome.comparison["failures"],
                "report": str(outcome.report_dir) if outcome.report_dir else None,
            }
        return outcomes

    try:
        record = record_promotion(settings, candidate, gate, report)
    except ShadowError as exc:
        console.print(f"[red]not promoted:[/red] {exc}")
        raise typer.Exit(FOUND) from exc
    console.print(f"promoted {candidate}: recorded {record['record']}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("trend")(trend)
    app.command("shadow")(shadow)
    app.command("promote")(promote)
