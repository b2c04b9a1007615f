"""The paraphrase bench: its metrics, and a tiny run through the stage's code with a fake judge."""

from __future__ import annotations

import json

import pytest

import eval.paraphrase_pairs as pair_set
from bench import paraphrase
from eval.paraphrase_pairs import Pair
from stages.guardrails import checker, judge

EVIDENCE = "The museum opened in 1902. It holds 3,000 paintings and a library of rare maps."


def test_auc_counts_ties_half_and_needs_both_labels():
    assert paraphrase.auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert paraphrase.auc([0.5, 0.5], [True, False]) == 0.5
    assert paraphrase.auc([0.2, 0.9], [True, False]) == 0.0
    assert paraphrase.auc([0.2], [True]) is None


def test_balanced_accuracy_weighs_both_labels_equally():
    items = [
        {"supported": True, "flagged": False},
        {"supported": True, "flagged": True},
        {"supported": False, "flagged": True},
        {"supported": False, "flagged": True},
        {"supported": False, "flagged": True},
        {"supported": False, "flagged": True},
    ]
    m = paraphrase.balanced(items)
    assert (m["balanced_accuracy"], m["unsupported_flagged"], m["supported_flagged"]) == (
        0.75,
        1.0,
        0.5,
    )


def pair(pair_id: str, split: str, label: str, claim: str) -> Pair:
    kind = "paraphrase" if label == "supported" else "figure"
    return Pair(pair_id, split, label, kind, "When did the museum open?", claim, EVIDENCE)


class ScoreByWord(judge.Judge):
    """Supports a claim that says "maps"; anything else gets a low score."""

    def __init__(self) -> None:
        super().__init__("llm", "fake", self._score, None)

    def _score(self, claim: str, spans: list[str], question: str | None, part: bool) -> float:
        return 0.99 if "maps" in claim else 0.1


def test_a_tiny_run_routes_each_claim_and_writes_its_result(tmp_path, monkeypatch):
    pairs = [
        pair("p1", "dev", "supported", "Its doors first opened in 1902."),  # judge: 0.1 (missed)
        pair("p2", "dev", "unsupported", "The museum opened in 1903."),  # figure check
        pair("p3", "test", "supported", "The collection includes a library of old maps."),
        pair("p4", "test", "unsupported", "It holds 4,000 paintings."),  # figure check
    ]
    monkeypatch.setattr(pair_set, "load_pairs", lambda: pairs)
    monkeypatch.setattr(checker, "make_judge", lambda config: ScoreByWord())
    monkeypatch.setattr(paraphrase.common, "CACHE", tmp_path / "cache")
    result = paraphrase.run(results_dir=tmp_path, direct=True)
    assert result["routes"] == {
        "check": {"supported": 0, "unsupported": 2},
        "judge": {"supported": 2, "unsupported": 0},
    }
    assert result["configured_threshold"]["test"]["balanced_accuracy"] == 1.0
    assert result["configured_threshold"]["dev"]["balanced_accuracy"] == 0.5
    assert [f["pair_id"] for f in result["supported_flagged"]] == ["p1"]
    written = json.loads((tmp_path / "paraphrase.json").read_text())
    assert written["data"]["pairs"] == 4
    assert "| configured" in (tmp_path / "paraphrase.md").read_text()


def test_the_bench_needs_a_judge(tmp_path, monkeypatch):
    monkeypatch.setattr(pair_set, "load_pairs", lambda: [])
    with pytest.raises(paraphrase.common.Skipped):
        paraphrase.run(results_dir=tmp_path, overrides={"guardrails": {"judge": "none"}})
