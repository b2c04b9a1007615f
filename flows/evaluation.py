"""`grounding eval`: the release eval as a Prefect flow and its CLI.

The evaluation itself lives beside the eval sets, in the `eval` package: `eval/frozen_sets.py` (load
and verify a frozen set), `eval/scoring.py` and `eval/metrics.py` (per-question rows, one metric
function per axis; the format check is `stages.contracts.final_answer_problems`, the same one
the guardrails gate applies), `eval/gold_evidence.py` (generation with perfect retrieval),
`eval/release_gate.py` (baselines and tolerances) and `eval/report.py` (the HTML report). This
module runs the stages on a set, then wires those together: `--gate` compares with
`eval/baseline/<set>.json` using the per-axis tolerances in `eval/gate.yaml`; `--promote` writes a
new baseline after a passing gate.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from eval.detection_sets import is_detection_set
from eval.detection_sets import release as release_detection
from eval.frozen_sets import ROOT, EvalSet, EvalSetError, resolve_set, verify_set
from eval.release_gate import (
    GateFailure,
    baseline_path,
    baseline_record,
    compare,
    format_value,
    load_gate,
)
from eval.report import REPORTS_DIR, summary_markdown, write_report
from eval.scoring import EvalResult, compute_metrics

DEFAULT_CONFIG = ROOT / "configs" / "pipeline.yaml"


# ---------------------------------------------------------------- running an evaluation


def load_eval_config(config_path: Path | str, overrides: dict[str, Any], eval_set: EvalSet, store):
    from flows.pipeline_config import load_config

    config = load_config(config_path, overrides)
    config.corpus = eval_set.corpus_dir
    if store:
        config.store = Path(store)
    return config


def evaluate(
    set_name: str | Path,
    config_path: Path | str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
    store: Path | str | None = None,
    runner=None,
    root: Path = ROOT,
) -> EvalResult:
    """Verify the set, run every stage on it (the artifact store caches) and compute the metrics."""
    from flows.executor import questions_table, run_stages
    from stages.store import ArtifactStore

    eval_set = verify_set(resolve_set(set_name, root), root)
    config = load_eval_config(config_path, overrides or {}, eval_set, store)
    table = questions_table(
        eval_set.questions, config.default_principal, config.default_query_type, eval_set.name
    )
    started = time.perf_counter()
    result = run_stages(config, table, runner)
    metrics, rows = compute_metrics(eval_set, config, result, ArtifactStore(config.store))
    wall = time.perf_counter() - started
    metrics["axes"]["cost"]["wall_seconds"] = round(wall, 2)
    return EvalResult(eval_set, config, metrics, rows, result.results, wall)


def publish_prefect_artifacts(run: EvalResult, comparison: dict, folder: Path | None) -> bool:
    """Markdown summary and the metric table as Prefect artifacts, only inside a flow run."""
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return False
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    key = re.sub(r"[^a-z0-9-]", "-", f"release-eval-{run.eval_set.name}".lower())
    create_markdown_artifact(
        markdown=summary_markdown(run, comparison, folder),
        key=key,
        description=f"release gate on {run.eval_set.name}",
    )
    create_table_artifact(
        table=[{k: format_value(v) for k, v in r.items()} for r in comparison["rows"]],
        key=f"{key}-metrics",
        description="per-axis metrics vs baseline",
    )
    return True


# ---------------------------------------------------------------- gate + promote + flow


@dataclass
class GateOutcome:
    run: EvalResult
    comparison: dict
    report_dir: Path | None
    promoted: Path | None = None


def release_eval(
    set_name: str,
    config_path: Path | str = DEFAULT_CONFIG,
    overrides: dict[str, Any] | None = None,
    store: Path | str | None = None,
    gate: bool = False,
    promote: bool = False,
    reports_dir: Path | None = REPORTS_DIR,
    root: Path = ROOT,
    runner=None,
    accept: str | None = None,
) -> GateOutcome:
    """Evaluate, write the report, compare with the baseline; raise GateFailure naming the axes
    when `gate` (or `promote`) and something regressed; write the baseline when `promote`.

    `accept` (with `promote`) is the reason a regression is wanted, e.g. a model retrained
    without leaked data: the baseline is written anyway and records the reason and what
    regressed, so the move is reviewable in the diff, never silent."""
    run = evaluate(set_name, config_path, overrides, store, runner, root)
    base_file = baseline_path(run.eval_set.name, root)
    baseline = json.loads(base_file.read_text()) if base_file.is_file() else None
    comparison = compare(run.metrics, baseline, load_gate(root / "eval" / "gate.yaml"))
    folder = write_report(run, comparison, reports_dir) if reports_dir else None
    publish_prefect_artifacts(run, comparison, folder)
    accepted = promote and bool(accept) and not comparison["passed"]
    if (gate or promote) and not comparison["passed"] and not accepted:
        raise GateFailure(
            comparison["failed_axes"],
            "release gate failed on "
            + run.eval_set.name
            + ":\n  "
            + "\n  ".join(comparison["failures"]),
        )
    promoted = None
    if promote:
        base_file.parent.mkdir(parents=True, exist_ok=True)
        record = baseline_record(run, root)
        if accepted:
            record["accepted_regressions"] = {
                "reason": accept,
                "failures": comparison["failures"],
            }
        base_file.write_text(json.dumps(record, indent=2) + "\n")
        promoted = base_file
    return GateOutcome(run, comparison, folder, promoted)


_FLOW = None


def release_eval_flow():
    """The Prefect flow `release-eval` (built on first use so importing this module stays cheap)."""
    global _FLOW
    if _FLOW is None:
        from prefect import flow

        from flows.pipeline import prefect_stage_runner

        @flow(name="release-eval", log_prints=True, validate_parameters=False)
        def _release_eval(
            set_name: str,
            config_path: str,
            overrides: dict,
            store: str | None,
            gate: bool,
            promote: bool,
            reports_dir: str | None,
            accept: str | None = None,
        ) -> GateOutcome:
            return release_eval(
                set_name,
                config_path,
                overrides,
                store,
                gate,
                promote,
                Path(reports_dir) if reports_dir else None,
                runner=prefect_stage_runner,
                accept=accept,
            )

        _FLOW = _release_eval
    return _FLOW


# ---------------------------------------------------------------- CLI


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
