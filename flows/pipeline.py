"""The Prefect flow: the stages (ingestion = parse + index) over content-addressed artifacts.

Tasks receive and return `ArtifactRef`s, never DataFrames. The artifact store is the cache: a
stage's key hashes its name, VERSION, config and input artifact keys, so Prefect's own result
cache is off (`NO_CACHE`) and a rerun with nothing changed finds every key already written.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel

from flows.config import PipelineConfig
from flows.registry import STAGES, WIRING
from stages import contracts
from stages.ingestion import snapshot_corpus
from stages.store import ArtifactRef, ArtifactStore, artifact_key

SOURCE_VERSION = "1"
QUESTION_COLUMNS = ("question_id", "question", "principal", "query_type")


@dataclass
class StageResult:
    stage: str
    ref: ArtifactRef
    seconds: float
    rows: dict[str, int] = field(default_factory=dict)


StageCallback = Callable[[str, str, StageResult | None], None]
_callbacks: list[StageCallback] = []


def on_stage_event(callback: StageCallback) -> None:
    """Register a listener for ('start'|'done', stage, result); the CLI draws its bars from it."""
    _callbacks.append(callback)


def _notify(event: str, stage: str, result: StageResult | None = None) -> None:
    for callback in _callbacks:
        callback(event, stage, result)


# ---------------------------------------------------------------- sources


class QuestionError(ValueError):
    pass


def load_questions(path: Path, default_principal: str, default_query_type: str) -> pa.Table:
    """Questions from JSONL, JSON, CSV or Parquet; extra columns (gold answers…) are ignored."""
    import pandas as pd

    suffix = path.suffix.lower()
    if not path.is_file():
        raise QuestionError(f"question file not found: {path}")
    if suffix == ".jsonl":
        frame = pd.read_json(path, lines=True, dtype=False)
    elif suffix == ".json":
        frame = pd.read_json(path, dtype=False)
    elif suffix == ".csv":
        frame = pd.read_csv(path, dtype=str)
    elif suffix == ".parquet":
        frame = pd.read_parquet(path)
    else:
        raise QuestionError(f"{path}: unsupported question file type {suffix!r}")
    return questions_table(
        frame.to_dict("records"), default_principal, default_query_type, str(path)
    )


def questions_table(
    records: list[dict], default_principal: str, default_query_type: str, origin: str = "questions"
) -> pa.Table:
    rows = []
    for number, record in enumerate(records, start=1):
        if not str(record.get("question") or "").strip():
            raise QuestionError(f"{origin}: record {number} has no 'question'")
        rows.append(
            {
                "question_id": str(record.get("question_id") or f"q{number:05d}"),
                "question": str(record["question"]).strip(),
                "principal": str(record.get("principal") or default_principal),
                "query_type": str(record.get("query_type") or default_query_type),
            }
        )
    ids = [r["question_id"] for r in rows]
    if len(set(ids)) != len(ids):
        raise QuestionError(f"{origin}: duplicate question_id values")
    return contracts.from_rows(rows, "questions")


def _table_digest(table: pa.Table, columns: list[str]) -> str:
    digest = hashlib.sha256()
    for row in table.select(columns).to_pylist():
        digest.update(json.dumps(row, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def store_source(store: ArtifactStore, name: str, table: pa.Table, contract: str) -> StageResult:
    """Write a source table (corpus snapshot or questions), keyed by its content."""
    started = time.perf_counter()
    columns = ["path", "sha256"] if contract == "corpus_files" else list(QUESTION_COLUMNS)
    key = artifact_key(name, SOURCE_VERSION, {}, {"content": _table_digest(table, columns)})
    ref = store.lookup(name, key) or store.write(
        name, key, version=SOURCE_VERSION, config={}, input_keys={}, outputs={contract: table}
    )
    return StageResult(name, ref, time.perf_counter() - started, {contract: table.num_rows})


# ---------------------------------------------------------------- stages


def _config_dict(config: BaseModel) -> dict[str, Any]:
    return config.model_dump(mode="json")


def stage_key(name: str, config: BaseModel, refs: dict[str, ArtifactRef]) -> str:
    """Hash of name, VERSION, config, input keys and the output contracts' fingerprints, so a
    contract change recomputes its producer even when nobody remembered to bump VERSION."""
    producers = sorted(set(WIRING[name].values()))
    contract = {table: contracts.fingerprint(table) for table in STAGES[name].OUTPUTS}
    return artifact_key(
        name,
        STAGES[name].VERSION,
        {"config": _config_dict(config), "contracts": contract},
        {p: refs[p].key for p in producers},
    )


def _load_inputs(store: ArtifactStore, name: str, refs: dict[str, ArtifactRef]) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for input_name, producer in WIRING[name].items():
        ref = refs[producer]
        if input_name in contracts.SCHEMAS:
            inputs[input_name] = store.read_table(ref, input_name)
        else:
            inputs[input_name] = store.blob_path(ref, input_name)
    return inputs


def execute_stage(
    store: ArtifactStore, name: str, config: BaseModel, refs: dict[str, ArtifactRef]
) -> StageResult:
    """Run one stage unless its artifact already exists. Plain Python: Prefect wraps it below."""
    started = time.perf_counter()
    key = stage_key(name, config, refs)
    cached = store.lookup(name, key)
    if cached:
        return StageResult(name, cached, time.perf_counter() - started, _row_counts(store, cached))
    outputs = STAGES[name].run(_load_inputs(store, name, refs), config)
    input_keys = {p: refs[p].key for p in sorted(set(WIRING[name].values()))}
    ref = store.write(
        name,
        key,
        version=STAGES[name].VERSION,
        config=_config_dict(config),
        input_keys=input_keys,
        outputs=outputs,
        started_at=started,
        lineage=_lineage(store, refs),
    )
    return StageResult(name, ref, time.perf_counter() - started, _row_counts(store, ref))


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


@task(cache_policy=NO_CACHE, persist_result=False)
def stage_task(
    store_root: str, name: str, config: BaseModel, refs: dict[str, ArtifactRef]
) -> StageResult:
    return execute_stage(ArtifactStore(store_root), name, config, refs)


StageRunner = Callable[[ArtifactStore, str, BaseModel, dict[str, ArtifactRef]], StageResult]


def prefect_stage_runner(
    store: ArtifactStore, name: str, config: BaseModel, refs: dict[str, ArtifactRef]
) -> StageResult:
    """Each stage as its own Prefect task run, named after the stage, tagged with its VERSION."""
    named = stage_task.with_options(
        name=name, task_run_name=f"{name}-v{STAGES[name].VERSION}", tags=[f"stage:{name}"]
    )
    return named(str(store.root), name, config, refs)


@dataclass
class PipelineResult:
    results: dict[str, StageResult]
    final_answers: pa.Table
    reports: pa.Table

    @property
    def refs(self) -> dict[str, ArtifactRef]:
        return {name: result.ref for name, result in self.results.items()}


def run_stages(
    config: PipelineConfig, questions: pa.Table, runner: StageRunner = execute_stage
) -> PipelineResult:
    """All stages in order; `runner` is plain Python by default, a Prefect task inside the flow."""
    store = ArtifactStore(config.store)
    _notify("start", "sources")
    results = {
        "corpus": store_source(store, "corpus", snapshot_corpus(config.corpus), "corpus_files"),
        "questions": store_source(store, "questions", questions, "questions"),
    }
    _notify("done", "sources", results["corpus"])
    for name in STAGES:
        refs = {producer: results[producer].ref for producer in set(WIRING[name].values())}
        _notify("start", name)
        results[name] = runner(store, name, config.stage_config(name), refs)
        _notify("done", name, results[name])
    final = results["guardrails"].ref
    return PipelineResult(
        results=results,
        final_answers=store.read_table(final, "final_answers"),
        reports=store.read_table(final, "hallucination_reports"),
    )


@flow(name="grounding-pipeline", log_prints=True, validate_parameters=False)
def pipeline_flow(config: PipelineConfig, questions: list[dict]) -> PipelineResult:
    table = questions_table(questions, config.default_principal, config.default_query_type)
    return run_stages(config, table, prefect_stage_runner)
