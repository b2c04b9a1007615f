"""`grounding calibrate --from-reviews`: the gate's lines refitted on verdicts, grouped by
question, written as an overlay the guardrails config accepts; too few verdicts are refused."""

from __future__ import annotations

import json
import random

import pytest
import yaml
from typer.testing import CliRunner

from quality import calibrate, review
from stages.guardrails import Config
from stages.store import ArtifactStore
from tests.review_support import cli_settings

BASE = Config(
    aggregate="floor_mean",
    claim_floor=0.7,
    answer_threshold=0.675,
    judge_threshold=0.9,
    lexical_weight=0.0,
)


def _item(number: int, bad: bool, rng: random.Random, pairs: bool = False) -> dict:
    """A three-claim draft: a bad one has a claim the judge finds weak (p about 0.45), a good
    one claims at p 0.55-0.75, so the base floor 0.7 (p 0.63) flags a third of the good ones."""
    claims = []
    for index in range(3):
        p = rng.uniform(0.3, 0.5) if bad and index == 0 else rng.uniform(0.55, 0.75)
        claim = {"text": f"c{index}", "score": min(1.0, p / 0.9), "status": "weak", "p": p}
        claim.update(judge="fast", critical=False, lexical=0.6)
        if pairs:  # the fast judge is fooled by bad claims; the slow judge is not
            claim["fast_p"], claim["slow_p"] = (0.9 if bad and index == 0 else p + 0.1), p
        claims.append(claim)
    claims.append({"text": "verbatim", "score": 1.0, "status": "supported", "judge": "verbatim"})
    return {
        "answer_id": f"run/q{number}",
        "question": f"question {number // 2}",  # two drafts per question
        "stratum": "emitted",
        "weight": 1.0,
        "claims_json": json.dumps(claims),
    }


def _data(n: int, pairs: bool = False):
    rng = random.Random(7)
    items = [_item(i, i % 3 == 0, rng, pairs) for i in range(n)]
    labels = {
        i["answer_id"]: "hallucinated" if int(i["answer_id"][5:]) % 3 == 0 else "correct"
        for i in items
    }
    return items, labels


def test_too_few_verdicts_are_refused_saying_how_many_more():
    items, labels = _data(30)
    with pytest.raises(calibrate.CalibrationError, match="judge at least 10 more"):
        calibrate.calibrate(items, labels, BASE)
    only_good = {k: "correct" for k in labels}
    with pytest.raises(calibrate.CalibrationError, match="at least 8 bad"):
        calibrate.calibrate(*_data(60)[:1], only_good, BASE)


def test_the_fit_separates_what_the_base_lines_cannot_and_holds_out_of_fold():
    items, labels = _data(90)
    result = calibrate.calibrate(items, labels, BASE)
    cv = result["cross_validated"]
    assert cv["fitted"]["f1"] == 1.0 and cv["fitted"]["correct_flagged"] == 0.0
    assert cv["fitted"]["f1"] > cv["base"]["f1"]
    fitted = result["fitted"]
    assert fitted["fit_f1"] == 1.0
    assert {k: fitted[k] for k in result["base"]} != result["base"]
    assert result["accept_refitted"] is False and "accept kept" in result["accept_note"]
    # folds never split a question
    folds = {}
    for item in items:
        group = calibrate.group_of(item["question"])
        folds.setdefault(group, set()).add(calibrate.fold_of(group))
    assert all(len(f) == 1 for f in folds.values())
    assert len(result["verdicts"]) == 90


def test_the_fast_judges_accept_line_is_refitted_when_claims_carry_both_judges():
    fast = {"model_path": "m", "accept": 0.85, "accept_min_share": 0.0}
    base = Config(**{**BASE.model_dump(), "fast_judge": fast})
    items, labels = _data(90, pairs=True)
    result = calibrate.calibrate(items, labels, base)
    assert result["accept_refitted"]
    assert result["fitted"]["accept"] > 0.9  # the fooled 0.9 must go to the slow judge
    keys = calibrate.overlay(result, base)
    assert keys["fast_judge"]["accept"] == result["fitted"]["accept"]
    assert keys["fast_judge"]["model_path"] == "m"  # the whole block: includes merge shallowly


def test_the_cli_writes_an_overlay_the_guardrails_config_accepts(tmp_path):
    from cli.app import app

    store = ArtifactStore(tmp_path / "store")
    items, labels = _data(60)
    for item in items:  # a whole review item: a batch is built strictly against its contract
        item.update(run_id="run", question_id=item["answer_id"][4:], draft="text")
        item.update(status="answered", action="emit", refusal_reason=None, final_answer="text")
        item.update(confidence=None, overall_score=None, low_confidence=False)
        item.update(inclusion_probability=1.0, evidence_json="[]")
    config = review.SampleConfig(n=60)
    ref = review.write_batch(store, items, config, "run")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(
        "\n".join(json.dumps({"answer_id": k, "verdict": v}) for k, v in labels.items())
    )
    flags = cli_settings(tmp_path / "store", tmp_path / "runs")
    runner = CliRunner()
    done = runner.invoke(
        app, ["review", "import", str(verdicts), "--batch", ref.key, "--reviewer", "x", *flags]
    )
    assert done.exit_code == 0, done.output
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump(BASE.model_dump(exclude_defaults=True)))
    out = tmp_path / "overlay.yaml"
    args = ["calibrate", "--from-reviews", "--guardrails", str(base), "--out", str(out), *flags]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "out-of-fold fitted" in done.output
    keys = yaml.safe_load(out.read_text())
    merged = Config(**{**BASE.model_dump(), **keys})
    assert merged.answer_threshold == keys["answer_threshold"]
    assert "# Fitted on 60 judged drafts" in out.read_text()
    sidecar = json.loads((tmp_path / "overlay.yaml.json").read_text())
    assert len(sidecar["verdicts"]) == 60 and sidecar["sources"]["batches"] == [ref.key[:12]]
    done = runner.invoke(app, ["calibrate", *flags])
    assert done.exit_code == 2 and "--from-reviews" in done.output


def test_a_cap_on_correct_answers_flagged_bounds_the_fit():
    items, labels = _data(90)
    for item in items[1::3]:  # good drafts that look bad: no line separates them any more
        claims = json.loads(item["claims_json"])
        claims[0]["p"] = 0.4
        item["claims_json"] = json.dumps(claims)
    free = calibrate.calibrate(items, labels, BASE)
    capped = calibrate.calibrate(items, labels, BASE, max_correct_flagged=0.05)
    assert free["in_sample"]["fitted"]["correct_flagged"] > 0.05
    assert capped["in_sample"]["fitted"]["correct_flagged"] <= 0.05
    assert "at most 0.05" in capped["objective"]
