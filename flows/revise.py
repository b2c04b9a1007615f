"""The revise loop: answers the guardrails sent back go through generation → attribution →
guardrails again, with feedback naming their unsupported claims, for at most N rounds.

Each round is ordinary stage executions with one extra input, `revision_requests`, so every
round's artifacts are kept and cached like any other. The loop ends with a `revise` artifact:
the final answers and reports with each revised question's last round merged in, and a
`revision_log` saying which round decided what. A question still marked revise when the rounds
run out is blocked ("revisions exhausted").
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pyarrow as pa

from flows.registry import REVISION_INPUT, WIRING
from flows.results import StageResult
from stages import contracts
from stages.store import ArtifactRef, ArtifactStore, artifact_key

NAME = "revise"
VERSION = "1.0.0"
REQUESTS_VERSION = "1"
EXHAUSTED = "revisions exhausted: part of the answer is still not supported by the sources"
BLOCKED_TEXT = (
    "I can't give a verified answer to this question: part of it is not supported by the "
    "sources. Please consult the source documents directly or ask a colleague with access."
)


def max_rounds(config: Any) -> int:
    return int(getattr(config.stage_config("guardrails"), "max_revise_rounds", 1))


def revision_requests(reports: list[dict], round_number: int) -> list[dict]:
    """One request per report whose action is revise: the claims it rejected and why."""
    requests = []
    for report in reports:
        if report["action"] != "revise":
            continue
        ok = ("supported", "not_a_claim")  # framing asks for no revision
        unsupported = [c["text"] for c in report["claims"] if c["status"] not in ok]
        feedback = report.get("feedback") or report["reasons"]
        requests.append(
            {
                "question_id": report["question_id"],
                "round": round_number,
                "unsupported_claims": unsupported,
                "feedback": list(feedback),
            }
        )
    return requests


def _digest(rows: list[dict]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()


def requests_table(rows: list[dict]) -> pa.Table:
    """The requests as their contract's table: a field missing, extra or mistyped is a
    `ContractError` naming it."""
    return contracts.table_of(REVISION_INPUT, rows, stage=NAME)


def _store_requests(store: ArtifactStore, rows: list[dict], after: str) -> ArtifactRef:
    """The requests as a source artifact, keyed by their content and the round they follow."""
    key = artifact_key(
        REVISION_INPUT, REQUESTS_VERSION, {}, {"content": _digest(rows), "after": after}
    )
    table = requests_table(rows)
    return store.lookup(REVISION_INPUT, key) or store.write(
        REVISION_INPUT,
        key,
        version=REQUESTS_VERSION,
        config={},
        input_keys={"after": after},
        outputs={REVISION_INPUT: table},
    )


def _round(store, config, refs: dict[str, ArtifactRef], runner) -> dict[str, Any]:
    """generation → attribution → guardrails with the requests wired into generation."""
    results = {}
    wirings = {
        "generation": {**WIRING["generation"], REVISION_INPUT: REVISION_INPUT},
        "attribution": WIRING["attribution"],
        "guardrails": WIRING["guardrails"],
    }
    for name, wiring in wirings.items():
        stage_refs = {producer: refs[producer] for producer in set(wiring.values())}
        results[name] = runner(store, name, config.stage_config(name), stage_refs, wiring=wiring)
        refs = {**refs, name: results[name].ref}
    return results


def _exhausted(final: dict, report: dict) -> tuple[dict, dict]:
    final = {
        **final,
        "status": "blocked",
        "action": "block",
        "answer": None,
        "rendered_answer": BLOCKED_TEXT,
        "citations": [],
    }
    report = {**report, "action": "block", "reasons": [*report["reasons"], EXHAUSTED]}
    return final, report


def run_revise_rounds(
    store: ArtifactStore, config: Any, refs: dict[str, ArtifactRef], runner
) -> tuple[dict[str, Any], ArtifactRef]:
    """Run the rounds; return each round's stage results (named `<stage>@r<n>`) and the ref of
    the merged `revise` artifact (tables final_answers, hallucination_reports, revision_log)."""
    started = time.perf_counter()
    first_refs = dict(refs)
    finals = {
        r["question_id"]: r
        for r in store.read_table(refs["guardrails"], "final_answers").to_pylist()
    }
    reports = {
        r["question_id"]: r
        for r in store.read_table(refs["guardrails"], "hallucination_reports").to_pylist()
    }
    log = [
        {"question_id": q, "round": 0, "action": r["action"], "overall_score": r["overall_score"]}
        for q, r in reports.items()
    ]
    limit, round_results, round_keys = max_rounds(config), {}, []
    pending = list(reports.values())
    for number in range(1, limit + 1):
        requests = revision_requests(pending, number)
        if not requests:
            break
        after = refs["guardrails"].key
        refs = {**refs, REVISION_INPUT: _store_requests(store, requests, after)}
        rows = {REVISION_INPUT: len(requests)}
        round_results[f"{REVISION_INPUT}@r{number}"] = StageResult(
            REVISION_INPUT, refs[REVISION_INPUT], 0.0, rows
        )
        results = _round(store, config, refs, runner)
        refs = {**refs, **{name: result.ref for name, result in results.items()}}
        round_results.update({f"{name}@r{number}": r for name, r in results.items()})
        round_keys.append(refs["guardrails"].key)
        pending = _merge_round(store, refs["guardrails"], finals, reports, log, number)
    for report in pending:
        if report["action"] == "revise":
            qid = report["question_id"]
            finals[qid], reports[qid] = _exhausted(finals[qid], reports[qid])
    ref = _write_merged(store, config, first_refs, finals, reports, log, round_keys, started)
    return round_results, ref


def _merge_round(store, guard_ref, finals, reports, log, number: int) -> list[dict]:
    """Replace revised questions' answers and reports; return this round's reports."""
    new_reports = store.read_table(guard_ref, "hallucination_reports").to_pylist()
    for final in store.read_table(guard_ref, "final_answers").to_pylist():
        finals[final["question_id"]] = final
    for report in new_reports:
        reports[report["question_id"]] = report
        log.append(
            {
                "question_id": report["question_id"],
                "round": number,
                "action": report["action"],
                "overall_score": report["overall_score"],
            }
        )
    return new_reports


def _write_merged(store, config, refs, finals, reports, log, round_keys, started) -> ArtifactRef:
    """Keyed like a stage: VERSION, settings, and the keys of the artifacts it merges."""
    settings = {"max_rounds": max_rounds(config)}
    inputs = {"guardrails": refs["guardrails"].key}
    inputs.update({f"round{i + 1}": key for i, key in enumerate(round_keys)})
    key = artifact_key(NAME, VERSION, settings, inputs)
    cached = store.lookup(NAME, key)
    if cached:
        return cached
    order = list(finals)
    tables = {
        "final_answers": contracts.table_of(
            "final_answers", [finals[q] for q in order], stage=NAME
        ),
        "hallucination_reports": contracts.table_of(
            "hallucination_reports", [reports[q] for q in order], stage=NAME
        ),
        "revision_log": contracts.table_of("revision_log", log, stage=NAME),
    }
    return store.write(
        NAME,
        key,
        version=VERSION,
        config=settings,
        input_keys=inputs,
        outputs=tables,
        started_at=started,
    )


def revision_table(store: ArtifactStore, ref: ArtifactRef) -> pa.Table:
    return store.read_table(ref, "revision_log")
