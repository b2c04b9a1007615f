"""Shadow runs and promotion records.

A shadow run answers a recorded run's questions again with a candidate configuration, on the
same artifact store (every stage the candidate leaves unchanged is a cache hit), and keeps its
answers apart in `<runs_dir>/shadow/<shadow id>/`, out of the run ledger, so drift alarms never
see it. Its report compares the two runs answer by answer; `promote` records a promotion (JSON in
the store, `promotions/`) only when the candidate passes the release gate and the shadow report
is within the bounds it states.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from quality.review import ANSWER_VERDICTS
from quality.review import VERDICTS_DIR as REVIEW_VERDICTS

STATUSES = ("answered", "refused", "blocked")
SHADOW_FOLDER = "shadow"
PROMOTIONS_FOLDER = "promotions"
REPORT_JSON = "shadow.json"
REPORT_MD = "shadow.md"
# verdicts as the review queue records them; a verdict says what the answer it judged was
VERDICTS = ANSWER_VERDICTS


class ShadowError(ValueError):
    """A shadow run or a promotion cannot go on; the message says why."""


class ShadowBounds(BaseModel):
    """What a shadow report must stay within for its candidate to be promoted."""

    model_config = ConfigDict(extra="forbid")

    max_worse: int = Field(0, ge=0, description="Answers a human verdict says got worse.")
    max_lost_answers: float = Field(
        0.05, ge=0, le=1, description="Share of questions answered before and not by the candidate."
    )
    max_new_unsupported_claims: int = Field(
        0, ge=0, description="Claims the candidate emits that its own check found unsupported."
    )


# ---------------------------------------------------------------- reading a recorded run


def latest_run(runs_dir: Path) -> str:
    """The most recently written run folder directly under runs_dir (not shadow/inbox/...)."""
    found = sorted(
        (p.stat().st_mtime, p.parent.name)
        for p in runs_dir.glob("*/summary.json")
        if not p.parent.name.startswith(".")
    )
    if not found:
        raise ShadowError(f"no run in {runs_dir}: run `grounding run` first, or pass --run")
    return found[-1][1]


def load_run(runs_dir: Path, run_id: str) -> dict[str, Any]:
    folder = runs_dir / run_id
    if not (folder / "summary.json").is_file():
        raise ShadowError(f"run {run_id!r} not found in {runs_dir}")
    return {
        "run_id": run_id,
        "folder": folder,
        "summary": json.loads((folder / "summary.json").read_text()),
        "answers": pq.read_table(folder / "answers.parquet").to_pylist(),
        "reports": pq.read_table(folder / "reports.parquet").to_pylist(),
    }


def run_questions(store, summary: dict):
    """The exact questions table the run answered (its `questions` source artifact)."""
    key = summary["stages"].get("questions", {}).get("key")
    ref = store.lookup("questions", key) if key else None
    if ref is None:
        raise ShadowError(
            "the run's questions are no longer in the store (collected as garbage?): "
            "run `grounding run` again and shadow that run"
        )
    return store.read_table(ref, "questions")


def load_verdicts(
    store_root: Path | str, extra: Path | None = None, run_id: str | None = None
) -> dict[str, str]:
    """Human verdicts by question id: the review queue's verdicts on answers of `run_id` (each
    reviewer's latest, `quality.review`), any `verdicts*.parquet` under `reviews/` or `verdicts/`
    in the store, and an optional file (Parquet, CSV or JSONL with columns question_id and
    verdict). Several reviewers: the most common verdict; a tie is left out (disputed)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.json as pjson

    root = Path(store_root)
    files = []
    if not str(store_root).startswith(("s3://", "gs://", "az://", "memory://")):
        for folder in ("reviews", "verdicts"):
            files += sorted((root / folder).rglob("verdicts*.parquet"))
    if extra:
        files.append(Path(extra))
    votes: dict[str, Counter] = {}
    if run_id and not str(store_root).startswith(("s3://", "gs://", "az://", "memory://")):
        for reviewer_file in sorted((root / REVIEW_VERDICTS).glob("*/*.jsonl")):
            latest: dict[str, str] = {}
            for line in reviewer_file.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a torn last line of a killed write
                answer_id = str(record.get("answer_id") or "") if isinstance(record, dict) else ""
                if answer_id.startswith(f"{run_id}/") and record.get("verdict") in VERDICTS:
                    latest[answer_id.split("/", 1)[1]] = record["verdict"]
            for question_id, verdict in latest.items():
                votes.setdefault(question_id, Counter())[verdict] += 1
    for path in files:
        if path.suffix == ".csv":
            table = pcsv.read_csv(path)
        elif path.suffix in (".jsonl", ".json"):
            table = pjson.read_json(path)
        else:
            table = pq.read_table(path)
        if not {"question_id", "verdict"} <= set(table.column_names):
            raise ShadowError(f"{path}: verdicts need the columns question_id and verdict")
        table = table.select(["question_id", "verdict"]).cast(
            pa.schema([("question_id", pa.string()), ("verdict", pa.string())])
        )
        for row in table.to_pylist():
            verdict = (row["verdict"] or "").strip().lower().replace(" ", "_")
            if row["question_id"] and verdict in VERDICTS:
                votes.setdefault(row["question_id"], Counter())[verdict] += 1
    decided = {}
    for question_id, counter in votes.items():
        (top, n), *rest = counter.most_common()
        if not rest or rest[0][1] < n:
            decided[question_id] = top
    return decided


