"""Per-question caching: a question set overlapping an earlier one computes only its new
questions, and the assembled artifacts hold the rows a from-scratch run produces, in its order."""

from __future__ import annotations

import pytest

from flows.executor import (
    _load_inputs,
    is_per_question,
    load_questions,
    question_fingerprints,
    run_stages,
)
from flows.registry import STAGES, WIRING
from tests.conftest import SAMPLE_QUESTIONS
from tests.conftest import config_on_copy as _config

PER_QUESTION = [name for name in STAGES if is_per_question(name)]
# Timings differ between any two runs; they are not results.
TIMING_COLUMNS = {"latency_ms", "duration_ms", "seconds"}


def _rows(store, result, stage: str, table: str) -> list[dict]:
    rows = store.read_table(result.results[stage].ref, table).to_pylist()
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows]


def test_per_question_stages_are_the_ones_after_indexing():
    assert PER_QUESTION == [
        "source_selection",
        "retrieval",
        "rerank",
        "evidence",
        "generation",
        "attribution",
        "guardrails",
    ]
    assert not is_per_question("ingestion") and not is_per_question("indexing")


def test_overlapping_set_computes_only_new_questions_and_matches_a_fresh_run(
    shared_store, tmp_path, sample_questions
):
    # Batches of one question, in both runs: embedding a batch pads its queries to the longest,
    # which moves float32 dense scores by ~1e-7 with the batch's make-up (and, through them,
    # confidences and prompt hashes). Same batches, so the rows must be equal exactly.
    first, second = sample_questions.slice(0, 14), sample_questions.slice(8, 14)
    new = second.num_rows - 6  # questions 8..13 are in both sets
    config = _config(shared_store, tmp_path, "incremental", batch_size=1)
    run_stages(config, first)
    incremental = run_stages(config, second)
    for name in PER_QUESTION:
        assert incremental.results[name].questions_computed == new, name
        assert not incremental.results[name].ref.cache_hit, name

    scratch_config = _config(shared_store, tmp_path, "scratch", batch_size=1)
    scratch = run_stages(scratch_config, second)
    store, scratch_store = config.artifact_store(), scratch_config.artifact_store()
    for name in PER_QUESTION:
        assert scratch.results[name].questions_computed == second.num_rows, name
        # the assembled artifact has the key a whole-stage run has
        assert incremental.results[name].ref.key == scratch.results[name].ref.key, name
        for table in STAGES[name].OUTPUTS:
            got = _rows(store, incremental, name, table)
            want = _rows(scratch_store, scratch, name, table)
            assert len(got) == len(want), (name, table)
            mismatched = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
            if mismatched:
                a, b = got[mismatched[0]], want[mismatched[0]]
                diff = {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
                pytest.fail(f"{name}.{table}: {len(mismatched)} rows differ, e.g. {diff}")
    assert [r["question_id"] for r in incremental.final_answers.to_pylist()] == (
        second.column("question_id").to_pylist()
    )

    # a subset of questions already answered is assembled from batches, computing nothing
    subset = run_stages(config, sample_questions.slice(10, 5))
    for name in PER_QUESTION:
        assert subset.results[name].questions_computed == 0, name
    assert subset.final_answers.num_rows == 5


def test_fingerprint_moves_only_with_its_question_or_the_stage(shared_store, tmp_path):
    config = _config(shared_store, tmp_path, "fingerprints")
    questions = load_questions(SAMPLE_QUESTIONS, "employee", "general").slice(0, 6)
    result = run_stages(config, questions)
    store, name = config.artifact_store(), "retrieval"
    refs = {p: result.results[p].ref for p in set(WIRING[name].values())}
    inputs = _load_inputs(store, name, refs)
    base = question_fingerprints(name, config.stage_config(name), refs, inputs, WIRING[name])
    assert len(set(base.values())) == 6

    edited = inputs["questions"].to_pylist()
    edited[2]["question"] += " (reworded)"
    changed = dict(
        inputs, questions=type(inputs["questions"]).from_pylist(edited, inputs["questions"].schema)
    )
    moved = question_fingerprints(name, config.stage_config(name), refs, changed, WIRING[name])
    assert [q for q in base if base[q] != moved[q]] == [edited[2]["question_id"]]

    other = config.stage_config(name).model_copy(update={"top_k": 7})
    reconfigured = question_fingerprints(name, other, refs, inputs, WIRING[name])
    assert all(base[q] != reconfigured[q] for q in base)
