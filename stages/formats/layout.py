"""Page geometry to Blocks: the shared layout step of the PDF and image readers.

Both a PDF's text layer (words with a font size and weight) and OCR (text boxes with a score)
come down to `Span`s: runs of text on one visual line, separated from their neighbours by a gap
wider than a word space. This module groups spans into lines, drops running headers and footers,
finds tables (rows of spans whose columns line up), and turns the rest into headings and
paragraphs, each with its page and bounding box.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stages.formats import Block

HEADING_MAX_CHARS = 120
SPAN_GAP_EMS = 0.9  # a gap wider than this many font sizes separates two spans (table columns)
PARAGRAPH_GAP_EMS = 0.7  # a vertical gap wider than this starts a new paragraph
TABLE_ROW_GAP_EMS = 1.6  # rows of one table lie at most this far apart
SIZE_STEP = 1.08  # font sizes are compared in buckets of 8 %
HEADING_MIN_STEPS = 2  # a line two buckets (about 12 %) above the body text can be a heading
MARGIN_SHARE = 0.07  # running headers and footers sit in this share of the page's height
PROSE_SPAN_CHARS = 40  # two "columns" of spans this long are two text columns, not a table
PAGE_NUMBER_RE = re.compile(r"^(page\s*)?\d+(\s*(/|of)\s*\d+)?$|\bpage\s+\d+\b", re.IGNORECASE)


@dataclass
class Span:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float  # font size (text layer) or an estimate from the box height (OCR)
    bold: bool = False
    confidence: float | None = None  # OCR score; None for a text layer

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Line:
    spans: list[Span]

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.spans)

    @property
    def top(self) -> float:
        return min(s.top for s in self.spans)

    @property
    def bottom(self) -> float:
        return max(s.bottom for s in self.spans)

    @property
    def x0(self) -> float:
        return min(s.x0 for s in self.spans)

    @property
    def x1(self) -> float:
        return max(s.x1 for s in self.spans)

    @property
    def size(self) -> float:
        return max(s.size for s in self.spans)

    @property
    def bold(self) -> bool:
        return all(s.bold for s in self.spans)


@dataclass
class Page:
    """One page's spans with its size, in the unit the anchors use ("pt" or "px")."""

    number: int
    width: float
    height: float
    spans: list[Span]
    unit: str = "pt"
    origin: str = "text"  # "ocr" when the spans were recognised from an image
    tables: list[Block] = field(default_factory=list)  # found by the reader (ruled tables)


def group_lines(spans: list[Span]) -> list[Line]:
    """Spans that overlap vertically by half the smaller height share a line, left to right."""
    lines: list[Line] = []
    for span in sorted(spans, key=lambda s: (s.middle, s.x0)):
        line = lines[-1] if lines else None
        if line is not None and _same_line(line, span):
            line.spans.append(span)
        else:
            lines.append(Line([span]))
    for line in lines:
        line.spans.sort(key=lambda s: s.x0)
    return sorted(lines, key=lambda line: (line.top, line.x0))


def _same_line(line: Line, span: Span) -> bool:
    overlap = min(line.bottom, span.bottom) - max(line.top, span.top)
    height = min(line.bottom - line.top, span.bottom - span.top)
    return height > 0 and overlap >= height / 2


def merge_words(line: Line) -> Line:
    """Join neighbouring words of a line into spans; a gap wider than SPAN_GAP_EMS splits."""
    merged: list[Span] = []
    for word in line.spans:
        last = merged[-1] if merged else None
        gap_limit = SPAN_GAP_EMS * max(word.size, last.size) if last else 0
        if last is not None and word.x0 - last.x1 <= gap_limit:
            merged[-1] = Span(
                f"{last.text} {word.text}",
                last.x0,
                min(last.top, word.top),
                max(last.x1, word.x1),
                max(last.bottom, word.bottom),
                max(last.size, word.size),
                last.bold and word.bold,
                _mean_confidence([last, word]),
            )
        else:
            merged.append(word)
    return Line(merged)


def _mean_confidence(spans: list[Span]) -> float | None:
    scores = [s.confidence for s in spans if s.confidence is not None]
    return round(sum(scores) / len(scores), 4) if scores else None


# ---------------------------------------------------------------- running headers and footers


def drop_page_furniture(pages: list[tuple[Page, list[Line]]]) -> None:
    """Remove running headers/footers: lines in the top or bottom margin that carry a page
    number or repeat (digits aside) on another page."""

    def key(line: Line) -> str:
        return re.sub(r"\d+", "#", line.text.lower())

    def in_margin(page: Page, line: Line) -> bool:
        band = page.height * MARGIN_SHARE
        return line.bottom <= band or line.top >= page.height - band

    counts = Counter(key(line) for page, lines in pages for line in lines if in_margin(page, line))
    for page, lines in pages:
        lines[:] = [
            line
            for line in lines
            if not (
                in_margin(page, line)
                and (PAGE_NUMBER_RE.search(line.text.strip()) or counts[key(line)] > 1)
            )
        ]


# ---------------------------------------------------------------- tables


@dataclass
class _Table:
    rows: list[Line]
    columns: list[tuple[float, float]]


