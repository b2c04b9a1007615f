"""Stage 1, ingestion: parse documents into blocks and chunk them by structure.

md/html/txt/docx are read with unstructured; the formats with a reader in `stages.formats` by that
reader: PDFs (text layer with pdfplumber), scanned pages and png/jpg/tiff images (offline OCR),
pptx, xlsx, csv, vtt, srt and ticket exports in json/jsonl/csv. Tables are blocks of their own
(`stages.formats.tables`), and the anchors the readers give (a page box, a slide, a cell range, a
time range, a ticket comment) are kept beside the text in `documents.anchors` and
`chunks.anchors`, so a citation can point back into the original file; rows of html, docx and
markdown tables are anchored as "table 2, row 3". Figures are described only from what is true
offline: an html or markdown image and a docx picture by its alt text, an html `<figure>` by its
`<figcaption>` and alt text, a PDF figure by its caption and the text OCR finds inside it
(`stages.formats.pdf`); a picture with neither adds nothing. A vision model behind an
OpenAI-compatible endpoint (the `vision` block, off by default) can add its own description of
PDF figures, image files and pptx/docx pictures, marked as the model's (`stages.formats.figures`).

Input is a snapshot of the corpus (`corpus_files`: path, size, sha256 and where to read the file),
so the stage is a pure function of its input table and the cache key follows the content. A file
is read when it is parsed and its sha256 checked, so memory is bounded by one file, not by the
corpus. Below the stage, each document's rows are cached under a key of its bytes, metadata,
parser and chunker config (`stages/common/parts_cache.py`): a changed corpus re-parses only new
and changed files, and a deleted file's rows are simply not assembled. Document metadata comes
from `catalog.yaml` at the corpus root and/or `<file>.meta.yaml|json` sidecars. Every file that
cannot be ingested becomes a row in `ingestion_errors`; the run goes on.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import importlib
import importlib.metadata
import io
import json
import logging
import os
import re
import secrets
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import pyarrow as pa
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stages import contracts
from stages.common import parts_cache, progress
from stages.common.offline import patch_unstructured_spacy
from stages.common.stat_cache import StatCache
from stages.common.text import normalize_text, sentence_spans
from stages.formats import READER_MODULES, Block, ParseError, ReadOptions, reader_for
from stages.formats.anchors import anchor_spans, spans_within
from stages.formats.figures import FigureDescriber, figure_text
from stages.formats.tables import html_rows, table_blocks
from stages.models.settings import VisionSettings

NAME = "ingestion"
VERSION = "1.8.0"  # 1.6: figures, table row anchors; 1.7: sentence ends skip abbreviations;
# 1.8: leading initials ("J. A. Hobson") do not end a sentence
OUTPUTS = ("documents", "chunks", "ingestion_errors")  # contract tables written
INPUTS = ("corpus_files",)  # contract tables and blobs read
PER_QUESTION = False
# Parsing is pure Python under the GIL: a runner computes many documents' parts in processes.
PARTS_HOLD_GIL = True

# unstructured's formats, plus every suffix a reader in stages.formats reads
DOCUMENT_SUFFIXES = tuple(
    dict.fromkeys((".md", ".markdown", ".html", ".htm", ".txt", ".docx", *READER_MODULES))
)
SIDECAR_SUFFIXES = (".meta.yaml", ".meta.yml", ".meta.json")
CATALOG_NAMES = ("catalog.yaml", "catalog.yml", "catalog.json")
TRUST_TIERS = ("canonical", "verified", "community", "untrusted")
HEADING_MAX_CHARS = 120


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chunk_size: int = Field(900, ge=100, description="target chunk length in characters")
    chunk_overlap: int = Field(150, ge=0, description="characters repeated between chunks")
    max_file_bytes: int = Field(25_000_000, ge=1)
    # Scanned PDF pages (no text layer, an image) and image files are OCR'd; "none" turns it
    # off (they become no_text error rows). Pages with a text layer are never OCR'd.
    ocr_engine: Literal["rapidocr", "none"] = "rapidocr"
    max_ocr_pages: int = Field(50, ge=0, description="scanned pages and figures OCR'd per document")
    # Images on PDF pages with a text layer become figure text from their caption and the
    # text OCR finds inside them (never an invented description).
    max_figures: int = Field(20, ge=0, description="figures described per PDF")
    # An OpenAI-compatible vision endpoint that also describes figures and image files, its
    # words marked as the model's; off unless base_url and model are set. Part of the parser
    # identity through this config, so another model or endpoint re-parses the documents.
    vision: VisionSettings = VisionSettings()
    max_image_pixels: int = Field(50_000_000, ge=1, description="pixels of one image or frame")
    text_encodings: list[str] = Field(
        ["utf-8"], description="tried in order before charset-normalizer guesses the encoding"
    )
    legacy_encodings: list[str] = Field(
        ["cp1252"], description="preferred to charset-normalizer's guess when no messier"
    )
    # A folder with no catalog at all is the user's own folder: its files are trusted enough to
    # be cited. A file that an existing catalog does not list is a stray and stays untrusted.
    default_permission_set: list[str] = ["everyone"]
    default_trust_tier: str = "verified"
    unlisted_trust_tier: str = "untrusted"
    follow_symlinks_outside_root: bool = Field(
        False, description="read symlinks whose target lies outside the corpus folder"
    )
    # Budget that bounds memory and time per file (parsers hold a whole file's element tree).
    max_text_chars: int = Field(2_000_000, ge=1, description="decoded text per file")
    max_pdf_pages: int = Field(2_000, ge=1)
    max_html_depth: int = Field(200, ge=1, description="tag nesting the HTML parser is given")
    # unstructured classifies each element with spaCy, which holds about 7 MB per 1,000
    # characters: a 1 MB paragraph took 8 GB. Longer elements keep all their text; only the
    # classification heuristics see this many characters of it.
    max_element_chars: int = Field(20_000, ge=1_000)

    @field_validator("default_trust_tier", "unlisted_trust_tier")
    @classmethod
    def _known_default_tier(cls, value: str) -> str:
        if value not in TRUST_TIERS:
            raise ValueError(f"must be one of {TRUST_TIERS}, got {value!r}")
        return value


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


# A file that cannot be read; the readers in stages.formats raise the same class.
IngestError = ParseError


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
    anchors: list[dict] = field(default_factory=list)  # {start, end, anchor JSON}
    encoding: str | None = None  # of a text format; None for pdf / docx
    title_hint: str | None = None  # the HTML <title> or the PDF's title
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (kind, message)


# ---------------------------------------------------------------- snapshot (the stage's source)

# Rows for entries that cannot be read carry no content and a `skipped:<severity>:<kind>:<why>`
# marker in place of the digest, so the stage turns them into rows of `ingestion_errors`.
SKIPPED_PREFIX = "skipped:"
# A virtual row (hidden names are never corpus files) with each file's modification date, for
# folders without a catalog, where the file's date is the only date there is.
FILE_DATES_PATH = ".snapshot/file_dates.json"


@dataclass
class _Entry:
    relative: str
    path: Path | None = None
    skipped: tuple[str, str, str] | None = None  # (severity, kind, message)
    real: Path | None = None


def snapshot_corpus(
    root: str | Path,
    max_file_bytes: int = Config().max_file_bytes,
    *,
    follow_symlinks_outside_root: bool = False,
    stat_cache: StatCache | None = None,
) -> pa.Table:
    """Read every file under `root` into a `corpus_files` table.

    Too-large files come without bytes; symlinks that leave `root` (unless allowed), symlink
    loops, hidden and special files come as skipped rows, so every entry is accounted for.
    With a `stat_cache` (stages/common/stat_cache.py), a file whose stat is unchanged since the
    last snapshot is not read again: its recorded sha256 is used.
    """
    root = Path(root)
    if not root.is_dir():
        return contracts.from_rows([], "corpus_files")
    entries = _walk(root, follow_symlinks_outside_root)
    hashes = stat_cache or StatCache()
    rows = [_snapshot_row(entry, max_file_bytes, hashes) for entry in entries]
    hashes.save()
    names = {PurePosixPath(e.relative).name for e in entries if e.skipped is None}
    if not names & set(CATALOG_NAMES):
        rows.append(_file_dates_row(entries))
    return contracts.from_rows(rows, "corpus_files")


def _skipped(relative: str, severity: str, kind: str, message: str) -> _Entry:
    return _Entry(relative, skipped=(severity, kind, message))


def _walk(root: Path, allow_outside: bool) -> list[_Entry]:
    real_root = root.resolve()
    visited = {real_root}  # real folders already read: a second visit is a loop
    entries: list[_Entry] = []

    def inside(path: Path) -> bool:
        return path == real_root or real_root in path.parents

    def visit(folder: Path, prefix: str) -> None:
        try:
            children = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            entries.append(_skipped(prefix or ".", "error", "unreadable", _os_message(exc)))
            return
        for child in children:
            relative = _display_name(f"{prefix}/{child.name}" if prefix else child.name)
            path = Path(child.path)
            if child.name.startswith("."):
                entries.append(_skipped(relative, "warning", "hidden", "hidden entry not read"))
                continue
            real, is_link = path, child.is_symlink()
            if is_link:
                try:
                    real = path.resolve(strict=True)
                except (RuntimeError, OSError) as exc:
                    entries.append(_symlink_problem(relative, path, exc))
                    continue
                if not inside(real) and not allow_outside:
                    entries.append(
                        _skipped(
                            relative,
                            "error",
                            "symlink_outside_root",
                            f"symlink to {real}, outside the corpus folder; not read "
                            "(stages.ingestion.follow_symlinks_outside_root allows it)",
                        )
                    )
                    continue
            if real.is_dir():
                if is_link and inside(real):
                    entries.append(_linked_folder(relative, path, real, real_root))
                    continue
                if is_link and real in visited:  # a folder outside the root, reached again
                    entries.append(
                        _skipped(
                            relative, "error", "symlink_loop", f"folder {real} is already read"
                        )
                    )
                    continue
                visited.add(real.resolve())
                visit(path, relative)
            elif real.is_file():
                entries.append(_Entry(relative, path=path, real=path.resolve()))
            else:
                entries.append(
                    _skipped(relative, "error", "not_a_file", "not a regular file (fifo, device?)")
                )

    visit(root, "")
    return _drop_duplicate_links(entries)


def _linked_folder(relative: str, link: Path, real: Path, real_root: Path) -> _Entry:
    """A symlink to a folder inside the corpus is not followed: the walk reads it anyway."""
    location = link.parent.resolve()
    if real == location or real in location.parents:
        return _skipped(relative, "error", "symlink_loop", f"links back to its own folder {real}")
    shown = real.relative_to(real_root).as_posix()
    return _skipped(relative, "warning", "duplicate_link", f"same folder as {shown}")


def _symlink_problem(relative: str, path: Path, exc: BaseException) -> _Entry:
    looped = isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
    if looped:
        return _skipped(relative, "error", "symlink_loop", "symlink loop: it never reaches a file")
    target = os.readlink(path) if path.is_symlink() else "?"
    return _skipped(relative, "error", "broken_symlink", f"symlink to missing {target}")


def _drop_duplicate_links(entries: list[_Entry]) -> list[_Entry]:
    """A symlink to a file the walk reads anyway is reported, not ingested a second time."""
    owners: dict[Path, str] = {}
    for entry in entries:
        if entry.path is not None and not entry.path.is_symlink():
            owners.setdefault(entry.real, entry.relative)
    result = []
    for entry in entries:
        owner = owners.get(entry.real) if entry.path is not None else None
        if owner is not None and owner != entry.relative:
            entry = _skipped(entry.relative, "warning", "duplicate_link", f"same file as {owner}")
        result.append(entry)
    return result


def _display_name(relative: str) -> str:
    """File names that are not valid UTF-8 are shown with replacement characters."""
    return relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _os_message(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _snapshot_row(entry: _Entry, max_file_bytes: int, hashes: StatCache) -> dict:
    """Path, size and sha256 of one entry; the bytes are hashed in blocks, never kept, and not
    read at all when `hashes` knows the file unchanged."""
    if entry.skipped is not None:
        severity, kind, message = entry.skipped
        marker = f"{SKIPPED_PREFIX}{severity}:{kind}:{message}"
        return {"path": entry.relative, "size_bytes": 0, "sha256": marker}
    location = os.fsencode(entry.path.absolute())  # bytes: file names need not be UTF-8
    try:
        stat = entry.path.stat()
        size = stat.st_size
        if size <= max_file_bytes:
            digest = hashes.sha256(os.fsdecode(location), stat, lambda: _file_sha256(entry.path))
        else:
            digest = f"size:{size}"
    except OSError as exc:
        marker = f"{SKIPPED_PREFIX}error:unreadable:{_os_message(exc)}"
        return {"path": entry.relative, "size_bytes": 0, "sha256": marker}
    return {"path": entry.relative, "size_bytes": size, "sha256": digest, "location": location}


_HASH_BLOCK = 1 << 20


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


class _CorpusReader:
    """A snapshot row's bytes: inline content, or read from its location and checked against
    its sha256, so a file that changed since the snapshot is an error, not other content."""

    def __init__(self, table: pa.Table) -> None:
        paths = table.column("path").to_pylist()
        self.inline = dict(zip(paths, table.column("content").to_pylist(), strict=True))
        self.locations = dict(zip(paths, table.column("location").to_pylist(), strict=True))
        self.hashes = dict(zip(paths, table.column("sha256").to_pylist(), strict=True))

    def read(self, path: str) -> bytes:
        if self.inline.get(path) is not None:
            return self.inline[path]
        location = self.locations.get(path)
        if location is None:
            raise IngestError("unreadable", "the snapshot holds neither its bytes nor a location")
        try:
            data = Path(os.fsdecode(location)).read_bytes()
        except OSError as exc:
            raise IngestError("unreadable", _os_message(exc)) from exc
        if hashlib.sha256(data).hexdigest() != self.hashes[path]:
            raise IngestError(
                "changed_since_snapshot", "the file changed after the corpus was read; run again"
            )
        return data


def _file_dates_row(entries: list[_Entry]) -> dict:
    paths = {e.relative for e in entries}
    dates = {}
    for entry in entries:
        has_sidecar = any(entry.relative + s in paths for s in SIDECAR_SUFFIXES)
        if entry.path is None or has_sidecar or not _is_document_candidate(entry.relative):
            continue
        try:
            stamp = entry.path.stat().st_mtime
        except OSError:
            continue
        dates[entry.relative] = dt.datetime.fromtimestamp(stamp, dt.UTC).date().isoformat()
    content = json.dumps(dates, sort_keys=True).encode()
    return {
        "path": FILE_DATES_PATH,
        "size_bytes": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "content": content,
    }


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
    unreadable: dict[str, str] = {}
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
            # The document is held back like one with invalid fields: its permissions are unknown.
            message = f"sidecar {path} unreadable: {' '.join(str(exc).split())}"
            unreadable[path.removesuffix(sidecar)] = message
            continue
        entries[path.removesuffix(sidecar)] = (path, entry)  # a sidecar overrides the catalog
    metadata: dict[str, DocumentMeta] = {}
    for doc_path, message in unreadable.items():
        entries.pop(doc_path, None)
        errors.append(_error(doc_path, "invalid_metadata", message))
        metadata[doc_path] = None  # type: ignore[assignment]  # known but unusable
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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "document"


def default_doc_ids(paths: list[str]) -> dict[str, str]:
    """Doc ids for files without metadata: the path without its suffix, or with it where two
    files share that stem (report.pdf next to report.docx)."""
    stems = {path: _slug(PurePosixPath(path).with_suffix("").as_posix()) for path in paths}
    counts = Counter(stems.values())
    return {path: _slug(path) if counts[stem] > 1 else stem for path, stem in stems.items()}


def _default_meta(doc_id: str, config: Config, tier: str, date: dt.date | None) -> DocumentMeta:
    """Metadata for a file nobody described: configured tier and groups, the file's date.

    The title is left empty so the document's own title (heading, <title>, PDF title) is used.
    """
    return DocumentMeta(
        doc_id=doc_id,
        version="",  # unknown, and a rendered "version 1" would be made up
        permission_set=config.default_permission_set,
        trust_tier=tier,
        last_modified=date,
    )


def _file_dates(files: dict[str, bytes | None]) -> dict[str, dt.date]:
    data = files.pop(FILE_DATES_PATH, None)
    if not data:
        return {}
    return {path: dt.date.fromisoformat(day) for path, day in json.loads(data).items()}


# ---------------------------------------------------------------- parsing


BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
BINARY_NUL_SHARE = 0.1  # more NUL bytes than this is binary data (or UTF-16 without a BOM)
MAX_CONTROL_SHARE = 0.02  # control characters in decoded text beyond this: not text


@dataclass
class Decoded:
    text: str
    encoding: str
    nul_bytes: int = 0  # stripped before decoding


def decode_text(
    data: bytes, encodings: Sequence[str], legacy: Sequence[str] = ("cp1252",)
) -> Decoded:
    """Bytes to text: a BOM, else the configured encodings, else charset-normalizer's guess.

    A few NUL bytes (a botched export) are stripped; many mean binary data.
    """
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                return _checked(Decoded(data.decode(encoding).lstrip("\ufeff"), encoding))
            except UnicodeDecodeError as exc:
                raise IngestError("undecodable_text", f"{encoding} BOM but {exc.reason}") from exc
    nul_bytes = data.count(b"\x00")
    if nul_bytes > len(data) * BINARY_NUL_SHARE:
        guess = _guess(data, [])  # UTF-16/32 without a BOM is mostly NUL bytes
        if guess is None:
            raise IngestError("undecodable_text", f"binary data ({nul_bytes} NUL bytes), not text")
        return _checked(guess)
    if nul_bytes:
        data = data.replace(b"\x00", b"")
    for encoding in encodings:
        try:
            return _checked(Decoded(data.decode(encoding), encoding, nul_bytes))
        except (UnicodeDecodeError, LookupError):
            continue
    guess = _guess(data, legacy)
    if guess is None:
        raise IngestError(
            "undecodable_text", f"not valid {'/'.join(encodings)} and no text encoding fits"
        )
    return _checked(Decoded(guess.text, guess.encoding, nul_bytes))


def _guess(data: bytes, preferred: Sequence[str]) -> Decoded | None:
    """charset-normalizer's best guess, unless a preferred encoding reads the bytes as cleanly.

    On short texts the detector cannot tell cp1252 from cp1250 / cp775 (all read 'fÃ¼r' bytes
    without mess); the preferred legacy encoding breaks that tie, and loses to a cleaner guess
    (cp1251 Cyrillic read as cp1252 is full of mess).
    """
    from charset_normalizer import from_bytes
    from charset_normalizer.md import mess_ratio

    best = from_bytes(data).best()
    if best is None:
        return None  # no encoding reads these bytes as text: binary data
    guess_mess = mess_ratio(str(best), 1.0)
    for encoding in preferred:
        try:
            text = data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        if mess_ratio(text, 1.0) <= guess_mess:
            return Decoded(text, encoding)
    return Decoded(str(best), best.encoding)


def _checked(decoded: Decoded) -> Decoded:
    text = decoded.text
    sample = text[:100_000]
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\f\v")
    if sample and controls > len(sample) * MAX_CONTROL_SHARE:
        raise IngestError(
            "undecodable_text", f"binary data: {controls} control characters, not text"
        )
    return decoded


@dataclass
class ParseNotes:
    """What parsing learned besides the elements: encoding, a title, warnings."""

    encoding: str | None = None
    title_hint: str | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)


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


TITLE_RE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*?(/?)>")
VOID_TAGS = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "table",
        "section",
        "article",
        "br",
        "pre",
        "blockquote",
    ]
)


def html_depth(html: str) -> int:
    """Deepest tag nesting (void and self-closing tags do not nest)."""
    depth = deepest = 0
    for match in TAG_RE.finditer(html):
        closing, tag, self_closing = match.groups()
        if tag.lower() in VOID_TAGS or self_closing:
            continue
        depth = max(depth - 1, 0) if closing else depth + 1
        deepest = max(deepest, depth)
    return deepest


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


def _with_figure_text(html: str) -> str:
    """The HTML with each `<figure>` read as a paragraph of figure text (its `<figcaption>`
    and its images' alt text, `figure_text`) followed by the rest of its content:
    unstructured drops a `<figure>` whole. A figure with neither caption nor alt text adds no
    text. Images outside a figure are read by unstructured as Image elements (`_blocks`)."""
    if "<figure" not in html.lower():
        return html
    import lxml.html
    from lxml import etree

    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return html  # unstructured reports what it cannot read as it always has
    for figure in list(root.iter("figure")):
        captions = list(figure.iter("figcaption"))
        caption = " ".join(c.text_content() for c in captions)
        images = list(figure.iter("img"))
        text = figure_text(caption, [image.get("alt") or "" for image in images])
        for element in captions + images:
            element.drop_tree()  # keeps the text that follows it
        figure.tag = "div"
        if text:
            paragraph = lxml.html.Element("p")
            paragraph.text = text
            figure.insert(0, paragraph)
    return lxml.html.tostring(root, encoding="unicode")


class _FlatText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style", "title"):
            self._skip += 1
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")
        elif tag == "img" and (text := figure_text("", [dict(attrs).get("alt") or ""])):
            self.parts.append(f"\n\n{text}\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "title"):
            self._skip = max(self._skip - 1, 0)
        elif tag in BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _flat_html_text(html: str) -> str:
    parser = _FlatText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _check_docx_structure(data: bytes, config: Config) -> None:
    """A .docx is a zip: refuse a non-zip and one that unpacks far beyond the size budget."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            unpacked = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise IngestError("parse_error", f"not a .docx (not a zip archive): {exc}") from exc
    if "word/document.xml" not in names:
        raise IngestError("parse_error", "not a .docx: the zip has no word/document.xml")
    if unpacked > config.max_file_bytes * 4:
        raise IngestError(
            "too_complex",
            f"unpacks to {unpacked} bytes, over 4 x max_file_bytes={config.max_file_bytes}",
        )


WORD_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
MAIN_DRAWING_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
RELATIONSHIP_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"


def _with_alt_text(data: bytes, describer: FigureDescriber | None = None) -> bytes:
    """The .docx with each picture's alt text (`wp:docPr/@descr`, written by its author) as a
    run "Figure: <alt text>." beside the picture, so it is read in place, under its section.
    A picture without alt text stays unread: its description is never invented. With a vision
    model configured, its description follows as "Figure (described by <model>): ..."."""
    import zipfile

    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        try:
            root = etree.fromstring(archive.read("word/document.xml"), parser)
        except etree.XMLSyntaxError:
            return data  # unstructured reports the broken document as it always has
        media = _docx_media(archive, parser) if describer is not None and describer.active else {}
        described = 0
        for doc_pr in root.iter(f"{{{DRAWING_NS}}}docPr"):
            run = next(doc_pr.iterancestors(f"{{{WORD_NS}}}r"), None)
            if run is None:
                continue
            texts = [figure_text("", [doc_pr.get("descr") or ""])]
            if media:
                picture = _docx_picture(doc_pr, media, archive)
                description = describer.describe(picture) if picture else None
                if description:
                    texts.append(f"Figure (described by {describer.model}): {description}.")
            for text in reversed([t for t in texts if t]):
                # the final stop keeps unstructured from taking a short alt text for a title
                figure_run = etree.Element(f"{{{WORD_NS}}}r")
                element = etree.SubElement(figure_run, f"{{{WORD_NS}}}t")
                element.text = f" {text} "
                element.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
                run.addnext(figure_run)
                described += 1
        if not described:
            return data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as rewritten:
            for info in archive.infolist():
                content = archive.read(info.filename)
                if info.filename == "word/document.xml":
                    content = etree.tostring(root, xml_declaration=True, standalone=True)
                rewritten.writestr(info, content)
    return buffer.getvalue()


def _docx_media(archive: Any, parser: Any) -> dict[str, str]:
    """Relationship id -> the part name of each image the document body refers to."""
    from lxml import etree

    try:
        rels = etree.fromstring(archive.read("word/_rels/document.xml.rels"), parser)
    except (KeyError, etree.XMLSyntaxError):
        return {}
    return {
        rel.get("Id"): "word/" + rel.get("Target", "").removeprefix("/word/").lstrip("/")
        for rel in rels.iter(f"{{{PACKAGE_RELS_NS}}}Relationship")
        if rel.get("Type", "").endswith("/image") and rel.get("TargetMode") != "External"
    }


def _docx_picture(doc_pr: Any, media: dict[str, str], archive: Any) -> bytes | None:
    """The image bytes of the picture whose `wp:docPr` this is, if the package holds them."""
    blip = next(doc_pr.getparent().iter(f"{{{MAIN_DRAWING_NS}}}blip"), None)
    name = media.get(blip.get(f"{{{RELATIONSHIP_NS}}}embed")) if blip is not None else None
    try:
        return archive.read(name) if name else None
    except KeyError:
        return None


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
    )


