"""`grounding mcp`: the knowledge base for any MCP client (Claude Desktop, IDE agents), with
the official `mcp` SDK, over stdio or streamable HTTP.

Tools: search_knowledge_base, answer_with_citations, check_answer (input schemas from
agents/serving/tools.py's fields, output schemas declared). Each returns its result as JSON text
and as structured content, with `is_error` set for not_found, technical errors and refused
requests; a refused request is {"error": code, "message": one plain line}, as over HTTP.
Resource: `doc://{doc_id}#{start}-{end}`, a cited span with its section, for a caller who may
read the document. answer_with_citations sends progress notifications while it works.

Who is calling: over HTTP, the request's API key (`Authorization: Bearer` or `X-API-Key`),
checked when the client connects (a wrong key never lists a tool); over stdio, the key in
GROUNDING_API_KEY, checked when the server starts. Without a credential: the anonymous principal
of configs/agents.yaml, where it names one.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from agents.serving import auth, tools
from agents.serving import result as results
from agents.serving.engine import Busy, Engine, Filters, RequestError, jsonable
from agents.serving.http_api import error_response, make_checker
from stages.models.chat import Cancelled

log = logging.getLogger(__name__)
KEY_ENV = "GROUNDING_API_KEY"
QueryType = Literal["general", "pricing", "contract", "dates", "policy", "hr", "sla", "support"]
Query = Annotated[str, Field(min_length=1, max_length=2000, description=tools.QUERY["description"])]
OptionalType = Annotated[QueryType | None, Field(description=tools.QUERY_TYPE["description"])]
PROGRESS_EVERY_S = 2.0  # a heartbeat while answer_with_citations works


def _reply(body: dict[str, Any], is_error: bool) -> CallToolResult:
    text = json.dumps(body, ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=body, is_error=is_error
    )


def refused(code: str, message: str) -> CallToolResult:
    """A request the server will not run, in the HTTP API's error shape."""
    return _reply({"error": code, "message": message}, is_error=True)


def _tool_result(result: results.ToolResult) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_text())],
        structured_content=result.model_dump(mode="json"),
        is_error=result.is_error,
    )


def plain_validation(exc: ValidationError) -> str:
    """The first problem of a tool's arguments in one line, without library links or input."""
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    if first.get("type") == "missing":
        return f"{where}: required argument is missing"
    text = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    return f"{where}: {text}"


