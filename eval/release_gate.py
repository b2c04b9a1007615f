"""The release gate: compare a run's metrics with `eval/baseline/<set>.json` using the per-axis
tolerances in `eval/gate.yaml`, and the baseline record `--promote` writes."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

import yaml

from eval.frozen_sets import ROOT, sha256_file
from eval.metrics import comparable
from eval.scoring import EvalResult

BASELINE_DIR = ROOT / "eval" / "baseline"
GATE_FILE = ROOT / "eval" / "gate.yaml"
GATED_AXES = ("retrieval", "generation", "end_to_end", "guardrail")


class GateFailure(RuntimeError):
    """One or more axes regressed beyond tolerance; `axes` names them."""

    def __init__(self, axes: list[str], message: str) -> None:
        super().__init__(message)
        self.axes = axes


def load_gate(path: Path = GATE_FILE) -> dict:
    return yaml.safe_load(Path(path).read_text()) or {}


def baseline_path(set_name: str, root: Path = ROOT) -> Path:
    return root / "eval" / "baseline" / f"{set_name}.json"


def compare(candidate: dict, baseline: dict | None, gate: dict) -> dict:
    """Per-metric deltas, axis verdicts and the failures (axes regressed beyond tolerance)."""
    rows, failures = [], []
    for axis, specs in (gate.get("axes") or {}).items():
        for metric, spec in specs.items():
            value = candidate["axes"].get(axis, {}).get(metric)
            base = (baseline or {}).get("axes", {}).get(axis, {}).get(metric)
            higher = spec.get("direction", "higher") == "higher"
            tolerance = float(spec.get("tolerance", 0.0))
            delta = None if value is None or base is None else value - base
            worse = None if delta is None else (-delta if higher else delta)
            verdict = "n/a" if delta is None else "ok"
            if worse is not None and worse > tolerance + 1e-12:
                verdict = "regressed"
            elif worse is not None and worse < -1e-12:
                verdict = "improved"
            elif worse is not None and worse > 1e-12:
                verdict = "worse within tolerance"
            limit = spec.get("max")
            if value is not None and limit is not None and value > limit:
                verdict = "regressed"
            if verdict == "regressed":
                failures.append(
                    f"axis {axis}: {metric} {format_value(base)} → {format_value(value)} "
                    f"(tolerance {tolerance}{'' if limit is None else f', max {limit}'})"
                )
            rows.append(
                {
                    "axis": axis,
                    "metric": metric,
                    "baseline": base,
                    "candidate": value,
                    "delta": delta,
                    "direction": "higher" if higher else "lower",
                    "tolerance": tolerance,
                    "verdict": verdict,
                }
            )
    if baseline and baseline.get("set_hash") != candidate.get("set_hash"):
        failures.insert(
            0,
            "axis eval_set: the baseline was recorded on a different version of the eval set "
            f"({str(baseline.get('set_hash'))[:12]} vs {candidate['set_hash'][:12]})",
        )
    failed_axes = sorted({f.split(":")[0].removeprefix("axis ") for f in failures})
    e2e_better = any(r["axis"] == "end_to_end" and r["verdict"] == "improved" for r in rows)
    gen_worse = any(
        r["axis"] == "generation" and r["verdict"] in ("regressed", "worse within tolerance")
        for r in rows
    )
    notes = []
    if e2e_better and gen_worse:
        notes.append(
            "lucky retrieval: end-to-end improved while generation-only (gold evidence) "
            "regressed — the gain comes from retrieval, and generation got worse"
        )
    return {
        "has_baseline": baseline is not None,
        "rows": rows,
        "failures": failures,
        "failed_axes": failed_axes,
        "passed": not failures,
        "lucky_retrieval": e2e_better and gen_worse,
        "notes": notes,
    }


def format_value(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def model_identity(config) -> dict[str, str]:
    from stages.models.embeddings import model_version, split_runtime
    from stages.models.files import resolve_model_path

    spec = config.stage_config("indexing").embedding_model
    path = resolve_model_path(split_runtime(spec)[1])
    digest = hashlib.sha256()
    for file in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        if "__pycache__" in file.parts:
            continue
        digest.update(file.relative_to(path).as_posix().encode())
        digest.update(sha256_file(file).encode())
    return {"embedding_model": spec, "version": model_version(spec), "sha256": digest.hexdigest()}


def baseline_record(run: EvalResult, root: Path = ROOT) -> dict:
    from stages.catalog import stage_versions

    config = run.config
    return {
        "set": run.eval_set.name,
        "set_hash": run.eval_set.set_hash,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "axes": comparable(run.metrics)["axes"],
        "cost": run.metrics["axes"]["cost"],
        "questions": run.metrics["questions"],
        "counts": run.metrics["counts"],
        "stage_versions": stage_versions(),
        "models": model_identity(config),
        "config": {
            "as_of": str(config.as_of) if config.as_of else None,
            "default_principal": config.default_principal,
            "default_query_type": config.default_query_type,
            "stages": {n: c.model_dump(mode="json") for n, c in config.stages.items()},
        },
    }


# ---------------------------------------------------------------- report
