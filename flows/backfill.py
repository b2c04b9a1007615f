"""The pipeline over many question sets, idempotent and resumable (`grounding backfill`, in
`cli/backfill.py`, runs it).

Each question file is a partition. Its answers land in `<runs_dir>/backfill/<partition>/` through
the same atomic write as a run, so a partition is either complete or absent. A partition whose
folder holds the answers of the current pipeline (same final artifact key) is skipped; anything
else is (re)computed, and the artifact store means only stages whose inputs changed do work.
Kill it at any point and run it again: it finishes the rest, with nothing duplicated or lost.

Partitions run `--workers` at a time in a bounded thread pool, after the shared stages (ingestion,
indexing) are built once; per-question caching means questions already answered by this
pipeline in any partition are not computed again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

QUESTION_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")  # as flows.question_files reads


def partitions(pattern: str, since: dt.date | None, until: dt.date | None) -> list[Path]:
    """Question files from a folder or a glob, optionally by modification date."""
    base = Path(pattern)
    files = sorted(base.iterdir()) if base.is_dir() else sorted(Path().glob(pattern))
    chosen = []
    for path in files:
        if path.suffix.lower() not in QUESTION_SUFFIXES or not path.is_file():
            continue
        modified = dt.date.fromtimestamp(path.stat().st_mtime)
        if (since and modified < since) or (until and modified > until):
            continue
        chosen.append(path)
    return chosen


def _done_key(folder: Path) -> str | None:
    summary = folder / "summary.json"
    if not summary.is_file():
        return None
    return json.loads(summary.read_text())["stages"].get("revise", {}).get("key")


def backfill_partition(settings, path: Path, out_root: Path, strict: bool = False) -> dict:
    """Run one partition unless its answers for this exact pipeline already exist. Its bad
    records are skipped and listed (`input_errors.parquet`), unless `strict`."""
    from flows.executor import run_stages
    from flows.question_files import QuestionError, read_question_file
    from flows.runs import summarize, write_run

    started = time.perf_counter()
    read = read_question_file(
        path, settings.default_principal, settings.default_query_type, strict=strict
    )
    table = read.table
    counts = {"questions": table.num_rows, "input_errors": len(read.errors)}
    if not table.num_rows:
        raise QuestionError(f"{path}: no record can be answered ({len(read.errors)} input errors)")
    result = run_stages(settings, table)
    folder = out_root / path.stem
    key = result.final_ref.key
    if _done_key(folder) == key:
        return {"partition": path.stem, "status": "skipped", **counts}
    store = settings.artifact_store()
    summary = summarize(result, store, time.perf_counter() - started)
    summary["input_errors"] = len(read.errors)
    summary["input_error_lines"] = [str(error) for error in read.errors]
    if folder.exists():  # answers of an older pipeline: replace them whole
        import shutil

        shutil.rmtree(folder)
    write_run(out_root, path.stem, result, store, summary, input_errors=read.errors_table())
    return {"partition": path.stem, "status": "done", **counts}


Progress = Callable[[dict], None]


def run_backfill(
    settings,
    chosen: list[Path],
    out_root: Path,
    workers: int,
    progress: Progress | None = None,
    strict: bool = False,
) -> list[dict]:
    """Answer the partitions, `workers` at a time; one failure does not stop the others.
    Returns one outcome per partition, in the partitions' order."""
    from flows.executor import run_shared_stages

    # once, not raced by every partition; if it fails (an unreadable corpus…), each partition
    # fails on its own with the reason
    with contextlib.suppress(Exception):
        run_shared_stages(settings)
    lock = threading.Lock()

    def one(path: Path) -> dict:
        try:
            outcome = backfill_partition(settings, path, out_root, strict)
        except Exception as exc:
            outcome = {
                "partition": path.stem,
                "status": "failed",
                "reason": f"{type(exc).__name__}: {exc}",
            }
        if progress:
            with lock:
                progress(outcome)
        return outcome

    outcomes: dict[Path, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="backfill") as pool:
        futures = {pool.submit(one, path): path for path in chosen}
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
    return [outcomes[path] for path in chosen]
