"""scripts/fit_answerability.py: the calibration it fits is the one the fast judge applies."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

from scripts import fit_answerability as fit  # noqa: E402
from stages.models.answerability import (  # noqa: E402
    AnswerabilitySettings,
    CombinedAnswerability,
    PairAnswerability,
    logit,
)


def _records(n: int = 400) -> list[dict]:
    """Right answers follow the ranker's confidence more than the pair score."""
    rng = random.Random(3)
    records = []
    for _ in range(n):
        raw, prior = rng.uniform(0.05, 0.95), rng.uniform(0.05, 0.95)
        chance = 1 / (1 + math.exp(-(0.5 * logit(raw) + 2.0 * logit(prior) - 0.5)))
        records.append({"raw": raw, "prior": prior, "right": rng.random() < chance})
    return records


def test_the_prior_gets_a_weight_only_when_asked_and_weighs_more_when_it_matters():
    records = _records()
    scale, _, weight, strict_weight = fit.fit(records)
    assert strict_weight == 0.0
    assert weight == 0.0 and scale > 0
    scale, _, weight, _ = fit.fit(records, with_prior=True)
    assert weight > scale > 0


def test_the_fitted_probability_is_the_one_the_fast_judge_gives():
    scale, shift, weight = 0.45, -1.1, 0.36
    settings = AnswerabilitySettings(kind="fast", scale=scale, shift=shift, prior_weight=weight)
    judge = PairAnswerability(scorer=type("Scorer", (), {"model_id": "x"})(), settings=settings)
    for raw, prior in [(0.3, 0.9), (0.8, 0.2), (0.5, 0.5)]:
        record = {"raw": raw, "prior": prior}
        expected = fit.calibrated_probability(record, scale, shift, weight)
        # the judge is given the pair model's logit; the record holds its uncalibrated sigmoid
        assert judge.calibrated(logit(raw), prior) == pytest.approx(expected)


def test_the_strict_judge_gets_a_weight_and_the_combined_judge_applies_the_fit():
    rng = random.Random(5)
    records = []
    for _ in range(400):
        raw, prior, p_yes = (rng.uniform(0.05, 0.95) for _ in range(3))
        chance = 1 / (1 + math.exp(-(0.5 * logit(raw) + 1.5 * logit(p_yes) - 0.3)))
        records.append({"raw": raw, "prior": prior, "p_yes": p_yes, "right": rng.random() < chance})
    scale, shift, prior_weight, strict_weight = fit.fit(records, True, True)
    assert strict_weight > scale > 0 and abs(prior_weight) < strict_weight
    settings = AnswerabilitySettings(
        kind="combined",
        scale=scale,
        shift=shift,
        prior_weight=prior_weight,
        strict_weight=strict_weight,
    )
    record = records[0]

    class OneSentence:
        model_id = "x"

        def score(self, pairs):
            return np.array([logit(record["raw"])] * len(pairs))

    class Strict:
        model_id = "y"

        def p_yes(self, system, user):
            return record["p_yes"]

    judge = CombinedAnswerability(PairAnswerability(OneSentence(), settings), Strict(), settings)
    judgement = judge.judge("q?", [("t", "One sentence states the answer.")], [record["prior"]])
    expected = fit.calibrated_probability(record, scale, shift, prior_weight, strict_weight)
    assert judgement.probabilities[0] == pytest.approx(expected)


def test_the_gguf_is_skipped_only_below_where_it_never_changed_a_decision():
    weights = (1.0, 0.0, 0.0, 2.0)  # scale, shift, prior_weight, strict_weight

    def record(raw, p_yes):
        return {"raw": raw, "prior": 0.5, "p_yes": p_yes, "right": False}

    # without the GGUF: 0.1 and 0.42; the judge's "yes" lifts only the second over 0.55
    records = [record(0.1, 0.6), record(0.42, 0.9)]
    assert fit.skip_below(records, weights, 0.55) == pytest.approx(0.4)
    # a "yes" that lifts a question at 0.04: skipping anything would change a decision
    records = [record(0.04, 0.9999), record(0.42, 0.9)]
    assert fit.skip_below(records, weights, 0.55) == 0.0


def test_cross_validation_scores_each_half_with_the_other_halfs_fit():
    records = _records()
    report = fit.cross_validated(records, True, False, 0.55)
    assert set(report) == {"cv_auc_right", "cv_answered", "cv_truthfulness"}
    assert 0.5 < report["cv_auc_right"] <= 1.0 and 0 <= report["cv_answered"] <= len(records)
    # labels the features cannot predict: held-out AUC falls to chance, in-sample fits noise
    noise = [{**r, "right": random.Random(i).random() < 0.5} for i, r in enumerate(records)]
    assert fit.cross_validated(noise, True, False, 0.55)["cv_auc_right"] < 0.6
