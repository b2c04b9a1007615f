"""A run folder as `grounding run` leaves it, small and hand-made, for the review-loop tests."""

from __future__ import annotations

import json
from pathlib import Path

EVIDENCE_TEXT = "Section 2. Refunds are paid within 14 days of a return. Shipping is free."


def trace(qid: str, stratum: str, confidence: float, answer: str = "") -> dict:
    status = {"blocked": "blocked", "refused": "refused"}.get(stratum, "answered")
    action = {"revised": "revise", "blocked": "block"}.get(stratum, "emit")
    draft = answer or f"Refunds are paid within 14 days [E1]. Question {qid} is answered."
    claim_end = draft.index("[E1]") + 4 if "[E1]" in draft else len(draft)
    claims = [
        {
            "text": draft[:claim_end],
            "char_start": 0,
            "char_end": claim_end,
            "score": confidence,
            "status": "supported",
            "judge": "fast",
            "critical": True,
            "reasons": [],
            "evidence_spans": [
                {"evidence_id": "E1", "doc_id": "d1", "char_start": 111, "char_end": 150}
            ],
            "checks": [{"name": "lexical", "version": "1", "score": 0.8}],
        }
    ]
    return {
        "question_id": qid,
        "question": f"How fast are refunds paid ({qid})?",
        "evidence": [
            {
                "evidence_id": "E1",
                "doc_id": "d1",
                "title": "Refund policy",
                "section_path": "Policies > Refunds",
                "text": EVIDENCE_TEXT,
                "char_start": 100,
                "char_end": 100 + len(EVIDENCE_TEXT),
            }
        ],
        "generation": {"answer": None if stratum == "refused" else draft},
        "attribution": {"answer": None if stratum == "refused" else draft},
        "guardrails": {"claims": [] if stratum == "refused" else claims, "overall_score": 0.9},
        "final": {
            "question_id": qid,
            "status": status,
            "action": action,
            "answer": draft if status == "answered" else None,
            "refusal_reason": "insufficient_evidence" if stratum == "refused" else None,
            "confidence": confidence,
        },
    }


# (stratum, answers, low-confidence answers among them)
MIX = (("emitted", 24, 6), ("revised", 6, 3), ("blocked", 8, 4), ("refused", 6, 0))


def make_run(runs_dir: Path, run_id: str = "20261128T000000-abcd1234") -> Path:
    folder = runs_dir / run_id
    folder.mkdir(parents=True)
    lines = []
    number = 0
    for stratum, total, low in MIX:
        for i in range(total):
            number += 1
            confidence = 0.3 if i < low else 0.9
            lines.append(json.dumps(trace(f"q{number:03d}", stratum, confidence)))
    (folder / "trace.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "summary.json").write_text(json.dumps({"run_id": run_id, "stages": {}}))
    return folder


def cli_settings(store: Path, runs: Path) -> list[str]:
    return ["--set", f"store={store}", "--set", f"runs_dir={runs}"]
