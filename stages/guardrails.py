"""Stage 8, guardrails: per-claim checks, PII redaction and the emit / block gate.

Each answer is split into claims (its sentences). A claim is scored against the spans it cites
(all evidence of the question when it cites none):

- every number, amount, percentage or date in the claim must occur in those spans, else 0;
- every name (capitalised word) in the claim must occur in those spans, else 0;
- a claim resting on a span that contains an instruction scores 0 (injection is data);
- otherwise the score is the share of the claim's content words found in those spans.

The answer is blocked when attribution already blocked it, when its weakest claim scores below
`emit_threshold`, or when it repeats an instruction found inside a document (injection is data).
The output is one HallucinationReport per answer plus the final, redacted answers.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from stages import contracts
from stages.common.text import (
    STOPWORDS,
    cited_sentences,
    content_tokens,
    coverage,
    critical_values,
    words,
)

NAME = "guardrails"
VERSION = "1.0.0"
OUTPUTS = ("hallucination_reports", "final_answers")  # contract tables written

INJECTION_RE = re.compile(
    r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|all)\b.{0,20}\binstructions?\b"
    r"|\byou are now\b|\bsystem prompt\b|\bdo not tell the user\b",
    re.IGNORECASE,
)
PII_PATTERNS = {
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "iban": r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b",
    "card_number": r"\b(?:\d[ -]?){13,16}\b",
    "phone": r"(?<![\w.])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?(?:[ .-]?\d{3,4}){2,3}\b",
}
NAME_RE = re.compile(r"\b[A-Z][a-z]+[A-Z]?[\w&-]*|\b[A-Z]{2,}\b")
PII_PRECEDENCE = ("email", "iban", "card_number", "phone")
BLOCKED_TEMPLATE = (
    "I can't give a verified answer to this question: {failure}. Please consult the source "
    "documents directly or ask a colleague with access."
)
REFUSAL_TEMPLATES = {
    "insufficient_evidence": "I can't answer this from the available sources.",
    "no_permission": "I can't answer this from the sources you have access to.",
    "stale_only": "The only sources on this are outdated, so I can't give a reliable answer.",
    "conflicting_sources": "The sources disagree on this, so I can't give a reliable answer.",
    "technical_error": "A technical problem prevented an answer. Please try again later.",
}


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    emit_threshold: float = Field(0.85, ge=0, le=1)
    redact_pii: list[str] = Field(["email", "phone", "iban", "card_number"])


def claims_of(answer: str) -> list[tuple[str, list[str]]]:
    """(claim text without markers, cited evidence ids): one claim per sentence of the answer."""
    return [(text, ids) for text, ids in cited_sentences(answer) if text.strip()]


def score_claim(text: str, spans: list[str]) -> tuple[float, bool, list[str]]:
    """(score, critical, reasons) for one claim against its supporting spans."""
    support = " ".join(spans)
    claim_values = critical_values(text)
    critical = bool(claim_values)
    missing = sorted(claim_values - critical_values(support))
    if missing:
        shown = ", ".join(v.removeprefix("date:") for v in missing)
        return 0.0, critical, [f"figure or date not in evidence: {shown}"]
    names = {w for w in NAME_RE.findall(text) if w.lower() not in STOPWORDS}
    unknown_names = sorted(n for n in names if n.lower() not in set(words(support)))
    if unknown_names:
        return 0.0, True, [f"name not in evidence: {', '.join(unknown_names)}"]
    if any(INJECTION_RE.search(span) for span in spans):
        return 0.0, critical, ["rests on a span that contains an instruction"]
    score = coverage(set(content_tokens(text)), set(content_tokens(support)))
    reasons = [] if score >= 0.999 else [f"{score:.0%} of the claim's words found in evidence"]
    return score, critical, reasons


def follows_injection(answer: str, evidence_texts: list[str]) -> bool:
    """The answer repeats or carries out an instruction that a document contained."""
    if INJECTION_RE.search(answer):
        return True
    injected = [t for t in evidence_texts if INJECTION_RE.search(t)]
    answer_tokens = set(content_tokens(answer))
    return any(coverage(set(content_tokens(t)), answer_tokens) >= 0.6 for t in injected)


def redact(text: str | None, kinds: list[str]) -> tuple[str | None, list[dict]]:
    if not text:
        return text, []
    matches = [
        {"kind": kind, "start": m.start(), "end": m.end()}
        for kind in PII_PRECEDENCE
        if kind in kinds
        for m in re.finditer(PII_PATTERNS[kind], text)
    ]
    found: list[dict] = []
    for match in matches:  # in precedence order: an IBAN is never half-claimed by "phone"
        if not any(match["start"] < f["end"] and f["start"] < match["end"] for f in found):
            found.append(match)
    redacted = text
    for item in sorted(found, key=lambda f: -f["start"]):
        redacted = (
            redacted[: item["start"]]
            + f"[REDACTED {item['kind'].upper()}]"
            + redacted[item["end"] :]
        )
    return redacted, sorted(found, key=lambda f: f["start"])


def check(attribution: dict, generation: dict, evidence: dict[str, str], config: Config) -> dict:
    """The report for one answer: claims, overall score, action and the reasons behind it."""
    reasons: list[str] = []
    claims = []
    answer = attribution["answer"]
    if attribution["status"] == "refused":
        return {"claims": [], "overall_score": None, "action": "emit", "reasons": ["refusal"]}
    for text, ids in claims_of(answer or ""):
        spans = [evidence[i] for i in ids if i in evidence] or list(evidence.values())
        score, critical, why = score_claim(text, spans)
        status = "supported" if score >= config.emit_threshold else "unsupported"
        claims.append(
            {
                "text": text,
                "evidence_ids": ids,
                "score": score,
                "critical": critical,
                "status": status,
                "reasons": why,
            }
        )
    overall = min((c["score"] for c in claims), default=0.0)
    if attribution["status"] == "blocked":
        reasons.append(attribution["blocked_reason"])
    if not claims:
        reasons.append("no claims to verify")
    if overall < config.emit_threshold:
        reasons.append(f"weakest claim scores {overall:.2f} < {config.emit_threshold}")
    if follows_injection(answer or "", list(evidence.values())):
        reasons.append("answer repeats an instruction found in a document")
    return {
        "claims": claims,
        "overall_score": overall,
        "action": "block" if reasons else "emit",
        "reasons": reasons,
    }


def _failure_mode(reasons: list[str]) -> str:
    text = " ".join(reasons)
    if "instruction" in text:
        return "a source contained instructions, which are not followed"
    if "citation" in text or "cites no evidence" in text:
        return "its citations could not be verified"
    return "part of it is not supported by the sources"


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = {q["question_id"]: q for q in inputs["questions"].to_pylist()}
    generations = {g["question_id"]: g for g in inputs["generations"].to_pylist()}
    confidences = {r["question_id"]: r["confidence"] for r in inputs["rerank_status"].to_pylist()}
    evidence: dict[str, dict[str, str]] = defaultdict(dict)
    for row in inputs["evidence"].to_pylist():
        evidence[row["question_id"]][row["evidence_id"]] = row["text"]
    reports, finals = [], []
    for attribution in inputs["attributions"].to_pylist():
        qid = attribution["question_id"]
        generation = generations[qid]
        report = check(attribution, generation, evidence[qid], config)
        final = _final_answer(questions[qid], attribution, generation, report, confidences.get(qid))
        final["answer"], redactions = redact(final["answer"], config.redact_pii)
        final["rendered_answer"], _ = redact(final["rendered_answer"], config.redact_pii)
        reports.append({"question_id": qid, **report, "redactions": redactions, "version": VERSION})
        finals.append(final)
    return {
        "hallucination_reports": contracts.from_rows(reports, "hallucination_reports"),
        "final_answers": contracts.from_rows(finals, "final_answers"),
    }


def _final_answer(
    question: dict, attribution: dict, generation: dict, report: dict, confidence
) -> dict:
    base = {
        "question_id": question["question_id"],
        "question": question["question"],
        "action": report["action"],
        "state": generation["state"],
        "refusal_reason": generation["refusal_reason"],
        "missing": generation["missing"],
        "confidence": confidence,
    }
    if attribution["status"] == "refused":
        template = REFUSAL_TEMPLATES.get(
            generation["refusal_reason"], REFUSAL_TEMPLATES["insufficient_evidence"]
        )
        return {
            **base,
            "status": "refused",
            "answer": None,
            "rendered_answer": template,
            "citations": [],
        }
    if report["action"] == "block":
        rendered = BLOCKED_TEMPLATE.format(failure=_failure_mode(report["reasons"]))
        return {
            **base,
            "status": "blocked",
            "answer": None,
            "rendered_answer": rendered,
            "citations": [],
        }
    return {
        **base,
        "status": "answered",
        "answer": attribution["answer"],
        "rendered_answer": attribution["rendered_answer"],
        "citations": attribution["citations"],
    }
