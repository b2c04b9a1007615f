"""`grounding api`: the knowledge base as grounded tools over HTTP (FastAPI on uvicorn).

POST /v1/search, /v1/answer, /v1/check, /v1/ground-tool-result; GET /v1/tools, /health; the
OpenAPI page at /docs (schema at /openapi.json). The caller's principal comes from its API key
(`Authorization: Bearer <key>` or `X-API-Key`), never from the body. Every grounded state,
technical errors included, is HTTP 200 with `is_error` in the body (agents pass it to the model
as is); a request past a limit is a 4xx with {"error": code, "message": one line}.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, Literal

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agents.serving import auth, tools
from agents.serving import result as results
from agents.serving.engine import Busy, Engine
from agents.serving.ground import ToolOutput, ground_tool_result

log = logging.getLogger(__name__)
QueryType = Literal["general", "pricing", "contract", "dates", "policy", "hr", "sla", "support"]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="the question, in the user's words")
    query_type: QueryType | None = Field(None, description="selects the sources; default general")
    confidence_check: bool | None = Field(
        None, description="ask the LLM's confidence check; default: on for critical query types"
    )


class AnswerRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1)
    query_type: QueryType | None = None


class CheckRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: dict[str, Any] = Field(
        description="an OpenAI, OpenAI Responses, Anthropic or generic agent run"
    )


class GroundRequest(ToolOutput):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="what the tool was called to find out")
    query_type: QueryType | None = None


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers=None, body=None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers, self.body = headers or {}, body or {}


class BodyLimit:
    """413 for a body over `limit` bytes, by its Content-Length or as it streams in."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        message = f"request body is over the limit of {self.limit} bytes"
        response = JSONResponse({"error": "body_too_large", "message": message}, status_code=413)
        await response({"type": "http"}, _no_body, send)


