"""The paraphrase claim/evidence pair set: load it, refuse it when it was changed.

`eval/sets/paraphrase-pairs-v1/` is built by `scripts/build_paraphrase_pairs.py` (seeded, from
SQuAD 2.0 train articles): `pairs.jsonl` (one pair a line), `NOTICE.md`, and `manifest.json`
with the sha256 of both. It is a set of pairs for `python -m bench paraphrase`, not a question
set for `grounding eval`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eval.frozen_sets import SETS_DIR, EvalSetError, sha256_file

PAIR_SET = SETS_DIR / "paraphrase-pairs-v1"
LABELS = ("supported", "unsupported")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Pair:
    pair_id: str
    split: str  # dev: thresholds are chosen here; test: figures are reported here
    label: str  # supported | unsupported
    kind: str  # paraphrase, or the corruption of an unsupported claim (figure, negation...)
    question: str
    claim: str
    evidence: str
    templates: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        return self.label == "supported"


def load_pairs(set_dir: Path = PAIR_SET, split: str | None = None) -> list[Pair]:
    """Every pair of the set (or of one split), after checking the files against the manifest."""
    set_dir = Path(set_dir)
    manifest_path = set_dir / "manifest.json"
    if not manifest_path.is_file():
        raise EvalSetError(f"pair set {set_dir}: no manifest.json")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for name, expected in sorted(manifest.get("files", {}).items()):
        path = set_dir / name
        if not path.is_file() or sha256_file(path) != expected:
            raise EvalSetError(
                f"pair set {set_dir.name}: {name} is missing or does not match manifest.json; "
                "the set is frozen: rebuild it as a new version"
            )
    pairs = []
    lines = (set_dir / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if line.strip():
            pairs.append(_pair(json.loads(line), number))
    return [p for p in pairs if split is None or p.split == split]


def _pair(row: dict, number: int) -> Pair:
    try:
        pair = Pair(
            pair_id=str(row["pair_id"]),
            split=str(row["split"]),
            label=str(row["label"]),
            kind=str(row["kind"]),
            question=str(row["question"]),
            claim=str(row["claim"]),
            evidence=str(row["evidence"]),
            templates=tuple(row.get("templates") or ()),
        )
    except KeyError as exc:
        raise EvalSetError(f"pairs.jsonl line {number}: missing field {exc}") from exc
    if pair.label not in LABELS or pair.split not in SPLITS:
        raise EvalSetError(f"pairs.jsonl line {number}: bad label or split {row!r:.120}")
    return pair
