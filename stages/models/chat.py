"""Chat clients: chat messages plus a JSON schema in, a `Completion` out, or `LLMError`.

- `LlamaCppClient`: llama.cpp in process through the xllamacpp binding (a prebuilt wheel), the
  weights loaded once per process and model identity, output constrained to the schema by
  llama.cpp's own grammar engine.
- `OpenAICompatibleClient`: any server speaking the OpenAI chat API, over httpx, with timeouts,
  bounded retries, exponential backoff and 429 handling that honours Retry-After.
- `chat_client(settings, …)` builds the one the settings name; `LazyClient` builds it on first
  use, once per run. `call_validated` asks for a structured output and validates it, bounded.

Nothing here downloads anything: the model is a local file and the server address is configured.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import email.utils
import functools
import hashlib
import json
import logging
import os
import random
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stages.models.errors import LLMError
from stages.models.files import PACKAGED_MODEL_SHA256, model_id_for, verify_gguf
from stages.models.settings import LLMSettings

log = logging.getLogger(__name__)


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    tokens_prompt: int | None = None
    tokens_completion: int | None = None


Messages = list[dict[str, Any]]  # content: text, or a list of parts (text, image_url)


class ChatClient:
    """`complete(messages, schema) -> Completion`, raising `LLMError` on any backend failure."""

    model_id: str

    def complete(self, messages: Messages, schema: dict[str, Any]) -> Completion:
        raise NotImplementedError


def _completion_from(body: dict[str, Any]) -> Completion:
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError(f"malformed chat completion response: {str(body)[:200]}") from exc
    usage = body.get("usage") or {}
    return Completion(
        text=text,
        finish_reason=choice.get("finish_reason"),
        tokens_prompt=usage.get("prompt_tokens"),
        tokens_completion=usage.get("completion_tokens"),
    )


class Cancelled(LLMError):
    """The caller gave up on this generation (its deadline passed); the model was stopped."""


# The stop flag of the work running in this context: a server request sets it when its deadline
# passes, and the llama.cpp client checks it before a call and at every streamed token, so an
# abandoned request frees the model instead of generating for no one.
_STOP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "llm_stop", default=None
)


@contextlib.contextmanager
def stop_when(event: threading.Event) -> Iterator[None]:
    """LLM calls made in this context (and threads started with a copy of it) stop once
    `event` is set, raising `Cancelled`."""
    token = _STOP.set(event)
    try:
        yield
    finally:
        _STOP.reset(token)


def raise_if_cancelled() -> None:
    event = _STOP.get()
    if event is not None and event.is_set():
        raise Cancelled("the request was cancelled before the model ran")


def streamed_reply(
    handle: Callable[..., Any],
    request: dict[str, Any],
    stop: threading.Event,
    take: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """One llama.cpp request (`handle`: the server's `handle_chat_completions` or
    `handle_completions`) streamed token by token, each choice of each chunk given to `take`;
    stopped (the callback returns True, which tells llama.cpp to cancel the task and free the
    slot) once `stop` is set, raising `Cancelled`.

    `return_progress` makes llama.cpp call back after every batch of prompt tokens it reads, not
    only once it generates: with the prompt read in `prompt_chunk_tokens` batches, a request
    stopped while its long prompt is being read frees the model after that chunk. Returns what
    the stream ended with: finish_reason, usage, timings, or llama.cpp's error."""
    final: dict[str, Any] = {}

    def on_chunk(chunk: Any) -> bool:
        if stop.is_set():
            return True
        if not isinstance(chunk, dict) or chunk.get("prompt_progress"):
            return False  # progress carries no text: only a chance to stop
        if chunk.get("error"):
            final["error"] = chunk["error"]
            return True
        for choice in chunk.get("choices") or []:
            take(choice)
            if choice.get("finish_reason"):
                final["finish_reason"] = choice["finish_reason"]
        for key in ("usage", "timings"):
            if chunk.get(key):
                final[key] = chunk[key]
        return False

    handle({**request, "stream": True, "return_progress": True}, on_chunk)
    if stop.is_set():
        raise Cancelled("the request's deadline passed; the model stopped")
    return final


