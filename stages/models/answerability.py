"""Answerability: P(this passage contains the answer to this exact question), one interface.

SQuAD 2.0's unanswerable questions show why relevance is not enough: a passage on the right topic
that does not state the asked-for fact. Two judges read the question and the passage together:

- `fast`: a pair model by path (an ONNX cross-encoder, `onnx_pairs`, or any `PairScorer`); each
  sentence of the passage (with its title and previous sentence) is scored, the passage gets the
  best sentence's probability `sigmoid(scale * score + shift)`;
- `strict`: the packaged GGUF (or any chat backend) reads the best-matching sentences of the top
  passages, numbered, and picks the one that states the answer, or 0 for none: one forward pass
  per question, P(each choice) from the next-token logits. 1 - P(0), Platt-scaled, is the
  probability that the evidence answers; the answering sentence is the one the judge and the
  sentence's word match agree on best (the 1.5B judge alone picks a wrong neighbour too often).
  `strict_mode: passage` keeps the older per-passage yes/no judge;
- `combined`: the pair model picks the sentence and the yes/no judge reads only that one (with the
  sentence before it): one short forward pass per question. The pair logit, the ranker's
  confidence and logit(P(yes)) are combined by one Platt fit (`scale`, `prior_weight`,
  `strict_weight`, `shift`).

Every judge returns a `Judgement`: one probability per passage and, when it found one, the
sentence (passage, start, end) judged to state the answer, which the evidence stage puts first.

A judge that cannot answer (model missing or corrupt, server down) raises `AnswerabilityError`:
the caller reports a technical error, never a "no" and never a "yes".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from stages.models.errors import JudgeError
from stages.models.settings import LLMSettings

Kind = Literal["none", "fast", "strict", "combined"]
STRICT_SYSTEM = (
    "You check whether a passage answers a question. Answer yes only if the passage itself "
    "states the answer to this exact question; a passage on the same topic that does not state "
    "it, or states it for something else, gets no. Answer with one word: yes or no."
)


CHOICE_SYSTEM = (
    "You are a careful reader. Given numbered sentences and a question, reply with the number of "
    "the sentence that states the answer to this exact question. If no sentence states it (a "
    "sentence on the same topic that does not give the asked-for fact, or gives it for something "
    "else, does not count), reply 0. Reply with one digit."
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
    # fast: the ranker's confidence in the passage, as a second Platt feature (fit with the
    # scale and shift): sigmoid(scale * score + prior_weight * logit(confidence) + shift).
    prior_weight: float = 0.0
    # combined: the strict judge's P(yes) on the sentence the pair model chose, a third feature:
    # + strict_weight * logit(P(yes)).
    strict_weight: float = 0.0
    # combined: the yes/no judge is not asked when the probability without its term is below
    # this: a question that low was refused whatever the judge said on the calibration split
    # (scripts/fit_answerability.py picks it there), and each skip saves a GGUF pass.
    strict_skip_below: float = Field(0.0, ge=0, le=1)
    top_k: int = Field(3, ge=1, description="top-ranked chunks judged per question")
    # a sentence with fewer content words is a heading or a label ("Governing law."), never an
    # answer: the evidence stage's own floor (min_span_tokens) for the sentences it quotes
    min_answer_tokens: int = Field(3, ge=1)
    strict_mode: Literal["choice", "passage"] = "choice"
    # strict choice: the sentences of the top chunks that match the question best, at most 9
    # (one digit each); the answer is argmax log P(choice) + weight * word match.
    choice_sentences: int = Field(6, ge=1, le=9)
    choice_match_weight: float = Field(4.0, ge=0)
    max_passage_chars: int = Field(1500, ge=100, description="strict: passage text sent")
    # The judge's cost grows with the prompt (~2.9 s for a 1,500-character chunk on 2 cores): the
    # sentences sharing most words with the question, in their order, keep it short. 0 = whole.
    passage_sentences: int = Field(3, ge=0, description="strict: sentences sent per passage")


@dataclass(frozen=True)
class Judgement:
    """P(answers this exact question) per passage, and the sentence judged to state the answer:
    (passage index, start, end) in that passage's text, or None."""

    probabilities: list[float]
    answer: tuple[int, int, int] | None = None


