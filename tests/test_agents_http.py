"""The HTTP API over loopback with a real client: grounded states, permissions, limits."""

from __future__ import annotations

import copy
import json
import re
import threading
import time

import httpx
import pytest

from agents.serving import auth
from agents.serving.engine import Engine
from agents.serving.http_api import create_app, load_check_run
from stages.models.chat import Cancelled
from tests.agents_support import (
    FLAGSHIP,
    KEYS,
    MISSING_CLIENT,
    PRINCIPALS,
    leak_queries,
    make_engine,
    readable_docs,
    serving,
)


@pytest.fixture(scope="module")
def engine(shared_store, tmp_path_factory) -> Engine:
    return make_engine(shared_store, tmp_path_factory)


@pytest.fixture(scope="module")
def api(engine):
    with serving(create_app(engine)) as url:
        yield url


def post(url: str, path: str, body: dict, principal: str | None = None, **kwargs) -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEYS[principal]}"} if principal else {}
    return httpx.post(f"{url}{path}", json=body, headers=headers, timeout=120, **kwargs)


def test_flagship_price_question_is_answered_with_its_source(api):
    body = post(api, "/v1/search", {"query": FLAGSHIP, "query_type": "pricing"}).json()
    assert body["status"] == "success" and body["is_error"] is False
    assert "€49" in body["content"]
    assert body["sources"][0]["title"] == "Northwind Cloud Price List 2026"
    assert "€49" in body["sources"][0]["text"]
    assert body["score"] >= 0.75
    assert "cite" in body["instruction"].lower()
    assert body["attempts"][0]["query"] == FLAGSHIP


def test_missing_client_contract_is_not_found_without_a_figure(api):
    body = post(api, "/v1/search", {"query": MISSING_CLIENT, "query_type": "contract"}).json()
    assert body["status"] == "not_found" and body["is_error"] is True
    assert body["sources"] == []
    assert not re.search(r"\d", body["content"])  # no invented (or borrowed) figure
    assert "initech" in body["unwritten_names"]
    assert "own knowledge" in body["instruction"]


def test_injected_index_failure_is_a_technical_error_without_internals(api, engine, monkeypatch):
    monkeypatch.setitem(
        engine.shared, "dense.faiss", engine.shared["dense.faiss"].with_name("gone")
    )
    response = post(api, "/v1/search", {"query": FLAGSHIP})
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "technical_error" and body["is_error"] is True
    assert body["error_kind"] == "unavailable" and body["content"] == ""
    text = response.text.lower()
    for internal in ("faiss", "traceback", "error:", "/tmp", "gone", "exception", ".py"):
        assert internal not in text


def test_no_permission_leak_for_any_principal(api, engine):
    queries = leak_queries(engine)
    leaks, sources = [], 0
    for principal in PRINCIPALS:
        allowed = readable_docs(engine, principal)
        for query, query_type in queries:
            body = post(api, "/v1/search", {"query": query, "query_type": query_type}, principal)
            assert body.status_code == 200, body.text
            for source in body.json()["sources"]:
                sources += 1
                if source["span"]["doc_id"] not in allowed:
                    leaks.append((principal, query, source["span"]["doc_id"]))
    assert sources > 0 and leaks == []


def test_the_principal_comes_from_the_key_never_the_body(api):
    hr_only = "What is the salary band for a Level 3 (L3) engineer?"
    as_hr = post(api, "/v1/search", {"query": hr_only, "query_type": "hr"}, "hr_manager").json()
    assert as_hr["status"] in ("success", "low_relevance")
    forged = post(api, "/v1/search", {"query": hr_only, "principal": "hr_manager"})
    assert forged.status_code == 422  # no such field: a body never names who is asking
    anonymous = post(api, "/v1/search", {"query": hr_only, "query_type": "hr"}).json()
    assert not any(
        s["span"]["doc_id"] == as_hr["sources"][0]["span"]["doc_id"] for s in anonymous["sources"]
    )


