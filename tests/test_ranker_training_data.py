"""The project's own ranker training documents (data/training/ranker-product) stay usable: a
question whose gold answer is not written in its gold document would train a wrong label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent.parent / "data" / "training" / "ranker-product"
KINDS = {"heading_match", "paraphrase", "body_detail", "negation"}
KINDS |= {"near_miss_heading", "near_miss_detail"}


def _questions() -> list[dict]:
    lines = (FOLDER / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_gold_answer_is_written_in_its_gold_document():
    questions = _questions()
    assert len({q["question_id"] for q in questions}) == len(questions)
    for question in questions:
        text = (FOLDER / question["gold_file"]).read_text(encoding="utf-8").lower()
        assert question["kind"] in KINDS, question
        assert bool(question["gold_answers"]) == question["answerable"], question
        for answer in question["gold_answers"]:
            assert answer.lower() in text, (question["question_id"], answer)


@pytest.mark.parametrize("path", sorted((FOLDER / "docs").glob("*.md")), ids=lambda p: p.name)
def test_every_document_has_a_title_and_sections(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ")
    assert sum(line.startswith("## ") for line in lines) >= 3
