"""The frozen eval sets, the metrics and the release gate (the eval package, its flow in
flows/evaluation.py and its command in cli/eval.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eval import metrics as eval_metrics
from eval import report
from eval.frozen_sets import EvalSetError, verify_set
from eval.release_gate import GateFailure, compare
from flows import evaluation as ev
from stages.contracts import final_answer_problems
from tests.conftest import ROOT

DEGRADED = {"retrieval.top_k": 1, "rerank.top_n": 1}


# ---------------------------------------------------------------- metric units


def test_ece_on_hand_made_inputs():
    # bin 0.9: mean confidence 0.9, accuracy 0.5 -> 0.4 * 2/4; bin 0.1: 0.1 vs 0 -> 0.1 * 2/4
    assert eval_metrics.expected_calibration_error(
        [0.9, 0.9, 0.1, 0.1], [True, False, False, False]
    ) == (pytest.approx(0.25))
    assert eval_metrics.expected_calibration_error([0.95, 0.05], [True, False]) == pytest.approx(
        0.05
    )
    assert eval_metrics.expected_calibration_error([1.0, 1.0], [True, True]) == pytest.approx(0.0)
    assert eval_metrics.expected_calibration_error([], []) is None


def test_refusal_precision_recall():
    precision, recall = eval_metrics.refusal_precision_recall(
        [True, True, True, False, False], [True, False, False, True, False]
    )
    assert precision == pytest.approx(0.5)
    assert recall == pytest.approx(1 / 3)
    assert eval_metrics.refusal_precision_recall([True], [False]) == (None, 0.0)


def test_permission_leak_count():
    principals = {"employee": ["everyone"], "hr_manager": ["everyone", "hr"]}
    permissions = {"handbook": ["everyone"], "salaries": ["hr"]}
    cited = [
        ("q1", "employee", ["handbook", "salaries", "salaries"]),  # one leak, counted once
        ("q2", "hr_manager", ["salaries"]),  # allowed
        ("q3", "contractor", ["handbook"]),  # unknown principal: no groups
        ("q4", "employee", ["unknown-doc"]),  # unknown document: no permission set
    ]
    leaks = eval_metrics.permission_leaks(cited, principals, permissions)
    assert leaks == [("q1", "salaries"), ("q3", "handbook"), ("q4", "unknown-doc")]


def test_gold_matching_and_format_checks():
    assert eval_metrics.contains_gold("The Enterprise plan costs €49 per user. [E1]", ["€49"])
    assert not eval_metrics.contains_gold("It costs €42. [E1]", ["€49"])
    assert eval_metrics.contains_all("45 days, signed by ANNA BERG [E2]", ["45 days", "Anna Berg"])
    assert not eval_metrics.contains_all("45 days [E1]", ["45 days", "Anna Berg"])
    answered = {"status": "answered", "action": "emit", "answer": "Yes [E1]", "citations": []}
    assert "answered without citations" in final_answer_problems(answered)
    refused = {"status": "refused", "action": "emit", "answer": None, "refusal_reason": "nope"}
    assert final_answer_problems(refused) == ["unknown refusal_reason 'nope'"]


def test_retrieval_metrics_match_hand_computation():
    gold = {"q1": ["d1"], "q2": ["d3", "d4"]}
    ranked = {"q1": ["d2", "d1"], "q2": ["d3"]}
    scores = eval_metrics.retrieval_metrics(gold, ranked)
    assert scores["mrr"] == pytest.approx((0.5 + 1.0) / 2)
    assert scores["context_recall"] == pytest.approx((1.0 + 0.5) / 2)
    assert scores["context_precision"] == pytest.approx((0.5 + 1.0) / 2)
    assert scores == pytest.approx(
        {**scores, **eval_metrics._rank_metrics(gold, ranked)}
    )  # pytrec_eval agrees with the plain-Python formulas


def _row(qid: str, expected: str, status: str, **fields) -> dict:
    """A per-question row as eval/scoring.py builds it, with neutral defaults."""
    return {
        "question_id": qid,
        "expected_behavior": expected,
        "expected_refusal_reason": None,
        "status": status,
        "refusal_reason": None,
        "category": None,
        "gold_doc_ids": ["d1"] if expected == "answer" else [],
        "correct": False,
        "attributed": False,
        "complete": False,
        "outcome_correct": False,
        "format_ok": True,
        "leaked_doc_ids": [],
        "confidence": None,
        "pre_guardrail_answer": None,
        "pre_guardrail_supported": False,
        "gold_evidence_status": None,
        "gold_evidence_correct": None,
        **fields,
    }


def test_guardrail_axis_counts_blocked_unsupported_and_blocked_supported_answers():
    rows = [
        _row("q1", "answer", "blocked", pre_guardrail_answer="x"),  # unsupported, blocked
        _row("q2", "answer", "answered", pre_guardrail_answer="y"),  # unsupported, emitted
        _row("q3", "answer", "blocked", pre_guardrail_answer="z", pre_guardrail_supported=True),
        _row("q4", "refuse", "refused"),  # no pre-guardrail answer: not counted
    ]
    rows.append(
        _row("q5", "answer", "answered", pre_guardrail_answer="w", pre_guardrail_supported=True)
    )
    axis = eval_metrics.guardrail_axis(rows)
    assert axis["efficacy"] == pytest.approx(0.5)  # q1 of q1, q2
    assert axis["false_positive_rate"] == pytest.approx(0.5)  # q3 of the right q3, q5
    assert axis["blocked_correct_share"] == pytest.approx(0.5)  # q3 of the blocked q1, q3
    assert axis["miss_rate"] == pytest.approx(0.5)  # q2 of the emitted q2, q5
    counts = ("pre_guardrail_answers", "unsupported", "supported", "blocked")
    assert tuple(axis[k] for k in counts) == (4, 2, 2, 2)


def test_the_false_positive_rate_is_right_answers_blocked_over_right_answers():
    """A held-out set once read efficacy 0.0 and false-positive rate 1.0 from 4 blocks, all of
    right answers, and 0 of 21 wrong answers blocked: the rate was the share of blocks that
    were right. Over 25 right answers, 4 blocked is 0.16."""
    rows = [
        _row(
            f"r{i}",
            "answer",
            "blocked" if i < 4 else "answered",
            pre_guardrail_answer="x",
            pre_guardrail_supported=True,
        )
        for i in range(25)
    ]
    rows += [_row(f"w{i}", "answer", "answered", pre_guardrail_answer="y") for i in range(21)]
    axis = eval_metrics.guardrail_axis(rows)
    assert axis["efficacy"] == 0.0
    assert axis["false_positive_rate"] == pytest.approx(0.16)
    assert axis["blocked_correct_share"] == 1.0
    assert axis["miss_rate"] == pytest.approx(21 / 42)


def test_end_to_end_and_generation_axes_on_hand_made_rows():
    rows = [
        _row("q1", "answer", "answered", correct=True, attributed=True, outcome_correct=True),
        _row("q2", "answer", "refused", refusal_reason="insufficient_evidence"),
        _row("q3", "refuse", "answered", leaked_doc_ids=["secret"], format_ok=False),
        _row("q4", "refuse", "refused", refusal_reason="not_found", outcome_correct=True),
    ]
    axis = eval_metrics.end_to_end_axis(rows)
    assert axis["factuality"] == pytest.approx(0.5)
    assert axis["answered_precision"] == pytest.approx(0.5)  # q3 should have been refused
    assert axis["refusal_precision"] == pytest.approx(0.5)  # q2 refused, q4 refused correctly
    assert axis["refusal_recall"] == pytest.approx(0.5)  # q3 was not refused
    assert axis["format_compliance"] == pytest.approx(0.75)
    assert axis["permission_leaks"] == 1
    assert axis["outcome_accuracy"] == pytest.approx(0.5)
    assert axis["refusal_reason_accuracy"] == pytest.approx(0.0)
    assert axis["truthfulness"] == pytest.approx(0.0)  # (+1 + 0 - 1 + 0) / 4
    assert axis["over_refusal_rate"] == pytest.approx(0.5)  # q2
    assert axis["out_of_corpus_refused"] is None  # no such category here
    gold = [
        _row("q1", "answer", "answered", gold_evidence_status="answered"),
        _row("q2", "answer", "refused", gold_evidence_status="refused"),
    ]
    gold[0]["gold_evidence_correct"], gold[1]["gold_evidence_correct"] = True, False
    generation = eval_metrics.generation_axis(gold, n_answerable=3)
    assert generation["faithfulness_pass_rate"] == pytest.approx(0.5)
    assert generation["gold_evidence_factuality"] == pytest.approx(0.5)
    assert (generation["n"], generation["n_without_gold_span"]) == (2, 1)


def test_truthfulness_makes_a_wrong_answer_cost_more_than_a_refusal():
    wrong = _row("q1", "answer", "answered", correct=False)
    blocked = _row("q2", "answer", "blocked")
    refused_outside = _row("q3", "refuse", "refused", category="out_of_corpus")
    answered_outside = _row("q4", "refuse", "answered", category="out_of_corpus")
    assert eval_metrics.truthfulness([wrong, blocked]) == pytest.approx(-0.5)
    axis = eval_metrics.end_to_end_axis([refused_outside, answered_outside])
    assert axis["out_of_corpus_refused"] == pytest.approx(0.5)
    assert axis["truthfulness"] == pytest.approx(-0.5)


def _metrics(**axes) -> dict:
    base = {
        "retrieval": {"ndcg_at_10": 0.9},
        "generation": {"faithfulness_pass_rate": 0.9},
        "end_to_end": {"factuality": 0.8, "permission_leaks": 0},
    }
    for axis, values in axes.items():
        base[axis] = {**base[axis], **values}
    return {"set_hash": "x", "axes": base}


GATE = {
    "axes": {
        "retrieval": {"ndcg_at_10": {"direction": "higher", "tolerance": 0.02}},
        "generation": {"faithfulness_pass_rate": {"direction": "higher", "tolerance": 0.02}},
        "end_to_end": {
            "factuality": {"direction": "higher", "tolerance": 0.02},
            "permission_leaks": {"direction": "lower", "tolerance": 0, "max": 0},
        },
    }
}


def test_compare_names_the_regressed_axis_and_lucky_retrieval():
    baseline = _metrics()
    assert compare(_metrics(), baseline, GATE)["passed"]
    within = compare(_metrics(end_to_end={"factuality": 0.79}), baseline, GATE)
    assert within["passed"]
    worse = compare(_metrics(retrieval={"ndcg_at_10": 0.5}), baseline, GATE)
    assert worse["failed_axes"] == ["retrieval"] and "ndcg_at_10" in worse["failures"][0]
    leak = compare(_metrics(end_to_end={"permission_leaks": 1}), None, GATE)
    assert leak["failed_axes"] == ["end_to_end"]  # a hard ceiling, even without a baseline
    lucky = compare(
        _metrics(end_to_end={"factuality": 0.9}, generation={"faithfulness_pass_rate": 0.89}),
        baseline,
        GATE,
    )
    assert lucky["passed"] and lucky["lucky_retrieval"]
    assert "lucky retrieval" in lucky["notes"][0]
    other_set = compare(_metrics(), {**baseline, "set_hash": "y"}, GATE)
    assert other_set["failed_axes"] == ["eval_set"]


# ---------------------------------------------------------------- frozen sets


@pytest.fixture
def set_copy(tmp_path) -> Path:
    target = tmp_path / "sample-v1"
    shutil.copytree(ROOT / "eval" / "sets" / "sample-v1", target)
    return target


def test_committed_sets_verify():
    for name in ("sample-v1", "squad2-dev-v1", "cross-topic-v1"):
        eval_set = verify_set(ROOT / "eval" / "sets" / name, ROOT)
        assert eval_set.set_hash == eval_set.manifest["set_hash"]
    cross = verify_set(ROOT / "eval" / "sets" / "cross-topic-v1", ROOT)
    outside = [q for q in cross.questions if q["category"] == "out_of_corpus"]
    assert len(outside) == 150 and all(q["expected_behavior"] == "refuse" for q in outside)
    corpus_articles = {p.name for p in cross.corpus_dir.iterdir() if p.is_dir()}
    assert corpus_articles == {"normans", "huguenot"}  # Packet_switching is not in the corpus
    squad = verify_set(ROOT / "eval" / "sets" / "squad2-dev-v1", ROOT)
    refuse = sum(q["expected_behavior"] == "refuse" for q in squad.questions)
    assert len(squad.questions) >= 500 and 0.4 < refuse / len(squad.questions) < 0.6
    assert (squad.path / "NOTICE.md").read_text().count("CC BY-SA 4.0") >= 1
    assert squad.corpus_dir.is_relative_to(squad.path)  # copied in: no ../shared at gate time


def test_tampered_eval_file_is_refused(set_copy):
    verify_set(set_copy, ROOT)
    path = set_copy / "questions.jsonl"
    data = bytearray(path.read_bytes())
    data[10] ^= 1  # flip one bit of one byte
    path.write_bytes(bytes(data))
    with pytest.raises(EvalSetError, match=r"questions\.jsonl does not match manifest"):
        verify_set(set_copy, ROOT)
    with pytest.raises(EvalSetError, match=r"questions\.jsonl"):
        ev.release_eval(str(set_copy), reports_dir=None)  # refused before anything runs


def test_unlisted_or_missing_files_are_refused(set_copy):
    (set_copy / "extra.jsonl").write_text("{}\n")
    with pytest.raises(EvalSetError, match=r"extra\.jsonl is not in manifest"):
        verify_set(set_copy, ROOT)
    (set_copy / "extra.jsonl").unlink()
    (set_copy / "corpus.json").unlink()
    with pytest.raises(EvalSetError, match=r"corpus\.json is listed in manifest.json but"):
        verify_set(set_copy, ROOT)


def test_changed_referenced_corpus_file_is_refused(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOT / "data" / "sample" / "docs", root / "data" / "sample" / "docs")
    verify_set(ROOT / "eval" / "sets" / "sample-v2", root)
    target = root / "data" / "sample" / "docs" / "pricing" / "price-list-2026.md"
    target.write_text(target.read_text().replace("€49", "€59"))
    with pytest.raises(EvalSetError, match=r"pricing/price-list-2026\.md does not match"):
        verify_set(ROOT / "eval" / "sets" / "sample-v2", root)


# ---------------------------------------------------------------- runs on the sample set


@pytest.fixture(scope="module")
def gate_root(tmp_path_factory) -> Path:
    """A project root whose baseline is made by this test session (so the test does not depend on
    the committed baseline being current); sets, data and gate.yaml are the real ones."""
    root = tmp_path_factory.mktemp("gate-root")
    (root / "eval" / "baseline").mkdir(parents=True)
    (root / "eval" / "sets").symlink_to(ROOT / "eval" / "sets")
    (root / "data").symlink_to(ROOT / "data")
    shutil.copy(ROOT / "eval" / "gate.yaml", root / "eval" / "gate.yaml")
    return root


@pytest.fixture(scope="module")
def default_eval(sample_run, sample_config, gate_root, tmp_path_factory):
    """The default config on sample-v1, promoted as this session's baseline (the store is the
    session's sample store, so every stage is a cache hit)."""
    reports = tmp_path_factory.mktemp("reports")
    return ev.release_eval(
        "sample-v1", store=sample_config.store, promote=True, reports_dir=reports, root=gate_root
    )