def test_request_limits_are_clear_4xx(api):
    wrong_key = httpx.post(
        f"{api}/v1/search", json={"query": "x"}, headers={"X-API-Key": "nope"}, timeout=30
    )
    assert wrong_key.status_code == 401 and wrong_key.json()["error"] == "unauthorized"
    too_long = post(api, "/v1/search", {"query": "price " * 500})
    assert too_long.status_code == 422
    assert too_long.json()["message"] == "query is 3000 characters; the limit is 2000"
    empty = post(api, "/v1/search", {"query": ""})
    assert empty.status_code == 422 and empty.json()["message"].startswith("query:")
    big = httpx.post(
        f"{api}/v1/search",
        content=b'{"query": "' + b"a" * 70000 + b'"}',
        timeout=30,
        headers={"content-type": "application/json"},
    )
    assert big.status_code == 413 and big.json()["error"] == "body_too_large"


def test_timeouts_stop_the_work_and_free_capacity(engine, monkeypatch):
    slow = copy.copy(engine)
    slow.agents = engine.agents.model_copy(
        update={
            "limits": engine.agents.limits.model_copy(
                update={"max_concurrent": 1, "request_timeout_s": 0.5, "llm_queue_wait_s": 0.1}
            )
        }
    )
    slow._llm = threading.BoundedSemaphore(1)
    stopped: list[float] = []

    def stuck(*args, stop=None, **kwargs):
        """Work that runs until its request's stop flag is set, as the LLM does per token."""
        while not stop.is_set():
            time.sleep(0.01)
        stopped.append(time.monotonic())
        raise Cancelled("stopped")

    monkeypatch.setattr(slow, "search", stuck)
    with serving(create_app(slow)) as url:
        first = threading.Thread(target=lambda: post(url, "/v1/search", {"query": FLAGSHIP}))
        first.start()
        time.sleep(0.2)
        busy = post(url, "/v1/search", {"query": FLAGSHIP})
        assert busy.status_code == 429 and busy.headers["retry-after"] == "1"
        assert busy.json()["error"] == "too_many_requests"
        first.join()
        asked = time.monotonic()
        timed_out = post(url, "/v1/search", {"query": FLAGSHIP})
        answered = time.monotonic()
        assert timed_out.status_code == 504  # the one timeout status, as docs and config say
        assert timed_out.json()["error"] == "timeout"
        assert timed_out.json()["result"]["error_kind"] == "timeout"
        time.sleep(0.2)
        assert len(stopped) == 2 and 0.4 < stopped[-1] - asked < answered - asked + 1.0
        with slow.llm_slot():  # the LLM path is taken: an answer waits 0.1 s, then 429
            queued = post(url, "/v1/answer", {"question": FLAGSHIP})
        assert queued.status_code == 429 and queued.json()["error"] == "llm_busy"
        assert queued.json()["result"]["status"] == "technical_error"
        assert int(queued.headers["retry-after"]) >= 1


def test_ground_tool_result_states(api):
    query = "What is the termination notice in the Fabrikam contract?"
    records = [
        {"client": "Fabrikam", "clause": "Either party may terminate with 90 days written notice."}
    ]
    found = post(api, "/v1/ground-tool-result", {"query": query, "output": records}).json()
    assert found["status"] == "success" and "90 days" in found["content"]
    other = post(
        api,
        "/v1/ground-tool-result",
        {"query": query, "output": "Initech: termination notice is 60 days."},
    ).json()
    assert other["status"] == "not_found" and other["is_error"] is True
    empty = post(api, "/v1/ground-tool-result", {"query": query, "output": {"results": []}})
    assert empty.json()["status"] == "not_found"
    kinds = {
        "timeout": {"error": "TimeoutError: read timed out after 30 s"},
        "rate_limit": {"http_status": 429, "output": "slow down"},
        "auth": {"http_status": 401},
        "unavailable": {"error": {"type": "ConnectionError", "message": "connection refused"}},
        "unknown": {"error": "ValueError: bad thing"},
    }
    for kind, raw in kinds.items():
        body = post(api, "/v1/ground-tool-result", {"query": query, **raw}).json()
        assert (body["status"], body["error_kind"], body["is_error"]) == (
            "technical_error",
            kind,
            True,
        )
        assert body["content"] == "" and "technical details" in body["instruction"]


def test_answer_returns_the_cited_answer_and_its_report(api):
    body = post(api, "/v1/answer", {"question": FLAGSHIP, "query_type": "pricing"}).json()
    assert body["answer"]["status"] == "answered"
    assert "€49" in body["answer"]["answer"]
    assert body["answer"]["citations"][0]["title"] == "Northwind Cloud Price List 2026"
    assert body["report"]["action"] == "emit"