def _read(reader: Any, path: str, data: bytes, config: Config, notes: ParseNotes) -> list[Block]:
    """Blocks from a `stages.formats` reader, within the same text budget as the others."""
    options = ReadOptions(path=path, config=config, decode=lambda raw: _text_of(raw, config, notes))
    read = reader(data, options)
    notes.warnings.extend(options.warnings)
    notes.title_hint = notes.title_hint or options.title_hint
    for block in read:
        block.text = normalize_text(block.text)
    blocks = [b for b in read if b.text]
    chars = sum(len(b.text) for b in blocks)
    if chars > config.max_text_chars:
        raise IngestError(
            "too_large", f"{chars} characters of text exceed max_text_chars={config.max_text_chars}"
        )
    return blocks


# ---------------------------------------------------------------- chunking


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


# ---------------------------------------------------------------- stage entry point


def _error(path: str, kind: str, message: str, severity: str = "error") -> dict:
    return {"path": path, "error_kind": kind, "severity": severity, "message": message}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    outcome = _ingest(inputs["corpus_files"], config)
    return {
        "documents": outcome.documents,
        "chunks": outcome.chunks,
        "ingestion_errors": contracts.from_rows(outcome.errors, "ingestion_errors"),
    }


@dataclass
class _Outcome:
    documents: pa.Table
    chunks: pa.Table
    errors: list[dict]
    encodings: dict[str, str | None]  # document path -> the encoding its text was read in
    paths: list[str]  # every entry of the snapshot, in order


