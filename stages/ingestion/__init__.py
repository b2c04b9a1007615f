"""Stage 1, ingestion: parse documents into blocks and chunk them by structure.

md/html/txt/docx are read with unstructured; the formats with a reader in `stages.formats` by that
reader: PDFs (text layer with pdfplumber), scanned pages and png/jpg/tiff images (offline OCR),
pptx, xlsx, csv, vtt, srt, ticket exports in json/jsonl/csv and mail (.eml, .mbox: one section per
message, each attachment a document of its own, `stages.formats.mail`). Tables are blocks of their
own (`stages.formats.tables`), and the anchors the readers give (a page box, a slide, a cell range,
a time range, a ticket comment, a mail message) are kept beside the text in `documents.anchors` and
`chunks.anchors`, so a citation can point back into the original file; rows of html, docx and
markdown tables are anchored as "table 2, row 3". Figures are described only from what is true
offline: an html or markdown image and a docx picture by its alt text, an html `<figure>` by its
`<figcaption>` and alt text, a PDF figure by its caption and the text OCR finds inside it
(`stages.formats.pdf`); a picture with neither adds nothing. A vision model behind an
OpenAI-compatible endpoint (the `vision` block, off by default) can add its own description of PDF
figures, image files and pptx/docx pictures, marked as the model's (`stages.formats.figures`).

Input is a snapshot of the corpus (`corpus_files`: path, size, sha256 and where to read the file),
so the stage is a pure function of its input table and the cache key follows the content. A file
is read when it is parsed and its sha256 checked, so memory is bounded by one file, not by the
corpus. Below the stage, each document's rows are cached under a key of its bytes, metadata,
parser and chunker config (`stages/common/parts_cache.py`): a changed corpus re-parses only new
and changed files, and a deleted file's rows are simply not assembled. Document metadata comes
from `catalog.yaml` at the corpus root and/or `<file>.meta.yaml|json` sidecars. Every file that
cannot be ingested becomes a row in `ingestion_errors`; the run goes on.

This package's face is the stage (NAME, VERSION, INPUTS, OUTPUTS, `Config`, `run`, plus the
scale-out hooks and the dry run); each module below holds one concern: `config` (settings and
shared shapes), `snapshot` (walking the corpus, symlink policy, hashing), `metadata` (catalogs
and sidecars), `decoding` (bytes to text), `html_text` and `word` (format internals), `parsing`
(one document into blocks), `chunking` (chunks and table rows), `assembly` (the parts cache).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from stages import contracts
from stages.formats import Block
from stages.ingestion import assembly
from stages.ingestion.assembly import PARTS_NAMESPACE, _library_version
from stages.ingestion.chunking import chunk_spans
from stages.ingestion.config import (
    CATALOG_NAMES,
    DOCUMENT_SUFFIXES,
    FILE_DATES_PATH,
    SIDECAR_SUFFIXES,
    SKIPPED_PREFIX,
    TRUST_TIERS,
    Config,
    DocumentMeta,
    IngestError,
)
from stages.ingestion.decoding import decode_text
from stages.ingestion.metadata import default_doc_ids
from stages.ingestion.parsing import ParsedDocument, parse_document
from stages.ingestion.snapshot import snapshot_corpus

__all__ = [
    "CATALOG_NAMES",
    "DOCUMENT_SUFFIXES",
    "FILE_DATES_PATH",
    "INPUTS",
    "NAME",
    "OUTPUTS",
    "PARTS_HOLD_GIL",
    "PARTS_NAMESPACE",
    "PER_QUESTION",
    "SIDECAR_SUFFIXES",
    "SKIPPED_PREFIX",
    "TRUST_TIERS",
    "VERSION",
    "Block",
    "Config",
    "DocumentMeta",
    "IngestError",
    "ParsedDocument",
    "check",
    "chunk_spans",
    "decode_text",
    "default_doc_ids",
    "fill_partition",
    "parse_document",
    "partitions",
    "run",
    "snapshot_corpus",
]

NAME = "ingestion"
VERSION = "1.10.0"
OUTPUTS = ("documents", "chunks", "ingestion_errors")  # contract tables written
INPUTS = ("corpus_files",)  # contract tables and blobs read
PER_QUESTION = False
# Parsing is pure Python under the GIL: a runner computes many documents' parts in processes.
PARTS_HOLD_GIL = True


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    outcome = assembly.ingest(inputs["corpus_files"], config, _parser_identity(config))
    return {
        "documents": outcome.documents,
        "chunks": outcome.chunks,
        "ingestion_errors": contracts.table_of("ingestion_errors", outcome.errors, stage=NAME),
    }


def check(corpus_files: pa.Table, config: Config) -> list[dict]:
    """The dry run behind `grounding ingest --check`: per file, what ingestion would make of it.

    One row per entry of the snapshot: `ingested` with the document's metadata, encoding and
    chunk count, or `not ingested` with the reason; warnings are listed either way.
    """
    outcome = assembly.ingest(corpus_files, config, _parser_identity(config))
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


def partitions(inputs: dict[str, Any], config: Config, size: int) -> list[list[str]]:
    """The documents whose parts the cache lacks, in partitions of at most `size` paths: the
    work a scaled-out run spreads over workers (`fill_partition`) before `run` assembles the
    artifact from the then warm cache, exactly as in one process."""
    return assembly.partitions(inputs["corpus_files"], config, _parser_identity(config), size)


def fill_partition(inputs: dict[str, Any], config: Config, partition: list[str]) -> None:
    """Parse the documents of one partition into the parts cache. A file unreadable now is left
    out: `run` meets it again and reports it, as in one process."""
    table = inputs["corpus_files"]
    assembly.fill_partition(table, config, _parser_identity(config), partition)


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
