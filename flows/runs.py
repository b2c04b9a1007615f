"""What a run leaves for its users: `runs/<run_id>/` with answers, reports, trace and summary.

The folder is written under a temporary name and renamed at the end, like artifacts: a run
directory either holds every file or does not exist.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from flows.results import PipelineResult
from stages.store import ArtifactStore

TRACE_CANDIDATES = 10


def new_run_id(result: PipelineResult) -> str:
    """The run id the log lines already carry, so logs and runs/<run_id>/ match; else a new one."""
    from stages.common.logs import current_run_id

    if current := current_run_id():
        return current
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    return f"{stamp}-{result.final_ref.key[:8]}"


def summarize(result: PipelineResult, store: ArtifactStore, wall_seconds: float) -> dict[str, Any]:
    answers = result.final_answers.to_pylist()
    status_counts = defaultdict(int)
    for answer in answers:
        status_counts[answer["status"]] += 1
    severities = store.read_table(result.results["ingestion"].ref, "ingestion_errors")
    severities = severities.column("severity").to_pylist()
    problems = {
        "ingestion_errors": sum(1 for s in severities if s == "error"),
        "ingestion_warnings": sum(1 for s in severities if s != "error"),
    }
    return {
        "questions": len(answers),
        "answered": status_counts["answered"],
        "refused": status_counts["refused"],
        "blocked": status_counts["blocked"],
        "errors": sum(1 for a in answers if a["state"] == "technical_error"),
        **problems,
        "wall_seconds": round(wall_seconds, 2),
        "stages": {
            name: {
                "seconds": round(r.seconds, 3),
                "cache_hit": r.ref.cache_hit,
                "key": r.ref.key,
                "rows": _shown_rows(name, r.rows, problems),
            }
            for name, r in result.results.items()
        },
    }


def _shown_rows(stage: str, rows: dict[str, int], problems: dict[str, int]) -> dict[str, int]:
    """A stage's row counts as a person reads them: the `ingestion_errors` table holds warnings
    too (an OCR note, defaulted metadata), so it is shown as errors and warnings apart."""
    if stage != "ingestion" or "ingestion_errors" not in rows:
        return rows
    return {**{k: v for k, v in rows.items() if k != "ingestion_errors"}, **problems}


def _no_source_inputs(result: PipelineResult, store: ArtifactStore):
    """What explaining an empty selection needs: the eligibility rows of only the questions
    that had no eligible document (filtered in Arrow: the table holds questions x documents),
    the ids of every question it decided on, the documents and the doc ids whose metadata were
    defaults (no catalog)."""
    eligibility = store.read_table(result.refs["source_selection"], "eligibility").select(
        ["question_id", "doc_id", "eligible", "rule"]
    )
    decided = eligibility.group_by("question_id").aggregate([("eligible", "max")])
    empty = decided.filter(pc.invert(decided["eligible_max"]))["question_id"]
    rows = eligibility.filter(pc.is_in(eligibility["question_id"], value_set=empty)).to_pylist()
    ingestion_ref = result.refs["ingestion"]
    documents = store.read_table(ingestion_ref, "documents").select(
        ["doc_id", "path", "trust_tier"]
    )
    errors = store.read_table(ingestion_ref, "ingestion_errors").to_pylist()
    defaulted_paths = {e["path"] for e in errors if e["error_kind"] == "missing_metadata"}
    documents = documents.to_pylist()
    defaulted = {d["doc_id"] for d in documents if d["path"] in defaulted_paths}
    return rows, decided["question_id"].to_pylist(), documents, defaulted


def selection_warnings(
    result: PipelineResult, store: ArtifactStore, question_ids: list[str] | None = None
) -> list[str]:
    """Say so when questions had no eligible source at all, and why (e.g. defaulted tiers)."""
    from stages.source_selection import no_eligible_sources

    rows, decided, documents, defaulted = _no_source_inputs(result, store)
    with_sources = set(decided) - {r["question_id"] for r in rows}  # rows: empty questions only
    message = no_eligible_sources(rows, documents, defaulted, question_ids or decided, with_sources)
    return [message] if message else []


def question_warnings(result: PipelineResult, store: ArtifactStore) -> list[str | None]:
    """Per final answer, in its order: why its question had no eligible source, else None.

    A refusal for "no evidence" then tells a user that, for example, every document defaulted to
    a trust tier no query type accepts, instead of looking like a broken retriever.
    """
    from stages.source_selection import no_eligible_sources

    rows, decided, documents, defaulted = _no_source_inputs(result, store)
    by_question: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_question[row["question_id"]].append(row)
    has_eligible = set(decided) - set(by_question)
    return [
        None
        if qid in has_eligible
        else no_eligible_sources(by_question.get(qid, []), documents, defaulted, [qid])
        for qid in result.final_answers.column("question_id").to_pylist()
    ]


def question_languages(result: PipelineResult, store: ArtifactStore) -> pa.Array:
    """Per final answer, the language detected in its question (flows.question_files)."""
    questions = store.read_table(result.refs["questions"], "questions")
    language = dict(
        zip(questions["question_id"].to_pylist(), questions["language"].to_pylist(), strict=True)
    )
    ids = result.final_answers.column("question_id").to_pylist()
    return pa.array([language.get(qid) for qid in ids], pa.string())


def _grouped(table: pa.Table, limit_per_pool: int | None = None) -> dict[str, list[dict]]:
    if limit_per_pool and "rank" in table.column_names:  # filter in Arrow, before Python rows
        table = table.filter(pc.less_equal(table["rank"], limit_per_pool))
    question_ids = table.column("question_id").to_pylist()
    rows = table.drop_columns(["question_id"]).to_pylist()
    groups: dict[str, list[dict]] = defaultdict(list)
    for question_id, row in zip(question_ids, rows, strict=True):
        groups[question_id].append(row)
    return groups


def build_trace(result: PipelineResult, store: ArtifactStore) -> list[dict]:
    refs = result.refs

    def load(stage: str, name: str, limit: int | None = None) -> dict[str, list[dict]]:
        return _grouped(store.read_table(refs[stage], name), limit)

    parts = {
        "source_selection": load("source_selection", "eligibility"),
        "queries": load("retrieval", "retrieval_queries"),
        "retrieval_status": load("retrieval", "retrieval_status"),
        "candidates": load("retrieval", "candidates", TRACE_CANDIDATES),
        "ranked": load("rerank", "ranked"),
        "rerank": load("rerank", "rerank_status"),
        "rerank_attempts": load("rerank", "rerank_attempts"),
        "evidence": load("evidence", "evidence"),
        "generation": load("generation", "generations"),
        "attribution": load("attribution", "attributions"),
        "guardrails": load("guardrails", "hallucination_reports"),
    }
    if "revise" in refs:  # every round's decision, and the report that decided the answer
        parts["revisions"] = load("revise", "revision_log")
        parts["final_report"] = load("revise", "hallucination_reports")
    stage_seconds = {name: round(r.seconds, 4) for name, r in result.results.items()}
    traces = []
    for final in result.final_answers.to_pylist():
        qid = final["question_id"]
        trace = {"question_id": qid, "question": final["question"]}
        for part, groups in parts.items():
            rows = groups.get(qid, [])
            trace[part] = rows[0] if part in _SINGLE_ROW and rows else rows
        trace["final"] = final
        trace["stage_seconds"] = stage_seconds
        traces.append(trace)
    return traces


_SINGLE_ROW = {
    "retrieval_status",
    "rerank",
    "generation",
    "attribution",
    "guardrails",
    "final_report",
}


def reports_json(reports: pa.Table, run_id: str) -> list[dict]:
    """The HallucinationReports as plain JSON objects, each carrying the run id."""
    from stages.guardrails import report_to_json

    # the report rows carry a run_id column of their own, empty in the stage's artifact
    reports_out = [report_to_json(row) for row in reports.to_pylist()]
    return [
        {"run_id": run_id, **{k: v for k, v in r.items() if k != "run_id"}} for r in reports_out
    ]


def write_run(
    runs_dir: Path,
    run_id: str,
    result: PipelineResult,
    store: ArtifactStore,
    summary: dict,
    ledger: bool = True,
    input_errors: pa.Table | None = None,
) -> Path:
    """Every file of a run, or none; `input_errors` (the question file's bad records, see
    flows.question_files) is written whenever given, empty when the file had none. With `ledger`,
    the run's metrics are also added to the run ledger (quality/ledger.py) that drift alarms
    read; a shadow run passes False: it stays apart."""
    final_dir = runs_dir / run_id
    tmp = runs_dir / f".tmp-{run_id}"
    shutil.rmtree(tmp, ignore_errors=True)  # left by a killed write of this same run: redo it
    tmp.mkdir(parents=True)
    try:
        run_column = pa.array([run_id] * result.final_answers.num_rows, pa.string())
        warnings = pa.array(question_warnings(result, store), pa.string())
        answers = result.final_answers.add_column(0, "run_id", run_column)
        answers = answers.append_column("language", question_languages(result, store))
        pq.write_table(answers.append_column("warning", warnings), tmp / "answers.parquet")
        report_column = pa.array([run_id] * result.reports.num_rows, pa.string())
        pq.write_table(
            result.reports.add_column(0, "run_id", report_column), tmp / "reports.parquet"
        )
        (tmp / "reports.json").write_text(
            json.dumps(reports_json(result.reports, run_id), indent=1)
        )
        traces = build_trace(result, store)
        encoded = [json.dumps(trace, default=str) for trace in traces]  # once, for both files
        with open(tmp / "trace.jsonl", "w") as handle:
            handle.writelines(line + "\n" for line in encoded)
        pq.write_table(
            pa.table(
                {
                    "run_id": [run_id] * len(traces),
                    "question_id": [t["question_id"] for t in traces],
                    "trace_json": encoded,
                }
            ),
            tmp / "trace.parquet",
        )
        if input_errors is not None:
            pq.write_table(input_errors, tmp / "input_errors.parquet")
        (tmp / "summary.json").write_text(json.dumps({"run_id": run_id, **summary}, indent=2))
        os.rename(tmp, final_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if ledger:
        from quality.ledger import append_run

        append_run(store, run_id, result, summary)
    return final_dir
