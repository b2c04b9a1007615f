"""scripts/fit_lexical_weight.py: the gate replay flags an answer for its weakest scored claim
(framing never counts) and the claim AUC reads only judged claims (no model, no dataset)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from scripts import fit_lexical_weight as fit  # noqa: E402


def row(answer: str, hallucinated: bool, score, status="supported", judge="llm", overlap=0.0):
    return {
        "id": answer,
        "response_hallucinated": hallucinated,
        "score": score,
        "status": status,
        "judge": judge,
        "label_overlap": overlap,
    }


ROWS = [
    row("a", True, 0.9),
    row("a", True, 0.4, overlap=1.0),  # the invented claim
    row("b", False, 0.95),
    row("b", False, None, status="not_a_claim", judge="none"),  # framing: never flags
    row("c", False, 0.55),  # a lukewarm paraphrase
    row("d", True, 0.7, overlap=1.0),
]


@pytest.mark.parametrize(
    ("line", "recall", "correct_flagged"),
    [(0.5, 0.5, 0.0), (0.6, 0.5, 0.5), (0.75, 1.0, 0.5)],
)
def test_an_answer_is_flagged_for_its_weakest_scored_claim(line, recall, correct_flagged):
    figures = fit.replay(ROWS, line)
    assert figures["recall"] == recall
    assert figures["correct_flag_rate"] == correct_flagged


def test_claim_auc_ranks_judged_claims_against_their_labels():
    # supported 0.9, 0.95, 0.55 against unsupported 0.4, 0.7: only 0.55 < 0.7 is out of order
    assert fit.claim_auc(ROWS) == pytest.approx(5 / 6, abs=1e-4)  # auc() rounds to 4 places
