"""Yes/no judgments as a probability: `YesNoModel.p_yes(system, user) -> float` in [0, 1].

- `LlamaYesNo` (llama_cpp): the local GGUF evaluates the prompt once and the next token's
  distribution gives P(yes) / (P(yes) + P(no)): a graded score from a single forward pass,
  deterministic (no sampling), and no output to parse. The chat template is the model's own (Qwen
  ChatML); a system prompt shared by consecutive calls stays in llama.cpp's KV cache.
- `ChatYesNo` (openai_compatible): the verdict constrained to {"verdict": "yes" | "no"} by a JSON
  schema; yes = 1.0, no = 0.0.

A model that cannot answer (file missing, server down) raises `JudgeError`: the caller treats it
as a technical failure, never as a "no". The identity (`model_id`) is known before any load, so a
caller's cache can answer without loading the model.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Protocol

from stages.models.chat import (
    Cancelled,
    LazyClient,
    LlamaCppClient,
    chat_client,
    chatml_system_prefix,
    prime_prefix,
    raise_if_cancelled,
    server_reply,
    stoppable_completion,
)
from stages.models.errors import JudgeError, LLMError
from stages.models.files import model_id_for, verify_gguf
from stages.models.settings import LLMSettings


class YesNoModel(Protocol):
    model_id: str

    def p_yes(self, system: str, user: str) -> float: ...

    def p_choices(self, system: str, user: str, count: int) -> list[float]:
        """P(reply is "0"), P("1") … P(str(count)): a multiple choice in one forward pass."""
        ...


def chatml(system: str, user: str) -> str:
    """Qwen2.5's chat template, ending where the assistant's first token goes."""
    return f"{chatml_system_prefix(system)}{user}<|im_end|>\n<|im_start|>assistant\n"


# The answer words; each is one token in Qwen2.5's vocabulary (the same ids llama-cpp-python's
# tokenizer gave: Yes 9454, yes 9693, No 2753…).
YES_TOKENS = frozenset({"yes", "Yes", " yes", "YES"})
NO_TOKENS = frozenset({"no", "No", " no", "NO"})
# How many of the most likely next tokens llama.cpp reports. A yes/no variant below the 100th
# has a probability under that of the 100th token, so leaving it out moves P(yes) by less than
# that; listing 100 costs no measurable time (the whole vocabulary is sorted either way).
TOP_TOKENS = 100


class LlamaYesNo:
    """P(yes) from the next-token distribution of a GGUF (llama.cpp in process, via xllamacpp).

    llama.cpp reports the log-probabilities (softmax over the whole vocabulary, before any
    sampling) of the `TOP_TOKENS` most likely next tokens; P(yes) is the mass of the yes words
    over the mass of the yes and no words among them.
    """

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.model_id = "unknown"
        self._server: Any = None
        self._error: str | None = None
        try:  # identity without loading the model (the hash is cached on disk)
            sha256 = verify_gguf(settings.path, settings.sha256)
            self.model_id = model_id_for(settings.path, sha256, settings.repack_weights)
        except LLMError as exc:
            self._error = str(exc)

    def _ready(self) -> Any:
        if self._error:
            raise JudgeError(self._error)
        if self._server is None:
            try:
                client = LlamaCppClient(
                    self.settings.path,
                    model_sha256=self.settings.sha256,
                    n_ctx=self.settings.n_ctx,
                    n_threads=self.settings.n_threads,
                    kv_cache_dir=self.settings.kv_cache_dir,
                    repack_weights=self.settings.repack_weights,
                )
                self._server = client.server
            except LLMError as exc:
                self._error = str(exc)
                raise JudgeError(self._error) from exc
        return self._server

    def p_yes(self, system: str, user: str) -> float:
        return p_yes_from_top_logprobs(self._next_token(system, user))

    def p_choices(self, system: str, user: str, count: int) -> list[float]:
        return p_choices_from_top_logprobs(self._next_token(system, user), count)

    def _next_token(self, system: str, user: str) -> list[dict[str, Any]]:
        """The `TOP_TOKENS` most likely next tokens after the prompt, with log-probabilities."""
        raise_if_cancelled()  # one token a call: a stopped request stops between calls
        server = self._ready()
        request = {
            "prompt": chatml(system, user),  # special tokens (<|im_start|>…) are parsed
            "max_tokens": 1,
            "n_probs": TOP_TOKENS,
            "temperature": 0.0,
            "cache_prompt": True,  # the shared system prompt stays in the KV cache
        }
        try:
            prime_prefix(server, chatml_system_prefix(system))
            body = server_reply(stoppable_completion(server, request), "evaluation")
            return body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        except Cancelled:
            raise  # the caller gave up: not a judge failure to record
        except LLMError as exc:
            raise JudgeError(_context_message(str(exc), self.settings.n_ctx)) from exc
        except (ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
            raise JudgeError(f"llama.cpp evaluation failed: {exc}") from exc


def _context_message(message: str, n_ctx: int) -> str:
    match = re.search(r"request \((\d+) tokens\) exceeds", message)
    if match:
        return f"judge prompt of {match.group(1)} tokens exceeds n_ctx {n_ctx}"
    return message


def p_yes_from_top_logprobs(top: list[dict[str, Any]]) -> float:
    """P(yes) / (P(yes) + P(no)) over llama.cpp's `top_logprobs` of the next token."""
    yes = [float(t["logprob"]) for t in top if t.get("token") in YES_TOKENS]
    no = [float(t["logprob"]) for t in top if t.get("token") in NO_TOKENS]
    if not yes and not no:
        raise JudgeError(f"neither yes nor no among the {len(top)} most likely next tokens")
    if not no:
        return 1.0
    if not yes:
        return 0.0
    return 1.0 / (1.0 + math.exp(_logsumexp(no) - _logsumexp(yes)))