def check(corpus_files: pa.Table, config: Config) -> list[dict]:
    """The dry run behind `grounding ingest --check`: per file, what ingestion would make of it.

    One row per entry of the snapshot: `ingested` with the document's metadata, encoding and
    chunk count, or `not ingested` with the reason; warnings are listed either way.
    """
    outcome = _ingest(corpus_files, config)
    documents = {d["path"]: d for d in outcome.documents.to_pylist()}
    chunk_counts: dict[str, int] = {}
    for source_id in outcome.chunks.column("source_id").to_pylist():
        path = source_id.removeprefix("file:")
        chunk_counts[path] = chunk_counts.get(path, 0) + 1
    problems: dict[str, list[dict]] = {}
    for error in outcome.errors:
        problems.setdefault(error["path"], []).append(error)
    rows = []
    for path in [p for p in outcome.paths if p != FILE_DATES_PATH] + sorted(
        set(problems) - set(outcome.paths)
    ):
        document = documents.get(path)
        errors = [e for e in problems.get(path, []) if e["severity"] == "error"]
        rows.append(
            {
                "path": path,
                "ingested": document is not None,
                "doc_id": document and document["doc_id"],
                "title": document and document["title"],
                "trust_tier": document and document["trust_tier"],
                "permission_set": document and document["permission_set"],
                "date": document and (document["last_modified"] or document["published_at"]),
                "encoding": outcome.encodings.get(path),
                "chunks": chunk_counts.get(path, 0),
                "error_kind": errors[0]["error_kind"] if errors else None,
                "reason": "; ".join(e["message"] for e in errors) or None,
                "warnings": [
                    f"{e['error_kind']}: {e['message']}"
                    for e in problems.get(path, [])
                    if e["severity"] != "error"
                ],
            }
        )
    return rows


