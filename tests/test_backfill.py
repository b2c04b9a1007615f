"""Backfills: killed with SIGKILL mid-way and rerun, no answer is lost or duplicated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd

from tests.conftest import ROOT, SAMPLE_QUESTIONS


def _backfill(folder, tmp_path) -> subprocess.Popen:
    settings = [
        "--set",
        f"store={tmp_path / 'artifacts'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
    ]
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "backfill", "--questions", str(folder), *settings],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_sigkill_then_rerun_finishes_with_every_answer_exactly_once(tmp_path):
    records = [json.loads(line) for line in SAMPLE_QUESTIONS.read_text().splitlines()]
    folder = tmp_path / "question-sets"
    folder.mkdir()
    parts = [records[i::4] for i in range(4)]
    for number, part in enumerate(parts):
        (folder / f"set-{number}.jsonl").write_text("\n".join(json.dumps(r) for r in part))
    out = tmp_path / "runs" / "backfill"
    first = _backfill(folder, tmp_path)
    deadline = time.time() + 600
    while time.time() < deadline and not (out / "set-0" / "answers.parquet").exists():
        time.sleep(0.2)
    assert (out / "set-0").exists(), "the first partition never finished"
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    second = _backfill(folder, tmp_path)
    output, _ = second.communicate(timeout=900)
    assert second.returncode == 0, output
    answers = pd.concat(pd.read_parquet(out / f"set-{n}" / "answers.parquet") for n in range(4))
    assert len(answers) == len(records)
    assert answers["question_id"].is_unique
    assert set(answers["question_id"]) == {r["question_id"] for r in records}
    summary = json.loads((out / "backfill_summary.json").read_text())
    assert summary["failed"] == 0
    assert summary["done"] + summary["skipped"] == 4
    assert summary["skipped"] >= 1  # set-0 survived the kill and was not recomputed
    # a third run skips everything
    third = _backfill(folder, tmp_path)
    third.communicate(timeout=600)
    assert json.loads((out / "backfill_summary.json").read_text())["skipped"] == 4


def test_a_temporary_folder_left_by_a_killed_write_is_replaced(sample_run, sample_config, tmp_path):
    from flows.runs import summarize, write_run

    store = sample_config.artifact_store()
    stale = tmp_path / ".tmp-set-1"
    stale.mkdir()
    (stale / "answers.parquet").write_bytes(b"half written")
    folder = write_run(tmp_path, "set-1", sample_run, store, summarize(sample_run, store, 1.0))
    assert not stale.exists() and (folder / "summary.json").is_file()
    assert pd.read_parquet(folder / "answers.parquet").shape[0] == sample_run.final_answers.num_rows
