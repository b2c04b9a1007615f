"""Detection sets: frozen, labelled items that a checker flags or lets through.

A detection set is a folder `eval/sets/<name>/` holding

- `manifest.json`: `{"name", "kind": "detection", "checker": "<dotted path of a function>",
  "overrides": {stage: {field: value}}, "files": {relative path: sha256}, ...}`; `files` lists
  every other file of the folder (a changed or extra file refuses the set, as for question sets);
- `records.jsonl`: one record a line, each with a `label` (e.g. `correct` / `hallucinated`) and
  whatever its checker reads;
- `NOTICE.md` when the records come from public data (its licence and source).

The checker is `checker(record, overrides) -> dict` with at least `{"flagged": bool, "seconds":
float}`; `overrides` are the manifest's, then the user's `--set-override stage.field=value`.
It lives in `stages/`, `agents/` or `eval/` (eval never imports `flows/`). A checker that
raises on one record is a one-line error for that record; the others go on and the error count
is an axis.

Metrics (axis `detection`): `flag_rate.<label>` = the share of that label's records flagged, and
every other numeric field the checker returns (booleans aside) averaged over the records, e.g.
`seconds`, `judge_calls`. They are gated by the top-level `detection:` group of `eval/gate.yaml`
(same `direction` / `tolerance` / `max` spec as the question axes) against
`eval/baseline/<name>.json`; `grounding eval --set <name> --gate` runs this module for such sets.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import inspect
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.frozen_sets import ROOT, EvalSetError, resolve_set, sha256_file, verify_frozen_files
from eval.release_gate import GateFailure, baseline_path, compare, load_gate

KIND = "detection"
RECORDS = "records.jsonl"
AXIS = "detection"
Checker = Callable[..., dict]


@dataclass
class DetectionSet:
    name: str
    path: Path
    set_hash: str
    manifest: dict
    records: list[dict]


def is_detection_set(name: str | Path, root: Path = ROOT) -> bool:
    """True when the set's manifest says `"kind": "detection"` (False for a missing set)."""
    try:
        manifest = json.loads((resolve_set(name, root) / "manifest.json").read_text())
    except (EvalSetError, OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("kind") == KIND


def load_detection_set(name: str | Path, root: Path = ROOT) -> DetectionSet:
    """The set's records after checking every file against manifest.json."""
    folder = resolve_set(name, root)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise EvalSetError(f"detection set {folder}: no manifest.json")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    set_name = manifest.get("name", folder.name)
    if manifest.get("kind") != KIND or not manifest.get("checker"):
        raise EvalSetError(f"detection set {set_name}: manifest needs kind 'detection' and checker")
    files: dict[str, str] = manifest.get("files", {})
    verify_frozen_files(folder, files, f"detection set {set_name}", "its bench's --freeze")
    if RECORDS not in files:
        raise EvalSetError(f"detection set {set_name}: needs {RECORDS}")
    records = []
    lines = (folder / RECORDS).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, dict) or not isinstance(record.get("label"), str):
            raise EvalSetError(f"detection set {set_name}: {RECORDS} line {number} has no label")
        records.append(record)
    set_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    return DetectionSet(set_name, folder, set_hash, manifest, records)


