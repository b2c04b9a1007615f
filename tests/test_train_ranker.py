"""scripts/train_ranker.py: the project's own headed documents are labelled by the chunk that
holds the gold answer, and their weight decides whether section headings are learned at all."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from scripts import train_ranker as train  # noqa: E402
from stages import rerank  # noqa: E402

SECTION = rerank.FEATURES.index("section_coverage")


def _examples(rng: np.random.Generator, n: int, section_signal: bool) -> list:
    examples = []
    for _ in range(n):
        features = rng.random((4, len(rerank.FEATURES)))
        features[:, SECTION] = 0.0
        labels = np.zeros(4)
        if section_signal:  # the positive is the one chunk whose own heading matches
            features[0, SECTION] = 1.0
            labels[0] = 1.0
        else:
            labels[rng.integers(4)] = 1.0
        examples.append((features, labels))
    return examples


def test_section_coverage_is_learned_only_from_weighted_product_rows():
    rng = np.random.default_rng(3)
    squad = _examples(rng, 60, section_signal=False)  # SQuAD: no sections, feature always 0
    product = [(f, y, "docs/a.md") for f, y in _examples(rng, 20, section_signal=True)]
    unweighted, _, _ = train.fit(squad, product, product_weight=0.0)
    weighted, _, _ = train.fit(squad, product, product_weight=10.0)
    assert unweighted.coef_[0][SECTION] == 0.0
    assert weighted.coef_[0][SECTION] > 1.0


def test_product_examples_label_the_chunk_that_holds_the_gold_answer(tmp_path):
    folder = tmp_path / "product"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "acme-terms.md").write_text(
        "# Acme Sales Terms\n\n## 1. Payment terms\n\nInvoices are payable within 45 days of "
        "the invoice date.\n\n## 2. Delivery\n\nOrders ship within 5 business days from Leeds.\n",
        encoding="utf-8",
    )
    questions = [
        {"question_id": "p1", "question": "What are the payment terms?", "answerable": True},
        {"question_id": "p2", "question": "What is the delivery fee?", "answerable": False},
    ]
    golds = {"p1": ["45 days"], "p2": []}
    lines = [
        json.dumps(
            {
                **q,
                "gold_file": "docs/acme-terms.md",
                "gold_answers": golds[q["question_id"]],
                "kind": "heading_match" if q["answerable"] else "near_miss_heading",
            }
        )
        for q in questions
    ]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    examples = train.product_examples(folder, tmp_path / "work")
    assert len(examples) == 2
    (features, labels, doc), (_, unanswerable, _) = examples
    assert doc == "docs/acme-terms.md" and labels.sum() == 1 and unanswerable.sum() == 0
    positive = features[int(np.argmax(labels))]
    assert positive[SECTION] > 0  # "Payment terms" is that chunk's own heading
