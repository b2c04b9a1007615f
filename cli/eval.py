"""`grounding eval`: a frozen eval set through the release eval (`flows.evaluation`) or, for a
detection set, through its checker; the per-axis comparison with the baseline printed, and the
gate's verdict as the exit status."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from eval.detection_sets import is_detection_set
from eval.detection_sets import release as release_detection
from eval.frozen_sets import EvalSetError, resolve_set, verify_set
from eval.release_gate import GateFailure, format_value
from eval.report import REPORTS_DIR
from flows.evaluation import DEFAULT_CONFIG, release_eval, release_eval_flow


def _parse_overrides(items: list[str]) -> dict[str, Any]:
    from flows.pipeline_config import ConfigError, parse_overrides

    try:
        return parse_overrides(items)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from exc


def evaluation_command(
    set_name: Annotated[str, typer.Option("--set", help="Eval set under eval/sets/ (or a path).")],
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Candidate pipeline config YAML.")
    ] = DEFAULT_CONFIG,
    set_override: Annotated[
        list[str], typer.Option("--set-override", help="Override a setting: stage.field=value.")
    ] = [],  # noqa: B006 - typer needs a literal default
    store: Annotated[
        Path | None, typer.Option(help="Artifact store for eval runs (default: the config's).")
    ] = None,
    gate: Annotated[bool, typer.Option("--gate", help="Fail when an axis regresses.")] = False,
    promote: Annotated[
        bool, typer.Option("--promote", help="Write the baseline after a passing gate.")
    ] = False,
    accept: Annotated[
        str | None,
        typer.Option(
            "--accept",
            help="With --promote: write the baseline despite regressions, for this reason "
            "(recorded in the baseline with what regressed).",
        ),
    ] = None,
    reports_dir: Annotated[Path, typer.Option(help="Where reports go.")] = REPORTS_DIR,
    prefect: Annotated[bool, typer.Option(help="Run as the Prefect flow release-eval.")] = True,
) -> None:
    """Evaluate the pipeline on a frozen eval set; `--gate` compares with its baseline."""
    from rich.console import Console

    from flows.executor import QuestionError
    from flows.pipeline_config import ConfigError

    console = Console()
    overrides = _parse_overrides(set_override)
    started = time.perf_counter()
    if is_detection_set(set_name):  # labelled items for a checker, not questions
        _detection_command(console, set_name, overrides, gate, promote, accept, reports_dir)
        return
    try:
        verify_set(resolve_set(set_name))  # fail fast, before the Prefect engine starts
        if prefect:
            outcome = release_eval_flow()(
                set_name,
                str(config),
                overrides,
                str(store) if store else None,
                gate,
                promote,
                str(reports_dir),
                accept,
            )
        else:
            outcome = release_eval(
                set_name, config, overrides, store, gate, promote, reports_dir, accept=accept
            )
    except GateFailure as exc:
        console.print(f"[red]{exc}[/red]")
        console.print(f"failed axes: {', '.join(exc.axes)}")
        raise typer.Exit(1) from exc
    except (EvalSetError, ConfigError, QuestionError) as exc:
        console.print(f"[red]eval error:[/red] {exc}")
        raise typer.Exit(2) from exc
    comparison = outcome.comparison
    for row in comparison["rows"]:
        colour = {"regressed": "red", "improved": "green"}.get(row["verdict"], "white")
        console.print(
            f"{row['axis']:<11} {row['metric']:<26} {format_value(row['baseline']):>8} → "
            f"[{colour}]{format_value(row['candidate']):>8}[/{colour}]  {row['verdict']}"
        )
    for note in comparison["notes"]:
        console.print(f"[yellow]{note}[/yellow]")
    if not comparison["has_baseline"]:
        console.print("no baseline for this set yet")
    elif outcome.promoted and not comparison["passed"]:
        console.print(f"[yellow]regressions accepted: {accept}[/yellow]")
    elif gate or promote:
        console.print("[green]gate passed[/green]")
    if outcome.promoted:
        console.print(f"promoted baseline {outcome.promoted}")
    console.print(f"report {outcome.report_dir} ({time.perf_counter() - started:.1f}s)")


def _detection_command(
    console: Any,
    set_name: str,
    overrides: dict[str, Any],
    gate: bool,
    promote: bool,
    accept: str | None,
    reports_dir: Path,
) -> None:
    """`grounding eval` on a detection set (eval/detection_sets.py): each record through its
    checker, the flag rates gated by the `detection:` group of eval/gate.yaml."""
    started = time.perf_counter()

    def progress(index: int, total: int, result: dict) -> None:
        if "error" in result:
            console.print(f"[red]record {index + 1}: {result['error']}[/red]")
        elif (index + 1) % 10 == 0 or index + 1 == total:
            console.print(f"{index + 1}/{total} records")

    try:
        outcome = release_detection(
            set_name, overrides, gate, promote, accept, reports_dir, on_record=progress
        )
    except GateFailure as exc:
        console.print(f"[red]{exc}[/red]")
        console.print(f"failed axes: {', '.join(exc.axes)}")
        raise typer.Exit(1) from exc
    except EvalSetError as exc:
        console.print(f"[red]eval error:[/red] {exc}")
        raise typer.Exit(2) from exc
    comparison = outcome["comparison"]
    for row in comparison["rows"]:
        colour = {"regressed": "red", "improved": "green"}.get(row["verdict"], "white")
        console.print(
            f"{row['axis']:<11} {row['metric']:<26} {format_value(row['baseline']):>8} → "
            f"[{colour}]{format_value(row['candidate']):>8}[/{colour}]  {row['verdict']}"
        )
    axis = outcome["metrics"]["axes"]["detection"]
    console.print(json.dumps({k: v for k, v in axis.items() if not k.startswith("flag_rate")}))
    if not comparison["has_baseline"]:
        console.print("no baseline for this set yet")
    elif outcome["promoted"] and not comparison["passed"]:
        console.print(f"[yellow]regressions accepted: {accept}[/yellow]")
    elif gate or promote:
        console.print("[green]gate passed[/green]")
    if outcome["promoted"]:
        console.print(f"promoted baseline {outcome['promoted']}")
    console.print(f"report {outcome['report']} ({time.perf_counter() - started:.1f}s)")
