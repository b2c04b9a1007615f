"""How far can an answerability veto lift truthfulness? (what its targets need)

Truthfulness (+1 a right answer, 0 a refusal, -1 a wrong answer) can only rise above today's by
answering the questions whose answer is right and refusing the others. This bench measures the
room for that on each set, for the default path (`rerank.answerability.kind: none`) and for the
fast judge (configs/answerability-fast.yaml, when present):

1. every question is answered: both state thresholds are set to 0, so each question gets the
   answer its evidence would give, scored as `grounding eval` scores it (right: holds a gold
   answer);
2. the **ceiling** is a perfect veto over those answers: right answers / questions; and the
   **selection ceiling** is what a perfect choice among the evidence spans the pipeline packaged
   would add to it: answerable questions with a gold answer in any of their spans / questions;
3. the **AUC** of the confidence the pipeline records: how well it tells the right answers from
   the wrong ones (0.5 is chance);
4. the best truthfulness any single threshold on that confidence reaches. The threshold is
   chosen on the set itself (an oracle), so it is an upper bound, not a result;
5. what a better veto would reach: under the usual binormal model of a score, the best
   truthfulness over thresholds of a veto with AUC 0.84 (the best measured so far), 0.90, 0.95,
   0.98 and 0.99 on the same right / wrong counts, and the AUC a veto needs for the issue's
   target (0.30 on squad2-dev-v1, 0.75 on sample-v1), or that no veto reaches it.

Sets: squad2-dev-v1, cross-topic-v1 and sample-v1 (frozen), and the answerability calibration
split when scripts/fit_answerability.py has built it (.cache/answerability-fit/squad2-calibration:
SQuAD dev articles no model trains on). Nothing here is fitted or chosen for a later run.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

from bench import common
from bench.paraphrase import auc

NAME = "veto_ceiling"
DESCRIPTION = "answer everything, then: perfect-veto truthfulness, confidence AUC, AUC needed"
SETS = ("squad2-dev-v1", "cross-topic-v1", "sample-v1")
CALIBRATION_SET = common.ROOT / ".cache" / "answerability-fit" / "squad2-calibration"
FAST_CONFIG = common.ROOT / "configs" / "answerability-fast.yaml"
VETO_AUCS = (0.84, 0.90, 0.95, 0.98, 0.99)
# the truthfulness targets; the calibration split is held to squad2-dev-v1's (same kind
# of data). cross-topic-v1 has none (its targets are refusal rates).
TARGETS = {"squad2-dev-v1": 0.30, "squad2-calibration": 0.30, "sample-v1": 0.75}


def binormal_best(veto_auc: float, right: int, wrong: int, questions: int) -> float:
    """The best truthfulness over thresholds of a veto whose scores are normal with unit
    variance, right answers shifted by d' = sqrt(2) * Phi^-1(AUC) from wrong ones."""
    normal = NormalDist()
    shift = math.sqrt(2) * normal.inv_cdf(veto_auc)
    best = 0.0
    for step in range(2001):
        t = -4 + step * 0.005
        kept_right = normal.cdf(shift - t) * right
        kept_wrong = normal.cdf(-t) * wrong
        best = max(best, (kept_right - kept_wrong) / questions)
    return best


def auc_needed(target: float, right: int, wrong: int, questions: int) -> float | None:
    """The smallest veto AUC (binormal) whose best truthfulness reaches `target`; None when
    even a perfect veto does not."""
    if right / questions < target:
        return None
    low, high = 0.5, 0.99999
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (
            (middle, high)
            if binormal_best(middle, right, wrong, questions) < target
            else (low, middle)
        )
    return round(high, 4)


def oracle_threshold(rows: list[dict]) -> tuple[float, float | None]:
    """(best truthfulness, its threshold) over thresholds on the answers' confidence, the
    questions without a confidence always answered (the set's own oracle: an upper bound)."""
    answered = [r for r in rows if r["status"] == "answered"]
    questions = max(len(rows), 1)
    best = (sum(1 if r["correct"] else -1 for r in answered) / questions, None)
    for t in sorted({r["confidence"] for r in answered if r["confidence"] is not None}):
        kept = [r for r in answered if r["confidence"] is None or r["confidence"] >= t]
        score = sum(1 if r["correct"] else -1 for r in kept) / questions
        if score > best[0]:
            best = (score, t)
    return round(best[0], 4), best[1]


def span_texts(row: dict) -> list[str]:
    """The packaged evidence spans of an eval row ("[E1] doc-id (place): text" -> text)."""
    return [entry.split(": ", 1)[-1] for entry in row.get("evidence") or []]


