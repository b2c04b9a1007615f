"""Answerability: one judge interface; in rerank it reorders the top chunks, sets the
confidence and so the state; a judge that cannot judge is a technical error, never an answer."""

from __future__ import annotations

import numpy as np
import pytest

from stages import rerank
from stages.models import answerability
from stages.models.answerability import (
    AnswerabilityError,
    AnswerabilitySettings,
    ChoiceAnswerability,
    Judgement,
    PairAnswerability,
    YesNoAnswerability,
)
from stages.models.errors import JudgeError
from tests.test_rerank import _candidate, _inputs

CANDIDATES = [
    _candidate("hr-salaries#0000", "hr-salaries", fused=0.05),
    _candidate("handbook#0000", "handbook", fused=0.03),
]


class ScriptedJudge:
    """P(answers) by chunk text: stands in for a trained model in the rerank wiring tests."""

    model_id = "scripted"

    def __init__(self, by_word: dict[str, float], fail: bool = False) -> None:
        self.by_word, self.fail, self.seen = by_word, fail, []

    def judge(self, question, passages, priors=None):
        if self.fail:
            raise AnswerabilityError("model file missing")
        self.seen.append(passages)
        return Judgement(
            [next((p for w, p in self.by_word.items() if w in text), 0.0) for _, text in passages]
        )


def _run(tiny_index, judge, monkeypatch, **settings):
    monkeypatch.setattr(rerank, "answerability_judge", lambda *_: judge)
    config = rerank.Config(answerability=AnswerabilitySettings(kind="fast", **settings))
    out = rerank.run(_inputs(tiny_index, CANDIDATES), config)
    return out["rerank_status"].to_pylist()[0], out["ranked"].to_pylist()


def test_a_near_miss_is_refused_although_the_ranker_is_sure(tiny_index, monkeypatch):
    without = rerank.run(_inputs(tiny_index, CANDIDATES), rerank.Config())
    assert without["rerank_status"].to_pylist()[0]["state"] == "success"
    status, _ = _run(tiny_index, ScriptedJudge({"salary": 0.2}), monkeypatch)
    assert status["state"] == "not_found"
    assert status["confidence"] == status["answerability"] == pytest.approx(0.2)
    assert status["answerability_model"] == "scripted"


def test_the_chunk_that_answers_moves_to_the_top(tiny_index, monkeypatch):
    judge = ScriptedJudge({"Levels are reviewed": 0.9, "salary": 0.1})
    status, ranked = _run(tiny_index, judge, monkeypatch)
    assert status["state"] == "success"
    assert [r["chunk_id"] for r in ranked][:2] == ["handbook#0000", "hr-salaries#0000"]
    assert [r["rank"] for r in ranked] == list(range(1, len(ranked) + 1))


def test_only_the_top_k_chunks_are_judged(tiny_index, monkeypatch):
    judge = ScriptedJudge({"salary": 0.9})
    _run(tiny_index, judge, monkeypatch, top_k=1)
    assert [len(passages) for passages in judge.seen] == [1]


def test_a_judge_that_cannot_judge_is_a_technical_error(tiny_index, monkeypatch):
    status, ranked = _run(tiny_index, ScriptedJudge({}, fail=True), monkeypatch)
    assert status["state"] == "technical_error" and "model file missing" in status["error"]
    assert ranked == []


def test_a_missing_fast_model_is_a_technical_error_for_every_question(tiny_index, tmp_path):
    settings = AnswerabilitySettings(kind="fast", model_path=str(tmp_path / "absent"))
    out = rerank.run(_inputs(tiny_index, CANDIDATES), rerank.Config(answerability=settings))
    status = out["rerank_status"].to_pylist()[0]
    assert status["state"] == "technical_error" and "absent" in status["error"]


def test_fast_needs_a_model_path():
    with pytest.raises(AnswerabilityError, match="model_path"):
        answerability.answerability_judge(AnswerabilitySettings(kind="fast"), None)
    assert answerability.answerability_judge(AnswerabilitySettings(), None) is None


