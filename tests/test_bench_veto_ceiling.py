"""The veto-ceiling bench's arithmetic (bench/veto_ceiling.py) and one run on the sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from bench import veto_ceiling  # noqa: E402


def row(
    correct: bool, confidence: float | None, status: str = "answered", evidence: tuple = ()
) -> dict:
    return {
        "correct": correct,
        "confidence": confidence,
        "status": status,
        "expected_behavior": "answer",
        "gold_answers": ["Texas"],
        "evidence": list(evidence),
    }


def test_a_better_veto_never_scores_lower_and_a_perfect_one_reaches_the_ceiling():
    right, wrong, questions = 215, 407, 632
    best = [veto_ceiling.binormal_best(a, right, wrong, questions) for a in (0.6, 0.84, 0.95)]
    assert best == sorted(best)
    assert veto_ceiling.binormal_best(0.99999, right, wrong, questions) == pytest.approx(
        right / questions, abs=0.01
    )
    assert veto_ceiling.binormal_best(0.5, right, wrong, questions) == 0.0  # refuse all


def test_auc_needed_is_none_above_the_ceiling_and_enough_below_it():
    assert veto_ceiling.auc_needed(0.30, 100, 500, 632) is None  # ceiling 0.158
    needed = veto_ceiling.auc_needed(0.30, 215, 407, 632)
    assert 0.95 < needed < 1.0
    assert veto_ceiling.binormal_best(needed, 215, 407, 632) >= 0.30


def test_oracle_threshold_keeps_the_confident_right_answers():
    rows = [
        row(True, 0.9),
        row(True, 0.8),
        row(False, 0.7),
        row(False, 0.2),
        row(False, None, "refused"),
    ]
    best, threshold = veto_ceiling.oracle_threshold(rows)
    assert (best, threshold) == (0.4, 0.8)  # two right of five questions, nothing wrong


def test_analyse_reports_the_ceiling_of_what_was_answered():
    rows = [row(True, 0.9), row(False, 0.95), row(False, 0.1), row(True, 0.3)]
    figures = veto_ceiling.analyse(rows, "none")
    assert figures["right"] == 2 and figures["wrong"] == 2
    assert figures["perfect_veto_ceiling"] == 0.5
    assert figures["answer_everything_truthfulness"] == 0.0
    assert figures["confidence_auc_right_vs_wrong"] == 0.5


def test_the_bench_answers_every_sample_question(tmp_path, monkeypatch):
    monkeypatch.setattr(veto_ceiling, "CALIBRATION_SET", tmp_path / "absent")
    monkeypatch.setattr(
        veto_ceiling, "judges", lambda: {"none": {"rerank.answerability.kind": "none"}}
    )
    result = veto_ceiling.run(results_dir=tmp_path, sets=("sample-v1",))
    written = json.loads((tmp_path / "veto_ceiling.json").read_text())
    (figures,) = written["sets"][0]["judges"]
    assert written["sets"][0]["set"] == "sample-v1"
    assert figures["questions"] == 73
    assert figures["answered"] > 55  # more than the default path answers (thresholds at 0)
    assert figures["right"] >= 52  # at least what the default path gets right
    assert figures["perfect_veto_ceiling"] == round(figures["right"] / 73, 4)
    assert "| sample-v1 | none |" in veto_ceiling.summarize(result)


def test_a_target_above_the_ceiling_needs_better_answers_not_a_better_veto():
    rows = [row(True, 0.9), row(False, 0.95), row(False, 0.1), row(True, 0.3)]
    figures = veto_ceiling.analyse(rows, "none", target=0.75)
    assert figures["target_within_ceiling"] is False
    assert figures["auc_needed_for_target"] is None
    assert veto_ceiling._needed(figures) == "0.75: above the ceiling"
    reachable = veto_ceiling.analyse(rows, "none", target=0.25)
    assert reachable["target_within_ceiling"] is True
    assert 0.5 < reachable["auc_needed_for_target"] < 1.0


def test_the_selection_ceiling_counts_gold_in_any_packaged_span():
    rows = [
        row(
            False, 0.9, evidence=("[E1] doc-a: Ohio has one.", "[E2] doc-b (p. 2): It is in Texas.")
        ),
        row(False, 0.9, evidence=("[E1] texas-society: Ohio has one.",)),  # the doc id is no span
        row(True, 0.9, evidence=("[E1] doc-a: The largest is in Texas.",)),
        row(False, None, "refused"),
    ]
    assert veto_ceiling.span_texts(rows[0]) == ["Ohio has one.", "It is in Texas."]
    figures = veto_ceiling.analyse(rows, "none")
    assert figures["gold_in_a_packaged_span"] == 2
    assert figures["selection_ceiling"] == 0.5
    assert figures["perfect_veto_ceiling"] == 0.25
