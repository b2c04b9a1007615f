"""Stage 1, ingestion: parse md/html/txt/pdf/docx with unstructured and chunk by structure.

Input is a snapshot of the corpus (`corpus_files`: path, bytes, sha256), so the stage is a pure
function of its input table and the cache key follows the content, never file paths. Document
metadata comes from `catalog.yaml` at the corpus root and/or `<file>.meta.yaml|json` sidecars.
Every file that cannot be ingested becomes a row in `ingestion_errors`; the run goes on.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stages import contracts
from stages.common import progress
from stages.common.offline import patch_unstructured_spacy
from stages.common.text import normalize_text, sentence_spans

NAME = "ingestion"
VERSION = "1.1.0"
OUTPUTS = ("documents", "chunks", "ingestion_errors")  # contract tables written
INPUTS = ("corpus_files",)  # contract tables and blobs read
PER_QUESTION = False

DOCUMENT_SUFFIXES = (".md", ".markdown", ".html", ".htm", ".txt", ".pdf", ".docx")
SIDECAR_SUFFIXES = (".meta.yaml", ".meta.yml", ".meta.json")
CATALOG_NAMES = ("catalog.yaml", "catalog.yml", "catalog.json")
TRUST_TIERS = ("canonical", "verified", "community", "untrusted")
HEADING_MAX_CHARS = 120


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_size: int = Field(900, ge=100, description="target chunk length in characters")
    chunk_overlap: int = Field(150, ge=0, description="characters repeated between chunks")
    max_file_bytes: int = Field(25_000_000, ge=1)
    pdf_strategy: str = "fast"
    text_encodings: list[str] = ["utf-8", "utf-16"]
    default_permission_set: list[str] = ["everyone"]
    default_trust_tier: str = "untrusted"


class DocumentMeta(BaseModel):
    """The sidecar / catalog entry schema; unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = None
    doc_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    title: str | None = None
    version: str = "1"
    published_at: dt.date | None = None
    last_modified: dt.date | None = None
    permission_set: list[str]
    trust_tier: str
    language: str = "en"
    subject: str | None = None
    supersedes: list[str] = []
    doc_type: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> str:
        return str(value)

    @field_validator("trust_tier")
    @classmethod
    def _known_tier(cls, value: str) -> str:
        if value not in TRUST_TIERS:
            raise ValueError(f"trust_tier must be one of {TRUST_TIERS}, got {value!r}")
        return value


class IngestError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Block:
    """One structural element of a document: heading, text or table."""

    kind: str
    text: str
    page: int | None
    depth: int = 0
    start: int = 0
    end: int = 0
    section_path: str = ""


@dataclass
class Piece:
    start: int
    end: int
    section_path: str
    page: int | None
    kind: str


@dataclass
class ParsedDocument:
    meta: DocumentMeta
    path: str
    text: str
    blocks: list[Block] = field(default_factory=list)


# ---------------------------------------------------------------- snapshot (the stage's source)


def snapshot_corpus(root: str | Path, max_file_bytes: int = Config().max_file_bytes) -> pa.Table:
    """Read every file under `root` into a `corpus_files` table (too-large files without bytes)."""
    root = Path(root)
    rows = []
    paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    for path in paths:
        relative = path.relative_to(root).as_posix()
        if any(part.startswith(".") for part in PurePosixPath(relative).parts):
            continue
        size = path.stat().st_size
        content = path.read_bytes() if size <= max_file_bytes else None
        digest = hashlib.sha256(content).hexdigest() if content is not None else f"size:{size}"
        rows.append({"path": relative, "size_bytes": size, "sha256": digest, "content": content})
    return contracts.from_rows(rows, "corpus_files")


# ---------------------------------------------------------------- metadata


def _load_structured(path: str, data: bytes) -> Any:
    text = data.decode("utf-8")
    return json.loads(text) if path.endswith(".json") else yaml.safe_load(text)


