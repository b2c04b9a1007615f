"""One settings block for every chat model a stage uses: where it is and how to reach it.

Stages hold it as their `llm` field (generation, retrieval, rerank, guardrails), so the model's
identity is part of every stage key that depends on it. Sampling settings (temperature,
max_tokens, seed) belong to the use, not the model, and stay with the stage.

Older flat keys keep working: `fold_legacy_keys` moves them into the block before validation
(`guardrails.model_path` -> `guardrails.llm.path`, `rerank.llm_model_path` -> `rerank.llm.path`…);
a flat key wins over the block, so a command-line override of the old name still applies.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from stages.models.files import DEFAULT_MODEL_PATH, PACKAGED_MODEL_SHA256

ENV_BASE_URL = "GROUNDING_LLM_BASE_URL"
ENV_API_KEY = "GROUNDING_LLM_API_KEY"
ENV_MODEL = "GROUNDING_LLM_MODEL"
LLM_BACKENDS = ("llama_cpp", "openai_compatible")


class LLMSettings(BaseModel):
    """The local GGUF (llama_cpp) or an OpenAI-compatible server (openai_compatible)."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["llama_cpp", "openai_compatible"] = "llama_cpp"
    # llama_cpp: a GGUF path relative to the project root (cwd); drop in any chat GGUF
    path: str = DEFAULT_MODEL_PATH
    sha256: str | None = Field(
        PACKAGED_MODEL_SHA256,
        description="checked before loading; set to your GGUF's hash, or null to skip the check",
    )
    n_ctx: int = Field(4096, ge=512, le=32768)
    n_threads: int | None = Field(None, ge=1, le=256)
    # llama_cpp: system prompts' KV states saved here, so a fresh process (`grounding ask`)
    # does not read them again (about 4 s for the generator's); null = off
    kv_cache_dir: str | None = "artifacts/_llm_kv"
    # llama_cpp: repack the weights at load for llama.cpp's interleaved CPU kernels (llama.cpp's
    # default). false loads 0.65 s faster and reads prompts 4-8 % faster on 2 cores, but with its
    # other rounding `bench llm_answers` got fewer right LLM answers (squad 20 -> 19, sample-v1
    # 44 -> 42) and let three more wrong ones through (bench/results/llm_answers-norepack.json),
    # so it is opt-in
    repack_weights: bool = True
    # openai_compatible: unset values come from GROUNDING_LLM_BASE_URL / _MODEL / _API_KEY
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None  # masked in manifests; prefer the environment variable
    timeout_s: float = Field(60.0, gt=0, le=600)
    connect_timeout_s: float = Field(5.0, gt=0, le=60)
    http_retries: int = Field(2, ge=0, le=6)
    backoff_s: float = Field(0.5, ge=0, le=30)
    response_format: Literal["json_object", "json_schema", "none"] = "json_object"

    def server_base_url(self) -> str | None:
        return self.base_url or os.environ.get(ENV_BASE_URL)

    def server_model(self) -> str:
        return self.model or os.environ.get(ENV_MODEL) or "default"

    def server_api_key(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else os.environ.get(ENV_API_KEY)


# Flat keys stages used before the `llm` block, and the block field each one now is.
LEGACY_KEYS = {
    "llm_backend": "backend",
    "model_path": "path",
    "llm_model_path": "path",
    "model_sha256": "sha256",
    **{name: name for name in ("n_ctx", "n_threads", "base_url", "model", "api_key")},
    **{name: name for name in ("timeout_s", "connect_timeout_s", "http_retries", "backoff_s")},
    "response_format": "response_format",
}


def fold_legacy_keys(data: Any, keys: Iterable[str]) -> Any:
    """A stage config's raw input with its old flat `keys` moved into the `llm` block."""
    if not isinstance(data, dict) or not any(key in data for key in keys):
        return data
    data = dict(data)
    block = data.get("llm") or {}
    block = dict(block) if isinstance(block, dict) else block.model_dump()
    for key in keys:
        if key in data:
            block[LEGACY_KEYS[key]] = data.pop(key)
    data["llm"] = block
    return data


class VisionSettings(BaseModel):
    """An OpenAI-compatible endpoint that describes pictures (ingestion's `vision` block).

    Off unless both `base_url` and `model` are set: the offline default never calls anything,
    and no environment variable turns it on behind the configuration's back. The name of the
    model is written into every description it gives ("Figure (described by <model>): ...")."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None  # masked in manifests and cache keys
    max_images: int = Field(20, ge=0, description="pictures described per document")
    timeout_s: float = Field(60.0, gt=0, le=600)
    connect_timeout_s: float = Field(5.0, gt=0, le=60)
    http_retries: int = Field(1, ge=0, le=6)
    max_tokens: int = Field(300, ge=16, le=4096)
    max_side_px: int = Field(1024, ge=64, le=8192, description="longest side of an image sent")

    @property
    def enabled(self) -> bool:
        return bool(self.base_url and self.model)