def find_tables(lines: list[Line]) -> list[_Table]:
    """Runs of consecutive multi-span lines whose spans fall into two or more shared columns."""
    tables, run = [], []
    for line in [*lines, None]:
        fits = (
            line is not None
            and len(line.spans) >= 2
            and (not run or line.top - run[-1].bottom <= TABLE_ROW_GAP_EMS * line.size)
        )
        if fits:
            run.append(line)
            continue
        if len(run) >= 2 and (table := _as_table(run)) is not None:
            tables.append(table)
        run = [line] if line is not None and len(line.spans) >= 2 else []
    return tables


def _as_table(rows: list[Line]) -> _Table | None:
    intervals = sorted((s.x0, s.x1) for row in rows for s in row.spans)
    columns: list[list[float]] = []
    for x0, x1 in intervals:
        if columns and x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    if len(columns) < 2:
        return None  # the spans overlap everywhere: justified text with wide gaps, not a table
    lengths = [len(s.text) for row in rows for s in row.spans]
    if len(columns) == 2 and statistics.median(lengths) > PROSE_SPAN_CHARS:
        return None  # two columns of long runs: a two-column text layout
    return _Table(rows, [(a, b) for a, b in columns])


def _cell_grid(table: _Table) -> list[list[list[Span]]]:
    grid = []
    for row in table.rows:
        cells: list[list[Span]] = [[] for _ in table.columns]
        for span in row.spans:
            index = next(i for i, (a, b) in enumerate(table.columns) if a <= span.x0 <= b)
            cells[index].append(span)
        grid.append(cells)
    return grid


def _has_header(grid: list[list[list[Span]]]) -> bool:
    """The first row names the columns: bold over a body that is not, or words over numbers."""
    first, body = grid[0], grid[1:]
    first_spans = [s for cell in first for s in cell]
    body_spans = [s for row in body for cell in row for s in cell]
    if first_spans and all(s.bold for s in first_spans) and not all(s.bold for s in body_spans):
        return True
    if any(any(ch.isdigit() for s in cell for ch in s.text) for cell in first):
        return False
    numeric_columns = [
        column
        for column in range(len(first))
        if any(any(ch.isdigit() for s in row[column] for ch in s.text) for row in body)
    ]
    return bool(numeric_columns) and all(first[column] for column in numeric_columns)


def table_block(
    rows: list[list[str]],
    boxes: list[list[list[float] | None]],
    page: Page,
    has_header: bool,
    confidence: float | None = None,
) -> Block:
    """A table as one Block: each row one line whose values keep their column headers."""
    header = rows[0] if has_header else None
    body = rows[1:] if has_header else rows
    lines = []
    for row in body:
        cells = [
            f"{header[i]}: {text}" if header and header[i] else text
            for i, text in enumerate(row)
            if text
        ]
        if cells:
            lines.append(" | ".join(cells))
    cells_meta = [
        {
            "row": r,
            "column": c,
            "text": text,
            "header": (header[c] or None) if header and r > 0 else None,
            "is_header": bool(header) and r == 0,
            "box": boxes[r][c],
        }
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
    ]
    known = [b for row in boxes for b in row if b]
    box = _union(known) if known else None
    return Block(
        "table",
        "\n".join(lines),
        page.number,
        anchor=_anchor(page, box),
        origin=page.origin,
        confidence=confidence,
        meta={"columns": header or [], "cells": cells_meta, "n_rows": len(body)},
    )


def _table_to_block(table: _Table, page: Page) -> Block:
    grid = _cell_grid(table)
    rows = [[" ".join(s.text for s in cell) for cell in row] for row in grid]
    boxes = [
        [_union([[s.x0, s.top, s.x1, s.bottom] for s in cell]) if cell else None for cell in row]
        for row in grid
    ]
    spans = [s for row in table.rows for s in row.spans]
    return table_block(rows, boxes, page, _has_header(grid), _mean_confidence(spans))


def split_table(block: Block, max_chars: int) -> list[Block]:
    """A long table as several table Blocks of whole rows (each row keeps its headers)."""
    lines = block.text.split("\n")
    if len(block.text) <= max_chars or len(lines) < 2:
        return [block]
    parts, current = [], []
    for line in lines:
        if current and len("\n".join([*current, line])) > max_chars:
            parts.append(current)
            current = []
        current.append(line)
    parts.append(current)
    return [
        Block(
            "table",
            "\n".join(part),
            block.page,
            anchor=block.anchor,
            origin=block.origin,
            confidence=block.confidence,
            meta={**block.meta, "part": index + 1, "parts": len(parts)},
        )
        for index, part in enumerate(parts)
    ]


# ---------------------------------------------------------------- headings and paragraphs


def size_bucket(size: float) -> int:
    """Sizes within SIZE_STEP of each other share a bucket (OCR's estimated sizes wobble)."""
    return round(math.log(max(size, 0.1)) / math.log(SIZE_STEP))


