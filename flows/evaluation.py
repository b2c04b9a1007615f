"""The release eval as a Prefect flow (`grounding eval`, in `cli/eval.py`, runs it).

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
from typing import Any

from eval.frozen_sets import ROOT, EvalSet, resolve_set, verify_set
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
