"""The HaluEval bench's code on a tiny data set (judge off, so no model and nothing timed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from bench import common, halueval  # noqa: E402

RECORDS = [
    {
        "knowledge": "The Oberoi Group is a hotel company with its head office in Delhi.",
        "question": "The Oberoi Group has a head office in what city?",
        "right_answer": "Delhi",
        "hallucinated_answer": "The Oberoi Group is based in Mumbai.",
    },
    {
        "knowledge": "Allison Goertz (born March 2, 1991) is an American musician.",
        "question": "When was Allison Goertz born?",
        "right_answer": "March 2, 1991",
        "hallucinated_answer": "She was born on March 2, 1992.",
    },
]


def test_metrics_of_flagging():
    items = [
        {"flagged": True, "hallucinated": True},
        {"flagged": True, "hallucinated": False},
        {"flagged": False, "hallucinated": False},
        {"flagged": False, "hallucinated": True},
    ]
    m = halueval.metrics(items)
    assert (m["tp"], m["fp"], m["tn"], m["fn"]) == (1, 1, 1, 1)
    assert (m["accuracy"], m["precision"], m["recall"], m["f1"]) == (0.5, 0.5, 0.5, 0.5)


def test_run_on_a_tiny_set_emits_right_answers_and_flags_invented_ones(tmp_path, monkeypatch):
    folder = tmp_path / "halueval_qa"
    folder.mkdir()
    (folder / "qa_first500.jsonl").write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    monkeypatch.setattr(common, "DATASETS", tmp_path)
    result = halueval.run(results_dir=tmp_path, overrides={"guardrails": {"judge": "none"}})
    m = result["configured_threshold"]
    assert (m["tp"], m["tn"], m["fp"], m["fn"]) == (2, 2, 0, 0)
    assert result["decided_by"] == {"verbatim": 2, "skipped": 2}
    written = json.loads((tmp_path / "halueval.json").read_text())
    assert written["configured_threshold"]["accuracy"] == 1.0
    assert "| configured" in (tmp_path / "halueval.md").read_text()


def test_missing_data_set_skips(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "DATASETS", tmp_path / "absent")
    with pytest.raises(common.Skipped):
        halueval.run(results_dir=tmp_path)