def _collect_metadata(
    files: dict[str, bytes | None], errors: list[dict]
) -> dict[str, DocumentMeta]:
    """Map document path -> validated metadata, from the catalog(s) and sidecars.

    Catalog paths are relative to the catalog's folder; a sidecar overrides the catalog.
    """
    entries: dict[str, tuple[str, dict]] = {}
    for path, data in files.items():
        name = PurePosixPath(path).name
        if name not in CATALOG_NAMES or data is None:
            continue
        base = PurePosixPath(path).parent
        try:
            catalog = _load_structured(path, data) or {}
            documents = catalog.get("documents", []) if isinstance(catalog, dict) else None
            if not isinstance(documents, list):
                raise ValueError("expected a mapping with a 'documents' list")
        except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
            errors.append(_error(path, "invalid_metadata", f"catalog unreadable: {exc}"))
            continue
        for index, entry in enumerate(documents):
            if not isinstance(entry, dict) or "path" not in entry:
                errors.append(_error(path, "invalid_metadata", f"entry {index} has no 'path'"))
                continue
            entries[str(base / entry["path"])] = (path, entry)
    for path, data in files.items():
        sidecar = next((s for s in SIDECAR_SUFFIXES if path.endswith(s)), None)
        if sidecar is None or data is None:
            continue
        try:
            entry = _load_structured(path, data)
            if not isinstance(entry, dict):
                raise ValueError("expected a mapping")
        except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
            errors.append(_error(path, "invalid_metadata", f"sidecar unreadable: {exc}"))
            continue
        entries[path.removesuffix(sidecar)] = (path, entry)  # a sidecar overrides the catalog
    metadata: dict[str, DocumentMeta] = {}
    for doc_path, (source, entry) in entries.items():
        try:
            metadata[doc_path] = DocumentMeta.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors()
            )
            errors.append(_error(doc_path, "invalid_metadata", f"in {source}: {problems}"))
            metadata[doc_path] = None  # type: ignore[assignment]  # known but unusable
    return metadata


def _default_meta(path: str, config: Config) -> DocumentMeta:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", PurePosixPath(path).with_suffix("").as_posix())
    return DocumentMeta(
        doc_id=stem.strip("-") or "document",
        permission_set=config.default_permission_set,
        trust_tier=config.default_trust_tier,
    )


# ---------------------------------------------------------------- parsing


def _decode(data: bytes, encodings: list[str]) -> str:
    for encoding in encodings:
        if encoding == "utf-16" and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue  # without a BOM, UTF-16 "decodes" almost any bytes into garbage
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text:
            return text.lstrip("\ufeff")
    raise IngestError("undecodable_text", f"not valid text in any of {encodings}")


class _TableRows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.rows:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_to_text(html: str | None, fallback: str) -> str:
    """One line per row, each cell labelled with its header, so a row is a citable sentence."""
    if not html:
        return fallback
    parser = _TableRows()
    parser.feed(html)
    rows = [row for row in parser.rows if any(row)]
    if len(rows) < 2:
        return " | ".join(rows[0]) if rows else fallback
    header, body = rows[0], rows[1:]
    lines = [" | ".join(header)]
    for row in body:
        cells = [f"{h}: {c}" if h else c for h, c in zip(header, row, strict=False) if c]
        lines.append("; ".join(cells) + ".")
    return "\n".join(lines)


def _partition(path: str, data: bytes, config: Config) -> list[Any]:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".md", ".markdown"):
        from unstructured.partition.md import partition_md

        return partition_md(text=_decode(data, config.text_encodings))
    if suffix in (".html", ".htm"):
        from unstructured.partition.html import partition_html

        return partition_html(text=_decode(data, config.text_encodings))
    if suffix == ".txt":
        from unstructured.partition.text import partition_text

        return partition_text(text=_decode(data, config.text_encodings))
    if suffix == ".pdf":
        from unstructured.partition.pdf import partition_pdf

        _check_pdf_structure(data)

        return partition_pdf(file=io.BytesIO(data), strategy=config.pdf_strategy)
    if suffix == ".docx":
        from unstructured.partition.docx import partition_docx

        return partition_docx(file=io.BytesIO(data))
    raise IngestError("unsupported_type", f"no parser for {suffix or 'files without suffix'}")


