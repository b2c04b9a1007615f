"""Sentence boundaries: an abbreviation's period does not cut a fact in two (SQuAD
answers like "the St. Lawrence and Mississippi watersheds" were lost at "St.")."""

from __future__ import annotations

import pytest

from stages.common.text import sentence_spans


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Trappers went up the St. Lawrence river. They traded furs.",
            ["Trappers went up the St. Lawrence river.", "They traded furs."],
        ),
        ("George W. Bush won. Then he left.", ["George W. Bush won.", "Then he left."]),
        # leading initials are not sentence ends either
        (
            "Hobson wrote it. J. A. Hobson argued so. It cites W. E. B. Du Bois. We sell A. No.",
            [
                "Hobson wrote it.",
                "J. A. Hobson argued so.",
                "It cites W. E. B. Du Bois.",
                "We sell A.",
                "No.",
            ],
        ),
        ("It ended on Jan. 5 in 1999. Done.", ["It ended on Jan. 5 in 1999.", "Done."]),
        ("He met Dr. Lee at noon. She left.", ["He met Dr. Lee at noon.", "She left."]),
        # ordinary sentence ends still split, and a line break always does
        ("We sell A. We sell B.\nNext line.", ["We sell A.", "We sell B.", "Next line."]),
        ("He said no. Then left.", ["He said no.", "Then left."]),
        ("Costs $5.00 per user. The Team plan.", ["Costs $5.00 per user.", "The Team plan."]),
    ],
)
def test_sentence_boundaries(text, expected):
    assert _sentences(text) == expected
