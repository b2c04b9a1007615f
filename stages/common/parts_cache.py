"""A cache of per-item parts below a stage (one document's rows, one chunk's vector).

A stage stays a pure function of its input tables and config: it assembles its outputs from
parts, and the parts cache only spares it recomputing a part whose key it has seen before. A part
is a few rows of one or more Arrow tables plus a small JSON `info`, under a key that the stage
derives from everything the part depends on (content hash, parser and model versions, config).

Parts live in the artifact store under their own namespace (`<namespace>` is used as the store's
"stage" name, e.g. `ingestion.parts`): parts computed together are written as one *pack*, an
ordinary atomic artifact whose blobs are Arrow IPC files (the pack's rows, part after part) and
whose manifest maps each part key to its row ranges and info. Packs are immutable and keyed by
their part keys, so concurrent writers of the same parts agree.

The executor opens a `session(store)` around a stage's `run`; outside a session (tests, scripts
calling `run` directly) `open_cache` returns an in-memory cache, so the stage's code path is the
same and its result identical. The session records the packs a stage used, and the executor lists
them in the stage artifact's manifest (`batch_keys`) so garbage collection keeps them.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

PACK_BLOB_SUFFIX = ".arrow"
PACK_VERSION = "1"


@dataclass
class Part:
    tables: dict[str, pa.Table]
    info: dict[str, Any] = field(default_factory=dict)


def part_key(**fields: Any) -> str:
    """sha256 of the canonical JSON of what a part depends on."""
    payload = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class _Located:
    source: int  # index into PartsCache._sources
    rows: dict[str, tuple[int, int]]  # table name -> (offset, count) in the source's tables
    info: dict[str, Any]


@dataclass
class _Source:
    """One pack's tables, loaded lazily (a pack listed in the index may never be needed)."""

    ref: Any = None  # ArtifactRef of a stored pack; None for one built in this process
    tables: dict[str, pa.Table] | None = None