# Parsed documents are cached per document (stages/common/parts_cache.py): a changed corpus
# re-parses only its new and changed files. New parts are written in packs of this many.
PARTS_NAMESPACE = "ingestion.parts"
PARTS_PER_PACK = 256


@dataclass
class _Job:
    """A document to ingest: its part key and the metadata it is ingested with."""

    path: str
    key: str
    size: int
    meta: DocumentMeta
    default_warnings: list[tuple[str, str]]


@dataclass
class _Plan:
    reader: _CorpusReader
    paths: list[str]  # every entry of the snapshot, in order
    items: list[_Job | dict]  # in snapshot order: a document to ingest, or an error row
    missing_files: list[dict]  # error rows of catalog entries without a file


def _plan(table: pa.Table, config: Config) -> _Plan:
    """What ingesting the snapshot involves before any document is parsed: the metadata of
    every document and its part key, and the rows of entries that are errors already."""
    reader = _CorpusReader(table)
    paths = table.column("path").to_pylist()
    sizes = dict(zip(paths, table.column("size_bytes").to_pylist(), strict=True))
    markers = reader.hashes
    items: list[_Job | dict] = []
    for path, marker in markers.items():
        if marker.startswith(SKIPPED_PREFIX):
            severity, kind, message = marker.removeprefix(SKIPPED_PREFIX).split(":", 2)
            items.append(_error(path, kind, message, severity))
    skipped = _skipped_paths(markers)  # once: per path it made planning quadratic
    listed = [p for p in paths if p not in skipped]
    errors: list[dict] = []
    files = _metadata_contents(reader, listed, errors)
    dates = _file_dates(files)
    metadata = _collect_metadata(files, errors)
    items.extend(errors)
    has_catalog = any(PurePosixPath(p).name in CATALOG_NAMES for p in files)
    default_ids = default_doc_ids([p for p in files if _is_document_candidate(p)])
    identity = _parser_identity(config)
    for path in files:
        if not _is_document_candidate(path):
            if not _is_metadata_file(path):
                items.append(_error(path, "skipped", _SKIPPED_NAME_REASON, "warning"))
            continue
        if not path.lower().endswith(DOCUMENT_SUFFIXES):
            suffix = PurePosixPath(path).suffix or "no suffix"
            items.append(_error(path, "unsupported_type", f"no parser for {suffix}"))
            continue
        if path in metadata and metadata[path] is None:
            continue  # invalid metadata was already recorded; without it permissions are unknown
        meta = metadata.get(path)
        if meta is None:
            tier = config.unlisted_trust_tier if has_catalog else config.default_trust_tier
            meta = _default_meta(default_ids[path], config, tier, dates.get(path))
            default_warnings = [("missing_metadata", _defaults_message(meta, has_catalog))]
        else:
            default_warnings = []
        key = parts_cache.part_key(
            **identity,
            reader=_reader_identity(path),
            path=path,
            sha256=markers[path],
            size=sizes[path],
            meta=meta.model_dump(mode="json"),
        )
        items.append(_Job(path, key, sizes[path], meta, default_warnings))
    missing_files = [
        _error(doc_path, "missing_file", "listed in the catalog but not found")
        for doc_path in sorted(set(metadata) - set(files))
    ]
    return _Plan(reader, paths, items, missing_files)