def test_check_uses_the_agent_run_detector_or_says_501(api):
    run = {
        "question": FLAGSHIP,
        "tool_results": [
            {"tool": "search_knowledge_base", "content": "Enterprise: €49 per user per month."}
        ],
        "answer": "The Enterprise plan costs €49 per user per month.",
    }
    response = post(api, "/v1/check", {"run": run})
    if load_check_run() is None:
        assert response.status_code == 501 and response.json()["error"] == "not_implemented"
    else:
        assert response.status_code == 200, response.text
        assert response.json()["report"]["action"] in ("emit", "revise", "block")
        malformed = post(api, "/v1/check", {"run": {"question": FLAGSHIP, "tool_results": [1]}})
        assert malformed.status_code == 422 and malformed.json()["error"] == "invalid_run"


def test_health_tools_and_openapi(api):
    assert httpx.get(f"{api}/health").json()["status"] == "ok"
    declared = httpx.get(f"{api}/v1/tools", params={"format": "anthropic"}).json()
    assert {t["name"] for t in declared} == {
        "search_knowledge_base",
        "answer_with_citations",
        "check_answer",
    }
    paths = httpx.get(f"{api}/openapi.json").json()["paths"]
    assert {"/v1/search", "/v1/answer", "/v1/check", "/v1/ground-tool-result"} <= set(paths)
    assert httpx.get(f"{api}/docs").status_code == 200


def test_public_bind_without_keys_is_refused(engine):
    no_keys = engine.agents.model_copy(update={"api_keys": {}})
    with pytest.raises(auth.StartError, match="refusing to bind 0.0.0.0"):
        auth.check_start(no_keys, "0.0.0.0", engine.principals)
    auth.check_start(no_keys, "127.0.0.1", engine.principals)
    auth.check_start(engine.agents, "0.0.0.0", engine.principals)  # keys configured
    unknown = engine.agents.model_copy(update={"anonymous_principal": "nobody"})
    with pytest.raises(auth.StartError, match="nobody"):
        auth.check_start(unknown, "127.0.0.1", engine.principals)


def test_top_k_and_the_cursor_page_through_the_sources(api):
    query = {"query": FLAGSHIP}
    whole = post(api, "/v1/search", query).json()
    assert whole["next_cursor"] is None and len(whole["sources"]) >= 3
    first = post(api, "/v1/search", {**query, "top_k": 2}).json()
    assert len(first["sources"]) == 2 and first["next_cursor"]
    second = post(api, "/v1/search", {**query, "top_k": 2, "cursor": first["next_cursor"]}).json()
    ids = [s["evidence_id"] for s in first["sources"] + second["sources"]]
    assert len(set(ids)) == len(ids) and second["sources"]
    spans = [(s["span"]["doc_id"], s["span"]["char_start"]) for s in whole["sources"]]
    paged = [(s["span"]["doc_id"], s["span"]["char_start"]) for s in first["sources"]]
    assert paged == spans[:2]
    other = post(api, "/v1/search", {"query": "hotel limit", "cursor": first["next_cursor"]})
    assert other.status_code == 422 and "another search" in other.json()["message"]
    forged = post(api, "/v1/search", {**query, "cursor": "eyJvIjogMX0"})
    assert forged.status_code == 422 and forged.json()["error"] == "invalid_request"


def test_filters_narrow_the_search(api, engine):
    docs = {r["doc_id"]: r for r in engine.shared["documents"].to_pylist()}
    price = post(
        api, "/v1/search", {"query": FLAGSHIP, "filters": {"doc_types": ["price_list"]}}
    ).json()
    assert price["sources"]
    assert {docs[s["span"]["doc_id"]]["doc_type"] for s in price["sources"]} == {"price_list"}
    later = post(
        api, "/v1/search", {"query": FLAGSHIP, "filters": {"published_after": "2099-01-01"}}
    ).json()
    assert later["status"] == "not_found" and later["sources"] == []
    only = sorted(readable_docs(engine, "employee"))[:2]
    pinned = post(api, "/v1/search", {"query": FLAGSHIP, "filters": {"doc_ids": only}}).json()
    assert {s["span"]["doc_id"] for s in pinned["sources"]} <= set(only)
    tiers = {r["trust_tier"] for r in docs.values()}
    tier = sorted(tiers)[0]
    tiered = post(api, "/v1/search", {"query": FLAGSHIP, "filters": {"trust_tiers": [tier]}})
    assert {docs[s["span"]["doc_id"]]["trust_tier"] for s in tiered.json()["sources"]} <= {tier}


