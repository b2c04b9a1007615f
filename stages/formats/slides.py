"""PowerPoint (.pptx) with python-pptx: one page per slide.

Per slide, in reading order (top to bottom, left to right): the title as a heading ("Slide n"
when it has none), each text frame's paragraphs with their bullet level, tables as table blocks,
pictures by their alt text only (a picture without one adds nothing: a description is never
made up), then the speaker notes. Anchors: {"slide": n}, plus "row" for a table row and
"part": "notes" for the notes. With a vision model configured (ingestion's `vision` block) each
picture is also described by it, in a block that says so (`stages.formats.figures`).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from stages.common.text import normalize_text
from stages.formats import Block, ParseError, ReadOptions
from stages.formats.archive import check_zip
from stages.formats.figures import FigureDescriber, model_block
from stages.formats.tables import table_blocks

LEVEL_MARKS = ("", "– ", "–– ", "––– ")  # a sub-bullet is marked by its depth


def read(data: bytes, options: ReadOptions) -> list[Block]:
    check_zip(data, "ppt/presentation.xml", ".pptx", options.max_file_bytes)
    from pptx import Presentation

    try:
        presentation = Presentation(io.BytesIO(data))
    except (KeyError, ValueError, TypeError) as exc:
        raise ParseError(
            "parse_error", f"not a readable .pptx: {type(exc).__name__}: {exc}"
        ) from exc
    title = normalize_text(presentation.core_properties.title or "")
    options.title_hint = title or None
    blocks: list[Block] = []
    describer = FigureDescriber(options)
    for number, slide in enumerate(presentation.slides, start=1):
        blocks.extend(slide_blocks(slide, number, options.chunk_size, describer))
    describer.close()
    return blocks


def slide_blocks(
    slide: Any, number: int, max_table_chars: int, describer: FigureDescriber | None = None
) -> list[Block]:
    anchor = {"slide": number}
    title_shape = slide.shapes.title
    title = _line(title_shape.text_frame.text) if title_shape is not None else ""
    blocks = [Block("heading", title or f"Slide {number}", number, depth=1, anchor=anchor)]
    skip = title_shape.shape_id if title_shape is not None else None
    for shape in sorted(_shapes(slide.shapes), key=_position):
        if shape.shape_id == skip:
            continue
        blocks.extend(_shape_blocks(shape, number, max_table_chars, describer))
    notes = _notes(slide)
    if notes:
        notes_anchor = {"slide": number, "part": "notes"}
        blocks.append(Block("text", f"Speaker notes: {notes}", number, anchor=notes_anchor))
    return blocks


def _shapes(shapes: Any) -> Iterator[Any]:
    """Every shape, the members of groups included."""
    for shape in shapes:
        if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):
            yield from _shapes(shape.shapes)  # a group shape
        else:
            yield shape


def _position(shape: Any) -> tuple[int, int]:
    return (shape.top if shape.top is not None else 0, shape.left if shape.left is not None else 0)


def _shape_blocks(
    shape: Any, number: int, max_table_chars: int, describer: FigureDescriber | None = None
) -> list[Block]:
    anchor = {"slide": number}
    if getattr(shape, "has_table", False):
        rows = [[_line(cell.text) for cell in row.cells] for row in shape.table.rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return []
        header, body = (rows[0], rows[1:]) if len(rows) > 1 else (None, rows)
        return table_blocks(
            header,
            body,
            number,
            max_table_chars,
            row_anchor=lambda index: {**anchor, "row": index} if index else anchor,
            group_anchor=lambda first, last: anchor,
        )
    if getattr(shape, "has_text_frame", False):
        lines, levels = [], []
        for paragraph in shape.text_frame.paragraphs:
            text = _line(paragraph.text)
            if text:
                level = min(paragraph.level, len(LEVEL_MARKS) - 1)
                lines.append(LEVEL_MARKS[level] + text)
                levels.append(paragraph.level)
        if not lines:
            return []
        return [Block("text", "\n".join(lines), number, anchor=anchor, meta={"levels": levels})]
    blocks = []
    alt_text = _alt_text(shape)
    if alt_text:
        blocks.append(
            Block("text", f"Image: {alt_text}", number, anchor=anchor, meta={"alt_text": 1})
        )
    if describer is not None and describer.active and _is_picture(shape):
        description = describer.describe(_picture_bytes(shape))
        if description:
            blocks.append(model_block(description, describer.model, number, anchor))
    return blocks


def _is_picture(shape: Any) -> bool:
    return getattr(shape, "shape_type", None) is not None and hasattr(shape, "image")


def _picture_bytes(shape: Any) -> bytes:
    """The picture's image file; empty for a linked picture whose file is not in the deck."""
    try:
        return shape.image.blob
    except (AttributeError, KeyError, ValueError):
        return b""


def _alt_text(shape: Any) -> str:
    """The picture's own description (its alt text), never one made up."""
    if not _is_picture(shape):
        return ""
    properties = shape._element.xpath("./*[1]/*[local-name()='cNvPr']")
    return _line(properties[0].get("descr") or "") if properties else ""


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return _line(frame.text) if frame is not None else ""


def _line(text: str) -> str:
    """One line of normalized text (line breaks inside a paragraph become spaces)."""
    return " ".join(normalize_text(text.replace("\v", " ")).split())
