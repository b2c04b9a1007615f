"""`grounding check`: agent runs (OpenAI, OpenAI Responses, Anthropic or generic; a JSON file,
JSONL or a folder) through `agents.checking.check_run`, one HallucinationReport per
run; the batch flow itself is `flows/agent_check.py`.

    grounding check RUN.json                      # one summary line per run
    grounding check RUNS.jsonl --format json      # the reports as JSON on stdout
    grounding check logs/ --out reports/          # and one <run_id>.json report per run
    grounding check logs/ --store artifacts       # the Prefect flow: Parquet artifacts

Exit codes: 0 every run emitted; 1 any run revised or blocked; 2 unreadable input (no such
path, or a run that could not be read: the others are still checked and reported).

With `--store`, each run-log file is a partition written as one content-addressed artifact and
skipped when already checked with the same settings (see `flows/agent_check.py`); it runs as the
Prefect flow `agent-run-check`, or with `--no-prefect` as the same partitions in plain Python.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from flows.agent_check import STAGE, agent_check_flow, check_items, run_agent_check

console = Console(stderr=True, highlight=False)


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class Judge(StrEnum):
    auto = "auto"
    llm = "llm"
    fast = "fast"
    nli = "nli"
    none = "none"


def load_check_config(path: Path | None, overrides: dict[str, Any]) -> Any:
    """The agent-run check's Config: a YAML file of its fields, then the command's options."""
    import yaml

    from agents.checking.check import Config

    values: dict[str, Any] = {}
    if path is not None:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: not a mapping of settings")
        values |= loaded
    values |= {k: v for k, v in overrides.items() if v not in (None, [], ())}
    if overrides.get("identifier_allowlist"):
        values["identifier_allowlist"] = [
            *(values.get("identifier_allowlist") or []),
            *overrides["identifier_allowlist"],
        ]
    return Config(**values)


def summary_line(row: dict) -> str:
    """One greppable line a run: id, action, score, diagnosis, calls and results."""
    if "error" in row:
        return f"{row['run_id']}  ERROR  {row.get('source') or ''}: {row['error']}"
    calls = row["tool_call_validations"]
    invalid = sum(v["status"] != "valid" for v in calls)
    kinds: dict[str, int] = {}
    for result in row["tool_results"]:
        kinds[result["kind"]] = kinds.get(result["kind"], 0) + 1
    results = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
    score = "-" if row["overall_score"] is None else f"{row['overall_score']:.2f}"
    claims = row["claims"]
    unsupported = sum(c["status"] in ("weak", "unsupported", "error") for c in claims)
    return (
        f"{row['run_id']}  {row['action'].upper():<6} score {score}  "
        f"{row['diagnosis']['mode']}: {row['diagnosis']['text']}  "
        f"[claims {len(claims)}, {unsupported} not supported; calls {len(calls)}, "
        f"{invalid} rejected; results: {results}]"
    )


def exit_code(rows: list[dict]) -> int:
    if not rows or any("error" in r for r in rows):
        return 2
    return 1 if any(r["action"] != "emit" for r in rows) else 0


def _safe_name(run_id: str) -> str:
    return re.sub(r"[^\w.-]+", "_", run_id).strip("._")[:120] or "run"


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_reports(rows: list[dict], out: Path) -> None:
    """`<out>/<run_id>.json` per report; `<out>/errors.jsonl` for runs that could not be read."""
    errors = [r for r in rows if "error" in r]
    for row in rows:
        if "error" not in row:
            write_atomic(out / f"{_safe_name(row['run_id'])}.json", json.dumps(row, indent=2))
    if errors:
        write_atomic(out / "errors.jsonl", "".join(json.dumps(e) + "\n" for e in errors))


# ---------------------------------------------------------------- the command


def check_command(
    path: Annotated[Path, typer.Argument(help="A run (JSON), runs (JSONL), or a folder of them.")],
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", help="text: one summary line a run; json: the reports."),
    ] = OutputFormat.text,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write <run_id>.json reports to this folder.")
    ] = None,
    config_path: Annotated[
        Path | None,
        typer.Option(
            "--config", "-c", help="YAML of check settings (agents.checking.check.Config)."
        ),
    ] = None,
    judge: Annotated[
        Judge | None,
        typer.Option(
            help="Claim judge: auto (fast when the GGUF is present, else none), fast (the "
            "project's cross-encoder first, the GGUF only where it is unsure), llm (the GGUF "
            "on every open claim, about 8 s a run), nli, none."
        ),
    ] = None,
    allow: Annotated[
        list[str],
        typer.Option("--allow", help="An identifier calls and answers may use (repeatable)."),
    ] = [],  # noqa: B006 - typer needs a literal default
    probes: Annotated[
        bool | None,
        typer.Option(
            "--probes/--no-probes",
            help="Probe critical claims with the configured model (guardrails.llm).",
        ),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Run the batch flow over the folder: content-addressed Parquet artifacts "
            "here, files already checked skipped.",
        ),
    ] = None,
    prefect: Annotated[
        bool, typer.Option("--prefect/--no-prefect", help="With --store: as a Prefect flow.")
    ] = True,
) -> None:
    """Check agent runs (tool calls, tool results, final answer): one HallucinationReport each.

    Formats: OpenAI Chat Completions (messages with tool_calls and tool turns),
    OpenAI Responses (input / output items: function_call, function_call_output),
    Anthropic Messages (tool_use / tool_result blocks),
    or generic {question, tool_results, answer}.
    Exit 0: every run emitted; 1: any revised or blocked; 2: unreadable input."""
    from pydantic import ValidationError

    from agents.checking import load

    overrides = {
        "judge": judge.value if judge else None,
        "identifier_allowlist": allow,
        "probes": probes,
    }
    try:
        config = load_check_config(config_path, overrides)
    except (OSError, ValueError, ValidationError) as exc:
        console.print(f"config error: {str(exc).splitlines()[0]}", markup=False)
        raise typer.Exit(2) from exc
    if store is not None:
        _batch(path, store, config, prefect)
        return
    try:
        items = load(path)
    except FileNotFoundError as exc:
        console.print(f"unreadable input: {exc}", markup=False)
        raise typer.Exit(2) from exc

    def progress(row: dict) -> None:
        if output_format is OutputFormat.text:
            print(summary_line(row), flush=True)

    rows = check_items(items, config, progress)
    if output_format is OutputFormat.json:
        reports = [r for r in rows if "error" not in r]
        errors = [r for r in rows if "error" in r]
        json.dump({"reports": reports, "errors": errors}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    if out is not None:
        write_reports(rows, out)
    actions = [r.get("action", "error") for r in rows]
    console.print(
        f"{len(rows)} runs: {actions.count('emit')} emitted, {actions.count('revise')} revise, "
        f"{actions.count('block')} blocked, {actions.count('error')} unreadable",
        markup=False,
    )
    raise typer.Exit(exit_code(rows))


def _batch(path: Path, store: Path, config: Any, prefect: bool) -> None:
    if not path.exists():
        console.print(f"unreadable input: {path}: no such file or folder", markup=False)
        raise typer.Exit(2)
    try:
        if prefect:
            outcomes = agent_check_flow(str(path), str(store), config.model_dump(mode="json"))
        else:
            outcomes = run_agent_check(path, store, config)
    except FileNotFoundError as exc:
        console.print(f"unreadable input: {exc}", markup=False)
        raise typer.Exit(2) from exc
    for outcome in outcomes:
        detail = outcome.get("reason") or ", ".join(
            f"{outcome[a]} {a}" for a in ("emit", "revise", "block", "error") if outcome.get(a)
        )
        print(f"{outcome['partition']}  {outcome['status']}  {detail}".rstrip(), flush=True)
    counts = {s: sum(o["status"] == s for o in outcomes) for s in ("done", "skipped", "failed")}
    console.print(
        f"partitions: {counts['done']} done, {counts['skipped']} skipped, {counts['failed']} "
        f"failed; artifacts in {store}/{STAGE}",
        markup=False,
    )
    flagged = any(o.get("revise") or o.get("block") for o in outcomes)
    unreadable = counts["failed"] or any(o.get("error") for o in outcomes)
    raise typer.Exit(2 if unreadable else 1 if flagged else 0)