def _reply(final: dict[str, Any], choice: dict[str, Any]) -> dict[str, Any]:
    """A streamed request's reply in the unstreamed shape (or llama.cpp's error object)."""
    if final.get("error"):
        return {"error": final["error"]}
    choice["finish_reason"] = final.get("finish_reason")
    return {"choices": [choice], "usage": final.get("usage"), "timings": final.get("timings")}


def _streamed_chat(server: Any, request: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
    """A chat completion under `stop` (see `streamed_reply`): choices[0] message, usage."""
    parts: list[str] = []

    def take(choice: dict[str, Any]) -> None:
        content = (choice.get("delta") or {}).get("content")
        if content:
            parts.append(content)

    final = streamed_reply(server.handle_chat_completions, request, stop, take)
    return _reply(final, {"message": {"role": "assistant", "content": "".join(parts)}})


def stoppable_completion(server: Any, request: dict[str, Any]) -> Any:
    """`server.handle_completions(request)`, or under a stop flag (`stop_when`) the same
    completion streamed with prompt progress, so a request stopped while its prompt is read
    frees the model after the chunk being read; `Cancelled` once stopped. The reply has the
    unstreamed shape (choices[0] text, logprobs content, finish_reason; usage, timings)."""
    stop = _STOP.get()
    raise_if_cancelled()
    if stop is None:
        return server.handle_completions(request)
    text: list[str] = []
    tokens: list[Any] = []

    def take(choice: dict[str, Any]) -> None:
        text.append(choice.get("text") or "")
        tokens.extend((choice.get("logprobs") or {}).get("content") or [])

    final = streamed_reply(server.handle_completions, request, stop, take)
    return _reply(final, {"text": "".join(text), "logprobs": {"content": tokens}})


_LOADED: list[Any] = []
_CACHE_ROOT: list[Path] = []  # set by a process that serves one store: its caches go there
# Prompt tokens llama.cpp reads per step in a process that serves requests (None: its default,
# 2048, which reads most prompts in one uninterruptible step). A stopped request frees the model
# at the end of the step it is in: 32 tokens is about 0.45 s on 2 idle cores (model free within
# 0.92 s of the stop, against 2.0 s at 64), for prompts read about 10 % slower than at 64.
_PROMPT_CHUNK: list[int] = []
SERVING_PROMPT_CHUNK = 32
# Prompt states llama.cpp keeps in RAM to reuse when a prompt with the same start comes back
# (its default is 8 GiB, which a server asked many different questions fills and keeps): about
# two prompts' states (28 MB per 1,000 tokens), so a server's RSS can rise by at most this much
# above its warmed size, while switching between two stages' prompts still reuses their states.
PROMPT_RAM_CACHE_MIB = 64
DEFAULT_KV_CACHE_DIR = LLMSettings.model_fields["kv_cache_dir"].default


def use_cache_root(root: Path | str | None) -> None:
    """Put the default KV-state folder under `root` (the store's local folder) instead of the
    working directory; an explicitly configured `kv_cache_dir` is kept as it is."""
    _CACHE_ROOT[:] = [Path(root)] if root else []


def read_prompts_in_chunks(tokens: int | None) -> None:
    """Models loaded from now on in this process read prompts `tokens` at a time (a server,
    where a request past its deadline must free the model soon); None: llama.cpp's default."""
    _PROMPT_CHUNK[:] = [tokens] if tokens else []


def kv_cache_path(setting: str | Path) -> Path:
    if str(setting) == DEFAULT_KV_CACHE_DIR and _CACHE_ROOT:
        return (_CACHE_ROOT[0] / "_llm_kv").resolve()
    return Path(setting).resolve()


@atexit.register
def _close_models() -> None:
    """Stop llama.cpp servers before interpreter teardown, while their threads can still join."""
    _LOADED.clear()
    _PREFIXES.clear()
    load_server.cache_clear()


def server_params(
    model_path: str,
    n_ctx: int,
    n_threads: int | None,
    kv_dir: str | None = None,
    repack_weights: bool = True,
    n_batch: int | None = None,
    map_weights: bool = True,
) -> Any:
    """xllamacpp's `CommonParams` for one model: one slot with the whole context, offline, and
    its HTTP listener on loopback behind a random API key nobody is told (in process, the
    `handle_*` calls do not go through HTTP, except slot save / restore into `kv_dir`).
    `n_batch`: prompt tokens read per step (see `read_prompts_in_chunks`); `map_weights`
    false: the weights are read into memory instead of memory-mapped (see `load_server`)."""
    import xllamacpp

    threads = n_threads or os.cpu_count() or 1
    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one request at a time gets all of n_ctx, as one Llama context did
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.warmup = False  # a warm-up pass costs a second at load and changes no output
    params.no_extra_bufts = not repack_weights  # see LLMSettings.repack_weights
    params.cache_ram_mib = PROMPT_RAM_CACHE_MIB
    if not map_weights:
        params.load_mode = type(params.load_mode).LLAMA_LOAD_MODE_NONE
    if n_batch:
        params.n_batch = n_batch
        params.n_ubatch = min(params.n_ubatch, n_batch)
    params.offline = True  # never ask a model hub for anything
    params.verbosity = 0  # llama.cpp's per-request timing lines would flood the logs
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # any free port: two models in one process never collide
    params.api_keys = [secrets.token_hex(16)]
    if kv_dir:  # llama.cpp joins it to the file name as is
        params.slot_save_path = os.path.join(kv_dir, "")
    return params


@functools.cache
def load_server(
    model_path: str,
    sha256: str,
    n_ctx: int,
    n_threads: int | None,
    kv_dir: str | None = None,
    n_batch: int | None = None,
    map_weights: bool = True,
    repack_weights: bool = True,
) -> Any:
    """One xllamacpp `Server` per process and model identity (path and hash) and context size:
    loading the 1.1 GB model takes seconds, and a file replaced in place is a new model. The
    server is thread-safe; sampling settings (temperature, seed) travel with each request.

    Memory: repacking copies most weights (about 600 MB of the 1.1 GB file) into llama.cpp's own
    buffers. Memory-mapped, the file's pages are released after the load (`release_file_pages`)
    and only the tensors still read from the file stay resident, shared with other processes
    that map it: the lowest lasting RSS (1.2 GB for the packaged model), for a server. But while
    it loads, every page of the file is resident beside the copies (1.9 GB for a few seconds;
    the load holds the GIL, so nothing can release them meanwhile). Read into memory instead
    (`map_weights` false), the peak is the lasting size (1.3 GB, none of it shared): a batch
    run's choice, whose peak is what counts."""
    try:
        import xllamacpp
    except ImportError as exc:
        raise LLMError("xllamacpp is not installed (pip install 'grounding[llm]')") from exc
    params = server_params(
        model_path, n_ctx, n_threads, kv_dir, repack_weights, n_batch, map_weights
    )
    started = time.perf_counter()
    try:
        server = xllamacpp.Server(params)
    except (ValueError, RuntimeError, OSError) as exc:
        raise LLMError(f"llama.cpp could not load {model_path}: {exc}") from exc
    if repack_weights and map_weights:
        release_file_pages(model_path)
    trim_heap()  # the load's scratch buffers, freed but still held by malloc
    seconds = time.perf_counter() - started
    log.debug("llama.cpp loaded %s in %.2fs", model_path, seconds, extra={"load_s": seconds})
    _LOADED.append(server)
    if kv_dir:
        identity = f"{sha256}|{n_ctx}|{'repacked' if repack_weights else 'plain'}"
        _PREFIXES[id(server)] = PrefixStates(server, params.api_keys[0], kv_dir, identity)
    return server


def release_file_pages(path: str) -> int:
    """Drop this process's resident pages of the memory-mapped file `path` (Linux); returns the
    bytes advised. Repacking copies most of the GGUF's weights into llama.cpp's own buffers, yet
    every page it read from the mapping stays resident (about 600 MB of the 1.1 GB file that no
    token reads again). The mapping is read-only and file-backed, so a dropped page holds no
    data of its own: the tensors still read from the file fault back in from the page cache at
    the next token, and the process's RSS counts only those."""
    import ctypes
    import mmap

    advice = getattr(mmap, "MADV_DONTNEED", None)
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return 0
    if advice is None or not hasattr(libc, "madvise"):
        return 0
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    released = 0
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[5] != path or "w" in fields[1]:
            continue  # another file, or a writable mapping whose pages may hold data
        start, end = (int(value, 16) for value in fields[0].split("-"))
        if libc.madvise(start, end - start, advice) == 0:
            released += end - start
    return released


def _libc() -> Any:
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def trim_heap() -> bool:
    """Hand the memory malloc holds free back to the system (glibc's `malloc_trim`, which also
    releases free pages inside its heaps): after loading the GGUF about 17 MB of the load's
    scratch buffers stay in the process otherwise. False where there is no glibc."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    libc.malloc_trim(0)
    return True


class PrefixStates:
    """The KV state of each system prompt, saved once to disk and restored in later processes.

    A fresh process reads the generator's system prompt (295 tokens) again before its first
    answer: over 4 s of a 2-core `grounding ask`, which reads prompts at about 64 tokens/s.
    llama.cpp's slot save / restore (over the server's loopback HTTP, with its key) puts the
    saved state back in milliseconds, and its prompt cache then reuses it as the request's
    common prefix. The file name hashes the model, context size, binding version and prefix
    text; a file is written under a temporary name and renamed, and a restore that fails only
    costs the time it saves. Reuse is by exact token prefix, so a state can never change what
    a different prompt means.
    """

    def __init__(self, server: Any, api_key: str, directory: str, model_identity: str):
        self.server = server
        self.directory = Path(directory)
        self.identity = f"{model_identity}|{_binding_version()}"
        self._headers = {"Authorization": f"Bearer {api_key}"}
        self._primed: set[str] = set()
        self._lock = threading.Lock()

    def prime(self, prefix: str) -> str:
        """Make `prefix` the slot's cached prompt: restored from disk, or evaluated and saved.
        Returns what happened (restored | saved | done | failed), for tests and logs."""
        with self._lock:
            if prefix in self._primed:
                return "done"
            self._primed.add(prefix)
            name = hashlib.sha256(f"{self.identity}|{prefix}".encode()).hexdigest()[:40] + ".bin"
            try:
                if (self.directory / name).is_file():
                    return "restored" if self._slot("restore", name) else "failed"
                self.directory.mkdir(parents=True, exist_ok=True)
                request = {"prompt": prefix, "max_tokens": 1, "temperature": 0.0}
                request["cache_prompt"] = True
                server_reply(self.server.handle_completions(request), "prefix evaluation")
                partial = self.directory / f"{name}.{os.getpid()}.{threading.get_ident()}.part"
                if not self._slot("save", partial.name):
                    return "failed"
                os.replace(partial, self.directory / name)
                return "saved"
            except (OSError, LLMError, ValueError, RuntimeError):
                return "failed"  # the request evaluates the prefix itself, as without a cache

    def _slot(self, action: str, filename: str) -> bool:
        import httpx

        address = self.server.listening_address
        try:
            reply = httpx.post(
                f"{address}/slots/0?action={action}",
                json={"filename": filename},
                headers=self._headers,
                timeout=30.0,
                trust_env=False,
            )
        except httpx.HTTPError:
            return False
        return reply.status_code == 200


def _binding_version() -> str:
    """xllamacpp's version: a saved state is only read back by the build that wrote it."""
    from importlib import metadata

    try:
        return metadata.version("xllamacpp")
    except metadata.PackageNotFoundError:
        return ""


