"""The Prefect flow: the stages (ingestion = parse + index) over content-addressed artifacts.

Tasks receive and return `ArtifactRef`s, never DataFrames. The artifact store is the cache (see
`flows/executor.py`, which does the work in plain Python), so Prefect's own result cache is off
(`NO_CACHE`) and a rerun with nothing changed finds every key already written.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from flows.executor import (
    DEFAULT_BATCH_SIZE,
    QuestionPlan,
    StageRunner,
    add_counts,
    compute_questions,
    execute_stage,
    fill_partition,
    is_per_question,
    local_processes,
    questions_table,
    run_batch,
    run_stages,
    stage_partitions,
)
from flows.observability import publish_run_artifacts
from flows.pipeline_config import PipelineConfig, TaskRunnerConfig
from flows.registry import STAGES, WIRING
from flows.results import PipelineResult, StageResult
from stages.store import ArtifactRef, ArtifactStore


@task(cache_policy=NO_CACHE, persist_result=False)
def stage_task(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    plan: QuestionPlan | None = None,
    parts_filled: dict[str, int] | None = None,
    processes: int = 1,
) -> StageResult:
    return execute_stage(
        store,
        name,
        config,
        refs,
        wiring,
        batch_size=batch_size,
        plan=plan,
        parts_filled=parts_filled,
        processes=processes,
    )


@task(cache_policy=NO_CACHE, persist_result=False)
def batch_task(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    fingerprints: dict[str, str],
) -> ArtifactRef:
    return run_batch(store, name, config, refs, wiring, fingerprints)


@task(cache_policy=NO_CACHE, persist_result=False)
def partition_task(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    partition: Any,
) -> dict[str, Any]:
    return fill_partition(store, name, config, refs, wiring, partition)


def _fill_partitions(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    size: int,
) -> dict[str, int]:
    """One Prefect task per partition of a whole stage's missing parts (documents to parse,
    chunk packs to embed), through the flow's task runner; the parts they computed, counted."""
    version = STAGES[name].VERSION
    futures = [
        partition_task.with_options(
            name=f"{name}-partition",
            task_run_name=f"{name}-v{version}-part{number}",
            tags=[f"stage:{name}", "partition"],
        ).submit(store, name, config, refs, wiring, partition)
        for number, partition in enumerate(
            stage_partitions(store, name, config, refs, wiring, size)
        )
    ]
    counts: dict[str, int] = {}
    for future in futures:
        counts = add_counts(counts, future.result()["parts_computed"])
    return counts


def _submit_batches(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str],
    batches: list[dict[str, str]],
) -> list[ArtifactRef]:
    """One Prefect task per batch through the flow's task runner (a Dask cluster spreads them
    over its workers); wait for all of them."""
    version = STAGES[name].VERSION
    futures = [
        batch_task.with_options(
            name=f"{name}-batch",
            task_run_name=f"{name}-v{version}-batch{number}",
            tags=[f"stage:{name}", "batch"],
        ).submit(store, name, config, refs, wiring, batch)  # one task per batch
        for number, batch in enumerate(batches)
    ]
    return [future.result() for future in futures]


def prefect_stage_runner(
    store: ArtifactStore,
    name: str,
    config: BaseModel,
    refs: dict[str, ArtifactRef],
    wiring: dict[str, str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    partition_size: int | None = None,
    processes: int = 1,
) -> StageResult:
    """Each stage as its own Prefect task run, named after the stage, tagged with its VERSION.
    A per-question stage's missing questions run first as mapped batch tasks (in the flow, where
    the task runner is); the stage task then assembles the artifact from the batches. With a
    `partition_size`, a whole stage's missing parts (ingestion's documents, indexing's chunk
    vectors) are first computed the same way, as mapped partition tasks, and the stage task
    assembles its artifact from the warm parts cache. Without one, `processes` > 1 lets the
    stage task parse documents in local processes (flows/executor.py `fill_in_processes`)."""
    wiring = wiring or WIRING[name]
    started = time.perf_counter()
    named = stage_task.with_options(
        name=name, task_run_name=f"{name}-v{STAGES[name].VERSION}", tags=[f"stage:{name}"]
    )
    if partition_size and not is_per_question(name, wiring):
        filled = _fill_partitions(store, name, config, refs, wiring, partition_size)
        result = named(store, name, config, refs, wiring, batch_size, parts_filled=filled)
        result.seconds = time.perf_counter() - started
        return result
    plan, computed = compute_questions(
        store, name, config, refs, wiring, batch_size, _submit_batches
    )
    result = named(store, name, config, refs, wiring, batch_size, plan, processes=processes)
    if plan is not None:
        result.seconds = time.perf_counter() - started
        result.questions_computed = computed
    return result


def build_task_runner(settings: TaskRunnerConfig):
    """The flow's task runner from config: threads by default, or a Dask cluster (a local one
    with n_workers, or an existing one at `address`)."""
    if settings.kind == "thread":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=settings.max_workers)
    from prefect_dask import DaskTaskRunner

    if settings.address:
        return DaskTaskRunner(address=settings.address)
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": settings.n_workers,
            "threads_per_worker": settings.threads_per_worker,
            "processes": True,
            "dashboard_address": None,
        }
    )


def run_pipeline_flow(config: PipelineConfig, questions: list[dict]) -> PipelineResult:
    """Invoke the flow with the task runner the config asks for."""
    runner = build_task_runner(config.task_runner)
    return pipeline_flow.with_options(task_runner=runner)(config, questions)


def stage_runner_for(settings: TaskRunnerConfig) -> StageRunner:
    """On Dask, whole stages are spread over the workers in partitions too. Threads gain
    nothing from that (parsing holds the GIL, torch already uses every core), so with threads
    documents are parsed in local processes instead."""
    if settings.kind == "dask":
        return functools.partial(prefect_stage_runner, partition_size=settings.partition_size)
    return functools.partial(
        prefect_stage_runner, processes=local_processes(settings.parse_processes)
    )


@flow(name="grounding-pipeline", log_prints=True, validate_parameters=False)
def pipeline_flow(config: PipelineConfig, questions: list[dict]) -> PipelineResult:
    table = questions_table(questions, config.default_principal, config.default_query_type)
    result = run_stages(config, table, stage_runner_for(config.task_runner))
    publish_run_artifacts(result)  # stage timings and cache hits as Prefect artifacts
    return result
