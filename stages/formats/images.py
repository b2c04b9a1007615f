"""Image reader (png, jpg, tiff): OCR'd text as Blocks with line boxes and confidence.

Every frame of a multi-page TIFF is a page. Boxes are in image pixels (anchor unit "px"), origin
at the top-left corner. The file is decoded and checked with Pillow before any OCR library is
imported, so a corrupt image costs an error row, not a model load.
"""

from __future__ import annotations

import io
from typing import Any

from stages.formats import Block, ParseError, ReadOptions, layout
from stages.formats.figures import FigureDescriber, model_block


def read(data: bytes, options: ReadOptions) -> list[Block]:
    """Blocks of an image file; limits and the OCR engine come from ingestion's Config. With a
    vision model configured (ingestion's `vision` block) each page is also described by it, in
    a block of its own that says so."""
    engine_name = options.ocr_engine
    max_pages = options.max_ocr_pages
    max_pixels = options.max_image_pixels
    frames = _frames(data, max_pixels)
    describer = FigureDescriber(options)
    if engine_name == "none" and not describer.active:
        raise ParseError(
            "no_text", "an image holds no text layer and OCR is off (ocr_engine: none)"
        )
    if len(frames) > max_pages:
        options.warn(
            "ocr_budget",
            f"{len(frames) - max_pages} pages not OCR'd: over max_ocr_pages={max_pages}",
        )
        frames = frames[:max_pages]
    blocks = _ocr_blocks(frames, engine_name, options.chunk_size)
    if blocks:
        options.warn("ocr_used", "text recognised by OCR")
    if describer.active:
        blocks = _with_descriptions(blocks, frames, describer)
    if not blocks:
        failed = "; the vision model failed" if describer.failed else ""
        raise ParseError("no_text", f"OCR found no text in the image{failed}")
    return blocks


def _ocr_blocks(frames: list[Any], engine_name: str, max_table_chars: int) -> list[Block]:
    if engine_name == "none":
        return []
    from stages.formats import ocr

    engine = ocr.get_engine(engine_name)
    pages = []
    for number, frame in enumerate(frames, start=1):
        lines = ocr.recognize(engine, frame)
        pages.append(layout.Page(number, frame.width, frame.height, ocr.spans(lines), "px", "ocr"))
    return [b for b in layout.document_blocks(pages, max_table_chars) if b.text.strip()]


def _with_descriptions(
    blocks: list[Block], frames: list[Any], describer: FigureDescriber
) -> list[Block]:
    """Each page's blocks followed by the vision model's description of that page."""
    result: list[Block] = []
    for number, frame in enumerate(frames, start=1):
        result.extend(b for b in blocks if b.page == number)
        description = describer.describe(frame)
        if description:
            anchor = {"page": number, "unit": "px", "box": [0, 0, frame.width, frame.height]}
            result.append(model_block(description, describer.model, number, anchor))
    describer.close()
    return result


def _frames(data: bytes, max_pixels: int) -> list[Any]:
    """Every frame decoded to RGB; a corrupt or oversized image is a ParseError."""
    from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > max_pixels:
                raise ParseError(
                    "too_complex",
                    f"{image.width} x {image.height} pixels exceed max_image_pixels={max_pixels}",
                )
            frames = []
            for frame in ImageSequence.Iterator(image):
                frame.load()
                frames.append(ImageOps.exif_transpose(frame).convert("RGB"))
    except ParseError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ParseError("parse_error", f"corrupt image: {type(exc).__name__}: {exc}") from exc
    except Image.DecompressionBombError as exc:
        raise ParseError("too_complex", f"image too large to decode: {exc}") from exc
    if not frames:
        raise ParseError("parse_error", "corrupt image: no frames")
    return frames
