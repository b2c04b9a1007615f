"""Shadow runs and promotion: a candidate config replays a recorded run apart from the ledger;
a promotion is recorded only within the report's bounds and with a passing release gate."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from flows.pipeline_config import load_config
from quality.ledger import read_ledger
from quality.shadow import (
    ShadowError,
    compare_runs,
    load_verdicts,
    promote,
    shadow_run,
    verdict_change,
)
from tests.conftest import ROOT, load_test_config
from tests.test_drift import run_once, tiny_corpus, tiny_questions

CURRENT = ROOT / "configs" / "pipeline.yaml"


def candidate_file(folder: Path, name: str, **rerank) -> Path:
    """The current config with rerank settings changed (includes resolve from the project root,
    where the tests run)."""
    data = yaml.safe_load(CURRENT.read_text())
    data["stages"]["rerank"].update(rerank)
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_verdict_change_follows_what_the_verdict_said():
    assert verdict_change("correct", "answered", "refused") == "worse"
    assert verdict_change("hallucinated", "answered", "blocked") == "better"
    assert verdict_change("should_have_refused", "answered", "refused") == "better"
    assert verdict_change("wrongly_refused", "refused", "answered") == "better"
    assert verdict_change("correct", "refused", "answered") == "worse"  # the refusal was right
    assert verdict_change("correct", "answered", "answered") is None  # same status: not judged
    assert verdict_change(None, "answered", "refused") is None
    assert verdict_change("hallucinated", "refused", "blocked") is None


def _answer(qid: str, status: str, text: str = "", cites: tuple = ()) -> dict:
    citations = [{"doc_id": d, "char_start": s, "char_end": e} for d, s, e in cites]
    return {
        "question_id": qid,
        "question": f"question {qid}?",
        "status": status,
        "answer": text,
        "citations": citations,
    }


def _report(qid: str, *claims: tuple[str, str]) -> dict:
    return {
        "question_id": qid,
        "claims": [
            {"text": t, "status": s, "score": 0.9 if s == "supported" else 0.2} for t, s in claims
        ],
    }


def test_compare_runs_counts_transitions_changes_claims_and_verdicts():
    base = {
        "answers": [
            _answer("q1", "answered", "A is 5.", (("d", 0, 5),)),
            _answer("q2", "answered", "B is 6.", (("d", 5, 9),)),
            _answer("q3", "refused"),
            _answer("q4", "answered", "D is 8.", (("d", 9, 12),)),
        ],
        "reports": [
            _report("q1", ("A is 5.", "supported")),
            _report("q2", ("B is 6.", "supported")),
            _report("q3"),
            _report("q4", ("D is 8.", "supported")),
        ],
    }
    candidate = {
        "answers": [
            _answer("q1", "refused"),
            _answer("q2", "answered", "B is 6.", (("d", 5, 10),)),  # a citation moved
            _answer("q3", "answered", "C is 7.", (("e", 0, 4),)),
            _answer("q4", "answered", "D is 8.", (("d", 9, 12),)),  # unchanged
        ],
        "reports": [
            _report("q1"),
            _report("q2", ("B is 6.", "supported")),
            _report("q3", ("C is 7.", "unsupported")),
            _report("q4", ("D is 8.", "supported")),
        ],
    }
    verdicts = {"q1": "correct", "q3": "wrongly_refused", "q4": "hallucinated"}
    out = compare_runs(base, candidate, verdicts)
    assert out["transitions"]["answered"] == {"answered": 2, "refused": 1, "blocked": 0}
    assert out["transitions"]["refused"] == {"answered": 1, "refused": 0, "blocked": 0}
    assert out["lost_answers"] == 1 and out["gained_answers"] == 1
    changed = {c["question_id"]: c for c in out["changed"]}
    assert set(changed) == {"q1", "q2", "q3"}
    assert changed["q2"]["citations_changed"] and not changed["q2"]["text_changed"]
    assert [c["claim"] for c in out["newly_emitted_claims"]] == ["C is 7."]
    assert [c["claim"] for c in out["newly_withheld_claims"]] == ["A is 5."]
    assert [c["claim"] for c in out["new_unsupported_claims"]] == ["C is 7."]
    assert out["worse"] == 1 and out["better"] == 1  # q4 unchanged: its verdict says nothing
    assert out["verdicts"] == 3


def test_verdicts_are_read_from_the_store_and_a_tie_is_left_out(tmp_path):
    folder = tmp_path / "artifacts" / "reviews" / "batch-1"
    folder.mkdir(parents=True)
    rows = [
        {"question_id": "q1", "verdict": "correct"},
        {"question_id": "q1", "verdict": "correct"},
        {"question_id": "q1", "verdict": "hallucinated"},
        {"question_id": "q2", "verdict": "correct"},
        {"question_id": "q2", "verdict": "hallucinated"},  # two reviewers disagree: disputed
        {"question_id": "q3", "verdict": "Wrongly refused"},
        {"question_id": "q4", "verdict": "maybe"},  # not a verdict
    ]
    pq.write_table(pa.Table.from_pylist(rows), folder / "verdicts.parquet")
    extra = tmp_path / "more.csv"
    extra.write_text("question_id,verdict\nq5,should_have_refused\n")
    assert load_verdicts(tmp_path / "artifacts", extra) == {
        "q1": "correct",
        "q3": "wrongly_refused",
        "q5": "should_have_refused",
    }
    bad = tmp_path / "bad.csv"
    bad.write_text("id,label\nq1,correct\n")
    with pytest.raises(ShadowError, match="question_id and verdict"):
        load_verdicts(tmp_path / "artifacts", bad)


def test_the_review_queues_verdicts_on_the_replayed_run_count(tmp_path):
    """What reviewers saved on the page (`quality.review`) is what a shadow report reads: each
    reviewer's latest verdict on an answer of this run, none of another run's."""
    from quality.review import append_verdicts

    folder = tmp_path / "artifacts" / "_reviews" / "batch-1"
    append_verdicts(
        folder,
        "ana",
        [
            {"answer_id": "run-a/q1", "verdict": "hallucinated"},
            {"answer_id": "run-a/q1", "verdict": "correct"},  # changed her mind: the latest counts
            {"answer_id": "run-b/q2", "verdict": "hallucinated"},  # another run's answer
        ],
    )
    append_verdicts(folder, "ben", [{"answer_id": "run-a/q1", "verdict": "correct"}])
    assert load_verdicts(tmp_path / "artifacts", run_id="run-a") == {"q1": "correct"}
    assert load_verdicts(tmp_path / "artifacts", run_id="run-b") == {"q2": "hallucinated"}


def test_shadow_replays_a_run_apart_and_promotion_needs_bounds_and_the_gate(tmp_path):
    corpus = tiny_corpus(tmp_path / "corpus")
    settings = load_test_config(tmp_path, corpus=str(corpus))
    run_once(settings, tiny_questions(tmp_path), "base")
    store = settings.artifact_store()
    ledger_rows = read_ledger(store).num_rows
    base_answers = pq.read_table(settings.runs_dir / "base" / "answers.parquet").to_pylist()
    answered = [a["question_id"] for a in base_answers if a["status"] == "answered"]
    assert answered, "the tiny corpus answers some questions"
    reviews = Path(settings.store) / "reviews" / "b1"
    reviews.mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist([{"question_id": q, "verdict": "correct"} for q in answered]),
        reviews / "verdicts.parquet",
    )

    # a stricter retrieval confidence line: right answers are refused, the report says so
    strict = candidate_file(tmp_path, "strict.yaml", high_threshold=0.99, low_threshold=0.98)
    report = shadow_run(settings, load_config(strict), strict, CURRENT, "base")
    folder = Path(report["shadow_run"])
    assert folder.parent == settings.runs_dir / "shadow"
    assert (folder / "answers.parquet").is_file() and (folder / "shadow.md").is_file()
    assert json.loads((folder / "shadow.json").read_text())["shadow_id"] == report["shadow_id"]
    assert read_ledger(store).num_rows == ledger_rows  # a shadow stays out of the ledger
    assert sum(sum(row.values()) for row in report["transitions"].values()) == len(base_answers)
    assert report["lost_answers"] > 0 and report["worse"] == report["lost_answers"]
    assert not report["within_bounds"] and report["same_corpus"]
    failed = {c["bound"] for c in report["bound_checks"] if not c["ok"]}
    assert {"max_worse", "max_lost_answers"} <= failed
    assert report["candidate_config"]["sha256"] != report["current_config"]["sha256"]

    def passing(path: Path) -> dict:
        return {"sample-v2": {"passed": True, "report": "eval/reports/x"}}

    def failing(path: Path) -> dict:
        return {"sample-v2": {"passed": False, "failures": ["axis answer: f1 down"]}}

    with pytest.raises(ShadowError, match="outside its bounds"):
        promote(settings, strict, passing)
    promotions = Path(settings.store) / "promotions"
    assert not promotions.exists()

    # the same settings as now: nothing changes, within bounds; the gate decides
    same = candidate_file(tmp_path, "same.yaml")
    quiet = shadow_run(settings, load_config(same), same, CURRENT)  # the latest run
    assert quiet["baseline_run"] == "base"
    assert quiet["within_bounds"] and quiet["changed"] == [] and quiet["lost_answers"] == 0
    with pytest.raises(ShadowError, match="release gate failed"):
        promote(settings, same, failing)
    assert not promotions.exists()
    record = promote(settings, same, passing)
    saved = json.loads(Path(record["record"]).read_text())
    assert saved["candidate_config"]["path"] == str(same)
    assert saved["current_config"]["path"] == str(CURRENT)
    assert saved["runs"] == {"baseline": "base", "shadow": quiet["shadow_run"]}
    assert saved["reports"]["shadow"].endswith("shadow.json")
    assert saved["reports"]["release_gate"]["sample-v2"]["passed"]
    same.write_text(same.read_text() + "\n# edited after its shadow run\n")
    with pytest.raises(ShadowError, match="no shadow run"):
        promote(settings, same, passing)


def test_the_commands_say_why_they_cannot_go_on(tmp_path):
    from cli.app import app

    settings = ["--set", f"store={tmp_path / 'a'}", "--set", f"runs_dir={tmp_path / 'runs'}"]
    runner = CliRunner()
    never = candidate_file(tmp_path, "never.yaml")
    done = runner.invoke(app, ["promote", str(never), *settings])
    assert done.exit_code == 1 and "no shadow run" in done.output
    done = runner.invoke(app, ["shadow", "--candidate", str(never), *settings])
    assert done.exit_code == 2 and "no run in" in done.output
    done = runner.invoke(app, ["shadow", "--candidate", str(never), "--eval-sets", "nosuch"])
    assert done.exit_code == 2 and "no frozen eval set nosuch" in done.output
    done = runner.invoke(app, ["trend", *settings])
    assert done.exit_code == 2 and "empty" in done.output


def test_eval_sets_go_into_the_report_and_a_failing_gate_there_blocks_promotion(
    tmp_path, monkeypatch
):
    """The plumbing of --eval-sets, with the release eval itself stubbed: it runs every set
    twice, which tests/test_eval.py covers on its own."""
    from types import SimpleNamespace

    import flows.evaluation
    from quality.shadow import evaluate_sets

    calls = []

    def fake_release_eval(name, config_path, overrides, store, gate, reports_dir):
        calls.append((name, Path(config_path).name))
        passed = Path(config_path).name != "worse.yaml"
        axes = {"answer": {"f1": 0.8 if passed else 0.5}}
        return SimpleNamespace(
            run=SimpleNamespace(metrics={"axes": axes}),
            comparison={"passed": passed, "failures": [] if passed else ["axis answer: f1"]},
            report_dir=None,
        )

    monkeypatch.setattr(flows.evaluation, "release_eval", fake_release_eval)
    corpus = tiny_corpus(tmp_path / "corpus")
    settings = load_test_config(tmp_path, corpus=str(corpus))
    run_once(settings, tiny_questions(tmp_path), "base")

    def never(path: Path) -> dict:
        raise AssertionError("the report's eval sets decide; no gate run needed")

    for name, promoted in (("worse.yaml", False), ("fine.yaml", True)):
        path = candidate_file(tmp_path, name)

        def sets(path=path) -> dict:
            return evaluate_sets(["sample-v2"], CURRENT, path, settings.store)

        report = shadow_run(settings, load_config(path), path, CURRENT, "base", eval_sets=sets)
        outcome = report["eval_sets"]["sample-v2"]
        assert outcome["current_passed"] and outcome["candidate_passed"] == promoted
        gate = next(c for c in report["bound_checks"] if c["bound"] == "release gate sample-v2")
        assert gate["ok"] == promoted and report["within_bounds"] == promoted
        if promoted:
            record = promote(settings, path, never)
            assert record["reports"]["release_gate"]["sample-v2"]["from"] == "shadow report"
        else:
            with pytest.raises(ShadowError, match="release gate sample-v2"):
                promote(settings, path, never)
    assert calls == [
        ("sample-v2", "pipeline.yaml"),
        ("sample-v2", "worse.yaml"),
        ("sample-v2", "pipeline.yaml"),
        ("sample-v2", "fine.yaml"),
    ]


def test_promote_runs_the_real_release_gate_on_the_sample_set(tmp_path, shared_store):
    """No stub: `grounding promote` runs the release gate on the frozen sample-v2 set against
    its committed baseline. A candidate whose shadow report its operator let through (bounds
    widened) still fails the gate and is not promoted; the current settings pass and are."""
    from cli.app import app
    from quality.shadow import ShadowBounds
    from tests.conftest import config_on_copy

    settings = config_on_copy(shared_store, tmp_path, "promote")
    run_once(settings, tiny_questions(tmp_path), "base")
    cli = ["--config", str(CURRENT), "--set", f"store={settings.store}"]
    cli += ["--set", f"runs_dir={settings.runs_dir}", "--gate-set", "sample-v2"]
    promotions = Path(settings.store) / "promotions"
    reports = settings.runs_dir / "gate-reports"
    runner = CliRunner()

    strict = candidate_file(tmp_path, "strict.yaml", high_threshold=0.99, low_threshold=0.98)
    wide = ShadowBounds(max_worse=1000, max_lost_answers=1.0)
    report = shadow_run(settings, load_config(strict), strict, CURRENT, "base", wide)
    assert report["within_bounds"] and report["lost_answers"] > 0
    refused = runner.invoke(app, ["promote", str(strict), *cli])
    assert refused.exit_code == 1, refused.output
    assert "release gate failed for the candidate on: sample-v2" in refused.output
    assert not promotions.exists()
    written = sorted(reports.glob("*/*"))
    assert written, "the gate's report is kept beside the runs, not in eval/reports"

    same = candidate_file(tmp_path, "same.yaml")
    assert shadow_run(settings, load_config(same), same, CURRENT, "base")["within_bounds"]
    accepted = runner.invoke(app, ["promote", str(same), *cli])
    assert accepted.exit_code == 0, accepted.output
    record = json.loads(next(promotions.glob("*.json")).read_text())
    gate = record["reports"]["release_gate"]["sample-v2"]
    assert gate["passed"] and gate["failures"] == []
    assert Path(gate["report"]).parent == reports and Path(gate["report"]).is_dir()
    assert record["candidate_config"]["path"] == str(same)