class FixedPairs:
    model_id = "pairs"

    def score(self, pairs):
        return np.array([3.0 if "1,000" in passage else -3.0 for _, passage in pairs])


def test_a_passage_gets_its_best_sentence():
    judge = PairAnswerability(FixedPairs(), AnswerabilitySettings(kind="fast"))
    passages = [
        ("Prices", "Plans changed in May. The Team plan costs 1,000 euros."),
        ("X", "The office moved to Lyon in May."),
    ]
    best, other = judge.probabilities("What does the Team plan cost?", passages)
    assert best == pytest.approx(1 / (1 + np.exp(-3.0)))
    assert other == pytest.approx(1 / (1 + np.exp(3.0)))


def test_the_rankers_confidence_weighs_in_when_the_calibration_gives_it_a_weight():
    passages = [("Prices", "The Team plan costs 1,000 euros."), ("Old", "It cost 1,000 euros.")]
    question = "What does the Team plan cost?"
    alone = PairAnswerability(FixedPairs(), AnswerabilitySettings(kind="fast"))
    assert alone.judge(question, passages, [0.9, 0.1]).probabilities == pytest.approx(
        [1 / (1 + np.exp(-3.0))] * 2
    )
    settings = AnswerabilitySettings(kind="fast", prior_weight=1.0)
    judgement = PairAnswerability(FixedPairs(), settings).judge(question, passages, [0.2, 0.8])
    # logit(0.2) = -log 4, logit(0.8) = +log 4: the second passage now leads and holds the answer
    assert judgement.probabilities == pytest.approx(
        [1 / (1 + np.exp(-3.0 + np.log(4))), 1 / (1 + np.exp(-3.0 - np.log(4)))]
    )
    assert judgement.answer[0] == 1


class FixedYesNo:
    model_id = "yes-no"

    def __init__(self, value=None) -> None:
        self.value = value

    def p_yes(self, system, user):
        if self.value is None:
            raise JudgeError("server down")
        return self.value


def test_strict_reads_p_yes_and_a_failure_is_an_error():
    judge = YesNoAnswerability(FixedYesNo(0.8), AnswerabilitySettings(kind="strict"))
    assert judge.probabilities("q?", [("t", "passage")]) == [pytest.approx(0.8)]
    platt = AnswerabilitySettings(kind="strict", scale=2.0, shift=0.0)
    calibrated = YesNoAnswerability(FixedYesNo(0.8), platt).probabilities("q?", [("t", "p")])[0]
    assert calibrated == pytest.approx(0.8**2 / (0.8**2 + 0.2**2))
    with pytest.raises(AnswerabilityError, match="server down"):
        YesNoAnswerability(FixedYesNo(None), platt).probabilities("q?", [("t", "p")])


class RecordingYesNo(FixedYesNo):
    def __init__(self, value=None) -> None:
        super().__init__(value)
        self.prompts: list[str] = []

    def p_yes(self, system, user):
        self.prompts.append(user)
        return super().p_yes(system, user)


def test_combined_asks_the_strict_judge_once_about_the_sentence_the_pair_model_chose():
    passages = [
        ("Plans", "Plans changed in May. The Team plan costs 1,000 euros. Support is free."),
        ("Old", "The office moved to Lyon in May."),
    ]
    strict = RecordingYesNo(0.2)
    settings = AnswerabilitySettings(kind="combined", strict_weight=1.0)
    judge = answerability.CombinedAnswerability(
        PairAnswerability(FixedPairs(), settings), strict, settings
    )
    judgement = judge.judge("What does the Team plan cost?", passages, [0.5, 0.5])
    assert len(strict.prompts) == 1  # one short forward pass per question
    # the chosen sentence with the one before it, not the whole chunk
    assert "Plans changed in May. The Team plan costs 1,000 euros." in strict.prompts[0]
    assert "Support is free" not in strict.prompts[0]
    index, start, end = judgement.answer
    assert passages[index][1][start:end] == "The Team plan costs 1,000 euros."
    # the judge's "no" (logit(0.2) = -log 4) lowers the chosen passage's probability
    assert judgement.probabilities[0] == pytest.approx(1 / (1 + np.exp(-3.0 + np.log(4))))
    assert judgement.probabilities[1] == pytest.approx(1 / (1 + np.exp(3.0)))
    with pytest.raises(AnswerabilityError, match="server down"):
        answerability.CombinedAnswerability(
            PairAnswerability(FixedPairs(), settings), FixedYesNo(None), settings
        ).judge("q?", passages)


