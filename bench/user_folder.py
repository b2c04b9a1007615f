"""A user's own folder: `grounding run --corpus <folder>` as a new user runs it.

The folder is generated at bench time, as in tests/test_user_folder.py: the four good sample
documents (md, html, txt, pdf), one file per bad-input kind, a 50 MB export over the file budget,
and no catalog. The run is a child process (the `grounding` command itself, default settings, the
sample questions); its peak RSS is that child's own ru_maxrss (os.wait4). Target: <= 1.5 GB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "user_folder"
DESCRIPTION = "a generated folder of good and bad files, no catalog: answers, errors, peak RSS"
# The target is 1.5 GB = 1.5e9 bytes (1430.5 MiB); ru_maxrss is in KiB.
TARGET_PEAK_RSS_BYTES = 1_500_000_000
TARGET_PEAK_RSS_MB = 1500  # the older, looser reading (MiB), kept for comparing old results
BIG_FILE_BYTES = 50_000_000


def build_folder(root: Path) -> int:
    """The good files and one file per bad kind (the tests' generator) plus a 50 MB export."""
    from bench.user_folder_kinds import build_user_folder

    kinds = build_user_folder(root)
    with open(root / "ticket-export.txt", "wb") as handle:
        line = b"ticket 4711; status open; customer says the export failed again.\n"
        handle.write(line * (BIG_FILE_BYTES // len(line)))
    return len({k.path for k in kinds})


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-user-folder-") as tmp:
        work = Path(tmp)
        folder = work / "folder"
        kinds = build_folder(folder)
        command = [
            str(Path(sys.executable).parent / "grounding"),
            "run",
            "--corpus",
            str(folder),
            "--set",
            f"store={work / 'store'}",
            "--set",
            f"runs_dir={work / 'runs'}",
            "--no-progress",
        ]
        started = time.perf_counter()
        log = work / "run.log"
        with open(log, "w") as output:
            child = subprocess.Popen(command, cwd=common.ROOT, stdout=output, stderr=output)
            # this child's own rusage: RUSAGE_CHILDREN would be the largest of every child the
            # bench process ever had (other benches run in the same process)
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        peak_bytes = usage.ru_maxrss * 1024
        peak_mb = usage.ru_maxrss / 1024  # MiB
        if child.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"grounding run exited {child.returncode}: {tail}")
        summary = json.loads(next((work / "runs").glob("*/summary.json")).read_text())
    payload = {
        "status": "ok",
        "bad_kinds": kinds,
        "big_file_bytes": BIG_FILE_BYTES,
        "questions": summary["questions"],
        "answered": summary["answered"],
        "refused": summary["refused"],
        "blocked": summary["blocked"],
        "ingestion_errors": summary["ingestion_errors"],
        "ingestion_warnings": summary["ingestion_warnings"],
        "warnings": summary.get("warnings", []),
        "stage_seconds": {k: v["seconds"] for k, v in summary["stages"].items()},
        "wall_s": round(seconds, 1),
        "runtime_s": round(seconds, 1),
        "peak_rss_mb": round(peak_mb, 1),  # MiB
        "peak_rss_bytes": peak_bytes,
        "target_peak_rss_bytes": TARGET_PEAK_RSS_BYTES,
        "target_peak_rss_mb": TARGET_PEAK_RSS_MB,
        "stage_versions": common.stage_versions(),
        "git_commit": common.git_commit(),
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    target = result.get("target_peak_rss_bytes", TARGET_PEAK_RSS_BYTES)
    peak = result.get("peak_rss_bytes", result["peak_rss_mb"] * 2**20)
    met = "met" if peak <= target else "NOT met"
    return (
        f"`grounding run --corpus <folder>` on the 4 good sample files, {result['bad_kinds']} bad "
        f"kinds and a {result['big_file_bytes'] // 1_000_000} MB export, no catalog, the "
        f"{result['questions']} sample questions: answered {result['answered']}, refused "
        f"{result['refused']}, blocked {result['blocked']}; ingestion errors "
        f"{result['ingestion_errors']}, warnings {result['ingestion_warnings']}; "
        f"{result['wall_s']} s. Peak RSS {peak / 1e9:.3f} GB = {result['peak_rss_mb']} MiB "
        f"(target <= {target / 1e9:.1f} GB: {met})."
    )
