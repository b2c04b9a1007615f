"""The gate's lines refitted on human verdicts, cross-validated by question, as an overlay config.

What is refitted (stages.guardrails.Config): the floor_mean answer line `answer_threshold`, the
claim floor `claim_floor`, the word-share weight `lexical_weight`, and the fast judge's accept
line `fast_judge.accept` when the verdicts' claims carry both the fast judge's P and the slow
judge's (otherwise it is kept, and the report says why).

The gate is replayed from each reviewed draft's claims, never re-run: a claim the checks decided
(verbatim, a failed figure, the pre-filter) keeps its score; a judged claim's support is
recomputed from its judge P(yes) and word share, min(1, (p + w * share) / (judge_threshold *
(1 + w))), where p is the claim's recorded `p` or, failing that, recovered from its score under
the base config (exact below the cap; at the cap, the least p that reaches it). Answer-level
causes beside the claim scores (an invented citation, a copied answer that does not answer) are
outside the replay.

A draft is bad when its verdict is hallucinated or should_have_refused (quality.efficacy). The
objective is the response-level F1 of flagging bad drafts (flagged: the gate did not emit),
optionally among the settings that flag at most a given share of the good ones (F1 depends on
the share of bad drafts, which a team's own traffic may not share with its review sample).
Folds group answers by question (the question's text, normalised), so no question is both fitted
and scored; the figures reported are out-of-fold. The final lines are fitted on every verdict.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from quality import efficacy

MIN_DRAFTS = 40  # judged drafts (pre-guardrail answers with claims)
MIN_PER_CLASS = 8  # of each of bad and good: every fold then sees both
FOLDS = 5
LINES = tuple(round(0.3 + 0.025 * i, 3) for i in range(27))  # 0.3 ... 0.95
FLOORS = tuple(round(0.05 * i, 2) for i in range(20))  # 0.0 ... 0.95
WEIGHTS = (0.0, 0.25, 0.5, 1.0)
ACCEPTS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # 0.5 ... 0.95
JUDGED = ("fast", "llm", "nli")


class CalibrationError(ValueError):
    """Too few verdicts, or none usable; the message says how many more are needed."""


def group_of(question: str) -> str:
    return re.sub(r"\W+", " ", (question or "").lower()).strip()


def fold_of(group: str, folds: int = FOLDS) -> int:
    return int(hashlib.sha256(group.encode()).hexdigest(), 16) % folds


def _recovered_p(claim: dict, base: Any) -> float | None:
    if claim.get("p") is not None:
        return float(claim["p"])
    score, share = claim.get("score"), claim.get("lexical") or 0.0
    if score is None:
        return None
    w, threshold = base.lexical_weight, base.judge_threshold
    return max(0.0, min(1.0, score * threshold * (1 + w) - w * share))


def examples(items: list[dict], labels: dict[str, str], base: Any) -> list[dict]:
    """The judged drafts the replay can use: [{answer_id, group, bad, claims}]; each claim
    {fixed | p, fast_p, slow_p, share, critical}."""
    out = []
    for item in items:
        verdict = labels.get(item["answer_id"])
        bad = efficacy.is_bad(item["stratum"], verdict) if verdict else None
        if bad is None:
            continue
        claims = []
        for claim in json.loads(item["claims_json"] or "[]"):
            if claim.get("status") == "not_a_claim" or claim.get("score") is None:
                continue
            row = {"critical": bool(claim.get("critical")), "share": claim.get("lexical") or 0.0}
            if claim.get("judge") in JUDGED:
                row["p"] = _recovered_p(claim, base)
                row["fast_p"], row["slow_p"] = claim.get("fast_p"), claim.get("slow_p")
            else:
                row["fixed"] = float(claim["score"])
            claims.append(row)
        if claims:
            out.append(
                {
                    "answer_id": item["answer_id"],
                    "group": group_of(item["question"]),
                    "bad": bad,
                    "verdict": verdict,
                    "claims": claims,
                }
            )
    return out


def has_judge_pairs(rows: list[dict]) -> bool:
    return any(
        c.get("fast_p") is not None and c.get("slow_p") is not None
        for r in rows
        for c in r["claims"]
    )


def _support(claim: dict, weight: float, accept: float | None, base: Any) -> float:
    if "fixed" in claim:
        return claim["fixed"]
    p = claim["p"]
    if accept is not None and claim.get("fast_p") is not None and claim.get("slow_p") is not None:
        min_share = base.fast_judge.accept_min_share if base.fast_judge else 0.0
        accepted = claim["fast_p"] >= accept and claim["share"] >= min_share
        p = claim["fast_p"] if accepted else claim["slow_p"]
    if p is None:
        return 0.0
    return min(1.0, (p + weight * claim["share"]) / (base.judge_threshold * (1 + weight)))


def _answer_arrays(rows: list[dict], weight: float, accept: float | None, base: Any):
    """Per answer: its lowest claim support, its weighted mean and whether floor_mean decides it."""
    lowest, mean, long_answer = [], [], []
    for row in rows:
        scores = [_support(c, weight, accept, base) for c in row["claims"]]
        weights = [base.critical_weight if c["critical"] else 1.0 for c in row["claims"]]
        lowest.append(min(scores))
        mean.append(sum(w * s for w, s in zip(weights, scores, strict=True)) / sum(weights))
        long_answer.append(
            base.aggregate == "floor_mean" and len(scores) >= base.long_answer_claims
        )
    return np.array(lowest), np.array(mean), np.array(long_answer)


def flagged_grid(rows: list[dict], weight: float, accept: float | None, base: Any) -> np.ndarray:
    """flagged[floor, line, answer] for every claim floor and answer line of the grid."""
    lowest, mean, long_answer = _answer_arrays(rows, weight, accept, base)
    floors = np.array(FLOORS)[:, None]
    aggregate = np.where(lowest[None, :] < floors, lowest[None, :], mean[None, :])  # (F, N)
    long_flag = aggregate[:, None, :] < np.array(LINES)[None, :, None]  # (F, L, N)
    short_flag = lowest < base.emit_threshold  # the min gate of one-claim answers
    return np.where(long_answer[None, None, :], long_flag, short_flag[None, None, :])


def flagged_one(rows: list[dict], settings: dict, base: Any) -> np.ndarray:
    lowest, mean, long_answer = _answer_arrays(
        rows, settings["lexical_weight"], settings.get("accept"), base
    )
    aggregate = np.where(lowest < settings["claim_floor"], lowest, mean)
    return np.where(
        long_answer, aggregate < settings["answer_threshold"], lowest < base.emit_threshold
    )


def scores(flagged: np.ndarray, bad: np.ndarray) -> dict[str, Any]:
    """Response-level figures of flagging bad drafts, with Wilson intervals on the rates."""
    tp = int(np.sum(flagged & bad))
    fp = int(np.sum(flagged & ~bad))
    fn = int(np.sum(~flagged & bad))
    n_bad, n_good = int(bad.sum()), int((~bad).sum())
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / n_bad if n_bad else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "answers": int(bad.size),
        "bad": n_bad,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "recall_ci": efficacy.wilson(tp, n_bad) if n_bad else None,
        "f1": round(f1, 4),
        "correct_flagged": round(fp / n_good, 4) if n_good else None,
        "correct_flagged_ci": efficacy.wilson(fp, n_good) if n_good else None,
        "missed": fn,
    }


def _f1(flagged: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """F1 over the last axis, for every leading index."""
    tp = np.sum(flagged & bad, axis=-1)
    fp = np.sum(flagged & ~bad, axis=-1)
    fn = np.sum(~flagged & bad, axis=-1)
    return np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)


def fit(
    rows: list[dict], base: Any, fit_accept: bool, max_correct_flagged: float | None = None
) -> dict[str, Any]:
    """The best (answer line, claim floor, weight, accept) on `rows` by F1, among the settings
    that flag at most `max_correct_flagged` of the good drafts when given; ties go to the
    setting nearest the base config's."""
    bad = np.array([r["bad"] for r in rows])
    n_good = max(int((~bad).sum()), 1)
    accepts: tuple[float | None, ...] = ACCEPTS if fit_accept else (None,)
    current = {
        "answer_threshold": base.answer_threshold or base.emit_threshold,
        "claim_floor": base.claim_floor,
        "lexical_weight": base.lexical_weight,
        "accept": base.fast_judge.accept if base.fast_judge else None,
    }
    best: tuple | None = None
    for weight in WEIGHTS:
        for accept in accepts:
            grid = flagged_grid(rows, weight, accept, base)
            f1 = _f1(grid, bad)  # (F, L)
            if max_correct_flagged is not None:
                good_flagged = np.sum(grid & ~bad, axis=-1) / n_good
                f1 = np.where(good_flagged <= max_correct_flagged + 1e-12, f1, -1.0)
            if f1.max() < 0:
                continue
            for fi, li in zip(*np.nonzero(f1 >= f1.max() - 1e-12), strict=True):
                distance = (
                    abs(LINES[li] - current["answer_threshold"])
                    + abs(FLOORS[fi] - current["claim_floor"])
                    + abs(weight - current["lexical_weight"])
                    + (abs(accept - current["accept"]) if accept and current["accept"] else 0)
                )
                key = (-float(f1[fi, li]), round(distance, 6))
                if best is None or key < best[0]:
                    best = (key, LINES[li], FLOORS[fi], weight, accept)
    if best is None:
        raise CalibrationError(
            f"no setting of the grid flags at most {max_correct_flagged} of the good drafts"
        )
    _, line, floor, weight, accept = best
    return {
        "answer_threshold": line,
        "claim_floor": floor,
        "lexical_weight": weight,
        "accept": accept,
        "fit_f1": -best[0][0],
    }


