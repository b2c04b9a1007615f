"""The final-answer format check the end-to-end axis counts (format_compliance).

This is the evaluation's side of the output contract. `stages/guardrails.py` has its own
`final_answer_problems` with other rules and messages (it also conforms the row to the Arrow
contract, but does not check the action, the refusal reason or citation doc ids). They are to
become one check of one contract, owned by the stages; this module will then call it.
"""

from __future__ import annotations

import re

FINAL_STATUSES = ("answered", "refused", "blocked")


def final_answer_problems(answer: dict) -> list[str]:
    """Why a final answer breaks the output contract (empty when it complies)."""
    from stages.generation import REFUSAL_REASONS

    problems = []
    status = answer.get("status")
    if status not in FINAL_STATUSES:
        problems.append(f"unknown status {status!r}")
    if answer.get("action") not in ("emit", "revise", "block"):
        problems.append(f"unknown action {answer.get('action')!r}")
    if status == "answered":
        citations = answer.get("citations") or []
        if not (answer.get("answer") or "").strip():
            problems.append("answered without an answer")
        if not citations:
            problems.append("answered without citations")
        cited = {c.get("evidence_id") for c in citations}
        markers = set(re.findall(r"\[(E\d+)\]", answer.get("answer") or ""))
        if markers - cited:
            problems.append(f"markers without a citation: {sorted(markers - cited)}")
        for c in citations:
            if not c.get("doc_id") or c.get("char_start") is None or c.get("char_end") is None:
                problems.append("citation without doc_id or offsets")
            elif c["char_start"] >= c["char_end"]:
                problems.append("citation with an empty span")
    elif status == "refused":
        if answer.get("answer"):
            problems.append("refusal with an answer")
        if answer.get("refusal_reason") not in REFUSAL_REASONS:
            problems.append(f"unknown refusal_reason {answer.get('refusal_reason')!r}")
    elif status == "blocked" and answer.get("answer"):
        problems.append("blocked answer still carries its text")
    return problems
