"""Anchors into the original file: laid out beside a document's text, resolved for a citation's
span and named for a reader ("slide 3", "Prices!A4:C4", "00:01:02–00:01:09 (Ana)", "message 3
of thread 'Replacement crane', from Kari Nilsen, 2026-11-30").

An anchor span is {"start", "end", "anchor"}: document offsets and the anchor as JSON text, so
every format's own keys fit one Arrow column. Blocks read by OCR add "origin" and "confidence" to
their anchor, and the label says so; so do figure descriptions by a vision model ("origin":
"model", "model": its name). Rows of tables without a cell grid of their own (html, docx,
markdown) are {"table": n, "row": r}: the document's n-th table, its r-th row under the header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from stages.formats import Block

CELL_RE = re.compile(r"^([A-Z]+)(\d+)$")


def block_anchor(block: Block, anchor: dict[str, Any] | None) -> dict[str, Any] | None:
    """The anchor as stored: OCR origin and confidence travel with it."""
    if anchor is None:
        return None
    if block.origin != "text":
        anchor = {**anchor, "origin": block.origin}
        if block.confidence is not None:
            anchor["confidence"] = round(float(block.confidence), 3)
    return anchor


def anchor_spans(blocks: Iterable[Block]) -> list[dict[str, Any]]:
    """Anchor spans of laid-out blocks (offsets set): the finest each block has."""
    spans = []
    for block in blocks:
        inner = block.meta.get("anchors") if block.meta else None
        if inner:
            for item in inner:
                anchor = block_anchor(block, item["anchor"])
                if anchor is not None:
                    spans.append(
                        _span(block.start + item["start"], block.start + item["end"], anchor)
                    )
        elif block.anchor is not None:
            spans.append(_span(block.start, block.end, block_anchor(block, block.anchor)))
    return spans


def _span(start: int, end: int, anchor: dict[str, Any]) -> dict[str, Any]:
    return {"start": start, "end": end, "anchor": json.dumps(anchor, sort_keys=True)}


def spans_within(spans: Sequence[dict[str, Any]], start: int, end: int) -> list[dict[str, Any]]:
    """The spans overlapping [start, end), e.g. a chunk's."""
    return [s for s in spans if s["start"] < end and s["end"] > start]


def anchor_for_span(spans: Sequence[dict[str, Any]] | None, start: int, end: int) -> str | None:
    """The anchor (JSON) covering [start, end): the overlapping anchors merged when they are of
    one kind (cues -> one time range, rows -> one cell range), else the one overlapping most."""
    overlapping = spans_within(spans or [], start, end)
    if not overlapping:
        return None
    anchors = [json.loads(s["anchor"]) for s in overlapping]
    merged = merge_anchors(anchors)
    if merged is None:
        best = max(overlapping, key=lambda s: min(end, s["end"]) - max(start, s["start"]))
        return best["anchor"]
    return json.dumps(merged, sort_keys=True)