_PREFIXES: dict[int, PrefixStates] = {}


def prime_prefix(server: Any, prefix: str) -> str:
    """Restore (or save) the KV state of `prefix` on `server`; "off" without a kv_cache_dir."""
    states = _PREFIXES.get(id(server))
    return states.prime(prefix) if states else "off"


def save_system_prompts(settings: LLMSettings, systems: list[str]) -> list[str]:
    """Give each system prompt a saved KV state for `settings`' GGUF now, as the first request
    with it would (`grounding warm`, run by `make setup`), so no `ask` reads them again.

    One status per prompt: saved | restored | done | failed, or "off" for a server backend or
    without a `kv_cache_dir`. Raises `LLMError` when the model cannot be loaded."""
    if settings.backend != "llama_cpp" or not settings.kv_cache_dir:
        return ["off"] * len(systems)
    client = chat_client(settings)
    assert isinstance(client, LlamaCppClient)
    return [prime_prefix(client.server, chatml_system_prefix(system)) for system in systems]


def chatml_system_prefix(system: str) -> str:
    """The start of a ChatML prompt up to the user's text (Qwen2.5's template)."""
    return f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n"


def server_reply(body: Any, what: str) -> dict[str, Any]:
    """A `handle_*` reply, or `LLMError` for llama.cpp's error object (e.g. prompt > n_ctx)."""
    if not isinstance(body, dict):
        raise LLMError(f"llama.cpp {what} returned {type(body).__name__}, not an object")
    error = body.get("error")
    if error:
        message = error.get("message", error) if isinstance(error, dict) else error
        raise LLMError(f"llama.cpp {what} failed: {message}")
    log_timings(body.get("timings"), what)
    return body


