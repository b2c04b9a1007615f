"""The answer-level gate of the guardrails: claim scores combined (`aggregate`) and the
emit / revise / block decision (`decide`). Re-exported by `stages.guardrails`."""

from __future__ import annotations

import stages.guardrails.answer_type as answer_type
from stages.guardrails.config import Config


def scored(claims: list[dict]) -> list[dict]:
    """The claims that carry a score: framing (`not_a_claim`) neither helps nor hurts."""
    return [c for c in claims if c["status"] != "not_a_claim" and c["score"] is not None]


def answer_threshold(config: Config) -> float:
    """The answer-level emit line of `floor_mean` (a claim's own line stays emit_threshold)."""
    if config.answer_threshold is None:
        return config.emit_threshold
    return config.answer_threshold


def emit_line(config: Config, long_answer: bool) -> float:
    """The one emit line, for the answer and for each claim's status: a long answer under
    `floor_mean` emits at the answer line (never above emit_threshold), anything else at
    emit_threshold. A claim at or above it counts as supported."""
    if long_answer and config.aggregate == "floor_mean":
        return min(config.emit_threshold, answer_threshold(config))
    return config.emit_threshold


def long_answer_gate(claims: list[dict], config: Config) -> bool:
    """`floor_mean` decides this answer: it is configured and the answer has enough claims."""
    return config.aggregate == "floor_mean" and len(scored(claims)) >= config.long_answer_claims


def aggregate(claims: list[dict], config: Config) -> float:
    """The answer's score. `min`: its weakest claim. `weighted_mean`: critical claims weigh
    `critical_weight`. `floor_mean` (long answers): the weighted mean, unless a claim
    scores below `claim_floor` (a failed check, a judge's clear no): then that claim's score, so
    one lukewarm paraphrase among supported claims does not sink the answer and one
    unsupported figure still does."""
    claims = scored(claims)
    if not claims:
        return 0.0
    lowest = min(c["score"] for c in claims)
    if config.aggregate == "min" or (
        config.aggregate == "floor_mean" and not long_answer_gate(claims, config)
    ):
        return lowest
    weights = [config.critical_weight if c["critical"] else 1.0 for c in claims]
    mean = sum(w * c["score"] for w, c in zip(weights, claims, strict=True)) / sum(weights)
    if config.aggregate == "floor_mean" and lowest < config.claim_floor:
        return lowest
    return mean


def typed_answer_problem(claims: list[dict], question: str) -> str | None:
    """`answer_type_mismatch: …` when the question asks for a date, a figure, a person or a place
    and no claim of the answer holds one (answer_type.py). An answer that says the evidence lacks
    it (a refusal) is not held to it."""
    if not question or any(
        str(r).startswith("refusal") for c in claims for r in c.get("reasons") or []
    ):
        return None
    texts = [c.get("text") or "" for c in scored(claims)]
    return answer_type.mismatch(question, texts)


def decide(
    claims: list[dict],
    overall: float,
    *,
    config: Config,
    hard_reasons: list[str],
    divergent: list[str],
    rejected_tools: list[str],
    revise_round: int,
    answer_check: dict | None = None,
    question: str = "",
    miscited: list[str] | None = None,
) -> tuple[str, list[str], list[str]]:
    """(action, reasons, feedback) from the scored claims and the answer-level findings.

    A critical claim below `block_threshold` blocks at once, unless it is `miscited`: its figure
    or name is in evidence it did not cite, which a revise round can fix."""
    reasons = list(hard_reasons)
    errors = any(c["status"] == "error" for c in claims) or (
        answer_check is not None and answer_check["status"] == "error"
    )
    if errors:
        reasons.append("technical error: a claim could not be checked")
    if rejected_tools:
        reasons.append(f"technical error: rejected tool output in the final turn: {rejected_tools}")
    if not scored(claims):
        reasons.append("no claims to verify")
    line = emit_line(config, long_answer_gate(claims, config))
    weak = [c for c in scored(claims) if c["score"] < line]
    critical_low = [
        c
        for c in weak
        if c["critical"]
        and c["score"] < config.block_threshold
        and c["text"] not in (miscited or [])
    ]
    if long_answer_gate(claims, config):
        threshold = answer_threshold(config)
        if overall < threshold:  # the answer as a whole, not its weakest claim
            reasons.append(f"answer scores {overall:.2f} < {threshold}")
    elif weak:
        reasons.append(f"weakest claim scores {overall:.2f} < {config.emit_threshold}")
    if divergent:
        reasons.append(f"self-consistency probes diverge on {len(divergent)} critical claim(s)")
    feedback = [
        f'Unsupported claim: "{c["text"]}" ({"; ".join(c["reasons"]) or "not in the evidence"})'
        for c in weak
    ] + [f'Inconsistent claim: "{text}" (probes gave a different value)' for text in divergent]
    if mistyped := typed_answer_problem(claims, question):
        reasons.append(mistyped)
        feedback.append(
            f'The answer does not give what the question "{question}" asks for: state it from '
            "the evidence, or refuse if the evidence does not say"
        )
    if answer_check is not None and answer_check["status"] == "unsupported":
        reasons.append(
            f"the answer is copied from the evidence but does not answer the question "
            f"(p={answer_check['p_yes']:.2f})"
        )
        feedback.append(
            f'The answer does not answer the question "{question}": answer exactly what it '
            "asks from the evidence, or refuse if the evidence does not say"
        )
    if not reasons:
        return "emit", [], []
    if hard_reasons or rejected_tools or not scored(claims) or errors:
        return "block", reasons, feedback
    if critical_low:
        reasons.append(f"{len(critical_low)} critical claim(s) below {config.block_threshold}")
        return "block", reasons, feedback
    if revise_round >= config.max_revise_rounds:
        reasons.append(f"revisions exhausted ({revise_round} of {config.max_revise_rounds})")
        return "block", reasons, feedback
    return "revise", reasons, feedback
