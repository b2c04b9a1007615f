"""The revise loop in the flow: generation → attribution → guardrails again for answers the
guardrails sent back, bounded, with every round's artifacts kept.

The guardrails stage is the real one, wrapped so that it rejects one chosen claim: that makes the
round deterministic with the extractive generator (whose verbatim claims the real checks pass).
The wrapper also changes the stage's VERSION, so its artifacts never mix with the real stage's.
"""

from __future__ import annotations

import pytest

from stages import guardrails
from stages.guardrails.claims import decompose

QUESTION_ID = "q048"  # an HR manager may read the parental-leave policy
QUESTION = "How many weeks of parental leave do primary caregivers receive?"


def _reject(reports: list[dict], rejected: set[str]) -> list[dict]:
    """Reports in which every claim containing a rejected phrase is unsupported (score 0.3)."""
    changed = []
    for report in reports:
        claims = report["claims"] or []
        hits = [c for c in claims if any(phrase in c["text"] for phrase in rejected)]
        for claim in hits:
            claim["status"], claim["score"] = "unsupported", 0.3
        if hits:
            reasons = [*report["reasons"], "test: claim rejected"]
            report = {**report, "action": "revise", "overall_score": 0.3, "reasons": reasons}
        changed.append(report)
    return changed


@pytest.fixture
def rejecting_guardrails(monkeypatch):
    """Wrap the real stage: any claim containing one of `words` is sent back for revision."""
    from stages import contracts

    words: set[str] = set()
    real_run = guardrails.run

    def run(inputs, config):
        out = real_run(inputs, config)
        reports = _reject(out["hallucination_reports"].to_pylist(), words)
        finals = out["final_answers"].to_pylist()
        revise = {r["question_id"] for r in reports if r["action"] == "revise"}
        for final in finals:
            if final["question_id"] in revise:
                final.update(status="blocked", action="revise", answer=None, citations=[])
        return {
            "hallucination_reports": contracts.from_rows(reports, "hallucination_reports"),
            "final_answers": contracts.from_rows(finals, "final_answers"),
        }

    monkeypatch.setattr(guardrails, "run", run)
    monkeypatch.setattr(guardrails, "VERSION", f"{guardrails.VERSION}+test-revise")
    return words


def _questions():
    from flows.executor import questions_table

    return questions_table(
        [{"question_id": QUESTION_ID, "question": QUESTION, "principal": "hr_manager"}],
        "employee",
        "hr",
    )


def test_a_rejected_claim_is_revised_away_and_every_round_is_kept(
    sample_run, sample_config, rejecting_guardrails
):
    from flows.executor import run_stages
    from stages.store import ArtifactStore

    first = sample_run.final_answers.to_pylist()
    leave = next(a for a in first if a["question_id"] == QUESTION_ID)
    assert leave["status"] == "answered"
    claims = [claim.text for claim in decompose(leave["answer"])]
    assert len(claims) >= 2, "the test needs an answer of two claims or more"
    rejected_text = claims[-1]
    rejecting_guardrails.add(rejected_text[:40])

    result = run_stages(sample_config, _questions())

    [final] = result.final_answers.to_pylist()
    assert final["status"] == "answered" and final["action"] == "emit"
    assert rejected_text not in final["answer"]  # the rejected span was dropped
    assert claims[0] in final["answer"]  # the supported one stayed
    for stage in ("revision_requests@r1", "generation@r1", "attribution@r1", "guardrails@r1"):
        assert stage in result.results  # each round's artifacts are kept and named
    store = ArtifactStore(sample_config.store)
    log = store.read_table(result.results["revise"].ref, "revision_log").to_pylist()
    assert [(r["round"], r["action"]) for r in log] == [(0, "revise"), (1, "emit")]
    requests = store.read_table(result.refs["revision_requests@r1"], "revision_requests")
    assert requests.to_pylist()[0]["unsupported_claims"] == [rejected_text]


def test_revisions_are_bounded_and_exhaustion_blocks(
    sample_run, sample_config, rejecting_guardrails
):
    from flows.executor import run_stages

    rejecting_guardrails.add(" ")  # every claim, in every round
    config = sample_config.model_copy(deep=True)
    limited = config.stages["guardrails"].model_copy(update={"max_revise_rounds": 1})
    config.stages["guardrails"] = limited

    result = run_stages(config, _questions())

    [final] = result.final_answers.to_pylist()
    assert (final["status"], final["action"], final["answer"]) == ("blocked", "block", None)
    assert "generation@r2" not in result.results  # one round only
    [report] = result.reports.to_pylist()
    assert any("revisions exhausted" in reason for reason in report["reasons"])
    assert "internal" not in final["rendered_answer"].lower()
