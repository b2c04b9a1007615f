"""Scoring a run on an eval set: one row per question from the run's artifacts and the gold
fields, the gold-evidence rerun, and the metrics by axis (`eval/metrics.py`) composed into the
record the gate compares and the report shows."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from eval.frozen_sets import EvalSet
from eval.gold_evidence import run_with_gold_evidence
from eval.metrics import (
    contains_all,
    contains_gold,
    cost_axis,
    end_to_end_axis,
    generation_axis,
    guardrail_axis,
    permission_leaks,
    retrieval_axis,
)
from stages.contracts import FINAL_STATUSES, final_answer_problems
from stages.formats.anchors import anchor_label


@dataclass
class EvalResult:
    eval_set: EvalSet
    config: Any
    metrics: dict[str, Any]
    per_question: list[dict]
    stage_results: dict[str, Any] = field(default_factory=dict)
    wall_seconds: float = 0.0


@dataclass
class RunTables:
    """The run's artifact rows the metrics read, keyed by question id (documents by doc id)."""

    finals: dict[str, dict]
    reports: dict[str, dict]
    generations: dict[str, dict]
    statuses: dict[str, dict]
    ranked: dict[str, list[str]]
    candidates: dict[str, list[str]]
    evidence: dict[str, list[dict]]
    documents: dict[str, dict]


def _ranked_docs(rows: list[dict]) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        ranked[row["question_id"]].append((row["rank"], row["doc_id"]))
    return {q: list(dict.fromkeys(d for _, d in sorted(items))) for q, items in ranked.items()}


def read_run_tables(result, store) -> RunTables:
    """The tables of `result.refs` the metrics need, read once from `store`."""
    refs = result.refs
    evidence: dict[str, list[dict]] = defaultdict(list)
    for row in store.read_table(refs["evidence"], "evidence").to_pylist():
        evidence[row["question_id"]].append(row)
    eligible = [
        r
        for r in store.read_table(refs["retrieval"], "candidates").to_pylist()
        if r["pool"] == "eligible"
    ]
    return RunTables(
        finals={r["question_id"]: r for r in result.final_answers.to_pylist()},
        reports={r["question_id"]: r for r in result.reports.to_pylist()},
        generations=_by_question(store.read_table(refs["generation"], "generations")),
        statuses=_by_question(store.read_table(refs["rerank"], "rerank_status")),
        ranked=_ranked_docs(store.read_table(refs["rerank"], "ranked").to_pylist()),
        candidates=_ranked_docs(eligible),
        evidence=evidence,
        documents={
            d["doc_id"]: d for d in store.read_table(refs["ingestion"], "documents").to_pylist()
        },
    )


def _place(span: dict) -> str:
    """ " (Prices!A4:C4)": where in the original file an evidence span sits, when known."""
    label = anchor_label(span.get("anchor"))
    return f" ({label})" if label else ""


def _by_question(table) -> dict[str, dict]:
    return {r["question_id"]: r for r in table.to_pylist()}


