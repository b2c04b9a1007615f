"""What claim judge do the targets need? (RAGTruth QA, the checker's own claims)

The guardrails flag an answer when its weakest claim scores under a line (floor_mean with
claim_floor >= answer_threshold). Most claims of an LLM's answer get their score from the judge;
the others from the deterministic checks (a figure or name the evidence lacks: 0), a verbatim
match (1) or the word-share pre-filter. This bench keeps everything but the judge, and asks what
the answer-level figures would be with a better one:

1. `python -m bench.ragtruth` runs the configured checker over each split (judge verdicts
   cached), and its claim rows are read back; a claim is unsupported when more than 0.3 of it
   overlaps a labelled hallucinated span (the rule of the bench's claim AUC);
2. the judged claims' scores are replaced by a **binormal judge** of claim-level AUC a: scores
   normal with unit variance, supported claims shifted by d' = sqrt(2) * Phi^-1(a) (a = 1: every
   unsupported claim under every supported one); 200 draws per AUC;
3. per draw, the line is chosen on the same answers (an oracle, so an upper bound, not a result):
   the best response-level F1 with at least 0.80 of the hallucinated answers flagged; reported:
   the mean F1 and correct-answer flag rate at that line over the draws, and the smallest AUC
   whose mean reaches the issue's F1 0.70 with correct flagged <= 0.15;
4. for reference the configured judge's own claim AUC on the same claims, and the oracle line
   over its real scores.

A = 1 is the ceiling of the claim split and checks as they are: hallucinated answers whose
labelled span no judged claim covers, and correct answers a deterministic check fails, stay
where they are whatever the judge. Nothing here is fitted or chosen for a later run.
"""

from __future__ import annotations

import collections
import json
import math
import tempfile
import time
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
from scipy.special import ndtr

from bench import common
from bench.paraphrase import auc

NAME = "judge_ceiling"
DESCRIPTION = "RAGTruth QA: the claim-judge AUC that F1 0.70 at 0.15 correct flagged needs"
AUCS = (0.82, 0.85, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98, 1.0)
FINE_AUCS = tuple(round(0.8 + 0.005 * i, 3) for i in range(41))  # 0.80 … 1.00
LINES = np.round(np.arange(0.01, 1.0, 0.01), 2)
MIN_RECALL = 0.8
TARGET_F1, TARGET_CORRECT_FLAGGED = 0.70, 0.15
UNSUPPORTED_OVERLAP = 0.3
DRAWS = 200


class Claims:
    """One split's scored claims, grouped by answer, as arrays."""

    def __init__(self, rows: list[dict]) -> None:
        by_answer: dict[str, list[dict]] = collections.defaultdict(list)
        for row in rows:
            by_answer[row["id"]].append(row)
        self.hallucinated = np.array(
            [claims[0]["response_hallucinated"] for claims in by_answer.values()], dtype=bool
        )
        answer, score, judged, unsupported = [], [], [], []
        for index, claims in enumerate(by_answer.values()):
            for c in claims:
                if c["score"] is None or c["status"] == "not_a_claim":
                    continue
                answer.append(index)
                score.append(float(c["score"]))
                judged.append(c["judge"] == "llm")
                unsupported.append((c["label_overlap"] or 0) > UNSUPPORTED_OVERLAP)
        self.answer = np.array(answer, dtype=int)
        self.score = np.array(score)
        self.judged = np.array(judged, dtype=bool)
        self.unsupported = np.array(unsupported, dtype=bool)

    def weakest(self, scores: np.ndarray) -> np.ndarray:
        """Each answer's weakest claim score (1 for an answer with no scored claim)."""
        out = np.ones(len(self.hallucinated))
        np.minimum.at(out, self.answer, scores)
        return out


def at_best_line(weakest: np.ndarray, hallucinated: np.ndarray) -> dict[str, float]:
    """F1, recall and correct flag rate at the line with the best F1 among those flagging at
    least MIN_RECALL of the hallucinated answers (an oracle line)."""
    flagged = weakest[:, None] < LINES[None, :]
    tp = (flagged & hallucinated[:, None]).sum(0)
    fp = (flagged & ~hallucinated[:, None]).sum(0)
    positives, negatives = hallucinated.sum(), (~hallucinated).sum()
    recall = tp / max(positives, 1)
    precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall + 1e-12), 0)
    f1 = np.where(recall >= MIN_RECALL, f1, -1.0)
    best = int(np.argmax(f1))
    if f1[best] < 0:
        return {"f1": 0.0, "recall": float(recall.max()), "correct_flagged": 1.0, "line": None}
    return {
        "f1": float(f1[best]),
        "recall": float(recall[best]),
        "correct_flagged": float(fp[best] / max(negatives, 1)),
        "line": float(LINES[best]),
    }


