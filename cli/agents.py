"""`grounding api | mcp | tools | agent`: the knowledge base served to agents (`agents.serving`)
from the command line. Heavy imports (FastAPI, the SDK, the stages) happen when a command runs,
so --help stays fast."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings

AgentsOption = Annotated[
    Path,
    typer.Option(
        "--agents-config",
        help="Agent serving config: instructions, keys, limits (--set overrides only the "
        "pipeline config).",
    ),
]
DEFAULT_AGENTS = Path("configs/agents.yaml")


class ToolFormat(StrEnum):
    openai = "openai"
    openai_responses = "openai_responses"
    anthropic = "anthropic"


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _engine(config: Path, agents_config: Path, overrides: list[str]):
    """The shared engine (index found or built once), or a one-line error and exit 2."""
    from agents.serving.agents_config import AgentsConfigError, load_agents_config
    from agents.serving.engine import Engine

    try:
        agents = load_agents_config(agents_config)
    except AgentsConfigError as exc:
        raise _fail(str(exc)) from exc
    settings = load_settings(config, overrides)
    typer.echo("loading the index…", err=True)
    return Engine(settings, agents)


def _watch(engine) -> None:
    """The corpus watch of `limits.reindex_every_s`, when configured."""
    import threading

    every = engine.agents.limits.reindex_every_s
    if every:
        engine.watch(every, threading.Event())
        typer.echo(f"re-indexing a changed corpus every {every:g} s", err=True)


def _checked_bind(engine, host: str) -> None:
    from agents.serving.auth import StartError, check_start

    try:
        check_start(engine.agents, host, engine.principals)
    except StartError as exc:
        raise _fail(str(exc)) from exc
    from agents.serving.auth import is_loopback

    anonymous = engine.agents.anonymous_principal
    if anonymous and not is_loopback(host):
        typer.echo(
            f"warning: requests without a key are served as {anonymous!r} on {host}; remove "
            "anonymous_principal from the agents config unless that is meant",
            err=True,
        )


def api(
    host: Annotated[str | None, typer.Option(help="Bind address (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 8765).")] = None,
    config: ConfigOption = DEFAULT_CONFIG,
    agents_config: AgentsOption = DEFAULT_AGENTS,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Serve the knowledge base as grounded tools over HTTP: /v1/search, /v1/answer, /v1/check,
    /v1/ground-tool-result, /v1/documents/{doc_id}, /v1/reindex, /health; the API page at /docs
    (served offline). Refuses a non-loopback --host while configs/agents.yaml has no API keys."""
    import uvicorn

    from agents.serving.http_api import create_app

    engine = _engine(config, agents_config, set_)
    host = host or engine.agents.http.host
    port = engine.agents.http.port if port is None else port
    _checked_bind(engine, host)
    typer.echo(f"grounding API on http://{host}:{port} (OpenAPI: /docs)", err=True)
    _watch(engine)
    uvicorn.run(create_app(engine), host=host, port=port, log_level="warning")


def mcp(
    transport: Annotated[
        Transport, typer.Option(help="stdio (a client starts this process) or http.")
    ] = Transport.stdio,
    host: Annotated[str | None, typer.Option(help="http: bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="http: port (default 8766).")] = None,
    config: ConfigOption = DEFAULT_CONFIG,
    agents_config: AgentsOption = DEFAULT_AGENTS,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Serve the MCP tools search_knowledge_base, answer_with_citations and check_answer, over
    stdio (the caller's key in GROUNDING_API_KEY) or streamable HTTP at /mcp."""
    from agents.serving import mcp_server

    if transport is Transport.stdio:
        from agents.serving.auth import AuthError

        engine = _engine(config, agents_config, set_)
        try:
            mcp_server.serve_stdio(engine)
        except AuthError as exc:  # a wrong GROUNDING_API_KEY: refused before serving anything
            raise _fail(f"{exc} ({mcp_server.KEY_ENV})") from exc
        return
    import uvicorn

    engine = _engine(config, agents_config, set_)
    host = host or engine.agents.mcp_http.host
    port = engine.agents.mcp_http.port if port is None else port
    _checked_bind(engine, host)
    typer.echo(f"grounding MCP on http://{host}:{port}/mcp", err=True)
    _watch(engine)
    uvicorn.run(mcp_server.http_app(engine, host), host=host, port=port, log_level="warning")


def tools(
    format: Annotated[ToolFormat, typer.Option("--format", help="Declaration format.")] = (
        ToolFormat.openai
    ),
) -> None:
    """Print the tool declarations (JSON) for agent code that calls the HTTP API itself."""
    from agents.serving.tools import declarations

    typer.echo(json.dumps(declarations(format.value), indent=2))


def agent(
    question: Annotated[str, typer.Argument(help="The question for the agent.")],
    base_url: Annotated[
        str | None,
        typer.Option(help="An OpenAI-compatible server with tool calling; default: local GGUF."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name on --base-url.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole run as JSON.")] = False,
    config: ConfigOption = DEFAULT_CONFIG,
    agents_config: AgentsOption = DEFAULT_AGENTS,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Run the reference agent: a model with the search_knowledge_base tool answers the
    question from grounded results. The principal comes from GROUNDING_API_KEY (else the
    anonymous one). Exits 1 when the model cannot be reached."""
    from agents.serving.agent import ToolModel, run_agent
    from agents.serving.auth import AuthError, principal_for
    from stages.models.errors import LLMError

    engine = _engine(config, agents_config, set_)
    try:
        principal = principal_for(engine.agents, os.environ.get("GROUNDING_API_KEY"))
    except AuthError as exc:
        raise _fail(str(exc)) from exc
    settings = engine.config.stage_config("generation").llm
    if base_url:
        update = {"backend": "openai_compatible", "base_url": base_url}
        settings = settings.model_copy(update={**update, **({"model": model} if model else {})})
    try:
        run = run_agent(
            engine, ToolModel(settings), question, principal, engine.agents.agent.max_turns
        )
    except LLMError as exc:
        typer.echo(f"error: the model failed: {exc}", err=True)
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps(run, indent=2, ensure_ascii=False, default=str))
        return
    for result in run["tool_results"]:
        typer.echo(f"search {result['query']!r}: {result['status']}", err=True)
    if run["answered_by"] != "model":
        typer.echo("(the model gave no answer of its own: this is the grounded result's)", err=True)
    typer.echo(run["answer"])
    if run["report"]:
        typer.echo(f"check: {run['report'].get('action')}", err=True)
    sys.exit(0)
