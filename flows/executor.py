"""Running the stages without Prefect: stage keys, per-question plans and fingerprints, batches,
inline execution and assembling a per-question stage's artifact from its batches.

Everything here is plain Python over content-addressed artifacts: a stage's key hashes its name,
VERSION, config and input artifact keys, so a rerun with nothing changed finds every key already
written. `flows/pipeline.py` wraps the same functions in Prefect tasks; this module never imports
Prefect, so tests, backfill partitions and scripts can run the stages without it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import multiprocessing
import os
import socket
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel

from flows.pipeline_config import PipelineConfig
from flows.question_files import (  # noqa: F401 - re-exported for callers of the executor
    QuestionError,
    load_questions,
    questions_table,
)
from flows.registry import STAGES, WIRING, shared_stages
from flows.results import PipelineResult, StageResult
from flows.revise import run_revise_rounds
from stages import contracts
from stages.common import parts_cache, progress
from stages.common.stat_cache import StatCache
from stages.ingestion import snapshot_corpus
from stages.models import embeddings
from stages.store import ArtifactRef, ArtifactStore, artifact_key, canonical_json

SOURCE_VERSION = "1"
log = logging.getLogger(__name__)
QUESTION_COLUMNS = ("question_id", "question", "principal", "query_type", "language")


StageCallback = Callable[[str, str, StageResult | None], None]
_callbacks: list[StageCallback] = []


def on_stage_event(callback: StageCallback) -> None:
    """Register a listener for ('start'|'done', stage, result); the CLI draws its bars from it."""
    _callbacks.append(callback)


def off_stage_event(callback: StageCallback) -> None:
    """Unregister a listener `on_stage_event` registered (no error if it is not there)."""
    if callback in _callbacks:
        _callbacks.remove(callback)


def _notify(event: str, stage: str, result: StageResult | None = None) -> None:
    for callback in _callbacks:
        callback(event, stage, result)


# ---------------------------------------------------------------- sources


def _table_digest(table: pa.Table, columns: list[str]) -> str:
    digest = hashlib.sha256()
    for row in table.select(columns).to_pylist():
        digest.update(json.dumps(row, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def store_source(store: ArtifactStore, name: str, table: pa.Table, contract: str) -> StageResult:
    """Write a source table (corpus snapshot or questions), keyed by its content."""
    started = time.perf_counter()
    # A corpus is read from its location at ingestion time, so where it lies is part of its key:
    # a moved folder is ingested again, from the per-document parts already parsed.
    columns = (
        ["path", "sha256", "location"] if contract == "corpus_files" else list(QUESTION_COLUMNS)
    )
    key = artifact_key(name, SOURCE_VERSION, {}, {"content": _table_digest(table, columns)})
    ref = store.lookup(name, key) or store.write(
        name, key, version=SOURCE_VERSION, config={}, input_keys={}, outputs={contract: table}
    )
    return StageResult(name, ref, time.perf_counter() - started, {contract: table.num_rows})


# ---------------------------------------------------------------- stages

DEFAULT_BATCH_SIZE = 64
DEFAULT_PARTITION_SIZE = 256  # documents or chunks per partition of a whole stage
BATCH_SUFFIX = ".batches"  # per-question stages keep their question batches under <stage>.batches


def _config_dict(config: BaseModel) -> dict[str, Any]:
    return config.model_dump(mode="json")


def _producers(wiring: dict[str, str]) -> list[str]:
    return sorted(set(wiring.values()))


def stage_key(
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
) -> str:
    """Hash of name, VERSION, config, input keys and the output contracts' fingerprints, so a
    contract change recomputes its producer even when nobody remembered to bump VERSION."""
    wiring = wiring or WIRING[name]
    contract = {table: contracts.fingerprint(table) for table in STAGES[name].OUTPUTS}
    return artifact_key(
        name,
        STAGES[name].VERSION,
        {"config": _config_dict(config), "contracts": contract},
        {p: refs[p].key for p in _producers(wiring)},
    )


def _load_inputs(
    store: ArtifactStore,
    name: str,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for input_name, producer in (wiring or WIRING[name]).items():
        ref = refs[producer]
        if input_name in contracts.SCHEMAS:
            inputs[input_name] = store.read_table(ref, input_name)
        else:
            inputs[input_name] = store.blob_path(ref, input_name)
    return inputs


def _has_question_id(table_name: str) -> bool:
    return (
        table_name in contracts.SCHEMAS and "question_id" in contracts.schema_of(table_name).names
    )


def question_inputs(wiring: dict[str, str]) -> list[str]:
    """Inputs holding rows per question; the others (chunks, indexes…) are global."""
    return [name for name in wiring if _has_question_id(name)]


def is_per_question(name: str, wiring: dict[str, str] | None = None) -> bool:
    """A stage whose every output has a question_id column computes each question on its own,
    so it can be cached per question and split into batches."""
    outputs = STAGES[name].OUTPUTS
    return bool(question_inputs(wiring or WIRING[name])) and all(map(_has_question_id, outputs))


# ---------------------------------------------------------------- per-question caching


@dataclass
class QuestionPlan:
    """Which questions a per-question stage must compute and where the others already are."""

    order: list[str]
    fingerprints: dict[str, str]
    cached: dict[str, ArtifactRef]
    missing: list[str]

    def batches(self, size: int) -> list[list[str]]:
        return [self.missing[i : i + size] for i in range(0, len(self.missing), max(size, 1))]


def _question_digests(table: pa.Table) -> dict[str, str]:
    """sha256 of each question's rows, in row order (the rows' order can carry meaning). Rows
    are hashed as the repr of their values in schema order: exact for floats, and about twice
    as fast as JSON on the large eligibility tables."""
    columns = table.to_pydict()
    hashers: dict[str, Any] = {}
    for qid, row in zip(columns["question_id"], zip(*columns.values(), strict=True), strict=True):
        hasher = hashers.get(qid)
        if hasher is None:
            hasher = hashers[qid] = hashlib.sha256()
        hasher.update(repr(row).encode())
    return {qid: hasher.hexdigest() for qid, hasher in hashers.items()}


def question_order(inputs: dict[str, Any], wiring: dict[str, str]) -> list[str]:
    """The stage's questions in order: the `questions` table's first, then any others."""
    names = sorted(question_inputs(wiring), key=lambda n: n != "questions")
    seen: dict[str, None] = {}
    for input_name in names:
        seen.update(dict.fromkeys(inputs[input_name].column("question_id").to_pylist()))
    return list(seen)


def question_fingerprints(
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    inputs: dict[str, Any],
    wiring: dict[str, str],
) -> dict[str, str]:
    """Per question: hash(stage, VERSION, config, output contracts, global input keys, the digest
    of this question's rows in each question-level input)."""
    per_question = question_inputs(wiring)
    base = canonical_json(
        {
            "stage": name,
            "version": STAGES[name].VERSION,
            "config": _config_dict(config),
            "contracts": {t: contracts.fingerprint(t) for t in STAGES[name].OUTPUTS},
            "globals": {i: refs[p].key for i, p in sorted(wiring.items()) if i not in per_question},
        }
    )
    digests = {i: _question_digests(inputs[i]) for i in sorted(per_question)}
    fingerprints = {}
    for qid in question_order(inputs, wiring):
        parts = [base, *(f"{i}={digests[i].get(qid, '-')}" for i in sorted(per_question))]
        fingerprints[qid] = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return fingerprints


def _batch_index(store: ArtifactStore, name: str) -> dict[str, ArtifactRef]:
    """Question fingerprint -> the batch artifact that holds its rows."""
    index: dict[str, ArtifactRef] = {}
    for ref in store.list_refs(name + BATCH_SUFFIX):
        for fingerprint in store.manifest(ref).get("questions", {}).values():
            index.setdefault(fingerprint, ref)
    return index


def plan_questions(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
) -> QuestionPlan:
    wiring = wiring or WIRING[name]
    inputs = _load_inputs(store, name, refs, wiring)
    fingerprints = question_fingerprints(name, config, refs, inputs, wiring)
    index = _batch_index(store, name)
    cached = {q: index[fp] for q, fp in fingerprints.items() if fp in index}
    missing = [q for q in fingerprints if q not in cached]
    return QuestionPlan(list(fingerprints), fingerprints, cached, missing)


def _only_questions(table: pa.Table, question_ids: list[str]) -> pa.Table:
    return table.filter(pc.is_in(table.column("question_id"), value_set=pa.array(question_ids)))


def run_batch(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None,
    fingerprints: dict[str, str],
) -> ArtifactRef:
    """Run the stage's pure `run` on these questions only and store their rows as one batch,
    whose manifest lists the questions' fingerprints (what later lookups match on)."""
    wiring = wiring or WIRING[name]
    batch_key = artifact_key(
        name + BATCH_SUFFIX,
        STAGES[name].VERSION,
        {},
        {"q": canonical_json(sorted(fingerprints.values()))},
    )
    existing = store.lookup(name + BATCH_SUFFIX, batch_key)
    if existing:
        return existing
    started = time.perf_counter()
    question_ids = list(fingerprints)
    inputs = _load_inputs(store, name, refs, wiring)
    for input_name in question_inputs(wiring):
        inputs[input_name] = _only_questions(inputs[input_name], question_ids)
    outputs = STAGES[name].run(inputs, config)
    return store.write(
        name + BATCH_SUFFIX,
        batch_key,
        version=STAGES[name].VERSION,
        config=_config_dict(config),
        input_keys={p: refs[p].key for p in _producers(wiring)},
        outputs=outputs,
        started_at=started,
        # which process computed it: shows where a task runner sent the batch
        extra={"questions": fingerprints, "host": socket.gethostname(), "pid": os.getpid()},
    )


BatchRunner = Callable[
    [ArtifactStore, str, BaseModel, dict[str, ArtifactRef], dict[str, str], list[dict[str, str]]],
    list[ArtifactRef],
]


def run_batches_inline(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    batches: list[dict[str, str]],
) -> list[ArtifactRef]:
    """Plain execution: the batches one after another, in this process."""
    return [run_batch(store, name, config, refs, wiring, batch) for batch in batches]


def compute_missing(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    plan: QuestionPlan,
    batch_size: int,
    run_batches: BatchRunner = run_batches_inline,
) -> QuestionPlan:
    """Compute the plan's missing questions in batches; the returned plan has none missing."""
    batches = [{q: plan.fingerprints[q] for q in b} for b in plan.batches(batch_size)]
    cached = dict(plan.cached)
    refs_out = run_batches(store, name, config, refs, wiring, batches)
    for batch, ref in zip(batches, refs_out, strict=True):
        cached.update(dict.fromkeys(batch, ref))
    return replace(plan, cached=cached, missing=[])


def assemble_outputs(store: ArtifactStore, name: str, plan: QuestionPlan) -> dict[str, pa.Table]:
    """The stage's full tables from its batches: each question's rows, in the questions' order."""
    by_batch: dict[str, tuple[ArtifactRef, list[str]]] = {}
    for qid in plan.order:
        ref = plan.cached[qid]
        by_batch.setdefault(ref.path, (ref, []))[1].append(qid)
    rank = {qid: position for position, qid in enumerate(plan.order)}
    outputs = {}
    for output in STAGES[name].OUTPUTS:
        parts = [
            _only_questions(store.read_table(ref, output), ids) for ref, ids in by_batch.values()
        ]
        if not parts:
            outputs[output] = contracts.empty(output)
            continue
        table = pa.concat_tables(parts)
        ranks = np.array([rank[q] for q in table.column("question_id").to_pylist()], dtype=np.int64)
        outputs[output] = table.take(pa.array(np.argsort(ranks, kind="stable")))
    return outputs


def compute_questions(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    batch_size: int,
    run_batches: BatchRunner,
) -> tuple[QuestionPlan | None, int]:
    """Lookup, plan, compute: the one place every runner does it. A per-question stage whose
    artifact is not stored gets its missing questions computed by `run_batches` (inline, or
    Prefect's mapped tasks) and returns the plan to assemble from, with how many questions it
    computed; a whole stage, or one already stored, returns (None, 0)."""
    if not is_per_question(name, wiring) or store.lookup(
        name, stage_key(name, config, refs, wiring)
    ):
        return None, 0
    plan = plan_questions(store, name, config, refs, wiring)
    computed = len(plan.missing)
    plan = compute_missing(store, name, config, refs, wiring, plan, batch_size, run_batches)
    return plan, computed


def execute_stage(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    plan: QuestionPlan | None = None,
    run_batches: BatchRunner = run_batches_inline,
    parts_filled: dict[str, int] | None = None,
    processes: int = 1,
) -> StageResult:
    """Run one stage unless its artifact already exists (flows/pipeline.py wraps it in a task).

    A per-question stage computes only the questions no earlier batch holds, then assembles its
    artifact (same key as a whole-stage run) from cached and new rows. `parts_filled` counts the
    parts partitions computed before (`fill_partition`), for the manifest. With `processes` > 1,
    a stage whose parts hold the GIL (parsing) computes them in that many local processes first
    (`fill_in_processes`)."""
    wiring = wiring or WIRING[name]
    started = time.perf_counter()
    key = stage_key(name, config, refs, wiring)
    cached = store.lookup(name, key)
    if cached:
        return StageResult(name, cached, time.perf_counter() - started, _row_counts(store, cached))
    computed, extra = 0, {}
    if is_per_question(name, wiring):
        if plan is None:
            plan, computed = compute_questions(
                store, name, config, refs, wiring, batch_size, run_batches
            )
        assert plan is not None  # the artifact was not cached, so a plan was made
        outputs = assemble_outputs(store, name, plan)
        extra = {"batch_keys": sorted({ref.key for ref in plan.cached.values()})}
    else:
        if processes > 1 and getattr(STAGES[name], "PARTS_HOLD_GIL", False):
            filled = fill_in_processes(store, name, config, refs, wiring, processes)
            parts_filled = add_counts(parts_filled or {}, filled)
        # parts (parsed documents, chunk vectors) the stage caches go to this store; the packs
        # it used are listed like batches, so garbage collection keeps them with the artifact
        with parts_cache.session(store) as parts:
            outputs = STAGES[name].run(_load_inputs(store, name, refs, wiring), config)
        if parts.used:
            counts = add_counts(parts.computed(), parts_filled or {})
            extra = {"batch_keys": parts.pack_keys(), "parts_computed": counts}
    ref = store.write(
        name,
        key,
        version=STAGES[name].VERSION,
        config=_config_dict(config),
        input_keys={p: refs[p].key for p in _producers(wiring)},
        outputs=outputs,
        started_at=started,
        lineage=_lineage(store, refs),
        extra=extra,
    )
    result = StageResult(name, ref, time.perf_counter() - started, _row_counts(store, ref))
    result.questions_computed = computed
    return result


# ---------------------------------------------------------------- partitions of whole stages


def stage_partitions(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
    size: int = DEFAULT_PARTITION_SIZE,
) -> list[Any]:
    """The parts a whole stage (ingestion: documents, indexing: chunk vectors) would compute,
    split into partitions of about `size` items, for a task runner to spread over workers; []
    when the stage has no partitions, its artifact exists, or every part is cached."""
    wiring = wiring or WIRING[name]
    module = STAGES[name]
    if not hasattr(module, "partitions") or store.lookup(
        name, stage_key(name, config, refs, wiring)
    ):
        return []
    with parts_cache.session(store):
        return module.partitions(_load_inputs(store, name, refs, wiring), config, size)


def fill_partition(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None,
    partition: Any,
) -> dict[str, Any]:
    """Compute one partition's parts into the store's parts cache (the stage's own pure
    `fill_partition`). The stage then assembles its artifact from the warm cache exactly as in
    one process, so the artifact is the same however the parts were spread."""
    wiring = wiring or WIRING[name]
    with parts_cache.session(store) as parts:
        STAGES[name].fill_partition(_load_inputs(store, name, refs, wiring), config, partition)
    return {"parts_computed": parts.computed(), "host": socket.gethostname(), "pid": os.getpid()}


# Starting a process costs seconds (it imports the parsers), so each must get at least this many
# documents; a small corpus or a small change is parsed in-process.
MIN_PARTS_PER_PROCESS = 32


def add_counts(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    return {k: total.get(k, 0) + more.get(k, 0) for k in {*total, *more}}


def fill_in_processes(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None,
    processes: int,
) -> dict[str, int]:
    """A whole stage's missing parts (ingestion: the documents to parse) computed in up to
    `processes` local processes, partition by partition, into the store's parts cache; the stage
    then assembles its artifact from the warm cache, exactly as in one process (the same path
    Dask takes, flows/pipeline.py). Threads would not help: parsing holds the GIL. Returns the
    parts computed, by namespace; {} when there is too little to be worth the processes."""
    wiring = wiring or WIRING[name]
    missing = [item for p in stage_partitions(store, name, config, refs, wiring, 1) for item in p]
    workers = min(processes, len(missing) // MIN_PARTS_PER_PROCESS)
    if workers < 2:
        return {}
    # several partitions per process: they balance the load, and the bar moves
    size = max(8, math.ceil(len(missing) / (workers * 8)))
    partitions = [missing[i : i + size] for i in range(0, len(missing), size)]
    counts: dict[str, int] = {}
    # spawn, not fork: the parent may hold torch's and OpenMP's threads, which fork breaks
    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [
                pool.submit(fill_partition, store, name, config, refs, wiring, partition)
                for partition in partitions
            ]
            description = f"{name}: {len(missing)} parts in {workers} processes"
            for future in progress.track(as_completed(futures), description, total=len(futures)):
                counts = add_counts(counts, future.result()["parts_computed"])
    except BrokenProcessPool as error:
        # e.g. a script without `if __name__ == "__main__":`, which spawn re-runs in each child;
        # what the processes finished is cached, the stage computes the rest itself
        log.warning("%s: processes failed (%s); going on in this process", name, error)
    return counts


def local_processes(requested: int | None) -> int:
    """Processes for GIL-bound parts: as asked, or one per CPU core (`None`)."""
    return requested or os.cpu_count() or 1


def _lineage(store: ArtifactStore, refs: dict[str, ArtifactRef]) -> dict[str, str]:
    """Keys and versions of everything upstream, so an index manifest names its chunker version
    and corpus snapshot."""
    lineage: dict[str, str] = {}
    for producer, ref in refs.items():
        lineage.update(store.manifest(ref).get("lineage", {}))
        if producer in STAGES:
            lineage[f"{producer}_version"] = STAGES[producer].VERSION
        lineage[f"{producer}_key"] = ref.key
    return lineage


def _row_counts(store: ArtifactStore, ref: ArtifactRef) -> dict[str, int]:
    return {name: info["rows"] for name, info in store.manifest(ref)["tables"].items()}


# ---------------------------------------------------------------- all stages

StageRunner = Callable[..., StageResult]
# The stages that embed text; none after the last of them does (revise rounds re-run only
# generation, attribution and guardrails), so its embedder is freed before the GGUF loads.
EMBEDDING_STAGES = ("indexing", "retrieval", "rerank")


def plain_runner(config: PipelineConfig) -> StageRunner:
    """`execute_stage` with the config's local processes for parsing."""
    processes = local_processes(config.task_runner.parse_processes)
    return functools.partial(execute_stage, processes=processes)


def run_stages(
    config: PipelineConfig,
    questions: pa.Table,
    runner: StageRunner | None = None,
    free_models: bool = True,
) -> PipelineResult:
    """All stages in order; `runner` is plain Python by default, a Prefect task inside the flow.
    `free_models`: drop the embedder once no later stage embeds (a batch run); a server that
    keeps searching passes False."""
    runner = runner or plain_runner(config)
    store = config.artifact_store()
    _notify("start", "sources")
    results = {
        "corpus": store_source(store, "corpus", corpus_snapshot(config), "corpus_files"),
        "questions": store_source(store, "questions", questions, "questions"),
    }
    _notify("done", "sources", results["corpus"])
    for name in STAGES:
        refs = {producer: results[producer].ref for producer in set(WIRING[name].values())}
        _notify("start", name)
        results[name] = runner(
            store, name, config.stage_config(name), refs, batch_size=config.batch_size
        )
        _notify("done", name, results[name])
        if free_models and name == EMBEDDING_STAGES[-1]:
            embeddings.release()  # a run's peak is when the embedder and the GGUF are both in
    results.update(_revise(store, config, results, runner))
    final = results["revise"].ref
    return PipelineResult(
        results=results,
        final_answers=store.read_table(final, "final_answers"),
        reports=store.read_table(final, "hallucination_reports"),
    )


def _revise(
    store: ArtifactStore, config: PipelineConfig, results: dict[str, StageResult], runner
) -> dict[str, StageResult]:
    """The bounded revise rounds (flows/revise.py) and the merged `revise` artifact."""
    started = time.perf_counter()
    refs = {name: result.ref for name, result in results.items()}
    rounds, final = run_revise_rounds(
        store, config, refs, functools.partial(runner, batch_size=config.batch_size)
    )
    seconds = time.perf_counter() - started
    return {**rounds, "revise": StageResult("revise", final, seconds, _row_counts(store, final))}


def corpus_snapshot(config: PipelineConfig, corpus: Path | None = None) -> pa.Table:
    """The corpus snapshot under the ingestion config's file budget and symlink policy; files
    unchanged since the last snapshot (by their stat) are not read again."""
    settings = config.stage_config("ingestion")
    root = Path(corpus or config.corpus)
    return snapshot_corpus(
        root,
        settings.max_file_bytes,
        follow_symlinks_outside_root=settings.follow_symlinks_outside_root,
        stat_cache=corpus_stat_cache(config, root),
    )


STAT_CACHE_FOLDER = "corpus.stat"


def corpus_stat_cache(config: PipelineConfig, root: Path) -> StatCache | None:
    """The stat cache of this corpus folder beside the store's caches (one small JSON file per
    folder); None when the config asks to hash every file on every run."""
    if config.always_hash_corpus:
        return None
    name = hashlib.sha256(os.fsencode(Path(root).resolve())).hexdigest()[:32]
    folder = config.artifact_store().local_state_dir() / STAT_CACHE_FOLDER
    return StatCache(folder / f"{name}.json")


def run_shared_stages(config: PipelineConfig) -> dict[str, StageResult]:
    store = config.artifact_store()
    results = {"corpus": store_source(store, "corpus", corpus_snapshot(config), "corpus_files")}
    for name in shared_stages():
        refs = {producer: results[producer].ref for producer in set(WIRING[name].values())}
        results[name] = plain_runner(config)(store, name, config.stage_config(name), refs)
    return results
