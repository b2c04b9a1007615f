"""bench.judge_ceiling: the binormal judge over the checker's claims (no data set needed)."""

from __future__ import annotations

import numpy as np

from bench import judge_ceiling


def _rows() -> list[dict]:
    """Ten answers of three judged claims; answers 0-3 hallucinated, each with one labelled
    claim; answer 9 is correct but a deterministic check failed one of its claims."""
    rows = []
    for answer in range(10):
        for claim in range(3):
            unsupported = answer < 4 and claim == 0
            rows.append(
                {
                    "id": str(answer),
                    "response_hallucinated": answer < 4,
                    "score": 0.8,
                    "status": "supported",
                    "judge": "llm",
                    "label_overlap": 1.0 if unsupported else 0.0,
                }
            )
    rows[-1] |= {"score": 0.0, "judge": "none"}  # a figure the evidence lacks: kept as it is
    rows.append({**rows[0], "status": "not_a_claim", "score": None})  # framing: left out
    return rows


def test_a_perfect_judge_reaches_the_ceiling_the_fixed_checks_leave():
    claims = judge_ceiling.Claims(_rows())
    assert len(claims.hallucinated) == 10 and claims.judged.sum() == 29
    perfect = judge_ceiling.binormal(claims, 1.0, draws=3)
    # every hallucinated answer caught; the one deterministic failure stays a false flag
    assert perfect["recall"] == 1.0
    assert perfect["correct_flagged"] == round(1 / 6, 4)
    assert perfect["f1"] == round(2 * 0.8 / 1.8, 4)


def test_a_weaker_judge_scores_lower_and_the_line_keeps_the_recall():
    claims = judge_ceiling.Claims(_rows())
    weak = judge_ceiling.binormal(claims, 0.7, draws=50)
    strong = judge_ceiling.binormal(claims, 0.95, draws=50)
    assert weak["f1"] < strong["f1"] <= judge_ceiling.binormal(claims, 1.0, draws=1)["f1"]
    assert weak["recall"] >= judge_ceiling.MIN_RECALL


def test_the_oracle_line_is_the_best_f1_with_enough_recall():
    weakest = np.array([0.1, 0.2, 0.5, 0.9, 0.9])
    hallucinated = np.array([True, True, False, True, False])
    best = judge_ceiling.at_best_line(weakest, hallucinated)
    # below 0.95 catches all three hallucinated answers, and both correct ones too
    assert best["recall"] == 1.0 and best["line"] == 0.91
    assert best["correct_flagged"] == 1.0
