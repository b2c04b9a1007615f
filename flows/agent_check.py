"""`grounding check`: agent runs (OpenAI, OpenAI Responses, Anthropic or generic; a JSON file,
JSONL or a folder) through `agents.checking.check_run`, one HallucinationReport per
run.

    grounding check RUN.json                      # one summary line per run
    grounding check RUNS.jsonl --format json      # the reports as JSON on stdout
    grounding check logs/ --out reports/          # and one <run_id>.json report per run
    grounding check logs/ --store artifacts       # the Prefect flow: Parquet artifacts

Exit codes: 0 every run emitted; 1 any run revised or blocked; 2 unreadable input (no such
path, or a run that could not be read: the others are still checked and reported).

With `--store`, each run-log file is a partition: its runs, tool-call validations, claims and
reports are written as one content-addressed artifact (`<store>/agent_check/<key>/`, key = sha256
of the file's bytes, the check's version and config), atomically, so a file already checked
with the same settings is skipped: kill the batch at any point and run it again to finish the
rest, like `grounding backfill`. The flow is the Prefect flow `agent-run-check` (a nightly
deployment can audit yesterday's logs); `--no-prefect` runs the same partitions in plain Python.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tempfile
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

console = Console(stderr=True, highlight=False)
STAGE = "agent_check"
TABLES = ("agent_runs", "agent_tool_calls", "agent_claims", "agent_reports")


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class Judge(StrEnum):
    auto = "auto"
    llm = "llm"
    fast = "fast"
    nli = "nli"
    none = "none"


# ---------------------------------------------------------------- config


def load_check_config(path: Path | None, overrides: dict[str, Any]) -> Any:
    """The agent-run check's Config: a YAML file of its fields, then the command's options."""
    import yaml

    from agents.checking import Config

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


# ---------------------------------------------------------------- one batch, in process


def check_items(items: list, config: Any, progress: Any = None) -> list[dict]:
    """Reports of the parsed runs, and an error row for each one that could not be read.
    A run that fails in the checker (a bug, a model crash) is an error row too; the batch goes
    on."""
    from agents.checking import RunError, check_run, make_toolkit

    toolkit = make_toolkit(config)
    rows = []
    for item in items:
        if isinstance(item, RunError):
            rows.append({"run_id": item.run_id, "source": item.source, "error": item.error})
        else:
            try:
                rows.append(check_run(item, config, toolkit=toolkit))
            except Exception as exc:  # one run's failure is its own
                first = (str(exc).splitlines() or [""])[0][:300]
                rows.append(
                    {"run_id": item.run_id, "source": "", "error": f"{type(exc).__name__}: {first}"}
                )
        if progress is not None:
            progress(rows[-1])
    return rows


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


# ---------------------------------------------------------------- artifacts: the batch flow


def _schemas() -> dict[str, Any]:
    import pyarrow as pa

    strings = pa.list_(pa.string())
    return {
        "agent_runs": pa.schema(
            [("run_id", pa.string()), ("source", pa.string()), ("format", pa.string()),
             ("question", pa.string()), ("answer", pa.string()), ("tool_calls", pa.int32()),
             ("tool_results", pa.int32()), ("error", pa.string())]
        ),
        "agent_tool_calls": pa.schema(
            [("run_id", pa.string()), ("call_id", pa.string()), ("tool", pa.string()),
             ("attempt", pa.int32()), ("args", pa.string()), ("status", pa.string()),
             ("errors", strings), ("invented_identifiers", strings), ("feedback", pa.string())]
        ),
        "agent_claims": pa.schema(
            [("run_id", pa.string()), ("text", pa.string()), ("score", pa.float64()),
             ("critical", pa.bool_()), ("status", pa.string()), ("judge", pa.string()),
             ("anchors", strings), ("reasons", strings)]
        ),
        "agent_reports": pa.schema(
            [("run_id", pa.string()), ("action", pa.string()), ("overall_score", pa.float64()),
             ("diagnosis", pa.string()), ("reasons", strings), ("feedback", strings),
             ("refusal", pa.string()), ("judge_calls", pa.int32()), ("seconds", pa.float64()),
             ("version", pa.string()), ("report", pa.string())]
        ),
    }  # fmt: skip


def artifact_tables(items: list, rows: list[dict]) -> dict[str, Any]:
    """The four tables of one partition (runs, tool-call validations, claims, reports)."""
    import pyarrow as pa

    from agents.checking import RunError

    runs, calls, claims, reports = [], [], [], []
    by_id = {r["run_id"]: r for r in rows}
    for item in items:
        row = by_id.get(item.run_id, {})
        if isinstance(item, RunError):
            runs.append({"run_id": item.run_id, "source": item.source, "error": item.error})
            continue
        runs.append(
            {
                "run_id": item.run_id,
                "source": "",
                "format": item.format,
                "question": item.question,
                "answer": item.answer,
                "tool_calls": len(item.calls),
                "tool_results": len(item.results),
                "error": row.get("error"),
            }
        )
        if "error" in row or not row:
            continue
        calls += [{"run_id": item.run_id, **v} for v in row["tool_call_validations"]]
        claims += [
            {
                "run_id": item.run_id,
                **{k: c.get(k) for k in ("text", "score", "critical", "status", "judge")},
                "anchors": [s.get("anchor") for s in c.get("evidence_spans") or []],
                "reasons": c.get("reasons") or [],
            }
            for c in row["claims"]
        ]
        reports.append(
            {
                "run_id": item.run_id,
                "action": row["action"],
                "overall_score": row["overall_score"],
                "diagnosis": row["diagnosis"]["mode"],
                "reasons": row["reasons"],
                "feedback": row["feedback"],
                "refusal": row["refusal"],
                "judge_calls": row["judge_calls"],
                "seconds": row["seconds"],
                "version": row["version"],
                "report": json.dumps(row, default=str),
            }
        )
    schemas = _schemas()
    data = {"agent_runs": runs, "agent_tool_calls": calls, "agent_claims": claims}
    data["agent_reports"] = reports
    return {
        name: pa.Table.from_pylist(
            [{f: r.get(f) for f in schemas[name].names} for r in data[name]],
            schema=schemas[name],
        )
        for name in TABLES
    }


def _parquet_bytes(table: Any) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def partition_key(path: Path, config: Any) -> tuple[str, str]:
    """(artifact key, the file's sha256): same name and bytes, same check, same settings = same
    key (the name counts: a run without an id is named after its file)."""
    from agents.checking import VERSION
    from stages.store import artifact_key

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    inputs = {"file": digest, "name": path.name}
    return artifact_key(STAGE, VERSION, config.model_dump(mode="json"), inputs), digest


def check_partition(path: Path, store: Any, config: Any) -> dict:
    """One run-log file: skipped when its artifact exists, else checked and written."""
    from agents.checking import VERSION, formats

    started = time.perf_counter()
    key, digest = partition_key(path, config)
    if (ref := store.lookup(STAGE, key)) is not None:
        # checked before with these settings: its counts come from the written reports
        import pyarrow.parquet as pq

        runs = pq.read_table(store.blob_path(ref, "agent_runs.parquet"), columns=["error"])
        reports = pq.read_table(store.blob_path(ref, "agent_reports.parquet"), columns=["action"])
        actions = reports.column("action").to_pylist()
        errors = sum(e is not None for e in runs.column("error").to_pylist())
        counts = {a: actions.count(a) for a in ("emit", "revise", "block")} | {"error": errors}
        return {"partition": path.name, "status": "skipped", "key": key, **counts}
    items = list(formats.read_file(path))
    rows = check_items(items, config)
    tables = artifact_tables(items, rows)
    ref = store.write(
        STAGE,
        key,
        version=VERSION,
        config=config.model_dump(mode="json"),
        input_keys={"file": digest, "name": path.name},
        # Parquet files beside the manifest: the contracts module holds the pipeline's tables;
        # these are the audit's own, their schemas in this module
        outputs={f"{name}.parquet": _parquet_bytes(t) for name, t in tables.items()},
        started_at=started,
        extra={"source": str(path), "runs": len(items)},
    )
    actions = [r.get("action", "error") for r in rows]
    return {
        "partition": path.name,
        "status": "done",
        "key": key,
        "path": ref.path,
        "runs": len(items),
        **{a: actions.count(a) for a in ("emit", "revise", "block", "error")},
    }


def run_agent_check(folder: Path, store_root: Path | str, config: Any) -> list[dict]:
    """Every run-log file under `folder` (one partition each); a failure stays in its own."""
    from agents.checking import formats
    from stages.store import ArtifactStore

    store = ArtifactStore(store_root)
    outcomes = []
    for path in formats.iter_sources(Path(folder)):
        try:
            outcomes.append(check_partition(path, store, config))
        except Exception as exc:
            reason = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:300]}"
            outcomes.append({"partition": path.name, "status": "failed", "reason": reason})
    return outcomes


def read_partition(store_root: Path | str, key: str, name: str) -> Any:
    """One table of a written partition (`agent_reports`, `agent_claims`…)."""
    import pyarrow.parquet as pq

    from stages.store import ArtifactStore

    store = ArtifactStore(store_root)
    ref = store.lookup(STAGE, key)
    if ref is None:
        raise FileNotFoundError(f"no {STAGE} artifact {key}")
    return pq.read_table(store.blob_path(ref, f"{name}.parquet"))


def agent_check_flow(folder: str, store_root: str, config: dict) -> list[dict]:
    """The Prefect flow `agent-run-check`: one task per run-log file (built on first use, so
    the command imports Prefect only when it runs the flow)."""
    from prefect import flow, task
    from prefect.cache_policies import NO_CACHE

    from agents.checking import Config, formats
    from stages.store import ArtifactStore

    settings = Config(**config)

    @task(name="check-run-log", cache_policy=NO_CACHE, persist_result=False)
    def one(path: str) -> dict:
        return check_partition(Path(path), ArtifactStore(store_root), settings)

    @flow(name="agent-run-check", log_prints=True, validate_parameters=False)
    def run(folder: str) -> list[dict]:
        futures = [one.submit(str(p)) for p in formats.iter_sources(Path(folder))]
        outcomes = []
        for future, path in zip(futures, formats.iter_sources(Path(folder)), strict=True):
            try:
                outcomes.append(future.result())
            except Exception as exc:
                outcomes.append({"partition": path.name, "status": "failed", "reason": str(exc)})
        return outcomes

    return run(folder)


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