def _check_pdf_structure(data: bytes) -> None:
    """pdfminer returns no elements for a corrupt PDF; tell corrupt apart from text-less."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        pages = len(PdfReader(io.BytesIO(data)).pages)
    except (PyPdfError, ValueError, OSError) as exc:
        raise IngestError("parse_error", f"corrupt PDF: {type(exc).__name__}: {exc}") from exc
    if pages == 0:
        raise IngestError("parse_error", "corrupt PDF: no pages")


def _is_heading(element: Any, text: str) -> bool:
    # unstructured labels short plain-text lines as Title; a sentence is not a heading.
    return (
        element.category == "Title"
        and len(text) <= HEADING_MAX_CHARS
        and not text.rstrip().endswith((".", "!", "?", ":", ";", ","))
    )


def _blocks(elements: list[Any]) -> list[Block]:
    blocks = []
    for element in elements:
        text = normalize_text(element.text or "")
        if not text or element.category in ("PageBreak", "Header", "Footer", "PageNumber"):
            continue
        page = getattr(element.metadata, "page_number", None)
        if element.category == "Table":
            html = getattr(element.metadata, "text_as_html", None)
            blocks.append(Block("table", normalize_text(table_to_text(html, text)), page))
        elif _is_heading(element, text):
            depth = getattr(element.metadata, "category_depth", None) or 0
            blocks.append(Block("heading", text, page, depth=depth))
        else:
            blocks.append(Block("text", text, page))
    return blocks


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
    try:
        elements = _partition(path, data, config)
    except IngestError:
        raise
    except Exception as exc:  # parsers raise anything on corrupt input; record it, go on
        raise IngestError("parse_error", f"{type(exc).__name__}: {str(exc)[:300]}") from exc
    blocks = _blocks(elements)
    if not blocks:
        kind = "no_text" if path.lower().endswith(".pdf") else "empty_document"
        raise IngestError(kind, "the parser found no text (scanned PDF or empty content?)")
    text = _layout(blocks)
    return ParsedDocument(meta=meta, path=path, text=text, blocks=blocks)


# ---------------------------------------------------------------- chunking


def _pieces(blocks: list[Block]) -> list[Piece]:
    """Sentence-sized pieces for text, whole blocks for headings and tables (never split)."""
    pieces = []
    for block in blocks:
        if block.kind == "text":
            for start, end in sentence_spans(block.text):
                pieces.append(
                    Piece(
                        block.start + start,
                        block.start + end,
                        block.section_path,
                        block.page,
                        "text",
                    )
                )
        else:
            pieces.append(Piece(block.start, block.end, block.section_path, block.page, block.kind))
    return pieces


def chunk_spans(blocks: list[Block], size: int, overlap: int) -> list[list[Piece]]:
    chunks: list[list[Piece]] = []
    current: list[Piece] = []
    for piece in _pieces(blocks):
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


# ---------------------------------------------------------------- stage entry point


def _error(path: str, kind: str, message: str, severity: str = "error") -> dict:
    return {"path": path, "error_kind": kind, "severity": severity, "message": message}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    patch_unstructured_spacy()
    table = inputs["corpus_files"]
    files = dict(
        zip(table.column("path").to_pylist(), table.column("content").to_pylist(), strict=True)
    )
    sizes = dict(
        zip(table.column("path").to_pylist(), table.column("size_bytes").to_pylist(), strict=True)
    )
    errors: list[dict] = []
    metadata = _collect_metadata(files, errors)
    indexed_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    documents, chunks, seen_ids = [], [], set()
    document_paths = [p for p in files if _is_document_candidate(p)]
    for path in progress.track(document_paths, "parsing documents"):
        if not path.lower().endswith(DOCUMENT_SUFFIXES):
            suffix = PurePosixPath(path).suffix or "no suffix"
            errors.append(_error(path, "unsupported_type", f"no parser for {suffix}"))
            continue
        if path in metadata and metadata[path] is None:
            continue  # invalid metadata was already recorded; without it permissions are unknown
        meta = metadata.get(path)
        if meta is None:
            meta = _default_meta(path, config)
            errors.append(
                _error(
                    path,
                    "missing_metadata",
                    "no catalog entry or sidecar: defaults used",
                    "warning",
                )
            )
        if meta.doc_id in seen_ids:
            errors.append(_error(path, "duplicate_doc_id", f"doc_id {meta.doc_id!r} already used"))
            continue
        try:
            parsed = parse_document(path, files[path], sizes[path], meta, config)
        except IngestError as exc:
            errors.append(_error(path, exc.kind, str(exc)))
            continue
        seen_ids.add(meta.doc_id)
        documents.append(_document_row(parsed, indexed_at))
        chunks.extend(_chunk_rows(parsed, config, indexed_at))
    for doc_path in sorted(set(metadata) - set(files)):
        errors.append(_error(doc_path, "missing_file", "listed in the catalog but not found"))
    return {
        "documents": contracts.from_rows(documents, "documents"),
        "chunks": contracts.from_rows(chunks, "chunks"),
        "ingestion_errors": contracts.from_rows(errors, "ingestion_errors"),
    }


def _is_document_candidate(path: str) -> bool:
    name = PurePosixPath(path).name
    if name in CATALOG_NAMES or any(path.endswith(s) for s in SIDECAR_SUFFIXES):
        return False
    return name.lower() not in ("readme.md", "license", "license.txt")


def _document_row(parsed: ParsedDocument, indexed_at: dt.datetime) -> dict:
    meta = parsed.meta
    title = meta.title or next(
        (b.text for b in parsed.blocks if b.kind == "heading"), Path(parsed.path).stem
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
        "content_hash": _digest(parsed.text),
    }


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
                "content_hash": _digest(text),
            }
        )
    return rows


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
