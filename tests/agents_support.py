"""Shared by the test_agents_* modules: an engine on a copy of the sample store, API keys for
every principal, and a real uvicorn server on a free loopback port in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import httpx
import uvicorn

from agents.serving.agents_config import load_agents_config
from agents.serving.auth import key_hash
from agents.serving.engine import Engine
from tests.conftest import ROOT, config_on_copy

PRINCIPALS = ("employee", "hr_manager", "sales_rep", "support_agent", "contractor")
KEYS = {principal: f"test-key-{principal}" for principal in PRINCIPALS}
FLAGSHIP = "How much does the Enterprise plan cost per user per month?"
MISSING_CLIENT = "What is the termination notice in our contract with Initech?"


def make_engine(shared_store, tmp_path_factory, **agents_overrides) -> Engine:
    config = config_on_copy(shared_store, tmp_path_factory.mktemp("agents"), "kb")
    agents = load_agents_config(
        ROOT / "configs" / "agents.yaml",
        # the LLM's confidence check costs a GGUF call a pricing search; off in these tests
        confidence_check_query_types=[],
        api_keys={key_hash(key): principal for principal, key in KEYS.items()},
        **agents_overrides,
    )
    return Engine(config, agents)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(app, port: int | None = None):
    """`app` on uvicorn at http://127.0.0.1:<port> until the block ends."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def readable_docs(engine: Engine, principal: str) -> set[str]:
    """The doc ids `principal` may read, straight from the documents and principals.yaml."""
    groups = set(engine.config.stage_config("source_selection").principals.get(principal, []))
    rows = engine.shared["documents"].select(["doc_id", "permission_set"]).to_pylist()
    return {r["doc_id"] for r in rows if groups & set(r["permission_set"])}


def leak_queries(engine: Engine) -> list[tuple[str, str | None]]:
    """Every sample question, and per restricted document its own title as a query (the
    query most likely to pull it up)."""
    import json

    questions = [
        json.loads(line) for line in (ROOT / "data/sample/questions.jsonl").read_text().splitlines()
    ]
    queries = [(q["question"], q.get("query_type")) for q in questions]
    rows = engine.shared["documents"].select(["title", "permission_set"]).to_pylist()
    queries += [(r["title"], None) for r in rows if r["permission_set"] != ["everyone"]]
    return queries


def wait_http(url: str) -> None:
    httpx.get(f"{url}/health", timeout=10).raise_for_status()
