"""The per-claim checker of the guardrails: deterministic checks, then verbatim / pre-filter /
judge, each claim scored in [0, 1] with the route that decided it (`verify_claim`). Re-exported by
`stages.guardrails`; the one place a claim is scored (serving adapters and benches call it
through `check` / `check_answer`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import stages.guardrails.groundedness as groundedness
import stages.guardrails.judge as judge
import stages.guardrails.short_answers as short_answers
import stages.guardrails.table_rows as table_rows
from stages.common.text import content_tokens, coverage, strip_markers
from stages.guardrails.config import Config
from stages.guardrails.gate import emit_line
from stages.guardrails.groundedness import CheckResult
from stages.models import onnx_pairs

Toolkit = Any  # stages.guardrails.Toolkit (the package imports this module: no import back)


@dataclass
class ClaimScore:
    score: float
    critical: bool
    judge: str  # verbatim | llm | nli | none | skipped | error | table_row
    checks: list[CheckResult] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    error: bool = False
    # how the claim was decided: check (a deterministic check proved it wrong) | verbatim |
    # prefilter (too few of its words in the spans to ask) | judge | short_answer (the judge, on
    # an LLM's short answer to the question) | lexical (no judge) | table_row (the claim's
    # values compared with the cells of the table row it is about) | error
    route: str = "judge"
    table: table_rows.Verdict | None = None  # the table-row rule's verdict when it decided


def verify_claim(
    text: str,
    spans: list[str],
    config: Config,
    toolkit: Toolkit | None = None,
    *,
    question: str | None = None,
    cited: list[str] | None = None,
    known_ids: set[str] | None = None,
    allowed: str = "",
    generated: bool = False,
    headings: str = "",
    part: bool = False,
    title: str = "",
    long_answer: bool = False,
) -> ClaimScore:
    """Groundedness in [0, 1] of one claim: deterministic checks capped by the support score.

    Routed by what can be proven: a deterministic check that fails scores 0; a claim found in a
    span after normalisation scores 1; one sharing less than `prefilter_lexical` of its words
    with the spans is unsupported without asking; everything else goes to the judge, which sees
    the claim, the spans and `question` (whose words also count as known for the pre-filter).

    A short answer an LLM `generated` ("1685", "Pierre Bayle", "€12 per user per month") is the
    exception to "verbatim is supported": its words occurring in a span do not say the span
    answers the question with them (the year of another event, the Starter price for the
    Enterprise question), so it goes to the judge as a proposed answer to `question`.

    `part`: the claim is one of several of its answer, so the judge asks whether it supports
    that part, not whether it answers the whole (a two-part question) question. `long_answer`:
    the floor_mean gate decides its answer, so the judge's P(yes) is blended with the claim's
    word share (`lexical_weight`).
    """
    checks = groundedness.deterministic_checks(
        text,
        spans,
        cited=cited,
        known_ids=known_ids,
        allowed=allowed,
        context=question or "",
        headings=headings,
    )
    lexical = checks[-1]
    hard = min((c.score for c in checks if c.name != "lexical"), default=1.0)
    critical = groundedness.is_critical(text, checks)
    reasons = [r for c in checks if c.name != "lexical" for r in c.reasons]
    if decided := by_table_row(text, spans, checks, question or "", critical):
        return decided
    if hard == 0.0:
        return ClaimScore(0.0, critical, "skipped", checks, reasons, route="check")
    short_answer = generated and bool(question) and is_short_answer(text, config)
    if groundedness.is_verbatim(text, spans) and not short_answer:
        return ClaimScore(1.0, critical, "verbatim", checks, reasons, route="verbatim")
    if toolkit is None or config.judge == "none":
        score = ClaimScore(lexical.score, critical, "none", checks, reasons + lexical.reasons)
        score.route = "lexical"
        return score
    # The pre-filter counts the question's words as known ("Oily skin can be inherited"
    # for "what causes oily skin?" over "oily skin is hereditary" shares none of its other words,
    # yet is a paraphrase for the judge); the lexical score itself is unchanged.
    if known_share(text, spans, question or "") < config.prefilter_lexical:
        reasons = reasons + lexical.reasons
        return ClaimScore(lexical.score, critical, "skipped", checks, reasons, route="prefilter")
    try:
        verdict = toolkit.judge().judge(
            groundedness.strip_lead_in(text), spans, question, part=part and not short_answer
        )
    except judge.JudgeError as exc:
        why = f"entailment judge failed: {str(exc)[:200]}"
        return ClaimScore(
            0.0, critical, "error", checks, [*reasons, why], error=True, route="error"
        )
    if toolkit is not None and not verdict.cached:
        toolkit.judge_calls += 1
    p_supported = verdict.score
    if short_answer and config.short_answer_signals is not None:
        try:
            p_supported = short_answer_probability(
                strip_markers(groundedness.strip_lead_in(text)).strip(),
                spans,
                question or "",
                verdict.score,
                config.short_answer_signals,
                toolkit,
                title,
            )
        except (judge.JudgeError, onnx_pairs.PairModelError) as exc:
            why = f"short-answer signals failed: {str(exc)[:200]}"
            return ClaimScore(
                0.0, critical, "error", checks, [*reasons, why], error=True, route="error"
            )
    threshold = config.short_answer_threshold if short_answer else config.judge_threshold
    weight = config.lexical_weight if long_answer and not short_answer else 0.0
    support = min(1.0, (p_supported + weight * lexical.score) / (threshold * (1 + weight)))
    if support < config.emit_threshold:
        share = f", {lexical.score:.0%} of its words in the evidence" if weight else ""
        reasons.append(
            f"the {verdict.backend} judge finds it unsupported (p={p_supported:.2f}{share})"
        )
    route = "short_answer" if short_answer else "judge"
    return ClaimScore(support, critical, verdict.backend, checks, reasons, route=route)


# checks the table-row rule does not override: what a cell's value cannot answer
TABLE_KEEPS = ("polarity", "injection", "citations")


def by_table_row(
    text: str, spans: list[str], checks: list[CheckResult], question: str, critical: bool
) -> ClaimScore | None:
    """The claim decided by the table rows of its spans (table_rows.py), or None (the usual
    path). A value contradicting its row's cell is unsupported whatever else holds; values all
    equal to their row's cells are supported unless a check the rule cannot answer failed (the
    figures, scale and names checks compare writings, which the rule normalised)."""
    verdict = table_rows.check_claim(text, spans, question)
    if verdict is None or verdict.status == "open":
        return None
    reasons = verdict.reasons()
    if verdict.status == "contradicted":
        if groundedness.is_verbatim(text, spans):
            return None  # what a span says word for word contradicts no cell of it
        found = [*checks, table_rows.TableCheck(0.0, reasons)]
        return ClaimScore(0.0, True, "table_row", found, reasons, route="table_row", table=verdict)
    if any(c.score < 1.0 for c in checks if c.name in TABLE_KEEPS):
        return None
    found = [*checks, table_rows.TableCheck(1.0, reasons)]
    return ClaimScore(1.0, critical, "table_row", found, reasons, route="table_row", table=verdict)


def short_answer_probability(
    answer: str,
    spans: list[str],
    question: str,
    p_answer: float,
    signals: short_answers.ShortAnswerSignals,
    toolkit: Toolkit,
    title: str = "",
) -> float:
    """P(a short answer is right) from the judge's P(yes) on it, the judge's P(yes) on the
    sentence that holds it (asked as the answer to the question), and the pair model's logit
    for that sentence (stages/guardrails/short_answers.py). Raises JudgeError / PairModelError."""
    sentence = short_answers.answer_sentence(answer, spans) or (spans[0] if spans else answer)
    p_sentence = pair_logit = None
    if signals.sentence_weight:
        verdict = toolkit.judge().judge(sentence, [sentence], question)
        if not verdict.cached:
            toolkit.judge_calls += 1
        p_sentence = verdict.score
    if signals.pair_weight:
        pair_logit = onnx_pairs.sentence_logit(toolkit.pair_scorer(), question, sentence, title)
    return short_answers.combined(signals, p_answer, p_sentence, pair_logit)


def is_short_answer(text: str, config: Config) -> bool:
    """At most `short_answer_words` words, markers and a lead-in aside: judged as an answer to
    the question (route `short_answer`); bench llm_answers counts bare drafts by the same rule."""
    words = strip_markers(groundedness.strip_lead_in(text)).split()
    return 0 < len(words) <= config.short_answer_words


def claim_status(score: ClaimScore, config: Config) -> str:
    if score.error:
        return "error"
    return score_status(score.score, config)


def score_status(score: float, config: Config, long_answer: bool = True) -> str:
    """supported / weak / unsupported for a claim score; `long_answer=False`: the claim's answer
    is decided by the min gate (one claim under `floor_mean`), so it needs emit_threshold."""
    if score >= supported_line(config, long_answer):
        return "supported"
    return "weak" if score >= config.revise_threshold else "unsupported"


def supported_line(config: Config, long_answer: bool = True) -> float:
    """The score a claim needs to count as supported: emit_threshold, or with `floor_mean` (a
    long answer) the answer line, since a claim at that level does not stop the answer (its span
    is not shown as flagged)."""
    return emit_line(config, long_answer)


def known_share(claim: str, spans: list[str], context: str = "") -> float:
    """Share of the claim's content words found in the spans or in `context` (the question)."""
    tokens = set(content_tokens(groundedness.strip_lead_in(claim))) - groundedness.ANSWER_PARTICLES
    tokens -= {
        t for t in tokens if t in groundedness.NUMBER_WORDS or t in groundedness.ORDINAL_WORDS
    }
    if not tokens:
        return 1.0
    return coverage(tokens, set(content_tokens(" ".join([*spans, context]))))
