"""The serving surfaces' security list, one test per item, over real loopback HTTP (a uvicorn
server on 127.0.0.1 and httpx): broken authentication, object-level access through doc ids and
cited spans, excessive data exposure (no text of an unreadable document in any field, error or
log line), rate limiting, mass assignment, oversized and malformed bodies; and the rules that
keep it offline and in one error shape."""

from __future__ import annotations

import copy
import logging
import re
import threading
import time

import httpx
import pytest

from agents.serving.auth import key_hash
from agents.serving.http_api import TIMEOUT_STATUS, create_app
from stages.models.chat import Cancelled
from tests.agents_support import FLAGSHIP, KEYS, make_engine, readable_docs, serving
from tests.conftest import ROOT

ADMIN = "support_agent"
POSTS = {
    "/v1/search": {"query": FLAGSHIP},
    "/v1/answer": {"question": FLAGSHIP},
    "/v1/ground-tool-result": {"query": FLAGSHIP, "output": "x"},
    "/v1/check": {"run": {"question": "q", "tool_results": [], "answer": "a"}},
}


@pytest.fixture(scope="module")
def engine(shared_store, tmp_path_factory):
    return make_engine(shared_store, tmp_path_factory, admin_principals=[ADMIN])


@pytest.fixture(scope="module")
def api(engine):
    with serving(create_app(engine)) as url:
        yield url


def bearer(principal: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[principal]}"}


def search(url: str, body: dict, headers: dict | None = None) -> httpx.Response:
    return httpx.post(f"{url}/v1/search", json=body, headers=headers or {}, timeout=60)


def assert_error_shape(response: httpx.Response, status: int, code: str | None = None) -> dict:
    """The one error shape: {"error", "message"} (plus `result`), plain words, no internals."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) <= {"error", "message", "result"} and {"error", "message"} <= set(body)
    assert code is None or body["error"] == code
    lowered = body["message"].lower()
    for noise in ("http://", "https://", "traceback", "pydantic", "detail", ".py", "input_value"):
        assert noise not in lowered, body["message"]
    assert "\n" not in body["message"]
    return body


def restricted_docs(engine) -> list[str]:
    return sorted(
        {r["doc_id"] for r in engine.shared["documents"].to_pylist()}
        - readable_docs(engine, "employee")
    )


def secret_passages(engine, doc_id: str) -> list[str]:
    """Distinctive 40-character passages of an unreadable document's text."""
    rows = [r for r in engine.shared["documents"].to_pylist() if r["doc_id"] == doc_id]
    text = " ".join(rows[0]["text"].split())
    words = [w for w in re.split(r"(?<=[.!?])\s+", text) if len(w) > 40]
    return [w[:40] for w in words[:5]]


# ---------------------------------------------------------------- broken authentication