def test_combined_does_not_ask_the_gguf_about_a_question_already_too_unlikely():
    passages = [("Plans", "The Team plan costs 1,000 euros.")]
    strict = RecordingYesNo(0.99)
    # without the judge's term: sigmoid(3 - 5) = 0.12, below the skip line 0.2
    settings = AnswerabilitySettings(
        kind="combined", shift=-5.0, strict_weight=1.0, strict_skip_below=0.2
    )
    judge = answerability.CombinedAnswerability(
        PairAnswerability(FixedPairs(), settings), strict, settings
    )
    judgement = judge.judge("What does the Team plan cost?", passages, [0.5])
    assert strict.prompts == [] and judgement.answer is not None
    assert judgement.probabilities[0] == pytest.approx(1 / (1 + np.exp(2.0)))
    settings = settings.model_copy(update={"strict_skip_below": 0.1})
    judge = answerability.CombinedAnswerability(
        PairAnswerability(FixedPairs(), settings), strict, settings
    )
    assert judge.judge("What does the Team plan cost?", passages, [0.5]).probabilities[0] > 0.9
    assert len(strict.prompts) == 1


def test_the_strict_judge_reads_the_sentences_that_match_the_question():
    text = (
        "The company was founded in 1999. It moved to Lyon in 2004. The Team plan costs 12 euros. "
        "Support answers within a day. The office has a garden."
    )
    focused = answerability.focused_passage("What does the Team plan cost?", text, 2)
    assert "The Team plan costs 12 euros." in focused and len(focused) < len(text)
    assert answerability.focused_passage("Anything?", "One. Two.", 3) == "One. Two."
    assert answerability.focused_passage("Cost?", text, 0) == text


class FixedChoices:
    """A multiple-choice model with scripted P(0) … P(n); records the prompt it was given."""

    model_id = "choices"

    def __init__(self, chances=None) -> None:
        self.chances, self.prompts = chances, []

    def p_choices(self, system, user, count):
        if self.chances is None:
            raise JudgeError("server down")
        self.prompts.append(user)
        return self.chances[: count + 1]


PRICES = (
    "Prices",
    "Plans changed in May. The Team plan costs 12 euros per user. The Team plan has SSO.",
)
OFFICE = ("Office", "The office is in Lyon. The Team meets on Mondays.")


def test_strict_choice_picks_the_answering_sentence_and_its_passage():
    settings = AnswerabilitySettings(kind="strict", choice_sentences=3, choice_match_weight=0.0)
    # candidates in reading order: the 3 sentences matching the question best
    model = FixedChoices([0.1, 0.0, 0.8, 0.1])
    judgement = ChoiceAnswerability(model, settings).judge(
        "What does the Team plan cost?", [OFFICE, PRICES], [0.5, 0.9]
    )
    prompt = model.prompts[0]
    assert prompt.count("[") == 3 and "[1]" in prompt and "(Prices)" in prompt
    assert judgement.probabilities[judgement.answer[0]] == pytest.approx(0.9)  # 1 - P(0)
    passage, start, end = judgement.answer
    title, text = [OFFICE, PRICES][passage]
    chosen = [line for line in prompt.splitlines() if line.startswith("[2]")][0]
    assert text[start:end] in chosen


def test_strict_choice_is_refused_when_none_states_it():
    settings = AnswerabilitySettings(kind="strict")
    judgement = ChoiceAnswerability(FixedChoices([0.95] + [0.01] * 9), settings).judge(
        "What does the Team plan cost?", [PRICES], [0.9]
    )
    assert max(judgement.probabilities) == pytest.approx(0.05)