def test_report_files_and_baseline(default_eval, gate_root):
    folder = default_eval.report_dir
    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(eval_metrics.AXES) <= set(metrics["axes"])
    assert metrics["axes"]["end_to_end"]["permission_leaks"] == 0
    assert metrics["axes"]["end_to_end"]["format_compliance"] == 1.0
    html = (folder / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3
    for heading in ("Expected vs actual, per category", "Wrong answers", "Over-refusals"):
        assert heading in html
    table = report.outcome_table(default_eval.run.per_question)
    assert sum(row["n"] for row in table) == 73
    answered = sum(row["answered, correct"] + row["answered, wrong"] for row in table)
    assert answered == metrics["counts"]["answered"]
    import pyarrow.parquet as pq

    assert pq.read_table(folder / "questions.parquet").num_rows == metrics["questions"] == 73
    baseline = json.loads((gate_root / "eval" / "baseline" / "sample-v1.json").read_text())
    assert baseline["set_hash"] == metrics["set_hash"]
    assert baseline["stage_versions"]["guardrails"] and baseline["models"]["sha256"]
    assert baseline["config"]["stages"]["retrieval"]["top_k"] == 30


def test_gate_fails_naming_the_axis_when_retrieval_is_degraded(default_eval, gate_root, tmp_path):
    store = default_eval.run.config.store
    with pytest.raises(GateFailure) as failure:
        ev.release_eval(
            "sample-v1",
            overrides=DEGRADED,
            store=store,
            gate=True,
            reports_dir=tmp_path,
            root=gate_root,
        )
    assert "retrieval" in failure.value.axes
    assert "end_to_end" in failure.value.axes
    assert "axis retrieval" in str(failure.value)
    with pytest.raises(GateFailure):  # --promote never writes a failing baseline
        ev.release_eval(
            "sample-v1",
            overrides=DEGRADED,
            store=store,
            promote=True,
            reports_dir=None,
            root=gate_root,
        )
    baseline = json.loads((gate_root / "eval" / "baseline" / "sample-v1.json").read_text())
    assert baseline["config"]["stages"]["retrieval"]["top_k"] == 30
    own_root = tmp_path / "root"  # leave the shared gate_root's baseline alone
    shutil.copytree(gate_root, own_root, symlinks=True)
    accepted = ev.release_eval(  # a wanted regression is written only with its reason
        "sample-v1",
        overrides=DEGRADED,
        store=store,
        promote=True,
        reports_dir=None,
        root=own_root,
        accept="test: retrieval degraded on purpose",
    )
    assert accepted.promoted is not None
    baseline = json.loads((own_root / "eval" / "baseline" / "sample-v1.json").read_text())
    assert baseline["accepted_regressions"]["reason"] == "test: retrieval degraded on purpose"
    assert any("axis retrieval" in f for f in baseline["accepted_regressions"]["failures"])


def test_two_runs_of_the_same_config_give_identical_metrics(default_eval, tmp_path):
    """Second run in a fresh store: retrieval → guardrails recompute (ingestion and indexing are
    linked in, they are the slow part and have their own tests)."""
    source = Path(default_eval.run.config.store)
    fresh = tmp_path / "artifacts"
    fresh.mkdir()
    # the per-document parts and the embedding cache too: the set's corpus lies elsewhere here,
    # so ingestion and indexing are assembled again, from the same parts and vectors (a cold
    # re-embedding batches chunks differently, which moves floats by ~1e-7)
    for stage in ("corpus", "ingestion", "indexing", "ingestion.parts", "indexing.embeddings"):
        if (source / stage).is_dir():
            shutil.copytree(source / stage, fresh / stage)
    again = ev.evaluate("sample-v1", store=fresh)
    assert not again.stage_results["rerank"].ref.cache_hit
    comparable = eval_metrics.comparable
    assert comparable(again.metrics) == comparable(default_eval.run.metrics)
    assert again.per_question == default_eval.run.per_question


def test_cli_gate_exits_non_zero_naming_the_axis(default_eval, tmp_path):
    from typer.testing import CliRunner

    from cli.app import app

    args = ["eval", "--set", "sample-v1", "--store", str(default_eval.run.config.store)]
    args += ["--gate", "--no-prefect", "--reports-dir", str(tmp_path)]
    args += [f"--set-override={k}={v}" for k, v in DEGRADED.items()]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "axis retrieval" in result.output
    assert list(tmp_path.glob("*/report.html"))


def test_the_release_eval_flow_publishes_its_summary_as_prefect_artifacts(sample_store, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.evaluation import release_eval_flow

    outcome = release_eval_flow()(
        "sample-v1",
        str(ROOT / "configs" / "pipeline.yaml"),
        {},
        str(sample_store / "artifacts"),
        False,
        False,
        str(tmp_path / "reports"),
    )
    assert outcome.report_dir is not None and (outcome.report_dir / "report.html").is_file()
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(
                    any_=["release-eval-sample-v1", "release-eval-sample-v1-metrics"]
                )
            )
        )
    kinds = {a.key: a.type for a in found}
    assert kinds.get("release-eval-sample-v1") == "markdown"
    assert kinds.get("release-eval-sample-v1-metrics") == "table"
    markdown = next(a for a in found if a.key == "release-eval-sample-v1")
    assert "factuality" in str(markdown.data)
