"""Planning and assembling the stage's tables from per-document parts: each document's rows
are cached under a key of its bytes, metadata, reader and parser identity
(`stages/common/parts_cache.py`), so a changed corpus re-parses only what changed.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.metadata
import re
import secrets
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa

from stages import contracts
from stages.common import parts_cache, progress
from stages.formats import READER_MODULES
from stages.ingestion.chunking import _chunk_rows, _document_row
from stages.ingestion.config import (
    CATALOG_NAMES,
    DOCUMENT_SUFFIXES,
    FILE_DATES_PATH,
    SKIPPED_PREFIX,
    STAGE,
    Config,
    DocumentMeta,
    IngestError,
    _error,
)
from stages.ingestion.metadata import (
    _SKIPPED_NAME_REASON,
    _collect_metadata,
    _default_meta,
    _defaults_message,
    _file_dates,
    _is_document_candidate,
    _is_metadata_file,
    default_doc_ids,
)
from stages.ingestion.parsing import _prepare_parsers, parse_document
from stages.ingestion.snapshot import _CorpusReader


@dataclass
class _Outcome:
    documents: pa.Table
    chunks: pa.Table
    errors: list[dict]
    encodings: dict[str, str | None]  # document path -> the encoding its text was read in
    paths: list[str]  # every entry of the snapshot, in order


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


def plan(table: pa.Table, config: Config, identity: dict[str, Any]) -> _Plan:
    """What ingesting the snapshot involves before any document is parsed: the metadata of
    every document and its part key (under the stage's parser `identity`), and the rows of
    entries that are errors already."""
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
            defaulted=bool(default_warnings),
        )
        items.append(_Job(path, key, sizes[path], meta, default_warnings))
    missing_files = [
        _error(doc_path, "missing_file", "listed in the catalog but not found")
        for doc_path in sorted(set(metadata) - set(files))
    ]
    return _Plan(reader, paths, items, missing_files)


def ingest(table: pa.Table, config: Config, identity: dict[str, Any]) -> _Outcome:
    planned = plan(table, config, identity)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    errors: list[dict] = []
    encodings: dict[str, str | None] = {}
    keys: list[str] = []  # the parts of the ingested documents, in snapshot order
    pending: dict[str, parts_cache.Part] = {}  # parsed in this run, not yet written
    seen_ids: set[str] = set()
    for item in progress.track(planned.items, "parsing documents"):
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
                part = _document_part(
                    path, planned.reader, item.size, item.meta, config, bool(item.default_warnings)
                )
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
    errors.extend(planned.missing_files)
    # One time for the whole run, set on assembly: cached parts carry none of their own.
    indexed_at = dt.datetime.now(dt.UTC).replace(microsecond=0)
    documents = cache.gather("documents", keys, contracts.empty("documents"))
    chunks = cache.gather("chunks", keys, contracts.empty("chunks"))
    return _Outcome(
        _stamped(documents, indexed_at),
        _stamped(chunks, indexed_at),
        errors,
        encodings,
        planned.paths,
    )


# Warnings that say a remote model failed this time: the part is kept under a one-off key, so
# the next run asks again instead of reusing the offline-only description from the cache.
TRANSIENT_WARNINGS = frozenset({"vision_failed"})


def _is_transient(info: dict[str, Any]) -> bool:
    return any(kind in TRANSIENT_WARNINGS for kind, _ in info.get("warnings", []))


def partitions(
    table: pa.Table, config: Config, identity: dict[str, Any], size: int
) -> list[list[str]]:
    """The documents whose parts the cache lacks, in partitions of at most `size` paths: the
    work a scaled-out run spreads over workers (`fill_partition`) before `run` assembles the
    artifact from the then warm cache, exactly as in one process."""
    planned = plan(table, config, identity)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    jobs = [item for item in planned.items if isinstance(item, _Job) and item.key not in cache]
    paths = list(dict.fromkeys(job.path for job in jobs))
    return [paths[i : i + size] for i in range(0, len(paths), max(size, 1))]


def fill_partition(
    table: pa.Table, config: Config, identity: dict[str, Any], partition: list[str]
) -> None:
    """Parse the documents of one partition into the parts cache. A file unreadable now is left
    out: `run` meets it again and reports it, as in one process."""
    planned = plan(table, config, identity)
    wanted = set(partition)
    cache = parts_cache.open_cache(PARTS_NAMESPACE)
    pending: dict[str, parts_cache.Part] = {}
    for job in planned.items:
        if not isinstance(job, _Job) or job.path not in wanted:
            continue
        if job.key in cache or job.key in pending:
            continue
        try:
            part = _document_part(
                job.path, planned.reader, job.size, job.meta, config, bool(job.default_warnings)
            )
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
    path: str,
    reader: _CorpusReader,
    size: int,
    meta: DocumentMeta,
    config: Config,
    defaulted: bool = False,
) -> parts_cache.Part:
    """One document's rows, or its parse error (the same bytes fail the same way again).

    A file that carries files (a mail's attachments) adds one document per attachment to its
    part. A document's own date (a mail's latest message) replaces the file's date, not a date
    its catalog entry or sidecar gives (`defaulted`: the metadata are defaults).

    Raises IngestError only when the file cannot be read now, which is not worth caching."""
    over_budget = reader.hashes[path].startswith("size:") or size > config.max_file_bytes
    data = None if over_budget else reader.read(path)
    _prepare_parsers(config.max_element_chars)  # loads spaCy: only when something is parsed
    try:
        parsed = parse_document(path, data, size, meta, config)
    except IngestError as exc:
        return parts_cache.Part({}, {"error": [exc.kind, str(exc)]})
    del data
    if parsed.date_hint and (defaulted or not (meta.last_modified or meta.published_at)):
        parsed.meta = meta.model_copy(update={"last_modified": parsed.date_hint})
    carried, carried_warnings = _carried_documents(parsed, config)
    everything = [parsed, *carried]
    tables = {
        "documents": contracts.table_of(
            "documents", [_document_row(p, None) for p in everything], stage=STAGE
        ),
        "chunks": contracts.table_of(
            "chunks", [row for p in everything for row in _chunk_rows(p, config, None)], stage=STAGE
        ),
    }
    warnings = [list(w) for w in parsed.warnings + carried_warnings]
    info = {"warnings": warnings, "encoding": parsed.encoding}
    return parts_cache.Part(tables, info)


def _carried_documents(parsed, config: Config) -> tuple[list, list[tuple[str, str]]]:
    """Each attachment of a mail as a document of its own: read by the reader for its type,
    its doc id the mail's with `.attachment-N`, its title naming the message it came with,
    dated by that message. An attachment that cannot be read is a warning on the mail."""
    documents, warnings = [], []
    for number, attachment in enumerate(parsed.attachments, start=1):
        name = re.sub(r"[\\/\x00-\x1f]+", "_", attachment.filename).strip() or "attachment"
        where = f"{name} ({attachment.described()})"
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in DOCUMENT_SUFFIXES:
            reason = f"{where}: no parser for {suffix or 'no suffix'}"
            warnings.append(("attachment_skipped", reason))
            continue
        date = attachment.date or parsed.meta.last_modified
        meta = parsed.meta.model_copy(
            update={
                "path": None,
                "doc_id": f"{parsed.meta.doc_id}.attachment-{number}",
                "title": f"{name} (attachment to {attachment.described()})",
                "published_at": attachment.date or parsed.meta.published_at,
                "last_modified": date,
                "subject": None,
                "supersedes": [],
                "doc_type": "mail_attachment",
            }
        )
        path = f"{parsed.path}#attachment-{number}/{name}"
        try:
            document = parse_document(path, attachment.data, len(attachment.data), meta, config)
        except IngestError as exc:
            warnings.append(("attachment_error", f"{where}: {exc.kind}: {exc}"))
            continue
        if document.attachments:  # an attached mail's own attachments: one level is read
            count = len(document.attachments)
            warnings.append(("attachment_skipped", f"{where}: its {count} attachments not read"))
        warnings.extend((kind, f"{where}: {message}") for kind, message in document.warnings)
        documents.append(document)
    return documents, warnings


def _stamped(table: pa.Table, indexed_at: dt.datetime) -> pa.Table:
    position = table.schema.get_field_index("indexed_at")
    field = table.schema.field(position)
    column = pa.array([indexed_at] * table.num_rows, type=field.type)
    return table.set_column(position, field, column)
