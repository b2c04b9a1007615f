"""Stage 8, guardrails: every answer of a run through the claim checker, then the final answers.

Per question: the claims of the generated answer are checked against its evidence and the gate
decides emit / revise / block (`stages.guardrails.checker`, the library the agent wing and the
benches call too); the final answer is rendered and schema-checked (`answers`), then PII is
redacted (`pii`). A judge failure is a technical error, never a verdict on the answer.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyarrow as pa

import stages.guardrails.pii as pii
from stages import contracts
from stages.guardrails.answers import REFUSAL_TEMPLATES as REFUSAL_TEMPLATES  # re-exported
from stages.guardrails.answers import final_answer
from stages.guardrails.answers import report_to_json as report_to_json  # re-exported
from stages.guardrails.checker import LLM_BACKENDS as LLM_BACKENDS  # the checker, re-exported
from stages.guardrails.checker import PROJECT_ROOT as PROJECT_ROOT
from stages.guardrails.checker import (
    TOOL_TABLES,
    Toolkit,
    check,
    check_versions,
    recited_attribution,
)
from stages.guardrails.checker import ClaimScore as ClaimScore
from stages.guardrails.checker import aggregate as aggregate
from stages.guardrails.checker import check_answer as check_answer
from stages.guardrails.checker import citation_fix as citation_fix
from stages.guardrails.checker import claim_status as claim_status
from stages.guardrails.checker import decide as decide
from stages.guardrails.checker import headings_of as headings_of
from stages.guardrails.checker import make_judge as make_judge
from stages.guardrails.checker import project_path as project_path
from stages.guardrails.checker import score_status as score_status
from stages.guardrails.checker import system_prompts as system_prompts
from stages.guardrails.checker import tool_validations as tool_validations
from stages.guardrails.checker import verify_claim as verify_claim
from stages.guardrails.config import LEGACY_LLM_KEYS as LEGACY_LLM_KEYS  # re-exported
from stages.guardrails.config import Config  # the stage's settings (configs/guardrails.yaml)
from stages.guardrails.groundedness import CheckResult as CheckResult
from stages.guardrails.verify import is_short_answer as is_short_answer
from stages.guardrails.verify import short_answer_probability as short_answer_probability

NAME = "guardrails"
VERSION = "2.18.0"  # bumped with any change to what the checker finds in a run's answers
INPUTS = ("questions", "generations", "rerank_status", "evidence", "attributions")
INPUTS += ("generation_calls", "rewrite_calls", "confidence_calls")  # tool-call records
OUTPUTS = ("hallucination_reports", "final_answers")
PER_QUESTION = True  # cached and batched per question


def run(inputs: dict[str, Any], config: Config) -> dict[str, pa.Table]:
    questions = {q["question_id"]: q for q in inputs["questions"].to_pylist()}
    generations = {g["question_id"]: g for g in inputs["generations"].to_pylist()}
    confidences = {r["question_id"]: r["confidence"] for r in inputs["rerank_status"].to_pylist()}
    evidence: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in inputs["evidence"].to_pylist():
        evidence[row["question_id"]][row["evidence_id"]] = row
    tool_rows: dict[str, list[dict]] = defaultdict(list)
    for name in TOOL_TABLES:  # absent table = no records (the producer has not run)
        table = inputs.get(name)
        for row in table.to_pylist() if table is not None else []:
            tool_rows[row["question_id"]].append(row)
    toolkit = Toolkit(config)
    versions = check_versions(config)
    reports, finals = [], []
    for attribution in inputs["attributions"].to_pylist():
        qid = attribution["question_id"]
        question, generation = questions[qid], generations[qid]
        report = check(
            attribution,
            generation,
            evidence[qid],
            config,
            toolkit,
            question=question["question"],
            tool_rows=tool_rows[qid],
        )
        if recited := report.pop("recited_answer", None):
            attribution = recited_attribution(attribution, recited, evidence[qid], generation)
        final = final_answer(question, attribution, generation, report, confidences.get(qid))
        if problems := contracts.final_answer_problems(final):
            report.update(action="block", reasons=[*report["reasons"], *problems])
            final = final_answer(question, attribution, generation, report, confidences.get(qid))
        final["answer"], redactions = pii.redact(
            final["answer"], config.redact_pii, config.pii_engine
        )
        final["rendered_answer"], _ = pii.redact(
            final["rendered_answer"], config.redact_pii, config.pii_engine
        )
        reports.append(
            {
                "question_id": qid,
                **report,
                "redactions": redactions,
                # named after redacting: Presidio is built on the first text that could hold
                # PII, and where it cannot be built the regex fallback did the work
                "pii_detector": pii.detector_name(config.pii_engine)
                if config.redact_pii
                else "none",
                "check_versions": versions,
                "version": VERSION,
            }
        )
        finals.append(final)
    return {
        "hallucination_reports": contracts.table_of("hallucination_reports", reports, stage=NAME),
        "final_answers": contracts.table_of("final_answers", finals, stage=NAME),
    }
