"""The fast judge (issue 41): a claim-support cross-encoder in front of the GGUF judge, which is
asked only for claims in the uncertain band."""

from __future__ import annotations

import pytest

from stages import guardrails
from stages.guardrails import Config, judge
from stages.guardrails.config import FastJudge

SPAN = "The Business plan costs €29 per user per month and includes 250 GB of storage."


class SlowJudge:
    """Stands in for the GGUF judge: a fixed P(yes), and a record of what it was asked."""

    name = "llm"
    model_id = "slow"

    def __init__(self, score: float, cached: bool = False) -> None:
        self.score, self.cached = score, cached
        self.asked: list[str] = []

    def judge(self, claim, spans, question=None, part=False):
        self.asked.append(claim)
        return judge.Verdict(self.score, "llm", self.model_id, cached=self.cached)


def cascade(p: float, slow: SlowJudge | None, band_score: str = "judge") -> judge.CascadeJudge:
    seen: list[tuple[str, str]] = []

    def probability(claim_side: str, evidence_side: str) -> float:
        seen.append((claim_side, evidence_side))
        return p

    made = judge.CascadeJudge(probability, "test", slow, 0.1, 0.9, band_score)
    made.seen = seen  # type: ignore[attr-defined]
    return made


def test_a_confident_fast_verdict_is_final_and_the_llm_is_not_asked():
    slow = SlowJudge(0.5)
    for p in (0.95, 0.05):
        verdict = cascade(p, slow).judge("Business costs €29 a user.", [SPAN], "Price?", True)
        assert (verdict.score, verdict.backend, verdict.cached) == (p, "fast", True)
    assert slow.asked == []


def test_a_claim_in_the_band_goes_to_the_llm_judge_and_counts_as_its_call():
    slow = SlowJudge(0.8)
    made = cascade(0.5, slow)
    verdict = made.judge("Business costs €29 a user.", [SPAN], "Price?", True)
    assert (verdict.score, verdict.backend, verdict.cached) == (0.8, "llm", False)
    assert slow.asked == ["Business costs €29 a user."] and made.calls == 1
    mean = cascade(0.5, SlowJudge(0.8), band_score="mean").judge("x y z", [SPAN])
    assert mean.score == pytest.approx(0.65)


def test_without_a_slow_judge_the_fast_score_decides_every_claim():
    assert cascade(0.5, None).judge("Business costs €29 a user.", [SPAN]).score == 0.5


def test_the_fast_model_reads_the_claim_with_its_question_and_the_focused_evidence():
    made = cascade(0.95, None)
    made.judge("Business  costs\n€29.", [SPAN], "What does Business cost?", True)
    assert made.seen == [("Business costs €29. | What does Business cost?", " ".join(SPAN.split()))]
    assert judge.pair_for("A claim.", ["One.", "Two."], None, False) == ("A claim.", "One. Two.")


def test_a_fast_model_that_fails_is_a_technical_error_never_a_score():
    def broken(claim_side: str, evidence_side: str) -> float:
        raise RuntimeError("model file truncated")

    made = judge.CascadeJudge(broken, "test", SlowJudge(0.9), 0.1, 0.9)
    with pytest.raises(judge.JudgeError, match="fast judge failed"):
        made.judge("Business costs €29 a user.", [SPAN])


def test_a_configured_fast_judge_that_is_missing_blocks_the_answer_as_a_technical_error(tmp_path):
    config = Config(
        judge_cache_dir=None,
        consistency_probes=0,
        fast_judge=FastJudge(model_path=str(tmp_path / "absent"), reject=0.1, accept=0.9),
    )
    report = guardrails.check_answer(
        "The Business plan is priced at 29 euros for each user monthly.",
        {"E1": {"text": SPAN}},
        question="What does the Business plan cost?",
        config=config,
        toolkit=guardrails.Toolkit(config),
    )
    statuses = [c["status"] for c in report["claims"]]
    assert "error" in statuses and report["action"] == "block"