def log_timings(timings: Any, what: str) -> None:
    """llama.cpp's own account of a request, at DEBUG: on 2 cores the time goes to the prompt
    tokens it reads (those reused from its cache cost nothing) and the tokens it generates."""
    if not isinstance(timings, dict) or not log.isEnabledFor(logging.DEBUG):
        return
    fields = {
        "reused_tokens": timings.get("cache_n"),
        "prompt_tokens": timings.get("prompt_n"),
        "prompt_s": round(float(timings.get("prompt_ms") or 0) / 1000, 3),
        "generated_tokens": timings.get("predicted_n"),
        "generation_s": round(float(timings.get("predicted_ms") or 0) / 1000, 3),
    }
    log.debug(
        "llama.cpp %s: read %s prompt tokens in %.2fs (%s reused), generated %s in %.2fs",
        what,
        fields["prompt_tokens"],
        fields["prompt_s"],
        fields["reused_tokens"],
        fields["generated_tokens"],
        fields["generation_s"],
        extra={"llm_call": what, **fields},
    )


class LlamaCppClient(ChatClient):
    """llama.cpp in process (xllamacpp). The GGUF is verified (cached hash) before the first load.

    The chat template is the GGUF's own (Jinja), as llama-cpp-python applied it before.
    """

    def __init__(
        self,
        model_path: Path | str,
        *,
        model_sha256: str | None = PACKAGED_MODEL_SHA256,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        seed: int = 0,
        kv_cache_dir: str | Path | None = None,
        repack_weights: bool = True,
    ) -> None:
        self.model_path = Path(model_path).resolve()
        self.sha256 = verify_gguf(self.model_path, model_sha256)
        self.model_id = model_id_for(self.model_path, self.sha256, repack_weights)
        self.params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        kv_dir = str(kv_cache_path(kv_cache_dir)) if kv_cache_dir else None
        self._load_args = (
            str(self.model_path),
            self.sha256,
            n_ctx,
            n_threads,
            kv_dir,
            _PROMPT_CHUNK[0] if _PROMPT_CHUNK else None,
            # a server maps the weights (lowest lasting RSS); a batch process reads them when
            # repacking (lowest peak); see load_server
            bool(_PROMPT_CHUNK) or not repack_weights,
            repack_weights,
        )

    @property
    def server(self) -> Any:
        return load_server(*self._load_args)

    def complete(self, messages: Messages, schema: dict[str, Any]) -> Completion:
        request = {
            "messages": messages,
            "response_format": {"type": "json_object", "schema": schema},
            **self.params,
        }
        first = messages[0] if messages else {}
        system = first.get("content") if first.get("role") == "system" else None
        stop = _STOP.get()
        raise_if_cancelled()
        try:
            if isinstance(system, str):  # the template is the GGUF's own; Qwen's is ChatML
                prime_prefix(self.server, chatml_system_prefix(system))
            if stop is None:
                body = self.server.handle_chat_completions(request)
            else:  # a caller with a deadline: streamed, so it can stop at any token
                body = _streamed_chat(self.server, request, stop)
        except Cancelled:
            raise
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp generation failed: {exc}") from exc
        return _completion_from(server_reply(body, "generation"))


RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAICompatibleClient(ChatClient):
    """POST {base_url}/chat/completions with bounded retries.

    Retries (at most `http_retries` after the first try) on connection errors, timeouts, 408/409/
    425/429 and 5xx, sleeping `backoff_s * 2**attempt` (jittered, capped at `max_backoff_s`); a
    429 or 503 with Retry-After waits that long instead, unless it exceeds `max_retry_after_s`,
    which fails at once. Other 4xx fail at once. `response_format`: `json_object` sends
    `{"type": "json_object", "schema": …}` (llama.cpp's server, as `python -m stages.models.server`
    runs it, or llama-server);
    `json_schema` sends OpenAI's structured-output form; `none` relies on the prompt alone.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        seed: int = 0,
        timeout_s: float = 60.0,
        connect_timeout_s: float = 5.0,
        http_retries: int = 2,
        backoff_s: float = 0.5,
        max_backoff_s: float = 8.0,
        max_retry_after_s: float = 30.0,
        response_format: str = "json_object",
        sleep: Callable[[float], None] = time.sleep,
        transport: Any = None,
    ) -> None:
        import httpx

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = f"openai-compatible:{model}"
        self.params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self.http_retries = http_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.response_format = response_format
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        options = {
            "headers": headers,
            "timeout": httpx.Timeout(timeout_s, connect=connect_timeout_s),
            "trust_env": False,  # never route a local server through a proxy from the environment
            "transport": transport,
        }
        self._http = httpx.Client(**options)
        # for callers with a stop flag: a connection of its own per call (no keep-alive), so a
        # stopped call can shut its socket even while the server has sent nothing yet
        self._stoppable = httpx.Client(**options, limits=httpx.Limits(max_keepalive_connections=0))

    def close(self) -> None:
        self._http.close()
        self._stoppable.close()

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.response_format == "json_object":
            return {"type": "json_object", "schema": schema}
        if self.response_format == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": "grounded_answer", "schema": schema, "strict": True},
            }
        return None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        base = min(self.max_backoff_s, self.backoff_s * 2**attempt)
        return base * (0.5 + random.random() / 2)

    def complete(self, messages: Messages, schema: dict[str, Any]) -> Completion:
        """One chat completion. Under a stop flag (`stop_when`) the reply is streamed and the
        call ends with `Cancelled` soon after the flag is set: its connection is shut, which
        tells the server its client left (llama.cpp's server then stops generating)."""
        import httpx

        payload: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        response_format = self._response_format(schema)
        if response_format:
            payload["response_format"] = response_format
        url = f"{self.base_url}/chat/completions"
        stop = _STOP.get()
        last_error = "no attempt"
        for attempt in range(self.http_retries + 1):
            raise_if_cancelled()
            retry_after = None
            try:
                if stop is None:
                    response = self._http.post(url, json=payload)
                else:
                    streamed = self._streamed(url, payload, stop)
                    if isinstance(streamed, Completion):
                        return streamed
                    response = streamed
            except Cancelled:
                raise
            except httpx.TimeoutException as exc:
                last_error = f"timeout after attempt {attempt + 1}: {type(exc).__name__}"
            except httpx.TransportError as exc:
                last_error = f"connection failed: {type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    try:
                        return _completion_from(response.json())
                    except ValueError as exc:
                        raise LLMError(f"server returned non-JSON body: {exc}") from exc
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in RETRY_STATUS:
                    raise LLMError(last_error)
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
                if retry_after is not None and retry_after > self.max_retry_after_s:
                    raise LLMError(f"{last_error} (Retry-After {retry_after:.0f}s is too long)")
            if attempt < self.http_retries:
                delay = self._delay(attempt, retry_after)
                if stop is None:
                    self._sleep(delay)
                elif stop.wait(delay):  # a backoff is no reason to outlive the caller
                    raise Cancelled("the request's deadline passed while waiting to retry")
        raise LLMError(f"{url}: gave up after {self.http_retries + 1} attempts: {last_error}")

    def _streamed(self, url: str, payload: dict[str, Any], stop: threading.Event) -> Any:
        """POST `payload` with `stream: true`: the `Completion`, or the response of a failed
        status (its body read) for the retry rules; `Cancelled` once `stop` is set. A watcher
        shuts the call's socket when the flag is set, so a read blocked on a server that has
        not answered yet ends too, not only one between two streamed tokens."""
        import socket

        import httpx

        sockets: list[Any] = []

        def trace(event: str, info: dict[str, Any]) -> None:
            if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
                stream = info.get("return_value")
                sock = stream.get_extra_info("socket") if stream is not None else None
                if sock is not None:
                    sockets.append(sock)

        finished = threading.Event()

        def watch() -> None:
            while not finished.wait(0.02):
                if stop.is_set():
                    for sock in sockets:
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)
                    return

        watcher = threading.Thread(target=watch, name="llm-stop-watch", daemon=True)
        watcher.start()
        request = {**payload, "stream": True}
        try:
            with self._stoppable.stream(
                "POST", url, json=request, extensions={"trace": trace}
            ) as response:
                if response.status_code != 200:
                    response.read()
                    return response
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    body = response.read()  # a server that answers in one piece
                    try:
                        return _completion_from(json.loads(body))
                    except ValueError as exc:
                        raise LLMError(f"server returned non-JSON body: {exc}") from exc
                return _completion_from_events(response.iter_lines(), stop)
        except httpx.HTTPError:
            if stop.is_set():
                raise Cancelled("the request's deadline passed; the stream was closed") from None
            raise
        finally:
            finished.set()