def _ingest(table: pa.Table, config: Config) -> _Outcome:
    plan = _plan(table, config)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    errors: list[dict] = []
    encodings: dict[str, str | None] = {}
    keys: list[str] = []  # the parts of the ingested documents, in snapshot order
    pending: dict[str, parts_cache.Part] = {}  # parsed in this run, not yet written
    seen_ids: set[str] = set()
    for item in progress.track(plan.items, "parsing documents"):
        if isinstance(item, dict):
            errors.append(item)
            continue
        path, key = item.path, item.key
        if item.meta.doc_id in seen_ids:
            message = f"doc_id {item.meta.doc_id!r} already used"
            errors.append(_error(path, "duplicate_doc_id", message))
            continue
        if key in pending:
            info = pending[key].info
        elif key in cache:
            info = cache.info(key)
        else:
            try:
                part = _document_part(path, plan.reader, item.size, item.meta, config)
            except IngestError as exc:  # unreadable now: an error row, nothing to cache
                errors.append(_error(path, exc.kind, str(exc)))
                continue
            if _is_transient(part.info):
                key = parts_cache.part_key(retry=key, nonce=secrets.token_hex(8))
            pending[key], info = part, part.info
            if len(pending) >= PARTS_PER_PACK:
                cache.put(pending)
                pending = {}
        if info.get("error"):
            kind, message = info["error"]
            errors.append(_error(path, kind, message))
            continue
        warnings = item.default_warnings + [tuple(w) for w in info.get("warnings", [])]
        errors.extend(_error(path, kind, message, "warning") for kind, message in warnings)
        seen_ids.add(item.meta.doc_id)
        encodings[path] = info.get("encoding")
        keys.append(key)
    cache.put(pending)
    errors.extend(plan.missing_files)
    # One time for the whole run, set on assembly: cached parts carry none of their own.
    indexed_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    documents = cache.gather("documents", keys, contracts.empty("documents"))
    chunks = cache.gather("chunks", keys, contracts.empty("chunks"))
    return _Outcome(
        _stamped(documents, indexed_at), _stamped(chunks, indexed_at), errors, encodings, plan.paths
    )


