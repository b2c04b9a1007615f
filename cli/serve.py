"""`grounding serve`: the scheduled deployments of configs/schedules.yaml (`flows.serve`) served
against a Prefect server, or each run once with `--once`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from flows.serve import (
    DEFAULT_CONFIG,
    DEFAULT_SCHEDULES,
    DeploymentSpec,
    ScheduleError,
    build_deployments,
    check_server,
    flows,
    load_schedules,
    serve_deployments,
)


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
    deployments = build_deployments(specs, str(config))
    for name, spec in specs.items():
        typer.echo(f"{spec.flow}/{name}: cron {spec.cron!r} ({spec.timezone}) -> {url}")
    serve_deployments(deployments)
