"""The sha256 of corpus files that have not changed since the last snapshot, without reading them.

A snapshot hashes every file, so that the ingestion key follows content. On a re-run of a large
corpus that is most of the snapshot's cost: every byte read again to find that almost nothing
changed. This cache remembers, per file, what `os.stat` said when its sha256 was computed (size,
mtime and ctime in nanoseconds, inode and device): while all five are the same the file is taken
to be unchanged and its recorded sha256 is used; any difference hashes it again. Git's index and
rsync's quick check work the same way.

Residual risk, and why it is small: a content change is missed only when the file keeps its size,
mtime, ctime, inode and device. Writing a file always sets its ctime to the current time, and no
user-space call can set ctime back (`touch -d`, `cp -p` and `rsync -t` restore mtime, not ctime),
so that takes a write within the same tick of the filesystem's timestamp clock as the recorded
stat. Entries whose mtime or ctime lie within `RACY_WINDOW_NS` of the moment they were recorded
are therefore not trusted next time ("racy" entries, as git calls them) and are hashed again.
What is left: filesystems whose timestamps are coarser than that window or that do not keep a
ctime (some network and FUSE filesystems), a clock set backwards, or tampering below the
filesystem. Where that matters, `always_hash_corpus: true` in the pipeline config hashes every
file on every run. The check at parse time stays either way: ingestion reads a file it parses and
compares its sha256 with the snapshot's, so a stale hash is an error row, never other content.

The cache is machine-local state (inode numbers and timestamps mean nothing elsewhere), kept as
one small JSON file per corpus folder; a missing or damaged file just means hashing everything.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from stages.models.files import atomic_write_text

CACHE_VERSION = 1
# Two seconds covers the coarsest common timestamp (FAT's 2 s mtime; ext3 and HFS+ keep 1 s).
RACY_WINDOW_NS = 2_000_000_000

Signature = tuple[int, int, int, int, int]  # size, mtime_ns, ctime_ns, inode, device


def signature(stat: os.stat_result) -> Signature:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)


class StatCache:
    """Maps a file's location to (stat signature, sha256); `path` None keeps nothing on disk."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._recorded: dict[str, tuple[Signature, str]] = self._load() if path else {}
        self._seen: dict[str, tuple[Signature, str, int]] = {}  # this snapshot's, with time
        self.hashed = 0  # files read and hashed by this snapshot
        self.reused = 0  # files whose recorded sha256 was used

    def _load(self) -> dict[str, tuple[Signature, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        entries = {}
        for location, entry in (data.get("files") or {}).items():
            with contextlib.suppress(TypeError, ValueError):
                *stat, sha = entry
                entries[location] = (tuple(int(v) for v in stat), str(sha))
        return entries

    def sha256(self, location: str, stat: os.stat_result, compute: Callable[[], str]) -> str:
        """The file's sha256: the recorded one while its stat signature is unchanged, else
        `compute()` (which reads the file)."""
        current = signature(stat)
        recorded = self._recorded.get(location)
        if recorded is not None and len(recorded[0]) == 5 and recorded[0] == current:
            digest = recorded[1]
            self.reused += 1
        else:
            digest = compute()
            self.hashed += 1
        self._seen[location] = (current, digest, time.time_ns())
        return digest

    def save(self) -> None:
        """Record this snapshot's files (and only them: a deleted file's entry goes), leaving out
        racy entries, whose timestamps are too close to when they were hashed to prove anything."""
        if self.path is None:
            return
        files = {
            location: [*stat, digest]
            for location, (stat, digest, seen_at) in self._seen.items()
            if max(stat[1], stat[2]) < seen_at - RACY_WINDOW_NS
        }
        payload = json.dumps({"version": CACHE_VERSION, "files": files}, sort_keys=True)
        with contextlib.suppress(OSError):  # a read-only store only costs hashing next time
            atomic_write_text(self.path, payload)
