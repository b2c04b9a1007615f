"""Operations on what runs leave behind: every artifact's manifest, and the garbage no run
references (`grounding artifacts ls|show|gc` in `cli/artifacts.py` prints them)."""

from __future__ import annotations

import json
from pathlib import Path

from stages.store import ArtifactStore

BATCH_SUFFIX = ".batches"  # flows.executor.BATCH_SUFFIX, without importing every stage here
# Artifacts no run names but people work on: review batches (quality.review) hold the answers
# reviewers' verdicts point to, so gc never collects them.
KEPT_STAGES = ("review_batch",)


def _as_store(store: ArtifactStore | Path | str) -> ArtifactStore:
    return store if isinstance(store, ArtifactStore) else ArtifactStore(store)


def manifests(store: ArtifactStore | Path | str) -> list[dict]:
    """Every complete artifact's manifest (local folder or object storage), with its location;
    temporary folders and objects without a manifest are not artifacts."""
    store = _as_store(store)
    found = []
    for ref in store.list_refs():
        manifest = dict(store.manifest(ref))
        manifest["path"] = ref.path
        found.append(manifest)
    return found


def referenced_keys(runs_dir: Path, by_key: dict[str, dict]) -> set[str]:
    """Keys a run summary names, plus everything upstream of them (their inputs, transitively)
    and the question batches their artifacts were assembled from."""
    pending = []
    for summary in runs_dir.glob("*/summary.json"):
        pending += [s["key"] for s in json.loads(summary.read_text())["stages"].values()]
    for summary in runs_dir.glob("backfill/*/summary.json"):
        pending += [s["key"] for s in json.loads(summary.read_text())["stages"].values()]
    keep: set[str] = set()
    while pending:
        key = pending.pop()
        if key in keep:
            continue
        keep.add(key)
        manifest = by_key.get(key, {})
        pending += list(manifest.get("batch_keys", []))
        # a batch's inputs are those of the (possibly older) run that computed it: its rows are
        # self-contained, so they do not keep that run's artifacts alive
        if not manifest.get("stage", "").endswith(BATCH_SUFFIX):
            pending += list(manifest.get("input_keys", {}).values())
    return keep


def garbage(store: ArtifactStore | Path | str, runs_dir: Path) -> list[Path | Location]:
    """Artifacts no run references, and temporary folders left by killed local writes."""
    store = _as_store(store)
    everything = manifests(store)
    keep = referenced_keys(runs_dir, {m["key"]: m for m in everything})
    unused = [
        _location(m["path"])
        for m in everything
        if m["key"] not in keep and m["stage"] not in KEPT_STAGES
    ]
    return unused + [Path(p) for p in store.leftovers()]


class Location(str):
    """An object-storage artifact's URL, with the `.name` (its key) a Path would have."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]


def _location(path: str) -> Path | Location:
    return Location(path) if "://" in path else Path(path)
