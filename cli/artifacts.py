"""`grounding artifacts ls|show|gc`: the artifact store listed, one artifact shown, and what no
run references collected (`flows.ops` finds it)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings
from flows.ops import garbage, manifests

console = Console()
artifacts_app = typer.Typer(
    help="List, inspect and garbage-collect artifacts.", no_args_is_help=True
)


@artifacts_app.command("ls")
def list_artifacts(
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    stage: Annotated[str | None, typer.Option(help="Only this stage.")] = None,
) -> None:
    """List artifacts with their version, rows and lineage (which inputs they were built from)."""
    settings = load_settings(config, set_)
    table = Table(title=f"artifacts in {settings.store}")
    for column in ("stage", "key", "version", "created", "rows", "inputs"):
        table.add_column(column)
    for m in manifests(settings.artifact_store()):
        if stage and m["stage"] != stage:
            continue
        rows = ", ".join(f"{n}={t['rows']}" for n, t in m.get("tables", {}).items())
        inputs = ", ".join(f"{p}:{k[:8]}" for p, k in m.get("input_keys", {}).items())
        table.add_row(m["stage"], m["key"][:12], m["version"], m["created_at"][:19], rows, inputs)
    console.print(table)


@artifacts_app.command("show")
def show_artifact(
    key: Annotated[str, typer.Argument(help="An artifact key or a unique prefix of one.")],
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Print one artifact's manifest: config, inputs, lineage, tables and library versions."""
    store = load_settings(config, set_).artifact_store()
    matches = [m for m in manifests(store) if m["key"].startswith(key)]
    if len(matches) != 1:
        console.print(f"[red]{len(matches)} artifacts match {key!r}[/red]")
        raise typer.Exit(2)
    console.print_json(json.dumps(matches[0]))


@artifacts_app.command("gc")
def collect_garbage(
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
    apply: Annotated[bool, typer.Option("--apply", help="Delete (default: dry run).")] = False,
) -> None:
    """Remove artifacts that no run in runs/ references (dry run unless --apply)."""
    settings = load_settings(config, set_)
    store = settings.artifact_store()
    unused = garbage(store, settings.runs_dir)
    total = sum(store.size(str(p)) for p in unused)
    for path in unused:
        console.print(f"{'deleting' if apply else 'would delete'} {str(path)}")
        if apply:
            store.delete(str(path))
    verb = "freed" if apply else "would free"
    console.print(f"{len(unused)} folders, {verb} {total / 1e6:.1f} MB")
