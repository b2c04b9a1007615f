"""`grounding serve`: scheduled runs against a Prefect server.

Three deployments (flows in flows/scheduled.py), with cron schedules and parameters from
`configs/schedules.yaml`: the question inbox, the nightly release eval and the corpus re-index.
`prefect.serve` registers them and executes their runs in this process's children, so nothing
needs a work pool; it needs a real server (PREFECT_API_URL), not ephemeral mode.

Prefect is imported only when the command runs, so `grounding --help` stays fast.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

DEFAULT_CONFIG = "configs/pipeline.yaml"
DEFAULT_SCHEDULES = Path("configs/schedules.yaml")
FLOW_NAMES = ("question-inbox", "release-eval", "corpus-reindex")


def flows() -> dict:
    from flows.scheduled import FLOWS

    return FLOWS


# ---------------------------------------------------------------- schedules


class ScheduleError(ValueError):
    pass


class DeploymentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    flow: str
    cron: str
    timezone: str = "UTC"
    description: str | None = None
    paused: bool = False
    parameters: dict[str, Any] = {}


def load_schedules(path: Path) -> dict[str, DeploymentSpec]:
    """Deployment name -> spec; unknown flows, parameters, crons or time zones are errors."""
    from prefect.client.schemas.schedules import CronSchedule

    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError:
        raise ScheduleError(f"schedules file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ScheduleError(f"{path}: invalid YAML: {exc}") from exc
    specs = {}
    for name, body in (raw.get("deployments") or {}).items():
        try:
            spec = DeploymentSpec.model_validate(body)
        except ValidationError as exc:
            raise ScheduleError(f"{path}: deployment {name!r}: {exc}") from exc
        if spec.flow not in FLOW_NAMES:
            raise ScheduleError(
                f"{path}: {name}: unknown flow {spec.flow!r}; known: {list(FLOW_NAMES)}"
            )
        accepted = set(inspect.signature(flows()[spec.flow].fn).parameters)
        unknown = sorted(set(spec.parameters) - accepted)
        if unknown:
            raise ScheduleError(f"{path}: {name}: unknown parameters {unknown}; {sorted(accepted)}")
        try:
            CronSchedule(cron=spec.cron, timezone=spec.timezone)
        except Exception as exc:  # prefect validates both the expression and the zone
            raise ScheduleError(f"{path}: {name}: bad cron/timezone: {exc}") from exc
        specs[name] = spec
    if not specs:
        raise ScheduleError(f"{path}: no deployments")
    return specs


def build_deployments(specs: dict[str, DeploymentSpec], config_path: str) -> list:
    """RunnerDeployments for `prefect.serve`; `config_path` fills in where a spec leaves it out."""
    from prefect.schedules import Cron
    from prefect.types.entrypoint import EntrypointType

    deployments = []
    for name, spec in specs.items():
        chosen = flows()[spec.flow]
        parameters = {"config_path": config_path, **spec.parameters}
        deployments.append(
            chosen.to_deployment(
                name=name,
                schedules=[Cron(spec.cron, timezone=spec.timezone)],
                parameters=parameters,
                paused=spec.paused,
                description=spec.description or chosen.__doc__,
                tags=["grounding", "scheduled"],
                # import `flows.scheduled` as a module, not the file by path (which would make it
                # a top-level `scheduled` module with its own copies of everything)
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
        )
    return deployments


def check_server() -> str:
    """The Prefect API URL, after checking it answers; ScheduleError says how to get one."""
    import httpx
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    hint = "start one with `make server`, then `export PREFECT_API_URL=http://127.0.0.1:4200/api`"
    if not url:
        raise ScheduleError(
            f"PREFECT_API_URL is not set: scheduled runs need a Prefect server; {hint}"
        )
    try:
        httpx.get(f"{url.rstrip('/')}/health", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        raise ScheduleError(f"no Prefect server answers at {url} ({exc}); {hint}") from exc
    return url


# ---------------------------------------------------------------- CLI


def _run_once(specs: dict[str, DeploymentSpec], config_path: str) -> int:
    """Each deployment's flow once, now, in this process (what its next cron tick would do)."""
    failures = 0
    for name, spec in specs.items():
        parameters = {"config_path": config_path, **spec.parameters}
        try:
            result = flows()[spec.flow](**parameters)
            typer.echo(f"{name}: completed {json.dumps(result, default=str)[:300]}")
        except Exception as exc:
            failures += 1
            typer.echo(f"{name}: failed: {type(exc).__name__}: {exc}", err=True)
    return failures


def serve_command(
    config: Annotated[
        Path,
        typer.Option(
            "--config", "-c", help="Pipeline config for deployments that do not name one."
        ),
    ] = Path(DEFAULT_CONFIG),
    schedules: Annotated[
        Path, typer.Option(help="Deployments: flow, cron, timezone, parameters.")
    ] = DEFAULT_SCHEDULES,
    only: Annotated[
        list[str], typer.Option("--only", help="Serve (or run) only this deployment; repeatable.")
    ] = [],  # noqa: B006 - typer needs a literal default
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="Run each deployment's flow once now in this process and exit (no server "
            "needed; it is used if PREFECT_API_URL is set).",
        ),
    ] = False,
) -> None:
    """Register the scheduled deployments (question inbox, nightly release eval, corpus
    re-index) with a Prefect server and execute their runs until interrupted.

    Needs a running server: `make server` in another terminal, then
    `export PREFECT_API_URL=http://127.0.0.1:4200/api`. Schedules live in configs/schedules.yaml.
    """
    try:
        specs = load_schedules(schedules)
        unknown = sorted(set(only) - set(specs))
        if unknown:
            raise ScheduleError(f"--only {unknown}: not in {schedules}; known: {list(specs)}")
        specs = {n: s for n, s in specs.items() if not only or n in only}
        if once:
            raise typer.Exit(1 if _run_once(specs, str(config)) else 0)
        url = check_server()
    except ScheduleError as exc:
        typer.echo(f"serve error: {exc}", err=True)
        raise typer.Exit(2) from exc
    from prefect import serve

    deployments = build_deployments(specs, str(config))
    for name, spec in specs.items():
        typer.echo(f"{spec.flow}/{name}: cron {spec.cron!r} ({spec.timezone}) -> {url}")
    serve(*deployments, print_starting_message=False)