def _completion_from_events(lines: Iterator[str], stop: threading.Event) -> Completion:
    """A `Completion` from an OpenAI chat stream's server-sent events (`data: {...}` lines up to
    `data: [DONE]`); `Cancelled` as soon as `stop` is set between two of them."""
    parts: list[str] = []
    finish_reason, usage = None, {}
    for line in lines:
        if stop.is_set():
            raise Cancelled("the request's deadline passed; the stream was closed")
        if not line.startswith("data:"):
            continue  # comments, event names, keep-alive blank lines
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            break
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise LLMError(f"malformed event in the chat stream: {data[:200]}") from exc
        if not isinstance(chunk, dict):
            raise LLMError(f"malformed event in the chat stream: {data[:200]}")
        if chunk.get("error"):
            raise LLMError(f"the server failed mid-stream: {str(chunk['error'])[:200]}")
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                parts.append(delta["content"])
            if choice.get("finish_reason"):
                finish_reason = choice["finish_reason"]
        usage = chunk.get("usage") or usage
    if stop.is_set():
        raise Cancelled("the request's deadline passed; the stream was closed")
    return Completion(
        text="".join(parts),
        finish_reason=finish_reason,
        tokens_prompt=usage.get("prompt_tokens"),
        tokens_completion=usage.get("completion_tokens"),
    )


