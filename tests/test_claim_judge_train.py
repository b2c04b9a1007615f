"""The claim judge's train-only path: RAGTruth QA train answers grouped into question folds, the
training rows built from recorded judge inputs (no dev answer anywhere), out-of-fold logits of a
windowed claim taken as its weakest window, and the gate choice's rule (no model, no GGUF)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import fit_fast_judge as fit
from scripts import train_claim_judge as train

DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
needs_data = pytest.mark.skipif(
    not (DATASETS / "ragtruth_qa_train").is_dir(), reason="../shared/datasets not here"
)


def test_a_question_has_one_fold_and_the_folds_cover_0_to_4():
    folds = {train.train_fold_of(str(n)) for n in range(200)}
    assert folds == set(range(train.TRAIN_FOLDS))
    assert train.train_fold_of("14292") == train.train_fold_of("14292")


@needs_data
def test_train_answers_share_no_question_with_dev():
    from bench import ragtruth

    train_questions = {a["source_id"] for a in fit.load_answers("train")}
    dev = ragtruth.load(DATASETS / ragtruth.FOLDER, "all")
    assert len(train_questions) > 300 and not train_questions & {a["source_id"] for a in dev}


def _recorded(answer: dict, hallucinated_second: bool) -> dict:
    evidence = next(iter(answer["evidence"].values()))["text"]
    claims = [
        {
            "text": "It is sold in Hayward.",
            "judged": {"claim_side": "It is sold in Hayward. | q", "evidence_side": evidence},
            "hallucinated": False,
        },
        {
            "text": "It opens at 9 am.",
            "judged": {
                "claim_side": "It opens at 9 am. | q",
                "evidence_side": evidence,
                "windows": [["It opens | q", evidence], ["at 9 am.", evidence]],
            },
            "hallucinated": hallucinated_second,
        },
        {"text": "Sure, here it is:", "judged": None, "hallucinated": False},
    ]
    return {"id": answer["id"], "fold": 0, "claims": claims}


@needs_data
def test_training_rows_come_from_train_answers_and_carry_their_question_fold(tmp_path: Path):
    answers = fit.load_answers("train", 2)
    records = tmp_path / "records.jsonl"
    recorded = [_recorded(answers[0], False), _recorded(answers[1], True)]
    records.write_text("".join(json.dumps(r) + "\n" for r in recorded))
    train.build_train_data(records, tmp_path / "data", squad_questions=3)
    rows = [json.loads(line) for line in (tmp_path / "data" / "train.jsonl").open()]
    folds = {a["source_id"]: train.train_fold_of(a["source_id"]) for a in answers}
    ours = [r for r in rows if r["source"] in ("ragtruth", "swapped", "removed")]
    assert ours and all(r["fold"] == folds[r["question_id"].split(":", 1)[1]] for r in ours)
    assert not any("fold" in r for r in rows if r["source"] in ("squad", "halueval"))
    judged = [(r["question"], r["label"]) for r in rows if r["source"] == "ragtruth"]
    # a supported long claim: each window is a supported pair; a hallucinated one: none
    assert judged.count(("It is sold in Hayward. | q", 1)) == 2
    assert judged.count(("It opens | q", 1)) == 1 and judged.count(("at 9 am.", 1)) == 1
    assert not [q for q, label in judged if not label and q in ("It opens | q", "at 9 am.")]


@needs_data
def test_a_dev_answer_in_the_records_is_refused(tmp_path: Path):
    from bench import ragtruth

    dev = ragtruth.load(DATASETS / ragtruth.FOLDER, "all", 1)[0]
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"id": dev["id"], "claims": []}) + "\n")
    with pytest.raises(KeyError):
        train.build_train_data(records, tmp_path / "data", squad_questions=1)


def test_a_windowed_claim_gets_its_weakest_windows_logit(tmp_path: Path):
    claims = tmp_path / "claims.jsonl"
    rows = [
        {"answer": "a", "index": 0, "claim_side": "c0", "evidence_side": "e", "label": 1},
        {"answer": "a", "index": 2, "claim_side": "w1", "evidence_side": "e", "label": 0},
        {"answer": "a", "index": 2, "claim_side": "w2", "evidence_side": "e", "label": 0},
    ]
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"oof": [1.5, 0.25, -2.0]}))
    records = tmp_path / "records.jsonl"
    answer = {
        "id": "a",
        "claims": [{"judged": {"p_yes": None}}, {"judged": None}, {"judged": {"p_yes": None}}],
    }
    records.write_text(json.dumps(answer) + "\n")
    fit.logits_from_sweep(results, claims, records, "oof")
    written = json.loads(records.read_text())
    assert [(c["judged"] or {}).get("logit") for c in written["claims"]] == [1.5, None, -2.0]
    assert fit._judged_logits(claims, [1.5, 0.25, -2.0]) == ([1.5, -2.0], [1, 0])
    assert fit.pair_table(claims, [1.5, 0.25, -2.0])[("w2", "e")] == -2.0
    with pytest.raises(SystemExit):
        fit.pair_table(claims, [1.0])


def test_figures_and_the_choice_keep_the_recall_margin_first():
    assert fit.figures([True, True, False, False], [True, False, True, False]) == {
        "answers": 4,
        "hallucinated": 2,
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "correct_flagged": 0.5,
    }
    setting = {"lexical_weight": 0.0, "claim_floor": 0.7, "answer": 0.6}
    rows = [
        setting | {"f1": 0.70, "recall": 0.70, "correct_flagged": 0.10},  # best F1, low recall
        setting | {"f1": 0.60, "recall": 0.85, "correct_flagged": 0.25},  # too many flagged
        setting | {"f1": 0.55, "recall": 0.82, "correct_flagged": 0.15, "answer": 0.55},
    ]
    assert fit.choose(rows)["answer"] == 0.55
    assert fit.choose(rows[:2])["correct_flagged"] == 0.25  # recall first when nothing fits both
    assert fit.choose(rows[:1])["f1"] == 0.70
