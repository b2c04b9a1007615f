"""Image reader (png, jpg, tiff): OCR'd text as Blocks with line boxes and confidence.

Every frame of a multi-page TIFF is a page. Boxes are in image pixels (anchor unit "px"), origin
at the top-left corner. The file is decoded and checked with Pillow before any OCR library is
imported, so a corrupt image costs an error row, not a model load.
"""

from __future__ import annotations

import io
from typing import Any

from stages.formats import ParseError, ReadBlocks, layout

DEFAULT_MAX_OCR_PAGES = 50
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000  # about 7,000 x 7,000: an A4 page at 600 dpi is 35 M
DEFAULT_CHUNK_CHARS = 900


def read(data: bytes, options: Any) -> ReadBlocks:
    """Blocks of an image file; `options` is ingestion's Config (only the fields used here)."""
    engine_name = getattr(options, "ocr_engine", "rapidocr")
    max_pages = getattr(options, "max_ocr_pages", DEFAULT_MAX_OCR_PAGES)
    max_pixels = getattr(options, "max_image_pixels", DEFAULT_MAX_IMAGE_PIXELS)
    frames = _frames(data, max_pixels)
    if engine_name == "none":
        raise ParseError(
            "no_text", "an image holds no text layer and OCR is off (ocr_engine: none)"
        )
    warnings = []
    if len(frames) > max_pages:
        warnings.append(
            (
                "ocr_budget",
                f"{len(frames) - max_pages} pages not OCR'd: over max_ocr_pages={max_pages}",
            )
        )
        frames = frames[:max_pages]
    from stages.formats import ocr

    engine = ocr.get_engine(engine_name)
    pages = []
    for number, frame in enumerate(frames, start=1):
        lines = ocr.recognize(engine, frame)
        pages.append(layout.Page(number, frame.width, frame.height, ocr.spans(lines), "px", "ocr"))
    max_table_chars = getattr(options, "chunk_size", DEFAULT_CHUNK_CHARS)
    blocks = [b for b in layout.document_blocks(pages, max_table_chars) if b.text.strip()]
    if not blocks:
        raise ParseError("no_text", "OCR found no text in the image")
    return ReadBlocks(blocks, warnings=[*warnings, ("ocr_used", "text recognised by OCR")])


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
