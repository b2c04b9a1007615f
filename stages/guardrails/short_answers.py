"""An LLM's short answer ("Texas", "The Portuguese", "€49 per user per month"), judged as an
answer to its question by three signals instead of one.

Finding a short answer's words in a span does not prove that the span answers the question with
them, so the entailment judge is asked whether the evidence supports it as the answer
(`stages.guardrails`, route `short_answer`). That one P(yes) tells right short answers from
SQuAD's near misses with AUC 0.826 / 0.878 on the two articles of the answerability calibration
split (SQuAD dev articles no model trains on), and in the llm_answers bench right bare answers
it was lukewarm about were the largest share of the false positives. Two more views of the same
question add what it misses (scripts/fit_short_answer_signals.py fits them):

- the judge again, asked whether the answer's whole sentence answers the question (the
  framing of the guardrails' answer check);
- the project's pair model (data/models/answerability-minilm-*), trained to tell the sentence
  that answers a question from its near misses: its logit for (question, that sentence).

A logistic regression over logit(P(yes) answer), logit(P(yes) sentence) and the pair logit gives
the probability the gate reads in place of the single P(yes); its weights and threshold are
fitted on the calibration split and written to configs/guardrails.yaml.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from stages.common.text import content_tokens, sentence_spans
from stages.models.answerability import logit, sigmoid

VERSION = "1.0.0"


class ShortAnswerSignals(BaseModel):
    """Weights of the three signals (0 leaves a signal out and never computes it)."""

    model_config = ConfigDict(extra="forbid")

    answer_weight: float = Field(description="on logit(judge P(yes) of the short answer)")
    sentence_weight: float = Field(0.0, description="on logit(judge P(yes) of its sentence)")
    pair_weight: float = Field(0.0, description="on the pair model's logit for its sentence")
    bias: float = 0.0
    pair_model_path: str | None = None  # a directory with model.onnx (stages/models/onnx_pairs)
    pair_model_sha256: str | None = None


def combined(
    signals: ShortAnswerSignals,
    p_answer: float,
    p_sentence: float | None = None,
    pair_logit: float | None = None,
) -> float:
    """P(the short answer is right) from its signals; a signal left out weighs nothing."""
    z = signals.bias + signals.answer_weight * logit(p_answer)
    if signals.sentence_weight and p_sentence is not None:
        z += signals.sentence_weight * logit(p_sentence)
    if signals.pair_weight and pair_logit is not None:
        z += signals.pair_weight * pair_logit
    return sigmoid(max(min(z, 50.0), -50.0))


def answer_sentence(answer: str, spans: list[str]) -> str | None:
    """The sentence of the cited spans that holds the answer: the first one containing its
    text (case-insensitive), else the one sharing most of its content words; None when no
    sentence shares any."""
    wanted = " ".join(answer.lower().split())
    sentences = [span[b:e].strip() for span in spans for b, e in sentence_spans(span)]
    for sentence in sentences:
        if wanted and wanted in " ".join(sentence.lower().split()):
            return sentence
    tokens = set(content_tokens(answer))
    shared = [len(tokens & set(content_tokens(s))) for s in sentences]
    if not shared or max(shared) == 0:
        return None
    return sentences[shared.index(max(shared))]
