"""`grounding warm`: save the KV states of the local LLM's system prompts (run by `make setup`).

A fresh process reads each system prompt the first time it sends it: about 6 s of the first
`grounding ask` with the llama_cpp generator on 2 cores (the generator's 295 tokens and the
judge's 116). Saved once here, later processes restore them in milliseconds (see
`stages.models.chat.PrefixStates`). The generator's prompt is saved whatever
`generation.backend` says: switching to the local LLM is one setting, and its first answer
should not pay for it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from stages import generation, guardrails
from stages.models import chat
from stages.models.errors import LLMError
from stages.models.settings import LLMSettings


@dataclass
class Warmed:
    stage: str
    prompt: str  # its first words, for the table
    status: str  # saved | restored | done | failed | off | error: …
    seconds: float


def prompts_by_stage(settings: Any) -> list[tuple[str, LLMSettings, list[str]]]:
    """(stage, its llm block, the system prompts it sends) for the stages that use the LLM."""
    gen = settings.stage_config("generation")
    guard = settings.stage_config("guardrails")
    return [
        ("generation", gen.llm, generation.system_prompts(gen)),
        ("guardrails", guard.llm, guardrails.system_prompts(guard)),
    ]


def warm(settings: Any) -> list[Warmed]:
    """Save (or find already saved) every system prompt's KV state; one row per prompt.
    A model that cannot be loaded gives "error: …" rows; the first ask would fail the same."""
    rows = []
    for stage, llm, prompts in prompts_by_stage(settings):
        for prompt in prompts:
            started = time.perf_counter()
            try:
                status = chat.save_system_prompts(llm, [prompt])[0]
            except LLMError as exc:
                status = f"error: {exc}"
            seconds = round(time.perf_counter() - started, 2)
            rows.append(Warmed(stage, " ".join(prompt.split()[:6]) + " …", status, seconds))
    return rows
