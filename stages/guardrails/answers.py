"""Final answers: the user-facing answer of each question, and the report as JSON (the row's
contract check is `contracts.final_answer_problems`).

What the gate decided becomes one `final_answers` row: the attributed answer when it is emitted,
a refusal template, or a blocked template naming the failure mode and nothing internal.
"""

from __future__ import annotations

import json
from typing import Any

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
    "unsupported_language": "I can't answer in this language from the available sources.",
}


def _failure_mode(reasons: list[str], action: str) -> str:
    text = " ".join(reasons)
    if "instruction found in a document" in text or "document that contains an instruction" in text:
        return "a source contained instructions, which are not followed"
    if "technical error" in text:
        return "a technical problem prevented checking it against the sources"
    if "citation" in text or "cites no evidence" in text or "not retrieved" in text:
        return "its citations could not be verified"
    if "answer_type_mismatch" in text:
        return "it does not give what the question asks for (a date, a figure, a person or a place)"
    if "self-consistency" in text and action == "block":
        return "its key facts were not stable when re-checked"
    return "part of it is not supported by the sources"


def final_answer(
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
        if generation["refusal_reason"] == "unsupported_language" and generation["missing"]:
            # the person reads which language was asked and which ones the sources serve
            template = f"{template.rstrip('.')}: {generation['missing'][0]}."
        return _final(base, "refused", None, template, [])
    if report["action"] in ("block", "revise"):
        rendered = BLOCKED_TEMPLATE.format(
            failure=_failure_mode(report["reasons"], report["action"])
        )
        return _final(base, "blocked", None, rendered, [])
    return _final(
        base,
        "answered",
        attribution["answer"],
        attribution["rendered_answer"],
        attribution["citations"],
    )


def _final(base: dict, status: str, answer, rendered: str, citations: list) -> dict:
    return {
        **base,
        "status": status,
        "answer": answer,
        "rendered_answer": rendered,
        "citations": citations,
    }


def report_to_json(row: dict) -> dict:
    """A hallucination_reports row (plus an optional run_id) as a JSON-ready dict."""
    claims = [
        {
            "text": c["text"],
            "evidence_spans": list(c.get("evidence_spans") or []),
            "score": c["score"],
            "critical": bool(c["critical"]),
            "status": c["status"],
            "judge": c.get("judge"),
            "reasons": list(c.get("reasons") or []),
        }
        for c in row.get("claims") or []
    ]
    document = {
        "run_id": row.get("run_id"),
        "question_id": row["question_id"],
        "claims": claims,
        "tool_call_validations": [
            {
                "tool": v["tool"],
                "args": _json_or_text(v.get("args")),
                "status": v["status"],
                "errors": list(v.get("errors") or []),
            }
            for v in row.get("tool_call_validations") or []
        ],
        "consistency_probes": [
            {
                "claim": p["claim"],
                "original": p["original"],
                "probe_answers": list(p.get("probe_answers") or []),
                "agreement": p.get("agreement"),
                "status": p.get("status"),
            }
            for p in row.get("consistency_probes") or []
        ],
        "answer_check": dict(row["answer_check"]) if row.get("answer_check") else None,
        "overall_score": row.get("overall_score"),
        "action": row["action"],
        "reasons": list(row.get("reasons") or []),
        "feedback": list(row.get("feedback") or []),
        "redactions": [dict(r) for r in row.get("redactions") or []],
        "version": row.get("version"),
    }
    return json.loads(json.dumps(document, default=str))  # plain JSON types only


def _json_or_text(value: str | None) -> Any:
    try:
        return json.loads(value) if value else None
    except ValueError:
        return value
