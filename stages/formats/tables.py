"""Tables as first-class blocks, shared by every format that has them (html, docx, md through
unstructured's HTML rendering; pptx, xlsx, csv through their readers).

The text form keeps each value with its header, one line per row, so a row is one citable
sentence: a header line "Plan | Price", then "Plan: Enterprise; Price: €49." A table that fits a
chunk is one block, which chunking never splits; a larger one becomes row groups, each starting
with the header line again. Every cell is in `Block.meta["cells"]` with its row, column and
header; `meta["anchors"]` holds each row line's anchor when the format has one.
"""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

from stages.formats import Block

RowAnchor = Callable[[int], dict[str, Any] | None]  # source row index (0 = header) -> anchor
GroupAnchor = Callable[[int, int], dict[str, Any] | None]  # first, last row index -> anchor


class _TableRows(HTMLParser):
    """The rows of an HTML table as cell texts; a colspan repeats the cell so headers align."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
            span = dict(attrs).get("colspan") or "1"
            self._span = min(int(span), 100) if span.isdigit() and int(span) > 0 else 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].extend([" ".join("".join(self._cell).split())] * self._span)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_rows(html: str | None) -> list[list[str]]:
    """The non-empty rows of an HTML table."""
    if not html:
        return []
    parser = _TableRows()
    parser.feed(html)
    return [row for row in parser.rows if any(row)]


def header_line(header: list[str]) -> str:
    return " | ".join(header).strip()


def row_line(header: list[str], row: list[str]) -> str:
    """'Header: value; Header: value.' Cells beyond the header keep their value unlabelled."""
    cells = [
        f"{header[i]}: {cell}" if i < len(header) and header[i] else cell
        for i, cell in enumerate(row)
        if cell
    ]
    line = "; ".join(cells)
    return line if line.endswith((".", "!", "?")) else line + "."  # one full stop, not two


def table_to_text(html: str | None, fallback: str) -> str:
    """One line per row, each cell labelled with its header, so a row is a citable sentence."""
    rows = html_rows(html)
    if not rows:
        return fallback
    if len(rows) < 2:
        return header_line(rows[0])
    return "\n".join([header_line(rows[0])] + [row_line(rows[0], row) for row in rows[1:]])


def table_blocks(
    header: list[str] | None,
    rows: list[list[str]],
    page: int | None,
    max_chars: int,
    *,
    row_anchor: RowAnchor | None = None,
    group_anchor: GroupAnchor | None = None,
    origin: str = "text",
    confidence: float | None = None,
) -> list[Block]:
    """Table blocks for a header and body rows: one block when it fits `max_chars`, else row
    groups that each repeat the header line. Row index 0 is the header, 1.. the body rows."""
    if header is None:
        lines = [(i, " | ".join(c for c in row if c).strip()) for i, row in enumerate(rows, 1)]
    elif not rows:
        lines = [(0, header_line(header))]
        return [_block(header, [], lines, page, row_anchor, group_anchor, origin, confidence)]
    else:
        lines = [(index, row_line(header, row)) for index, row in enumerate(rows, 1)]
    top = [(0, header_line(header))] if header else []
    groups: list[list[tuple[int, str]]] = [[]]
    for line in lines:
        group = groups[-1]
        size = sum(len(text) + 1 for _, text in top + group + [line])
        if group and size > max_chars:
            groups.append([])
        groups[-1].append(line)
    blocks = []
    for group in groups:
        body = [rows[index - 1] for index, _ in group]
        block = _block(
            header, body, top + group, page, row_anchor, group_anchor, origin, confidence
        )
        if len(groups) > 1:
            block.meta["part"] = [len(blocks) + 1, len(groups)]
        blocks.append(block)
    return blocks


def _block(
    header: list[str] | None,
    body: list[list[str]],
    lines: list[tuple[int, str]],
    page: int | None,
    row_anchor: RowAnchor | None,
    group_anchor: GroupAnchor | None,
    origin: str,
    confidence: float | None,
) -> Block:
    text = "\n".join(line for _, line in lines)
    numbers = [index for index, _ in lines if index > 0]
    cells = [
        {"row": 0, "column": column, "header": None, "text": name}
        for column, name in enumerate(header or [], 1)
    ]
    for index, row in zip(numbers, body, strict=True):
        for column, value in enumerate(row, 1):
            if value:
                name = header[column - 1] if header and column <= len(header) else None
                cells.append({"row": index, "column": column, "header": name, "text": value})
    anchors, offset = [], 0
    for index, line in lines:
        anchor = row_anchor(index) if row_anchor else None
        if anchor is not None:
            anchors.append({"start": offset, "end": offset + len(line), "anchor": anchor})
        offset += len(line) + 1
    meta: dict[str, Any] = {"cells": cells, "header": header, "rows": numbers}
    if anchors:
        meta["anchors"] = anchors
    first, last = (numbers[0], numbers[-1]) if numbers else (0, 0)
    anchor = group_anchor(0 if header else first, last) if group_anchor else None
    return Block(
        "table",
        text,
        page,
        anchor=anchor,
        origin=origin,
        confidence=confidence,
        meta=meta,
    )
