"""Format readers: one module per family of file formats, shared by ingestion (a helper package,
not a stage: it never imports a stage).

A reader turns a file's bytes into `Block`s: headings, text and tables in reading order, each with
the page it sits on and, where the format has one, an `anchor` that says where in the original
file the block is (a page box, a slide, a cell range, a time range, a ticket comment). Ingestion
lays the blocks out into the document text and keeps the anchors beside it, so a citation can
point back into the original file.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class ParseError(Exception):
    """A file that cannot be read: `kind` becomes the error row's `error_kind`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Block:
    """One structural element of a document: heading, text or table.

    `anchor` is a small JSON-able dict in the format's own terms, for example
    {"page": 3, "box": [x0, y0, x1, y1]}, {"slide": 2}, {"sheet": "Prices", "range": "A1:D4"},
    {"start": "00:01:02.000", "end": "00:01:09.500", "speaker": "Ana"},
    {"ticket": "T-42", "comment": 3, "author": "...", "date": "..."}.
    `origin` is "ocr" for text recognised from an image, with `confidence` its mean score.
    Finer anchors inside the block (a table's rows, a transcript's cues) go in
    `meta["anchors"]`: [{"start": s, "end": e, "anchor": {...}}], offsets into `text`.
    """

    kind: str
    text: str
    page: int | None
    depth: int = 0
    start: int = 0
    end: int = 0
    section_path: str = ""
    anchor: dict[str, Any] | None = None
    origin: str = "text"
    confidence: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. a table's cells


@dataclass
class ReadOptions:
    """What a reader gets besides the file's bytes.

    `config` is ingestion's Config; a setting not held here is read from it
    (`options.chunk_size`). `decode` turns bytes into text with ingestion's encoding rules (BOM,
    configured encodings, charset-normalizer) and records the encoding; readers of text formats
    call `options.text(data)`. Warnings go to `warn`, the document's own title to `title_hint`,
    its own date (a mail's latest message) to `date_hint`, and files it carries (a mail's
    attachments) to `attachments`, which ingestion reads as documents of their own.
    """

    path: str = ""
    config: Any = None
    decode: Callable[[bytes], str] | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)
    title_hint: str | None = None
    date_hint: dt.date | None = None
    attachments: list[Any] = field(default_factory=list)  # e.g. stages.formats.mail.Attachment

    def __getattr__(self, name: str) -> Any:
        config = self.__dict__.get("config")
        if config is None or name.startswith("_"):
            raise AttributeError(name)
        return getattr(config, name)

    def text(self, data: bytes) -> str:
        return self.decode(data) if self.decode is not None else data.decode("utf-8")

    def warn(self, kind: str, message: str) -> None:
        self.warnings.append((kind, message))

    @property
    def stem(self) -> str:
        """The file's name without folder and suffix: a title of last resort."""
        name = self.path.rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0] if "." in name else name


# The reader module for each suffix; each exposes `read(data: bytes, options) -> list[Block]`
# and is imported only when a file of its kind turns up (OCR and Office readers are heavy).
# Suffixes not listed here are read by ingestion's unstructured partitioners.
READER_MODULES: dict[str, str] = {
    ".pdf": "stages.formats.pdf",
    **dict.fromkeys((".png", ".jpg", ".jpeg", ".tif", ".tiff"), "stages.formats.images"),
    ".pptx": "stages.formats.slides",
    ".xlsx": "stages.formats.spreadsheets",
    ".csv": "stages.formats.spreadsheets",  # a ticket export is recognised by its columns
    ".vtt": "stages.formats.subtitles",
    ".srt": "stages.formats.subtitles",
    ".json": "stages.formats.tickets",
    ".jsonl": "stages.formats.tickets",
    ".eml": "stages.formats.mail",
    ".mbox": "stages.formats.mail",
}


def reader_for(suffix: str) -> Callable[[bytes, Any], list[Block]] | None:
    """The `read` function for a file suffix (".pptx"), or None when ingestion reads it itself."""
    module = READER_MODULES.get(suffix.lower())
    return None if module is None else importlib.import_module(module).read
