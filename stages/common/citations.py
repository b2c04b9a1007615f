"""Citations of an answer: what each [E#] marker names, how the reader sees it, and re-citing.

Shared by the attribution stage, which resolves an answer's markers, and the guardrails stage,
which re-cites a claim whose cited span lacks what another evidence item of its question states
(the LLM cited [E2] for a word of [E1]) and must then show the answer with its corrected markers.
"""

from __future__ import annotations

import json

from stages import contracts
from stages.common.text import MARKER_RE, cited_sentences
from stages.formats.anchors import anchor_label

CITATION_FIELDS = [f.name for f in contracts.CITATION]


def markers_in(text: str | None) -> list[str]:
    """The evidence ids an answer cites, once each, in order."""
    return list(dict.fromkeys(MARKER_RE.findall(text or "")))


def section_below_title(section_path: str | None, title: str) -> str | None:
    """The section path without the document's own title, which the label already names."""
    parts = [p for p in (section_path or "").split(" > ") if p]
    first, name = (parts[0].strip().casefold() if parts else ""), (title or "").strip().casefold()
    # The top heading is the title, give or take a suffix: "Price List" / "Price List (2026)".
    if first and name and (first.startswith(name) or name.startswith(first)):
        parts.pop(0)
    return " > ".join(parts) or None


def place_for_reader(anchor: dict | str | None) -> str | None:
    """The anchor as a person finds the place: a page, a slide, a cell range, a time range, a
    ticket comment. A PDF span's bounding box is for tools (it stays in the citation object and
    the report), so it is left out here."""
    if isinstance(anchor, str):
        anchor = json.loads(anchor) if anchor else None
    if not anchor:
        return None
    return anchor_label({k: v for k, v in anchor.items() if k != "box"})


def source_label(citation: dict) -> str:
    """How a person reads a source: "title › section, page N (version v, dated d)", with the
    anchor's place (slide, cell range, time range, ticket comment) where there is one."""
    section = section_below_title(citation["section_path"], citation["title"])
    place = place_for_reader(citation.get("anchor"))
    if place and section:
        # a ticket comment's section ("Comment 3 by Bo, 2026-01-02") is already in its anchor
        parts = section.split(" > ")
        section = " > ".join(parts[:-1]) if parts[-1].casefold() in place.casefold() else section
    heading = " › ".join([citation["title"], *(section.split(" > ") if section else [])])
    if not place and citation["page_number"] is not None:
        place = f"page {citation['page_number']}"
    label = f"{heading}, {place}" if place else heading
    details = []
    if citation["version"]:
        details.append(f"version {citation['version']}")
    if citation["published_at"] is not None:
        details.append(f"dated {citation['published_at'].isoformat()}")
    return f"{label} ({', '.join(details)})" if details else label


def citations_for(answer: str | None, evidence: dict[str, dict]) -> dict[str, dict]:
    """Evidence id -> citation record, for the answer's markers that resolve."""
    return {
        i: {f: evidence[i].get(f) for f in CITATION_FIELDS}
        for i in markers_in(answer)
        if i in evidence
    }


def render(answer: str, citations: dict[str, dict]) -> str:
    """The answer as a person reads it: its sentences with their markers, then a sources list,
    one line per cited evidence id ("[E1] title › section, page N")."""
    body = " ".join(
        f"{sentence} {''.join(f'[{i}]' for i in ids)}".strip()
        for sentence, ids in cited_sentences(answer)
    )
    sources = [f"[{i}] {source_label(citation)}" for i, citation in citations.items()]
    return f"{body}\n\nSources:\n" + "\n".join(sources) if sources else body


def recite(answer: str, sentence_ids: dict[int, list[str]]) -> str:
    """The answer with the markers of sentence i (an index into `cited_sentences`) replaced by
    `sentence_ids[i]`; the other sentences keep theirs."""
    parts = []
    for index, (sentence, ids) in enumerate(cited_sentences(answer)):
        ids = sentence_ids.get(index, ids)
        markers = " ".join(f"[{i}]" for i in ids)
        parts.append(f"{sentence.strip()} {markers}".strip())
    return " ".join(parts)