class AnswerabilityJudge(Protocol):
    model_id: str

    def judge(
        self, question: str, passages: list[tuple[str, str]], priors: list[float] | None = None
    ) -> Judgement:
        """Judge the (title, text) passages, given the ranker's confidence in each (`priors`);
        raises AnswerabilityError."""
        ...


def sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))


def logit(probability: float) -> float:
    """log(p / (1 - p)), p clipped to [1e-6, 1 - 1e-6] so 0 and 1 stay finite."""
    probability = min(max(probability, 1e-6), 1 - 1e-6)
    return math.log(probability / (1 - probability))


def calibrated(
    score: float,
    scale: float,
    shift: float,
    prior_weight: float = 0.0,
    prior: float | None = None,
    strict_weight: float = 0.0,
    p_yes: float | None = None,
) -> float:
    """sigmoid(scale * score + prior_weight * logit(prior) + strict_weight * logit(p_yes) + shift):
    the Platt scaling the fast and combined judges apply and scripts/fit_answerability.py fits
    (one formula, so the two cannot drift). `score` is the pair model's logit, `prior` the
    ranker's confidence, `p_yes` the strict judge's; a term at weight 0 or without its value is
    left out."""
    value = scale * score + shift
    if prior_weight and prior is not None:
        value += prior_weight * logit(prior)
    if strict_weight and p_yes is not None:
        value += strict_weight * logit(p_yes)
    return sigmoid(value)


class PairAnswerability:
    """The best sentence of each passage, scored by a pair model."""

    def __init__(self, scorer, settings: AnswerabilitySettings) -> None:
        self.scorer = scorer
        self.settings = settings
        self.model_id = f"fast:{scorer.model_id}"

    def probabilities(self, question: str, passages: list[tuple[str, str]]) -> list[float]:
        return self.judge(question, passages).probabilities

    def judge(
        self, question: str, passages: list[tuple[str, str]], priors: list[float] | None = None
    ) -> Judgement:
        best = [0.0] * len(passages)
        answer, top = None, -1.0
        for owner, score in self.scored(question, passages):
            prior = priors[owner[0]] if priors is not None else None
            probability = self.calibrated(score, prior)
            best[owner[0]] = max(best[owner[0]], probability)
            if probability > top:
                answer, top = owner, probability
        return Judgement(best, answer)

    def scored(
        self, question: str, passages: list[tuple[str, str]]
    ) -> list[tuple[tuple[int, int, int], float]]:
        """((passage index, start, end), pair model logit) for every sentence of the passages;
        a table row gets the best of its own logit and its cell views' (`cell_views`)."""
        from stages.common.text import states_nothing
        from stages.models.onnx_pairs import cell_views, pair_text, sentence_passages

        pairs, owners = [], []
        for index, (title, text) in enumerate(passages):
            for start, end, passage in sentence_passages(title, text) or [(0, len(text), text)]:
                sentence = text[start:end]
                if states_nothing(sentence, self.settings.min_answer_tokens):
                    continue
                for view in [passage, *(pair_text(v, title, "") for v in cell_views(sentence))]:
                    pairs.append((question, view))
                    owners.append((index, start, end))
        try:
            scores = self.scorer.score(pairs) if pairs else []
        except Exception as exc:  # a model that cannot load or run is a technical error
            raise AnswerabilityError(f"{type(exc).__name__}: {exc}") from exc
        best: dict[tuple[int, int, int], float] = {}
        for owner, score in zip(owners, scores, strict=True):
            best[owner] = max(float(score), best.get(owner, float("-inf")))
        return list(best.items())

    def calibrated(self, score: float, prior: float | None) -> float:
        s = self.settings
        return calibrated(score, s.scale, s.shift, s.prior_weight, prior)


