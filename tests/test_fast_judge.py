"""The fast judge: a claim-support cross-encoder in front of the GGUF judge, which is
asked only for claims in the uncertain band."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stages import guardrails
from stages.guardrails import Config, checker, judge
from stages.guardrails.config import FastJudge
from stages.models import onnx_pairs

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


def test_parts_only_leaves_a_one_claim_answer_to_the_llm_judge():
    slow = SlowJudge(0.7)
    made = judge.CascadeJudge(lambda a, b: 0.99, "test", slow, 0.1, 0.9, parts_only=True)
    assert made.judge("Arthur's Magazine", [SPAN], "Which came first?", part=False).score == 0.7
    assert made.judge("It costs €29.", [SPAN], "Price?", part=True).backend == "fast"
    assert slow.asked == ["Arthur's Magazine"]


def test_a_sure_fast_verdict_on_a_claim_whose_words_the_evidence_lacks_goes_to_the_llm():
    slow = SlowJudge(0.3)
    made = judge.CascadeJudge(lambda a, b: 0.99, "test", slow, 0.1, 0.9, accept_min_share=0.5)
    held = made.judge("Business costs €29 per user.", [SPAN], "Price?", part=True)
    assert held.backend == "fast" and slow.asked == []
    added = "Business includes a dedicated account manager and phone support."
    assert made.judge(added, [SPAN], "Price?", part=True).score == 0.3
    assert slow.asked == [added] and made.calls == 1


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
        "The Business plan is priced at 29 euros for each user monthly. "
        "Each user of the Business plan gets storage of 250 GB.",
        {"E1": {"text": SPAN}},
        question="What does the Business plan cost?",
        config=config,
        toolkit=guardrails.Toolkit(config),
    )
    statuses = [c["status"] for c in report["claims"]]
    assert "error" in statuses and report["action"] == "block"


# --- the shipped model ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "data" / "models" / "claim-judge-minilm-v1"


def configured_fast_judge() -> FastJudge:
    configured = yaml.safe_load(
        (ROOT / "configs" / "guardrails-fast.yaml").read_text(encoding="utf-8")
    )
    return FastJudge.model_validate(configured["fast_judge"])


def test_the_configured_fast_judge_is_the_shipped_model_with_its_hash():
    fast = configured_fast_judge()
    assert (ROOT / fast.model_path).resolve() == MODEL.resolve()
    assert fast.model_sha256 == (MODEL / "model.onnx.sha256").read_text().split()[0]
    assert onnx_pairs.load(MODEL, max_length=fast.max_length).sha256 == fast.model_sha256
    assert 0 < fast.accept <= 1 and fast.parts_only


def test_the_shipped_model_prefers_a_supported_paraphrase_to_a_changed_fact():
    fast = configured_fast_judge()
    made = judge.fast_judge(
        str(MODEL), None, scale=fast.scale, bias=fast.bias, reject=0.0, accept=1.0
    )
    evidence = [
        "Magellan of Virginia was selected by the Virginia Department of Medical Assistance "
        "Services to serve as the Behavioral Health Services Administrator. Magellan administers "
        "behavioral health services for members enrolled in Medicaid and FAMIS programs."
    ]
    question = "magellan of virginia provider"
    right = "Magellan administers behavioral health services for Medicaid and FAMIS members."
    wrong = "Magellan administers dental services for Medicare members in Maryland."
    p_right = made.judge(right, evidence, question, part=True).score
    p_wrong = made.judge(wrong, evidence, question, part=True).score
    assert p_right > p_wrong


# --- claim-judge-minilm-v2: trained and fitted on RAGTruth QA train (opt-in) ------------------

MODEL_V2 = ROOT / "data" / "models" / "claim-judge-minilm-v2"


def fast_judge_of(config_file: str) -> FastJudge:
    configured = yaml.safe_load((ROOT / "configs" / config_file).read_text(encoding="utf-8"))
    return FastJudge.model_validate(configured["fast_judge"])


def test_the_v2_config_names_the_shipped_v2_model_with_its_hash():
    fast = fast_judge_of("guardrails-fast-v2.yaml")
    assert (ROOT / fast.model_path).resolve() == MODEL_V2.resolve()
    assert fast.model_sha256 == (MODEL_V2 / "model.onnx.sha256").read_text().split()[0]
    assert onnx_pairs.load(MODEL_V2, max_length=fast.max_length).sha256 == fast.model_sha256


def test_the_v2_config_decides_every_claim_without_the_gguf_as_it_was_fitted():
    """Fitted with every judged train claim scored by the cross-encoder (no GGUF P(yes) there):
    no band, and one-claim and short answers are its too."""
    config = Config(judge="llm", fast_judge=fast_judge_of("guardrails-fast-v2.yaml"))
    slow = SlowJudge(0.5)
    made = checker.make_fast_judge(config, slow)
    made.probability = lambda claim_side, evidence_side: 0.5  # the middle of any band
    for part in (True, False):
        verdict = made.judge("Business costs €29 a user.", [SPAN], "Price?", part)
        assert verdict.backend == "fast" and verdict.score == 0.5
    assert slow.asked == []


def test_the_v2_model_prefers_a_supported_paraphrase_to_a_changed_fact():
    fast = fast_judge_of("guardrails-fast-v2.yaml")
    made = judge.fast_judge(
        str(MODEL_V2), None, scale=fast.scale, bias=fast.bias, reject=0.0, accept=1.0
    )
    evidence = ["The Business plan costs €29 per user per month and includes 250 GB of storage."]
    right = made.judge("The Business plan costs €29 per user a month.", evidence, "Price?", True)
    wrong = made.judge("The Business plan costs €90 per user a month.", evidence, "Price?", True)
    assert right.score > wrong.score
