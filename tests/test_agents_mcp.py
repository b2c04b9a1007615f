"""The MCP server with the SDK's own client over streamable HTTP on 127.0.0.1 (one server, a
key per principal), and over stdio (`grounding mcp` as Claude Desktop starts it)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import httpx
import httpx2
import jsonschema
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from agents.serving import mcp_server
from agents.serving.http_api import load_check_run
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
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def engine(shared_store, tmp_path_factory):
    return make_engine(shared_store, tmp_path_factory)


@pytest.fixture(scope="module")
def mcp_url(engine):
    with serving(mcp_server.http_app(engine, "127.0.0.1")) as url:
        yield f"{url}/mcp"


def client(url: str, principal: str | None = None) -> Client:
    headers = {"Authorization": f"Bearer {KEYS[principal]}"} if principal else {}
    return Client(
        streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=120))
    )


async def call(url: str, tool: str, arguments: dict, principal: str | None = None):
    async with client(url, principal) as session:
        return await session.call_tool(tool, arguments)


def test_tools_are_listed_with_valid_input_schemas(mcp_url):
    async def listed():
        async with client(mcp_url) as session:
            return (await session.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(listed())}
    assert set(tools) == {"search_knowledge_base", "answer_with_citations", "check_answer"}
    for tool in tools.values():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
    schema = tools["search_knowledge_base"].input_schema
    assert schema["required"] == ["query"] and "principal" not in schema["properties"]
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"query": FLAGSHIP, "query_type": "pricing"})
    assert not validator.is_valid({"query": FLAGSHIP, "query_type": "gossip"})


def test_flagship_and_missing_client_over_mcp(mcp_url):
    found = asyncio.run(call(mcp_url, "search_knowledge_base", {"query": FLAGSHIP}))
    body = found.structured_content
    assert found.is_error is False and body["status"] == "success"
    assert "€49" in body["content"] and body["sources"][0]["title"].startswith("Northwind Cloud")
    assert json.loads(found.content[0].text)["sources"][0]["title"] == body["sources"][0]["title"]
    missing = asyncio.run(
        call(mcp_url, "search_knowledge_base", {"query": MISSING_CLIENT, "query_type": "contract"})
    )
    assert missing.is_error is True and missing.structured_content["status"] == "not_found"
    assert not re.search(r"\d", missing.content[0].text)


def test_injected_failure_is_a_technical_error_without_internals(mcp_url, engine, monkeypatch):
    monkeypatch.setitem(engine.shared, "dense.faiss", Path("/nonexistent/dense.faiss"))
    failed = asyncio.run(call(mcp_url, "search_knowledge_base", {"query": FLAGSHIP}))
    assert failed.is_error is True
    assert failed.structured_content["status"] == "technical_error"
    text = failed.content[0].text.lower()
    for internal in ("faiss", "nonexistent", "traceback", "exception", ".py"):
        assert internal not in text


def test_no_permission_leak_for_any_principal_over_mcp(mcp_url, engine):
    queries = leak_queries(engine)

    async def sweep(principal: str) -> tuple[int, list]:
        allowed = readable_docs(engine, principal)
        seen, leaks = 0, []
        async with client(mcp_url, principal) as session:
            for query, query_type in queries:
                arguments = {"query": query, **({"query_type": query_type} if query_type else {})}
                result = await session.call_tool("search_knowledge_base", arguments)
                for source in result.structured_content.get("sources", []):
                    seen += 1
                    if source["span"]["doc_id"] not in allowed:
                        leaks.append((query, source["span"]["doc_id"]))
        return seen, leaks

    totals = [asyncio.run(sweep(p)) for p in PRINCIPALS]
    assert sum(seen for seen, _ in totals) > 0
    assert [leak for _, leaks in totals for leak in leaks] == []


def test_a_wrong_key_is_refused_at_connect(mcp_url):
    async def connect(headers: dict[str, str]):
        transport = streamable_http_client(
            mcp_url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)
        )
        async with Client(transport) as session:
            return await session.list_tools()

    for headers in (
        {"X-API-Key": "not-a-key"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer"},
    ):
        with pytest.raises(Exception):  # noqa: B017 - the SDK's own error for a refused connect
            asyncio.run(connect(headers))
    raw = httpx.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        headers={"Authorization": "Basic dXNlcjpwYXNz", "accept": "application/json"},
        timeout=30,
    )
    assert raw.status_code == 401 and raw.headers["www-authenticate"] == "Bearer"
    assert raw.json()["error"] == "unauthorized" and "dXNlcjpwYXNz" not in raw.text


def test_unknown_and_blank_arguments_are_refused_in_plain_words(mcp_url):
    async def calls():
        async with client(mcp_url) as session:
            extra = await session.call_tool(
                "search_knowledge_base", {"query": FLAGSHIP, "principal": "hr_manager"}
            )
            blank = await session.call_tool("search_knowledge_base", {"query": "   "})
            wrong = await session.call_tool(
                "search_knowledge_base", {"query": FLAGSHIP, "query_type": "gossip"}
            )
            return extra, blank, wrong

    extra, blank, wrong = asyncio.run(calls())
    for result in (extra, blank, wrong):
        assert result.is_error is True
        body = result.structured_content
        assert body["error"] == "invalid_request" and set(body) == {"error", "message"}
        for noise in ("http", "pydantic", "traceback", "input_value"):
            assert noise not in body["message"].lower()
    assert "principal" in extra.structured_content["message"]
    assert blank.structured_content["message"].startswith("query:")
    assert wrong.structured_content["message"].startswith("query_type:")


def test_every_tool_declares_an_output_schema_its_results_meet(mcp_url):
    async def listed():
        async with client(mcp_url) as session:
            tools = (await session.list_tools()).tools
            found = await session.call_tool("search_knowledge_base", {"query": FLAGSHIP})
            return tools, found

    tools, found = asyncio.run(listed())
    for tool in tools:
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    search = next(t for t in tools if t.name == "search_knowledge_base")
    jsonschema.validate(found.structured_content, search.output_schema)


def test_cited_span_resource_under_the_callers_permissions(mcp_url, engine):
    async def read(principal: str | None, uri: str):
        async with client(mcp_url, principal) as session:
            return await session.read_resource(uri)

    found = asyncio.run(call(mcp_url, "search_knowledge_base", {"query": FLAGSHIP}))
    source = found.structured_content["sources"][0]
    opened = asyncio.run(read(None, source["uri"]))
    body = json.loads(opened.contents[0].text)
    assert body["doc_id"] == source["span"]["doc_id"] and body["span"]["text"] in source["text"]
    assert source["text"] in body["context"]["text"]
    hr_only = sorted(readable_docs(engine, "hr_manager") - readable_docs(engine, "employee"))[0]
    allowed = asyncio.run(read("hr_manager", f"doc://{hr_only}#0-50"))
    assert json.loads(allowed.contents[0].text)["doc_id"] == hr_only
    with pytest.raises(Exception) as refused:  # noqa: B017 - the SDK's resource error
        asyncio.run(read("employee", f"doc://{hr_only}#0-50"))
    with pytest.raises(Exception) as missing:  # noqa: B017
        asyncio.run(read("employee", "doc://no-such-document#0-50"))
    assert str(refused.value).replace(hr_only, "X") == str(missing.value).replace(
        "no-such-document", "X"
    )
    secret = engine.span("hr_manager", hr_only, 0, 50)["span"]["text"]
    assert secret.strip() and secret not in str(refused.value)


def test_answer_sends_progress_notifications(engine, monkeypatch):
    import time

    def slow_answer(question, principal, query_type=None, stop=None):
        time.sleep(2.5)
        return {"answer": {"status": "answered", "answer": "x"}, "report": {"action": "emit"}}

    monkeypatch.setattr(engine, "answer", slow_answer)
    monkeypatch.setattr(mcp_server, "PROGRESS_EVERY_S", 1.0)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def ask(url: str):
        async with client(url) as session:
            return await session.call_tool(
                "answer_with_citations", {"question": FLAGSHIP}, progress_callback=progress
            )

    with serving(mcp_server.http_app(engine, "127.0.0.1")) as url:
        result = asyncio.run(ask(f"{url}/mcp"))
    assert result.is_error is False and result.structured_content["answer"]["answer"] == "x"
    assert len(seen) >= 3 and seen[0][0] == 0 and seen[-1][0] == seen[-1][1]
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)


def test_check_answer_calls_the_agent_run_detector(mcp_url):
    run = {
        "question": FLAGSHIP,
        "tool_results": [{"tool": "search_knowledge_base", "content": "Enterprise: €49 a user."}],
        "answer": "The Enterprise plan costs €49 per user per month.",
    }
    result = asyncio.run(call(mcp_url, "check_answer", {"run": run}))
    if load_check_run() is None:
        assert result.is_error and result.structured_content["error"] == "not_implemented"
    else:
        assert result.is_error is False
        assert result.structured_content["report"]["action"] in ("emit", "revise", "block")


def test_stdio_server_as_a_desktop_client_starts_it(shared_store, tmp_path):
    """`grounding mcp` over stdio, the key in GROUNDING_API_KEY, on a copy of the built store."""
    import shutil

    shutil.copytree(shared_store / "artifacts", tmp_path / "artifacts")
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "grounding"),
        args=["mcp", "--set", f"store={tmp_path / 'artifacts'}"],
        env={**os.environ, "GROUNDING_API_KEY": ""},
        cwd=str(ROOT),
    )

    async def ask():
        async with Client(params) as session:
            return await session.call_tool("search_knowledge_base", {"query": MISSING_CLIENT})

    result = asyncio.run(ask())
    assert result.is_error is True and result.structured_content["status"] == "not_found"
