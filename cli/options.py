"""The options every `grounding` command that reads the pipeline's settings takes, written once.

`--config` names the pipeline YAML and `--set key=value` (repeatable) overrides one setting, the
same way for `run`, `trace`, `artifacts`, `review`, `trend`, `shadow`, `api` and every other
command that reads the pipeline's settings (`tests/test_cli_options.py` lists them). Three
commands give these names another meaning: `eval --set` names the eval set (its overrides are
`--set-override`), `check --config` is the agent-run check's YAML, and `serve --config` is the
default config of the deployments that name none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

DEFAULT_CONFIG = Path("configs/pipeline.yaml")

ConfigOption = Annotated[
    Path, typer.Option("--config", "-c", help="Pipeline config YAML.", show_default=True)
]
SetOption = Annotated[
    list[str], typer.Option("--set", help="Override a setting: key=value or stage.field=value.")
]


def load_settings(config_path: Path, overrides: list[str] | None = None):
    """The pipeline config with its overrides; a bad file or override is a one-line error and
    exit code 2."""
    from flows.pipeline_config import ConfigError, load_config, parse_overrides

    try:
        settings = load_config(config_path, parse_overrides(overrides or []))
    except ConfigError as exc:
        Console(stderr=True).print(f"[red]config error:[/red] {exc}")
        raise typer.Exit(2) from exc
    caches_under_the_store(settings)
    return settings


def caches_under_the_store(settings) -> None:
    """The local LLM's saved KV states go under the store's local folder (`--set store=...`
    moves them too), never into the working directory."""
    from stages.models import chat

    chat.use_cache_root(settings.artifact_store().local_state_dir())


def run_folder(run: str, runs_dir: Path) -> Path:
    """A run named by its id (a folder under the config's runs_dir) or by its folder's path."""
    given = Path(run)
    if given.is_dir():
        return given
    return runs_dir / run
