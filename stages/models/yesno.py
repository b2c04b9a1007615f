"""Yes/no judgments as a probability: `YesNoModel.p_yes(system, user) -> float` in [0, 1].

- `LlamaYesNo` (llama_cpp): the local GGUF evaluates the prompt once and the next token's logits
  give P(yes) / (P(yes) + P(no)): a graded score from a single forward pass, deterministic (no
  sampling), and no output to parse. The chat template is the model's own (Qwen ChatML); a system
  prompt shared by consecutive calls stays in llama.cpp's KV cache.
- `ChatYesNo` (openai_compatible): the verdict constrained to {"verdict": "yes" | "no"} by a JSON
  schema; yes = 1.0, no = 0.0.

A model that cannot answer (file missing, server down) raises `JudgeError`: the caller treats it
as a technical failure, never as a "no". The identity (`model_id`) is known before any load, so a
caller's cache can answer without loading the model.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

from stages.models.chat import LLAMA_LOCK, LazyClient, LlamaCppClient, chat_client
from stages.models.errors import JudgeError, LLMError
from stages.models.files import model_id_for, verify_gguf
from stages.models.settings import LLMSettings


class YesNoModel(Protocol):
    model_id: str

    def p_yes(self, system: str, user: str) -> float: ...


def chatml(system: str, user: str) -> str:
    """Qwen2.5's chat template, ending where the assistant's first token goes."""
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


class LlamaYesNo:
    """P(yes) from the next-token logits of a GGUF (llama-cpp-python, in process)."""

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.model_id = "unknown"
        self._llama: Any = None
        self._error: str | None = None
        self._yes: list[int] = []
        self._no: list[int] = []
        try:  # identity without loading the model (the hash is cached on disk)
            self.model_id = model_id_for(settings.path, verify_gguf(settings.path, settings.sha256))
        except LLMError as exc:
            self._error = str(exc)

    def _ready(self) -> None:
        if self._error:
            raise JudgeError(self._error)
        if self._llama is None:
            try:
                client = LlamaCppClient(
                    self.settings.path,
                    model_sha256=self.settings.sha256,
                    n_ctx=self.settings.n_ctx,
                    n_threads=self.settings.n_threads,
                )
                self._llama = client.llama
            except LLMError as exc:
                self._error = str(exc)
                raise JudgeError(self._error) from exc
            self._yes = self._first_tokens(("yes", "Yes", " yes", "YES"))
            self._no = self._first_tokens(("no", "No", " no", "NO"))

    def _first_tokens(self, variants: tuple[str, ...]) -> list[int]:
        ids = {self._llama.tokenize(v.encode(), add_bos=False, special=False)[0] for v in variants}
        return sorted(ids)

    def p_yes(self, system: str, user: str) -> float:
        import numpy as np

        self._ready()
        llama = self._llama
        tokens = llama.tokenize(chatml(system, user).encode(), add_bos=False, special=True)
        if len(tokens) >= self.settings.n_ctx:
            n_ctx = self.settings.n_ctx
            raise JudgeError(f"judge prompt of {len(tokens)} tokens exceeds n_ctx {n_ctx}")
        with LLAMA_LOCK:
            # Reuse the KV cache for the common prefix (the system prompt), evaluate the rest.
            prefix = 0
            previous = llama.input_ids[: llama.n_tokens].tolist()
            limit = min(len(previous), len(tokens) - 1)  # at least one token is evaluated
            while prefix < limit and previous[prefix] == tokens[prefix]:
                prefix += 1
            llama.n_tokens = prefix
            try:
                llama.eval(tokens[prefix:])
            except (RuntimeError, ValueError) as exc:
                llama.reset()
                raise JudgeError(f"llama.cpp evaluation failed: {exc}") from exc
            logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))
            yes = _logsumexp([float(logits[i]) for i in self._yes])
            no = _logsumexp([float(logits[i]) for i in self._no])
        return 1.0 / (1.0 + math.exp(no - yes))


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


VERDICT_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["verdict"],
    "additionalProperties": False,
}


class ChatYesNo:
    """A strict yes/no through any chat client, the verdict constrained by a JSON schema."""

    def __init__(self, settings: LLMSettings) -> None:
        self.model_id = f"openai-compatible:{settings.model or 'default'}"
        self._client = LazyClient(lambda: chat_client(settings, max_tokens=16))

    def p_yes(self, system: str, user: str) -> float:
        messages = [
            {"role": "system", "content": system + ' Reply as JSON {"verdict": ...}.'},
            {"role": "user", "content": user},
        ]
        try:
            text = self._client.get().complete(messages, VERDICT_SCHEMA).text
        except LLMError as exc:
            raise JudgeError(str(exc)) from exc
        return parse_verdict(text)


def parse_verdict(text: str) -> float:
    """1.0 for yes, 0.0 for no, from JSON or the first word; anything else is a JudgeError."""
    try:
        verdict = str(json.loads(text).get("verdict", "")).strip().lower()
    except (ValueError, AttributeError):
        verdict = (text.strip().split() or [""])[0].strip(".,!\"'").lower()
    if verdict in ("yes", "no"):
        return 1.0 if verdict == "yes" else 0.0
    raise JudgeError(f"judge reply is neither yes nor no: {text[:80]!r}")


def yes_no_model(settings: LLMSettings) -> YesNoModel:
    if settings.backend == "openai_compatible":
        return ChatYesNo(settings)
    return LlamaYesNo(settings)
