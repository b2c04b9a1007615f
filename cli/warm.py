"""`grounding warm`: the local LLM's system prompts' KV states saved ahead of the first ask."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cli.options import ConfigOption, SetOption, load_settings

console = Console()


def warm(
    config: ConfigOption = Path("configs/pipeline.yaml"),
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Save the local LLM's system prompts' KV states (generator, judge, probes), so a fresh
    `ask` restores them instead of reading them again (about 6 s on 2 cores). `make setup`
    runs it; prompts saved before are found, not read again. Exits 1 when the model cannot be
    loaded."""
    from flows.warm import warm as warm_prompts

    settings = load_settings(config, set_)
    rows = warm_prompts(settings)
    table = Table(title="system prompts' KV states")
    for column in ("stage", "prompt", "status", "seconds"):
        table.add_column(column)
    for row in rows:
        table.add_row(row.stage, row.prompt, row.status, f"{row.seconds:.2f}")
    console.print(table)
    sys.exit(1 if any(row.status.startswith("error") for row in rows) else 0)