def test_the_word_match_breaks_a_close_choice():
    # the judge hesitates between sentence 1 and 2; the sentence naming the price wins
    settings = AnswerabilitySettings(kind="strict", choice_sentences=2, choice_match_weight=4.0)
    model = FixedChoices([0.1, 0.46, 0.44])
    judgement = ChoiceAnswerability(model, settings).judge(
        "How much does the Team plan cost per user?", [PRICES], [0.9]
    )
    _, start, end = judgement.answer
    assert PRICES[1][start:end] == "The Team plan costs 12 euros per user."


def test_a_strict_choice_failure_is_an_error():
    with pytest.raises(AnswerabilityError, match="server down"):
        ChoiceAnswerability(FixedChoices(None), AnswerabilitySettings(kind="strict")).judge(
            "What does the Team plan cost?", [PRICES], [0.9]
        )


def test_choice_probabilities_come_from_the_digit_tokens():
    from stages.models.yesno import p_choices_from_top_logprobs

    top = [
        {"token": "2", "logprob": np.log(0.6)},
        {"token": "0", "logprob": np.log(0.2)},
        {"token": " 1", "logprob": np.log(0.1)},
        {"token": "7", "logprob": np.log(0.05)},  # beyond the choices offered
        {"token": "The", "logprob": np.log(0.05)},
    ]
    chances = p_choices_from_top_logprobs(top, 3)
    assert chances == pytest.approx([0.2 / 0.9, 0.1 / 0.9, 0.6 / 0.9, 0.0])
    with pytest.raises(JudgeError):
        p_choices_from_top_logprobs([{"token": "The", "logprob": -0.1}], 3)


def test_the_judged_sentence_is_marked_on_its_chunk(tiny_index, monkeypatch):
    class SecondSentence:
        model_id = "second"

        def judge(self, question, passages, priors=None):
            title, text = passages[0]
            from stages.common.text import sentence_spans

            spans = sentence_spans(text)
            start, end = spans[-1]
            return Judgement([0.9] + [0.1] * (len(passages) - 1), (0, start, end))

    status, ranked = _run(tiny_index, SecondSentence(), monkeypatch)
    assert status["state"] == "success"
    top = ranked[0]
    assert top["answer_start"] is not None and top["answer_end"] > top["answer_start"]
    assert all(r["answer_start"] is None for r in ranked[1:])


def test_the_judged_sentence_leads_the_evidence():
    from stages import evidence

    text = "The Team plan costs 12 euros per user. Prices for the Team plan change in May."
    judged = text.index("Prices")
    chunk = {
        "chunk_id": "prices#0000",
        "doc_id": "prices",
        "title": "Prices",
        "section_path": "",
        "text": text,
        "char_start": 100,
        "confidence": 0.8,
    }
    question = "What does the Team plan cost?"
    plain = evidence._spans_for(question, [chunk], evidence.Config())
    assert plain[0]["text"].startswith("The Team plan costs")  # word match alone
    marked = {**chunk, "answer_span": (judged, len(text))}
    spans = evidence._spans_for(question, [marked], evidence.Config())
    assert spans[0]["text"].startswith("Prices") and spans[0]["start"] == 100 + judged


class PartJudge:
    """Answers by the asked text: each part finds its own chunk (by a word of that chunk)."""

    model_id = "parts"

    def __init__(self, by_part: dict[str, tuple[str, float]]) -> None:
        self.by_part, self.asked = by_part, []

    def judge(self, question, passages, priors=None):
        self.asked.append(question)
        word, chance = next(v for k, v in self.by_part.items() if k in question)
        index = next(i for i, (_, text) in enumerate(passages) if word in text)
        probabilities = [chance if i == index else 0.05 for i in range(len(passages))]
        return Judgement(probabilities, (index, 0, len(passages[index][1])))


