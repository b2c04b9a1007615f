"""Document metadata: catalogs and `<file>.meta.yaml|json` sidecars, validated; defaults (ids,
tier, permissions, the file's date) for files nobody described.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import PurePosixPath
from typing import Any

import yaml
from pydantic import ValidationError

from stages.ingestion.config import (
    CATALOG_NAMES,
    FILE_DATES_PATH,
    SIDECAR_SUFFIXES,
    Config,
    DocumentMeta,
    _error,
)


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