def write_manifest(folder: Path, manifest: dict) -> dict:
    """manifest.json for the files now in `folder` (the builders' one way to freeze a set)."""
    files = {
        p.relative_to(folder).as_posix(): sha256_file(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }
    document = {**manifest, "kind": KIND, "files": files}
    (folder / "manifest.json").write_text(json.dumps(document, indent=2) + "\n")
    return document


def resolve_checker(path: str) -> Checker:
    """`pkg.module.function` (or `pkg.module:function`) as a callable."""
    module_name, sep, attribute = path.partition(":")
    if not sep:
        module_name, _, attribute = path.rpartition(".")
    try:
        checker = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise EvalSetError(f"checker {path!r} cannot be imported: {exc}") from exc
    if not callable(checker):
        raise EvalSetError(f"checker {path!r} is not a function")
    return checker


def merge_overrides(*layers: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Layers of `{stage: {field: value}}` (or the CLI's flat `{"stage.field.sub": value}`)
    merged in order, nested fields deep-merged."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            path = key.split(".")
            nested: Any = value
            for part in reversed(path[1:]):
                nested = {part: nested}
            merged[path[0]] = _deep_merge(merged.get(path[0]), nested)
    return merged


def _deep_merge(base: Any, update: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(update, dict):
        return update
    out = dict(base)
    for key, value in update.items():
        out[key] = _deep_merge(out.get(key), value)
    return out


def run_checker(checker: Checker, record: dict, overrides: dict) -> dict:
    """One record through the checker: its result, or `{"error": ...}` (one line) on failure."""
    started = time.perf_counter()
    try:
        takes_overrides = len(inspect.signature(checker).parameters) > 1
        result = checker(record, overrides) if takes_overrides else checker(record)
        if not isinstance(result, dict) or not isinstance(result.get("flagged"), bool):
            raise TypeError(f"checker returned {type(result).__name__} without a bool 'flagged'")
    except Exception as exc:  # one bad record is an error row; the set goes on
        first_line = (str(exc).splitlines() or [""])[0][:300]
        seconds = time.perf_counter() - started
        return {"error": f"{type(exc).__name__}: {first_line}", "seconds": seconds}
    result.setdefault("seconds", time.perf_counter() - started)
    return result


def metrics(records: list[dict], results: list[dict]) -> dict[str, Any]:
    """Axis `detection`: flag rate per label, and each other numeric field averaged."""
    axis: dict[str, Any] = {"n": len(records), "errors": sum(1 for r in results if "error" in r)}
    by_label: dict[str, list[bool]] = {}
    numeric: dict[str, list[float]] = {}
    for record, result in zip(records, results, strict=True):
        if "error" in result:
            continue
        by_label.setdefault(record["label"], []).append(result["flagged"])
        for key, value in result.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                numeric.setdefault(key, []).append(float(value))
    for label, flags in sorted(by_label.items()):
        axis[f"flag_rate.{label}"] = round(sum(flags) / len(flags), 4)
        axis[f"n.{label}"] = len(flags)
    for key, values in sorted(numeric.items()):
        axis[key] = round(statistics.fmean(values), 4)
    if numeric.get("seconds"):
        axis["seconds_median"] = round(statistics.median(numeric["seconds"]), 4)
    return {"axes": {AXIS: axis}}


def evaluate(
    name: str | Path,
    overrides: dict[str, dict[str, Any]] | None = None,
    root: Path = ROOT,
    limit: int | None = None,
    on_record: Callable[[int, int, dict], None] | None = None,
) -> dict[str, Any]:
    """Every record of the set through its checker: metrics and per-record results."""
    dset = load_detection_set(name, root)
    checker = resolve_checker(dset.manifest["checker"])
    applied = merge_overrides(dset.manifest.get("overrides"), overrides)
    records = dset.records[:limit] if limit else dset.records
    results = []
    started = time.perf_counter()
    for index, record in enumerate(records):
        result = run_checker(checker, record, applied)
        results.append(result)
        if on_record:
            on_record(index, len(records), result)
    candidate = metrics(records, results)
    candidate.update(
        set=dset.name,
        set_hash=dset.set_hash,
        checker=dset.manifest["checker"],
        overrides=applied,
        wall_seconds=round(time.perf_counter() - started, 2),
        limited=bool(limit) and limit < len(dset.records),
    )
    rows = [
        {"id": r.get("id", i), "label": r["label"], **result}
        for i, (r, result) in enumerate(zip(records, results, strict=True))
    ]
    return {"metrics": candidate, "records": rows}


def detection_gate(gate: dict) -> dict:
    """The `detection:` group of gate.yaml in the shape `eval.release_gate.compare` reads."""
    return {"axes": {AXIS: gate.get(AXIS) or {}}}


def release(
    name: str | Path,
    overrides: dict[str, dict[str, Any]] | None = None,
    gate: bool = False,
    promote: bool = False,
    accept: str | None = None,
    reports_dir: Path | None = None,
    root: Path = ROOT,
    limit: int | None = None,
    on_record: Callable[[int, int, dict], None] | None = None,
) -> dict[str, Any]:
    """Evaluate, write a JSON report, compare with the baseline; `GateFailure` naming the axes
    when gating and something regressed; the baseline written when `promote` (with `accept`:
    despite regressions, the reason recorded)."""
    outcome = evaluate(name, overrides, root, limit, on_record)
    candidate = outcome["metrics"]
    base_file = baseline_path(candidate["set"], root)
    baseline = json.loads(base_file.read_text()) if base_file.is_file() else None
    comparison = compare(
        candidate, baseline, detection_gate(load_gate(root / "eval" / "gate.yaml"))
    )
    if candidate["limited"] and (gate or promote):
        raise EvalSetError("--limit runs part of the set: it cannot be gated or promoted")
    if candidate["axes"][AXIS]["errors"]:
        comparison["failures"].append(
            f"axis {AXIS}: {candidate['axes'][AXIS]['errors']} record(s) could not be checked"
        )
        comparison["failed_axes"] = sorted({*comparison["failed_axes"], AXIS})
        comparison["passed"] = False
    folder = None
    if reports_dir:
        folder = _write_report(Path(reports_dir), candidate, comparison, outcome["records"])
    accepted = promote and bool(accept) and not comparison["passed"]
    if (gate or promote) and not comparison["passed"] and not accepted:
        raise GateFailure(
            comparison["failed_axes"],
            f"release gate failed on {candidate['set']}:\n  " + "\n  ".join(comparison["failures"]),
        )
    promoted = None
    if promote:
        record = {
            "set": candidate["set"],
            "set_hash": candidate["set_hash"],
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "checker": candidate["checker"],
            "overrides": candidate["overrides"],
            "axes": candidate["axes"],
            "wall_seconds": candidate["wall_seconds"],
        }
        if accepted:
            record["accepted_regressions"] = {"reason": accept, "failures": comparison["failures"]}
        base_file.parent.mkdir(parents=True, exist_ok=True)
        base_file.write_text(json.dumps(record, indent=2) + "\n")
        promoted = base_file
    return {**outcome, "comparison": comparison, "report": folder, "promoted": promoted}


def _write_report(reports_dir: Path, candidate: dict, comparison: dict, rows: list[dict]) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = reports_dir / f"{stamp}-{candidate['set']}"
    suffix = 1
    while folder.exists():
        suffix += 1
        folder = reports_dir / f"{stamp}-{candidate['set']}-{suffix}"
    folder.mkdir(parents=True)
    payload = {**candidate, "gate": comparison, "records": rows}
    (folder / "detection.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    return folder


# ---------------------------------------------------------------- checkers


def check_rag_answer(record: dict, overrides: dict[str, dict[str, Any]] | None = None) -> dict:
    """A RAG answer through the guardrails' one claim checker (`stages.guardrails.check_answer`).

    The record holds `question`, `answer` and `evidence` ({id: {"title", "text"}}); flagged =
    the gate did not emit. Returns the action, seconds, judge calls and the flagged claims'
    character spans in the answer (`flagged_spans`), which the bench scores against labels."""
    toolkit = _toolkit(json.dumps(merge_overrides(overrides).get("guardrails", {}), sort_keys=True))
    report, seconds, calls = checked_report(record, toolkit)
    return {
        "flagged": report["action"] != "emit",
        "action": report["action"],
        "seconds": round(seconds, 4),
        "judge_calls": calls,
        "claims": len(report.get("claims") or []),
        "flagged_spans": flagged_spans(record["answer"], report),
    }


def guardrails_config(settings: dict[str, Any]) -> Any:
    """guardrails.Config from configs/pipeline.yaml's guardrails block and `settings`."""
    import yaml

    from stages import guardrails

    pipeline = ROOT / "configs" / "pipeline.yaml"
    configured: dict[str, Any] = {}
    if pipeline.is_file():
        document = yaml.safe_load(pipeline.read_text(encoding="utf-8")) or {}
        section = (document.get("stages") or {}).get("guardrails") or {}
        # the `include:` files first, then the section's own keys (as flows/pipeline_config.py
        # reads it; eval/ does not import flows/)
        for include in section.get("include", []):
            configured.update(yaml.safe_load((ROOT / include).read_text(encoding="utf-8")) or {})
        configured.update({k: v for k, v in section.items() if k != "include"})
    return guardrails.Config.model_validate(_deep_merge(configured, settings))


_TOOLKITS: dict[str, Any] = {}


def _toolkit(settings_json: str) -> Any:
    """One guardrails Toolkit (judge loaded once) per distinct settings, for the process."""
    if settings_json not in _TOOLKITS:
        from stages import guardrails

        config = guardrails_config(json.loads(settings_json))
        _TOOLKITS[settings_json] = guardrails.Toolkit(config)
    return _TOOLKITS[settings_json]


def checked_report(record: dict, toolkit: Any) -> tuple[dict, float, int]:
    """(HallucinationReport, seconds, uncached judge calls) of one record."""
    from stages import guardrails

    evidence = {
        key: {
            "evidence_id": key,
            "doc_id": str(item.get("doc_id") or key),
            "title": item.get("title") or "",
            "section_path": item.get("section_path") or "",
            "text": item["text"],
            "char_start": 0,
            "char_end": len(item["text"]),
        }
        for key, item in record["evidence"].items()
    }
    calls = toolkit.judge_calls
    started = time.perf_counter()
    if hasattr(guardrails, "check_answer"):
        report = guardrails.check_answer(
            record["answer"],
            evidence,
            question=record.get("question") or "",
            config=toolkit.config,
            toolkit=toolkit,
            generated=record.get("generated", True),
        )
    else:  # before check_answer landed: the stage's own check over a synthetic attribution
        report = guardrails.check(
            {"status": "answered", "answer": record["answer"], "blocked_reason": None},
            {"backend": "llama_cpp" if record.get("generated", True) else "extractive"},
            evidence,
            toolkit.config,
            toolkit,
            question=record.get("question") or "",
        )
    return report, time.perf_counter() - started, toolkit.judge_calls - calls


OK_STATUSES = frozenset({"supported", "not_a_claim"})


def claim_span(answer: str, claim: dict, start: int = 0) -> tuple[int, int] | None:
    """The claim's character span in the answer: its own `char_start`/`char_end`, else where its
    text occurs (from `start`), else None."""
    if isinstance(claim.get("char_start"), int) and isinstance(claim.get("char_end"), int):
        return claim["char_start"], claim["char_end"]
    text = (claim.get("text") or "").strip()
    if not text:
        return None
    at = answer.find(text, start)
    if at < 0:
        at = answer.find(text)
    return (at, at + len(text)) if at >= 0 else None


def claim_spans(answer: str, claims: list[dict]) -> list[tuple[int, int] | None]:
    """`claim_span` of each claim in order, each searched from where the previous one ended."""
    spans: list[tuple[int, int] | None] = []
    cursor = 0
    for claim in claims:
        span = claim_span(answer, claim, cursor)
        if span is not None:
            cursor = span[1]
        spans.append(span)
    return spans


def flagged_spans(answer: str, report: dict) -> list[list[int]]:
    """Character spans of the claims a flagged answer shows as not supported ([] if emitted)."""
    if report.get("action") == "emit":
        return []
    claims = report.get("claims") or []
    return [
        [span[0], span[1]]
        for claim, span in zip(claims, claim_spans(answer, claims), strict=True)
        if span is not None and claim.get("status") not in OK_STATUSES
    ]