def question_row(q: dict, tables: RunTables, principals: dict[str, list[str]]) -> dict:
    """What happened to one question, judged against its gold fields."""
    qid = q["question_id"]
    final = tables.finals.get(qid, {})
    status = final.get("status")
    expect_answer = q["expected_behavior"] == "answer"
    cited = [c["doc_id"] for c in final.get("citations") or []]
    pre_answer = tables.generations.get(qid, {}).get("answer")
    leaks = (
        permission_leaks(
            [(qid, q["principal"], cited)],
            principals,
            {d: v["permission_set"] for d, v in tables.documents.items()},
        )
        if status == "answered"
        else []
    )
    correct = (
        status == "answered"
        and expect_answer
        and contains_gold(final.get("answer"), q["gold_answers"])
    )
    pre_supported = expect_answer and contains_gold(pre_answer, q["gold_answers"])
    gold_docs = q["gold_doc_ids"] if expect_answer else []
    rank_list = tables.ranked.get(qid, [])
    first_gold = next((i for i, d in enumerate(rank_list, 1) if d in gold_docs), None)
    problems = final_answer_problems(final) if final else ["no final answer"]
    report = tables.reports.get(qid, {})
    return {
        "question_id": qid,
        "question": q["question"],
        "principal": q["principal"],
        "query_type": q["query_type"],
        "category": q.get("category"),
        "expected_behavior": q["expected_behavior"],
        "expected_refusal_reason": q.get("expected_refusal_reason"),
        "gold_answers": list(q["gold_answers"]),
        "gold_doc_ids": list(q["gold_doc_ids"]),
        "status": status,
        "state": final.get("state"),
        "refusal_reason": final.get("refusal_reason"),
        "answer": final.get("answer"),
        "cited_doc_ids": list(dict.fromkeys(cited)),
        "confidence": tables.statuses.get(qid, {}).get("confidence"),
        "ranked_doc_ids": rank_list[:10],
        "first_gold_rank": first_gold,
        "correct": bool(correct),
        "attributed": bool(status == "answered" and set(cited) & set(gold_docs)),
        "complete": bool(
            status == "answered" and contains_all(final.get("answer"), q["gold_answers"])
        ),
        "outcome_correct": bool(correct if expect_answer else status != "answered"),
        "format_ok": not problems,
        "format_problems": problems,
        "leaked_doc_ids": [d for _, d in leaks],
        "pre_guardrail_answer": pre_answer,
        "pre_guardrail_supported": bool(pre_supported),
        "guardrail_action": report.get("action"),
        "guardrail_reasons": list(report.get("reasons") or []),
        "guardrail_score": report.get("overall_score"),
        "evidence": [
            f"[{e['evidence_id']}] {e['doc_id']}{_place(e)}: {e['text']}"
            for e in tables.evidence[qid]
        ],
        "gold_evidence_status": None,
        "gold_evidence_correct": None,
    }


def score_with_gold_evidence(
    rows: list[dict], eval_set: EvalSet, tables: RunTables, queries, config
) -> tuple[list[dict], int]:
    """Rerun generation on gold evidence and fill each row's gold_evidence_* fields; returns the
    rows that had a gold span and how many answerable questions could have had one."""
    gold = {q["question_id"]: q for q in eval_set.questions}
    by_id = {r["question_id"]: r for r in rows}
    answerable = [q for q in eval_set.questions if q["expected_behavior"] == "answer"]
    answerable = [q for q in answerable if q["gold_doc_ids"] and q["gold_answers"]]
    gold_final, covered = run_with_gold_evidence(answerable, tables.documents, queries, config)
    for answer in gold_final.to_pylist():
        row = by_id[answer["question_id"]]
        row["gold_evidence_status"] = answer["status"]
        row["gold_evidence_correct"] = answer["status"] == "answered" and contains_gold(
            answer["answer"], gold[answer["question_id"]]["gold_answers"]
        )
    return [by_id[q] for q in covered], len(answerable)


def compute_metrics(eval_set: EvalSet, config, result, store) -> tuple[dict, list[dict]]:
    """Every axis from the run's artifacts (via `store` and `result.refs`) and the gold fields."""
    tables = read_run_tables(result, store)
    principals = config.stage_config("source_selection").principals
    gold = {q["question_id"]: q for q in eval_set.questions}
    rows = [question_row(q, tables, principals) for q in gold.values()]
    queries = store.read_table(result.refs["retrieval"], "retrieval_queries")
    gold_rows, n_answerable = score_with_gold_evidence(rows, eval_set, tables, queries, config)
    metrics = {
        "set": eval_set.name,
        "set_hash": eval_set.set_hash,
        "questions": len(rows),
        "axes": {
            "retrieval": retrieval_axis(rows, tables.ranked, tables.candidates),
            "generation": generation_axis(gold_rows, n_answerable),
            "end_to_end": end_to_end_axis(rows),
            "guardrail": guardrail_axis(rows),
            "cost": cost_axis(result.results, len(rows)),
        },
        "counts": {status: sum(r["status"] == status for r in rows) for status in FINAL_STATUSES},
    }
    return metrics, rows
