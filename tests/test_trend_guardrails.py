"""The loosened-guardrails alarm on a real run ledger: the pipeline answers the same questions
with its guardrails as configured, again unchanged, then with the gate loosened, and
`grounding trend` fires on the block rate.

The answers are written by `tests.writer_stub` (an OpenAI-compatible endpoint on loopback that
copies the first evidence sentence and adds one no evidence states), so the guardrails have
something to block without a model; every other stage, the ledger and the trend are the
pipeline's own. The judge is `none` (the lexical share), so no model is loaded."""

from __future__ import annotations

import json
import logging

import pyarrow.parquet as pq
from typer.testing import CliRunner

from quality.drift import check_run, log_alarms
from quality.ledger import read_ledger
from tests.conftest import ROOT, load_test_config
from tests.test_drift import run_once, tiny_corpus, tiny_questions
from tests.writer_stub import writer_server

# the loosening: no claim decides alone any more, and a lower line for the answer's mean
LOOSENED = {"guardrails.claim_floor": 0.0, "guardrails.answer_threshold": 0.5}


def statuses(runs_dir, run_id: str) -> dict[str, int]:
    rows = pq.read_table(runs_dir / run_id / "answers.parquet").column("status").to_pylist()
    return {s: rows.count(s) for s in ("answered", "refused", "blocked")}


def test_loosened_guardrails_raise_a_block_rate_alarm_on_real_runs(tmp_path, caplog):
    corpus = tiny_corpus(tmp_path / "corpus")
    questions = tiny_questions(tmp_path, 40)
    with writer_server() as url:
        common = {
            "corpus": str(corpus),
            "generation.backend": "openai_compatible",
            "generation.llm.base_url": url,
            "generation.llm.model": "writer-stub",
            "guardrails.judge": "none",
            "guardrails.fast_judge": None,
            "guardrails.consistency_probes": 0,
        }
        configured = load_test_config(tmp_path, **common)
        loosened = load_test_config(tmp_path, **common, **LOOSENED)
        run_once(configured, questions, "configured-1")
        run_once(configured, questions, "configured-2")
        store = configured.artifact_store()
        assert check_run(read_ledger(store)).alarms == []  # an unchanged re-run is quiet
        run_once(loosened, questions, "loosened")

    before = statuses(configured.runs_dir, "configured-2")
    after = statuses(configured.runs_dir, "loosened")
    assert before["blocked"] >= 8 and before["answered"] == 0, before
    assert after["blocked"] == 0 and after["answered"] == before["blocked"], after

    report = check_run(read_ledger(store))
    alarms = {c.metric: c for c in report.alarms}
    assert {"rate.blocked", "rate.answered"} <= set(alarms), [c.metric for c in report.checks]
    blocked = alarms["rate.blocked"]
    assert blocked.value == 0.0 and blocked.baseline == before["blocked"] / 40
    assert blocked.statistic < -3.29  # the two-proportion z past its line
    with caplog.at_level(logging.WARNING, logger="quality.drift"):
        log_alarms(report)
    assert any("rate.blocked" in r.getMessage() for r in caplog.records)

    from cli.app import app

    cli = ["--config", str(ROOT / "configs" / "pipeline.yaml")]
    cli += ["--set", f"store={configured.store}", "--set", f"runs_dir={configured.runs_dir}"]
    done = CliRunner().invoke(app, ["trend", "--json", "--png", str(tmp_path / "t.png"), *cli])
    assert done.exit_code == 1, done.output  # non-zero for schedulers
    shown = json.loads(done.output[done.output.index("{") :])
    assert shown["run_id"] == "loosened" and len(shown["baseline_runs"]) == 2
    assert {"rate.blocked", "rate.answered"} <= {c["metric"] for c in shown["checks"] if c["alarm"]}

    # the sampled judging step reads a real run's trace and the guardrails settings it ran with
    # (from its artifact in the store); the second opinion here is the same lexical judge, so
    # every drawn answer is judged and none disagrees
    from quality import sampled_judging as sj

    judged = sj.sample_judge(
        configured.runs_dir / "configured-2",
        store,
        sj.SampledJudgingConfig(rate=1.0),
        configured.stage_config("guardrails"),
    )
    assert judged["guardrails_from"] == "run" and judged["judge"]["judge"] == "none"
    assert judged["drawn"] == judged["judged"] == before["blocked"]
    assert judged["technical_errors"] == 0 and judged["disagreeing_answers"] == 0
