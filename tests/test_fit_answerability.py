"""scripts/fit_answerability.py: the calibration it fits is the one the fast judge applies."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `scripts` is a top-level folder, not an installed package
    sys.path.insert(0, str(ROOT))

from scripts import fit_answerability as fit  # noqa: E402
from stages.models.answerability import AnswerabilitySettings, PairAnswerability  # noqa: E402


def _records(n: int = 400) -> list[dict]:
    """Right answers follow the ranker's confidence more than the pair score."""
    rng = random.Random(3)
    records = []
    for _ in range(n):
        raw, prior = rng.uniform(0.05, 0.95), rng.uniform(0.05, 0.95)
        chance = 1 / (1 + math.exp(-(0.5 * fit._logit(raw) + 2.0 * fit._logit(prior) - 0.5)))
        records.append({"raw": raw, "prior": prior, "right": rng.random() < chance})
    return records


def test_the_prior_gets_a_weight_only_when_asked_and_weighs_more_when_it_matters():
    records = _records()
    scale, _, weight = fit.fit(records)
    assert weight == 0.0 and scale > 0
    scale, _, weight = fit.fit(records, with_prior=True)
    assert weight > scale > 0


def test_the_fitted_probability_is_the_one_the_fast_judge_gives():
    scale, shift, weight = 0.45, -1.1, 0.36
    settings = AnswerabilitySettings(kind="fast", scale=scale, shift=shift, prior_weight=weight)
    judge = PairAnswerability(scorer=type("Scorer", (), {"model_id": "x"})(), settings=settings)
    for raw, prior in [(0.3, 0.9), (0.8, 0.2), (0.5, 0.5)]:
        record = {"raw": raw, "prior": prior}
        expected = fit.calibrated_probability(record, scale, shift, weight)
        # the judge is given the pair model's logit; the record holds its uncalibrated sigmoid
        assert judge.calibrated(fit._logit(raw), prior) == pytest.approx(expected)
