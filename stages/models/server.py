"""A local OpenAI-compatible server over a GGUF (the packaged one by default), on loopback only.

    python -m stages.models.server [--model PATH] [--port 8080] [--alias local] [--n-ctx 4096]

llama.cpp's own HTTP server (`/v1/chat/completions`, `/v1/models`, …) run by the xllamacpp
binding in a process of its own, for tests, benchmarks and anyone who wants the packaged model
behind the `openai_compatible` backend. It binds 127.0.0.1 only and downloads nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
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
    """`python -m stages.models.server` in a child process on 127.0.0.1.

    Yields the base URL (".../v1"); the server process is terminated on exit, whatever happened.
    """
    import subprocess

    import httpx

    port = free_port()
    command = [sys.executable, "-m", "stages.models.server", "--model", str(model_path)]
    command += ["--port", str(port), "--alias", alias]
    command += ["--n-ctx", str(n_ctx), "--n-threads", str(n_threads)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + startup_timeout_s
    try:
        while True:
            if process.poll() is not None:
                tail = process.stderr.read().decode(errors="replace")[-2000:]
                raise LLMError(f"stages.models.server exited: {tail}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{base_url}/models", timeout=1, trust_env=False).is_success:
                    break
            if time.monotonic() > deadline:
                raise LLMError(f"stages.models.server did not come up within {startup_timeout_s} s")
            time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(model_path: str, port: int, alias: str, n_ctx: int, n_threads: int | None) -> None:
    """Load the model, listen on 127.0.0.1:`port` until SIGTERM or Ctrl-C, then stop cleanly."""
    from stages.models.chat import server_params

    try:
        import xllamacpp
    except ImportError as exc:
        raise LLMError("xllamacpp is not installed (pip install 'grounding[llm]')") from exc
    params = server_params(model_path, n_ctx, n_threads)
    params.port = port
    params.api_keys = []  # a local server for local clients: loopback is the boundary
    params.model_alias = {alias}
    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:
        raise LLMError(f"llama.cpp could not load {model_path}: {exc}") from exc
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"serving {model_path} as {alias!r} on {server.listening_address}/v1", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    del server  # joins llama.cpp's threads before the interpreter goes away


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stages.models.server", description=__doc__)
    parser.add_argument("--model", default=DEFAULT_MODEL_PATH, help="a GGUF file")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--alias", default="local", help="the model name clients send")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        serve(args.model, args.port, args.alias, args.n_ctx, args.n_threads)
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
