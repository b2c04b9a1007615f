"""Serving agents: the HTTP API under load, on the sample corpus, over loopback.

The server is `grounding api` in a child process (its index loaded once), with an API key per
principal of configs/principals.yaml (each sample question is asked as its own principal). The
bench process is the clients:
1. /v1/search latency without the LLM (confidence_check false): every sample question once,
   sequentially, after a warm-up; p50 / p95.
2. /v1/search with the LLM's confidence check on a critical query type (pricing): p50 over the
   first `CHECKED` pricing questions, after one warm-up call that loads the model.
3. The soak: 16 concurrent clients, 2,000 requests in all, mixing searches (the sample
   questions round-robin, no LLM), answers (every 100th) and run checks (every 25th): errors (any
   status but 200 and 429, any technical_error but rate_limit), 429s counted apart, requests/s,
   p95 per endpoint, and the server's RSS before and after (VmRSS of the child once the model is
   loaded); flat means within 10 %.
5. Start: seconds from `grounding api` spawned to /health answering, on the built sample store
   (a fresh copy each run, so nothing answered by an earlier run is read back); RSS with the
   model loaded, and (parts checked and soak) after one answer and one check: the first answer
   runs every stage, guardrails included, whatever parts ran before it.
6. Cancellation (the packaged GGUF in this process, reading prompts in chunks as a server
   does): requests stopped while the model reads a long prompt and while it generates, several
   of each: seconds from the stop flag to the call returning and to llama.cpp's slot idle
   (median and max), with the chunk and token intervals at the time (on a loaded machine both
   scale with them).
4. Tool-result states against `grounding run`: the same questions through the whole pipeline
   (flows.executor.run_stages, the batch run) as each one's principal; a tool result agrees when
   success / low_relevance meets an answered question and not_found meets a refused or blocked
   one. The rerank state itself is compared too.

    .venv/bin/python -m bench serving

`GROUNDING_BENCH_SOAK_REQUESTS=N` runs the soak with N requests (same mix) instead of 2,000;
the result is then written as serving-soakN.json, never as the full run's file.
`GROUNDING_BENCH_SERVING_PARTS=soak,cancel` runs only those parts (of latency, checked, soak,
cancel, states; start and the loaded RSS are always measured).

The server's RSS is read from /proc as VmRSS, RssAnon and RssFile: the GGUF is memory-mapped,
and its file pages are shared with other processes mapping it and reclaimable, unlike RssAnon.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
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
DESCRIPTION = "HTTP API: /v1/search p50/p95, a 16-client mixed soak, RSS, start, cancel, states"
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
    "rss_growth_pct": 10,
    "rss_loaded_mb": 1500,  # MiB, as /proc counts them: under 1.5 GiB with a margin
    "start_s": 10,
    "stop_to_return_s": 1.0,
    "states_agreement": 0.95,
}
ANSWER_EVERY, CHECK_EVERY = 100, 25
WORK = common.CACHE / "serving"
PARTS = ("latency", "checked", "soak", "cancel", "states")
CANCEL_RUNS = 5


def _memory_mb(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon, RssFile and VmHWM (the peak) of process `pid`, in MB."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            found[key] = round(int(line.split()[1]) / 1024, 1)
    return found


def _rss_mb(pid: int) -> float:
    return _memory_mb(pid).get("VmRSS", float("nan"))


def _soak_size() -> int:
    return int(os.environ.get("GROUNDING_BENCH_SOAK_REQUESTS") or SEARCHES)


def _parts() -> set[str]:
    chosen = os.environ.get("GROUNDING_BENCH_SERVING_PARTS")
    if not chosen:
        return set(PARTS)
    parts = {p.strip() for p in chosen.split(",") if p.strip()}
    if parts - set(PARTS):
        raise ValueError(f"unknown parts {sorted(parts - set(PARTS))}; choose from {PARTS}")
    return parts


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
    from flows.executor import questions_table, run_stages
    from flows.pipeline_config import load_config

    config = load_config(common.ROOT / "configs" / "pipeline.yaml", {"store": str(store)})
    table = questions_table(questions, config.default_principal, config.default_query_type)
    result = run_stages(config, table)
    store_ = config.artifact_store()
    states = store_.read_table(result.refs["rerank"], "rerank_status").to_pylist()
    finals = {r["question_id"]: r["status"] for r in result.final_answers.to_pylist()}
    return {
        s["question_id"]: {"state": s["state"], "final": finals[s["question_id"]]} for s in states
    }


def _start_server(store: Path, agents: Path, port: int) -> tuple[subprocess.Popen, float]:
    command = [
        sys.executable,  # the command line as a module: an installed entry point can be stale
        "-m",
        "cli",
        "api",
        "--port",
        str(port),
        "--agents-config",
        str(agents),
        "--set",
        f"store={store}",
    ]
    started = time.monotonic()
    server = subprocess.Popen(command, cwd=common.ROOT, stderr=subprocess.DEVNULL)
    deadline = started + 300
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).raise_for_status()
            return server, round(time.monotonic() - started, 2)
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


RUN = {
    "question": "How much does the Enterprise plan cost per user per month?",
    "tool_results": [{"tool": "search_knowledge_base", "content": "Enterprise: €49 a user."}],
    "answer": "The Enterprise plan costs €49 per user per month.",
}


def _request(client: httpx.Client, n: int, question: dict, keys: dict) -> tuple:
    """Request number `n` of the soak: an answer, a run check or (mostly) a search."""
    headers = {"Authorization": f"Bearer {keys[question['principal']]}"}
    if n % ANSWER_EVERY == ANSWER_EVERY - 1:
        path, body = "/v1/answer", {"question": question["question"]}
    elif n % CHECK_EVERY == CHECK_EVERY - 1:
        path, body = "/v1/check", {"run": RUN}
    else:
        path = "/v1/search"
        body = {"query": question["question"], "query_type": question.get("query_type")}
        body["confidence_check"] = False
    started = time.perf_counter()
    response = client.post(path, json=body, headers=headers)
    seconds = time.perf_counter() - started
    is_json = response.headers.get("content-type", "").startswith("application/json")
    reply = response.json() if is_json else {}
    result = reply.get("result") if path == "/v1/answer" else reply
    status = (result or {}).get("status") if isinstance(result, dict) else None
    kind = (result or {}).get("error_kind") if isinstance(result, dict) else None
    return path, seconds, response.status_code, status, kind


def _soak(url: str, questions: list[dict], keys: dict, pid: int) -> dict[str, Any]:
    """CLIENTS threads, `_soak_size()` requests in all (mixed), each thread its own
    connection; the server's memory sampled every second."""
    total = _soak_size()
    errors: list[str] = []
    busy = 0
    busy_by_path: dict[str, int] = {}
    seconds: dict[str, list[float]] = {}
    lock = threading.Lock()
    per_client = [list(range(i, total, CLIENTS)) for i in range(CLIENTS)]
    samples: list[dict[str, float]] = []
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(1.0):
            with contextlib.suppress(OSError):
                samples.append(_memory_mb(pid))

    def client_loop(numbers: list[int]) -> None:
        nonlocal busy
        with httpx.Client(base_url=url, timeout=300) as client:
            for n in numbers:
                try:
                    path, took, code, status, kind = _request(
                        client, n, questions[n % len(questions)], keys
                    )
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(type(exc).__name__)
                    continue
                with lock:
                    if code == 429:
                        busy += 1
                        busy_by_path[path] = busy_by_path.get(path, 0) + 1
                        continue
                    seconds.setdefault(path, []).append(took)
                    if code != 200 or (status == "technical_error" and kind != "rate_limit"):
                        errors.append(f"{path} {code} {status}")

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in per_client]
    sampler = threading.Thread(target=sample, daemon=True)
    started = time.perf_counter()
    sampler.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    finished.set()
    everything = [t for times in seconds.values() for t in times]
    rss = [s["VmRSS"] for s in samples if "VmRSS" in s]
    return {
        "clients": CLIENTS,
        "searches": total,  # the name earlier results used for the request count
        "requests": total,
        "requests_target": SEARCHES,
        "full_size": total == SEARCHES,
        "mix": {"answer_every": ANSWER_EVERY, "check_every": CHECK_EVERY, "rest": "search"},
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:10],
        "busy_429": busy,
        "busy_429_by_path": busy_by_path,
        "wall_s": round(wall, 2),
        "searches_per_s": round(total / wall, 1),
        "latency": common.latency_stats(everything),
        "latency_by_path": {p: common.latency_stats(t) for p, t in sorted(seconds.items())},
        "rss_samples": len(rss),
        "rss_min_mb": min(rss) if rss else None,
        "rss_max_mb": max(rss) if rss else None,
        "rss_series_mb": rss[:: max(1, len(rss) // 60)],  # at most ~60 points
    }


def _cancel_probe(runs: int = CANCEL_RUNS) -> dict[str, Any]:
    """Requests stopped while the model reads a long prompt (0.5 s in) and while it generates
    (after 6 tokens), `runs` of each, on a server reading prompts in chunks as `grounding api`
    does: seconds from the stop flag to the call returning and to the slot idle (llama.cpp's
    own metrics), and the chunk / token interval at the time."""
    import re

    import xllamacpp

    from stages.models import chat
    from stages.models.files import DEFAULT_MODEL_PATH

    stamps: list[tuple[float, bool]] = []  # (time, a prompt-progress chunk)

    class Timed:  # the server, with the time of every callback
        def handle_chat_completions(self, request, callback=None):
            def on_chunk(chunk):
                progress = isinstance(chunk, dict) and bool(chunk.get("prompt_progress"))
                stamps.append((time.perf_counter(), progress))
                return callback(chunk)

            return server.handle_chat_completions(request, on_chunk)

    class TimedClient(chat.LlamaCppClient):
        @property
        def server(self):
            return Timed()

    client = TimedClient(common.ROOT / DEFAULT_MODEL_PATH, max_tokens=400)
    params = chat.server_params(
        str(client.model_path), 4096, None, n_batch=chat.SERVING_PROMPT_CHUNK
    )
    params.endpoint_metrics = True  # llama.cpp's own account of requests in progress
    server = xllamacpp.Server(params)
    schema = {"type": "object", "properties": {"story": {"type": "string"}}}

    def one(phase: str, number: int) -> dict[str, Any]:
        stamps.clear()
        # a new prompt each time, so nothing of it is in the model's prompt cache; long (about
        # 1,300 tokens) where the stop comes while it is read, short where it comes at a token
        facts = 90 if phase == "prompt" else 3
        filler = " ".join(
            f"Fact {number}.{i}: item {i} weighs {i * 7 % 13} kg." for i in range(facts)
        )
        text = f'{filler}\nWrite a 400-word story about item {number} as JSON {{"story": ...}}.'
        messages = [{"role": "user", "content": text}]
        stop, ended = threading.Event(), []

        def generate() -> None:
            with chat.stop_when(stop), contextlib.suppress(chat.Cancelled):
                client.complete(messages, schema)
            ended.append(time.perf_counter())

        worker = threading.Thread(target=generate)
        started = time.perf_counter()
        worker.start()
        if phase == "prompt":
            time.sleep(0.5)
        else:
            while sum(not p for _, p in stamps) < 6 and worker.is_alive():
                time.sleep(0.01)
        stopped = time.perf_counter()
        reading = not any(not p for _, p in stamps)  # no token yet: still reading the prompt
        stop.set()
        worker.join()
        idle = None
        while time.perf_counter() - stopped < 60:
            found = re.search(r"requests_processing\s+([0-9.]+)", str(server.handle_metrics()))
            if found and float(found.group(1)) == 0:
                idle = time.perf_counter() - stopped
                break
            time.sleep(0.02)
        kind = phase == "prompt"
        times = [t for t, p in stamps if p == kind]
        gaps = sorted(b - a for a, b in zip(times[1:], times[2:], strict=False))
        return {
            "phase": phase,
            "stopped_while_reading_prompt": reading,
            "stopped_after_s": round(stopped - started, 3),
            "interval_s": round(gaps[len(gaps) // 2], 3) if gaps else None,
            "stop_to_return_s": round(ended[0] - stopped, 3),
            "stop_to_slot_idle_s": None if idle is None else round(idle, 3),
        }

    trials = [one(phase, n) for n in range(runs) for phase in ("prompt", "generation")]

    def summary(phase: str) -> dict[str, Any]:
        chosen = [t for t in trials if t["phase"] == phase]
        returned = [t["stop_to_return_s"] for t in chosen]
        idle = [t["stop_to_slot_idle_s"] for t in chosen if t["stop_to_slot_idle_s"] is not None]
        intervals = [t["interval_s"] for t in chosen if t["interval_s"] is not None]
        return {
            "runs": len(chosen),
            "stop_to_return_median_s": round(statistics.median(returned), 3),
            "stop_to_return_max_s": max(returned),
            "stop_to_slot_idle_median_s": round(statistics.median(idle), 3) if idle else None,
            "stop_to_slot_idle_max_s": max(idle) if idle else None,
            "interval_median_s": round(statistics.median(intervals), 3) if intervals else None,
        }

    prompt, generation = summary("prompt"), summary("generation")
    return {
        "prompt_chunk_tokens": chat.SERVING_PROMPT_CHUNK,
        "while_reading_prompt": prompt,
        "while_generating": generation,
        "trials": trials,
        # the figure the target reads: the worst of both phases
        "stop_to_return_s": max(prompt["stop_to_return_max_s"], generation["stop_to_return_max_s"]),
        "stop_to_slot_idle_s": max(
            (
                v
                for v in (prompt["stop_to_slot_idle_max_s"], generation["stop_to_slot_idle_max_s"])
                if v is not None
            ),
            default=None,
        ),
    }


def _corpus_only_copy(store: Path, target: Path) -> Path:
    """A copy of `store` with the corpus's shared stages (ingestion, indexing, their side
    folders, the corpus listing and the LLM's saved prompt states) and no question's outputs.

    The server writes each answer's stage outputs into its store, keyed by the request's question
    id (ans1, ans2…, numbered by the requests before it). Served from the bench's own store, a
    later run whose parts put the same id on its first answer read that answer back: the
    guardrails never ran, their spaCy parser (about 55 MB) stayed out of the warmed RSS, and the
    figure depended on which parts ran (1,491 MiB for checked, 1,551 for soak)."""
    from flows.registry import shared_stages

    kept = set(shared_stages()) | {"corpus", "_llm_kv"}

    def skipped(folder: str, names: list[str]) -> list[str]:
        if Path(folder) != store:
            return []
        return [name for name in names if name.split(".")[0] not in kept]

    shutil.copytree(store, target, ignore=skipped)
    return target


def _build_store(store: Path) -> None:
    """The sample corpus's index in `store`, so the server starts on a built store."""
    from flows.executor import run_shared_stages
    from flows.pipeline_config import load_config

    run_shared_stages(load_config(common.ROOT / "configs" / "pipeline.yaml", {"store": str(store)}))


def run(results_dir: Path | None = None, **_: Any) -> dict[str, Any]:
    parts = _parts()
    questions = _questions()
    principals = sorted({q["principal"] for q in questions} | {"employee"})
    WORK.mkdir(parents=True, exist_ok=True)
    store = WORK / "artifacts"
    batch, timed, states, checked, soak = {}, [], {}, [], None
    memory: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-serving-") as tmp:
        agents, keys = _agents_config(Path(tmp), principals)
        if "states" in parts:
            common.console.print("  the batch run (grounding run's decisions)…")
            batch = _batch_run(store, questions)
        else:
            _build_store(store)
        served = _corpus_only_copy(store, Path(tmp) / "store")
        port = _free_port()
        server, start_s = _start_server(served, agents, port)
        memory["started"] = _memory_mb(server.pid)
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=url, timeout=300) as client:
                for question in questions[:10]:  # warm-up: embedding model, page cache
                    _search(client, question, keys, False)
                if "latency" in parts or "states" in parts:
                    for question in questions:
                        took, code, status = _search(client, question, keys, False)
                        timed.append(took)
                        states[question["question_id"]] = status
                memory["searched"] = _memory_mb(server.pid)
                pricing = [q for q in questions if q["query_type"] == "pricing"]
                pricing = pricing[: CHECKED + 1 if "checked" in parts else 1]
                for number, question in enumerate(pricing):
                    took, code, status = _search(client, question, keys, None)
                    if number:  # the first call loads the GGUF
                        checked.append(took)
            memory["loaded"] = _memory_mb(server.pid)  # the model is loaded: a checked search
            if "soak" in parts or "checked" in parts:
                # one answer and one check first: their first calls load what they use (the
                # checker's models), which is start-up, not growth under load
                with httpx.Client(base_url=url, timeout=300) as client:
                    for n in (ANSWER_EVERY - 1, CHECK_EVERY - 1):
                        _request(client, n, questions[0], keys)
                memory["warmed"] = _memory_mb(server.pid)
            if "soak" in parts:
                common.console.print(f"  the soak: {_soak_size()} requests, {CLIENTS} clients…")
                soak = _soak(url, questions, keys, server.pid)
                memory["after_soak"] = _memory_mb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=30)
    cancel = None
    if "cancel" in parts:
        common.console.print("  cancellation while reading a prompt and while generating…")
        cancel = _cancel_probe()
    rss_before = memory["loaded"]["VmRSS"]
    payload: dict[str, Any] = {
        "targets": TARGETS,
        "parts": sorted(parts),
        "start_s": start_s,
        "rss_loaded_mb": rss_before,
        "memory_mb": memory,
        "met": {
            "rss_loaded": rss_before <= TARGETS["rss_loaded_mb"],
            "start": start_s <= TARGETS["start_s"],
        },
    }
    if timed:
        search = common.latency_stats(timed)
        payload["search_no_llm"] = search
        payload["met"]["search_p50"] = search["p50_ms"] <= TARGETS["search_p50_ms"]
        payload["met"]["search_p95"] = search["p95_ms"] <= TARGETS["search_p95_ms"]
    if "warmed" in memory:  # after its first answer and check: every model it uses is in
        payload["rss_warmed_mb"] = memory["warmed"]["VmRSS"]
        payload["met"]["rss_warmed"] = memory["warmed"]["VmRSS"] <= TARGETS["rss_loaded_mb"]
    if checked:
        checked_stats = common.latency_stats(checked)
        payload["search_checked_pricing"] = {
            **checked_stats,
            "p50_s": round(checked_stats["p50_ms"] / 1000, 3),
        }
        payload["met"]["checked_p50"] = checked_stats["p50_ms"] / 1000 <= TARGETS["checked_p50_s"]
    if soak is not None:
        rss_before = memory["warmed"]["VmRSS"]  # growth is counted from the warmed server
        rss_after = memory["after_soak"]["VmRSS"]
        growth = rss_after - rss_before
        payload["soak"] = {
            **soak,
            "rss_before_mb": rss_before,
            "rss_after_mb": rss_after,
            "rss_growth_mb": round(growth, 1),
            "rss_growth_pct": round(100 * growth / rss_before, 1),
        }
        payload["met"] |= {
            "soak_errors": soak["errors"] == 0,
            "soak_throughput": soak["searches_per_s"] >= TARGETS["soak_searches_per_s"],
            "rss_growth": growth <= TARGETS["rss_growth_mb"],
            "rss_flat": abs(growth) <= rss_before * TARGETS["rss_growth_pct"] / 100,
            "soak_full_size": soak["full_size"],
        }
    if cancel is not None:
        payload["cancel"] = cancel
        payload["met"]["cancel"] = cancel["stop_to_return_s"] <= TARGETS["stop_to_return_s"]
    if "states" in parts:
        agreement = _agreement(questions, states, batch)
        payload["states"] = agreement
        payload["met"]["states"] = agreement["agreement"] >= TARGETS["states_agreement"]
    name = NAME if parts == set(PARTS) and _soak_size() == SEARCHES else _partial_name(parts)
    common.write_result(name, payload, results_dir)
    return payload


def _partial_name(parts: set[str]) -> str:
    """serving-soak500-cancel…: a partial or smaller run never overwrites the full one."""
    named = [f"soak{_soak_size()}" if p == "soak" else p for p in PARTS if p in parts]
    return "-".join([NAME, *named])


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
    rows = []
    s, c = result.get("search_no_llm"), result.get("search_checked_pricing")
    if s:
        rows.append(
            (
                "/v1/search (no LLM) p50 / p95",
                f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} ms",
                "≤ 80 / 250",
            )
        )
    if c:
        rows.append(
            ("/v1/search, confidence check (pricing) p50", f"{c['p50_s']:.2f} s", "≤ 2.5 s")
        )
    k = result.get("soak")
    if k:
        size = f"{k['requests']:,} mixed requests" + (
            "" if k.get("full_size", True) else " (not the full 2,000)"
        )
        rows += [
            (f"{k['clients']} clients, {size}: errors", k["errors"], "0"),
            ("… refused busy (429, not an error)", k.get("busy_429", 0), ""),
            ("… p95", f"{k['latency']['p95_ms']:.0f} ms", ""),
            ("requests/s", k["searches_per_s"], "≥ 40"),
            ("server RSS growth after the soak", f"{k['rss_growth_mb']} MB", "≤ 50 MB, 10 %"),
        ]
    loaded = (result.get("memory_mb") or {}).get("loaded") or {}
    split = f" (anon {loaded.get('RssAnon')}, file {loaded.get('RssFile')})" if loaded else ""
    rows += [
        (
            "server RSS with the model loaded",
            f"{result.get('rss_loaded_mb')} MB{split}",
            "≤ 1,500 MB",
        ),
        ("start to /health", f"{result.get('start_s')} s", "≤ 10 s"),
    ]
    cancel = result.get("cancel")
    if cancel:
        rows.append(
            (
                "stop flag to the model call returning (worst)",
                f"{cancel['stop_to_return_s']} s",
                "≤ 1 s",
            )
        )
    st = result.get("states")
    if st:
        rows.append(
            ("tool-result states as `grounding run` decides", f"{st['agreement']:.1%}", "≥ 95 %")
        )
    lines = ["| measure | measured | target |", "|---|---:|---:|"]
    return "\n".join(lines + [f"| {a} | {b} | {c} |" for a, b, c in rows])


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, default=str)[:3000])