def any_span_holds_gold(row: dict) -> bool:
    from eval.metrics import contains_gold

    golds = list(row.get("gold_answers") or [])
    return row["expected_behavior"] == "answer" and any(
        contains_gold(text, golds) for text in span_texts(row)
    )


def analyse(rows: list[dict], label: str, target: float | None = None) -> dict[str, Any]:
    questions = len(rows)
    answered = [r for r in rows if r["status"] == "answered"]
    right = [r for r in answered if r["correct"]]
    wrong = [r for r in answered if not r["correct"]]
    scored = [r for r in answered if r["confidence"] is not None]
    confidence_auc = auc([r["confidence"] for r in scored], [r["correct"] for r in scored])
    best, threshold = oracle_threshold(rows)
    n_right, n_wrong = len(right), len(wrong)
    return {
        "judge": label,
        "questions": questions,
        "answered": len(answered),
        "right": n_right,
        "wrong": n_wrong,
        "answer_everything_truthfulness": round((n_right - n_wrong) / max(questions, 1), 4),
        "perfect_veto_ceiling": round(n_right / max(questions, 1), 4),
        "gold_in_a_packaged_span": (in_spans := sum(any_span_holds_gold(r) for r in rows)),
        "selection_ceiling": round(in_spans / max(questions, 1), 4),
        "confidence_auc_right_vs_wrong": confidence_auc,
        "oracle_threshold_truthfulness": best,
        "oracle_threshold": threshold,
        "binormal_best_truthfulness": {
            str(a): round(binormal_best(a, n_right, n_wrong, max(questions, 1)), 4)
            for a in VETO_AUCS
        },
        "target_truthfulness": target,
        "target_within_ceiling": None if target is None else n_right / max(questions, 1) >= target,
        "auc_needed_for_target": None
        if target is None
        else auc_needed(target, n_right, n_wrong, max(questions, 1)),
    }


def answer_everything(set_dir: Path | str, store: Path, overrides: dict[str, Any]) -> list[dict]:
    from flows.evaluation import evaluate

    run = evaluate(
        set_dir,
        overrides={**overrides, "rerank.low_threshold": 0.0, "rerank.high_threshold": 0.0},
        store=store,
    )
    return run.per_question


def judges() -> dict[str, dict[str, Any]]:
    found = {"none": {"rerank.answerability.kind": "none"}}
    if FAST_CONFIG.is_file():
        from bench.answerability import fast_overrides

        found["fast"] = fast_overrides(FAST_CONFIG)
    return found


def run(results_dir: Path | None = None, sets: tuple[str, ...] = SETS, **_: Any) -> dict[str, Any]:
    started = time.perf_counter()
    names: list[str | Path] = list(sets)
    if CALIBRATION_SET.is_dir():
        names.append(CALIBRATION_SET)
    per_set = []
    with tempfile.TemporaryDirectory(prefix="bench-veto-ceiling-") as tmp:
        store = Path(tmp) / "store"
        for name in names:
            label = Path(name).name
            entry = {"set": label, "judges": []}
            for judge, overrides in judges().items():
                rows = answer_everything(name, store, overrides)
                entry["judges"].append(analyse(rows, judge, TARGETS.get(label)))
            per_set.append(entry)
    payload = {
        "status": "ok",
        "sets": per_set,
        "veto_aucs": list(VETO_AUCS),
        "targets": TARGETS,
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    header = (
        "| set | judge | right / wrong (all answered) | perfect-veto ceiling | selection ceiling | "
        "confidence AUC | "
        "oracle threshold | veto AUC 0.84 / 0.90 / 0.99 | target: AUC needed |"
    )
    lines = [header, "|---|---|---|---:|---:|---:|---:|---|---:|"]
    for entry in result["sets"]:
        for j in entry["judges"]:
            best = j["binormal_best_truthfulness"]
            veto = " / ".join(f"{best[k]:.3f}" for k in ("0.84", "0.9", "0.99") if k in best)
            needed = _needed(j)
            lines.append(
                f"| {entry['set']} | {j['judge']} | {j['right']} / {j['wrong']} | "
                f"{j['perfect_veto_ceiling']:.3f} | {j['selection_ceiling']:.3f} | "
                f"{j['confidence_auc_right_vs_wrong']} | "
                f"{j['oracle_threshold_truthfulness']:.3f} | {veto} | {needed} |"
            )
    return "\n".join(lines)


def _needed(figures: dict[str, Any]) -> str:
    target = figures.get("target_truthfulness")
    if target is None:
        return "–"
    if not figures["target_within_ceiling"]:
        return f"{target}: above the ceiling"
    return f"{target}: {figures['auc_needed_for_target']}"