def test_basic_auth_is_refused_not_anonymous(api):
    response = search(api, {"query": FLAGSHIP}, {"Authorization": "Basic dXNlcjpwYXNz"})
    assert_error_shape(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"


def test_bare_bearer_is_refused(api):
    for value in ("Bearer", "bearer", "Token abc"):
        response = search(api, {"query": FLAGSHIP}, {"Authorization": value})
        assert_error_shape(response, 401, "unauthorized")
        assert response.headers["www-authenticate"] == "Bearer"


def test_unknown_and_empty_keys_are_refused(api):
    for headers in (
        {"Authorization": "Bearer gk_not-a-key"},
        {"X-API-Key": "nope"},
        {"X-API-Key": ""},
    ):
        assert_error_shape(search(api, {"query": FLAGSHIP}, headers), 401, "unauthorized")


def test_two_different_keys_are_refused(api):
    headers = {**bearer("employee"), "X-API-Key": KEYS["hr_manager"]}
    assert_error_shape(search(api, {"query": FLAGSHIP}, headers), 401, "unauthorized")


def test_a_bad_credential_is_refused_on_open_pages_too(api):
    for path in ("/health", "/docs", "/openapi.json", "/v1/tools"):
        response = httpx.get(f"{api}{path}", headers={"Authorization": "Basic eDp5"}, timeout=30)
        assert response.status_code == 401, path
        assert httpx.get(f"{api}{path}", timeout=30).status_code == 200, path


def test_no_anonymous_access_unless_the_config_names_it(engine):
    closed = copy.copy(engine)
    closed.agents = engine.agents.model_copy(update={"anonymous_principal": None})
    with serving(create_app(closed)) as url:
        refused = search(url, {"query": FLAGSHIP})
        assert_error_shape(refused, 401, "unauthorized")
        assert refused.headers["www-authenticate"] == "Bearer"
        assert search(url, {"query": FLAGSHIP}, bearer("employee")).status_code == 200
    from agents.serving.agents_config import AgentsConfig, load_agents_config

    assert AgentsConfig.model_fields["anonymous_principal"].default is None
    shipped = load_agents_config(ROOT / "configs" / "agents.yaml")
    assert shipped.anonymous_principal == "employee"  # named there, for loopback use


def test_denials_are_logged_without_the_key(api, caplog):
    secret = "gk_this-key-must-never-be-logged"
    with caplog.at_level(logging.INFO):
        search(api, {"query": FLAGSHIP}, {"Authorization": f"Bearer {secret}"})
        search(api, {"query": FLAGSHIP}, {"Authorization": f"Basic {secret}"})
        time.sleep(0.1)
    denials = [r.getMessage() for r in caplog.records if "authentication refused" in r.getMessage()]
    assert len(denials) == 2
    assert not any(
        secret in r.getMessage() or key_hash(secret) in r.getMessage() for r in caplog.records
    )


# ---------------------------------------------------------------- object-level access


def test_cited_span_of_an_unreadable_document_is_the_same_404_as_no_document(api, engine):
    hidden = restricted_docs(engine)[0]
    owner = next(p for p in KEYS if hidden in readable_docs(engine, p))
    as_owner = httpx.get(
        f"{api}/v1/documents/{hidden}", params={"start": 0, "end": 80}, headers=bearer(owner)
    )
    assert as_owner.status_code == 200 and as_owner.json()["doc_id"] == hidden
    denied = httpx.get(f"{api}/v1/documents/{hidden}", params={"start": 0, "end": 80})
    missing = httpx.get(f"{api}/v1/documents/no-such-doc", params={"start": 0, "end": 80})
    a, b = assert_error_shape(denied, 404, "not_found"), assert_error_shape(missing, 404)
    assert a["message"].replace(hidden, "X") == b["message"].replace("no-such-doc", "X")
    assert as_owner.json()["span"]["text"] not in denied.text


def test_doc_id_filters_never_widen_what_a_principal_reads(api, engine):
    hidden = restricted_docs(engine)
    body = {"query": "salary band engineer", "filters": {"doc_ids": hidden}}
    result = search(api, body).json()
    assert result["status"] == "not_found" and result["sources"] == []
    readable = sorted(readable_docs(engine, "hr_manager") & set(hidden))
    as_hr = search(api, {**body, "filters": {"doc_ids": readable}}, bearer("hr_manager")).json()
    assert {s["span"]["doc_id"] for s in as_hr["sources"]} <= set(readable)


# ---------------------------------------------------------------- excessive data exposure


def test_no_text_of_an_unreadable_document_in_any_field_error_or_log(api, engine, caplog):
    """Asked by its title and its own sentences, with filters naming it and at top_k 20, and
    opened as a cited span: no passage of a document the caller may not read comes back (the
    caller's own query, echoed, is taken out first) or reaches the log."""
    titles = {r["doc_id"]: r["title"] for r in engine.shared["documents"].to_pylist()}
    with caplog.at_level(logging.DEBUG):
        for doc_id in restricted_docs(engine):
            passages = secret_passages(engine, doc_id)
            seen: list[str] = []
            for query in [titles[doc_id], *passages[:2]]:
                for body in (
                    {"query": query},
                    {"query": query, "filters": {"doc_ids": [doc_id]}},
                    {"query": query, "top_k": 20},
                ):
                    seen.append(search(api, body).text.replace(json_text(query), ""))
                grounded = httpx.post(
                    f"{api}/v1/ground-tool-result", json={"query": query, "output": "unrelated"}
                )
                seen.append(grounded.text.replace(json_text(query), ""))
            opened = httpx.get(f"{api}/v1/documents/{doc_id}", params={"start": 0, "end": 500})
            seen.append(opened.text)
            for passage in passages:
                assert not any(passage in text for text in seen), (doc_id, passage)
        records = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
        logged = "\n".join(r.getMessage() for r in records)
    for doc_id in restricted_docs(engine):
        for passage in secret_passages(engine, doc_id):
            assert passage not in logged


def json_text(value: str) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)[1:-1]


# ---------------------------------------------------------------- rate limiting


