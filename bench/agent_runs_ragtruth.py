"""Real LLM answers as agent runs: does `grounding check` hold on them?

`bench agent_runs` measures claim detection on runs built from HaluEval (one-sentence answers).
The answers agents write are longer: lists, preambles, their own citations. RAGTruth QA's are
real ones (GPT-4, GPT-3.5, Llama-2, Mistral over three retrieved passages, human-labelled
hallucinated spans; `bench ragtruth`), so each is framed here as an agent run and checked by
`agents.checking.check_run` with its default config. That is the whole path: the
evidence read from tool results, the diagnosis, the gate. Two shapes of the same evidence:

- `text`: three calls of a `search` tool, each returning one passage as plain text;
- `json`: one `search` call whose JSON result lists the passages (`{"results": [{"text": …}]}`),
  read as `key: value` spans with their JSON pointers.

Reported per split (`fit` / `report`, the question split of `bench ragtruth`; nothing here is
fitted): response-level precision / recall / F1 of "not emitted", the flag rate on correct
answers, the diagnosis modes, judge calls and seconds per run. The judge's verdicts share
`bench ragtruth`'s cache (a claim read against the same spans is not asked twice).
"""

from __future__ import annotations

import collections
import statistics
import time
from pathlib import Path
from typing import Any

from bench import common, ragtruth

NAME = "agent_runs_ragtruth"
DESCRIPTION = "RAGTruth QA's real LLM answers as agent runs (text and JSON tool results)"
SHAPES = ("text", "json")


def as_run(record: dict, shape: str) -> dict:
    """One RAGTruth response as a generic agent run whose search tool returned its passages."""
    texts = [e["text"] for e in record["evidence"].values()]
    query = {"query": record["question"]}
    if shape == "json":
        results = [
            {
                "tool": "search",
                "call_id": "call_1",
                "args": query,
                "content": {"results": [{"text": t} for t in texts]},
            }
        ]
    else:
        results = [
            {"tool": "search", "call_id": f"call_{n}", "args": query, "content": text}
            for n, text in enumerate(texts, start=1)
        ]
    return {
        "run_id": record["id"],
        "question": record["question"],
        "tool_results": results,
        "answer": record["answer"],
    }


def check_split(records: list[dict], shape: str, toolkit: Any, config: dict) -> dict[str, Any]:
    from agents.checking import check_run

    items, modes, seconds = [], collections.Counter(), []
    calls_before = toolkit.judge_calls
    for record in records:
        started = time.perf_counter()
        report = check_run(as_run(record, shape), config, toolkit=toolkit)
        seconds.append(time.perf_counter() - started)
        hallucinated = record["label"] == "hallucinated"
        items.append({"hallucinated": hallucinated, "flagged": report["action"] != "emit"})
        label = "hallucinated" if hallucinated else "correct"
        modes[f"{label}: {report['diagnosis']['mode']} ({report['action']})"] += 1
    return {
        **ragtruth.response_metrics(items),
        "diagnosis": dict(sorted(modes.items())),
        "judge_calls": toolkit.judge_calls - calls_before,
        "seconds_median": round(statistics.median(seconds), 3) if seconds else None,
    }


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Options (`--set agent_runs_ragtruth.KEY=VALUE`): judge (check_run's, default its own
    default); splits (fit,report). A judge other than the default writes
    `agent_runs_ragtruth-<judge>.json`."""
    from agents.checking import make_toolkit
    from agents.checking.check import judge_label

    options = {"judge": None, "splits": "fit,report"} | (overrides or {}).get(NAME, {})
    folder = common.dataset_dir(ragtruth.FOLDER, ragtruth.FILES)  # raises Skipped when absent
    config: dict[str, Any] = {
        "guardrails": {"judge_cache_dir": str(common.CACHE / "ragtruth_judge")}
    }
    if options["judge"]:
        config["judge"] = options["judge"]
    toolkit = make_toolkit(config)
    started = time.perf_counter()
    splits: dict[str, dict[str, Any]] = {}
    for split in str(options["splits"]).split(","):
        records = ragtruth.load(folder, split)
        splits[split] = {}
        for shape in SHAPES:
            splits[split][shape] = check_split(records, shape, toolkit, config)
            common.console.print(f"{NAME}: {split} / {shape} done")
    payload = {
        "status": "ok",
        "judge": judge_label(toolkit.config),
        "aggregate": toolkit.config.aggregate,
        "splits": splits,
        "targets": ragtruth.TARGETS,
        "git_commit": common.git_commit(),
        "runtime_s": round(time.perf_counter() - started, 1),
    }
    name = f"{NAME}-{options['judge']}" if options["judge"] else NAME
    common.write_result(name, payload, results_dir)
    return payload


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"Agent runs made of RAGTruth QA answers (judge {result['judge']}, gate "
        f"{result['aggregate']}); flagged = not emitted.",
        "",
        "| split | tool results | precision | recall | F1 | correct flagged | judge calls | "
        "s median |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for split, shapes in result["splits"].items():
        for shape, m in shapes.items():
            lines.append(
                f"| {split} | {shape} | {m['precision']:.3f} | {m['recall']:.3f} | "
                f"{m['f1']:.3f} | {m['correct_flag_rate']:.3f} | {m['judge_calls']} | "
                f"{m['seconds_median']} |"
            )
    return "\n".join(lines)
