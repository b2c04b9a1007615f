"""Operations on what runs leave behind: artifact listing and garbage collection, question traces.

`grounding artifacts ls|show|gc` and `grounding trace RUN_ID QUESTION_ID`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from flows.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings, run_folder
from stages.store import ArtifactStore

BATCH_SUFFIX = ".batches"  # flows.executor.BATCH_SUFFIX, without importing every stage here
# Artifacts no run names but people work on: review batches (quality.review) hold the answers
# reviewers' verdicts point to, so gc never collects them.
KEPT_STAGES = ("review_batch",)

console = Console()
artifacts_app = typer.Typer(
    help="List, inspect and garbage-collect artifacts.", no_args_is_help=True
)


def _as_store(store: ArtifactStore | Path | str) -> ArtifactStore:
    return store if isinstance(store, ArtifactStore) else ArtifactStore(store)


def manifests(store: ArtifactStore | Path | str) -> list[dict]:
    """Every complete artifact's manifest (local folder or object storage), with its location;
    temporary folders and objects without a manifest are not artifacts."""
    store = _as_store(store)
    found = []
    for ref in store.list_refs():
        manifest = dict(store.manifest(ref))
        manifest["path"] = ref.path
        found.append(manifest)
    return found


def referenced_keys(runs_dir: Path, by_key: dict[str, dict]) -> set[str]:
    """Keys a run summary names, plus everything upstream of them (their inputs, transitively)
    and the question batches their artifacts were assembled from."""
    pending = []
    for summary in runs_dir.glob("*/summary.json"):
        pending += [s["key"] for s in json.loads(summary.read_text())["stages"].values()]
    for summary in runs_dir.glob("backfill/*/summary.json"):
        pending += [s["key"] for s in json.loads(summary.read_text())["stages"].values()]
    keep: set[str] = set()
    while pending:
        key = pending.pop()
        if key in keep:
            continue
        keep.add(key)
        manifest = by_key.get(key, {})
        pending += list(manifest.get("batch_keys", []))
        # a batch's inputs are those of the (possibly older) run that computed it: its rows are
        # self-contained, so they do not keep that run's artifacts alive
        if not manifest.get("stage", "").endswith(BATCH_SUFFIX):
            pending += list(manifest.get("input_keys", {}).values())
    return keep


def garbage(store: ArtifactStore | Path | str, runs_dir: Path) -> list[Path | Location]:
    """Artifacts no run references, and temporary folders left by killed local writes."""
    store = _as_store(store)
    everything = manifests(store)
    keep = referenced_keys(runs_dir, {m["key"]: m for m in everything})
    unused = [
        _location(m["path"])
        for m in everything
        if m["key"] not in keep and m["stage"] not in KEPT_STAGES
    ]
    return unused + [Path(p) for p in store.leftovers()]


class Location(str):
    """An object-storage artifact's URL, with the `.name` (its key) a Path would have."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]


def _location(path: str) -> Path | Location:
    return Location(path) if "://" in path else Path(path)


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


def trace_command(
    run: Annotated[
        str, typer.Argument(help="A run id (a folder under the config's runs_dir) or a run folder.")
    ],
    question_id: Annotated[str, typer.Argument(help="The question's id.")],
    config: ConfigOption = DEFAULT_CONFIG,
    set_: SetOption = [],  # noqa: B006 - typer needs a literal default
) -> None:
    """Print one question's trace: decisions, candidates, state, evidence, answer, verdict."""
    path = run_folder(run, load_settings(config, set_).runs_dir) / "trace.jsonl"
    if not path.is_file():
        console.print(f"[red]no trace at {path}[/red]")
        raise typer.Exit(2)
    traces = (json.loads(line) for line in path.read_text().splitlines())
    trace = next((t for t in traces if t["question_id"] == question_id), None)
    if trace is None:
        console.print(f"[red]no question {question_id!r} in run {run}[/red]")
        raise typer.Exit(2)
    console.print(render_trace(trace))


def _place(span: dict) -> str:
    """ " (slide 3)": where in the original file an evidence span sits, when its format says."""
    from stages.formats.anchors import anchor_label

    label = anchor_label(span.get("anchor"))
    return f" ({label})" if label else ""


def _checked(status: dict) -> str:
    """Why the question checks refused it (rerank's names and negation checks), if they did."""
    if status.get("unwritten_names"):
        return f"; no readable source writes: {', '.join(status['unwritten_names'])}"
    if status.get("negation_unstated"):
        return "; negated question, no negation in its evidence"
    return ""


def render_trace(trace: dict) -> str:
    excluded = [d for d in trace["source_selection"] if not d["eligible"]]
    lines = [
        f"[bold]{trace['question_id']}[/bold]: {trace['question']}",
        f"source selection: {len(trace['source_selection']) - len(excluded)} eligible, "
        + ", ".join(f"{d['doc_id']} ({d['rule']})" for d in excluded[:8]),
        "queries: "
        + " | ".join(f"{q['rewrite_kind']}: {q['query_text']}" for q in trace["queries"]),
        "candidates: "
        + ", ".join(f"{c['chunk_id']} ({c['fused_score']:.3f})" for c in trace["candidates"][:5]),
        f"rerank: {trace['rerank'].get('state')} (confidence {trace['rerank'].get('confidence')})"
        + _checked(trace["rerank"]),
        *(
            f"  attempt {a['attempt']}: {a['query_text']!r} -> {a['state']} ({a['stop_reason']})"
            for a in trace.get("rerank_attempts", [])
        ),
        "evidence:",
        *(
            f"  [{e['evidence_id']}] {e['doc_id']}{_place(e)} {e['text'][:100]}"
            for e in trace["evidence"]
        ),
        f"generation: {trace['generation'].get('backend')} -> "
        f"{trace['generation'].get('answer') or trace['generation'].get('refusal_reason')}",
        f"guardrails: {trace['guardrails'].get('action')} {trace['guardrails'].get('reasons')}",
        f"final: {trace['final']['status']}: {trace['final']['rendered_answer']}",
    ]
    return "\n".join(lines)
