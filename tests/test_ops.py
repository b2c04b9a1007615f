"""Artifact listing, garbage collection and traces on a real run of the sample pipeline."""

from __future__ import annotations

import json

from cli.trace import render_trace
from flows import ops
from flows.runs import new_run_id, summarize, write_run
from stages.store import ArtifactStore


def test_gc_keeps_what_runs_reference_and_removes_the_rest(sample_run, sample_config, tmp_path):
    store = ArtifactStore(sample_config.store)
    runs = tmp_path / "runs"
    everything = ops.manifests(sample_config.store)
    assert {m["stage"] for m in everything} >= {"ingestion", "indexing", "guardrails"}
    # no run written yet: everything is garbage
    assert len(ops.garbage(sample_config.store, runs)) == len(everything)
    write_run(runs, new_run_id(sample_run), sample_run, store, summarize(sample_run, store, 1.0))
    unused = ops.garbage(sample_config.store, runs)
    kept = {m["key"] for m in everything} - {p.name for p in unused}
    assert {r.ref.key for r in sample_run.results.values()} <= kept
    # the question batches the run's artifacts were assembled from are kept with them
    run_keys = {r.ref.key for r in sample_run.results.values()}
    batches = {k for m in everything if m["key"] in run_keys for k in m.get("batch_keys", [])}
    assert batches and batches <= kept
    # an orphan from another config is collectable
    orphan = [m for m in everything if m["key"] not in run_keys | batches]
    assert {p.name for p in unused} == {m["key"] for m in orphan}


def test_trace_renders_every_part(sample_run, sample_config, tmp_path):
    store = ArtifactStore(sample_config.store)
    run_dir = write_run(tmp_path, "r1", sample_run, store, summarize(sample_run, store, 1.0))
    trace = json.loads((run_dir / "trace.jsonl").read_text().splitlines()[0])
    text = render_trace(trace)
    for part in (
        "source selection",
        "queries",
        "candidates",
        "rerank",
        "evidence",
        "generation",
        "guardrails",
        "final",
    ):
        assert part in text
    assert trace["question_id"] in text
