"""Frozen eval sets: load one and refuse it when a file does not match its manifest.

An eval set lives in `eval/sets/<name>-v<N>/`: `questions.jsonl` (gold answers, gold doc ids and
spans, expected behaviour, principal, query type), `corpus.json` (the corpus snapshot: a path plus
the sha256 of every corpus file; `copied: true` when the corpus is inside the set) and
`manifest.json` (sha256 of every file of the set). `verify_set` refuses a set whose files do not
match, naming the file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS_DIR = ROOT / "eval" / "sets"


class EvalSetError(ValueError):
    """The eval set is missing, malformed, or does not match its manifest."""


@dataclass
class EvalSet:
    name: str
    path: Path
    set_hash: str
    corpus_dir: Path
    questions: list[dict]
    manifest: dict


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_set(name: str | Path, root: Path = ROOT) -> Path:
    candidate = Path(name)
    if candidate.is_dir():
        return candidate
    path = root / "eval" / "sets" / str(name)
    if not path.is_dir():
        known = sorted(p.name for p in (root / "eval" / "sets").glob("*") if p.is_dir())
        raise EvalSetError(f"eval set {str(name)!r} not found under eval/sets/; known: {known}")
    return path


def verify_frozen_files(folder: Path, files: dict[str, str], label: str, rebuild: str) -> None:
    """A frozen set's files are exactly its manifest's, byte for byte (sha256); EvalSetError
    names the first that is missing, changed or unlisted. `rebuild`: how to make a new version."""
    for rel, expected in sorted(files.items()):
        path = folder / rel
        if not path.is_file():
            raise EvalSetError(f"{label}: file {rel} is listed in manifest.json but missing")
        actual = sha256_file(path)
        if actual != expected:
            raise EvalSetError(
                f"{label}: file {rel} does not match manifest.json "
                f"(sha256 {actual[:12]}…, expected {expected[:12]}…); the set is frozen — "
                f"rebuild it as a new version with {rebuild}"
            )
    present = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != "manifest.json"
    }
    extra = sorted(present - set(files))
    if extra:
        raise EvalSetError(f"{label}: file {extra[0]} is not in manifest.json")


def verify_set(set_dir: Path, root: Path = ROOT) -> EvalSet:
    """Check every file against manifest.json (and the referenced corpus against corpus.json)."""
    set_dir = Path(set_dir)
    manifest_path = set_dir / "manifest.json"
    if not manifest_path.is_file():
        raise EvalSetError(f"eval set {set_dir}: no manifest.json")
    manifest = json.loads(manifest_path.read_text())
    name = manifest.get("name", set_dir.name)
    files: dict[str, str] = manifest.get("files", {})
    verify_frozen_files(set_dir, files, f"eval set {name}", "scripts/build_eval_sets.py")
    set_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    if manifest.get("set_hash") and manifest["set_hash"] != set_hash:
        raise EvalSetError(f"eval set {name}: manifest.json set_hash does not match its files")
    if "corpus.json" not in files or "questions.jsonl" not in files:
        raise EvalSetError(f"eval set {name}: needs corpus.json and questions.jsonl")
    corpus = json.loads((set_dir / "corpus.json").read_text())
    corpus_dir = (set_dir if corpus.get("copied") else root) / corpus["path"]
    if not corpus.get("copied"):  # a referenced corpus: check the live files against the snapshot
        for rel, expected in sorted(corpus["files"].items()):
            path = corpus_dir / rel
            if not path.is_file():
                raise EvalSetError(f"eval set {name}: corpus file {corpus['path']}/{rel} missing")
            if sha256_file(path) != expected:
                raise EvalSetError(
                    f"eval set {name}: corpus file {corpus['path']}/{rel} does not match the "
                    f"snapshot in corpus.json"
                )
        live = {p.relative_to(corpus_dir).as_posix() for p in corpus_dir.rglob("*") if p.is_file()}
        extra = sorted(live - set(corpus["files"]))
        if extra:
            raise EvalSetError(
                f"eval set {name}: corpus file {corpus['path']}/{extra[0]} is not in corpus.json"
            )
    questions = [
        json.loads(line)
        for line in (set_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return EvalSet(name, set_dir, set_hash, corpus_dir, questions, manifest)
