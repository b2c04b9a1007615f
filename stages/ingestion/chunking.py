"""Chunking by structure (sentences packed up to the chunk size, headings and tables whole,
never across pages) and the `documents` / `chunks` rows of a parsed document.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

from stages.common.text import sentence_spans
from stages.formats import Block
from stages.formats.anchors import spans_within
from stages.ingestion.config import HEADING_MAX_CHARS, Config
from stages.ingestion.parsing import ParsedDocument


@dataclass
class Piece:
    start: int
    end: int
    section_path: str
    page: int | None
    kind: str


def _pieces(blocks: list[Block], size: int) -> list[Piece]:
    """Sentence-sized pieces for text, whole blocks for headings and tables (never split).

    A "sentence" over twice the chunk size (a run-on paragraph, a text without full stops) is
    cut into windows at spaces, so no chunk outgrows what the retriever and evidence can use.
    """
    pieces = []
    for block in blocks:
        if block.kind != "text":
            pieces.append(Piece(block.start, block.end, block.section_path, block.page, block.kind))
            continue
        for start, end in sentence_spans(block.text):
            for a, b in _windows(block.text, start, end, size):
                pieces.append(
                    Piece(block.start + a, block.start + b, block.section_path, block.page, "text")
                )
    return pieces


def _windows(text: str, start: int, end: int, size: int) -> list[tuple[int, int]]:
    if end - start <= 2 * size:
        return [(start, end)]
    windows = []
    while end - start > size:
        cut = text.rfind(" ", start + size // 2, start + size)
        cut = cut if cut > start else start + size
        windows.append((start, cut))
        start = cut + 1 if text[cut : cut + 1] == " " else cut
    return windows + ([(start, end)] if end > start else [])


def chunk_spans(blocks: list[Block], size: int, overlap: int) -> list[list[Piece]]:
    chunks: list[list[Piece]] = []
    current: list[Piece] = []
    for piece in _pieces(blocks, size):
        if current and _must_close(current, piece, size):
            chunks.append(current)
            continues = (
                piece.kind == "text"
                and piece.section_path == current[0].section_path
                and piece.page == current[-1].page
            )
            current = _overlap_tail(current, overlap) if continues else []
        current.append(piece)
    if current:
        chunks.append(current)
    return chunks


def _must_close(current: list[Piece], piece: Piece, size: int) -> bool:
    only_headings = all(p.kind == "heading" for p in current)
    if piece.page != current[-1].page:
        return True  # a chunk never spans pages, so a citation's page is exact
    if piece.kind == "heading":
        return not only_headings
    if current[-1].kind == "table":
        return True
    if piece.kind == "table":
        return not only_headings
    if piece.section_path != current[-1].section_path:
        return True
    return piece.end - current[0].start > size


def _overlap_tail(pieces: list[Piece], overlap: int) -> list[Piece]:
    tail: list[Piece] = []
    for piece in reversed(pieces):
        if piece.kind != "text" or pieces[-1].end - piece.start > overlap:
            break
        tail.insert(0, piece)
    return tail if len(tail) < len(pieces) else []


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _document_row(parsed: ParsedDocument, indexed_at: dt.datetime) -> dict:
    meta = parsed.meta
    title = (
        meta.title
        or parsed.title_hint
        or next((b.text for b in parsed.blocks if b.kind == "heading"), None)
        or _first_line(parsed.text)
        or Path(parsed.path).stem
    )
    return {
        "source_id": f"file:{parsed.path}",
        "doc_id": meta.doc_id,
        "path": parsed.path,
        "title": title,
        "version": meta.version,
        "published_at": meta.published_at,
        "last_modified": meta.last_modified or meta.published_at,
        "indexed_at": indexed_at,
        "permission_set": meta.permission_set,
        "trust_tier": meta.trust_tier,
        "language": meta.language,
        "subject": meta.subject,
        "supersedes": meta.supersedes,
        "doc_type": meta.doc_type,
        "text": parsed.text,
        "anchors": parsed.anchors,
        "content_hash": _digest(parsed.text),
    }


def _first_line(text: str) -> str | None:
    """A plain-text document's first line, when it is short enough to be its title."""
    line = text.strip().split("\n", 1)[0].strip()
    return line if 0 < len(line) <= HEADING_MAX_CHARS and any(c.isalpha() for c in line) else None


def _chunk_rows(parsed: ParsedDocument, config: Config, indexed_at: dt.datetime) -> list[dict]:
    document = _document_row(parsed, indexed_at)
    rows = []
    for index, pieces in enumerate(
        chunk_spans(parsed.blocks, config.chunk_size, config.chunk_overlap)
    ):
        start, end = pieces[0].start, pieces[-1].end
        text = parsed.text[start:end]
        section = next(
            (p.section_path for p in pieces if p.kind != "heading"), pieces[-1].section_path
        )
        rows.append(
            {
                **{k: document[k] for k in _INHERITED},
                "chunk_id": f"{parsed.meta.doc_id}#{index:04d}",
                "chunk_index": index,
                "section_path": section,
                "page_number": next((p.page for p in pieces if p.page is not None), None),
                "char_start": start,
                "char_end": end,
                "text": text,
                "is_table": any(p.kind == "table" for p in pieces),
                **_origin(parsed.blocks, start, end),
                "anchors": spans_within(parsed.anchors, start, end),
                "content_hash": _digest(text),
            }
        )
    return rows


def _origin(blocks: list[Block], start: int, end: int) -> dict:
    """Whether a chunk's text (document offsets start..end) came from OCR, and how sure."""
    scores = [
        b.confidence if b.confidence is not None else 0.0
        for b in blocks
        if b.origin == "ocr" and b.start < end and b.end > start
    ]
    if not scores:
        return {"origin": "text", "ocr_confidence": None}
    return {"origin": "ocr", "ocr_confidence": min(scores)}


_INHERITED = (
    "source_id",
    "doc_id",
    "title",
    "published_at",
    "last_modified",
    "indexed_at",
    "version",
    "permission_set",
    "trust_tier",
    "language",
)