class _TooLarge(Exception):
    pass


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class Gate:
    """At most `limit` requests in flight; the next one is refused at once (429)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.active, self.lock = limit, 0, threading.Lock()

    def enter(self) -> None:
        with self.lock:
            if self.active >= self.limit:
                raise ApiError(
                    429,
                    "too_many_requests",
                    f"{self.limit} requests are in flight; retry in a second",
                    {"Retry-After": "1"},
                )
            self.active += 1

    def leave(self) -> None:
        with self.lock:
            self.active -= 1


def create_app(engine: Engine) -> FastAPI:
    """The HTTP API over one shared engine (its index loaded once for the process)."""
    agents = engine.agents
    limits = agents.limits
    app = FastAPI(
        title="grounding: the knowledge base as a grounded tool",
        version="1",
        description="Grounded tool results (success, low_relevance, not_found, technical_error) "
        "for agents. Authenticate with `Authorization: Bearer <key>`; without a key you are "
        f"the anonymous principal ({agents.anonymous_principal or 'disabled'}).",
    )
    gate = Gate(limits.max_concurrent)

    def principal(request: Request) -> str:
        try:
            return auth.principal_for(agents, auth.key_from_headers(request.headers))
        except auth.AuthError as exc:
            raise ApiError(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from exc

    def check_length(name: str, value: Any, limit: int) -> None:
        size = _text_size(value)
        if size > limit:
            message = f"{name} is {size} characters; the limit is {limit}"
            raise ApiError(422, f"{name}_too_long", message)

    async def bounded(call: Callable[[], Any], timeout: float, query: str, query_type) -> Any:
        """`call` in a worker thread, inside the concurrency gate and the time limit."""
        gate.enter()
        try:
            return await asyncio.wait_for(asyncio.to_thread(call), timeout)
        except TimeoutError as exc:
            result = results.technical_error(agents, query, "timeout", query_type)
            raise ApiError(
                408,
                "timeout",
                f"the request took longer than {timeout:g} s",
                body={"result": result.model_dump()},
            ) from exc
        except Busy as exc:
            result = results.technical_error(agents, query, "rate_limit", query_type)
            raise ApiError(
                429,
                "llm_busy",
                f"{exc}; retry after {exc.retry_after_s} s",
                {"Retry-After": str(exc.retry_after_s)},
                body={"result": result.model_dump()},
            ) from exc
        finally:
            gate.leave()

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        body = {"error": exc.code, "message": exc.message, **exc.body}
        return JSONResponse(body, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = f"{where}: {first.get('msg', 'invalid request')}"
        return JSONResponse({"error": "invalid_request", "message": message}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)  # details in the log only
        message = "internal error; nothing about it is shown here"
        return JSONResponse({"error": "internal", "message": message}, status_code=500)

    @app.get("/health")
    @app.get("/v1/health", include_in_schema=False)
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "chunks": engine.shared["chunks"].num_rows,
            "documents": engine.shared["documents"].num_rows,
            "anonymous_principal": agents.anonymous_principal,
            "keys": len(agents.api_keys),
        }

    @app.get("/v1/tools")
    def tool_declarations(
        format: Literal["openai", "openai_responses", "anthropic"] = "openai",
    ) -> list[dict]:
        """The tools' declarations, for agent code that calls this API itself."""
        return tools.declarations(format)

    @app.post("/v1/search", response_model=results.ToolResult)
    async def search(body: SearchRequest, who: str = Depends(principal)) -> results.ToolResult:
        """Search the knowledge base: one grounded tool result in one of four states."""
        check_length("query", body.query, limits.max_query_chars)
        return await bounded(
            lambda: engine.search(body.query, who, body.query_type, body.confidence_check),
            limits.request_timeout_s,
            body.query,
            body.query_type,
        )

    @app.post("/v1/ground-tool-result", response_model=results.ToolResult)
    async def ground(body: GroundRequest, who: str = Depends(principal)) -> results.ToolResult:
        """Ground any tool's raw output (JSON, text, HTTP status, exception) for a query."""
        check_length("query", body.query, limits.max_query_chars)
        check_length("output", body.output, limits.max_raw_chars)
        raw = ToolOutput(
            output=body.output,
            http_status=body.http_status,
            error=body.error,
            tool_name=body.tool_name,
        )
        return await bounded(
            lambda: ground_tool_result(engine, body.query, raw, body.query_type),
            limits.request_timeout_s,
            body.query,
            body.query_type,
        )

    @app.post("/v1/answer")
    async def answer(body: AnswerRequest, who: str = Depends(principal)) -> dict[str, Any]:
        """The cited answer or the structured refusal, with its hallucination report."""
        check_length("question", body.question, limits.max_query_chars)

        def call() -> dict[str, Any]:
            try:
                return engine.answer(body.question, who, body.query_type)
            except Busy:
                raise
            except Exception:
                log.exception("answer failed")
                failed = results.technical_error(agents, body.question, "unknown", body.query_type)
                return {"answer": None, "report": None, "result": failed.model_dump()}

        return await bounded(call, limits.answer_timeout_s, body.question, body.query_type)

    check_run = make_checker(agents.check)

    @app.post("/v1/check")
    async def check(body: CheckRequest, who: str = Depends(principal)) -> dict[str, Any]:
        """Check an agent run with the agent-run detector: its HallucinationReport."""
        if check_run is None:
            raise ApiError(501, "not_implemented", "the agent-run detector is not installed")
        check_length("run", body.run, limits.max_raw_chars)

        def call() -> dict[str, Any]:
            try:
                return {"report": _jsonable_report(check_run(body.run))}
            except (ValueError, TypeError, KeyError) as exc:  # a malformed run: say what
                raise ApiError(422, "invalid_run", str(exc).splitlines()[0][:300]) from exc

        return await bounded(call, limits.answer_timeout_s, "check", None)

    app.add_middleware(BodyLimit, limit=limits.max_body_bytes)
    return app


def load_check_run() -> Callable[..., Any] | None:
    """`agents.checking.check_run` (issue 42), imported when first needed."""
    try:
        from agents.checking import check_run
    except ImportError:
        return None
    return check_run


def make_checker(settings: dict[str, Any]) -> Callable[[Any], Any] | None:
    """The agent-run check with the served settings (configs/agents.yaml `check:`), its judge
    loaded once for the process and shared by every request; checks run one at a time, so each
    report counts only its own judge calls. None when the detector is not installed."""
    if load_check_run() is None:
        return None
    from agents.checking import check as agent_check

    config = agent_check.resolve_config(settings)
    lock = threading.Lock()
    shared: list[Any] = []  # the toolkit, made on the first check

    def check_run(run: Any) -> Any:
        with lock:
            if not shared:
                shared.append(agent_check.make_toolkit(config))
            return agent_check.check_run(run, config, toolkit=shared[0])

    return check_run


def _jsonable_report(report: Any) -> Any:
    from agents.serving.engine import jsonable

    if hasattr(report, "model_dump"):
        return report.model_dump(mode="json")
    return jsonable(report)


def _text_size(value: Any) -> int:
    if value is None:
        return 0
    return len(value) if isinstance(value, str) else len(json.dumps(value, default=str))