def test_a_source_uri_opens_its_span_with_its_section(api):
    found = post(api, "/v1/search", {"query": FLAGSHIP, "query_type": "pricing"}).json()
    source = found["sources"][0]
    doc_id, where = source["uri"].removeprefix("doc://").split("#")
    start, end = (int(n) for n in where.split("-"))
    assert (doc_id, start, end) == (
        source["span"]["doc_id"],
        source["span"]["char_start"],
        source["span"]["char_end"],
    )
    opened = httpx.get(f"{api}/v1/documents/{doc_id}", params={"start": start, "end": end})
    body = opened.json()
    assert opened.status_code == 200 and body["uri"] == source["uri"]
    assert "€49" in body["span"]["text"] and body["span"]["text"] in body["context"]["text"]
    assert body["context"]["char_start"] <= start and body["context"]["char_end"] >= end
    bad = httpx.get(f"{api}/v1/documents/{doc_id}", params={"start": 9, "end": 3})
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_request"


def test_reindex_serves_a_changed_corpus_atomically(shared_store, tmp_path_factory):
    """A document added to the corpus is served after POST /v1/reindex; a search that began
    before the swap finishes on the snapshot it began with."""
    import shutil

    from tests.conftest import ROOT, load_test_config

    folder = tmp_path_factory.mktemp("live")
    shutil.copytree(ROOT / "data" / "sample" / "docs", folder / "docs")
    shutil.copytree(shared_store / "artifacts", folder / "artifacts")
    engine = make_engine(shared_store, tmp_path_factory, admin_principals=["support_agent"])
    engine.config = load_test_config(folder, corpus=str(folder / "docs"))
    engine.store = engine.config.artifact_store()
    engine.snapshot = engine.load_snapshot()
    question = "What is the Zorblax widget recall code?"
    (folder / "docs" / "policies" / "zorblax-recall.md").write_text(
        "# Zorblax widget recall\n\nThe Zorblax widget recall code is ZX-4417. Return every "
        "Zorblax widget bought before March with the recall code ZX-4417 on the parcel.\n"
    )
    catalog = folder / "docs" / "catalog.yaml"
    catalog.write_text(
        catalog.read_text() + "\n  - path: policies/zorblax-recall.md\n    doc_id: zorblax-recall\n"
        "    title: Zorblax widget recall\n    version: '1'\n    published_at: 2026-10-01\n"
        "    permission_set: [everyone]\n    trust_tier: canonical\n    doc_type: policy\n"
    )
    admin = {"Authorization": f"Bearer {KEYS['support_agent']}"}
    with serving(create_app(engine)) as url:
        before = post(url, "/v1/search", {"query": question}).json()
        assert "ZX-4417" not in json.dumps(before)
        old = engine.snapshot
        began, release, used = threading.Event(), threading.Event(), []
        run_stages = engine.run_search_stages

        def held(tables, *args, **kwargs):  # a search in flight while the index is swapped
            used.append(tables["chunks"])
            began.set()
            release.wait(30)
            return run_stages(tables, *args, **kwargs)

        engine.run_search_stages = held
        in_flight = threading.Thread(target=lambda: post(url, "/v1/search", {"query": question}))
        in_flight.start()
        began.wait(30)
        engine.run_search_stages = run_stages
        done = httpx.post(f"{url}/v1/reindex", headers=admin, timeout=600)
        release.set()
        in_flight.join()
        assert done.status_code == 200 and done.json()["changed"] is True
        assert engine.snapshot is not old
        assert used == [old.shared["chunks"]]  # it finished on the snapshot it began with
        after = post(url, "/v1/search", {"query": question}).json()
        assert after["status"] in ("success", "low_relevance")
        assert "ZX-4417" in after["content"]
        assert engine.snapshot.shared["documents"].num_rows == (
            old.shared["documents"].num_rows + 1
        )