def binormal(claims: Claims, judge_auc: float, draws: int, seed: int = 0) -> dict[str, float]:
    """Mean figures over `draws` binormal judges of claim AUC `judge_auc` at their best line."""
    rng = np.random.default_rng(seed)  # the same draws for every AUC: curves stay smooth
    normal = NormalDist()
    outcomes = []
    for _ in range(draws):
        noise = rng.standard_normal(len(claims.score))
        if judge_auc >= 1.0:
            simulated = np.where(claims.unsupported, 0.0, 1.0)
        else:
            shift = math.sqrt(2) * normal.inv_cdf(judge_auc)
            x = noise + np.where(claims.unsupported, 0.0, shift) - shift / 2
            simulated = ndtr(x)  # the normal CDF: scores in (0, 1) beside the fixed ones
        scores = np.where(claims.judged, simulated, claims.score)
        outcomes.append(at_best_line(claims.weakest(scores), claims.hallucinated))
    return {
        key: round(float(np.mean([o[key] for o in outcomes])), 4)
        for key in ("f1", "recall", "correct_flagged")
    }


def analyse(rows: list[dict], draws: int) -> dict[str, Any]:
    claims = Claims(rows)
    judged = claims.judged
    measured_auc = auc(list(-claims.score[judged]), list(claims.unsupported[judged]))
    by_auc = {str(a): binormal(claims, a, draws) for a in AUCS}
    needed = None
    for a in FINE_AUCS:  # coarse enough to run in seconds, fine enough to name the need
        figures = binormal(claims, a, max(draws // 4, 20))
        if figures["f1"] >= TARGET_F1 and figures["correct_flagged"] <= TARGET_CORRECT_FLAGGED:
            needed = a
            break
    return {
        "answers": int(len(claims.hallucinated)),
        "hallucinated": int(claims.hallucinated.sum()),
        "claims": int(len(claims.score)),
        "judged_claims": int(judged.sum()),
        "judged_unsupported": int((judged & claims.unsupported).sum()),
        "configured_judge_claim_auc": measured_auc,
        "configured_judge_oracle_line": at_best_line(
            claims.weakest(claims.score), claims.hallucinated
        ),
        "binormal_judge": by_auc,
        "auc_needed": needed,
    }


def run(results_dir: Path | None = None, draws: int = DRAWS, **_: Any) -> dict[str, Any]:
    from bench import ragtruth

    started = time.perf_counter()
    splits = {}
    for split in ("fit", "report"):
        with tempfile.TemporaryDirectory() as tmp:  # its own results are not this bench's
            ragtruth.run(Path(tmp), split=split, speed=False)
        with ragtruth.CLAIM_ROWS.open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines]
        splits[split] = analyse(rows, int(draws))
    payload = {
        "status": "ok",
        "targets": {"f1": TARGET_F1, "correct_flagged": TARGET_CORRECT_FLAGGED},
        "min_recall": MIN_RECALL,
        "unsupported_overlap": UNSUPPORTED_OVERLAP,
        "draws": int(draws),
        "splits": splits,
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    shown = ("0.85", "0.9", "0.94", "0.98", "1.0")
    lines = [
        "Oracle line (best F1 with recall >= 0.80), mean over "
        f"{result['draws']} binormal judges: F1 / correct flagged.",
        "",
        "| split | judged claims (unsupported) | configured judge: AUC, F1 / correct flagged | "
        + " | ".join(f"AUC {a}" for a in shown)
        + " | AUC needed for F1 0.70, correct flagged 0.15 |",
        "|---|---:|---|" + "---|" * len(shown) + "---:|",
    ]
    for split, s in result["splits"].items():
        own = s["configured_judge_oracle_line"]
        cells = [
            f"{s['binormal_judge'][a]['f1']:.3f} / {s['binormal_judge'][a]['correct_flagged']:.3f}"
            for a in shown
        ]
        lines.append(
            f"| {split} | {s['judged_claims']} ({s['judged_unsupported']}) | "
            f"{s['configured_judge_claim_auc']}, {own['f1']:.3f} / {own['correct_flagged']:.3f} | "
            + " | ".join(cells)
            + f" | {s['auc_needed'] or 'not reached'} |"
        )
    return "\n".join(lines)
