"""The corpus snapshot, the stage's source: walking the folder under the symlink policy,
hashing each file (`corpus_files`), and reading a file's bytes back, checked, when it is parsed.
"""

from __future__ import annotations

import datetime as dt
import errno
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pyarrow as pa

from stages import contracts
from stages.common.stat_cache import StatCache
from stages.ingestion.config import (
    CATALOG_NAMES,
    FILE_DATES_PATH,
    SIDECAR_SUFFIXES,
    SKIPPED_PREFIX,
    STAGE,
    Config,
    IngestError,
)
from stages.ingestion.metadata import _is_document_candidate


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
        return contracts.table_of("corpus_files", [], stage=STAGE)
    entries = _walk(root, follow_symlinks_outside_root)
    hashes = stat_cache or StatCache()
    rows = [_snapshot_row(entry, max_file_bytes, hashes) for entry in entries]
    hashes.save()
    names = {PurePosixPath(e.relative).name for e in entries if e.skipped is None}
    if not names & set(CATALOG_NAMES):
        rows.append(_file_dates_row(entries))
    return contracts.table_of("corpus_files", rows, stage=STAGE)


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
        return _row(entry.relative, 0, marker)
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
        return _row(entry.relative, 0, marker)
    return _row(entry.relative, size, digest, location=location)


def _row(
    path: str,
    size: int,
    sha256: str,
    *,
    content: bytes | None = None,
    location: bytes | None = None,
) -> dict:
    """One `corpus_files` row: bytes only for small virtual rows, a location for real files."""
    return {
        "path": path,
        "size_bytes": size,
        "sha256": sha256,
        "content": content,
        "location": location,
    }


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
    return _row(FILE_DATES_PATH, len(content), hashlib.sha256(content).hexdigest(), content=content)
