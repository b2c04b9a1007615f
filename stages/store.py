"""Content-addressed artifact store, on a local folder or any fsspec URL (s3://bucket/prefix...).

Layout: `<root>/<stage>/<key>/` holding one Parquet file per output table, any binary blobs (e.g. a
FAISS index) and `manifest.json`. The key is the sha256 of (stage name, stage VERSION, canonical
config, input artifact keys), so an existing key *is* the cache: same inputs, same code version,
same config, same result.

Publishing is atomic on both kinds of store, so a killed run never leaves a half-written artifact:
- local: writes go to a temporary sibling directory published with one `os.rename`;
- object storage: every PUT is atomic, so tables and blobs are written first and the manifest
  last, and an artifact counts as present only when its manifest exists.
Several machines can share an object-storage store; blobs that stages need as local files (the
FAISS index, embeddings) are downloaded once into a local cache folder keyed by artifact key.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from stages import contracts

MANIFEST = "manifest.json"
TRACKED_LIBRARIES = (
    "pyarrow",
    "pandas",
    "unstructured",
    "faiss-cpu",
    "sentence-transformers",
    "rank-bm25",
    "prefect",
    "torch",
)
# Artifacts are immutable, so tables and manifests read once can be shared by every thread of
# the process: batches of one stage all read the same chunks and indexes.
_TABLE_CACHE_SIZE = 48
_table_cache: OrderedDict[tuple[str, str, int], pa.Table] = OrderedDict()
_manifest_cache: dict[str, dict[str, Any]] = {}
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class ArtifactRef:
    """What tasks pass around: where an artifact lives, never its data."""

    stage: str
    key: str
    path: str
    cache_hit: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def artifact_key(
    stage: str, version: str, config: Mapping[str, Any], input_keys: Mapping[str, str]
) -> str:
    payload = canonical_json(
        {"stage": stage, "version": version, "config": config, "inputs": dict(input_keys)}
    )
    return hashlib.sha256(payload.encode()).hexdigest()


@cache
def library_versions() -> dict[str, str]:
    versions = {}
    for name in TRACKED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def is_url(root: str | os.PathLike[str]) -> bool:
    return "://" in str(root)


def default_blob_cache() -> Path:
    return Path(
        os.environ.get("GROUNDING_BLOB_CACHE")
        or Path(tempfile.gettempdir()) / f"grounding-blobs-{os.getuid()}"
    )


class ArtifactStore:
    """`root` is a local path or an fsspec URL; `options` go to the filesystem (endpoint_url,
    key, secret…; object-storage credentials may also come from the environment)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        options: Mapping[str, Any] | None = None,
        blob_cache: str | os.PathLike[str] | None = None,
    ) -> None:
        self.options = dict(options or {})
        self.blob_cache = Path(blob_cache) if blob_cache else default_blob_cache()
        self.remote = is_url(root)
        if self.remote:
            import fsspec

            self.url = str(root).rstrip("/")
            self.fs, base = fsspec.core.url_to_fs(self.url, **_fs_options(self.url, self.options))
            self.base = base.rstrip("/")
            self.root: Path | str = self.url
        else:
            self.url = str(root)
            self.root = Path(root)

    def __reduce__(self):  # tasks on Dask workers rebuild the store from its URL and options
        return (ArtifactStore, (self.url, self.options, str(self.blob_cache)))

    # ------------------------------------------------------------ locations

    def _final_dir(self, stage: str, key: str) -> Path:
        return Path(self.root) / stage / key

    def _remote_dir(self, stage: str, key: str) -> str:
        return f"{self.base}/{stage}/{key}"

    def _ref_path(self, stage: str, key: str) -> str:
        if self.remote:
            return f"{self.url}/{stage}/{key}"
        return str(self._final_dir(stage, key))

    def _fs_path(self, ref_path: str) -> str:
        """A ref's URL as a path of this filesystem (s3://b/p/x -> b/p/x)."""
        return self.base + ref_path[len(self.url) :] if ref_path.startswith(self.url) else ref_path

    def local_state_dir(self) -> Path:
        """A folder on this machine for state kept beside the store's caches that only makes
        sense here (the corpus stat cache: inodes and timestamps of local files): the store
        folder itself, or the local blob cache when the store is object storage."""
        return self.blob_cache if self.remote else Path(self.root)

    # ------------------------------------------------------------ lookup and listing

    def lookup(self, stage: str, key: str) -> ArtifactRef | None:
        if self.remote:
            present = self.fs.exists(f"{self._remote_dir(stage, key)}/{MANIFEST}")
        else:
            present = (self._final_dir(stage, key) / MANIFEST).is_file()
        return (
            ArtifactRef(stage, key, self._ref_path(stage, key), cache_hit=True) if present else None
        )

    def list_refs(self, stage: str | None = None) -> list[ArtifactRef]:
        """Every complete artifact (its manifest exists), optionally of one stage."""
        pattern = f"{stage or '*'}/*/{MANIFEST}"
        if self.remote:
            self.fs.invalidate_cache()
            found = [PurePosixPath(p) for p in self.fs.glob(f"{self.base}/{pattern}")]
        else:
            found = [PurePosixPath(p) for p in Path(self.root).glob(pattern)]
        refs = []
        for manifest in sorted(found):
            folder = manifest.parent
            if folder.name.startswith(".tmp-"):
                continue
            refs.append(
                ArtifactRef(
                    folder.parent.name, folder.name, self._ref_path(folder.parent.name, folder.name)
                )
            )
        return refs

    def leftovers(self) -> list[str]:
        """Temporary folders killed local writes left behind (object stores have none)."""
        if self.remote:
            return []
        return [str(p) for p in sorted(Path(self.root).glob("*/.tmp-*"))]

    def size(self, ref_path: str) -> int:
        if self.remote:
            return int(self.fs.du(self._fs_path(ref_path)))
        return sum(f.stat().st_size for f in Path(ref_path).rglob("*") if f.is_file())

    def delete(self, ref_path: str) -> None:
        """Remove an artifact: the manifest first, so readers never see a partial artifact."""
        if self.remote:
            path = self._fs_path(ref_path)
            if self.fs.exists(f"{path}/{MANIFEST}"):
                self.fs.rm(f"{path}/{MANIFEST}")
            self.fs.rm(path, recursive=True)
        else:
            shutil.rmtree(ref_path)
        with _cache_lock:
            _manifest_cache.pop(ref_path, None)

    # ------------------------------------------------------------ writing

    def write(
        self,
        stage: str,
        key: str,
        *,
        version: str,
        config: Mapping[str, Any],
        input_keys: Mapping[str, str],
        outputs: Mapping[str, pa.Table | bytes],
        started_at: float | None = None,
        lineage: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> ArtifactRef:
        """Write `outputs` (contract tables and binary blobs) atomically under `key`; `extra`
        adds fields to the manifest (e.g. the question fingerprints of a batch)."""

        def manifest_for(written: dict) -> bytes:
            written.update(
                stage=stage,
                key=key,
                version=version,
                config=json.loads(canonical_json(config)),
                input_keys=dict(input_keys),
                lineage=dict(lineage or {}),
                created_at=dt.datetime.now(dt.UTC).isoformat(),
                duration_s=round(time.perf_counter() - started_at, 4) if started_at else None,
                library_versions=library_versions(),
                **dict(extra or {}),
            )
            return json.dumps(written, indent=2).encode()

        if self.remote:
            return self._write_remote(stage, key, outputs, manifest_for)
        return self._write_local(stage, key, outputs, manifest_for)

    def _write_local(self, stage, key, outputs, manifest_for) -> ArtifactRef:
        final = self._final_dir(stage, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{key[:16]}-{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            written = self._write_outputs(tmp, outputs)
            _write_file_synced(tmp / MANIFEST, manifest_for(written))
            try:
                os.rename(tmp, final)
            except OSError:
                if not (final / MANIFEST).is_file():
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # a concurrent writer won; same content
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return ArtifactRef(stage, key, str(final), cache_hit=False)

    def _write_remote(self, stage, key, outputs, manifest_for) -> ArtifactRef:
        folder = self._remote_dir(stage, key)
        tables, blobs = {}, {}
        for name, value in outputs.items():  # each PUT is atomic; the manifest comes last
            if isinstance(value, pa.Table):
                table = contracts.conform(value, name)
                sink = pa.BufferOutputStream()
                pq.write_table(table, sink)
                self.fs.pipe_file(f"{folder}/{name}.parquet", sink.getvalue().to_pybytes())
                tables[name] = {"rows": table.num_rows, "schema": contracts.fingerprint(name)}
            else:
                self.fs.pipe_file(f"{folder}/{name}", bytes(value))
                blobs[name] = {"bytes": len(value)}
        self.fs.pipe_file(f"{folder}/{MANIFEST}", manifest_for({"tables": tables, "blobs": blobs}))
        return ArtifactRef(stage, key, self._ref_path(stage, key), cache_hit=False)

    @staticmethod
    def _write_outputs(directory: Path, outputs: Mapping[str, pa.Table | bytes]) -> dict:
        tables, blobs = {}, {}
        for name, value in outputs.items():
            if isinstance(value, pa.Table):
                table = contracts.conform(value, name)
                pq.write_table(table, directory / f"{name}.parquet")
                tables[name] = {"rows": table.num_rows, "schema": contracts.fingerprint(name)}
            else:
                _write_file_synced(directory / name, bytes(value))
                blobs[name] = {"bytes": len(value)}
        return {"tables": tables, "blobs": blobs}

    # ------------------------------------------------------------ reading

    def read_table(self, ref: ArtifactRef, name: str) -> pa.Table:
        cache_key = (ref.path, name, self._version_tag(ref, name))
        with _cache_lock:
            if cache_key in _table_cache:
                _table_cache.move_to_end(cache_key)
                return _table_cache[cache_key]
        table = contracts.conform(self._read_parquet(ref, name), name)
        with _cache_lock:
            _table_cache[cache_key] = table
            while len(_table_cache) > _TABLE_CACHE_SIZE:
                _table_cache.popitem(last=False)
        return table

    def _read_parquet(self, ref: ArtifactRef, name: str) -> pa.Table:
        if is_url(ref.path):
            path = f"{self._fs_path(ref.path)}/{name}.parquet"
            if not self.fs.exists(path):
                raise contracts.ContractError(
                    f"artifact {ref.stage}/{ref.key[:12]} has no table {name!r}"
                )
            with self.fs.open(path, "rb") as handle:
                return pq.read_table(pa.BufferReader(handle.read()))
        path = Path(ref.path) / f"{name}.parquet"
        if not path.is_file():
            raise contracts.ContractError(
                f"artifact {ref.stage}/{ref.key[:12]} has no table {name!r}"
            )
        return pq.read_table(path)

    @staticmethod
    def _version_tag(ref: ArtifactRef, name: str) -> int:
        """A local file's mtime, so a table edited in place (tampering) is read again and fails
        its contract; remote objects are only ever replaced whole, by the same content."""
        if is_url(ref.path):
            return 0
        try:
            return (Path(ref.path) / f"{name}.parquet").stat().st_mtime_ns
        except FileNotFoundError:
            return -1

    def blob_path(self, ref: ArtifactRef, name: str) -> Path:
        """A local file holding the blob; remote blobs are downloaded once into the cache."""
        if not is_url(ref.path):
            path = Path(ref.path) / name
            if not path.is_file():
                raise FileNotFoundError(f"artifact {ref.stage}/{ref.key[:12]} has no blob {name!r}")
            return path
        local = self.blob_cache / ref.stage / ref.key / name
        if local.is_file():
            return local
        remote = f"{self._fs_path(ref.path)}/{name}"
        if not self.fs.exists(remote):
            raise FileNotFoundError(f"artifact {ref.stage}/{ref.key[:12]} has no blob {name!r}")
        local.parent.mkdir(parents=True, exist_ok=True)
        partial = local.with_name(f".{name}.{uuid.uuid4().hex}")
        self.fs.get_file(remote, str(partial))
        os.replace(partial, local)  # concurrent downloads of the same blob agree on content
        return local

    def manifest(self, ref: ArtifactRef) -> dict[str, Any]:
        with _cache_lock:
            if ref.path in _manifest_cache:
                return _manifest_cache[ref.path]
        if is_url(ref.path):
            text = self.fs.cat_file(f"{self._fs_path(ref.path)}/{MANIFEST}").decode()
        else:
            text = (Path(ref.path) / MANIFEST).read_text()
        manifest = json.loads(text)
        with _cache_lock:
            _manifest_cache[ref.path] = manifest
        return manifest


def _fs_options(url: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """`endpoint_url` (and the other botocore settings) belong in s3fs's client_kwargs."""
    options = dict(options)
    if url.startswith(("s3://", "s3a://")) and "endpoint_url" in options:
        client = dict(options.pop("client_kwargs", {}) or {})
        client["endpoint_url"] = options.pop("endpoint_url")
        options["client_kwargs"] = client
    return options


def _write_file_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
