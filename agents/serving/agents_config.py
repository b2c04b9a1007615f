"""Settings of the agent-serving surfaces (configs/agents.yaml): the instruction texts a model
gets with each tool result, API keys (hashed) -> principals, request limits, server defaults."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

DEFAULT_AGENTS_CONFIG = Path("configs/agents.yaml")
ERROR_KINDS = ("timeout", "unavailable", "rate_limit", "auth", "unknown")
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")


class AgentsConfigError(ValueError):
    pass


class Instructions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    success: str
    low_relevance: str
    not_found: str
    technical_error: dict[str, str]

    @field_validator("technical_error")
    @classmethod
    def _every_kind(cls, value: dict[str, str]) -> dict[str, str]:
        missing = [k for k in ERROR_KINDS if not value.get(k)]
        if missing:
            raise ValueError(f"technical_error needs a text for {missing}")
        return value


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_body_bytes: int = Field(65536, ge=1024)
    max_query_chars: int = Field(2000, ge=10)
    max_raw_chars: int = Field(50000, ge=100)
    max_concurrent: int = Field(32, ge=1)
    request_timeout_s: float = Field(30.0, gt=0)
    # searches running their stages at once (the rest wait their turn): more than the cores
    # gains little speed and raises the memory peak (170 searches from 8 threads on 2 cores, the
    # sample corpus: RSS peaked at 1.1 GB running all at once, 0.7 GB with 4, 0.5 GB with 2)
    search_concurrency: int = Field(2, ge=1)
    llm_concurrency: int = Field(1, ge=1)
    llm_queue_wait_s: float = Field(20.0, ge=0)
    answer_timeout_s: float = Field(120.0, gt=0)
    # look for a changed corpus (after `grounding ingest`, or files added) this often and serve
    # its new index snapshot; null: only on POST /v1/reindex
    reindex_every_s: float | None = Field(None, ge=5)


class Bind(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)


class AgentLoop(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(4, ge=1, le=10)


class AgentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instructions: Instructions
    confidence_check_query_types: list[str] = []
    # who a request without any credential is; None (the default when the config does not
    # name one) refuses such requests with 401
    anonymous_principal: str | None = None
    api_keys: dict[str, str] = {}  # sha256 hex of a key -> principal
    # principals whose key may call POST /v1/reindex (never the anonymous one)
    admin_principals: list[str] = []
    limits: Limits = Limits()
    http: Bind = Bind()
    mcp_http: Bind = Bind(port=8766)
    agent: AgentLoop = AgentLoop()
    # The agent-run check at /v1/check and the MCP tool check_answer: fields of
    # agents.checking.Config, e.g. {judge: llm}; {} is `grounding check`'s default
    check: dict[str, Any] = {}

    @field_validator("check")
    @classmethod
    def _check_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:  # the defaults: no need to import the detector to start a server
            return value
        try:
            from agents.checking.check import Config
        except ImportError:  # the detector is not installed: /v1/check answers 501
            return value
        try:
            Config(**value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"check.{where}: {first['msg']}") from None
        return value

    @field_validator("api_keys")
    @classmethod
    def _hashed(cls, value: dict[str, str]) -> dict[str, str]:
        bad = [k[:8] for k in value if not SHA256_RE.match(str(k))]
        if bad:
            raise ValueError(f"api_keys must be sha256 hex digests of the keys, got {bad} ...")
        return value


def load_agents_config(path: Path | str = DEFAULT_AGENTS_CONFIG, **overrides) -> AgentsConfig:
    """configs/agents.yaml, validated; `overrides` replace top-level fields (tests, CLI)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise AgentsConfigError(f"agents config not found: {path}") from None
    except yaml.YAMLError as exc:
        raise AgentsConfigError(f"{path}: invalid YAML: {exc}") from exc
    try:
        return AgentsConfig.model_validate({**raw, **overrides})
    except ValidationError as exc:
        raise AgentsConfigError(f"{path}: {exc}") from exc