def best_sentence(
    scored: list[tuple[tuple[int, int, int], float]],
) -> tuple[tuple[int, int, int], float]:
    """The (sentence, pair logit) with the highest logit: the combined judge's answer."""
    return max(scored, key=lambda item: item[1])


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
            p_yes = strict_p_yes(self.model, question, title, passage, self.settings)
            results.append(platt(p_yes, self.settings))
        return results

    def judge(
        self, question: str, passages: list[tuple[str, str]], priors: list[float] | None = None
    ) -> Judgement:
        return Judgement(self.probabilities(question, passages))


def strict_p_yes(model, question: str, title: str, passage: str, settings) -> float:
    """The yes/no judge's P(yes) that `passage` states the answer to this exact question."""
    user = (
        f"Passage ({title}):\n{passage[: settings.max_passage_chars]}\n\n"
        f"Question: {question}\n\nDoes the passage state the answer to this exact question?"
    )
    try:
        return model.p_yes(STRICT_SYSTEM, user)
    except JudgeError as exc:
        raise AnswerabilityError(str(exc)) from exc


class CombinedAnswerability:
    """The pair model finds the sentence; the yes/no judge reads only that one.

    The fast judge finds the answering sentence well (the right one first for ~73 % of
    answerable questions) but tells a near miss from an answer weakly; the GGUF judge tells them
    apart better (AUC 0.865 with the gold paragraph) but costs ~1.5–3 s per passage. Here it
    judges one short passage per question (the chosen sentence after the one before it), and
    the calibration combines the pair logit, the ranker's confidence and logit(P(yes)).
    """

    def __init__(self, pairs: PairAnswerability, model, settings: AnswerabilitySettings) -> None:
        self.pairs = pairs
        self.model = model
        self.settings = settings
        self.model_id = f"combined:{pairs.scorer.model_id}+{model.model_id}"

    def signals(
        self, question: str, passages: list[tuple[str, str]]
    ) -> tuple[list[tuple[tuple[int, int, int], float]], tuple[int, int, int] | None, float]:
        """Every sentence's pair logit, the sentence with the highest (the answer), and the
        strict judge's P(yes) on it (0.5, no opinion, when there is no sentence)."""
        scored = self.pairs.scored(question, passages)
        if not scored:
            return scored, None, 0.5
        answer, _ = best_sentence(scored)
        return scored, answer, self.p_yes(question, passages, answer)

    def p_yes(
        self, question: str, passages: list[tuple[str, str]], answer: tuple[int, int, int]
    ) -> float:
        """The yes/no judge's P(yes) on the answer sentence, read after the sentence before it."""
        from stages.common.text import sentence_spans

        index, start, end = answer
        title, text = passages[index]
        before = [a for a, b in sentence_spans(text) if b <= start]
        passage = text[before[-1] if before else start : end].strip()
        return strict_p_yes(self.model, question, title, passage, self.settings)

    def judge(
        self, question: str, passages: list[tuple[str, str]], priors: list[float] | None = None
    ) -> Judgement:
        s = self.settings
        scored = self.pairs.scored(question, passages)
        best = [0.0] * len(passages)
        for owner, score in scored:  # sentences the yes/no judge did not read: its term left out
            prior = priors[owner[0]] if priors is not None else None
            probability = calibrated(score, s.scale, s.shift, s.prior_weight, prior)
            best[owner[0]] = max(best[owner[0]], probability)
        if not scored:
            return Judgement(best, None)
        answer, score = best_sentence(scored)
        prior = priors[answer[0]] if priors is not None else None
        without = calibrated(score, s.scale, s.shift, s.prior_weight, prior)
        if without >= s.strict_skip_below:  # below it, refused without asking (see settings)
            p_yes = self.p_yes(question, passages, answer)
            best[answer[0]] = calibrated(
                score, s.scale, s.shift, s.prior_weight, prior, s.strict_weight, p_yes
            )
        else:
            best[answer[0]] = without
        return Judgement(best, answer)


def platt(probability: float, settings: AnswerabilitySettings) -> float:
    """sigmoid(scale * logit(p) + shift); the identity at scale 1, shift 0."""
    if settings.scale == 1.0 and settings.shift == 0.0:
        return probability
    return calibrated(logit(probability), settings.scale, settings.shift)


