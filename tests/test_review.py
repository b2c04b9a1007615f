"""The review queue: stratified batches, verdicts saved at once, imports all-or-nothing, the
review page's API, and `grounding review` end to end on a hand-made run."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from typer.testing import CliRunner

from quality import efficacy, review, review_page
from stages.store import ArtifactStore
from tests.review_support import MIX, cli_settings, make_run


@pytest.fixture
def batch(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    run = make_run(tmp_path / "runs")
    items = review.items_from_run(run)
    config = review.SampleConfig(n=20, seed=3)
    drawn = review.draw(items, config)
    ref = review.write_batch(store, drawn, config, run.name)
    return store, ref, drawn, items


def test_items_carry_the_stratum_the_draft_and_the_claims(tmp_path):
    items = review.items_from_run(make_run(tmp_path / "runs"))
    assert Counter(i["stratum"] for i in items) == {s: n for s, n, _ in MIX}
    blocked = next(i for i in items if i["stratum"] == "blocked")
    assert blocked["final_answer"] is None and blocked["draft"].startswith("Refunds")
    refused = next(i for i in items if i["stratum"] == "refused")
    assert refused["draft"] is None and refused["refusal_reason"] == "insufficient_evidence"
    assert json.loads(blocked["claims_json"])[0]["lexical"] == 0.8


def test_the_draw_covers_every_stratum_over_samples_low_confidence_and_keeps_rates_unbiased(
    batch,
):
    _, _, drawn, items = batch
    assert len(drawn) == 20
    assert {i["stratum"] for i in drawn} == {"emitted", "revised", "blocked", "refused"}
    # the weights of a cell add up to the cell's size: weighted counts estimate the run's
    for stratum, total, low in MIX:
        for is_low, size in ((True, low), (False, total - low)):
            cell = [i for i in drawn if i["stratum"] == stratum and i["low_confidence"] == is_low]
            assert sum(i["weight"] for i in cell) == pytest.approx(size if cell else 0)
    low_share_drawn = sum(i["low_confidence"] for i in drawn) / len(drawn)
    low_share_run = sum(review.is_low(i, 0.6) for i in items) / len(items)
    assert low_share_drawn > low_share_run


def test_allocation_takes_everything_when_n_is_larger_and_never_more_than_a_cell():
    assert review.allocate({"a": 2, "b": 3}, 10, {"a": 1, "b": 1}) == {"a": 2, "b": 3}
    take = review.allocate({"a": 1, "b": 100, "c": 0}, 10, {"a": 3, "b": 1, "c": 1})
    assert take == {"a": 1, "b": 9, "c": 0}


def test_a_batch_is_a_content_addressed_store_artifact(batch):
    store, ref, drawn, _ = batch
    assert ref.stage == "review_batch"
    again = review.write_batch(store, drawn, review.SampleConfig(n=20, seed=3), "x")
    assert again.key != ref.key  # another source: another batch
    same = review.write_batch(store, drawn, review.SampleConfig(n=20, seed=3), drawn[0]["run_id"])
    assert same.key == ref.key and same.cache_hit
    assert [i["answer_id"] for i in review.load_items(store, ref)] == [
        i["answer_id"] for i in drawn
    ]
    assert review.find_batch(store, ref.key[:8]).key == ref.key
    with pytest.raises(review.ReviewError, match="no review batch"):
        review.find_batch(store, "ffffffff")


def test_a_batch_is_built_strictly_against_its_contract(batch, tmp_path):
    """A field left out, one the contract lacks or a value of the wrong type fails loudly and
    writes nothing; only a sample leaves out the disagreement fields (null there)."""
    from stages.contracts import ContractError

    sampled, ref, drawn, _ = batch
    store = ArtifactStore(tmp_path / "other")
    config = review.SampleConfig(n=20, seed=3)
    sample = review.load_items(sampled, ref)
    assert {i["queue_reason"] for i in sample} == {None}
    missing = [dict(drawn[0]), *drawn[1:]]
    del missing[0]["evidence_json"]
    with pytest.raises(ContractError, match="row 0.*missing field 'evidence_json'"):
        review.write_batch(store, missing, config, "r")
    with pytest.raises(ContractError, match="field 'reviewer' is not in the contract"):
        review.write_batch(store, [{**drawn[0], "reviewer": "x"}], config, "r")
    with pytest.raises(ContractError, match="field 'weight' expects double"):
        review.write_batch(store, [{**drawn[0], "weight": "heavy"}], config, "r")
    with pytest.raises(ContractError, match="missing field 'queue_reason'"):
        review.write_batch(store, drawn[:1], config, "r", kind=review.DISAGREEMENTS)
    with pytest.raises(review.ReviewError, match="unknown batch kind"):
        review.write_batch(store, drawn[:1], config, "r", kind="sampled")
    assert store.list_refs(review.STAGE) == []
    queued = [{**drawn[0], "queue_reason": "why", "second_opinion_json": "{}"}]
    written = review.write_batch(store, queued, config, "r", kind=review.DISAGREEMENTS)
    assert review.load_items(store, written)[0]["queue_reason"] == "why"


def test_verdicts_are_appended_per_reviewer_the_latest_counts_and_a_torn_line_is_skipped(batch):
    store, ref, drawn, _ = batch
    items = {i["answer_id"]: i for i in drawn}
    first = drawn[0]["answer_id"]
    review.save_verdict(store, ref.key, items, "ana", {"answer_id": first, "verdict": "correct"})
    review.save_verdict(
        store,
        ref.key,
        items,
        "ana",
        {"answer_id": first, "verdict": "hallucinated", "claims": {"0": "unsupported"}},
    )
    path = review.verdicts_dir(store, ref.key) / "ana.jsonl"
    with open(path, "a") as handle:
        handle.write('{"answer_id": "torn')  # a killed write
    latest = review.read_verdicts(store, ref.key)["ana"][first]
    assert latest["verdict"] == "hallucinated" and latest["claims"] == {"0": "unsupported"}
    assert len(path.read_text().splitlines()) == 3  # append-only: nothing rewritten
    for bad, message in (
        ({"answer_id": "nope", "verdict": "correct"}, "not in this batch"),
        ({"answer_id": first, "verdict": "maybe"}, "not one of"),
        ({"answer_id": first, "claims": {"7": "supported"}}, "claims"),
        ({"answer_id": first}, "empty"),
    ):
        with pytest.raises(review.ReviewError, match=message):
            review.save_verdict(store, ref.key, items, "ana", bad)
    with pytest.raises(review.ReviewError, match="reviewer name"):
        row = {"answer_id": first, "verdict": "correct"}
        review.save_verdict(store, ref.key, items, "../x", row)


def test_an_import_with_one_bad_row_writes_nothing_and_names_every_bad_row(batch, tmp_path):
    store, ref, drawn, _ = batch
    ids = [i["answer_id"] for i in drawn]
    bad = tmp_path / "verdicts.csv"
    bad.write_text(
        f"answer_id,verdict,note\n{ids[0]},correct,fine\nunknown/q9,correct,\n{ids[1]},wrong,\n"
    )
    stored, errors = review.import_verdicts(store, ref.key, bad, "bo")
    assert stored == 0 and len(errors) == 2
    assert errors[0].startswith("verdicts.csv:3:") and "not in this batch" in errors[0]
    assert errors[1].startswith("verdicts.csv:4:") and "'wrong'" in errors[1]
    assert review.read_verdicts(store, ref.key) == {}
    good = tmp_path / "verdicts.jsonl"
    good.write_text(
        "\n".join(
            json.dumps({"answer_id": i, "verdict": "correct", "reviewer": "cy"}) for i in ids[:3]
        )
    )
    assert review.import_verdicts(store, ref.key, good, None) == (3, [])
    assert len(review.read_verdicts(store, ref.key)["cy"]) == 3


def test_the_page_api_saves_a_verdict_at_once_and_refuses_a_bad_one(batch):
    from fastapi.testclient import TestClient

    store, ref, drawn, _ = batch
    client = TestClient(review_page.app(store, ref.key[:10], "ana"))
    page = client.get("/").text
    assert "<script>" in page and "<style>" in page
    assert "http://" not in page and "https://" not in page  # no asset from the network
    first = drawn[0]["answer_id"]
    saved = client.post("/api/verdicts", json={"answer_id": first, "verdict": "hallucinated"})
    assert saved.status_code == 200 and saved.json()["reviewer"] == "ana"
    assert review.read_verdicts(store, ref.key)["ana"][first]["verdict"] == "hallucinated"
    refused = client.post("/api/verdicts", json={"answer_id": first, "verdict": "meh"})
    assert refused.status_code == 422 and "not one of" in refused.json()["detail"]
    listed = client.get("/api/items").json()
    assert listed["verdicts"][first]["verdict"] == "hallucinated"
    item = next(i for i in listed["items"] if i["draft"])
    claim = item["claims"][0]
    assert claim["mark"] == [0, len(claim["text"])]
    cited = claim["cited"][0]
    section = item["evidence"][0]["text"]
    assert section[cited["start"] : cited["end"]].startswith("Refunds are paid")


def test_efficacy_rates_follow_their_definitions_with_weights():
    def item(answer_id, stratum, weight=1.0):
        return {"answer_id": answer_id, "stratum": stratum, "weight": weight}

    items = [
        item("a", "blocked"),
        item("b", "blocked"),
        item("c", "emitted", 3.0),
        item("d", "emitted"),
        item("e", "revised"),
        item("f", "refused"),
        item("g", "refused"),
    ]
    labels = {
        "a": "hallucinated",
        "b": "correct",
        "c": "correct",
        "d": "hallucinated",
        "e": "should_have_refused",
        "f": "correct",
        "g": "wrongly_refused",
    }
    rates = efficacy.rates(items, labels)
    assert rates["efficacy"]["rate"] == pytest.approx(2 / 3, abs=1e-4)  # a, e caught; d missed
    assert rates["false_positive_rate"]["rate"] == pytest.approx(1 / 4, abs=1e-4)  # b of b + c(3)
    assert rates["blocked_correct_share"]["rate"] == pytest.approx(0.5, abs=1e-4)
    assert rates["correct_flagged_rate"]["rate"] == pytest.approx(1 / 4, abs=1e-4)
    assert rates["miss_rate"]["rate"] == pytest.approx(1 / 4, abs=1e-4)  # d of c(3) + d
    assert rates["intervention_precision"]["rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert rates["refusal_correctness"]["rate"] == pytest.approx(0.5, abs=1e-4)
    fp = rates["false_positive_rate"]
    assert fp["n_eff"] == pytest.approx(1.6)  # (1 + 3)^2 / (1 + 9): b and c
    assert fp["low"] < fp["rate"] < fp["high"]


def test_wilson_and_kappa_match_reference_values():
    low, high = efficacy.wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = efficacy.wilson(5, 10)
    assert (low, high) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    # Cohen's 1960 style example: 20 items, agreement 0.7, chance 0.5 -> kappa 0.4
    first = ["yes"] * 10 + ["no"] * 10
    second = ["yes"] * 7 + ["no"] * 3 + ["yes"] * 3 + ["no"] * 7
    assert efficacy.cohen_kappa(first, second) == pytest.approx(0.4)
    assert efficacy.cohen_kappa([], []) is None


def test_the_cli_samples_imports_and_reports_with_agreement(tmp_path):
    from cli.app import app

    store, runs = tmp_path / "store", tmp_path / "runs"
    run = make_run(runs)
    runner = CliRunner()
    flags = cli_settings(store, runs)
    done = runner.invoke(app, ["review", "sample", run.name[:10], "--n", "12", "--json", *flags])
    assert done.exit_code == 0, done.output
    key = json.loads(done.output)["batch"]
    items = review.load_items(ArtifactStore(store), review.find_batch(ArtifactStore(store), key))
    rows = []
    for number, item in enumerate(items):
        verdict = "correct" if item["stratum"] in ("emitted", "refused") else "hallucinated"
        other = verdict if number % 4 else "should_have_refused"
        rows.append({"answer_id": item["answer_id"], "verdict": verdict, "reviewer": "ana"})
        rows.append({"answer_id": item["answer_id"], "verdict": other, "reviewer": "bo"})
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    done = runner.invoke(app, ["review", "import", str(path), "--batch", key[:12], *flags])
    assert done.exit_code == 0, done.output
    out = tmp_path / "report"
    done = runner.invoke(app, ["review", "report", "--json", "--out", str(out), *flags])
    assert done.exit_code == 0, done.output
    figures = json.loads(done.output)
    assert figures["agreement"][0]["reviewers"] == ["ana", "bo"]
    assert figures["agreement"][0]["answers"] == 12
    assert figures["agreement"][0]["kappa"] < 1
    assert len(figures["disagreements"]) == 3  # numbers 0, 4, 8
    assert figures["rates"]["false_positive_rate"]["rate"] == 0.0
    assert (out / "report.md").read_text().startswith("# Guardrail efficacy")
    done = runner.invoke(app, ["review", "sample", "nope", *flags])
    assert done.exit_code == 2 and "no run 'nope'" in done.output
    serve = ["review", "serve", key, "--reviewer", "a", "--host", "0.0.0.0"]
    done = runner.invoke(app, [*serve, *flags])
    assert done.exit_code == 2 and "loopback" in done.output


def test_artifact_gc_never_collects_a_review_batch(batch, tmp_path):
    from flows import ops

    store, ref, _, _ = batch
    assert str(ref.path) not in [str(p) for p in ops.garbage(store, tmp_path / "runs")]


@pytest.mark.parametrize(
    "command",
    [["review"], *[["review", c] for c in ("sample", "batches", "serve", "import", "report")]]
    + [["calibrate"]],
)
def test_every_review_command_has_help(command):
    from cli.app import app

    done = CliRunner().invoke(app, [*command, "--help"])
    assert done.exit_code == 0, done.output
    assert "Usage" in done.output
