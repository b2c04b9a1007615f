"""Scale-out and incremental recompute: the flow on a 2-worker Dask cluster gives the default
runner's answers with batches computed on the workers; a config change recomputes that stage and
what is downstream of it, never upstream; backfill partitions run in a bounded pool."""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from flows.backfill import run_backfill
from flows.executor import is_per_question
from flows.executor import run_stages as run_plain
from flows.pipeline import run_pipeline_flow
from flows.registry import STAGES
from stages import indexing, ingestion
from tests.conftest import SAMPLE_QUESTIONS, artifact_digests, load_test_config
from tests.conftest import config_on_copy as _config

TIMING_COLUMNS = {"latency_ms"}


def _records(n: int) -> list[dict]:
    lines = SAMPLE_QUESTIONS.read_text().splitlines()[:n]
    return [json.loads(line) for line in lines]


def _answers(result) -> list[dict]:
    return [
        {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
        for row in result.final_answers.to_pylist()
    ]


def _cited_answers(result) -> list[dict]:
    """The answers without the times of their runs: latency, and when each store assembled
    the cited chunk (`indexed_at`)."""
    answers = _answers(result)
    for answer in answers:
        answer["citations"] = [
            {k: v for k, v in citation.items() if k != "indexed_at"}
            for citation in answer["citations"]
        ]
    return answers


SHARED = ("ingestion", "indexing")


def test_dask_cluster_of_two_workers_gives_the_default_runners_answers(shared_store, tmp_path):
    """Batches of questions, and partitions of the shared stages (ingestion's documents,
    indexing's vectors), on 2 Dask workers give the same documents, chunks, indexes and answers
    as the thread runner (whose shared stages the plain runner built in one process)."""
    pytest.importorskip("prefect_dask")
    records = _records(8)
    threads = _config(shared_store, tmp_path, "threads", batch_size=3)
    default = run_pipeline_flow(threads, records)

    runner = {"kind": "dask", "n_workers": 2, "partition_size": 12}
    dask = _config(shared_store, tmp_path, "dask", batch_size=3, task_runner=runner)
    assert dask.task_runner.kind == "dask"
    store = dask.artifact_store()
    for name in (*SHARED, ingestion.PARTS_NAMESPACE, indexing.EMBEDDINGS_NAMESPACE):
        shutil.rmtree(store.root / name)  # built again, in partitions on the workers
    distributed = run_pipeline_flow(dask, records)
    assert _cited_answers(distributed) == _cited_answers(default)
    assert distributed.final_answers.num_rows == 8

    one_process = {s: default.results[s].ref for s in SHARED}
    spread = {s: distributed.results[s].ref for s in SHARED}
    assert {s: r.key for s, r in spread.items()} == {s: r.key for s, r in one_process.items()}
    assert artifact_digests(store, spread) == artifact_digests(
        threads.artifact_store(), one_process
    )
    # the documents were parsed in 2 partitions and the vectors embedded, all on the workers
    packs = [store.manifest(r) for r in store.list_refs(ingestion.PARTS_NAMESPACE)]
    assert len(packs) == 2
    packs += [store.manifest(r) for r in store.list_refs(indexing.EMBEDDINGS_NAMESPACE)]
    pids = {pack["pid"] for pack in packs}
    computed = store.manifest(spread["ingestion"])["parts_computed"][ingestion.PARTS_NAMESPACE]
    assert computed == sum(len(pack["parts"]) for pack in packs[:2])

    # every per-question stage ran as 3 batches (8 questions, 3 per batch), in worker processes
    for name in STAGES:
        if not is_per_question(name):
            continue
        batches = store.list_refs(f"{name}.batches")
        assert len(batches) == 3, name
        pids |= {store.manifest(ref)["pid"] for ref in batches}
        assert distributed.results[name].questions_computed == 8
    assert os.getpid() not in pids
    assert len(pids) == 2, f"batches ran in {len(pids)} worker process(es), expected 2"


def test_config_change_recomputes_that_stage_and_downstream_only(shared_store, tmp_path):
    from flows.executor import load_questions

    questions = load_questions(SAMPLE_QUESTIONS, "employee", "general").slice(0, 10)
    config = _config(shared_store, tmp_path, "incremental")
    before = {name: r.ref.key for name, r in run_plain(config, questions).results.items()}

    def changed(**override) -> tuple[list[str], Any]:
        result = run_plain(load_test_config(tmp_path / "incremental", **override), questions)
        return [name for name, r in result.results.items() if r.ref.key != before[name]], result

    stages, result = changed(**{"guardrails.emit_threshold": 0.5})
    assert stages == ["guardrails", "revise"]  # revise merges the guardrails' verdicts
    assert [n for n, r in result.results.items() if not r.ref.cache_hit] == stages
    assert result.results["guardrails"].questions_computed == 10

    stages, result = changed(**{"rerank.top_n": 5})
    assert stages == ["rerank", "evidence", "generation", "attribution", "guardrails", "revise"]
    assert result.results["rerank"].questions_computed == 10
    # downstream questions whose inputs did not change are assembled from their batches
    for name in stages[1:-1]:
        assert result.results[name].questions_computed <= 10


def test_backfill_runs_partitions_in_a_bounded_pool(shared_store, tmp_path):
    records = _records(12)
    folder = tmp_path / "sets"
    folder.mkdir()
    for number in range(3):
        part = records[number::3]
        (folder / f"set-{number}.jsonl").write_text("\n".join(json.dumps(r) for r in part))
    (folder / "broken.jsonl").write_text('{"question_id": "x"}')
    config = _config(shared_store, tmp_path, "backfill")
    out = config.runs_dir / "backfill"
    out.mkdir(parents=True)
    seen = []
    chosen = sorted(folder.iterdir())
    outcomes = run_backfill(config, chosen, out, workers=2, progress=seen.append)
    by_name = {o["partition"]: o for o in outcomes}
    assert [o["partition"] for o in outcomes] == [p.stem for p in chosen]
    assert by_name["broken"]["status"] == "failed"
    assert [by_name[f"set-{n}"]["status"] for n in range(3)] == ["done"] * 3
    assert sum(by_name[f"set-{n}"]["questions"] for n in range(3)) == 12
    assert sorted(o["partition"] for o in seen) == sorted(p.stem for p in chosen)
    again = run_backfill(config, chosen, out, workers=2)
    assert [o["status"] for o in again if o["partition"] != "broken"] == ["skipped"] * 3


def test_runner_and_store_settings_from_config(tmp_path):
    from flows.pipeline import build_task_runner

    config = load_test_config(
        tmp_path, **{"task_runner.kind": "dask", "task_runner.n_workers": 3, "batch_size": 8}
    )
    assert (config.task_runner.kind, config.task_runner.n_workers) == ("dask", 3)
    assert config.task_runner.threads_per_worker == 1  # the rest of the section is kept
    assert config.batch_size == 8
    assert type(build_task_runner(config.task_runner)).__name__ == "DaskTaskRunner"
    assert type(build_task_runner(load_test_config(tmp_path).task_runner)).__name__ == (
        "ThreadPoolTaskRunner"
    )
    remote = load_test_config(tmp_path, store="s3://bucket/prefix")
    assert remote.store == "s3://bucket/prefix"  # a URL is not made relative to the project


# ---------------------------------------------------------------- parsing in local processes


def _notes_corpus(folder, count: int):
    folder.mkdir()
    for n in range(count):
        (folder / f"note-{n:02d}.md").write_text(
            f"# Depot note {n}\n\nOrder {n} ships in {n + 2} days from the depot in Leeds.\n"
        )
    return folder


def test_documents_parsed_in_local_processes_give_the_in_process_artifact(tmp_path, monkeypatch):
    """Parsing holds the GIL, so without Dask the runner parses many documents in spawned
    processes first; the stage then assembles the very artifact one process builds."""
    from flows import executor
    from stages.store import ArtifactStore
    from tests.conftest import artifact_digests

    monkeypatch.setattr(executor, "MIN_PARTS_PER_PROCESS", 2)  # 12 documents are enough here
    snapshot = ingestion.snapshot_corpus(str(_notes_corpus(tmp_path / "corpus", 12)))
    built = {}
    for label, processes in (("one", 1), ("two", 2)):
        store = ArtifactStore(tmp_path / label)
        source = executor.store_source(store, "corpus", snapshot, "corpus_files")
        result = executor.execute_stage(
            store, "ingestion", ingestion.Config(), {"corpus": source.ref}, processes=processes
        )
        built[label] = (store, result.ref)
        computed = store.manifest(result.ref)["parts_computed"][ingestion.PARTS_NAMESPACE]
        assert computed == 12, label
    (one, one_ref), (two, two_ref) = built["one"], built["two"]
    assert two_ref.key == one_ref.key
    assert artifact_digests(two, {"ingestion": two_ref}) == artifact_digests(
        one, {"ingestion": one_ref}
    )
    pids = {two.manifest(r)["pid"] for r in two.list_refs(ingestion.PARTS_NAMESPACE)}
    assert pids and os.getpid() not in pids  # parsed in the spawned processes
    assert {one.manifest(r)["pid"] for r in one.list_refs(ingestion.PARTS_NAMESPACE)} == {
        os.getpid()
    }


def test_few_documents_are_parsed_in_process(tmp_path):
    """Starting a process costs seconds: below MIN_PARTS_PER_PROCESS documents per process,
    nothing is spawned."""
    from flows import executor
    from stages.store import ArtifactStore

    store = ArtifactStore(tmp_path / "store")
    snapshot = ingestion.snapshot_corpus(str(_notes_corpus(tmp_path / "corpus", 3)))
    source = executor.store_source(store, "corpus", snapshot, "corpus_files")
    refs = {"corpus": source.ref}
    assert executor.fill_in_processes(store, "ingestion", ingestion.Config(), refs, None, 8) == {}
    result = executor.execute_stage(store, "ingestion", ingestion.Config(), refs, processes=8)
    pids = {store.manifest(r)["pid"] for r in store.list_refs(ingestion.PARTS_NAMESPACE)}
    assert pids == {os.getpid()} and result.rows["documents"] == 3


def test_corpus_reindex_flow_spreads_documents_and_vectors_over_dask(tmp_path):
    """The scheduled `corpus-reindex` deployment on `task_runner.kind: dask` parses documents
    and embeds chunks in partitions on the workers, as `grounding run` does."""
    pytest.importorskip("prefect_dask")
    from flows.scheduled import corpus_reindex_flow
    from tests.conftest import ROOT

    corpus = _notes_corpus(tmp_path / "corpus", 4)
    overrides = {
        "store": str(tmp_path / "artifacts"),
        "runs_dir": str(tmp_path / "runs"),
        "task_runner.kind": "dask",
        "task_runner.n_workers": 2,
        "task_runner.partition_size": 2,
    }
    config_path = str(ROOT / "configs" / "pipeline.yaml")
    outcome = corpus_reindex_flow(str(corpus), config_path, overrides)
    assert outcome["changed"]
    assert [r["stage"] for r in outcome["stages"]] == ["corpus", "ingestion", "indexing"]
    config = load_test_config(tmp_path)
    store = config.artifact_store()
    packs = [store.manifest(r) for r in store.list_refs(ingestion.PARTS_NAMESPACE)]
    assert len(packs) == 2  # 4 documents in partitions of 2
    packs += [store.manifest(r) for r in store.list_refs(indexing.EMBEDDINGS_NAMESPACE)]
    assert os.getpid() not in {pack["pid"] for pack in packs}
    again = corpus_reindex_flow(str(corpus), config_path, overrides)
    assert not again["changed"]
