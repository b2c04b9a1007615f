"""`grounding api`: the knowledge base as grounded tools over HTTP (FastAPI on uvicorn).

POST /v1/search, /v1/answer, /v1/check, /v1/ground-tool-result, /v1/reindex (admin); GET
/v1/documents/{doc_id} (a cited span with its section), /v1/tools, /health; the API page at
/docs (served from this process, no CDN; schema at /openapi.json). The caller's principal comes
from its API key (`Authorization: Bearer <key>` or `X-API-Key`), never from the body; any
credential that is not a valid key is 401. Every grounded state, technical errors included, is
HTTP 200 with `is_error` in the body (agents pass it to the model as is); every 4xx / 5xx is
{"error": code, "message": one plain line} (plus `result` for a timeout or a busy LLM).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agents.serving import auth, tools
from agents.serving import result as results
from agents.serving.engine import Busy, Engine, Filters, RequestError
from agents.serving.ground import ToolOutput, ground_tool_result
from stages.models.chat import Cancelled, stop_when

log = logging.getLogger(__name__)
QueryType = Literal["general", "pricing", "contract", "dates", "policy", "hr", "sla", "support"]
TIMEOUT_STATUS = 504  # one code for a request past its deadline, in docs, config and API


def _has_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain text, not only whitespace")
    return value


Text = Annotated[str, Field(min_length=1), AfterValidator(_has_text)]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Text = Field(description="the question, in the user's words")
    query_type: QueryType | None = Field(None, description="selects the sources; default general")
    confidence_check: bool | None = Field(
        None, description="ask the LLM's confidence check; default: on for critical query types"
    )
    top_k: int | None = Field(None, ge=1, le=20, description="sources per page (default 8)")
    filters: Filters | None = Field(None, description="narrow the search to some documents")
    cursor: str | None = Field(
        None, max_length=200, description="`next_cursor` of the previous page of this search"
    )


class AnswerRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Text
    query_type: QueryType | None = None


class CheckRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: dict[str, Any] = Field(
        description="an OpenAI, OpenAI Responses, Anthropic or generic agent run"
    )


class GroundRequest(ToolOutput):
    model_config = ConfigDict(extra="forbid")

    query: Text = Field(description="what the tool was called to find out")
    query_type: QueryType | None = None


class ErrorBody(BaseModel):
    """Every 4xx / 5xx: a code a program can branch on and one line a person (or a model) can
    act on; `result` is the grounded technical-error result for a timeout or a busy LLM."""

    error: str
    message: str
    result: results.ToolResult | None = None


class SpanBody(BaseModel):
    uri: str
    doc_id: str
    title: str | None
    section: str | None
    span: dict[str, Any]
    context: dict[str, Any]


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 413, 422, 429, TIMEOUT_STATUS)
}


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers=None, body=None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers, self.body = headers or {}, body or {}


def error_response(status: int, code: str, message: str, headers=None, **extra) -> JSONResponse:
    return JSONResponse(
        {"error": code, "message": message, **extra}, status_code=status, headers=headers
    )


class BodyGuard:
    """Reads a request's whole body before the app does: 413 past `limit` bytes (by its
    Content-Length or as chunks arrive), 400 for a JSON body that is not UTF-8; both in the one
    error shape. The app then reads the buffered body."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._send(scope, send, *self._too_large())
            return
        chunks, seen = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.limit:
                await self._send(scope, send, *self._too_large())
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        whole = b"".join(chunks)
        if b"json" in headers.get(b"content-type", b"").lower():
            try:
                whole.decode("utf-8")
            except UnicodeDecodeError as exc:
                message = f"the body is not UTF-8 text (byte {exc.start} cannot be read)"
                await self._send(scope, send, 400, "invalid_body", message)
                return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: the disconnect, when it comes
            delivered = True
            return {"type": "http.request", "body": whole, "more_body": False}

        await self.app(scope, replay, send)

    def _too_large(self) -> tuple[int, str, str]:
        return 413, "body_too_large", f"request body is over the limit of {self.limit} bytes"

    async def _send(self, scope: Scope, send: Send, status: int, code: str, message: str) -> None:
        await error_response(status, code, message)(scope, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class Gate:
    """At most `limit` requests in flight; the next one is refused at once (429). A request
    holds its place until its work has really stopped, not just until its caller gave up."""

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

    def leave(self, *_: Any) -> None:
        with self.lock:
            self.active -= 1


def validation_message(exc: RequestValidationError) -> tuple[int, str, str]:
    """Status, code and one plain line for a request FastAPI could not validate (no library
    links, no input echoed back)."""
    errors = exc.errors()
    first = errors[0] if errors else {}
    kind = first.get("type", "")
    if kind == "json_invalid":
        reason = (first.get("ctx") or {}).get("error", "malformed")
        at = first.get("loc", ("body", "?"))[-1]
        return 400, "invalid_json", f"the body is not valid JSON: {reason} (character {at})"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    if kind == "extra_forbidden":
        return 422, "invalid_request", f"{where}: unknown field; remove it"
    if kind == "missing":
        return 422, "invalid_request", f"{where}: required field is missing"
    text = str(first.get("msg", "invalid value")).removeprefix("Value error, ")
    return 422, "invalid_request", f"{where}: {text}"


def create_app(engine: Engine) -> FastAPI:
    """The HTTP API over one shared engine (its index loaded once for the process)."""
    agents = engine.agents
    limits = agents.limits
    anonymous = agents.anonymous_principal
    app = FastAPI(
        title="grounding: the knowledge base as a grounded tool",
        version="1",
        description="Grounded tool results (success, low_relevance, not_found, technical_error) "
        "for agents. Authenticate with `Authorization: Bearer <key>`; a request without any "
        f"credential is {f'the anonymous principal ({anonymous})' if anonymous else 'refused'}.",
        docs_url=None,  # the stock pages load their scripts from a CDN; /docs is served here
        redoc_url=None,
        openapi_url=None,  # served below, behind the same credential check as the other pages
    )
    gate = Gate(limits.max_concurrent)

    def credentials(request: Request) -> str:
        """The caller's principal; 401 for any credential that is not a valid key."""
        try:
            return auth.authenticate(agents, request.headers, request.url.path)
        except auth.AuthError as exc:
            raise ApiError(401, "unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from exc

    def no_bad_credentials(request: Request) -> None:
        """Open pages (health, docs, schema) still refuse a wrong credential."""
        if _presented(request):
            credentials(request)

    def check_length(name: str, value: Any, limit: int) -> None:
        size = _text_size(value)
        if size > limit:
            message = f"{name} is {size} characters; the limit is {limit}"
            raise ApiError(422, f"{name}_too_long", message)

    async def bounded(
        call: Callable[[threading.Event], Any], timeout: float, query: str, query_type
    ) -> Any:
        """`call(stop)` in a worker thread, inside the concurrency gate and the time limit.
        Past the limit `stop` is set, so the work (the LLM at its next token) stops, and the
        request's place in the gate is kept until it has."""
        gate.enter()
        stop = threading.Event()
        work = asyncio.ensure_future(asyncio.to_thread(call, stop))
        try:
            return await asyncio.wait_for(asyncio.shield(work), timeout)
        except TimeoutError as exc:
            stop.set()
            result = results.technical_error(agents, query, "timeout", query_type)
            raise ApiError(
                TIMEOUT_STATUS,
                "timeout",
                f"the request took longer than {timeout:g} s; its work was stopped",
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
        except RequestError as exc:
            raise ApiError(422, "invalid_request", str(exc)) from exc
        finally:
            if work.done():
                gate.leave()
            else:  # its place is freed when the work has stopped; its outcome is dropped
                work.add_done_callback(_abandoned(gate))

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers, **exc.body)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(*validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code, message = HTTP_WORDS.get(exc.status_code, ("error", "the request failed"))
        if exc.status_code == 400:
            message = "the body could not be read as JSON"
        return error_response(exc.status_code, code, message, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)  # details in the log only
        return error_response(500, "internal", "internal error; nothing about it is shown here")

    open_page = [Depends(no_bad_credentials)]

    @app.get("/health", dependencies=open_page)
    @app.get("/v1/health", include_in_schema=False, dependencies=open_page)
    def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "chunks": engine.shared["chunks"].num_rows,
            "documents": engine.shared["documents"].num_rows,
            "anonymous_principal": anonymous,
            "keys": len(agents.api_keys),
        }

    @app.get("/v1/tools", dependencies=open_page)
    def tool_declarations(
        format: Literal["openai", "openai_responses", "anthropic"] = "openai",
    ) -> list[dict]:
        """The tools' declarations, for agent code that calls this API itself."""
        return tools.declarations(format)

    @app.post("/v1/search", response_model=results.ToolResult, responses=ERRORS)
    async def search(body: SearchRequest, who: str = Depends(credentials)) -> results.ToolResult:
        """Search the knowledge base: one grounded tool result in one of four states. `top_k`,
        `filters` and `cursor` steer it inside what the caller may read."""
        check_length("query", body.query, limits.max_query_chars)
        return await bounded(
            lambda stop: engine.search(
                body.query,
                who,
                body.query_type,
                body.confidence_check,
                top_k=body.top_k,
                filters=body.filters,
                cursor=body.cursor,
                stop=stop,
            ),
            limits.request_timeout_s,
            body.query,
            body.query_type,
        )

    @app.get(
        "/v1/documents/{doc_id}",
        response_model=SpanBody,
        responses={**ERRORS, 404: {"model": ErrorBody}},
    )
    def document_span(
        doc_id: str,
        start: Annotated[int, Query(ge=0, description="char_start of the cited span")],
        end: Annotated[int, Query(ge=1, description="char_end of the cited span")],
        who: str = Depends(credentials),
    ) -> dict[str, Any]:
        """A cited span (`doc://{doc_id}#{start}-{end}` of a source) with its section, for a
        caller who may read the document; 404 otherwise, the same as for no such document."""
        try:
            return engine.span(who, doc_id, start, end)
        except RequestError as exc:
            raise ApiError(422, "invalid_request", str(exc)) from exc
        except LookupError as exc:
            raise ApiError(404, "not_found", exc.args[0]) from exc

    @app.post("/v1/ground-tool-result", response_model=results.ToolResult, responses=ERRORS)
    async def ground(body: GroundRequest, who: str = Depends(credentials)) -> results.ToolResult:
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
            lambda _stop: ground_tool_result(engine, body.query, raw, body.query_type),
            limits.request_timeout_s,
            body.query,
            body.query_type,
        )

    @app.post("/v1/answer", responses=ERRORS)
    async def answer(body: AnswerRequest, who: str = Depends(credentials)) -> dict[str, Any]:
        """The cited answer or the structured refusal, with its hallucination report."""
        check_length("question", body.question, limits.max_query_chars)

        def call(stop: threading.Event) -> dict[str, Any]:
            try:
                return engine.answer(body.question, who, body.query_type, stop=stop)
            except Busy:
                raise
            except Cancelled:
                kind = "timeout"
            except Exception:
                log.exception("answer failed")
                kind = "unknown"
            failed = results.technical_error(agents, body.question, kind, body.query_type)
            return {"answer": None, "report": None, "result": failed.model_dump()}

        return await bounded(call, limits.answer_timeout_s, body.question, body.query_type)

    check_run = make_checker(agents.check, getattr(engine, "llm_slot", None))

    @app.post("/v1/check", responses={**ERRORS, 501: {"model": ErrorBody}})
    async def check(body: CheckRequest, who: str = Depends(credentials)) -> dict[str, Any]:
        """Check an agent run with the agent-run detector: its HallucinationReport."""
        if check_run is None:
            raise ApiError(501, "not_implemented", "the agent-run detector is not installed")
        check_length("run", body.run, limits.max_raw_chars)

        def call(stop: threading.Event) -> dict[str, Any]:
            try:
                return {"report": _jsonable_report(check_run(body.run, stop))}
            except (ValueError, TypeError, KeyError) as exc:  # a malformed run: say what
                raise ApiError(422, "invalid_run", str(exc).splitlines()[0][:300]) from exc

        return await bounded(call, limits.answer_timeout_s, "check", None)

    @app.post("/v1/reindex", responses={**ERRORS, 403: {"model": ErrorBody}})
    async def reindex(request: Request, who: str = Depends(credentials)) -> dict[str, Any]:
        """Index the corpus as it is now and serve the new snapshot from the next request on
        (requests in flight finish on theirs). A key of an `admin_principals` principal only."""
        if not _presented(request) or who not in agents.admin_principals:
            raise ApiError(403, "forbidden", "re-indexing needs the key of an admin principal")
        return await asyncio.to_thread(engine.reindex)

    @app.get("/openapi.json", include_in_schema=False, dependencies=open_page)
    def openapi_schema() -> dict[str, Any]:
        return app.openapi()

    @app.get("/docs", include_in_schema=False, dependencies=open_page)
    def docs_page() -> HTMLResponse:
        return HTMLResponse(render_docs(app.openapi()))

    app.add_middleware(BodyGuard, limit=limits.max_body_bytes)
    return app


HTTP_WORDS = {
    400: ("invalid_body", "the body could not be read"),
    401: ("unauthorized", "a valid API key is required"),
    403: ("forbidden", "this key may not do that"),
    404: ("not_found", "no such path; see /docs"),
    405: ("method_not_allowed", "this path does not take that method; see /docs"),
    413: ("body_too_large", "the request body is too large"),
    415: ("unsupported_media_type", "send the body as application/json"),
}


def _abandoned(gate: Gate) -> Callable[[asyncio.Future], None]:
    def done(future: asyncio.Future) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.info("a timed-out request's work ended with %s", type(future.exception()).__name__)
        gate.leave()

    return done


def _presented(request: Request) -> bool:
    return "authorization" in request.headers or "x-api-key" in request.headers


def render_docs(schema: dict[str, Any]) -> str:
    """The API page: every path, its method, summary, parameters and body fields, rendered here
    from the OpenAPI schema, with no script and no asset from outside this server."""
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{esc(schema['info']['title'])}</title>",
        "<style>body{font:15px/1.5 sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
        "code,pre{background:#f4f4f4;padding:0 .2em}h3{margin-bottom:.2em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em}</style>",
        "</head><body>",
        f"<h1>{esc(schema['info']['title'])}</h1>",
        f"<p>{esc(schema['info'].get('description', ''))}</p>",
        "<p>The machine-readable schema: <a href='/openapi.json'>/openapi.json</a>.</p>",
    ]
    components = schema.get("components", {}).get("schemas", {})
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            parts.append(f"<h3><code>{esc(method.upper())} {esc(path)}</code></h3>")
            parts.append(f"<p>{esc(op.get('description') or op.get('summary') or '')}</p>")
            params = op.get("parameters", [])
            if params:
                parts.append("<p>Parameters: ")
                parts.append(
                    ", ".join(
                        f"<code>{esc(p['name'])}</code> ({esc(p.get('in', ''))})" for p in params
                    )
                )
                parts.append("</p>")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            ref = body.get("schema", {}).get("$ref", "")
            model = components.get(ref.rsplit("/", 1)[-1]) if ref else None
            if model:
                required = set(model.get("required", []))
                parts.append("<table><tr><th>body field</th><th>required</th><th>about</th></tr>")
                for name, prop in model.get("properties", {}).items():
                    about = prop.get("description", "")
                    mark = "yes" if name in required else ""
                    parts.append(
                        f"<tr><td><code>{esc(name)}</code></td><td>{mark}</td>"
                        f"<td>{esc(about)}</td></tr>"
                    )
                parts.append("</table>")
            codes = ", ".join(sorted(op.get("responses", {})))
            parts.append(f"<p>Responses: {esc(codes)}</p>")
    parts.append("</body></html>")
    return "".join(parts)