@dataclass
class TextStyle:
    """The document's body size bucket and its heading levels, largest first (depth = index)."""

    body: int
    heading_levels: list[set[int]]

    def heading_depth(self, line: Line) -> int | None:
        text = line.text.strip()
        if (
            len(text) > HEADING_MAX_CHARS
            or text.endswith((".", "!", "?", ":", ";", ","))
            or not any(ch.isalpha() for ch in text)
        ):
            return None
        bucket = size_bucket(line.size)
        for depth, level in enumerate(self.heading_levels):
            if bucket in level:
                return depth
        if line.bold and bucket >= self.body:
            return len(self.heading_levels)  # bold at body size: below every larger heading
        return None


def text_style(lines: list[Line]) -> TextStyle:
    """Body size = the size most characters are set in; clearly larger sizes are heading
    levels (neighbouring buckets form one level)."""
    weights: Counter[int] = Counter()
    for line in lines:
        weights[size_bucket(line.size)] += len(line.text)
    if not weights:
        return TextStyle(0, [])
    body = weights.most_common(1)[0][0]
    levels: list[set[int]] = []
    for bucket in sorted((b for b in weights if b >= body + HEADING_MIN_STEPS), reverse=True):
        if levels and min(levels[-1]) - bucket <= 1:
            levels[-1].add(bucket)
        else:
            levels.append({bucket})
    return TextStyle(body, levels)


def page_blocks(
    page: Page, lines: list[Line], style: TextStyle, max_table_chars: int
) -> list[Block]:
    """Tables, headings and paragraphs of one page, in reading order (top to bottom)."""
    tables = find_tables(lines)
    in_table = {id(row) for table in tables for row in table.rows}
    placed: list[tuple[float, Block]] = [
        (b.anchor["box"][1] if b.anchor and b.anchor.get("box") else 0.0, b) for b in page.tables
    ]
    for table in tables:
        placed.append((table.rows[0].top, _table_to_block(table, page)))
    paragraph: list[Line] = []
    heading: list[Line] = []  # a heading may wrap onto a second line
    heading_depth = 0

    def close() -> None:
        if paragraph:
            placed.append((paragraph[0].top, _paragraph_block(paragraph, page)))
            paragraph.clear()
        if heading:
            placed.append((heading[0].top, _heading_block(heading, heading_depth, page)))
            heading.clear()

    for line in lines:
        if id(line) in in_table:
            close()
            continue
        depth = style.heading_depth(line)
        if depth is not None:
            continues = (
                heading and depth == heading_depth and not _starts_paragraph(heading[-1], line)
            )
            if not continues:
                close()
                heading_depth = depth
            heading.append(line)
            continue
        if heading or (paragraph and _starts_paragraph(paragraph[-1], line)):
            close()
        paragraph.append(line)
    close()
    placed.sort(key=lambda item: item[0])
    blocks: list[Block] = []
    for _, block in placed:
        blocks.extend(split_table(block, max_table_chars) if block.kind == "table" else [block])
    return blocks


def _starts_paragraph(previous: Line, line: Line) -> bool:
    size = max(previous.size, line.size)
    if line.top - previous.bottom > PARAGRAPH_GAP_EMS * size:
        return True
    if abs(line.size - previous.size) > 0.2 * size:
        return True
    return previous.bold != line.bold and (previous.bold or line.bold)


def _join_lines(lines: list[Line]) -> str:
    text = ""
    for line in lines:
        part = line.text.strip()
        if re.search(r"[A-Za-z]-$", text) and part[:1].islower():
            text = text[:-1] + part  # a word hyphenated at the line end
        else:
            text = f"{text} {part}" if text else part
    return text


def _paragraph_block(lines: list[Line], page: Page) -> Block:
    spans = [s for line in lines for s in line.spans]
    return Block(
        "text",
        _join_lines(lines),
        page.number,
        anchor=_anchor(page, _union([[s.x0, s.top, s.x1, s.bottom] for s in spans])),
        origin=page.origin,
        confidence=_mean_confidence(spans),
        meta={"lines": len(lines)},
    )


def _heading_block(lines: list[Line], depth: int, page: Page) -> Block:
    spans = [s for line in lines for s in line.spans]
    return Block(
        "heading",
        _join_lines(lines),
        page.number,
        depth=depth,
        anchor=_anchor(page, _union([[s.x0, s.top, s.x1, s.bottom] for s in spans])),
        origin=page.origin,
        confidence=_mean_confidence(spans),
    )


def _union(boxes: list[list[float]]) -> list[float]:
    return [
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    ]


def _anchor(page: Page, box: list[float] | None) -> dict[str, Any]:
    anchor: dict[str, Any] = {"page": page.number, "unit": page.unit}
    if box is not None:
        anchor["box"] = [round(v, 1) for v in box]
    return anchor


def document_blocks(pages: list[Page], max_table_chars: int) -> list[Block]:
    """Blocks of every page: lines, furniture removed, one text style for the whole document."""
    laid_out = [(page, [merge_words(line) for line in group_lines(page.spans)]) for page in pages]
    drop_page_furniture(laid_out)
    style = text_style([line for _, lines in laid_out for line in lines])
    blocks: list[Block] = []
    for page, lines in laid_out:
        blocks.extend(page_blocks(page, lines, style, max_table_chars))
    return blocks