def chat_client(
    settings: LLMSettings,
    *,
    max_tokens: int = 256,
    temperature: float = 0.0,
    seed: int = 0,
) -> ChatClient:
    """The client `settings` name, for one use's sampling settings; raises `LLMError`."""
    if settings.backend == "openai_compatible":
        base_url = settings.server_base_url()
        if not base_url:
            raise LLMError("llm.base_url (or GROUNDING_LLM_BASE_URL) is not set")
        return OpenAICompatibleClient(
            base_url,
            settings.server_model(),
            api_key=settings.server_api_key(),
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
            timeout_s=settings.timeout_s,
            connect_timeout_s=settings.connect_timeout_s,
            http_retries=settings.http_retries,
            backoff_s=settings.backoff_s,
            response_format=settings.response_format,
        )
    return LlamaCppClient(
        settings.path,
        model_sha256=settings.sha256,
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        kv_cache_dir=settings.kv_cache_dir,
        repack_weights=settings.repack_weights,
    )


class LazyClient:
    """A chat client built on first use and at most once, for one run.

    Never a module global: a second run in the same process (a backfill partition, `grounding
    serve`, a Dask worker) with another model must not reuse this one. A failure to build it is
    kept and raised again, so a missing model costs one attempt per run, not one per question.
    """

    def __init__(self, factory: Callable[[], ChatClient]) -> None:
        self._factory = factory
        self._client: ChatClient | None = None
        self._error: str | None = None

    def get(self) -> ChatClient:
        if self._client is None and self._error is None:
            try:
                self._client = self._factory()
            except LLMError as exc:
                self._error = str(exc)
        if self._client is None:
            raise LLMError(self._error or "no chat client")
        return self._client


