"""Scheduled runs against a Prefect server: the deployments `grounding serve` (`cli/serve.py`)
registers.

Three deployments (flows in flows/scheduled.py), with cron schedules and parameters from
`configs/schedules.yaml`: the question inbox, the nightly release eval and the corpus re-index.
`prefect.serve` registers them and executes their runs in this process's children, so nothing
needs a work pool; it needs a real server (PREFECT_API_URL), not ephemeral mode.

Prefect is imported only when a function here runs, so `grounding --help` stays fast.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

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


def serve_deployments(deployments: list) -> None:
    """Execute the deployments' scheduled runs in this process's children until interrupted."""
    from prefect import serve

    serve(*deployments, print_starting_message=False)
