"""An LLM's short answer judged by three signals (stages/guardrails/short_answers.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from stages import guardrails
from stages.guardrails import Config, short_answers, verify_claim
from stages.guardrails.short_answers import ShortAnswerSignals
from stages.models import onnx_pairs

ROOT = Path(__file__).resolve().parent.parent
SPAN = (
    "The Huguenots reached Manakin Town in 1700. The largest Huguenot Society in the United "
    "States is in Texas, where it keeps an archive."
)
QUESTION = "In what state is the largest Huguenot Society located?"
SIGNALS = ShortAnswerSignals(answer_weight=1.0, sentence_weight=0.5, pair_weight=0.25, bias=-0.5)


class ScriptedJudge:
    """P(yes) by claim: the short answer and its sentence get different verdicts."""

    name = "llm"
    model_id = "fake"

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.asked: list[tuple[str, list[str], str | None]] = []

    def judge(self, claim, spans, question=None, part=False):
        self.asked.append((claim, spans, question))
        return guardrails.judge.Verdict(self.scores[claim], "llm", self.model_id)


class FixedPairScorer:
    sha256 = "f" * 64

    def __init__(self, logit: float | None) -> None:
        self.logit = logit
        self.asked: list[tuple[str, str]] = []

    def score(self, pairs):
        if self.logit is None:
            raise RuntimeError("onnxruntime failed")
        self.asked += pairs
        return [self.logit] * len(pairs)


def toolkit_for(config: Config, judge_, scorer) -> guardrails.Toolkit:
    toolkit = guardrails.Toolkit(config)
    toolkit._judge = judge_
    toolkit._pair_scorer = scorer
    return toolkit


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def test_combined_weighs_each_signal_and_leaves_out_a_missing_one():
    z = -0.5 + short_answers.logit(0.6) + 0.5 * short_answers.logit(0.9) + 0.25 * 2.0
    assert short_answers.combined(SIGNALS, 0.6, 0.9, 2.0) == pytest.approx(sigmoid(z))
    only_answer = ShortAnswerSignals(answer_weight=2.0)
    assert short_answers.combined(only_answer, 0.6, 0.01, -9.0) == pytest.approx(
        sigmoid(2 * short_answers.logit(0.6))
    )
    assert 0.0 < short_answers.combined(SIGNALS, 1.0, 1.0, 1e6) <= 1.0  # never overflows


def test_the_answer_sentence_is_the_one_holding_it():
    sentence = (
        "The largest Huguenot Society in the United States is in Texas, where it keeps an archive."
    )
    assert short_answers.answer_sentence("Texas", [SPAN]) == sentence
    assert short_answers.answer_sentence("TEXAS", [SPAN]) == sentence
    # not written as such: the sentence sharing most of its words
    assert short_answers.answer_sentence("the Texas society", [SPAN]) == sentence
    assert short_answers.answer_sentence("Ohio", [SPAN]) is None


def test_a_short_answer_is_gated_on_its_combined_probability():
    sentence = short_answers.answer_sentence("Texas", [SPAN])
    fake = ScriptedJudge({"Texas": 0.6, sentence: 0.9})
    scorer = FixedPairScorer(2.0)
    config = Config(
        judge="llm", judge_cache_dir=None, short_answer_threshold=0.5, short_answer_signals=SIGNALS
    )
    toolkit = toolkit_for(config, fake, scorer)
    scored = verify_claim(
        "Texas", [SPAN], config, toolkit, question=QUESTION, generated=True, title="Huguenot"
    )
    p = short_answers.combined(SIGNALS, 0.6, 0.9, 2.0)
    assert scored.route == "short_answer" and scored.score == pytest.approx(min(1.0, p / 0.5))
    # the judge read the answer, then its sentence as the answer to the question
    assert fake.asked == [("Texas", [SPAN], QUESTION), (sentence, [sentence], QUESTION)]
    assert scorer.asked == [(QUESTION, f"{sentence} | Huguenot")]
    assert toolkit.judge_calls == 2
    # a longer claim keeps the judge's own P(yes) and threshold
    fake.scores["The largest Huguenot Society is in Texas"] = 0.8
    whole = verify_claim(
        "The largest Huguenot Society is in Texas",
        [SPAN],
        config,
        toolkit,
        question=QUESTION,
        generated=True,
    )
    assert whole.route == "judge" and whole.score == pytest.approx(0.8 / config.judge_threshold)


def test_without_signals_the_judge_alone_decides_and_no_pair_model_loads():
    fake = ScriptedJudge({"Texas": 0.6})
    config = Config(judge="llm", judge_cache_dir=None, short_answer_threshold=0.8)
    toolkit = toolkit_for(config, fake, None)
    scored = verify_claim("Texas", [SPAN], config, toolkit, question=QUESTION, generated=True)
    assert scored.score == pytest.approx(0.6 / 0.8)
    assert len(fake.asked) == 1 and toolkit._pair_scorer is None


def test_a_pair_model_that_fails_is_a_technical_error_not_a_verdict():
    sentence = short_answers.answer_sentence("Texas", [SPAN])
    config = Config(judge="llm", judge_cache_dir=None, short_answer_signals=SIGNALS)
    fake = ScriptedJudge({"Texas": 0.99, sentence: 0.99})
    broken = toolkit_for(config, fake, FixedPairScorer(None))
    scored = verify_claim("Texas", [SPAN], config, broken, question=QUESTION, generated=True)
    assert (scored.route, scored.error, scored.score) == ("error", True, 0.0)
    assert any("short-answer signals failed" in r for r in scored.reasons)
    # a configured model that is not there at all
    missing = config.model_copy(
        update={"short_answer_signals": SIGNALS.model_copy(update={"pair_model_path": "/nope"})}
    )
    nowhere = toolkit_for(missing, fake, None)
    scored = verify_claim("Texas", [SPAN], missing, nowhere, question=QUESTION, generated=True)
    assert scored.error and scored.route == "error"


def test_a_pair_model_with_another_hash_is_refused(tmp_path):
    signals = SIGNALS.model_copy(
        update={
            "pair_model_path": str(ROOT / "data" / "models" / "answerability-minilm-v4"),
            "pair_model_sha256": "0" * 64,
        }
    )
    toolkit = guardrails.Toolkit(Config(judge="llm", short_answer_signals=signals))
    with pytest.raises(onnx_pairs.PairModelError, match="the config expects"):
        toolkit.pair_scorer()


def fitted_signals() -> ShortAnswerSignals:
    """The signals scripts/fit_short_answer_signals.py fitted, on the committed pair model."""
    import json

    fitted = json.loads((ROOT / "bench" / "results" / "short_answer_signals.json").read_text())
    model = fitted["pair_model"]
    sha256 = (ROOT / model / "model.onnx.sha256").read_text().split()[0]
    return ShortAnswerSignals(**fitted["weights"], pair_model_path=model, pair_model_sha256=sha256)


def test_the_fitted_signals_load_and_the_default_config_leaves_them_off():
    signals = fitted_signals()
    assert signals.answer_weight > 0 and signals.sentence_weight > 0
    # measured worse end to end (bench llm_answers), so opt-in: configs/guardrails.yaml
    settings = yaml.safe_load((ROOT / "configs" / "guardrails.yaml").read_text())
    assert Config(**settings).short_answer_signals is None


def test_the_fit_script_writes_the_signals_and_their_threshold(tmp_path, monkeypatch):
    from scripts import fit_short_answer_signals as fit

    config = tmp_path / "guardrails.yaml"
    config.write_text(
        "judge: llm\nshort_answer_threshold: 0.8   # old note\nprefilter_lexical: 0.2\n"
    )
    monkeypatch.setattr(fit, "CONFIG", config)
    weights = {"answer_weight": 1.5, "sentence_weight": 0.7, "pair_weight": 0.2, "bias": -1.0}
    fit.write_config(weights, 0.6, "new note")
    written = yaml.safe_load(config.read_text())
    assert written["short_answer_threshold"] == 0.6
    assert written["short_answer_signals"]["pair_weight"] == 0.2
    assert written["prefilter_lexical"] == 0.2
    Config(**{k: v for k, v in written.items()})  # the stage accepts what the script wrote
    fit.write_config(weights | {"bias": -2.0}, 0.65, "again")  # replaced, not appended
    again = config.read_text()
    assert again.count("short_answer_signals:") == 1 and "bias: -2.0" in again


def test_the_committed_pair_model_loads_from_any_working_directory(tmp_path, monkeypatch):
    signals = fitted_signals()
    monkeypatch.chdir(tmp_path)  # a user's own folder: the relative path is the project's
    scorer = guardrails.Toolkit(Config(judge="llm", short_answer_signals=signals)).pair_scorer()
    assert scorer.sha256 == signals.pair_model_sha256
    assert onnx_pairs.sentence_logit(scorer, QUESTION, "It is in Texas.", "Huguenot") > -20
