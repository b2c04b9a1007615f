"""`grounding mcp`: the knowledge base for any MCP client (Claude Desktop, IDE agents), with
the official `mcp` SDK, over stdio or streamable HTTP.

Tools: search_knowledge_base, answer_with_citations, check_answer (input schemas from
agents/serving/tools.py's fields). Each returns the grounded result as JSON text and as
structured content, with `is_error` set for not_found and technical errors.

Who is calling: over HTTP, the request's API key (`Authorization: Bearer` or `X-API-Key`); over
stdio, the key in GROUNDING_API_KEY when the client starts the server (its config's `env`).
Without a key: the anonymous principal of configs/agents.yaml.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from agents.serving import auth, tools
from agents.serving import result as results
from agents.serving.engine import Busy, Engine, jsonable
from agents.serving.http_api import make_checker

log = logging.getLogger(__name__)
KEY_ENV = "GROUNDING_API_KEY"
QueryType = Literal["general", "pricing", "contract", "dates", "policy", "hr", "sla", "support"]
Query = Annotated[str, Field(min_length=1, max_length=2000, description=tools.QUERY["description"])]
OptionalType = Annotated[QueryType | None, Field(description=tools.QUERY_TYPE["description"])]


def _reply(body: dict[str, Any], is_error: bool) -> CallToolResult:
    text = json.dumps(body, ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=is_error
    )


def _tool_result(result: results.ToolResult) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_text())],
        structured_content=result.model_dump(mode="json"),
        is_error=result.is_error,
    )


def create_server(engine: Engine, stdio_key: str | None = None) -> MCPServer:
    """The MCP server over one shared engine. `stdio_key`: the stdio caller's API key."""
    agents = engine.agents
    server = MCPServer(
        name="grounding",
        instructions="Company knowledge base. Call search_knowledge_base before answering "
        "questions about the company; follow each result's instruction; never answer from "
        "your own knowledge when is_error is true.",
    )
    limits = agents.limits
    check_run = make_checker(agents.check)

    def who(ctx: Context | None) -> str:
        headers = ctx.headers if ctx is not None else None
        key = auth.key_from_headers(headers) if headers else stdio_key
        return auth.principal_for(agents, key)

    async def guarded(
        ctx: Context, call, query: str, query_type: str | None, timeout: float
    ) -> CallToolResult:
        """The call in a worker thread; credentials, time and LLM-queue limits as tool results.
        The principal is this request's own (its context), never shared between requests."""
        try:
            principal = who(ctx)
        except auth.AuthError:
            return _tool_result(results.technical_error(agents, query, "auth", query_type))
        try:
            with anyio.fail_after(timeout):
                return await anyio.to_thread.run_sync(
                    lambda: call(principal), abandon_on_cancel=True
                )
        except TimeoutError:
            return _tool_result(results.technical_error(agents, query, "timeout", query_type))
        except Busy:
            return _tool_result(results.technical_error(agents, query, "rate_limit", query_type))
        except Exception:
            log.exception("MCP tool failed")  # details in the log only
            return _tool_result(results.technical_error(agents, query, "unknown", query_type))

    @server.tool(description=tools.TOOLS["search_knowledge_base"]["description"])
    async def search_knowledge_base(
        query: Query, ctx: Context, query_type: OptionalType = None
    ) -> CallToolResult:
        return await guarded(
            ctx,
            lambda p: _tool_result(engine.search(query, p, query_type)),
            query,
            query_type,
            limits.request_timeout_s,
        )

    @server.tool(description=tools.TOOLS["answer_with_citations"]["description"])
    async def answer_with_citations(
        question: Query, ctx: Context, query_type: OptionalType = None
    ) -> CallToolResult:

        def call(principal: str) -> CallToolResult:
            outcome = engine.answer(question, principal, query_type)
            refused = outcome["answer"]["status"] != "answered"
            return _reply(jsonable(outcome), is_error=refused)

        return await guarded(ctx, call, question, query_type, limits.answer_timeout_s)

    @server.tool(description=tools.TOOLS["check_answer"]["description"])
    async def check_answer(
        run: Annotated[dict[str, Any], Field(description=tools.RUN["description"])], ctx: Context
    ) -> CallToolResult:
        if check_run is None:
            body = {
                "error": "not_implemented",
                "message": "the agent-run detector is not installed",
            }
            return _reply(body, is_error=True)

        def call(_: str) -> CallToolResult:
            try:
                report = check_run(run)
            except (ValueError, TypeError, KeyError) as exc:
                return _reply({"error": "invalid_run", "message": str(exc)[:300]}, is_error=True)
            if hasattr(report, "model_dump"):
                report = report.model_dump(mode="json")
            return _reply({"report": jsonable(report)}, is_error=False)

        return await guarded(ctx, call, "check", None, limits.answer_timeout_s)

    return server


def serve_stdio(engine: Engine) -> None:
    create_server(engine, os.environ.get(KEY_ENV) or None).run("stdio")


def http_app(engine: Engine, host: str):
    """The streamable-HTTP ASGI app at /mcp (uvicorn serves it)."""
    return create_server(engine).streamable_http_app(host=host)
