"""Answerability: P(this passage contains the answer to this exact question), one interface.

SQuAD 2.0's unanswerable questions show why relevance is not enough: a passage on the right topic
that does not state the asked-for fact. Two judges read the question and the passage together:

- `fast`: a pair model by path (an ONNX cross-encoder, `onnx_pairs`, or any `PairScorer`); each
  sentence of the passage (with its title and previous sentence) is scored, the passage gets the
  best sentence's probability `sigmoid(scale * score + shift)`;
- `strict`: the packaged GGUF (or any chat backend) as a yes/no judge, P(yes) from the logits.

A judge that cannot answer (model missing or corrupt, server down) raises `AnswerabilityError`:
the caller reports a technical error, never a "no" and never a "yes".
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from stages.models.errors import JudgeError
from stages.models.settings import LLMSettings

Kind = Literal["none", "fast", "strict"]
STRICT_SYSTEM = (
    "You check whether a passage answers a question. Answer yes only if the passage itself "
    "states the answer to this exact question; a passage on the same topic that does not state "
    "it, or states it for something else, gets no. Answer with one word: yes or no."
)


class AnswerabilityError(RuntimeError):
    """The answerability judge could not judge (a technical error, not a verdict)."""


class AnswerabilitySettings(BaseModel):
    """Which judge, and how its raw score becomes a probability (fit on a held-out split)."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind = "none"
    model_path: str | None = Field(None, description="fast: the pair model's folder")
    model_sha256: str | None = Field(None, description="fast: expected sha256 of model.onnx")
    scale: float = 1.0
    shift: float = 0.0
    top_k: int = Field(2, ge=1, description="top-ranked chunks judged per question")
    max_passage_chars: int = Field(1500, ge=100, description="strict: passage text sent")
    # The judge's cost grows with the prompt (~2.9 s for a 1,500-character chunk on 2 cores): the
    # sentences sharing most words with the question, in their order, keep it short. 0 = whole.
    passage_sentences: int = Field(3, ge=0, description="strict: sentences sent per passage")


class AnswerabilityJudge(Protocol):
    model_id: str

    def probabilities(self, question: str, passages: list[tuple[str, str]]) -> list[float]:
        """One probability per (title, text) passage; raises AnswerabilityError."""
        ...


def _sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))


class PairAnswerability:
    """The best sentence of each passage, scored by a pair model."""

    def __init__(self, scorer, settings: AnswerabilitySettings) -> None:
        self.scorer = scorer
        self.settings = settings
        self.model_id = f"fast:{scorer.model_id}"

    def probabilities(self, question: str, passages: list[tuple[str, str]]) -> list[float]:
        from stages.models.onnx_pairs import sentence_passages

        pairs, owners = [], []
        for index, (title, text) in enumerate(passages):
            for _, _, passage in sentence_passages(title, text) or [(0, 0, text)]:
                pairs.append((question, passage))
                owners.append(index)
        try:
            scores = self.scorer.score(pairs) if pairs else []
        except Exception as exc:  # a model that cannot load or run is a technical error
            raise AnswerabilityError(f"{type(exc).__name__}: {exc}") from exc
        best = [0.0] * len(passages)
        for owner, score in zip(owners, scores, strict=True):
            probability = _sigmoid(self.settings.scale * float(score) + self.settings.shift)
            best[owner] = max(best[owner], probability)
        return best


def focused_passage(question: str, text: str, sentences: int) -> str:
    """The `sentences` sentences of `text` that share most content words with the question, in
    text order (the whole text when it has no more than that, or when `sentences` is 0)."""
    from stages.common.text import content_tokens, sentence_spans

    spans = sentence_spans(text)
    if not sentences or len(spans) <= sentences:
        return text
    wanted = set(content_tokens(question))
    overlap = [len(wanted & set(content_tokens(text[a:b]))) for a, b in spans]
    chosen = sorted(sorted(range(len(spans)), key=lambda i: (-overlap[i], i))[:sentences])
    return " ".join(text[spans[i][0] : spans[i][1]] for i in chosen)


class YesNoAnswerability:
    """P(yes) of a yes/no judge, per passage, mapped through the same Platt scaling."""

    def __init__(self, model, settings: AnswerabilitySettings) -> None:
        self.model = model
        self.settings = settings
        self.model_id = f"strict:{model.model_id}"

    def probabilities(self, question: str, passages: list[tuple[str, str]]) -> list[float]:
        results = []
        for title, text in passages:
            passage = focused_passage(question, text, self.settings.passage_sentences)
            user = (
                f"Passage ({title}):\n{passage[: self.settings.max_passage_chars]}\n\n"
                f"Question: {question}\n\nDoes the passage state the answer to this exact "
                "question?"
            )
            try:
                p_yes = self.model.p_yes(STRICT_SYSTEM, user)
            except JudgeError as exc:
                raise AnswerabilityError(str(exc)) from exc
            results.append(self._calibrated(p_yes))
        return results

    def _calibrated(self, p_yes: float) -> float:
        if self.settings.scale == 1.0 and self.settings.shift == 0.0:
            return p_yes
        p_yes = min(max(p_yes, 1e-6), 1 - 1e-6)
        logit = math.log(p_yes / (1 - p_yes))
        return _sigmoid(self.settings.scale * logit + self.settings.shift)


def answerability_judge(
    settings: AnswerabilitySettings, llm: LLMSettings
) -> AnswerabilityJudge | None:
    """The configured judge, built for this run (never a module global); None for `none`."""
    if settings.kind == "none":
        return None
    if settings.kind == "strict":
        from stages.models.yesno import yes_no_model

        return YesNoAnswerability(yes_no_model(llm), settings)
    if not settings.model_path:
        raise AnswerabilityError("answerability kind 'fast' needs model_path (a pair model)")
    from stages.models import onnx_pairs

    try:
        scorer = onnx_pairs.load(settings.model_path)
    except Exception as exc:
        raise AnswerabilityError(f"{type(exc).__name__}: {exc}") from exc
    if settings.model_sha256 and settings.model_sha256 != scorer.sha256:
        raise AnswerabilityError(
            f"pair model {settings.model_path} has sha256 {scorer.sha256[:12]}…, the config "
            f"expects {settings.model_sha256[:12]}…"
        )
    judge = PairAnswerability(scorer, settings)
    judge.model_id = f"fast:onnx:{scorer.sha256[:12]}"
    return judge
