"""Stage 7, attribution: every [E#] marker must resolve to an evidence span of *this* question.

A marker that resolves to nothing blocks the answer (status `blocked`, reason recorded). A claim
sentence without any marker is listed for the guardrails. The rendered answer names each source
the way a reader can check it: "According to <title> (<section>, p. <page>, version <v>, dated
<date>) …", where the section path leaves out the title it starts with; a citation with an anchor
names it in place of the page ("slide 3", "Prices!A4:C4", "00:01:02–00:01:09 (Ana)").
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict

from stages import contracts
from stages.common.logs import question_scope
from stages.common.text import MARKER_RE, cited_sentences
from stages.formats.anchors import anchor_label

NAME = "attribution"
VERSION = "1.2.0"  # 1.2: citations carry their anchor, named in the label
OUTPUTS = ("attributions",)  # contract tables written
INPUTS = ("generations", "evidence")  # contract tables and blobs read
PER_QUESTION = True  # cached and batched per question
log = logging.getLogger(__name__)

CITATION_FIELDS = [f.name for f in contracts.CITATION]


class Config(BaseModel):
    """Attribution has no knobs yet; the class keeps the stage interface uniform."""

    model_config = ConfigDict(extra="forbid")


def markers_in(text: str) -> list[str]:
    return list(dict.fromkeys(MARKER_RE.findall(text or "")))


def section_below_title(section_path: str | None, title: str) -> str | None:
    """The section path without the document's own title, which the label already names."""
    parts = [p for p in (section_path or "").split(" > ") if p]
    first, name = (parts[0].strip().casefold() if parts else ""), (title or "").strip().casefold()
    # The top heading is the title, give or take a suffix: "Price List" / "Price List (2026)".
    if first and name and (first.startswith(name) or name.startswith(first)):
        parts.pop(0)
    return " > ".join(parts) or None


def source_label(citation: dict) -> str:
    section = section_below_title(citation["section_path"], citation["title"])
    place = anchor_label(citation.get("anchor"))
    if place and section:
        # a ticket comment's section ("Comment 3 by Bo, 2026-01-02") is already in its anchor
        parts = section.split(" > ")
        section = " > ".join(parts[:-1]) if parts[-1].casefold() in place.casefold() else section
    details = [section or None]
    if place:
        details.append(place)
    elif citation["page_number"] is not None:
        details.append(f"p. {citation['page_number']}")
    if citation["version"]:
        details.append(f"version {citation['version']}")
    if citation["published_at"] is not None:
        details.append(f"dated {citation['published_at'].isoformat()}")
    shown = ", ".join(d for d in details if d)
    return f"{citation['title']} ({shown})" if shown else citation["title"]


def render(answer: str, citations: dict[str, dict]) -> str:
    parts = []
    for sentence, ids in cited_sentences(answer):
        markers = "".join(f"[{i}]" for i in ids)
        if ids and ids[0] in citations:
            parts.append(f"According to {source_label(citations[ids[0]])}: {sentence} {markers}")
        else:
            parts.append(f"{sentence} {markers}".strip())
    return " ".join(parts)


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
    citations = {i: {f: evidence[i].get(f) for f in CITATION_FIELDS} for i in ids if i in evidence}
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
    return {"attributions": contracts.from_rows(rows, "attributions")}