# Warnings that say a remote model failed this time: the part is kept under a one-off key, so
# the next run asks again instead of reusing the offline-only description from the cache.
TRANSIENT_WARNINGS = frozenset({"vision_failed"})


def _is_transient(info: dict[str, Any]) -> bool:
    return any(kind in TRANSIENT_WARNINGS for kind, _ in info.get("warnings", []))


# ---------------------------------------------------------------- scale-out partitions


def partitions(inputs: dict[str, Any], config: Config, size: int) -> list[list[str]]:
    """The documents whose parts the cache lacks, in partitions of at most `size` paths: the
    work a scaled-out run spreads over workers (`fill_partition`) before `run` assembles the
    artifact from the then warm cache, exactly as in one process."""
    plan = _plan(inputs["corpus_files"], config)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    jobs = [item for item in plan.items if isinstance(item, _Job) and item.key not in cache]
    paths = list(dict.fromkeys(job.path for job in jobs))
    return [paths[i : i + size] for i in range(0, len(paths), max(size, 1))]


def fill_partition(inputs: dict[str, Any], config: Config, partition: list[str]) -> None:
    """Parse the documents of one partition into the parts cache. A file unreadable now is left
    out: `run` meets it again and reports it, as in one process."""
    plan = _plan(inputs["corpus_files"], config)
    wanted = set(partition)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    pending: dict[str, parts_cache.Part] = {}
    for job in plan.items:
        if not isinstance(job, _Job) or job.path not in wanted:
            continue
        if job.key in cache or job.key in pending:
            continue
        try:
            part = _document_part(job.path, plan.reader, job.size, job.meta, config)
        except IngestError:
            continue
        if _is_transient(part.info):  # a failed remote model: `run` asks again, as in one process
            continue
        pending[job.key] = part
        if len(pending) >= PARTS_PER_PACK:
            cache.put(pending)
            pending = {}
    cache.put(pending)


