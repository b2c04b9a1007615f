"""Detection sets (eval/detection_sets.py): frozen files, the checker interface, metrics, the
gate."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from eval import detection_sets as detection
from eval.frozen_sets import EvalSetError
from eval.release_gate import GateFailure

CHECKER = textwrap.dedent(
    """
    def check(record, overrides):
        if record.get("boom"):
            raise ValueError("bad record\\nsecond line")
        threshold = overrides.get("fake", {}).get("threshold", 0.5)
        return {"flagged": record["score"] < threshold, "seconds": 0.25, "calls": 2}
    """
)


def make_root(tmp_path: Path, records: list[dict], monkeypatch) -> Path:
    """A project root with one detection set, its checker module and the gate file."""
    (tmp_path / "fake_checker_mod.py").write_text(CHECKER)
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = tmp_path / "eval" / "sets" / "toy-v1"
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "NOTICE.md").write_text("synthetic\n")
    detection.write_manifest(folder, {"name": "toy-v1", "checker": "fake_checker_mod.check"})
    (tmp_path / "eval" / "gate.yaml").write_text(
        "axes: {}\ndetection:\n"
        "  flag_rate.correct: {direction: lower, tolerance: 0.05}\n"
        "  flag_rate.hallucinated: {direction: higher, tolerance: 0.05}\n"
    )
    return tmp_path


RECORDS = [
    {"id": "a", "label": "correct", "score": 0.9},
    {"id": "b", "label": "correct", "score": 0.2},
    {"id": "c", "label": "hallucinated", "score": 0.1},
    {"id": "d", "label": "hallucinated", "score": 0.8},
]


def test_metrics_are_flag_rates_per_label_and_means(tmp_path, monkeypatch):
    root = make_root(tmp_path, RECORDS, monkeypatch)
    assert detection.is_detection_set("toy-v1", root)
    outcome = detection.evaluate("toy-v1", root=root)
    axis = outcome["metrics"]["axes"]["detection"]
    assert axis["flag_rate.correct"] == 0.5
    assert axis["flag_rate.hallucinated"] == 0.5
    assert axis["calls"] == 2.0 and axis["seconds"] == 0.25
    assert axis["errors"] == 0 and axis["n"] == 4
    # overrides reach the checker
    outcome = detection.evaluate("toy-v1", {"fake": {"threshold": 0.95}}, root=root)
    assert outcome["metrics"]["axes"]["detection"]["flag_rate.hallucinated"] == 1.0


def test_a_changed_or_extra_file_refuses_the_set(tmp_path, monkeypatch):
    root = make_root(tmp_path, RECORDS, monkeypatch)
    folder = root / "eval" / "sets" / "toy-v1"
    (folder / "extra.txt").write_text("x")
    with pytest.raises(EvalSetError, match="extra.txt"):
        detection.load_detection_set("toy-v1", root)
    (folder / "extra.txt").unlink()
    with (folder / "records.jsonl").open("a") as handle:
        handle.write(json.dumps({"id": "e", "label": "correct", "score": 1}) + "\n")
    with pytest.raises(EvalSetError, match="does not match"):
        detection.load_detection_set("toy-v1", root)


def test_a_failing_record_is_an_error_row_and_fails_the_gate(tmp_path, monkeypatch):
    root = make_root(
        tmp_path, [*RECORDS, {"id": "x", "label": "correct", "boom": True}], monkeypatch
    )
    outcome = detection.evaluate("toy-v1", root=root)
    error = outcome["records"][-1]["error"]
    assert error == "ValueError: bad record"  # one line
    assert outcome["metrics"]["axes"]["detection"]["errors"] == 1
    assert outcome["metrics"]["axes"]["detection"]["n.correct"] == 2  # the others went on
    with pytest.raises(GateFailure):
        detection.release("toy-v1", gate=True, root=root)


def test_gate_promote_and_regression(tmp_path, monkeypatch):
    root = make_root(tmp_path, RECORDS, monkeypatch)
    first = detection.release("toy-v1", promote=True, root=root, reports_dir=tmp_path / "rep")
    baseline = json.loads(first["promoted"].read_text())
    assert baseline["axes"]["detection"]["flag_rate.correct"] == 0.5
    assert (first["report"] / "detection.json").is_file()
    passed = detection.release("toy-v1", gate=True, root=root)
    assert passed["comparison"]["passed"]
    # a checker that flags more correct answers regresses the lower-is-better axis
    with pytest.raises(GateFailure) as failure:
        detection.release("toy-v1", {"fake": {"threshold": 0.95}}, gate=True, root=root)
    assert failure.value.axes == ["detection"]
    with pytest.raises(EvalSetError, match="limit"):
        detection.release("toy-v1", gate=True, root=root, limit=2)


def test_question_sets_are_not_detection_sets():
    assert not detection.is_detection_set("sample-v1")
    assert not detection.is_detection_set("no-such-set")


def test_check_rag_answer_through_the_guardrails_without_a_model():
    record = {
        "label": "correct",
        "question": "When was the bridge opened?",
        "answer": "The bridge opened in 1932. It cost 12 million dollars.",
        "evidence": {"E1": {"title": "Passage 1", "text": "The bridge opened in 1932."}},
    }
    overrides = {"guardrails": {"judge": "none", "judge_cache_dir": None, "consistency_probes": 0}}
    result = detection.check_rag_answer(record, overrides)
    assert result["flagged"] is True  # the cost is in no evidence
    assert result["judge_calls"] == 0 and result["seconds"] >= 0
    start = record["answer"].index("It cost")
    assert any(s[0] <= start < s[1] for s in result["flagged_spans"])
    assert all(s[1] <= start or s[0] >= start for s in result["flagged_spans"])
    record["answer"] = "The bridge opened in 1932."
    assert detection.check_rag_answer(record, overrides)["flagged"] is False


def test_cli_overrides_are_nested_and_deep_merged():
    merged = detection.merge_overrides(
        {"guardrails": {"consistency_probes": 0, "llm": {"backend": "llama_cpp"}}},
        {"guardrails.judge": "none", "guardrails.llm.n_threads": 2},
    )
    assert merged == {
        "guardrails": {
            "consistency_probes": 0,
            "judge": "none",
            "llm": {"backend": "llama_cpp", "n_threads": 2},
        }
    }


def test_the_frozen_ragtruth_set_is_intact():
    dset = detection.load_detection_set("ragtruth-qa-v1")
    labels = [r["label"] for r in dset.records]
    assert labels.count("hallucinated") == 26 and labels.count("correct") == 34
    assert all(len(r["evidence"]) == 3 and r["answer"] and r["question"] for r in dset.records)
    assert all(bool(r["spans"]) == (r["label"] == "hallucinated") for r in dset.records)
    # every generating model has correct answers in the set
    assert len({r["model"] for r in dset.records if r["label"] == "correct"}) == 6
    assert dset.manifest["checker"] == "eval.detection_sets.check_rag_answer"
    assert (dset.path / "NOTICE.md").read_text().count("MIT") >= 1


def test_grounding_eval_dispatches_a_detection_set(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from cli import eval as eval_command
    from cli.app import app

    seen = {}

    def fake_release(name, overrides, gate, promote, accept, reports_dir, on_record=None):
        seen.update(name=name, overrides=overrides, gate=gate)
        on_record(0, 1, {"error": "ValueError: x"})
        raise GateFailure(["detection"], "release gate failed on ragtruth-qa-v1")

    monkeypatch.setattr(eval_command, "release_detection", fake_release)
    args = ["eval", "--set", "ragtruth-qa-v1", "--gate", "--set-override", "guardrails.judge=none"]
    args += ["--reports-dir", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "failed axes: detection" in result.output and "record 1: ValueError" in result.output
    assert seen == {
        "name": "ragtruth-qa-v1",
        "overrides": {"guardrails.judge": "none"},
        "gate": True,
    }
