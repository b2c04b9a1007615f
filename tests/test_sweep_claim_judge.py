"""scripts/sweep_claim_judge.py: a fold model never trains on its held-out questions, a recipe's
SQuAD cut and repeats are applied, the teacher's P(yes) only softens RAGTruth rows, and the fp16
chunks that come back from the GPU machine join into the bytes that left it (no torch, no GPU)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from scripts import sweep_claim_judge as sweep  # noqa: E402

ROWS = [
    {"question": "q0", "passage": "p0", "label": 1, "source": "ragtruth", "fold": 0},
    {"question": "q1", "passage": "p1", "label": 0, "source": "ragtruth", "fold": 1},
    {"question": "q2", "passage": "p2", "label": 0, "source": "removed", "fold": 1},
    {"question": "s0", "passage": "c0", "label": 1, "source": "squad", "rank": 0},
    {"question": "s9", "passage": "c9", "label": 0, "source": "squad", "rank": 9},
    {"question": "h0", "passage": "k0", "label": 1, "source": "halueval"},
]


def test_a_fold_model_never_sees_its_held_out_questions():
    recipe = {"squad": 10**6, "repeat": 1}
    kept = sweep._rows_for(ROWS, recipe, fold=1)
    assert all(row.get("fold") != 1 for row in kept)
    assert {r["question"] for r in kept} == {"q0", "s0", "s9", "h0"}
    assert len(sweep._rows_for(ROWS, recipe, fold=None)) == len(ROWS)  # the final model: all


def test_the_squad_cut_and_the_ragtruth_repeats():
    kept = sweep._rows_for(ROWS, {"squad": 5, "repeat": 3}, fold=None)
    questions = [r["question"] for r in kept]
    assert "s9" not in questions and "s0" in questions  # rank 9 is past the first 5
    assert questions.count("q0") == 3 and questions.count("q2") == 1  # RAGTruth answers only


def test_the_teacher_softens_only_ragtruth_rows_and_only_when_distilling():
    teacher = {("q0", "p0"): 0.2, ("s0", "c0"): 0.1}
    plain = sweep._rows_for(ROWS, {"squad": 10**6, "repeat": 1}, None, teacher)
    assert [r["label"] for r in plain] == [r["label"] for r in ROWS]
    distilled = sweep._rows_for(ROWS, {"squad": 10**6, "repeat": 1, "distill": True}, None, teacher)
    by_question = {r["question"]: r["label"] for r in distilled}
    assert by_question["q0"] == 0.5 * 1 + 0.5 * 0.2
    assert by_question["s0"] == 1 and by_question["q1"] == 0  # no teacher, or not RAGTruth
    assert ROWS[0]["label"] == 1  # the caller's rows are not changed


def test_every_recipe_is_complete():
    for name, recipe in sweep.RECIPES.items():
        assert {"squad", "epochs", "lr", "batch", "seeds", "repeat"} <= set(recipe), name
        assert recipe["seeds"] and recipe["epochs"] > 0


def test_returned_chunks_join_in_numeric_order(tmp_path: Path):
    blob = bytes(range(256)) * 50
    parts = tmp_path / "parts"
    parts.mkdir()
    size = 1000
    for number, start in enumerate(range(0, len(blob), size)):  # part10 sorts before part2 as text
        (parts / f"model.safetensors.part{number}").write_bytes(blob[start : start + size])
    (parts / "config.json").write_text(json.dumps({"num_labels": 1}))
    init = tmp_path / "init"
    init.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (init / name).write_text("{}")
    sweep.join(parts, tmp_path / "out", init)
    assert (tmp_path / "out" / "model.safetensors").read_bytes() == blob
    assert (tmp_path / "out" / "tokenizer.json").exists()