class GroundingServer(MCPServer):
    """MCPServer that refuses arguments a tool does not declare (as the HTTP API refuses
    unknown fields) and says what is wrong with an argument in plain words."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):  # type: ignore[override]
        declared = tools.TOOLS.get(name, {}).get("parameters", {}).get("properties")
        if declared is not None:
            unknown = sorted(set(arguments) - set(declared))
            if unknown:
                allowed = ", ".join(declared)
                return refused(
                    "invalid_request", f"unknown argument(s) {unknown}; this tool takes {allowed}"
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return refused("invalid_request", plain_validation(exc.__cause__))
            raise


def create_server(engine: Engine, stdio_key: str | None = None) -> MCPServer:
    """The MCP server over one shared engine. `stdio_key`: the stdio caller's API key."""
    agents = engine.agents
    server = GroundingServer(
        name="grounding",
        instructions="Company knowledge base. Call search_knowledge_base before answering "
        "questions about the company; follow each result's instruction; never answer from "
        "your own knowledge when is_error is true. Open a cited source's `uri` "
        "(doc://{doc_id}#{start}-{end}) as a resource to read its section.",
    )
    limits = agents.limits
    check_run = make_checker(agents.check, getattr(engine, "llm_slot", None))

    def who(ctx: Context | None) -> str:
        headers = ctx.headers if ctx is not None else None
        if headers:
            return auth.authenticate(agents, headers, "mcp")
        return auth.principal_for(agents, stdio_key)

    async def guarded(
        ctx: Context, call, query: str, query_type: str | None, timeout: float, progress=False
    ) -> CallToolResult:
        """`call(principal, stop)` in a worker thread; credentials, time and LLM-queue limits
        as tool results. Past the deadline `stop` is set and the model stops at its next token.
        The principal is this request's own (its context), never shared between requests."""
        try:
            principal = who(ctx)
        except auth.AuthError:
            return _tool_result(results.technical_error(agents, query, "auth", query_type))
        stop = threading.Event()
        try:
            with anyio.fail_after(timeout):
                if not progress:
                    return await anyio.to_thread.run_sync(
                        lambda: call(principal, stop), abandon_on_cancel=True
                    )
                return await with_progress(ctx, lambda: call(principal, stop), timeout)
        except TimeoutError:
            stop.set()
            return _tool_result(results.technical_error(agents, query, "timeout", query_type))
        except Busy:
            return _tool_result(results.technical_error(agents, query, "rate_limit", query_type))
        except Cancelled:
            return _tool_result(results.technical_error(agents, query, "timeout", query_type))
        except RequestError as exc:
            return refused("invalid_request", str(exc))
        except Exception:
            log.exception("MCP tool failed")  # details in the log only
            return _tool_result(results.technical_error(agents, query, "unknown", query_type))

    async def with_progress(ctx: Context, work, timeout: float):
        """`work` in a thread, reporting progress (elapsed seconds of the deadline) meanwhile;
        a client that asked for no progress gets none."""
        outcome: dict[str, Any] = {}

        async def run() -> None:
            outcome["value"] = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            elapsed = 0.0
            await _progress(ctx, 0, timeout, "searching the knowledge base")
            while "value" not in outcome:
                with anyio.move_on_after(PROGRESS_EVERY_S):
                    while "value" not in outcome:
                        await anyio.sleep(0.05)
                if "value" not in outcome:
                    elapsed += PROGRESS_EVERY_S
                    await _progress(ctx, elapsed, timeout, "writing and checking the answer")
        await _progress(ctx, timeout, timeout, "done")
        return outcome["value"]

    @server.tool(
        description=tools.TOOLS["search_knowledge_base"]["description"],
        structured_output=False,
    )
    async def search_knowledge_base(
        query: Query,
        ctx: Context,
        query_type: OptionalType = None,
        top_k: Annotated[
            int | None, Field(ge=1, le=20, description=tools.TOP_K["description"])
        ] = None,
        filters: Annotated[Filters | None, Field(description=tools.FILTERS["description"])] = None,
        cursor: Annotated[
            str | None, Field(max_length=200, description=tools.CURSOR["description"])
        ] = None,
    ) -> CallToolResult:
        if not query.strip():
            return refused("invalid_request", "query: must contain text, not only whitespace")
        return await guarded(
            ctx,
            lambda p, stop: _tool_result(
                engine.search(
                    query, p, query_type, top_k=top_k, filters=filters, cursor=cursor, stop=stop
                )
            ),
            query,
            query_type,
            limits.request_timeout_s,
        )

    @server.tool(
        description=tools.TOOLS["answer_with_citations"]["description"],
        structured_output=False,
    )
    async def answer_with_citations(
        question: Query, ctx: Context, query_type: OptionalType = None
    ) -> CallToolResult:
        if not question.strip():
            return refused("invalid_request", "question: must contain text, not only whitespace")

        def call(principal: str, stop: threading.Event) -> CallToolResult:
            outcome = engine.answer(question, principal, query_type, stop=stop)
            refused_answer = outcome["answer"]["status"] != "answered"
            return _reply(jsonable(outcome), is_error=refused_answer)

        return await guarded(
            ctx, call, question, query_type, limits.answer_timeout_s, progress=True
        )

    @server.tool(description=tools.TOOLS["check_answer"]["description"], structured_output=False)
    async def check_answer(
        run: Annotated[dict[str, Any], Field(description=tools.RUN["description"])], ctx: Context
    ) -> CallToolResult:
        if check_run is None:
            return refused("not_implemented", "the agent-run detector is not installed")

        def call(_: str, stop: threading.Event) -> CallToolResult:
            try:
                report = check_run(run, stop)
            except (ValueError, TypeError, KeyError) as exc:
                return refused("invalid_run", str(exc).splitlines()[0][:300])
            if hasattr(report, "model_dump"):
                report = report.model_dump(mode="json")
            return _reply({"report": jsonable(report)}, is_error=False)

        return await guarded(ctx, call, "check", None, limits.answer_timeout_s)

    for name, schema in tools.OUTPUT_SCHEMAS.items():  # advertised, as clients expect
        server._tool_manager.get_tool(name).fn_metadata.output_schema = schema

    @server.resource(
        "doc://{doc_id}#{start}-{end}",
        name="cited_span",
        description="A cited span of a document with its surrounding section: a source's `uri`.",
        mime_type="application/json",
    )
    def cited_span(doc_id: str, start: str, end: str, ctx: Context) -> str:
        try:
            principal = who(ctx)
        except auth.AuthError as exc:
            raise ResourceError(f"unauthorized: {exc}") from None
        if not (start.isdigit() and end.isdigit()):
            raise ResourceError("invalid_request: start and end must be character offsets")
        try:
            body = engine.span(principal, doc_id, int(start), int(end))
        except RequestError as exc:
            raise ResourceError(f"invalid_request: {exc}") from None
        except LookupError as exc:
            raise ResourceError(f"not_found: {exc.args[0]}") from None
        return json.dumps(body, ensure_ascii=False, default=str)

    return server


async def _progress(ctx: Context, done: float, total: float, message: str) -> None:
    try:
        await ctx.report_progress(done, total, message)
    except Exception:  # a client that went away: the work goes on to its end or deadline
        log.debug("progress notification not sent", exc_info=True)


class RefuseBadCredentials:
    """Streamable HTTP: every request to /mcp presents a valid key (or no credential, where an
    anonymous principal is configured), so a wrong key is refused at connect (401), before
    the session starts or any tool is listed."""

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app, self.agents = app, engine.agents

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            try:
                auth.authenticate(self.agents, headers, f"mcp {scope.get('path', '')}")
            except auth.AuthError as exc:
                response = error_response(
                    401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def check_stdio_key(engine: Engine, key: str | None) -> str:
    """The stdio caller's principal, or `AuthError` before the server starts."""
    return auth.principal_for(engine.agents, key)


def serve_stdio(engine: Engine) -> None:
    key = os.environ.get(KEY_ENV)
    key = key if key else None  # an unset or empty variable: no credential
    check_stdio_key(engine, key)
    create_server(engine, key).run("stdio")


def http_app(engine: Engine, host: str):
    """The streamable-HTTP ASGI app at /mcp (uvicorn serves it), behind the key check."""
    app = create_server(engine).streamable_http_app(host=host)
    app.add_middleware(RefuseBadCredentials, engine=engine)
    return app
