"""`grounding trace RUN QUESTION_ID`: one question's path through the stages, from the run's
trace.jsonl, as lines a person reads."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from cli.options import DEFAULT_CONFIG, ConfigOption, SetOption, load_settings, run_folder

console = Console()


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