def _run_parts(tiny_index, judge, monkeypatch):
    from stages import contracts

    inputs = _inputs(tiny_index, CANDIDATES)
    inputs["retrieval_queries"] = contracts.from_rows(
        [
            {
                "question_id": "q1",
                "query_text": text,
                "rewrite_kind": "decomposition",
            }
            for text in ("What is the L3 salary band", "how often are levels reviewed")
        ],
        "retrieval_queries",
    )
    monkeypatch.setattr(rerank, "answerability_judge", lambda *_: judge)
    config = rerank.Config(answerability=AnswerabilitySettings(kind="fast"))
    out = rerank.run(inputs, config)
    return out["rerank_status"].to_pylist()[0], out["ranked"].to_pylist()


def test_a_multi_part_question_is_judged_part_by_part(tiny_index, monkeypatch):
    # whole, no sentence answers both parts; each part has its own chunk
    judge = PartJudge({"salary": ("salary band", 0.9), "levels": ("Levels are", 0.8)})
    status, ranked = _run_parts(tiny_index, judge, monkeypatch)
    assert judge.asked == ["What is the L3 salary band?", "how often are levels reviewed?"]
    assert status["state"] == "success" and status["confidence"] == pytest.approx(0.8)
    assert [r["chunk_id"] for r in ranked][:2] == ["hr-salaries#0000", "handbook#0000"]
    assert all(r["answer_start"] is not None for r in ranked[:2])


def test_a_multi_part_question_is_as_sure_as_its_least_answered_part(tiny_index, monkeypatch):
    judge = PartJudge({"salary": ("salary band", 0.9), "levels": ("Levels are", 0.3)})
    status, _ = _run_parts(tiny_index, judge, monkeypatch)
    assert status["state"] == "not_found" and status["confidence"] == pytest.approx(0.3)


def test_a_question_or_a_heading_in_the_passage_is_never_the_answer():
    class QuestionsScoreHigh:
        model_id = "q"

        def score(self, pairs):
            sentences = [passage.split(" | ")[0] for _, passage in pairs]
            return np.array([5.0 if s.endswith(("?", "Formats.")) else 1.0 for s in sentences])

    faq = ("FAQ", "What export formats are supported? Formats. Exports are CSV and JSON.")
    judgement = PairAnswerability(QuestionsScoreHigh(), AnswerabilitySettings(kind="fast")).judge(
        "What export formats are supported?", [faq]
    )
    _, start, end = judgement.answer
    assert faq[1][start:end] == "Exports are CSV and JSON."
    candidates = answerability.choice_candidates(
        "What export formats are supported?", [faq], [0.9], 3
    )
    assert [faq[1][c.start : c.end] for c in candidates] == ["Exports are CSV and JSON."]


def test_a_table_row_is_also_read_one_cell_at_a_time():
    from stages.models.onnx_pairs import cell_views

    row = "Plan: Business; Price: €29 per user; Seats: 5; Storage per user: 250 GB."
    assert cell_views(row) == [
        "Plan: Business; Price: €29 per user.",
        "Plan: Business; Seats: 5.",
        "Plan: Business; Storage per user: 250 GB.",
    ]
    assert cell_views("The plan costs 5 euros; it renews yearly; seats: 5.") == []
    prose = "The Normans (Norman: Nourmands; French: Normands; Latin: Normanni) were a people."
    assert cell_views(prose) == []

    class ShortViewsScoreHigh:
        model_id = "views"

        def score(self, pairs):
            return np.array([4.0 if "Storage per user: 250 GB." in p else 0.5 for _, p in pairs])

    passages = [("Pricing", f"Plans are billed monthly. {row}")]
    judge = PairAnswerability(ShortViewsScoreHigh(), AnswerabilitySettings(kind="fast"))
    scored = judge.scored("How much storage does the Business plan include?", passages)
    assert len(scored) == 2  # one score per sentence: the row's best view
    judgement = judge.judge("How much storage does the Business plan include?", passages)
    index, start, end = judgement.answer
    assert passages[index][1][start:end] == row  # the evidence quotes the whole row
    assert judgement.probabilities[0] == pytest.approx(1 / (1 + np.exp(-4.0)))
