"""`grounding trend`'s output: the ledger's metrics over runs as a table, a PNG and, inside a
Prefect flow run, artifacts; and the check the nightly deployment runs."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from quality.drift import RETAINED, Check, Point, TrendReport, _retained

# the metrics a person reads first; the others follow in name order
LEADING = ("rate.answered", "rate.refused", "rate.blocked", "rate.revised", RETAINED)


def series(shown: list[Point]) -> dict[str, list[float | None]]:
    """Per metric, its value at each shown run (None where a run lacks it)."""
    names = sorted({m for p in shown for m in p.metrics})
    out: dict[str, list[float | None]] = {}
    for name in names:
        kind = next(p.metrics[name]["kind"] for p in shown if name in p.metrics)
        missing = 0.0 if kind == "proportion" else None
        out[name] = [p.metrics[name]["value"] if name in p.metrics else missing for p in shown]
    retained: list[float | None] = [None]
    for before, after in zip(shown, shown[1:], strict=False):
        counts = _retained(before, after)
        retained.append(counts[0] / counts[1] if counts else None)
    out[RETAINED] = retained
    return out


HISTORY = (
    ("questions", "run.questions"),
    ("answered", "rate.answered"),
    ("refused", "rate.refused"),
    ("blocked", "rate.blocked"),
    ("confidence", "dist.confidence"),
    ("claim score", "dist.claim_score"),
    ("top score", "dist.retrieval_top_score"),
    ("documents", "corpus.documents"),
)


def history_rows(report: TrendReport) -> list[dict[str, Any]]:
    """The baseline runs and the checked run, oldest first: the main metrics (distributions by
    their mean) and the snapshot, so a person sees the trend and not only the last step."""
    values = series(report.points)
    rows = []
    for index, point in enumerate(report.points):
        row: dict[str, Any] = {"run": point.run_id}
        for label, metric in HISTORY:
            value = values.get(metric, [None] * len(report.points))[index]
            row[label] = _fmt(value) if metric.startswith(("rate.", "dist.")) else _count(value)
        row["snapshot"] = point.corpus_snapshot[:8]
        rows.append(row)
    return rows


def _count(value: Any) -> str:
    return "" if value is None else str(int(value))


def _ordered(names: list[str]) -> list[str]:
    return [n for n in LEADING if n in names] + sorted(n for n in names if n not in LEADING)


def table_rows(report: TrendReport) -> list[dict[str, Any]]:
    """One row per check: metric, test, baseline, value, statistic, band, alarm, note."""
    rows = []
    for check in sorted(report.checks, key=lambda c: (not c.alarm, _rank(c.metric))):
        rows.append(
            {
                "metric": check.metric,
                "test": check.test,
                "baseline": _fmt(check.baseline),
                "value": _fmt(check.value),
                "statistic": _fmt(check.statistic),
                "band": f"[{_fmt(check.band[0])}, {_fmt(check.band[1])}]" if check.band else "",
                "alarm": "ALARM" if check.alarm else "",
                "note": check.note,
            }
        )
    return rows


def _rank(metric: str) -> tuple[int, str]:
    return (LEADING.index(metric) if metric in LEADING else len(LEADING), metric)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if math.isinf(value) else f"{value:.3f}"
    return "" if value is None else str(value)


def markdown(report: TrendReport) -> str:
    lines = [f"# Drift check of run {report.run_id}", ""]
    alarms = report.alarms
    lines.append(
        f"{len(alarms)} alarm(s) against {len(report.baseline_runs)} baseline run(s)."
        if report.checks
        else "Nothing to compare."
    )
    lines += [f"- {note}" for note in report.context]
    if report.checks:
        lines += ["", "| metric | test | baseline | value | statistic | band | alarm | note |"]
        lines.append("|---|---|---|---|---|---|---|---|")
        for row in table_rows(report):
            cells = [str(v).replace("|", "/") for v in row.values()]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(report: TrendReport, path: Path, checks: list[Check] | None = None) -> Path | None:
    """One panel per tested metric over the shown runs, the baseline's band shaded, alarms red.
    Written under a temporary name and renamed. None when there is nothing to plot."""
    import matplotlib

    matplotlib.use("Agg")  # no display on a server; must precede pyplot
    import matplotlib.pyplot as plt

    if not report.points:
        return None
    values = series(report.points)
    by_metric = {c.metric: c for c in (checks or report.checks)}
    names = _ordered([n for n in values if n in by_metric or n.startswith(("rate.", "dist."))])
    if not names:
        return None
    columns = 3
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.6 * rows), squeeze=False)
    x = list(range(len(report.points)))
    for ax, name in zip(axes.flat, names, strict=False):
        ys = [math.nan if v is None else v for v in values[name]]
        check = by_metric.get(name)
        alarm = bool(check and check.alarm)
        ax.plot(x, ys, marker="o", color="tab:red" if alarm else "tab:blue", linewidth=1.2)
        if check and check.band and check.kind == "proportion":
            ax.axhspan(check.band[0], check.band[1], color="tab:green", alpha=0.12)
        stat = f" ({check.test} {_fmt(check.statistic)})" if check and check.statistic else ""
        label = "mean " if name.startswith("dist.") else ""
        ax.set_title(f"{label}{name}{stat}", fontsize=9, color="tab:red" if alarm else "black")
        ax.tick_params(labelsize=7)
        ax.set_xticks(x)
        ax.set_xticklabels([""] * (len(x) - 1) + ["this run"] if x else [], fontsize=7)
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.suptitle(
        f"run {report.run_id}: {len(report.alarms)} alarm(s), "
        f"baseline {len(report.baseline_runs)} run(s)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    fig.savefig(tmp, format="png", dpi=90)
    plt.close(fig)
    tmp.replace(path)
    return path


def publish(report: TrendReport) -> bool:
    """The check as Prefect artifacts (Markdown and a table), only inside a flow run."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return False
    key = re.sub(r"[^a-z0-9-]", "-", "drift-trend")
    create_markdown_artifact(
        markdown=markdown(report), key=key, description=f"drift check of run {report.run_id}"
    )
    if report.checks:
        create_table_artifact(
            table=table_rows(report), key=f"{key}-checks", description="metrics against baseline"
        )
    return True


def nightly_check(settings, window: int = 10, png: Path | None = None) -> TrendReport:
    """What the nightly deployment runs: the latest run against its baseline, alarms logged at
    WARNING, the PNG written and the artifacts published."""
    from quality.drift import DriftConfig, check_run, log_alarms
    from quality.ledger import read_ledger

    report = check_run(read_ledger(settings.artifact_store()), None, DriftConfig(window=window))
    log_alarms(report)
    plot(report, png or settings.runs_dir / "trend" / "trend.png")
    publish(report)
    return report
