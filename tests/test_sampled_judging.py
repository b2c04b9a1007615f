"""Sampled judging: the LLM judge's second opinion on a drawn stream of a run's answers, with a
stub judge (no GGUF): who is drawn and with what weight, disagreements queued first with why,
a judge failure a technical error, and `grounding review sample-judge` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from quality import review
from quality import sampled_judging as sj
from stages.guardrails import Config, checker
from stages.guardrails import judge as judge_mod
from stages.store import ArtifactStore
from tests.review_support import cli_settings, trace

RUN = "20261128T010000-sj000001"
# (question, inline stratum, fast score of its one claim, the draft)
ANSWERS = [
    ("q01", "emitted", 0.7, "Refunds are paid within 14 days after the item is returned [E1]."),
    ("q02", "emitted", 0.65, "Refunds are paid within 14 days of returning the goods [E1]."),
    ("q03", "emitted", 0.7, "Refunds are normally paid within 14 days of a return [E1]."),
    ("q04", "refused", 0.0, ""),
] + [
    (f"q{n:02d}", "emitted", 0.95, "Refunds are paid within 14 days of each return [E1].")
    for n in range(5, 45)
]


def stub_score(claim: str, spans: list[str], question: str | None, part: bool) -> float:
    if "normally" in claim:
        raise judge_mod.JudgeError("the model could not be loaded")
    return 0.1 if "item is returned" in claim else 0.99


def stub_toolkit(config: Config) -> checker.Toolkit:
    stub = judge_mod.Judge("llm", "stub", stub_score, None)
    return checker.Toolkit(config, _judge=stub)


def make_run(runs_dir: Path) -> Path:
    folder = runs_dir / RUN
    folder.mkdir(parents=True)
    lines = []
    for qid, stratum, score, answer in ANSWERS:
        row = trace(qid, stratum, score, answer)
        for claim in row["guardrails"]["claims"]:
            claim["judge"] = "fast"  # the fast model decided it inline
        row["guardrails"]["action"] = "emit" if stratum != "refused" else None
        lines.append(json.dumps(row))
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps({"run_id": RUN, "stages": {}}))
    return folder


@pytest.fixture
def judged(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    run = make_run(tmp_path / "runs")
    config = sj.SampledJudgingConfig(rate=0.25, band=(0.5, 0.8), seed=1)
    base = Config()
    report = sj.sample_judge(run, store, config, base, toolkit=stub_toolkit(base))
    return store, run, config, report


def test_unsure_answers_are_always_drawn_and_the_rest_at_the_rate_with_weights(judged):
    _, _, config, report = judged
    drawn = {a["answer_id"].split("/")[1]: a for a in report["answers"]}
    assert {"q01", "q02", "q03"} <= set(drawn)  # every claim scored inside the band
    assert all(drawn[q]["inclusion_probability"] == 1.0 for q in ("q01", "q02", "q03"))
    assert "q04" not in drawn and report["with_draft"] == len(ANSWERS) - 1
    others = [a for q, a in drawn.items() if q not in ("q01", "q02", "q03")]
    assert 0 < len(others) < 40  # about a quarter of the 41 sure answers
    assert all(a["sampled_because"] == "rate" and a["weight"] == 4.0 for a in others)
    # the same seed draws the same answers; the draw is the answer's, not its position's
    items = review.items_from_run(judged[1])
    first, _ = sj.draw(items, config)
    again, _ = sj.draw(list(reversed(items)), config)
    assert {i["answer_id"] for i in first} == {i["answer_id"] for i in again}


def test_a_disagreement_is_queued_first_with_why_and_a_judge_failure_is_no_verdict(judged):
    store, run, _, report = judged
    assert report["technical_errors"] == 1
    assert report["errors"][0]["answer_id"].endswith("/q03")
    assert "could not be loaded" in report["errors"][0]["error"]
    assert report["disagreeing_answers"] == 1 and report["answer_verdict_changes"] == 1
    assert report["claim_disagreements"] == {"inline_supported_second_not": 1}
    # one disagreeing answer of weight 1 among the judged answers' weights
    judged_weight = sum(
        a["weight"] for a in report["answers"] if not a["error"]
    )  # 2 unsure judged + 4 x the rate-drawn
    assert report["weighted_share_disagreeing"] == pytest.approx(1 / judged_weight, abs=1e-4)

    batches = review.list_batches(store)
    assert batches[0]["kind"] == review.DISAGREEMENTS and batches[0]["key"] == report["batch"]
    items = review.load_items(store, review.find_batch(store, report["batch"]))
    assert [i["question_id"] for i in items] == ["q01"]  # not q03: a failure is not a verdict
    item = items[0]
    assert "fast judge unsure" in item["queue_reason"]
    assert "inline supported (0.70), LLM judge unsupported" in item["queue_reason"]
    assert "answer: inline emit, LLM judge" in item["queue_reason"]
    assert item["inclusion_probability"] == 1.0 and item["weight"] == 1.0
    opinion = json.loads(item["second_opinion_json"])
    assert opinion["inline_action"] == "emit" and opinion["action"] != "emit"
    # a reviewer can judge it like any batch item
    saved = review.save_verdict(
        store,
        report["batch"],
        {item["answer_id"]: item},
        "ana",
        {"answer_id": item["answer_id"], "verdict": "hallucinated"},
    )
    assert saved["verdict"] == "hallucinated"
    why = [a["why"] for a in report["answers"] if a["disagrees"]]
    assert why == [item["queue_reason"]]
    on_disk = json.loads((run / sj.REPORT_FILE).read_text())
    assert on_disk["batch"] == report["batch"] and on_disk["judged"] == report["judged"]


def test_nothing_is_queued_when_the_judges_agree(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    run = make_run(tmp_path / "runs")
    base = Config()
    agreeing = checker.Toolkit(base, _judge=judge_mod.Judge("llm", "yes", lambda *a: 0.99, None))
    config = sj.SampledJudgingConfig(rate=0.0)
    report = sj.sample_judge(run, store, config, base, toolkit=agreeing)
    assert report["drawn"] == 3 and report["drawn_rate"] == 0
    assert report["disagreeing_answers"] == 0 and report["batch"] is None
    assert review.list_batches(store) == []


def test_the_settings_are_checked_and_read_from_the_quality_file(tmp_path):
    path = tmp_path / "quality.yaml"
    path.write_text("sampled_judging:\n  rate: 0.3\n  band: [0.4, 0.9]\n")
    config = sj.load_config(path, {"seed": 7, "rate": None})
    assert (config.rate, config.band, config.seed) == (0.3, (0.4, 0.9), 7)
    assert config.judge == {"fast_judge": None}
    with pytest.raises(sj.SampledJudgingError, match="band"):
        sj.load_config(path, {"band": (0.9, 0.2)})
    with pytest.raises(sj.SampledJudgingError, match="no quality config"):
        sj.load_config(tmp_path / "nope.yaml")
    repo = sj.load_config(Path(__file__).resolve().parent.parent / "configs" / "quality.yaml")
    assert repo.judge == {"fast_judge": None} and 0 < repo.rate < 1


def test_the_command_counts_a_judge_it_cannot_load_as_technical_errors(tmp_path):
    from cli.app import app

    make_run(tmp_path / "runs")
    settings = cli_settings(tmp_path / "store", tmp_path / "runs")
    settings += ["--set", f"guardrails.llm.path={tmp_path / 'missing.gguf'}"]
    settings += ["--set", f"guardrails.judge_cache_dir={tmp_path / 'cache'}"]
    done = CliRunner().invoke(app, ["review", "sample-judge", RUN[:12], "--rate", "0", *settings])
    assert done.exit_code == 3, done.output
    assert "3 of 43 answers re-judged (3 unsure, 0 by the 0 share)" in done.output
    assert "0 judged, 3 technical errors" in done.output
    report = json.loads((tmp_path / "runs" / RUN / sj.REPORT_FILE).read_text())
    assert report["disagreeing_answers"] == 0 and report["batch"] is None
    bad = CliRunner().invoke(app, ["review", "sample-judge", RUN, "--band", "x", *settings])
    assert bad.exit_code == 2 and "--band 'x'" in bad.output


def test_the_efficacy_report_counts_a_disagreements_batch_only_when_named(judged, tmp_path):
    from cli.app import app

    store, _, _, report = judged
    item = review.load_items(store, review.find_batch(store, report["batch"]))[0]
    row = {"answer_id": item["answer_id"], "verdict": "hallucinated"}
    review.save_verdict(store, report["batch"], {item["answer_id"]: item}, "ana", row)
    settings = cli_settings(tmp_path / "store", tmp_path / "runs")
    runner = CliRunner()
    default = runner.invoke(app, ["review", "report", "--json", *settings])
    assert default.exit_code == 1 and "no judged review batch" in default.output
    named = runner.invoke(
        app, ["review", "report", "--json", "--batch", report["batch"][:12], *settings]
    )
    assert named.exit_code == 0, named.output
    listed = runner.invoke(app, ["review", "batches", *settings])
    assert "disagreements" in listed.output and "ana 1" in listed.output
