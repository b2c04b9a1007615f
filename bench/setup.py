"""A fresh machine: `make setup` in a new clone with empty package caches.

The clone is of the committed HEAD, in a temporary folder. uv gets a new, empty cache folder and
pip none (PIP_NO_CACHE_DIR), so every package is downloaded and installed again; the ONNX
embedding cache points at an empty folder too. What the machine itself provides stays: Python,
the package index it is configured for and the local torch wheel folder
(docs/operations/offline.md). The
steps are timed from `make`'s own output lines.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

NAME = "setup"
DESCRIPTION = "`make setup` in a fresh clone, empty uv/pip caches: seconds (target <= 240)"
TARGET_S = 240.0


def _folder_mb(path: Path) -> float:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return round(total / 2**20, 1)


# a command line make echoes (`python3.11 -m venv …`, `.venv/bin/…`), not a warning that names
# a file under site-packages/python3.11
COMMAND_RE = re.compile(r"^(python[\d.]*|\.venv/bin/\S+) ")


def _steps(log: list[tuple[float, str]]) -> list[dict[str, Any]]:
    """Seconds between the command lines make echoes (each starts a step)."""
    starts = [(t, line) for t, line in log if COMMAND_RE.match(line)]
    steps = []
    for (start, line), (end, _) in zip(starts, [*starts[1:], (log[-1][0], "")], strict=True):
        steps.append({"command": line[:160], "seconds": round(end - start, 1)})
    return steps


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    if shutil.which("git") is None or shutil.which("make") is None:
        raise common.Skipped("needs git and make")
    with tempfile.TemporaryDirectory(prefix="bench-setup-") as tmp:
        work = Path(tmp)
        clone = work / "clone"
        subprocess.run(["git", "clone", "-q", str(common.ROOT), str(clone)], check=True)
        env = {
            **os.environ,
            "UV_CACHE_DIR": str(work / "uv-cache"),
            "PIP_NO_CACHE_DIR": "1",
            "GROUNDING_ONNX_CACHE": str(work / "onnx"),
        }
        env.pop("VIRTUAL_ENV", None)
        started = time.perf_counter()
        lines: list[tuple[float, str]] = []
        process = subprocess.Popen(
            ["make", "setup"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            lines.append((time.perf_counter() - started, line.rstrip()))
            common.console.print(line.rstrip(), markup=False, highlight=False)
        code = process.wait()
        seconds = round(time.perf_counter() - started, 1)
        payload = {
            "status": "ok" if code == 0 else "failed",
            "exit_code": code,
            "seconds": seconds,
            "target_s": TARGET_S,
            "met": code == 0 and seconds <= TARGET_S,
            "steps": _steps(lines) if lines else [],
            "downloaded_mb": _folder_mb(work / "uv-cache") if (work / "uv-cache").exists() else 0,
            "venv_mb": _folder_mb(clone / ".venv") if (clone / ".venv").exists() else 0,
            "log_tail": [line for _, line in lines[-15:]],
            "git_commit": common.git_commit(),
        }
    common.write_result(NAME, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"`make setup` in a fresh clone with empty uv and pip caches: **{result['seconds']} s** "
        f"(target <= {result['target_s']:.0f} s, {'met' if result['met'] else 'not met'}), exit "
        f"{result['exit_code']}; {result['downloaded_mb']} MB downloaded into the empty uv cache, "
        f"venv {result['venv_mb']} MB.",
        "",
        "| step | seconds |",
        "|---|---:|",
    ]
    lines += [f"| `{s['command']}` | {s['seconds']} |" for s in result["steps"]]
    return "\n".join(lines)
