"""Generation with perfect retrieval: evidence built from the gold spans, then generation →
attribution → guardrails on it, so the generation axis measures the generator and the guardrail
without retrieval's mistakes."""

from __future__ import annotations

import re
from collections import defaultdict

import pyarrow as pa

BUILDER = "gold-evidence"  # names the builder in a contract error


def gold_evidence(
    questions: list[dict], documents: dict[str, dict], subs: dict[str, list[str]]
) -> list[dict]:
    """Evidence rows from the gold spans: the document sentences that contain a gold answer."""
    from stages.common.text import content_tokens, coverage, sentence_spans

    rows = []
    for question in questions:
        qid = question["question_id"]
        chosen: dict[tuple[str, int], tuple[int, int, dict]] = {}
        for doc_id in question["gold_doc_ids"]:
            doc = documents.get(doc_id)
            if not doc:
                continue
            text = doc["text"]
            folded = text.casefold()
            spans = sentence_spans(text)
            hints = [
                s["char_start"] for s in question.get("gold_spans") or [] if s["doc_id"] == doc_id
            ]
            for answer in question["gold_answers"]:
                needle = answer.casefold()
                starts = (
                    [m.start() for m in re.finditer(re.escape(needle), folded)] if needle else []
                )
                if not starts:
                    continue
                start = min(starts, key=lambda s: min((abs(s - h) for h in hints), default=0))
                end = start + len(needle)
                covering = [(b, e) for b, e in spans if b < end and start < e]
                if covering:
                    begin, finish = covering[0][0], covering[-1][1]
                    chosen.setdefault((doc_id, begin), (begin, finish, doc))
        parts = subs.get(qid) or [question["question"]]
        for number, (_, (begin, finish, doc)) in enumerate(sorted(chosen.items()), start=1):
            sentence = doc["text"][begin:finish]
            tokens = set(content_tokens(sentence))
            part = max(
                range(len(parts)), key=lambda i: coverage(set(content_tokens(parts[i])), tokens)
            )
            rows.append(
                {
                    "question_id": qid,
                    "evidence_id": f"E{number}",
                    "sub_question": part,
                    "doc_id": doc["doc_id"],
                    "chunk_id": f"gold:{doc['doc_id']}:{begin}",
                    "char_start": begin,
                    "char_end": finish,
                    "text": sentence,
                    "score": 1.0,
                    "title": doc["title"],
                    "section_path": "",
                    "page_number": None,
                    "version": doc["version"],
                    "published_at": doc["published_at"],
                    "indexed_at": doc["indexed_at"],
                    "is_stale": False,
                    "confidence": 1.0,
                    "anchor": None,
                }
            )
    return rows


def gold_tables(
    asked: list[dict], covered: list[str], evidence_rows: list[dict]
) -> dict[str, pa.Table]:
    """The questions, a successful rerank status per covered question and the gold evidence, as
    the contract tables generation reads, built strictly (a field missing, extra or mistyped is
    a `ContractError` naming it)."""
    from stages import contracts

    keys = ("question_id", "question", "principal", "query_type")
    # language unknown (null): the axis measures generation, not the language refusal
    questions = [{**{k: q[k] for k in keys}, "language": None} for q in asked]
    status = [
        {
            "question_id": q,
            "state": "success",
            "confidence": 1.0,
            "is_error": False,
            "refusal_hint": None,
            "llm_verdict": None,
            "error": None,
            "answerability": None,
            "answerability_model": None,
            "unwritten_names": None,
            "negation_unstated": None,
        }
        for q in covered
    ]
    return {
        "questions": contracts.table_of("questions", questions, stage=BUILDER),
        "rerank_status": contracts.table_of("rerank_status", status, stage=BUILDER),
        "evidence": contracts.table_of("evidence", evidence_rows, stage=BUILDER),
    }


def run_with_gold_evidence(
    questions: list[dict], documents: dict[str, dict], queries: pa.Table, config
) -> tuple[pa.Table, list[str]]:
    """Generation → attribution → guardrails with perfect retrieval; returns (final answers, the
    question ids that had a gold span). The stages are pure, so they are called directly."""
    from stages import attribution, contracts, generation, guardrails

    subs: dict[str, list[str]] = defaultdict(list)
    for row in queries.to_pylist():
        if row["rewrite_kind"] == "decomposition":
            subs[row["question_id"]].append(row["query_text"])
    evidence_rows = gold_evidence(questions, documents, subs)
    covered = sorted({r["question_id"] for r in evidence_rows})
    asked = [q for q in questions if q["question_id"] in set(covered)]
    if not asked:
        return contracts.empty("final_answers"), []
    tables = gold_tables(asked, covered, evidence_rows)
    question_table, status, evidence = (
        tables["questions"],
        tables["rerank_status"],
        tables["evidence"],
    )
    ids = pa.array(covered)
    queries = queries.filter(pa.compute.is_in(queries.column("question_id"), value_set=ids))
    generations = generation.run(
        {
            "questions": question_table,
            "rerank_status": status,
            "evidence": evidence,
            "retrieval_queries": queries,
        },
        config.stage_config("generation"),
    )["generations"]
    attributions = attribution.run(
        {"generations": generations, "evidence": evidence}, config.stage_config("attribution")
    )["attributions"]
    final = guardrails.run(
        {
            "questions": question_table,
            "generations": generations,
            "rerank_status": status,
            "evidence": evidence,
            "attributions": attributions,
        },
        config.stage_config("guardrails"),
    )["final_answers"]
    return final, covered
