"""The run ledger and drift alarms: PSI and rate tests, control bands, `grounding trend`.

Real runs on a four-document corpus (in process, and one through `grounding run`) for unchanged
re-runs, a corpus half removed and a stale snapshot restored; a synthetic ledger for a loosened
guardrail config, whose effect a four-document corpus is too small to show.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from quality import ledger as ledger_module
from quality.drift import DriftConfig, check_run, log_alarms, psi, two_proportion_z
from quality.ledger import LEDGER_SCHEMA, append_run, read_ledger, write_rows
from quality.trend import markdown, plot
from stages.store import ArtifactStore
from tests.conftest import ROOT, SAMPLE_DOCS, SAMPLE_QUESTIONS, load_test_config

TINY_DOCS = (
    "pricing/price-list-2026.md",
    "product/product-overview.md",
    "wiki/uptime-and-credits-wiki.md",
    "legal/data-processing-addendum.md",
)


def tiny_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in TINY_DOCS:
        shutil.copy(SAMPLE_DOCS / name, folder / Path(name).name)
    return folder


def tiny_questions(folder: Path, n: int = 6) -> Path:
    lines = SAMPLE_QUESTIONS.read_text().splitlines()[:n]
    path = folder / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_once(config, questions: Path, run_id: str):
    """One run as `grounding run` does it, without Prefect: stages, then the run folder (which
    appends to the ledger)."""
    from flows.executor import load_questions, run_stages
    from flows.runs import summarize, write_run

    table = load_questions(questions, config.default_principal, config.default_query_type)
    result = run_stages(config, table)
    store = config.artifact_store()
    write_run(config.runs_dir, run_id, result, store, summarize(result, store, 1.0))
    return result


@pytest.fixture
def tiny(tmp_path):
    corpus = tiny_corpus(tmp_path / "corpus")
    config = load_test_config(tmp_path, corpus=str(corpus))
    return config, corpus, tiny_questions(tmp_path)


# ---------------------------------------------------------------- the tests themselves


def test_two_proportion_z_matches_the_textbook_value():
    # 50/100 against 70/100: pooled 0.6, se sqrt(0.24 * 0.02)
    assert two_proportion_z(50, 100, 70, 100) == pytest.approx(0.2 / np.sqrt(0.0048))
    assert two_proportion_z(30, 60, 30, 60) == 0.0
    assert two_proportion_z(60, 60, 60, 60) == 0.0  # no variance, no change
    assert two_proportion_z(0, 0, 3, 6) == 0.0


def test_psi_is_zero_for_the_same_values_and_large_for_a_shift():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.6, 1.0, 500).tolist()
    assert psi(base, base) == pytest.approx(0.0, abs=1e-12)
    assert psi(base, rng.uniform(0.6, 1.0, 500).tolist()) < 0.1  # same population, new sample
    assert psi(base, rng.uniform(0.2, 0.7, 500).tolist()) > 1.0
    # a baseline of one repeated value still gets bins around it
    assert psi([0.0] * 20, [0.0] * 20) == pytest.approx(0.0, abs=1e-12)
    assert psi([0.0] * 20, [0.5] * 20) > 1.0


def test_ten_unchanged_reruns_raise_no_alarm(tiny, caplog):
    config, _, questions = tiny
    for number in range(10):
        run_once(config, questions, f"rerun-{number}")
        report = check_run(read_ledger(config.artifact_store()))
        assert report.run_id == f"rerun-{number}"
        assert report.alarms == [], markdown(report)
    assert len(report.baseline_runs) == 9
    tested = {c.metric for c in report.checks if c.test != "none"}
    assert {"rate.answered", "rate.refused", "rate.blocked", "corpus.retained"} <= tested
    assert {"corpus.snapshot", "ingestion.error_rate"} <= tested
    with caplog.at_level(logging.WARNING, logger="quality.drift"):
        log_alarms(report)
    assert caplog.records == []
    # one file per run, every metric family present in each
    table = read_ledger(config.artifact_store())
    assert len(set(table.column("run_id").to_pylist())) == 10
    metrics = set(table.column("metric").to_pylist())
    assert {"dist.confidence", "dist.claim_score", "dist.retrieval_top_score"} <= metrics
    assert {"seconds.retrieval", "corpus.documents", "ingestion.errors"} <= metrics
    assert any(m.startswith("state.") for m in metrics)
    versions = json.loads(table.column("stage_versions")[0].as_py())
    assert "guardrails" in versions and "retrieval" in versions


def test_a_stale_snapshot_restored_raises_an_alarm(tiny, caplog):
    config, corpus, questions = tiny
    document = corpus / "product-overview.md"
    old_text = document.read_text()
    run_once(config, questions, "old-1")
    run_once(config, questions, "old-2")
    document.write_text(old_text + "\n\nUpdated: the overview now covers the 2027 roadmap.\n")
    for number in range(3):
        run_once(config, questions, f"new-{number}")
        assert check_run(read_ledger(config.artifact_store())).alarms == []
    document.write_text(old_text)  # yesterday's copy restored
    run_once(config, questions, "restored")
    report = check_run(read_ledger(config.artifact_store()))
    alarms = {c.metric: c for c in report.alarms}
    assert "corpus.snapshot" in alarms, markdown(report)
    assert "stale" in alarms["corpus.snapshot"].note
    assert alarms["corpus.snapshot"].statistic == 3.0  # replaced three runs ago
    with caplog.at_level(logging.WARNING, logger="quality.drift"):
        log_alarms(report)
    assert any("corpus.snapshot" in r.getMessage() for r in caplog.records)


GROUNDING = [sys.executable, "-m", "cli"]


def _grounding(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*GROUNDING, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_grounding_run_then_trend_alarms_after_half_the_corpus_is_removed(tmp_path):
    corpus = tiny_corpus(tmp_path / "corpus")
    questions = tiny_questions(tmp_path)
    settings = [
        "--set",
        f"store={tmp_path / 'artifacts'}",
        "--set",
        f"runs_dir={tmp_path / 'runs'}",
    ]
    trend = [*settings, "--png", str(tmp_path / "trend.png")]
    assert _grounding("trend", *trend).returncode == 2  # an empty ledger: cannot check
    run = ["run", "--no-progress", "--corpus", str(corpus), "--questions", str(questions)]
    for _ in range(2):
        done = _grounding(*run, *settings)
        assert done.returncode == 0, done.stdout + done.stderr
    quiet = _grounding("trend", *trend)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "0 alarm(s)" in quiet.stdout
    assert "answered  refused  blocked" in quiet.stdout  # the runs compared, oldest first
    for name in TINY_DOCS[2:]:
        (corpus / Path(name).name).unlink()
    done = _grounding(*run, *settings)
    assert done.returncode == 0, done.stdout + done.stderr
    loud = _grounding("trend", *trend)
    assert loud.returncode == 1, loud.stdout + loud.stderr  # non-zero for schedulers
    warning = next(line for line in loud.stderr.splitlines() if "drift alarm" in line)
    assert "WARNING" in warning and "corpus.retained" in warning
    assert "0.500 against baseline 1.000" in warning and "removed = 0.500" in warning
    assert "2 of the previous run's 4 documents are gone" in warning
    assert (tmp_path / "trend.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    as_json = json.loads(_grounding("trend", *trend, "--json").stdout)
    alarmed = {c["metric"] for c in as_json["checks"] if c["alarm"]}
    assert "corpus.retained" in alarmed
    assert len(as_json["baseline_runs"]) == 2
    assert [row["documents"] for row in as_json["history"]] == ["4", "4", "2"]


# ---------------------------------------------------------------- synthetic ledgers


def synthetic_run(
    run_id: str,
    at: int,
    blocked: int,
    claim_scores: list[float],
    config_key: str = "strict",
    n: int = 200,
) -> pa.Table:
    common = {
        "run_id": run_id,
        "recorded_at": f"2026-11-{1 + at // 24:02d}T{at % 24:02d}:00:00.000000+00:00",
        "stream": "questions-a",
        "corpus_snapshot": "snap-1",
        "config_key": config_key,
        "stage_versions": json.dumps({"guardrails": "9"}),
    }
    metrics = [
        ledger_module._metric("run.questions", "count", value=float(n)),
        ledger_module.proportion("rate.blocked", blocked, n),
        ledger_module.proportion("rate.answered", n - blocked, n),
        ledger_module.distribution("dist.claim_score", claim_scores),
        ledger_module._metric("corpus.documents", "count", value=3.0, items=["a", "b", "c"]),
    ]
    return pa.Table.from_pylist([{**common, **m} for m in metrics], schema=LEDGER_SCHEMA)


def test_loosened_guardrails_raise_alarms_on_block_rate_and_claim_scores(tmp_path):
    """Strict gate: about 15 % blocked, emitted claims score high. Loosened: blocks fall to 1 %
    and the claims it now lets through score lower."""
    rng = np.random.default_rng(7)
    store = ArtifactStore(tmp_path / "artifacts")
    for number in range(10):
        blocked = int(rng.binomial(200, 0.15))
        scores = rng.uniform(0.85, 1.0, 300).tolist()
        write_rows(store, synthetic_run(f"strict-{number}", number, blocked, scores))
        report = check_run(read_ledger(store))
        assert report.alarms == [], markdown(report)
    loose_scores = rng.uniform(0.85, 1.0, 200).tolist() + rng.uniform(0.5, 0.85, 100).tolist()
    write_rows(store, synthetic_run("loose", 10, 2, loose_scores, config_key="loose"))
    report = check_run(read_ledger(store))
    alarms = {c.metric: c for c in report.alarms}
    assert {"rate.blocked", "rate.answered", "dist.claim_score"} <= set(alarms)
    assert alarms["rate.blocked"].statistic < -3.29 and alarms["rate.blocked"].value == 0.01
    assert alarms["dist.claim_score"].statistic >= 0.25
    assert "configuration changed" in " ".join(report.context)
    assert len(report.baseline_runs) == 10
    png = plot(report, tmp_path / "trend.png")
    assert png and png.read_bytes()[:4] == b"\x89PNG"


def test_a_small_move_within_the_band_raises_no_alarm(tmp_path):
    """Significant is not enough: 20 000 questions make a 1.5-point move significant, and it
    stays below the smallest move worth an alarm."""
    store = ArtifactStore(tmp_path / "artifacts")
    scores = np.linspace(0.5, 1.0, 50).tolist()
    for number in range(5):
        write_rows(store, synthetic_run(f"r{number}", number, 3000, scores, n=20000))
    write_rows(store, synthetic_run("now", 5, 3300, scores, n=20000))
    report = check_run(read_ledger(store))
    blocked = next(c for c in report.checks if c.metric == "rate.blocked")
    assert abs(blocked.statistic) > 3.29 and not blocked.alarm
    assert blocked.band[0] <= blocked.value <= blocked.band[1]


def test_other_question_sets_and_too_few_values_are_not_compared(tmp_path):
    store = ArtifactStore(tmp_path / "artifacts")
    write_rows(store, synthetic_run("a", 0, 10, [0.9] * 5))
    other = synthetic_run("b", 1, 190, [0.1] * 5)
    other = other.set_column(2, "stream", pa.array(["questions-b"] * other.num_rows))
    write_rows(store, other)
    report = check_run(read_ledger(store))
    assert report.baseline_runs == [] and report.checks == []
    assert "no earlier run on this question set" in report.context[0]
    everything = check_run(read_ledger(store), cfg=DriftConfig(same_stream=False))
    assert everything.baseline_runs == ["a"]
    claim = next(c for c in everything.checks if c.metric == "dist.claim_score")
    assert claim.test == "none" and "fewer than 10" in claim.note and not claim.alarm
    with pytest.raises(KeyError):
        check_run(read_ledger(store), "no-such-run")


def test_a_failed_append_leaves_no_file_and_the_run_stands(tmp_path, caplog):
    store = ArtifactStore(tmp_path / "artifacts")
    with caplog.at_level(logging.ERROR, logger="quality.ledger"):
        assert append_run(store, "broken", object(), {}) is None  # not a PipelineResult
    assert "could not append to the run ledger" in caplog.text
    folder = tmp_path / "artifacts" / "ledger"
    assert not folder.exists() or list(folder.iterdir()) == []
    assert read_ledger(store).num_rows == 0
    # the ledger is no artifact: `artifacts gc` neither lists nor removes it
    write_rows(store, synthetic_run("kept", 0, 10, [0.9]))
    from flows.ops import garbage

    assert garbage(store, tmp_path / "runs") == []


def test_the_ledger_works_on_object_storage_too():
    store = ArtifactStore("memory://drift-ledger/store")
    first = write_rows(store, synthetic_run("a", 0, 10, [0.9]))
    write_rows(store, synthetic_run("b", 1, 190, [0.9]))
    assert first.startswith("memory://drift-ledger/store/ledger/")
    report = check_run(read_ledger(store))
    assert report.run_id == "b" and report.baseline_runs == ["a"]
    assert "rate.blocked" in {c.metric for c in report.alarms}


def test_the_nightly_check_publishes_prefect_artifacts_and_the_png(tmp_path):
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from quality.trend import nightly_check

    settings = load_test_config(tmp_path)
    store = settings.artifact_store()
    for number in range(3):
        write_rows(store, synthetic_run(f"night-{number}", number, 30, [0.9] * 20))
    write_rows(store, synthetic_run("night-3", 3, 120, [0.9] * 20))

    @flow(name="drift-check-test")
    def check():
        return nightly_check(settings)

    report = check()
    assert [c.metric for c in report.alarms if c.metric == "rate.blocked"] == ["rate.blocked"]
    assert (settings.runs_dir / "trend" / "trend.png").read_bytes()[:4] == b"\x89PNG"
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=["drift-trend", "drift-trend-checks"])
            )
        )
    kinds = {a.key: a.type for a in found}
    assert kinds == {"drift-trend": "markdown", "drift-trend-checks": "table"}
    text = str(next(a for a in found if a.key == "drift-trend").data)
    assert "rate.blocked" in text and "ALARM" in text
