"""`grounding` end to end through Prefect, as `make run` does it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT

GROUNDING = [sys.executable, "-m", "cli"]
# the sample question set `grounding run` answers by default
SAMPLE_QUESTIONS = sum(
    1 for line in (ROOT / "data" / "sample" / "questions.jsonl").read_text().splitlines() if line
)


def _grounding(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "160"}
    return subprocess.run(
        [*GROUNDING, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("command", [[], ["run"], ["ask"]])
def test_help_everywhere(command):
    result = _grounding(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout


def _settings(store_root: Path, runs: Path) -> list[str]:
    return ["--set", f"store={store_root / 'artifacts'}", "--set", f"runs_dir={runs}"]


def test_run_twice_writes_the_run_folder_and_hits_every_cache(tmp_path):
    # a fresh store: the first run computes every stage, the second must hit every cache
    settings = _settings(tmp_path, tmp_path / "runs")
    first = _grounding("run", "--no-progress", *settings)
    assert first.returncode == 0, first.stdout + first.stderr
    second = _grounding("run", "--no-progress", *settings)
    assert second.returncode == 0, second.stdout + second.stderr
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2
    summaries = [json.loads((run / "summary.json").read_text()) for run in runs]
    assert not any(s["cache_hit"] for s in summaries[0]["stages"].values())
    assert all(s["cache_hit"] for s in summaries[1]["stages"].values())
    n = len(summaries[1]["stages"])  # 2 sources, 9 stages and the revise merge (no rounds here)
    assert n == 12 and f"cache hits {n}/{n}" in second.stdout
    latest = runs[-1]
    answers = pd.read_parquet(latest / "answers.parquet")
    reports = pd.read_parquet(latest / "reports.parquet")
    assert len(answers) == len(reports) == summaries[1]["questions"] == SAMPLE_QUESTIONS
    assert set(answers["status"]) <= {"answered", "refused", "blocked"}
    assert (answers["run_id"] == latest.name).all()
    traces = [json.loads(line) for line in (latest / "trace.jsonl").read_text().splitlines()]
    assert len(traces) == SAMPLE_QUESTIONS
    assert {
        "source_selection",
        "candidates",
        "rerank",
        "evidence",
        "generation",
        "guardrails",
        "final",
    } <= set(traces[0])
    assert len(pd.read_parquet(latest / "trace.parquet")) == SAMPLE_QUESTIONS


def test_a_plain_ask_answers_without_importing_prefect(sample_run, sample_store, tmp_path):
    """Prefect's import was about 1 s of every `grounding ask`; only `--flow` needs it."""
    settings = _settings(sample_store, tmp_path / "runs")
    argv = ["grounding", "ask", "What is the monthly list price of the Business plan?", *settings]
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('prefect loaded:', 'prefect' in sys.modules))\n"
        f"sys.argv = {argv!r}\n"
        "runpy.run_module('cli', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert "€29" in done.stdout and done.stdout.strip().endswith("prefect loaded: False")


def test_ask_prints_a_cited_answer_and_a_refusal(sample_run, sample_store, tmp_path):
    # sample_run built the indexes in sample_store, so only the per-question stages run here
    settings = _settings(sample_store, tmp_path / "runs")
    question = "How much does the Enterprise plan cost per user per month?"
    answered = _grounding("ask", question, "--query-type", "pricing", *settings)
    assert answered.returncode == 0, answered.stderr
    assert "€49" in answered.stdout and "[E1]" in answered.stdout
    assert "Northwind Cloud Price List 2026" in answered.stdout
    assert "Run summary" not in answered.stdout
    refused = _grounding("ask", "What is the office address in Tokyo?", "--timings", *settings)
    assert refused.returncode == 0, refused.stderr
    assert "Run summary" in refused.stdout and "guardrails" in refused.stdout
    assert "refusal_reason: insufficient_evidence" in refused.stdout
    assert "no eligible sources" not in refused.stdout  # it had sources; they did not answer
    assert "no source you may read mentions: tokyo" in refused.stdout  # and why they could not


def test_a_missing_question_file_is_a_clear_error():
    result = _grounding("run", "--questions", str(Path("/nonexistent/q.jsonl")))
    assert result.returncode == 2
    assert "question file not found" in result.stdout
