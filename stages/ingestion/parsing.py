"""Parsing one document into blocks: unstructured for md / html / txt / docx, the readers in
`stages.formats` for the rest, within the per-file budgets; blocks laid out as the
document's normalized text with offsets and section paths.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from stages.common.offline import patch_unstructured_spacy
from stages.common.text import normalize_text
from stages.formats import Block, ReadOptions, reader_for
from stages.formats.anchors import anchor_spans
from stages.formats.figures import FigureDescriber, figure_text
from stages.formats.tables import html_rows, table_blocks
from stages.ingestion.config import HEADING_MAX_CHARS, Config, DocumentMeta, IngestError
from stages.ingestion.decoding import decode_text
from stages.ingestion.html_text import (
    TITLE_RE,
    _flat_html_text,
    _skip_narrative_check,
    _with_figure_text,
    html_depth,
)
from stages.ingestion.word import _check_docx_structure, _with_alt_text


@dataclass
class ParsedDocument:
    meta: DocumentMeta
    path: str
    text: str
    blocks: list[Block] = field(default_factory=list)
    anchors: list[dict] = field(default_factory=list)  # {start, end, anchor JSON}
    encoding: str | None = None  # of a text format; None for pdf / docx
    title_hint: str | None = None  # the HTML <title> or the PDF's title
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)
    date_hint: dt.date | None = None  # the document's own date (a mail's latest message)
    attachments: list[Any] = field(default_factory=list)  # files it carries (mail attachments)


@dataclass
class ParseNotes:
    """What parsing learned besides the elements: encoding, a title, warnings."""

    encoding: str | None = None
    title_hint: str | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)
    date_hint: dt.date | None = None
    attachments: list[Any] = field(default_factory=list)


def _text_of(data: bytes, config: Config, notes: ParseNotes) -> str:
    decoded = decode_text(data, config.text_encodings, config.legacy_encodings)
    notes.encoding = decoded.encoding
    if decoded.nul_bytes:
        notes.warnings.append(("nul_bytes_stripped", f"{decoded.nul_bytes} NUL bytes removed"))
    if decoded.encoding.replace("_", "-").lower() not in ("utf-8", "utf-8-sig", "ascii"):
        notes.warnings.append(("encoding_detected", f"decoded as {decoded.encoding}"))
    if len(decoded.text) > config.max_text_chars:
        raise IngestError(
            "too_large",
            f"{len(decoded.text)} characters of text exceed max_text_chars={config.max_text_chars}",
        )
    return decoded.text


# unstructured detects each document's language with langdetect (a profiled share of a small
# Markdown file's parse time) only to fill `metadata.languages`, which nothing here reads (a
# document's language comes from its catalog row); [""] skips that step and leaves the elements
# otherwise identical.
NO_LANGUAGE_DETECTION = {"languages": [""]}


def _partition(path: str, data: bytes, config: Config, notes: ParseNotes) -> list[Any]:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".md", ".markdown"):
        from unstructured.partition.md import partition_md

        _skip_narrative_check()
        return partition_md(text=_text_of(data, config, notes), **NO_LANGUAGE_DETECTION)
    if suffix in (".html", ".htm"):
        return _partition_html(_text_of(data, config, notes), config, notes)
    if suffix == ".txt":
        from unstructured.partition.text import partition_text

        return partition_text(text=_text_of(data, config, notes), **NO_LANGUAGE_DETECTION)
    if suffix == ".docx":
        from unstructured.partition.docx import partition_docx

        _check_docx_structure(data, config)
        options = ReadOptions(path=path, config=config)
        describer = FigureDescriber(options)
        try:
            return partition_docx(
                file=io.BytesIO(_with_alt_text(data, describer)), **NO_LANGUAGE_DETECTION
            )
        finally:
            describer.close()
            notes.warnings.extend(options.warnings)
    raise IngestError("unsupported_type", f"no parser for {suffix or 'files without suffix'}")


def _partition_html(html: str, config: Config, notes: ParseNotes) -> list[Any]:
    title = TITLE_RE.search(html[:65_536])
    if title and (text := normalize_text(re.sub(r"<[^>]+>", "", title.group(1)))):
        notes.title_hint = text[:HEADING_MAX_CHARS]
    depth = html_depth(html)
    if depth > config.max_html_depth:
        # lxml stops at its own depth limit and returns no text; read the text flat instead.
        from unstructured.partition.text import partition_text

        notes.warnings.append(
            (
                "html_too_deep",
                f"tags nested {depth} deep, over max_html_depth={config.max_html_depth}: "
                "text read without its structure",
            )
        )
        return partition_text(text=_flat_html_text(html), **NO_LANGUAGE_DETECTION)
    from unstructured.partition.html import partition_html

    _skip_narrative_check()
    return partition_html(text=_with_figure_text(html), **NO_LANGUAGE_DETECTION)


_ELEMENT_CHARS = [1_000_000]  # the max_length the spaCy pipeline gets when it is used


def _bound_element_heuristics(max_chars: int) -> None:
    """Cap the text unstructured's spaCy heuristics read per element (it truncates, with a log
    line, at the model's max_length), which bounds ingestion's memory on huge paragraphs. The
    model is loaded only when a parser asks for it (plain text, Word, PDF): Markdown and HTML
    no longer need it (`_skip_narrative_check`), and it costs a re-run about a second."""
    import unstructured.nlp.tokenize as tokenize

    _ELEMENT_CHARS[0] = max_chars
    if not getattr(tokenize._get_nlp, "_bounded", False):
        loaded = tokenize._get_nlp

        def bounded_nlp() -> Any:
            nlp = loaded()
            nlp.max_length = _ELEMENT_CHARS[0]
            return nlp

        bounded_nlp._bounded = True  # type: ignore[attr-defined]
        tokenize._get_nlp = bounded_nlp
    logging.getLogger(tokenize.__name__).setLevel(logging.ERROR)  # the truncation is deliberate


def _is_heading(element: Any, text: str) -> bool:
    # unstructured labels short plain-text lines as Title; a sentence is not a heading.
    return (
        element.category == "Title"
        and len(text) <= HEADING_MAX_CHARS
        and not text.rstrip().endswith((".", "!", "?", ":", ";", ","))
    )


def _blocks(elements: list[Any], max_table_chars: int) -> list[Block]:
    blocks = []
    tables = 0
    for element in elements:
        text = normalize_text(element.text or "")
        if not text or element.category in ("PageBreak", "Header", "Footer", "PageNumber"):
            continue
        page = getattr(element.metadata, "page_number", None)
        if element.category == "Table":
            tables += 1
            html = getattr(element.metadata, "text_as_html", None)
            blocks.extend(_table(html_rows(html), text, page, max_table_chars, tables))
        elif element.category == "Image":
            # an html/markdown image's text is its alt text, written by the author; without
            # one unstructured gives no text and the image adds nothing
            blocks.append(
                Block("text", figure_text("", [text]) or text, page, meta={"figure": True})
            )
        elif _is_heading(element, text):
            depth = getattr(element.metadata, "category_depth", None) or 0
            blocks.append(Block("heading", text, page, depth=depth))
        else:
            blocks.append(Block("text", text, page))
    return blocks


def _table(
    rows: list[list[str]], text: str, page: int | None, max_chars: int, number: int
) -> list[Block]:
    """A parsed table as table blocks: cells with their headers, row groups when it is large,
    each row line anchored as the document's `number`-th table and its row under the header."""
    rows = [[normalize_text(cell) for cell in row] for row in rows]
    # a docx with page breaks knows the page; the anchor keeps it, as a citation shows one place
    where = {"table": number} if page is None else {"page": page, "table": number}
    if len(rows) < 2:
        line = " | ".join(rows[0]).strip() if rows else text
        return [Block("table", line, page, anchor=where)]
    return table_blocks(
        rows[0], rows[1:], page, max_chars, row_anchor=lambda index: {**where, "row": index}
    )


