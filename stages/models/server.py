"""A local OpenAI-compatible server over the packaged GGUF, for tests and benchmarks only."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator

from stages.models.errors import LLMError
from stages.models.files import DEFAULT_MODEL_PATH


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
) -> Iterator[str]:
    """llama-cpp-python's own OpenAI-compatible server on 127.0.0.1.

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