# ---------------------------------------------------------------- comparing two runs


def _citations(answer: dict) -> list[tuple]:
    return sorted(
        (c["doc_id"], c["char_start"], c["char_end"]) for c in answer.get("citations") or []
    )


def _emitted_claims(answer: dict, report: dict | None) -> dict[str, dict]:
    """The claims a person reads: those of an answer that was emitted."""
    if answer["status"] != "answered" or not report:
        return {}
    return {c["text"]: c for c in report.get("claims") or [] if c.get("status") != "not_a_claim"}


def verdict_change(verdict: str | None, before: str, after: str) -> str | None:
    """Whether the candidate's answer is better or worse, given the human verdict on the
    baseline's answer; None when the verdict does not say (no verdict, or nothing it judged
    changed)."""
    if verdict is None or before == after:
        return None
    answered, answers_now = before == "answered", after == "answered"
    if answered and not answers_now:  # the candidate withholds what the baseline said
        if verdict == "correct":
            return "worse"
        if verdict in ("hallucinated", "should_have_refused"):
            return "better"
    if not answered and answers_now:  # the candidate answers what the baseline refused
        if verdict == "wrongly_refused":
            return "better"  # whether the new answer is right needs a verdict of its own
        if verdict in ("correct", "should_have_refused"):
            return "worse"
    return None