def _skipped_paths(markers: dict[str, str]) -> set[str]:
    return {path for path, marker in markers.items() if marker.startswith(SKIPPED_PREFIX)}


def _metadata_contents(
    reader: _CorpusReader, paths: list[str], errors: list[dict]
) -> dict[str, bytes | None]:
    """Every listed path, with the bytes of the metadata files (catalogs, sidecars, the file
    dates); documents are read one at a time when they are parsed."""
    files: dict[str, bytes | None] = {}
    for path in paths:
        files[path] = None
        if not (_is_metadata_file(path) or path == FILE_DATES_PATH):
            continue
        if reader.hashes[path].startswith("size:"):
            message = f"{reader.hashes[path].removeprefix('size:')} bytes exceeds max_file_bytes"
            errors.append(_error(path, "too_large", message))
            continue
        try:
            files[path] = reader.read(path)
        except IngestError as exc:
            errors.append(_error(path, exc.kind, str(exc)))
    return files


def _parser_identity(config: Config) -> dict[str, Any]:
    """What every document's parse depends on besides its bytes, metadata and reader."""
    return {
        "stage": NAME,
        "version": VERSION,
        "config": config.model_dump(mode="json"),
        # a part's rows follow the contracts they were written under, as the stage's key does
        "contracts": {name: contracts.fingerprint(name) for name in ("documents", "chunks")},
        "unstructured": _library_version("unstructured"),
    }


