"""Drift alarms: a run's metrics against a baseline window of earlier runs on the same questions.

Pure functions of the ledger table (`quality.ledger`), so every test can build a ledger by hand.

- Proportions (answer-state mix, refusal, block and revise rates, ingestion error rate) get a
  two-proportion z-test of the run against the baseline window pooled. An alarm needs both
  |z| >= `z_alarm` and a change of at least `min_rate_change`: with thousands of questions a
  1-point move is significant and still nothing to wake anyone for.
- Distributions (answer confidence, claim scores, retrieval top scores) get a population-stability
  index over the baseline's quantile bins; PSI >= `psi_alarm` (0.25, the usual line for a
  significant shift) alarms. Fewer than `min_values` values on either side: not tested, said so.
- The corpus: a run on a snapshot that earlier runs had already moved on from (a stale copy
  restored) alarms, by identity; so does a corpus that lost more than `max_removed` of the
  previous run's documents (both lists are complete: a census, no sampling error to test for).
Counts and stage seconds are shown, never alarmed on: a cached stage takes no time, corpora grow.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

RETAINED = "corpus.retained"
SNAPSHOT = "corpus.snapshot"
# families whose members a run may lack (no answer in that state): then 0 of its questions
ZERO_FILLED = ("rate.", "state.")


class DriftConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    window: int = Field(10, ge=1, description="Baseline: up to this many earlier runs.")
    z_alarm: float = Field(3.29, gt=0, description="|z| of a rate test that alarms (p < 0.001).")
    min_rate_change: float = Field(0.05, ge=0, le=1, description="Smallest rate move to alarm.")
    psi_alarm: float = Field(0.25, gt=0, description="PSI of a distribution that alarms.")
    psi_bins: int = Field(10, ge=2, description="Quantile bins of the baseline for the PSI.")
    min_values: int = Field(10, ge=1, description="Fewest values per side to test a distribution.")
    max_removed: float = Field(
        0.2, ge=0, le=1, description="Share of the previous run's documents gone that alarms."
    )
    same_stream: bool = Field(True, description="Compare only runs on the same question set.")


@dataclass
class Point:
    """One run's rows of the ledger."""

    run_id: str
    recorded_at: str
    stream: str
    corpus_snapshot: str
    config_key: str
    stage_versions: dict[str, str]
    metrics: dict[str, dict[str, Any]]


@dataclass
class Check:
    metric: str
    kind: str
    test: str  # two-proportion z | psi | snapshot identity | none
    baseline: float | str | None
    value: float | str | None
    statistic: float | None
    band: tuple[float, float] | None
    alarm: bool
    note: str = ""

    def line(self) -> str:
        """What moved and by how much, in one line (the WARNING log line of an alarm)."""
        stat = "" if self.statistic is None else f", {self.test} = {_fmt(self.statistic)}"
        band = "" if self.band is None else f", band [{_fmt(self.band[0])}, {_fmt(self.band[1])}]"
        note = f" ({self.note})" if self.note else ""
        return (
            f"{self.metric}: {_fmt(self.value)} against baseline {_fmt(self.baseline)}"
            f"{stat}{band}{note}"
        )


@dataclass
class TrendReport:
    run_id: str | None
    baseline_runs: list[str]
    checks: list[Check]
    points: list[Point]
    context: list[str] = field(default_factory=list)

    @property
    def alarms(self) -> list[Check]:
        return [c for c in self.checks if c.alarm]

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "baseline_runs": self.baseline_runs,
            "alarms": len(self.alarms),
            "context": self.context,
            "checks": [
                {
                    "metric": c.metric,
                    "kind": c.kind,
                    "test": c.test,
                    "baseline": c.baseline,
                    "value": c.value,
                    "statistic": c.statistic,
                    "band": list(c.band) if c.band else None,
                    "alarm": c.alarm,
                    "note": c.note,
                }
                for c in self.checks
            ],
        }


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.3f}"
    return "-" if value is None else str(value)


# ---------------------------------------------------------------- the ledger as runs


def points(ledger: pa.Table) -> list[Point]:
    """The ledger's runs in recorded order (a run id may repeat: each recording is a point)."""
    grouped: dict[tuple[str, str], Point] = {}
    for row in ledger.to_pylist():
        key = (row["recorded_at"], row["run_id"])
        if key not in grouped:
            grouped[key] = Point(
                row["run_id"],
                row["recorded_at"],
                row["stream"],
                row["corpus_snapshot"],
                row["config_key"],
                json.loads(row["stage_versions"] or "{}"),
                {},
            )
        grouped[key].metrics[row["metric"]] = row
    return [grouped[k] for k in sorted(grouped)]


