"""Structured logs (run_id / question_id / stage on every line) and the run's Prefect artifacts."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stages.common import logs
from tests.conftest import ROOT

TINY_DOC = """# Northwind pricing

## Plans

The Enterprise plan costs 49 euros per user per month.

The Team plan costs 19 euros per user per month.

## Support

Support answers tickets on weekdays between 9:00 and 17:00.
"""
TINY_CATALOG = """documents:
  - path: pricing.md
    doc_id: pricing
    title: Northwind Pricing
    version: "1"
    published_at: 2026-09-01
    permission_set: [everyone]
    trust_tier: canonical
    language: en
    subject: pricing
    doc_type: price_list
"""
TINY_QUESTIONS = [
    {"question_id": "q-price", "question": "How much does the Enterprise plan cost per user?"},
    {"question_id": "q-tokyo", "question": "What is the address of the Tokyo office?"},
]


def write_tiny_inputs(folder: Path) -> tuple[Path, Path]:
    """A one-document corpus and a two-question file: the whole pipeline in seconds."""
    corpus = folder / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "pricing.md").write_text(TINY_DOC)
    (corpus / "catalog.yaml").write_text(TINY_CATALOG)
    questions = folder / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in TINY_QUESTIONS))
    return corpus, questions


# ---------------------------------------------------------------- the formatter, in process


@pytest.fixture
def captured():
    """Route the project's loggers into a buffer, and put every logger back afterwards."""
    everything = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    saved = [(lg, lg.handlers[:], lg.level) for lg in everything]
    environment = dict(os.environ)
    os.environ.pop(logs.RUN_ID_ENV, None)  # a CLI run earlier in this process may have set it
    logs.set_run_id(None)
    buffer = io.StringIO()
    logs.configure("json", "DEBUG", stream=buffer)
    yield buffer
    for lg, handlers, level in saved:
        lg.handlers[:] = handlers
        lg.setLevel(level)
    os.environ.clear()
    os.environ.update(environment)
    logging.captureWarnings(False)


def _lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_question_scope_is_on_the_lines_inside_it_and_gone_after(captured):
    log = logging.getLogger("stages.example")
    with logs.run_scope("run-1"), logs.stage_scope("evidence"):
        with logs.question_scope("q7"):
            log.debug("inside", extra={"spans": 3})
        log.info("after")
    log.warning("outside")
    inside, after, outside = _lines(captured)
    assert inside["question_id"] == "q7" and inside["run_id"] == "run-1"
    assert inside["stage"] == "evidence" and inside["spans"] == 3
    assert inside["level"] == "DEBUG" and inside["logger"] == "stages.example"
    assert inside["message"] == "inside" and inside["time"].endswith("+00:00")
    assert after["question_id"] is None and after["stage"] == "evidence"
    assert outside["run_id"] is None and outside["stage"] is None


def test_third_party_loggers_stay_at_warning(captured):
    logging.getLogger("sentence_transformers.x").info("noise")
    logging.getLogger("sentence_transformers.x").warning("kept")
    assert [line["message"] for line in _lines(captured)] == ["kept"]


def test_text_format_names_only_the_context_that_is_set():
    record = logging.makeLogRecord({"name": "flows.x", "msg": "hello", "levelno": 20})
    record.levelname = "INFO"
    with logs.run_scope("r1"), logs.question_scope("q1"):
        logs.ContextFilter().filter(record)
    line = logs.TextFormatter().format(record)
    assert line.endswith("flows.x [run=r1 q=q1] hello")


# ---------------------------------------------------------------- a real run through the CLI


@pytest.fixture(scope="module")
def json_run(tmp_path_factory):
    """`grounding --log-format json --log-level DEBUG run` on the tiny corpus, through Prefect
    (ephemeral mode, the PREFECT_HOME conftest chose, which this process reads back)."""
    folder = tmp_path_factory.mktemp("json-run")
    corpus, questions = write_tiny_inputs(folder)
    command = [sys.executable, "-m", "cli", "--log-format", "json", "--log-level", "DEBUG"]
    command += ["run", "--no-progress", "--corpus", str(corpus), "--questions", str(questions)]
    command += ["--set", f"store={folder / 'artifacts'}", "--set", f"runs_dir={folder / 'runs'}"]
    result = subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "160"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (run_dir,) = (folder / "runs").iterdir()
    return result, run_dir


def test_every_log_line_is_json_with_the_run_and_question(json_run):
    result, run_dir = json_run
    lines = [json.loads(line) for line in result.stderr.splitlines()]  # a non-JSON line fails
    assert lines
    for line in lines:
        assert {"time", "level", "logger", "message", "run_id", "question_id", "stage"} <= set(line)
    assert len({line["run_id"] for line in lines}) == 1 and lines[0]["run_id"]
    assert run_dir.name == lines[0]["run_id"]  # logs and runs/<run_id>/ name the same run
    per_question = [line for line in lines if line["question_id"]]
    assert {line["question_id"] for line in per_question} == {"q-price", "q-tokyo"}
    assert {line["stage"] for line in per_question} == {"evidence", "attribution"}
    done = {line["stage"]: line for line in lines if line["message"].startswith("stage done")}
    assert {"ingestion", "indexing", "retrieval", "guardrails"} <= set(done)
    assert all(isinstance(line["seconds"], float) for line in done.values())


def test_stage_timings_and_cache_hits_are_a_prefect_artifact_of_the_run(json_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    _, run_dir = json_run
    summary = json.loads((run_dir / "summary.json").read_text())
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["grounding-run-stages"])),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
        (table,) = found
        markdown = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=["grounding-run-stages-summary"])
            ),
            sort=ArtifactSort.CREATED_DESC,
            limit=1,
        )
    assert table.type == "table" and markdown[0].type == "markdown"
    rows = json.loads(table.data) if isinstance(table.data, str) else table.data
    # the artifact describes exactly this run: same stages, keys and cache verdicts as summary.json
    assert [r["stage"] for r in rows] == list(summary["stages"])
    for row in rows:
        expected = summary["stages"][row["stage"]]
        assert row["key"] == expected["key"]
        assert row["cache_hit"] == expected["cache_hit"]
    assert "cache hits" in str(markdown[0].data) and "| guardrails |" in str(markdown[0].data)


def test_stage_rows_mark_a_rerun_as_cache_hits(tmp_path):
    from flows.executor import load_questions, run_stages
    from flows.observability import stage_rows
    from tests.conftest import load_test_config

    corpus, questions = write_tiny_inputs(tmp_path)
    config = load_test_config(tmp_path, corpus=str(corpus))
    table = load_questions(questions, "employee", "general")
    first = stage_rows(run_stages(config, table))
    second = stage_rows(run_stages(config, table))
    assert [r["key"] for r in first] == [r["key"] for r in second]
    assert not any(r["cache_hit"] for r in first if r["stage"] not in ("corpus", "questions"))
    assert all(r["cache_hit"] for r in second)
    assert set(first[0]) == {"stage", "version", "key", "seconds", "cache_hit", "rows"}