def merge_anchors(anchors: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One anchor for several of the same kind; None when they cannot be merged."""
    first = anchors[0]
    if all(a == first for a in anchors):
        return first
    if all("start" in a and "end" in a for a in anchors):
        speakers = list(dict.fromkeys(a["speaker"] for a in anchors if a.get("speaker")))
        merged = {
            "start": min(a["start"] for a in anchors),
            "end": max(a["end"] for a in anchors),
        }
        if speakers:
            merged["speaker"] = ", ".join(speakers)
        return merged
    if all(a.get("sheet") == first.get("sheet") and "range" in a for a in anchors):
        ranges = [cell_range(a["range"]) for a in anchors]
        if all(ranges):
            rows = [r for bounds in ranges for r in (bounds[0][1], bounds[1][1])]
            cols = [c for bounds in ranges for c in (bounds[0][0], bounds[1][0])]
            corner_a = f"{column_letter(min(cols))}{min(rows)}"
            corner_b = f"{column_letter(max(cols))}{max(rows)}"
            return {**first, "range": f"{corner_a}:{corner_b}"}
    if all(a.get("table") == first.get("table") and a.get("row") is not None for a in anchors):
        rows = [r for a in anchors for r in (a["row"], a.get("last_row", a["row"]))]
        rows = [r for r in rows if r > 0] or rows  # the header line names no row
        merged = {**first, "row": min(rows)}
        merged.pop("last_row", None)
        if max(rows) != min(rows):
            merged["last_row"] = max(rows)
        return merged
    if all(a.get("page") == first.get("page") and a.get("box") for a in anchors):
        boxes = [a["box"] for a in anchors]
        box = [min(b[0] for b in boxes), min(b[1] for b in boxes)]
        box += [max(b[2] for b in boxes), max(b[3] for b in boxes)]
        return {**first, "box": box}
    return None


def column_letter(index: int) -> str:
    """1 -> A, 27 -> AA."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index


def cell_range(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """ "A4:C4" -> ((1, 4), (3, 4)) as (column, row) corners; None if it is not a cell range."""
    corners = []
    for part in text.split(":"):
        match = CELL_RE.match(part)
        if match is None:
            return None
        corners.append((column_index(match.group(1)), int(match.group(2))))
    if len(corners) == 1:
        corners.append(corners[0])
    return (corners[0], corners[1]) if len(corners) == 2 else None


def _clock(stamp: str) -> str:
    """ "00:01:02.000" -> "00:01:02" (a reader seeks to the second)."""
    return str(stamp).split(".", 1)[0]


def anchor_label(anchor: dict[str, Any] | str | None) -> str | None:
    """How a citation names its place in the original file."""
    if isinstance(anchor, str):
        anchor = json.loads(anchor)
    if not anchor:
        return None
    label = _place(anchor)
    if anchor.get("origin") == "model" and anchor.get("model"):
        label += f", described by {anchor['model']}"
    if anchor.get("origin") == "ocr":
        confidence = anchor.get("confidence")
        label += ", OCR" + (f" {confidence:.0%}" if isinstance(confidence, int | float) else "")
    return label


def _place(anchor: dict[str, Any]) -> str:
    if "message" in anchor:  # stages.formats.mail
        label = f"message {anchor['message']}"
        if anchor.get("thread"):
            label += f" of thread '{anchor['thread']}'"
        if anchor.get("from"):
            label += f", from {anchor['from']}"
        return label + (f", {anchor['date']}" if anchor.get("date") else "")
    if "ticket" in anchor:
        label = f"ticket {anchor['ticket']}"
        comment = anchor.get("comment")
        if comment is not None:
            label += ", description" if comment == 0 else f", comment {comment}"
            if anchor.get("author"):
                label += f" by {anchor['author']}"
        return label + (f", {anchor['date']}" if anchor.get("date") else "")
    if "slide" in anchor:
        label = f"slide {anchor['slide']}"
        if anchor.get("part") == "notes":
            label += ", speaker notes"
        if anchor.get("row") is not None:
            label += f", table row {anchor['row']}"
        return label
    if "sheet" in anchor:
        sheet = str(anchor["sheet"])
        shown = sheet if re.fullmatch(r"[A-Za-z0-9_.]+", sheet) else "'" + sheet + "'"
        return f"{shown}!{anchor['range']}" if anchor.get("range") else shown
    if "table" in anchor:
        return _table_row(anchor)
    if "start" in anchor and "end" in anchor:
        label = f"{_clock(anchor['start'])}–{_clock(anchor['end'])}"
        return label + (f" ({anchor['speaker']})" if anchor.get("speaker") else "")
    if "page" in anchor:
        label = f"page {anchor['page']}"
        box = anchor.get("box")
        if box:
            label += ", box " + ", ".join(f"{float(v):g}" for v in box)
        return label
    return json.dumps(anchor, sort_keys=True)


def _table_row(anchor: dict[str, Any]) -> str:
    """ "table 2, row 3" (row 0 is the header line), "table 2, rows 3–5"."""
    label = f"table {anchor['table']}"
    first, last = anchor.get("row"), anchor.get("last_row")
    if first == 0 and not last:
        label += ", header"
    elif last is not None and last != first:
        label += f", rows {first}–{last}"
    elif first is not None:
        label += f", row {first}"
    return f"page {anchor['page']}, {label}" if anchor.get("page") else label
