"""Content-addressed artifact store.

Layout: `<root>/<stage>/<key>/` holding one Parquet file per output table, any binary blobs (e.g. a
FAISS index) and `manifest.json`. The key is the sha256 of (stage name, stage VERSION, canonical
config, input artifact keys), so an existing key *is* the cache: same inputs, same code version,
same config, same result. Writes go to a temporary sibling directory and are published with one
atomic `os.rename`, so a killed run never leaves a half-written artifact behind.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
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


class ArtifactStore:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def _final_dir(self, stage: str, key: str) -> Path:
        return self.root / stage / key

    def lookup(self, stage: str, key: str) -> ArtifactRef | None:
        final = self._final_dir(stage, key)
        if (final / MANIFEST).is_file():
            return ArtifactRef(stage, key, str(final), cache_hit=True)
        return None

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
    ) -> ArtifactRef:
        """Write `outputs` (contract tables and binary blobs) atomically under `key`."""
        final = self._final_dir(stage, key)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{key[:16]}-{uuid.uuid4().hex}"
        tmp.mkdir()
        try:
            manifest = self._write_outputs(tmp, outputs)
            manifest.update(
                stage=stage,
                key=key,
                version=version,
                config=json.loads(canonical_json(config)),
                input_keys=dict(input_keys),
                lineage=dict(lineage or {}),
                created_at=dt.datetime.now(dt.UTC).isoformat(),
                duration_s=round(time.perf_counter() - started_at, 4) if started_at else None,
                library_versions=library_versions(),
            )
            _write_file_synced(tmp / MANIFEST, json.dumps(manifest, indent=2).encode())
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

    @staticmethod
    def read_table(ref: ArtifactRef, name: str) -> pa.Table:
        path = Path(ref.path) / f"{name}.parquet"
        if not path.is_file():
            raise contracts.ContractError(
                f"artifact {ref.stage}/{ref.key[:12]} has no table {name!r}"
            )
        return contracts.conform(pq.read_table(path), name)

    @staticmethod
    def blob_path(ref: ArtifactRef, name: str) -> Path:
        path = Path(ref.path) / name
        if not path.is_file():
            raise FileNotFoundError(f"artifact {ref.stage}/{ref.key[:12]} has no blob {name!r}")
        return path

    @staticmethod
    def manifest(ref: ArtifactRef) -> dict[str, Any]:
        return json.loads((Path(ref.path) / MANIFEST).read_text())


def _write_file_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