def load_check_run() -> Callable[..., Any] | None:
    """`agents.checking.check_run`, imported when first needed."""
    try:
        from agents.checking import check_run
    except ImportError:
        return None
    return check_run


def make_checker(
    settings: dict[str, Any], slot: Callable[..., Any] | None = None
) -> Callable[..., Any] | None:
    """The agent-run check with the served settings (configs/agents.yaml `check:`), its judge
    loaded once for the process and shared by every request; checks run one at a time, so each
    report counts only its own judge calls. None when the detector is not installed.

    `slot(stop)`: the engine's LLM slot (`Engine.llm_slot`): a check's judge shares the model
    with answers, so it waits its turn as they do and is refused as busy (`Busy`, a 429) after
    the same bounded wait, never queued past its caller's deadline.
    `check_run(run, stop)`: once `stop` is set, a check still waiting for its turn gives up
    (`Cancelled`) and one running stops at its judge's next model call (the LLM at its next
    token or prompt chunk, the cross-encoder before its next claim)."""
    if load_check_run() is None:
        return None
    from agents.checking import check as agent_check

    config = agent_check.resolve_config(settings)
    lock = threading.Lock()
    shared: list[Any] = []  # the toolkit, made on the first check

    def check_run(run: Any, stop: threading.Event | None = None) -> Any:
        with slot(stop) if slot is not None else contextlib.nullcontext():
            while not lock.acquire(timeout=0.05):
                if stop is not None and stop.is_set():
                    raise Cancelled("the caller gave up while waiting for the checker")
            try:
                with stop_when(stop) if stop is not None else contextlib.nullcontext():
                    if not shared:
                        shared.append(agent_check.make_toolkit(config))
                    return agent_check.check_run(run, config, toolkit=shared[0])
            finally:
                lock.release()

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