class PartsCache:
    """Lookup and storage of one namespace's parts; `store` None keeps them in memory only."""

    def __init__(self, namespace: str, store: Any = None, used: set[str] | None = None) -> None:
        self.namespace = namespace
        self.store = store
        self.used = used if used is not None else set()  # pack keys read or written
        self._sources: list[_Source] = []
        self._index: dict[str, _Located] = {}
        self.written = 0  # parts written by this cache (what a run had to compute)
        if store is not None:
            self._load_index()

    # ------------------------------------------------------------ lookup

    def _load_index(self) -> None:
        for ref in self.store.list_refs(self.namespace):
            manifest = self.store.manifest(ref)
            parts = manifest.get("parts", {})
            if manifest.get("pack_version") != PACK_VERSION or not parts:
                continue
            source = len(self._sources)
            self._sources.append(_Source(ref=ref))
            for key, entry in parts.items():
                rows = {name: (int(a), int(n)) for name, (a, n) in entry["rows"].items()}
                self._index.setdefault(key, _Located(source, rows, entry.get("info", {})))

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def info(self, key: str) -> dict[str, Any]:
        return self._index[key].info

    def _tables(self, source: int) -> dict[str, pa.Table]:
        entry = self._sources[source]
        if entry.tables is None:
            entry.tables = {}
            blobs = self.store.manifest(entry.ref).get("blobs", {})
            for blob in blobs:
                if blob.endswith(PACK_BLOB_SUFFIX):
                    path = self.store.blob_path(entry.ref, blob)
                    reader = pa.ipc.open_file(pa.memory_map(str(path)))
                    entry.tables[blob.removesuffix(PACK_BLOB_SUFFIX)] = reader.read_all()
        if entry.ref is not None:
            self.used.add(entry.ref.key)
        return entry.tables

    def gather(self, name: str, keys: list[str], empty: pa.Table) -> pa.Table:
        """The rows of table `name` of each part in `keys`, in that order (one `take` per pack).

        `empty` gives the schema when no part has rows."""
        pieces: list[tuple[int, int, int]] = []  # (source, offset, count) in output order
        for key in keys:
            located = self._index[key]
            offset, count = located.rows.get(name, (0, 0))
            if count:
                pieces.append((located.source, offset, count))
        if not pieces:
            return empty
        used_sources = sorted({p[0] for p in pieces})
        bases, tables, base = {}, [], 0
        for source in used_sources:
            table = self._tables(source)[name]
            bases[source] = base
            base += table.num_rows
            tables.append(table)
        combined = pa.concat_tables(tables, promote_options="none")
        indices = [
            bases[source] + row
            for source, offset, count in pieces
            for row in range(offset, offset + count)
        ]
        return combined.take(pa.array(indices, type=pa.int64())).combine_chunks()

    # ------------------------------------------------------------ storing

    def put(self, parts: dict[str, Part]) -> None:
        """Add parts as one pack: written to the store atomically, usable at once either way."""
        parts = {k: p for k, p in parts.items() if k not in self._index}
        if not parts:
            return
        names = sorted({name for part in parts.values() for name in part.tables})
        tables: dict[str, pa.Table] = {}
        entries: dict[str, dict[str, Any]] = {}
        offsets = dict.fromkeys(names, 0)
        for key, part in parts.items():
            rows = {}
            for name in names:
                count = part.tables[name].num_rows if name in part.tables else 0
                rows[name] = [offsets[name], count]
                offsets[name] += count
            entries[key] = {"rows": rows, "info": part.info}
        for name in names:
            pieces = [p.tables[name] for p in parts.values() if name in p.tables]
            tables[name] = pa.concat_tables(pieces).combine_chunks()
        source = len(self._sources)
        self._sources.append(_Source(tables=tables))
        for key, entry in entries.items():
            rows = {n: (a, c) for n, (a, c) in entry["rows"].items()}
            self._index[key] = _Located(source, rows, entry["info"])
        self.written += len(parts)
        if self.store is not None:
            ref = self._write(tables, entries)
            self._sources[source].ref = ref
            self.used.add(ref.key)

    def _write(self, tables: dict[str, pa.Table], entries: dict[str, dict[str, Any]]) -> Any:
        pack_key = part_key(namespace=self.namespace, parts=sorted(entries))
        existing = self.store.lookup(self.namespace, pack_key)
        if existing is not None:
            return existing
        blobs = {name + PACK_BLOB_SUFFIX: _ipc_bytes(table) for name, table in tables.items()}
        return self.store.write(
            self.namespace,
            pack_key,
            version=PACK_VERSION,
            config={},
            input_keys={},
            outputs=blobs,
            # which process computed the parts: shows where a task runner sent a partition
            extra={
                "pack_version": PACK_VERSION,
                "parts": entries,
                "host": socket.gethostname(),
                "pid": os.getpid(),
            },
        )


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


# ---------------------------------------------------------------- the session a stage runs in


@dataclass
class Session:
    store: Any
    used: set[str] = field(default_factory=set)
    caches: list[PartsCache] = field(default_factory=list)

    def pack_keys(self) -> list[str]:
        return sorted(self.used)

    def computed(self) -> dict[str, int]:
        """Per namespace, how many parts the stage had to compute."""
        counts: dict[str, int] = {}
        for cache in self.caches:
            counts[cache.namespace] = counts.get(cache.namespace, 0) + cache.written
        return counts


_session: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "parts_cache_session", default=None
)


@contextlib.contextmanager
def session(store: Any) -> Iterator[Session]:
    """Stages run inside store their parts in `store` (an ArtifactStore)."""
    current = Session(store)
    token = _session.set(current)
    try:
        yield current
    finally:
        _session.reset(token)


def open_cache(namespace: str) -> PartsCache:
    """The namespace's cache in the current session's store, or in memory outside a session."""
    current = _session.get()
    if current is None:
        return PartsCache(namespace)
    cache = PartsCache(namespace, current.store, current.used)
    current.caches.append(cache)
    return cache