def compare_runs(
    base: dict[str, Any], candidate: dict[str, Any], verdicts: dict[str, str]
) -> dict[str, Any]:
    """Per question of the baseline run: status transitions, changed text or citations, claims
    newly emitted or withheld, and what the human verdicts say of the change."""
    cand_answers = {a["question_id"]: a for a in candidate["answers"]}
    base_reports = {r["question_id"]: r for r in base["reports"]}
    cand_reports = {r["question_id"]: r for r in candidate["reports"]}
    matrix = {b: dict.fromkeys(STATUSES, 0) for b in STATUSES}
    changed, newly_emitted, newly_withheld, judged = [], [], [], []
    for before in base["answers"]:
        qid = before["question_id"]
        after = cand_answers.get(qid)
        if after is None:
            continue
        matrix.setdefault(before["status"], {}).setdefault(after["status"], 0)
        matrix[before["status"]][after["status"]] += 1
        text_changed = (before["answer"] or "") != (after["answer"] or "")
        cites_changed = _citations(before) != _citations(after)
        if text_changed or cites_changed or before["status"] != after["status"]:
            changed.append(
                {
                    "question_id": qid,
                    "question": before["question"],
                    "before": before["status"],
                    "after": after["status"],
                    "text_changed": text_changed,
                    "citations_changed": cites_changed,
                    "answer_before": before["answer"],
                    "answer_after": after["answer"],
                }
            )
        old = _emitted_claims(before, base_reports.get(qid))
        new = _emitted_claims(after, cand_reports.get(qid))
        for text in sorted(set(new) - set(old)):
            claim = new[text]
            newly_emitted.append(
                {
                    "question_id": qid,
                    "claim": text,
                    "status": claim["status"],
                    "score": claim["score"],
                }
            )
        for text in sorted(set(old) - set(new)):
            claim = old[text]
            newly_withheld.append(
                {
                    "question_id": qid,
                    "claim": text,
                    "status": claim["status"],
                    "score": claim["score"],
                }
            )
        verdict = verdicts.get(qid)
        change = verdict_change(verdict, before["status"], after["status"])
        if change:
            judged.append(
                {
                    "question_id": qid,
                    "verdict": verdict,
                    "before": before["status"],
                    "after": after["status"],
                    "change": change,
                }
            )
    questions = len(base["answers"])
    lost = sum(n for s, n in matrix.get("answered", {}).items() if s != "answered")
    return {
        "questions": questions,
        "transitions": matrix,
        "lost_answers": lost,
        "gained_answers": sum(
            row.get("answered", 0) for status, row in matrix.items() if status != "answered"
        ),
        "changed": changed,
        "newly_emitted_claims": newly_emitted,
        "newly_withheld_claims": newly_withheld,
        "new_unsupported_claims": [c for c in newly_emitted if c["status"] == "unsupported"],
        "verdicts": len([q for q in verdicts if q in cand_answers]),
        "judged": judged,
        "worse": sum(1 for j in judged if j["change"] == "worse"),
        "better": sum(1 for j in judged if j["change"] == "better"),
    }


def bound_checks(comparison: dict, bounds: ShadowBounds, evals: dict | None) -> list[dict]:
    """Each bound the report states, its value and whether it holds."""
    questions = comparison["questions"] or 1
    lost_share = comparison["lost_answers"] / questions
    checks = [
        {"bound": "max_worse", "limit": bounds.max_worse, "value": comparison["worse"]},
        {"bound": "max_lost_answers", "limit": bounds.max_lost_answers, "value": lost_share},
        {
            "bound": "max_new_unsupported_claims",
            "limit": bounds.max_new_unsupported_claims,
            "value": len(comparison["new_unsupported_claims"]),
        },
    ]
    for check in checks:
        check["ok"] = check["value"] <= check["limit"] + 1e-12
    for name, outcome in (evals or {}).items():
        passed = bool(outcome.get("candidate_passed"))
        checks.append(
            {"bound": f"release gate {name}", "limit": "pass", "value": passed, "ok": passed}
        )
    return checks


# ---------------------------------------------------------------- running a shadow


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # not `.tmp-`: `artifacts gc` takes store entries named so for folders to remove
    tmp = path.with_name(f".writing-{path.name}")
    tmp.write_text(text)
    os.replace(tmp, path)