def _questions(point: Point) -> int:
    row = point.metrics.get("run.questions")
    return int(row["value"]) if row and row["value"] is not None else 0


def _counts(point: Point, metric: str) -> tuple[int, int] | None:
    row = point.metrics.get(metric)
    if row is not None and row["trials"] is not None:
        return int(row["successes"]), int(row["trials"])
    if metric.startswith(ZERO_FILLED):
        return 0, _questions(point)
    return None


def _retained(previous: Point, point: Point) -> tuple[int, int] | None:
    """How many of the previous run's documents this run's corpus still has."""
    before = previous.metrics.get("corpus.documents")
    after = point.metrics.get("corpus.documents")
    if not before or not after or not before["items"]:
        return None
    kept = set(before["items"]) & set(after["items"] or [])
    return len(kept), len(before["items"])


# ---------------------------------------------------------------- the tests


def two_proportion_z(s1: int, n1: int, s2: int, n2: int) -> float:
    """z of the second proportion against the first, pooled standard error; 0 when both are
    equal, +-inf when they differ and the pooled variance is 0 (cannot happen then)."""
    if n1 == 0 or n2 == 0:
        return 0.0
    p1, p2 = s1 / n1, s2 / n2
    pooled = (s1 + s2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 0.0 if p1 == p2 else math.copysign(math.inf, p2 - p1)
    return (p2 - p1) / se


def psi(baseline: list[float], current: list[float], bins: int = 10) -> float:
    """Population-stability index of `current` against `baseline`, over the baseline's quantile
    bins (ties merged; a baseline of one value gets a bin below, at and above it)."""
    base = np.asarray(baseline, dtype=float)
    now = np.asarray(current, dtype=float)
    edges = np.unique(np.quantile(base, np.linspace(0, 1, bins + 1)[1:-1]))
    if len(edges) == 1:
        edges = np.array([edges[0], np.nextafter(edges[0], np.inf)])
    slots = len(edges) + 1
    expected = np.bincount(np.searchsorted(edges, base, side="right"), minlength=slots)
    actual = np.bincount(np.searchsorted(edges, now, side="right"), minlength=slots)
    # a floor for empty bins, so a bin the baseline never saw counts instead of dividing by 0
    e = np.maximum(expected / expected.sum(), 1e-4)
    a = np.maximum(actual / actual.sum(), 1e-4)
    return float(np.sum((a - e) * np.log(a / e)))


def _rate_check(metric: str, base: tuple[int, int], now: tuple[int, int], cfg: DriftConfig):
    (s1, n1), (s2, n2) = base, now
    p1 = s1 / n1 if n1 else None
    p2 = s2 / n2 if n2 else None
    if p1 is None or p2 is None:
        return Check(metric, "proportion", "none", p1, p2, None, None, False, "no trials")
    z = two_proportion_z(s1, n1, s2, n2)
    # the band a run of this size stays in by chance, widened to the smallest move that counts
    half = max(cfg.z_alarm * math.sqrt(p1 * (1 - p1) / n2), cfg.min_rate_change)
    band = (max(0.0, p1 - half), min(1.0, p1 + half))
    alarm = abs(z) >= cfg.z_alarm and abs(p2 - p1) >= cfg.min_rate_change
    note = f"{s2}/{n2} against {s1}/{n1}"
    return Check(metric, "proportion", "z", p1, p2, z, band, alarm, note)


def _distribution_check(metric: str, base: list[float], now: list[float], cfg: DriftConfig):
    b_mean = float(np.mean(base)) if base else None
    n_mean = float(np.mean(now)) if now else None
    if len(base) < cfg.min_values or len(now) < cfg.min_values:
        note = f"not tested: {len(now)} values against {len(base)}, fewer than {cfg.min_values}"
        return Check(metric, "distribution", "none", b_mean, n_mean, None, None, False, note)
    value = psi(base, now, cfg.psi_bins)
    note = f"mean {_fmt(n_mean)} against {_fmt(b_mean)}, {len(now)} values against {len(base)}"
    return Check(
        metric, "distribution", "PSI", b_mean, n_mean, value, (0.0, cfg.psi_alarm),
        value >= cfg.psi_alarm, note,
    )  # fmt: skip


def _snapshot_check(history: list[Point], baseline: list[Point], target: Point) -> Check:
    """Stale when the run's snapshot was current once and later runs had moved on from it."""
    latest = baseline[-1].corpus_snapshot
    now = target.corpus_snapshot
    shown = (SNAPSHOT, "snapshot", "identity", latest[:12], now[:12])
    if now == latest:
        return Check(*shown, None, None, False)
    seen = [i for i, p in enumerate(history) if p.corpus_snapshot == now]
    if not seen:
        return Check(*shown, None, None, False, "a new snapshot (the corpus changed)")
    runs_since = len(history) - seen[-1] - 1
    note = f"stale: this snapshot was replaced {runs_since} runs ago and is back"
    return Check(*shown, float(runs_since), None, True, note)


# ---------------------------------------------------------------- the report


def check_run(ledger: pa.Table, run_id: str | None = None, cfg: DriftConfig | None = None):
    """The run (`run_id`, else the latest) against its baseline window."""
    cfg = cfg or DriftConfig()
    every = points(ledger)
    if not every:
        return TrendReport(None, [], [], [], ["the ledger is empty: no run recorded yet"])
    if run_id is None:
        index = len(every) - 1
    else:
        matches = [i for i, p in enumerate(every) if p.run_id == run_id]
        if not matches:
            raise KeyError(f"run {run_id!r} is not in the ledger")
        index = matches[-1]
    target = every[index]
    history = [p for p in every[:index] if not cfg.same_stream or p.stream == target.stream]
    baseline = history[-cfg.window :]
    shown = [*baseline, target]
    if not baseline:
        note = "no earlier run on this question set: nothing to compare with yet"
        return TrendReport(target.run_id, [], [], shown, [note])
    checks = []
    names = sorted({m for p in shown for m, r in p.metrics.items() if r["kind"] == "proportion"})
    for metric in names:
        base = [c for p in baseline if (c := _counts(p, metric))]
        now = _counts(target, metric)
        if not base or now is None:
            continue
        pooled = (sum(s for s, _ in base), sum(n for _, n in base))
        checks.append(_rate_check(metric, pooled, now, cfg))
    retained = _retained_check(history, target, cfg)
    if retained:
        checks.append(retained)
    names = sorted({m for p in shown for m, r in p.metrics.items() if r["kind"] == "distribution"})
    for metric in names:
        base = [v for p in baseline for v in (p.metrics.get(metric) or {}).get("values") or []]
        now = list((target.metrics.get(metric) or {}).get("values") or [])
        checks.append(_distribution_check(metric, base, now, cfg))
    checks.append(_snapshot_check(history, baseline, target))
    return TrendReport(
        target.run_id, [p.run_id for p in baseline], checks, shown, _context(baseline, target)
    )


def _retained_check(history: list[Point], target: Point, cfg: DriftConfig) -> Check | None:
    """The share of the previous run's documents still in the corpus. Both document lists are
    complete (a census, not a sample), so no test statistic: the share removed is compared with
    `max_removed` directly, however small the corpus."""
    now = _retained(history[-1], target)
    if now is None:
        return None
    kept, before = now
    removed = 1 - kept / before
    note = f"{before - kept} of the previous run's {before} documents are gone"
    return Check(
        RETAINED, "proportion", "removed", 1.0, kept / before, removed,
        (1 - cfg.max_removed, 1.0), removed > cfg.max_removed + 1e-12, note,
    )  # fmt: skip


def _context(baseline: list[Point], target: Point) -> list[str]:
    """What changed on purpose since the baseline, to read the alarms by."""
    last = baseline[-1]
    notes = []
    if target.config_key != last.config_key:
        notes.append("the stages' configuration changed since the last baseline run")
    moved = sorted(
        s for s, v in target.stage_versions.items() if last.stage_versions.get(s, v) != v
    )
    if moved:
        notes.append(f"stage versions changed: {', '.join(moved)}")
    return notes


def log_alarms(report: TrendReport) -> None:
    """One WARNING line per alarm naming the metric, the run, the baseline and the statistic."""
    for check in report.alarms:
        log.warning(
            "drift alarm on run %s over %d baseline runs: %s",
            report.run_id,
            len(report.baseline_runs),
            check.line(),
        )