def _layout(blocks: list[Block]) -> str:
    """Join blocks into the normalized document text, recording offsets and section paths."""
    parts, offset, headings = [], 0, []
    for block in blocks:
        if block.kind == "heading":
            headings = [h for h in headings if h.depth < block.depth] + [block]
        block.section_path = " > ".join(h.text for h in headings)
        block.start, block.end = offset, offset + len(block.text)
        parts.append(block.text)
        offset = block.end + 2
    return "\n\n".join(parts)


def parse_document(path: str, data: bytes | None, size: int, meta: DocumentMeta, config: Config):
    if data is None or size > config.max_file_bytes:
        raise IngestError(
            "too_large", f"{size} bytes exceeds max_file_bytes={config.max_file_bytes}"
        )
    if size == 0:
        raise IngestError("empty_file", "zero-byte file")
    notes = ParseNotes()
    reader = reader_for(PurePosixPath(path).suffix)
    try:
        if reader is not None:
            blocks = _read(reader, path, data, config, notes)
        else:
            elements = _partition(path, data, config, notes)
            blocks = _blocks(elements, config.chunk_size)
            del elements  # the element tree is the largest thing a parse holds
    except IngestError:
        raise
    except RecursionError as exc:
        raise IngestError("too_complex", "structure nested too deeply to parse") from exc
    except Exception as exc:  # parsers raise anything on corrupt input; record it, go on
        raise IngestError("parse_error", f"{type(exc).__name__}: {str(exc)[:300]}") from exc
    if not blocks:
        if path.lower().endswith(".pdf"):
            raise IngestError("no_text", "the PDF has no text layer (scanned images?)")
        raise IngestError("empty_document", "the file holds no text (only markup or whitespace)")
    text = _layout(blocks)
    return ParsedDocument(
        meta=meta,
        path=path,
        text=text,
        blocks=blocks,
        anchors=anchor_spans(blocks),
        encoding=notes.encoding,
        title_hint=notes.title_hint,
        warnings=notes.warnings,
        date_hint=notes.date_hint,
        attachments=notes.attachments,
    )


def _read(reader: Any, path: str, data: bytes, config: Config, notes: ParseNotes) -> list[Block]:
    """Blocks from a `stages.formats` reader, within the same text budget as the others."""
    options = ReadOptions(path=path, config=config, decode=lambda raw: _text_of(raw, config, notes))
    read = reader(data, options)
    notes.warnings.extend(options.warnings)
    notes.title_hint = notes.title_hint or options.title_hint
    notes.date_hint, notes.attachments = options.date_hint, options.attachments
    for block in read:
        block.text = normalize_text(block.text)
    blocks = [b for b in read if b.text]
    chars = sum(len(b.text) for b in blocks)
    if chars > config.max_text_chars:
        raise IngestError(
            "too_large", f"{chars} characters of text exceed max_text_chars={config.max_text_chars}"
        )
    return blocks


def _prepare_parsers(max_element_chars: int) -> None:
    """Cheap after the first call (unstructured keeps its spaCy pipeline)."""
    patch_unstructured_spacy()
    _bound_element_heuristics(max_element_chars)