def shadow_run(
    settings,
    candidate,
    candidate_path: Path,
    current_path: Path,
    run_id: str | None = None,
    bounds: ShadowBounds | None = None,
    verdicts_file: Path | None = None,
    eval_sets: Callable[[], dict] | None = None,
) -> dict[str, Any]:
    """Replay `run_id` (default: the latest run) with the `candidate` config on the same store;
    write the candidate's run and the report to `<runs_dir>/shadow/<id>/` and return the report.
    `eval_sets`, when given, evaluates the frozen eval sets for both configs (expensive)."""
    from flows.executor import run_stages
    from flows.runs import summarize, write_run

    bounds = bounds or ShadowBounds()
    run_id = run_id or latest_run(settings.runs_dir)
    base = load_run(settings.runs_dir, run_id)
    store = settings.artifact_store()
    questions = run_questions(store, base["summary"])
    # same caches and the same corpus as the current config: only the candidate's settings differ
    candidate.store, candidate.store_options = settings.store, settings.store_options
    candidate.runs_dir, candidate.corpus = settings.runs_dir, settings.corpus
    started = dt.datetime.now(dt.UTC)
    result = run_stages(candidate, questions)
    seconds = (dt.datetime.now(dt.UTC) - started).total_seconds()
    digest = file_digest(candidate_path)
    shadow_id = f"{started.strftime('%Y%m%dT%H%M%S%f')}-{digest[:8]}"
    summary = summarize(result, store, seconds)
    folder = write_run(
        settings.runs_dir / SHADOW_FOLDER, shadow_id, result, store, summary, ledger=False
    )
    shadow = load_run(settings.runs_dir / SHADOW_FOLDER, shadow_id)
    comparison = compare_runs(base, shadow, load_verdicts(settings.store, verdicts_file, run_id))
    evals = eval_sets() if eval_sets else None
    checks = bound_checks(comparison, bounds, evals)
    base_corpus = base["summary"]["stages"].get("corpus", {}).get("key")
    report = {
        "shadow_id": shadow_id,
        "created_at": started.isoformat(timespec="seconds"),
        "baseline_run": run_id,
        "shadow_run": str(folder),
        "current_config": {"path": str(current_path), "sha256": file_digest(current_path)},
        "candidate_config": {"path": str(candidate_path), "sha256": digest},
        "same_corpus": base_corpus == result.refs["corpus"].key,
        "bounds": bounds.model_dump(),
        "bound_checks": checks,
        "within_bounds": all(c["ok"] for c in checks),
        "eval_sets": evals,
        **comparison,
    }
    _write_atomic(folder / REPORT_JSON, json.dumps(report, indent=2, default=str) + "\n")
    _write_atomic(folder / REPORT_MD, report_markdown(report))
    return report


def evaluate_sets(
    names: list[str], current_path: Path, candidate_path: Path, store: Path | str
) -> dict[str, dict]:
    """Each frozen eval set's axes for both configs, and the candidate's release gate verdict."""
    from flows.evaluation import release_eval

    out = {}
    for name in names:
        now = release_eval(name, current_path, {}, store, gate=False, reports_dir=None)
        new = release_eval(name, candidate_path, {}, store, gate=False, reports_dir=None)
        out[name] = {
            "current_axes": now.run.metrics["axes"],
            "candidate_axes": new.run.metrics["axes"],
            "current_passed": now.comparison["passed"],
            "candidate_passed": new.comparison["passed"],
            "candidate_failures": new.comparison["failures"],
        }
    return out


def frozen_sets(spec: str) -> list[str]:
    """`all` (every frozen set with a release baseline, detection sets aside) or a comma list."""
    from eval.detection_sets import is_detection_set
    from eval.frozen_sets import ROOT, SETS_DIR

    if spec != "all":
        names = [s.strip() for s in spec.split(",") if s.strip()]
        unknown = [n for n in names if not (SETS_DIR / n).is_dir()]
        if unknown:
            known = ", ".join(sorted(p.name for p in SETS_DIR.iterdir() if p.is_dir()))
            raise ShadowError(f"no frozen eval set {', '.join(unknown)}; known: {known}")
        return names
    return [
        folder.name
        for folder in sorted(SETS_DIR.iterdir())
        if (ROOT / "eval" / "baseline" / f"{folder.name}.json").is_file()
        and not is_detection_set(folder)
    ]


def report_markdown(report: dict) -> str:
    lines = [
        f"# Shadow run {report['shadow_id']}",
        "",
        f"Run {report['baseline_run']} replayed with {report['candidate_config']['path']} "
        f"(current: {report['current_config']['path']}); {report['questions']} questions.",
    ]
    if not report["same_corpus"]:
        lines.append("The corpus changed since that run: some differences may come from it.")
    lines += ["", "## Status transitions (rows: current, columns: candidate)", ""]
    lines.append("| current \\ candidate | " + " | ".join(STATUSES) + " |")
    lines.append("|---" * (len(STATUSES) + 1) + "|")
    for before, row in report["transitions"].items():
        lines.append(f"| {before} | " + " | ".join(str(row.get(s, 0)) for s in STATUSES) + " |")
    lines += [
        "",
        f"- answers changed (text, citations or status): {len(report['changed'])}",
        f"- claims newly emitted: {len(report['newly_emitted_claims'])} "
        f"({len(report['new_unsupported_claims'])} of them unsupported)",
        f"- claims newly withheld: {len(report['newly_withheld_claims'])}",
        f"- human verdicts on these questions: {report['verdicts']}; the candidate made "
        f"{report['worse']} worse and {report['better']} better",
        "",
        "## Bounds",
        "",
        "| bound | limit | value | ok |",
        "|---|---|---|---|",
    ]
    for check in report["bound_checks"]:
        value = check["value"]
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        lines.append(f"| {check['bound']} | {check['limit']} | {shown} | {check['ok']} |")
    verdict = "within its bounds" if report["within_bounds"] else "OUTSIDE its bounds"
    lines += ["", f"The candidate is {verdict}."]
    if report["changed"]:
        lines += ["", "## Changed answers", ""]
        for item in report["changed"][:50]:
            lines.append(
                f"- {item['question_id']} ({item['before']} -> {item['after']}): {item['question']}"
            )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- promotion


