"""Load `configs/pipeline.yaml` into typed per-stage configs.

Stage sections may `include:` YAML files (policies, principals, glossary) so that rules stay data.
Settings that must agree across stages (reference date, embedding model) are set once here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flows.registry import STAGES

DEFAULT_CONFIG = Path("configs/pipeline.yaml")


class ConfigError(ValueError):
    pass


class TaskRunnerConfig(BaseModel):
    """Where Prefect runs the tasks: a thread pool (default) or Dask, either a local cluster of
    `n_workers` processes or an existing cluster at `address` (tcp://host:8786)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["thread", "dask"] = "thread"
    address: str | None = None
    n_workers: int = Field(2, ge=1)
    threads_per_worker: int = Field(1, ge=1)
    max_workers: int | None = Field(None, ge=1)  # thread pool size; null = Prefect's default
    # On Dask, ingestion's documents and indexing's chunk vectors are computed in mapped
    # partitions of about this many items before the stage assembles its artifact.
    partition_size: int = Field(256, ge=1)
    # Without Dask, documents to parse (pure Python, GIL-bound) are spread over this many local
    # processes when there are enough of them; null = one per CPU core, 1 = in-process only.
    parse_processes: int | None = Field(None, ge=1)


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    root: Path
    corpus: Path
    questions: Path
    # a local folder, or an fsspec URL (s3://bucket/prefix) that several machines can share
    store: Path | str
    store_options: dict[str, Any] = Field(default_factory=dict)
    runs_dir: Path
    batch_size: int = Field(64, ge=1)  # questions per batch in per-question stages
    backfill_workers: int = Field(2, ge=1)  # partitions a backfill answers at once
    task_runner: TaskRunnerConfig = Field(default_factory=TaskRunnerConfig)
    # True: read and hash every corpus file on every run instead of trusting an unchanged stat
    # (stages/common/stat_cache.py explains the residual risk this removes).
    always_hash_corpus: bool = False
    as_of: dt.date | None = None
    default_principal: str = "employee"
    default_query_type: str = "general"
    stages: dict[str, Any]

    def stage_config(self, name: str) -> BaseModel:
        return self.stages[name]

    def artifact_store(self):
        from stages.store import ArtifactStore

        return ArtifactStore(self.store, self.store_options)


def _project_root(config_path: Path) -> Path:
    parent = config_path.resolve().parent
    return parent.parent if parent.name == "configs" else Path.cwd()


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _stage_section(root: Path, section: dict) -> dict:
    merged: dict = {}
    for include in section.get("include", []):
        merged.update(_read_yaml(root / include))
    merged.update({k: v for k, v in section.items() if k != "include"})
    return merged


def load_config(
    path: Path | str = DEFAULT_CONFIG, overrides: dict[str, Any] | None = None
) -> PipelineConfig:
    """Read the pipeline config; `overrides` maps 'stage.field' or a top-level key to a value."""
    path = Path(path)
    root = _project_root(path)
    raw = _read_yaml(path)
    sections = raw.get("stages", {}) or {}
    unknown = set(sections) - set(STAGES)
    if unknown:
        raise ConfigError(
            f"{path}: unknown stage sections {sorted(unknown)}; known: {list(STAGES)}"
        )
    merged = {name: _stage_section(root, sections.get(name) or {}) for name in STAGES}
    top_level = (set(PipelineConfig.model_fields) - {"root", "stages"}) | set(raw)
    for key, value in (overrides or {}).items():
        if key.startswith("stages."):  # the YAML path of a stage setting
            key = key.removeprefix("stages.")
        prefix, _, field = key.partition(".")
        if prefix not in STAGES and prefix not in top_level:
            # an unknown key set nothing: a typo must not leave a "changed" run unchanged
            raise ConfigError(
                f"--set {key}: {prefix!r} is neither a stage ({', '.join(STAGES)}) nor a "
                f"top-level setting ({', '.join(sorted(top_level))})"
            )
        if field and prefix in STAGES:
            _assign(merged[prefix], field, value)
        elif field:  # a nested top-level setting, e.g. task_runner.kind=dask
            section = raw.get(prefix)
            raw[prefix] = {**(section if isinstance(section, dict) else {}), field: value}
        else:
            raw[key] = value
    as_of = raw.get("as_of")
    for name in ("source_selection", "evidence"):
        merged[name].setdefault("as_of", as_of)
    model = merged["indexing"].get("embedding_model")
    if model:
        for name in ("retrieval", "rerank"):
            merged[name]["embedding_model"] = model
    stages = {}
    for name, module in STAGES.items():
        try:
            stages[name] = module.Config.model_validate(merged[name])
        except ValidationError as exc:
            raise ConfigError(f"{path}: stage {name!r}: {exc}") from exc
    try:
        return PipelineConfig(
            root=root,
            corpus=root / raw.get("corpus", "data/sample/docs"),
            questions=root / raw.get("questions", "data/sample/questions.jsonl"),
            store=_store_location(root, raw.get("store", "artifacts")),
            store_options=raw.get("store_options") or {},
            runs_dir=root / raw.get("runs_dir", "runs"),
            batch_size=raw.get("batch_size", 64),
            backfill_workers=raw.get("backfill_workers", 2),
            task_runner=raw.get("task_runner") or {},
            always_hash_corpus=raw.get("always_hash_corpus", False),
            as_of=as_of,
            default_principal=raw.get("default_principal", "employee"),
            default_query_type=raw.get("default_query_type", "general"),
            stages=stages,
        )
    except ValidationError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def _assign(section: dict, dotted: str, value: Any) -> None:
    """`llm.path` sets section["llm"]["path"] (a nested block); `top_n` a plain field."""
    *parents, leaf = dotted.split(".")
    for name in parents:
        child = section.get(name)
        section[name] = dict(child) if isinstance(child, dict) else {}
        section = section[name]
    section[leaf] = value


def _store_location(root: Path, store: str | Path) -> Path | str:
    """A URL stays a URL (fsspec opens it); a path is relative to the project root."""
    return str(store) if "://" in str(store) else root / store


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`key=value` strings (YAML values) from the command line into load_config overrides."""
    parsed = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        parsed[key] = yaml.safe_load(value)
    return parsed