@dataclass(frozen=True)
class Candidate:
    passage: int
    start: int
    end: int
    match: float


def choice_candidates(
    question: str,
    passages: list[tuple[str, str]],
    priors: list[float],
    limit: int,
    min_tokens: int = 3,
) -> list[Candidate]:
    """The `limit` sentences of the passages that match the question best (word match weighted
    by the passage's rank confidence, as the evidence stage weighs spans), in reading order."""
    from stages.common.text import content_tokens, sentence_match, sentence_spans, states_nothing

    wanted = set(content_tokens(question))
    found = []
    for index, ((title, text), prior) in enumerate(zip(passages, priors, strict=True)):
        for start, end in sentence_spans(text):
            if states_nothing(text[start:end], min_tokens):
                continue
            match = sentence_match(wanted, text[start:end], title) * (0.5 + 0.5 * prior)
            found.append(Candidate(index, start, end, match))
    best = sorted(found, key=lambda c: (-c.match, c.passage, c.start))[:limit]
    return sorted(best, key=lambda c: (c.passage, c.start))


def choice_prompt(
    question: str, passages: list[tuple[str, str]], candidates: list[Candidate]
) -> str:
    lines, last = [], None
    for number, candidate in enumerate(candidates, 1):
        title, text = passages[candidate.passage]
        if candidate.passage != last:
            lines.append(f"({title})")
            last = candidate.passage
        lines.append(f"[{number}] {text[candidate.start : candidate.end]}")
    return (
        "Sentences:\n" + "\n".join(lines) + f"\n\nQuestion: {question}\n"
        "Which sentence states the answer? Reply with its number, or 0 if none does."
    )


class ChoiceAnswerability:
    """One multiple choice per question: which of the best-matching sentences states the answer."""

    def __init__(self, model, settings: AnswerabilitySettings) -> None:
        self.model = model
        self.settings = settings
        self.model_id = f"strict-choice:{model.model_id}"

    def judge(
        self, question: str, passages: list[tuple[str, str]], priors: list[float] | None = None
    ) -> Judgement:
        priors = priors if priors is not None else [1.0] * len(passages)
        limit = self.settings.choice_sentences
        candidates = choice_candidates(
            question, passages, priors, limit, self.settings.min_answer_tokens
        )
        if not candidates:
            return Judgement([0.0] * len(passages))
        user = choice_prompt(question, passages, candidates)
        try:
            chances = self.model.p_choices(CHOICE_SYSTEM, user, len(candidates))
        except JudgeError as exc:
            raise AnswerabilityError(str(exc)) from exc
        answerable = platt(1.0 - chances[0], self.settings)
        weight = self.settings.choice_match_weight
        chosen = max(
            range(len(candidates)),
            key=lambda i: math.log(chances[i + 1] + 1e-4) + weight * candidates[i].match,
        )
        answer = candidates[chosen]
        # a passage the judge did not choose: its own sentences' share of the choice
        share = [0.0] * len(passages)
        for candidate, chance in zip(candidates, chances[1:], strict=True):
            share[candidate.passage] += chance
        probabilities = [platt(min(p, 1.0), self.settings) if p else 0.0 for p in share]
        probabilities[answer.passage] = answerable
        return Judgement(probabilities, (answer.passage, answer.start, answer.end))


def answerability_judge(
    settings: AnswerabilitySettings, llm: LLMSettings
) -> AnswerabilityJudge | None:
    """The configured judge, built for this run (never a module global); None for `none`."""
    if settings.kind == "none":
        return None
    if settings.kind == "strict":
        from stages.models.yesno import yes_no_model

        if settings.strict_mode == "passage":
            return YesNoAnswerability(yes_no_model(llm), settings)
        return ChoiceAnswerability(yes_no_model(llm), settings)
    if not settings.model_path:
        raise AnswerabilityError(
            f"answerability kind '{settings.kind}' needs model_path (a pair model)"
        )
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
    if settings.kind == "combined":
        from stages.models.yesno import yes_no_model

        return CombinedAnswerability(judge, yes_no_model(llm), settings)
    return judge