def find_report(runs_dir: Path, candidate_path: Path, report: Path | None = None) -> dict:
    """The given shadow report, else the newest one of exactly this candidate file's content."""
    if report:
        path = report / REPORT_JSON if report.is_dir() else report
        if not path.is_file():
            raise ShadowError(f"no shadow report at {path}")
        return json.loads(path.read_text())
    digest = file_digest(candidate_path)
    found = []
    for path in (runs_dir / SHADOW_FOLDER).glob(f"*/{REPORT_JSON}"):
        data = json.loads(path.read_text())
        if data["candidate_config"]["sha256"] == digest:
            found.append((data["created_at"], data["shadow_id"], data))
    if not found:
        raise ShadowError(
            f"no shadow run of {candidate_path} as it is now: run "
            f"`grounding shadow --candidate {candidate_path}` first"
        )
    return sorted(found, key=lambda f: f[:2])[-1][2]


def promote(
    settings,
    candidate_path: Path,
    gate: Callable[[Path], dict],
    report_path: Path | None = None,
) -> dict[str, Any]:
    """Record the promotion of `candidate_path` when its shadow report is within its bounds and
    the release gate passes (`gate(candidate_path)` -> {set: {"passed", "report", "failures"}});
    raise ShadowError saying why not otherwise. Nothing is written unless both hold."""
    report = find_report(settings.runs_dir, candidate_path, report_path)
    if report["candidate_config"]["sha256"] != file_digest(candidate_path):
        raise ShadowError(f"{candidate_path} changed since its shadow run: shadow it again")
    if not report["within_bounds"]:
        broken = [c["bound"] for c in report["bound_checks"] if not c["ok"]]
        raise ShadowError(
            f"shadow run {report['shadow_id']} is outside its bounds: {', '.join(broken)}"
        )
    gates = {
        name: {"passed": bool(e["candidate_passed"]), "from": "shadow report"}
        for name, e in (report.get("eval_sets") or {}).items()
    } or gate(candidate_path)
    failed = [name for name, outcome in gates.items() if not outcome["passed"]]
    if failed:
        raise ShadowError(f"release gate failed for the candidate on: {', '.join(failed)}")
    now = dt.datetime.now(dt.UTC)
    record = {
        "promoted_at": now.isoformat(timespec="seconds"),
        "candidate_config": report["candidate_config"],
        "current_config": report["current_config"],
        "runs": {"baseline": report["baseline_run"], "shadow": report["shadow_run"]},
        "reports": {
            "shadow": str(Path(report["shadow_run"]) / REPORT_JSON),
            "release_gate": gates,
        },
        "bound_checks": report["bound_checks"],
    }
    name = f"{now.strftime('%Y%m%dT%H%M%S')}-{report['candidate_config']['sha256'][:8]}.json"
    store = settings.artifact_store()
    text = json.dumps(record, indent=2, default=str) + "\n"
    if store.remote:
        store.fs.pipe_file(f"{store.base}/{PROMOTIONS_FOLDER}/{name}", text.encode())
        record["record"] = f"{store.url}/{PROMOTIONS_FOLDER}/{name}"
    else:
        path = Path(store.root) / PROMOTIONS_FOLDER / name
        _write_atomic(path, text)
        record["record"] = str(path)
    return record