def base_settings(base: Any) -> dict[str, Any]:
    return {
        "answer_threshold": base.answer_threshold or base.emit_threshold,
        "claim_floor": base.claim_floor,
        "lexical_weight": base.lexical_weight,
        "accept": base.fast_judge.accept if base.fast_judge else None,
    }


def needed(rows: list[dict]) -> str | None:
    """None when there are enough verdicts; else what is missing, in one sentence."""
    n_bad = sum(r["bad"] for r in rows)
    n_good = len(rows) - n_bad
    more_bad, more_good = max(0, MIN_PER_CLASS - n_bad), max(0, MIN_PER_CLASS - n_good)
    more = max(MIN_DRAFTS - len(rows), more_bad + more_good)
    if more <= 0:
        return None
    return (
        f"calibration needs at least {MIN_DRAFTS} judged drafts with claims, {MIN_PER_CLASS} of "
        f"them bad and {MIN_PER_CLASS} good; there are {len(rows)} ({n_bad} bad, {n_good} good): "
        f"judge at least {more} more (of them at least {more_bad} bad and {more_good} good)"
    )


def calibrate(
    items: list[dict],
    labels: dict[str, str],
    base: Any,
    folds: int = FOLDS,
    max_correct_flagged: float | None = None,
) -> dict:
    """The fit and its out-of-fold figures beside the base config's, or CalibrationError."""
    rows = examples(items, labels, base)
    if message := needed(rows):
        raise CalibrationError(message)
    pairs = has_judge_pairs(rows)
    bad = np.array([r["bad"] for r in rows])
    fold = np.array([fold_of(r["group"], folds) for r in rows])
    out_of_fold = np.zeros(len(rows), dtype=bool)
    per_fold = []
    for k in range(folds):
        test = fold == k
        if not test.any():
            continue
        train = [r for r, t in zip(rows, test, strict=True) if not t]
        if not any(r["bad"] for r in train) or all(r["bad"] for r in train):
            raise CalibrationError(f"fold {k} leaves one class out of its training answers")
        chosen = fit(train, base, pairs, max_correct_flagged)
        held = [r for r, t in zip(rows, test, strict=True) if t]
        out_of_fold[test] = flagged_one(held, chosen, base)
        per_fold.append({"fold": k, "answers": int(test.sum()), **chosen})
    before = flagged_one(rows, base_settings(base), base)
    final = fit(rows, base, pairs, max_correct_flagged)
    return {
        "drafts": len(rows),
        "bad": int(bad.sum()),
        "questions": len({r["group"] for r in rows}),
        "folds": folds,
        "objective": "F1 of flagging bad drafts"
        + (
            f", at most {max_correct_flagged} of the good ones flagged"
            if max_correct_flagged is not None
            else ""
        ),
        "fitted": final,
        "base": base_settings(base),
        "accept_refitted": pairs,
        "accept_note": None
        if pairs
        else "fast_judge.accept kept: no verdict's claims carry both the fast and the slow "
        "judge's P, so no other accept line can be replayed",
        "cross_validated": {
            "base": scores(before, bad),
            "fitted": scores(out_of_fold, bad),
        },
        "in_sample": {"fitted": scores(flagged_one(rows, final, base), bad)},
        "per_fold": per_fold,
        "verdicts": [
            {"answer_id": r["answer_id"], "verdict": r["verdict"], "bad": r["bad"]} for r in rows
        ],
    }