# ---------------------------------------------------------------- validated structured calls

VALIDATION_RETRY_PROMPT = (
    "Your reply was rejected: {error}. Reply again with one JSON object that follows the schema."
)


def tool_call_record(
    tool: str, attempt: int, status: str, errors: list[str], args: dict[str, Any]
) -> dict[str, Any]:
    """One row of the TOOL_CALLS contract (without question_id, which the stage adds)."""
    return {
        "tool": tool,
        "attempt": attempt,
        "args": json.dumps(args, sort_keys=True, default=str),
        "status": status,
        "errors": errors,
    }


def messages_hash(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]


def call_validated(
    client: ChatClient,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    parse: Callable[[str], Any],
    *,
    tool: str,
    max_retries: int = 1,
) -> tuple[Any | None, list[dict[str, Any]]]:
    """Ask for a structured output, validate it with `parse`, feed errors back, bounded.

    Returns (the parsed value or None, one TOOL_CALLS record per attempt). `parse` raises
    ValueError (pydantic's ValidationError is one) on an output that breaks the schema; a client
    failure ends the call at once with status "error".
    """
    args = {"model_id": getattr(client, "model_id", None), "prompt_hash": messages_hash(messages)}
    records: list[dict[str, Any]] = []
    for attempt in range(1, max_retries + 2):
        try:
            completion = client.complete(messages, schema)
        except LLMError as exc:
            records.append(tool_call_record(tool, attempt, "error", [str(exc)[:300]], args))
            return None, records
        try:
            value = parse(completion.text)
        except ValueError as exc:
            error = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            records.append(tool_call_record(tool, attempt, "invalid", [error], args))
            messages = [
                *messages,
                {"role": "assistant", "content": (completion.text or "")[:2000]},
                {"role": "user", "content": VALIDATION_RETRY_PROMPT.format(error=error)},
            ]
            continue
        records.append(tool_call_record(tool, attempt, "valid", [], args))
        return value, records
    return None, records
