"""Ingestion's settings and the shapes its modules share: `Config`, the catalog / sidecar
schema `DocumentMeta`, the file kinds it reads, and the rows of `ingestion_errors`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from stages.formats import READER_MODULES, ParseError
from stages.models.settings import VisionSettings

# unstructured's formats, plus every suffix a reader in stages.formats reads
DOCUMENT_SUFFIXES = tuple(
    dict.fromkeys((".md", ".markdown", ".html", ".htm", ".txt", ".docx", *READER_MODULES))
)
SIDECAR_SUFFIXES = (".meta.yaml", ".meta.yml", ".meta.json")
CATALOG_NAMES = ("catalog.yaml", "catalog.yml", "catalog.json")
TRUST_TIERS = ("canonical", "verified", "community", "untrusted")
HEADING_MAX_CHARS = 120
STAGE = "ingestion"  # the stage these modules make up, named in its contract errors


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


# Rows for entries that cannot be read carry no content and a `skipped:<severity>:<kind>:<why>`
# marker in place of the digest, so the stage turns them into rows of `ingestion_errors`.
SKIPPED_PREFIX = "skipped:"
# A virtual row (hidden names are never corpus files) with each file's modification date, for
# folders without a catalog, where the file's date is the only date there is.
FILE_DATES_PATH = ".snapshot/file_dates.json"


def _error(path: str, kind: str, message: str, severity: str = "error") -> dict:
    return {"path": path, "error_kind": kind, "severity": severity, "message": message}