def overlay(result: dict, base: Any) -> dict[str, Any]:
    """The guardrails keys to include over the base config."""
    fitted = result["fitted"]
    keys: dict[str, Any] = {
        "aggregate": "floor_mean",
        "answer_threshold": fitted["answer_threshold"],
        "claim_floor": fitted["claim_floor"],
        "lexical_weight": fitted["lexical_weight"],
    }
    if result["accept_refitted"] and base.fast_judge is not None:
        # includes merge a section's keys shallowly: the whole fast_judge block is written
        keys["fast_judge"] = {**base.fast_judge.model_dump(), "accept": fitted["accept"]}
    return keys


def _figures_line(name: str, figures: dict) -> str:
    return (
        f"# {name}: F1 {figures['f1']:.3f}, precision {figures['precision']:.3f}, recall "
        f"{figures['recall']:.3f}, correct flagged {figures['correct_flagged']}"
    )


def write_overlay(path: Path, result: dict, base: Any, sources: dict[str, Any]) -> Path:
    """`path` (YAML: the keys, the fit's figures in comments) and `path`.json (everything: the
    figures, every fold's choice, the verdicts used); both written atomically."""
    import yaml

    cv = result["cross_validated"]
    header = [
        "# Guardrails overlay written by `grounding calibrate --from-reviews` "
        f"({dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}).",
        "# Include it after the guardrails files (stages.guardrails.include in the pipeline",
        "# config) or pass its keys with --set guardrails.KEY=VALUE.",
        f"# Fitted on {result['drafts']} judged drafts ({result['bad']} bad) of "
        f"{result['questions']} questions; {result['folds']}-fold cross-validation grouped by "
        "question, out-of-fold figures (the gate replayed from the claims):",
        f"# objective: {result['objective']}",
        _figures_line("base config", cv["base"]),
        _figures_line("this overlay", cv["fitted"]),
        f"# Sources: {json.dumps(sources, default=str)}",
        f"# Every figure, fold and verdict used: {path.name}.json",
    ]
    if result["accept_note"]:
        header.append(f"# {result['accept_note']}")
    body = yaml.safe_dump(overlay(result, base), sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, "\n".join(header) + "\n" + body)
    sidecar = path.with_name(path.name + ".json")
    _atomic_write(sidecar, json.dumps({"sources": sources, **result}, indent=1, default=str))
    return path


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
