"""OCR behind a tiny interface: an engine turns a page image into text lines with boxes.

Imported only when a scanned page or an image turns up, so a corpus without scans never loads
an OCR library. The one engine today is RapidOCR (PP-OCR models as ONNX, run by onnxruntime)
with the detection and recognition models that ship inside the `rapidocr` wheel: nothing is
downloaded, and a missing model file is an error, never a download.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from stages.formats import ParseError
from stages.formats.layout import Span

ENGINES = ("rapidocr", "none")
# Glyph height (ascender to baseline, or to the descender when the text has one) as a share of
# the font size, and how much taller RapidOCR's detection box is than the glyphs: together they
# turn a box height into a font size comparable across lines (for headings and gaps).
DESCENDERS = set("gjpqy(),;[]{}|@$")
ASCENT_SHARE, FULL_SHARE, BOX_PADDING = 0.72, 0.93, 1.45
DETECTION_MIN_SIDE = 736  # RapidOCR's Det.limit_side_len with limit_type "min"


@dataclass
class OcrLine:
    """One recognised run of text: its box in image pixels (x0, y0, x1, y1) and score 0..1."""

    text: str
    box: tuple[float, float, float, float]
    confidence: float


class OcrEngine(Protocol):
    def recognize(self, image: Any) -> list[OcrLine]:
        """Text lines of a PIL image, in no particular order."""


class RapidOcrEngine:
    """RapidOCR with its packaged PP-OCR detection and recognition models.

    The angle classifier is off: on upright scans it only adds errors (it once turned "Q3"
    into garbage), and a rotated page is rare in a document corpus.
    """

    def __init__(self) -> None:
        import rapidocr
        from rapidocr import RapidOCR

        models = Path(rapidocr.__file__).parent / "models"
        det = models / "PP-OCRv6_det_small.onnx"
        rec = models / "PP-OCRv6_rec_small.onnx"
        missing = [p.name for p in (det, rec) if not p.is_file()]
        if missing:
            raise ParseError("ocr_unavailable", f"RapidOCR model files missing: {missing}")
        self._ocr = RapidOCR(
            params={
                "Global.use_cls": False,
                "Global.log_level": "error",
                "Det.model_path": str(det),
                "Rec.model_path": str(rec),
            }
        )

    def recognize(self, image: Any) -> list[OcrLine]:
        import numpy as np
        from PIL import ImageFilter

        # A 3x3 median removes scanner specks, which otherwise swallow the spaces between
        # words ("seatcontract"): on generated scans 90 % -> 100 % of words, text unharmed.
        cleaned = _padded(image.convert("RGB").filter(ImageFilter.MedianFilter(3)))
        pixels = np.asarray(cleaned)[:, :, ::-1]  # RapidOCR expects BGR
        result = self._ocr(pixels)
        if result is None or getattr(result, "txts", None) is None:
            return []
        lines = []
        for points, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            xs = [float(p[0]) for p in points]
            ys = [float(p[1]) for p in points]
            if text.strip():
                lines.append(OcrLine(text.strip(), (min(xs), min(ys), max(xs), max(ys)), score))
        return lines


def _padded(image: Any) -> Any:
    """The image on a white canvas whose short side is at least DETECTION_MIN_SIDE, top-left
    aligned so boxes keep their coordinates: detection scales a smaller image up to that side,
    and a 900 x 120 strip blown up six times came back split ("Enterprise 4", "49")."""
    from PIL import Image

    width, height = image.size
    if min(width, height) >= DETECTION_MIN_SIDE:
        return image
    canvas = Image.new(
        "RGB", (max(width, DETECTION_MIN_SIDE), max(height, DETECTION_MIN_SIDE)), "white"
    )
    canvas.paste(image, (0, 0))
    return canvas


@lru_cache(maxsize=2)
def _load(name: str) -> OcrEngine:
    if name == "rapidocr":
        return RapidOcrEngine()
    raise ParseError("ocr_unavailable", f"unknown OCR engine {name!r}; known: {ENGINES}")


def get_engine(name: str) -> OcrEngine:
    """The engine by name, loaded once per process (the models take about a second)."""
    try:
        return _load(name)
    except ParseError:
        raise
    except ImportError as exc:
        raise ParseError("ocr_unavailable", f"OCR engine {name!r} not installed: {exc}") from exc
    except Exception as exc:  # onnxruntime refusing a model is a backend failure, not bad input
        raise ParseError("ocr_failed", f"OCR engine {name!r} failed to load: {exc}") from exc


def recognize(engine: OcrEngine, image: Any) -> list[OcrLine]:
    """The engine's lines, with a backend failure reported as an error row, not a crash."""
    try:
        return engine.recognize(image)
    except ParseError:
        raise
    except Exception as exc:
        raise ParseError("ocr_failed", f"OCR failed: {type(exc).__name__}: {exc}") from exc


def font_size(line: OcrLine) -> float:
    """The font size a detection box implies, corrected for lines without descenders."""
    height = line.box[3] - line.box[1]
    share = FULL_SHARE if DESCENDERS & set(line.text) else ASCENT_SHARE
    return height / BOX_PADDING / share


def spans(lines: list[OcrLine], scale: float = 1.0) -> list[Span]:
    """OCR lines as layout spans, coordinates multiplied by `scale` (pixels to points)."""
    return [
        Span(
            line.text,
            line.box[0] * scale,
            line.box[1] * scale,
            line.box[2] * scale,
            line.box[3] * scale,
            font_size(line) * scale,
            confidence=round(float(line.confidence), 4),
        )
        for line in lines
    ]
