"""Stage 7, attribution: every [E#] marker must resolve to an evidence span of *this* question.

A marker that resolves to nothing blocks the answer (status `blocked`, reason recorded). A claim
sentence without any marker is listed for the guardrails. The rendered answer is the answer with
its markers, then a sources list naming each source the way a person can check it: "[E1] <title> ›
<section>, page <n> (version <v>, dated <date>)", where the section path leaves out the title it
starts with; a citation with an anchor names it in place of the page ("slide 3", "Prices!A4:C4",
"00:01:02–00:01:09 (Ana)"). A PDF span's bounding box stays in the citation object and the report.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages import contracts
from stages.common.citations import citations_for, markers_in, render
from stages.common.logs import question_scope
from stages.common.text import cited_sentences

NAME = "attribution"
VERSION = "1.4.1"
OUTPUTS = ("attributions",)  # contract tables written
INPUTS = ("generations", "evidence")  # contract tables and blobs read
PER_QUESTION = True  # cached and batched per question
log = logging.getLogger(__name__)


class Config(BaseModel):
    """Attribution has no knobs yet; the class keeps the stage interface uniform."""

    model_config = ConfigDict(extra="forbid")


def attribute(generation: dict, evidence: dict[str, dict]) -> dict:
    answer = generation["answer"]
    base = {
        "question_id": generation["question_id"],
        "answer": answer,
        "citations": [],
        "unresolved_markers": [],
        "unmarked_sentences": [],
        "blocked_reason": None,
    }
    if answer is None:
        return {**base, "status": "refused", "rendered_answer": None}
    ids = markers_in(answer)
    unresolved = [i for i in ids if i not in evidence]
    declared_unknown = [
        i for i in generation["citations"] or [] if i not in evidence and i not in unresolved
    ]
    citations = citations_for(answer, evidence)
    unmarked = [sentence for sentence, cited in cited_sentences(answer) if not cited]
    row = {
        **base,
        "citations": list(citations.values()),
        "unresolved_markers": unresolved + declared_unknown,
        "unmarked_sentences": unmarked,
    }
    if unresolved or declared_unknown:
        bad = ", ".join(f"[{i}]" for i in unresolved + declared_unknown)
        return {
            **row,
            "status": "blocked",
            "rendered_answer": None,
            "blocked_reason": f"unresolved citation {bad}",
        }
    if not ids:
        return {
            **row,
            "status": "blocked",
            "rendered_answer": None,
            "blocked_reason": "answer cites no evidence",
        }
    rendered = render(answer, citations)
    if generation["caveat"]:
        rendered = f"{generation['caveat']} {rendered}"
    return {**row, "status": "answered", "rendered_answer": rendered}


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    evidence: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in inputs["evidence"].to_pylist():
        evidence[row["question_id"]][row["evidence_id"]] = row
    rows = []
    for generation in inputs["generations"].to_pylist():
        row = attribute(generation, evidence[generation["question_id"]])
        with question_scope(generation["question_id"]):
            log.debug(
                "attribution %s: %d citations%s",
                row["status"],
                len(row["citations"]),
                f" ({row['blocked_reason']})" if row["blocked_reason"] else "",
                extra={"stage": NAME, "status": row["status"]},
            )
        rows.append(row)
    return {"attributions": contracts.table_of("attributions", rows, stage=NAME)}
