"""Load `configs/pipeline.yaml` into typed per-stage configs.

Stage sections may `include:` YAML files (policies, principals, glossary) so that rules stay data.
Settings that must agree across stages (reference date, embedding model) are set once here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from flows.registry import STAGES

DEFAULT_CONFIG = Path("configs/pipeline.yaml")


class ConfigError(ValueError):
    pass


class PipelineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    root: Path
    corpus: Path
    questions: Path
    store: Path
    runs_dir: Path
    as_of: dt.date | None = None
    default_principal: str = "employee"
    default_query_type: str = "general"
    stages: dict[str, Any]

    def stage_config(self, name: str) -> BaseModel:
        return self.stages[name]


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
    for key, value in (overrides or {}).items():
        if "." in key:
            stage, field = key.split(".", 1)
            merged.setdefault(stage, {})[field] = value
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
            store=root / raw.get("store", "artifacts"),
            runs_dir=root / raw.get("runs_dir", "runs"),
            as_of=as_of,
            default_principal=raw.get("default_principal", "employee"),
            default_query_type=raw.get("default_query_type", "general"),
            stages=stages,
        )
    except ValidationError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """`key=value` strings (YAML values) from the command line into load_config overrides."""
    parsed = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"--set expects key=value, got {item!r}")
        key, value = item.split("=", 1)
        parsed[key] = yaml.safe_load(value)
    return parsed
