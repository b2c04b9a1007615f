"""Serving agents (issue 43): the HTTP API under load, on the sample corpus, over loopback.

The server is `grounding api` in a child process (its index loaded once), with an API key per
principal of configs/principals.yaml (each sample question is asked as its own principal). The
bench process is the clients:
1. /v1/search latency without the LLM (confidence_check false): every sample question once,
   sequentially, after a warm-up; p50 / p95.
2. /v1/search with the LLM's confidence check on a critical query type (pricing): p50 over the
   first `CHECKED` pricing questions, after one warm-up call that loads the model.
3. The soak: 16 concurrent clients, 2,000 searches in all (the sample questions round-robin, no
   LLM): errors (any non-200, any technical_error), searches/s, and the server's RSS before and
   after (VmRSS of the child, after the warm-up).
4. Tool-result states against `grounding run`: the same questions through the whole pipeline
   (flows.executor.run_stages, the batch run) as each one's principal; a tool result agrees when
   success / low_relevance meets an answered question and not_found meets a refused or blocked
   one. The rerank state itself is compared too.

    .venv/bin/python -m bench serving
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench import common

NAME = "serving"
DESCRIPTION = "HTTP API: /v1/search p50/p95, 16 clients x 2,000 searches, RSS, states vs run"
CLIENTS = 16
SEARCHES = 2000
CHECKED = 8
TARGETS = {
    "search_p50_ms": 80,
    "search_p95_ms": 250,
    "checked_p50_s": 2.5,
    "soak_errors": 0,
    "soak_searches_per_s": 40,
    "rss_growth_mb": 50,
    "states_agreement": 0.95,
}
WORK = common.CACHE / "serving"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _questions() -> list[dict]:
    path = common.ROOT / "data" / "sample" / "questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _agents_config(folder: Path, principals: list[str]) -> tuple[Path, dict[str, str]]:
    from agents.serving.auth import key_hash

    keys = {p: f"bench-key-{p}" for p in principals}
    raw = yaml.safe_load((common.ROOT / "configs" / "agents.yaml").read_text())
    raw["api_keys"] = {key_hash(k): p for p, k in keys.items()}
    path = folder / "agents.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path, keys


def _batch_run(store: Path, questions: list[dict]) -> dict[str, dict]:
    """What `grounding run` decides for each question (the plain runner, same store)."""
    from flows.config import load_config
    from flows.executor import questions_table, run_stages

    config = load_config(common.ROOT / "configs" / "pipeline.yaml", {"store": str(store)})
    table = questions_table(questions, config.default_principal, config.default_query_type)
    result = run_stages(config, table)
    store_ = config.artifact_store()
    states = store_.read_table(result.refs["rerank"], "rerank_status").to_pylist()
    finals = {r["question_id"]: r["status"] for r in result.final_answers.to_pylist()}
    return {
        s["question_id"]: {"state": s["state"], "final": finals[s["question_id"]]} for s in states
    }


def _start_server(store: Path, agents: Path, port: int) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "grounding"),
        "api",
        "--port",
        str(port),
        "--agents-config",
        str(agents),
        "--set",
        f"store={store}",
    ]
    server = subprocess.Popen(command, cwd=common.ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).raise_for_status()
            return server
        except httpx.HTTPError:
            if server.poll() is not None:
                raise RuntimeError("grounding api exited before it served") from None
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError("grounding api did not answer /health within 300 s")


def _search(client: httpx.Client, question: dict, keys: dict, check: bool | None) -> tuple:
    body = {"query": question["question"], "query_type": question.get("query_type")}
    if check is not None:
        body["confidence_check"] = check
    headers = {"Authorization": f"Bearer {keys[question['principal']]}"}
    started = time.perf_counter()
    response = client.post("/v1/search", json=body, headers=headers)
    seconds = time.perf_counter() - started
    status = response.json().get("status") if response.status_code == 200 else None
    return seconds, response.status_code, status


def _soak(url: str, questions: list[dict], keys: dict) -> dict[str, Any]:
    """CLIENTS threads, SEARCHES searches in all, each thread its own connection."""
    errors: list[str] = []
    seconds: list[float] = []
    lock = threading.Lock()
    per_client = [list(range(i, SEARCHES, CLIENTS)) for i in range(CLIENTS)]

    def client_loop(numbers: list[int]) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            for n in numbers:
                try:
                    took, code, status = _search(client, questions[n % len(questions)], keys, False)
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(type(exc).__name__)
                    continue
                with lock:
                    seconds.append(took)
                    if code != 200 or status == "technical_error":
                        errors.append(f"{code} {status}")

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in per_client]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    return {
        "clients": CLIENTS,
        "searches": SEARCHES,
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:10],
        "wall_s": round(wall, 2),
        "searches_per_s": round(SEARCHES / wall, 1),
        "latency": common.latency_stats(seconds),
    }


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    questions = _questions()
    principals = sorted({q["principal"] for q in questions} | {"employee"})
    WORK.mkdir(parents=True, exist_ok=True)
    store = WORK / "artifacts"
    with tempfile.TemporaryDirectory(prefix="bench-serving-") as tmp:
        agents, keys = _agents_config(Path(tmp), principals)
        common.console.print("  the batch run (grounding run's decisions)…")
        batch = _batch_run(store, questions)
        port = _free_port()
        server = _start_server(store, agents, port)
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=url, timeout=120) as client:
                for question in questions[:10]:  # warm-up: embedding model, page cache
                    _search(client, question, keys, False)
                timed, states = [], {}
                for question in questions:
                    took, code, status = _search(client, question, keys, False)
                    timed.append(took)
                    states[question["question_id"]] = status
                pricing = [q for q in questions if q["query_type"] == "pricing"][: CHECKED + 1]
                checked = []
                for number, question in enumerate(pricing):
                    took, code, status = _search(client, question, keys, None)
                    if number:  # the first call loads the GGUF
                        checked.append(took)
                rss_before = _rss_mb(server.pid)
                soak = _soak(url, questions, keys)
                rss_after = _rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    agreement = _agreement(questions, states, batch)
    search = common.latency_stats(timed)
    checked_stats = common.latency_stats(checked)
    payload = {
        "targets": TARGETS,
        "search_no_llm": search,
        "search_checked_pricing": {
            **checked_stats,
            "p50_s": round(checked_stats["p50_ms"] / 1000, 3),
        },
        "soak": {
            **soak,
            "rss_before_mb": rss_before,
            "rss_after_mb": rss_after,
            "rss_growth_mb": round(rss_after - rss_before, 1),
        },
        "states": agreement,
        "met": {
            "search_p50": search["p50_ms"] <= TARGETS["search_p50_ms"],
            "search_p95": search["p95_ms"] <= TARGETS["search_p95_ms"],
            "checked_p50": checked_stats["p50_ms"] / 1000 <= TARGETS["checked_p50_s"],
            "soak_errors": soak["errors"] == 0,
            "soak_throughput": soak["searches_per_s"] >= TARGETS["soak_searches_per_s"],
            "rss_growth": rss_after - rss_before <= TARGETS["rss_growth_mb"],
            "states": agreement["agreement"] >= TARGETS["states_agreement"],
        },
    }
    common.write_result(NAME, payload, results_dir)
    return payload


def _agreement(questions: list[dict], states: dict, batch: dict) -> dict[str, Any]:
    agree, same_state, disagreements = 0, 0, []
    for question in questions:
        qid = question["question_id"]
        tool, decided = states[qid], batch[qid]
        content = tool in ("success", "low_relevance")
        if content == (decided["final"] == "answered"):
            agree += 1
        else:
            disagreements.append({"question_id": qid, "tool": tool, **decided})
        same_state += tool == decided["state"]
    n = len(questions)
    return {
        "questions": n,
        "agreement": round(agree / n, 4),
        "rerank_state_agreement": round(same_state / n, 4),
        "disagreements": disagreements,
    }


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def summarize(result: dict[str, Any]) -> str:
    s, c = result["search_no_llm"], result["search_checked_pricing"]
    k, st = result["soak"], result["states"]
    rows = [
        (
            "/v1/search (no LLM) p50 / p95",
            f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} ms",
            "≤ 80 / 250",
        ),
        ("/v1/search, confidence check (pricing) p50", f"{c['p50_s']:.2f} s", "≤ 2.5 s"),
        (f"{k['clients']} clients, {k['searches']:,} searches: errors", k["errors"], "0"),
        ("searches/s", k["searches_per_s"], "≥ 40"),
        ("server RSS growth after the soak", f"{k['rss_growth_mb']} MB", "≤ 50 MB"),
        ("tool-result states as `grounding run` decides", f"{st['agreement']:.1%}", "≥ 95 %"),
    ]
    lines = ["| measure | measured | target |", "|---|---:|---:|"]
    return "\n".join(lines + [f"| {a} | {b} | {c} |" for a, b, c in rows])


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, default=str)[:3000])