def test_requests_beyond_capacity_get_429_with_retry_after(engine, monkeypatch):
    busy = copy.copy(engine)
    busy.agents = engine.agents.model_copy(
        update={"limits": engine.agents.limits.model_copy(update={"max_concurrent": 2})}
    )
    release = threading.Event()

    def held(*args, stop=None, **kwargs):
        release.wait(10)
        raise Cancelled("released")

    monkeypatch.setattr(busy, "search", held)
    with serving(create_app(busy)) as url:
        threads = [
            threading.Thread(target=lambda: search(url, {"query": FLAGSHIP})) for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        refused = [search(url, {"query": FLAGSHIP}) for _ in range(3)]
        release.set()
        for thread in threads:
            thread.join()
    for response in refused:
        assert_error_shape(response, 429, "too_many_requests")
        assert int(response.headers["retry-after"]) >= 1


def test_a_timeout_is_one_status_in_api_config_and_docs():
    assert TIMEOUT_STATUS == 504
    config = (ROOT / "configs" / "agents.yaml").read_text()
    docs = (ROOT / "docs" / "agents" / "serve.md").read_text()
    assert "504" in config and "408" not in config
    assert "| 504" in docs and "408" not in docs


# ---------------------------------------------------------------- mass assignment


def test_extra_fields_are_refused_on_every_endpoint(api):
    for path, body in POSTS.items():
        for extra in ({"principal": "hr_manager"}, {"permission_set": ["hr"]}, {"admin": True}):
            response = httpx.post(f"{api}{path}", json={**body, **extra}, timeout=60)
            error = assert_error_shape(response, 422, "invalid_request")
            assert "unknown field" in error["message"], (path, error)
    nested = search(api, {"query": FLAGSHIP, "filters": {"principal": "hr_manager"}})
    assert "unknown field" in assert_error_shape(nested, 422)["message"]


# ---------------------------------------------------------------- oversized and malformed


def test_oversized_bodies_are_413_by_length_and_when_chunked(api):
    big = b'{"query": "' + b"a" * 70000 + b'"}'
    declared = httpx.post(
        f"{api}/v1/search", content=big, headers={"content-type": "application/json"}
    )
    assert_error_shape(declared, 413, "body_too_large")

    def chunks():
        for start in range(0, len(big), 4096):
            yield big[start : start + 4096]

    chunked = httpx.post(
        f"{api}/v1/search", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in chunked.request.headers
    assert chunked.request.headers["transfer-encoding"] == "chunked"
    assert_error_shape(chunked, 413, "body_too_large")


def test_malformed_bodies_get_the_documented_shape(api):
    json_type = {"content-type": "application/json"}
    cases = [
        (b'{"query": "caf\xe9"}', json_type, 400, "invalid_body"),  # latin-1, not UTF-8
        (b'{"query": ', json_type, 400, "invalid_json"),
        (b"[1, 2]", json_type, 422, "invalid_request"),
        (b'{"query": "   "}', json_type, 422, "invalid_request"),
        (b'{"query": "\\t\\n"}', json_type, 422, "invalid_request"),
        (b'{"query": 5}', json_type, 422, "invalid_request"),
        (b"", json_type, 422, "invalid_request"),
    ]
    for content, headers, status, code in cases:
        response = httpx.post(f"{api}/v1/search", content=content, headers=headers, timeout=30)
        assert_error_shape(response, status, code)
    blank = search(api, {"query": " \u00a0 "}).json()
    assert blank["error"] == "invalid_request" and "whitespace" in blank["message"]


def test_unknown_paths_and_methods_use_the_error_shape(api):
    assert_error_shape(httpx.get(f"{api}/v1/nothing"), 404, "not_found")
    assert_error_shape(httpx.get(f"{api}/v1/search"), 405, "method_not_allowed")


# ---------------------------------------------------------------- offline


def test_no_served_page_references_an_external_url(api):
    external = re.compile(r"https?://(?!127\.0\.0\.1|localhost)[^\s\"'<>]+")
    for path in ("/docs", "/openapi.json", "/health", "/v1/tools"):
        response = httpx.get(f"{api}{path}", timeout=30)
        assert response.status_code == 200, path
        assert not external.findall(response.text), (path, external.findall(response.text)[:3])
    page = httpx.get(f"{api}/docs").text
    assert "<script" not in page and "/v1/search" in page and "/openapi.json" in page
    assert httpx.get(f"{api}/redoc").status_code == 404


# ---------------------------------------------------------------- re-index


def test_reindex_needs_an_admin_key(api):
    assert_error_shape(httpx.post(f"{api}/v1/reindex", timeout=60), 403, "forbidden")
    not_admin = httpx.post(f"{api}/v1/reindex", headers=bearer("employee"), timeout=60)
    assert_error_shape(not_admin, 403, "forbidden")
    done = httpx.post(f"{api}/v1/reindex", headers=bearer(ADMIN), timeout=300)
    assert done.status_code == 200 and done.json()["documents"] > 0
    assert done.json()["changed"] is False  # the corpus did not change: the same snapshot


def test_timeout_status_and_retry_hints_are_documented_in_the_shape(engine, monkeypatch):
    slow = copy.copy(engine)
    slow.agents = engine.agents.model_copy(
        update={"limits": engine.agents.limits.model_copy(update={"request_timeout_s": 0.3})}
    )

    def stuck(*args, stop=None, **kwargs):
        stop.wait(5)
        raise Cancelled("stopped")

    monkeypatch.setattr(slow, "search", stuck)
    with serving(create_app(slow)) as url:
        body = assert_error_shape(search(url, {"query": FLAGSHIP}), TIMEOUT_STATUS, "timeout")
    assert body["result"]["status"] == "technical_error"
    assert body["result"]["error_kind"] == "timeout"