def p_choices_from_top_logprobs(top: list[dict[str, Any]], count: int) -> list[float]:
    """P(0), P(1) … P(count) over llama.cpp's `top_logprobs`: the mass of each digit answer,
    normalised over the digits (0 is "none of them"). Qwen2.5 spells each digit as one token."""
    if not 0 < count <= 9:
        raise ValueError(f"between 1 and 9 choices, not {count}")
    mass = [0.0] * (count + 1)
    for token in top:
        word = str(token.get("token", "")).strip()
        if len(word) == 1 and word.isdigit() and int(word) <= count:
            mass[int(word)] += math.exp(float(token["logprob"]))
    total = sum(mass)
    if total <= 0:
        raise JudgeError(f"no choice 0-{count} among the {len(top)} most likely next tokens")
    return [m / total for m in mass]


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

    def p_choices(self, system: str, user: str, count: int) -> list[float]:
        schema = {
            "type": "object",
            "properties": {"choice": {"type": "integer", "minimum": 0, "maximum": count}},
            "required": ["choice"],
            "additionalProperties": False,
        }
        messages = [
            {"role": "system", "content": system + ' Reply as JSON {"choice": <number>}.'},
            {"role": "user", "content": user},
        ]
        try:
            text = self._client.get().complete(messages, schema).text
        except LLMError as exc:
            raise JudgeError(str(exc)) from exc
        return parse_choice(text, count)


def parse_choice(text: str, count: int) -> list[float]:
    """A server's choice as probabilities: 1.0 on the chosen number; anything else a JudgeError."""
    try:
        choice = int(json.loads(text).get("choice"))
    except (ValueError, TypeError, AttributeError):
        match = re.match(r"\s*(\d)", text)
        choice = int(match.group(1)) if match else -1
    if not 0 <= choice <= count:
        raise JudgeError(f"judge reply is not a choice 0-{count}: {text[:80]!r}")
    return [1.0 if i == choice else 0.0 for i in range(count + 1)]


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
