"""What the agent-run set writers share: the checks every record passes before a set is frozen,
and the freezing itself (records, README, manifest), so agent-runs-v2 and v3 (and any later
set) are validated and written one way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

# the argument kinds a mutated run changes, and every mutation label a set holds
ARG_KINDS = ("date", "time", "amount", "address", "ip", "id", "enum")
MUTATIONS = (
    *(f"changed_{k}" for k in ARG_KINDS),
    "invented_value",
    "contradiction",
    "unsupported_addition",
)


def ends_on_call(label: str) -> bool:
    """A run that stops on its (valid, changed or invented) call, before the tool ran."""
    return label in ("valid_call", "invented_value") or label.startswith("changed_")


def check_records(rows: list[dict[str, Any]]) -> None:
    """Every run reads as its format, with its calls, before anything is written."""
    from agents.checking.formats import parse_run

    for row in rows:
        parsed = parse_run(row["run"], row["id"])
        if parsed.format != row["format"]:
            raise SystemExit(f"{row['id']}: read as {parsed.format}, written as {row['format']}")
        if row["label"] == "correct" and (not parsed.answer or len(parsed.calls) != row["calls"]):
            raise SystemExit(f"{row['id']}: answer or calls lost")
        if ends_on_call(row["label"]) and parsed.answer is not None:
            raise SystemExit(f"{row['id']}: a run ending on a call has an answer")


def label_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["label"]] = counts.get(row["label"], 0) + 1
    return counts


def clear(folder: Path, force: bool, successor: str) -> None:
    """A frozen set is never rewritten unless asked: a changed set is a new set (`successor`)."""
    if folder.exists():
        if not force:
            raise SystemExit(f"{folder} exists: a frozen set is never rewritten (make {successor})")
        shutil.rmtree(folder)


def freeze(
    folder: Path, rows: list[dict[str, Any]], readme: str, manifest: dict[str, Any]
) -> dict[str, Any]:
    """records.jsonl (sorted keys, one run a line), README.md and the manifest that freezes them."""
    from eval.detection_sets import write_manifest

    folder.mkdir(parents=True)
    lines = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    (folder / "records.jsonl").write_text(lines, encoding="utf-8")
    (folder / "README.md").write_text(readme, encoding="utf-8")
    return write_manifest(folder, manifest)