def _library_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _reader_identity(path: str) -> str | None:
    """The stages.formats reader module for this file's suffix, with its VERSION if it has one
    (None where ingestion parses the file itself, which `version` covers)."""
    module = READER_MODULES.get(PurePosixPath(path).suffix.lower())
    if module is None:
        return None
    version = getattr(importlib.import_module(module), "VERSION", None)
    return f"{module}=={version}" if version else module


def _document_part(
    path: str, reader: _CorpusReader, size: int, meta: DocumentMeta, config: Config
) -> parts_cache.Part:
    """One document's rows, or its parse error (the same bytes fail the same way again).

    Raises IngestError only when the file cannot be read now, which is not worth caching."""
    over_budget = reader.hashes[path].startswith("size:") or size > config.max_file_bytes
    data = None if over_budget else reader.read(path)
    _prepare_parsers(config.max_element_chars)  # loads spaCy: only when something is parsed
    try:
        parsed = parse_document(path, data, size, meta, config)
    except IngestError as exc:
        return parts_cache.Part({}, {"error": [exc.kind, str(exc)]})
    del data
    tables = {
        "documents": contracts.from_rows([_document_row(parsed, None)], "documents"),
        "chunks": contracts.from_rows(_chunk_rows(parsed, config, None), "chunks"),
    }
    info = {"warnings": [list(w) for w in parsed.warnings], "encoding": parsed.encoding}
    return parts_cache.Part(tables, info)


def _prepare_parsers(max_element_chars: int) -> None:
    """Cheap after the first call (unstructured keeps its spaCy pipeline)."""
    patch_unstructured_spacy()
    _bound_element_heuristics(max_element_chars)


def _not_narrative(text: str, *args: Any, **kwargs: Any) -> bool:
    return False


def _skip_narrative_check() -> None:
    """unstructured's HTML parser (html and Markdown) runs spaCy's tagger and parser over every
    paragraph, most of a small Markdown file's parse time, only to call it NarrativeText rather
    than Text. Both are plain text here (`_blocks` reads Title, Table, Image and page furniture
    only, and the HTML parser never derives a Title from text), so that check answers "no"."""
    import unstructured.partition.html.parser as html_parser

    html_parser.is_possible_narrative_text = _not_narrative


def _stamped(table: pa.Table, indexed_at: dt.datetime) -> pa.Table:
    position = table.schema.get_field_index("indexed_at")
    field = table.schema.field(position)
    column = pa.array([indexed_at] * table.num_rows, type=field.type)
    return table.set_column(position, field, column)


_SKIPPED_NAME_REASON = "README and LICENSE files describe the folder; not ingested"


def _defaults_message(meta: DocumentMeta, has_catalog: bool) -> str:
    where = "not listed in the catalog" if has_catalog else "no catalog.yaml or sidecar"
    dated = meta.last_modified.isoformat() if meta.last_modified else "none"
    return (
        f"{where}: defaults used (tier {meta.trust_tier}, permission "
        f"{', '.join(meta.permission_set)}, date {dated} from the file, title from the document)"
    )


def _is_metadata_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in CATALOG_NAMES or any(path.endswith(s) for s in SIDECAR_SUFFIXES)


def _is_document_candidate(path: str) -> bool:
    if _is_metadata_file(path):
        return False
    return PurePosixPath(path).name.lower() not in ("readme.md", "license", "license.txt")


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
