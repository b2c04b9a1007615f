"""Agent runs: tool-call verification on BFCL, claim detection on HaluEval-built runs.

Tool calls (`../shared/datasets/bfcl`, Python categories simple / multiple / parallel /
parallel_multiple, and irrelevance): each record's ground-truth calls (`possible_answer`, the
first accepted value of each argument; an argument whose first accepted value is "" left out)
form a valid OpenAI-format run; invalid calls are made by changing one call: a wrong type, a
missing required argument, a value outside an enum, an unknown tool, an unknown argument, an
invented identifier. For `irrelevance` requests a call of the declared tool is made anyway (its
required arguments filled from the request where a value of the right type is there).
Precision / recall of "rejected" per mutation kind; valid calls flagged.

Claims (`../shared/datasets/halueval_qa`): each record becomes runs in the generic format whose
search tool returned `{"results": [{"snippet": knowledge}]}`: one with the right answer (clean),
one with the hallucinated answer, and runs whose every tool result was empty or an error with
the right answer anyway (must be flagged). Flagged = action revise or block. The runs of records
1-50 (`choose` split) pick the short-answer setting (`judge_short_answers`); records 51-100
(`report` split) are reported with the setting chosen.

Speed: median seconds of a whole `check_run` over a run with 3 tool results and a 6-claim answer
(HaluEval knowledge as the results), judge configured as `check_run` would use it.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from bench import common, tool_fit

NAME = "agent_runs"
DESCRIPTION = "Agent runs: BFCL tool-call verification P/R, HaluEval-built run detection, s/run"
BFCL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
MUTATIONS = (
    "wrong_type",
    "missing_required",
    "enum",
    "unknown_tool",
    "unknown_argument",
    "invented_identifier",
)
CHOOSE_RECORDS = 50  # HaluEval records 1-50 choose the setting; the rest are reported
# BFCL: the tool-fit rule (tool_calls.tool_fit: the semantic similarity of the tool's name and
# description to the request, its threshold swept in `fit_sweep`) is chosen on the even records
# ("choose"); the odd ones ("report") are reported.
SPLITS = ("choose", "report")
TARGETS = {
    "invalid_recall": 0.95,
    "valid_flag_rate_max": 0.02,
    "no_evidence_flagged": 0.98,
    "clean_flag_rate_max": 0.10,
    "hallucinated_flagged": 0.90,
    "seconds_6_claims_median_max": 2.0,
}


# ---------------------------------------------------------------- BFCL runs


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _first_value(accepted: Any) -> tuple[bool, Any]:
    """BFCL lists the accepted values of an argument ("" = may be left out); a nested object
    lists them per key."""
    if isinstance(accepted, dict):
        return True, _chosen(accepted)
    if not isinstance(accepted, list):
        return True, accepted
    for value in accepted:
        if value != "":
            if isinstance(value, dict):
                return True, _chosen(value)
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return True, [_chosen(v) for v in value]
            return True, value
    return False, None


def _chosen(args: dict) -> dict:
    chosen = {}
    for key, accepted in args.items():
        present, value = _first_value(accepted)
        if present:
            chosen[key] = value
    return chosen


def valid_calls(ground_truth: list[dict]) -> list[tuple[str, dict]]:
    calls = []
    for item in ground_truth:
        for name, args in item.items():
            calls.append((name, _chosen(args)))
    return calls


def openai_run(run_id: str, record: dict, calls: list[tuple[str, dict]]) -> dict:
    turns = record["question"][0] if record["question"] else []
    return {
        "run_id": run_id,
        "messages": [
            *turns,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for i, (name, args) in enumerate(calls)
                ],
            },
        ],
        "tools": [{"type": "function", "function": f} for f in record["function"]],
    }


def _properties(record: dict, name: str) -> tuple[dict, list[str]]:
    spec = next((f for f in record["function"] if f["name"] == name), None)
    parameters = (spec or {}).get("parameters") or {}
    return parameters.get("properties") or {}, parameters.get("required") or []


WRONG_VALUE = {
    "integer": "ten",
    "float": "ten",
    "number": "ten",
    "string": 42,
    "boolean": "maybe",
    "array": "a",
    "tuple": "a",
    "dict": "a",
    "object": "a",
}


def invented_identifier(key: str, rng: random.Random) -> str:
    number = rng.randrange(10_000_000, 99_999_999)
    lowered = key.lower()
    if "url" in lowered or "link" in lowered or "site" in lowered:
        return f"https://api.example-records.net/v2/items/{number}"
    if "mail" in lowered:
        return f"j.doe.{number}@example-mail.com"
    if "path" in lowered or "file" in lowered or "dir" in lowered:
        return f"/var/data/exports/report_{number}.csv"
    return f"ACC-{number}"


def mutate(
    kind: str, record: dict, calls: list[tuple[str, dict]], rng: random.Random
) -> list[tuple[str, dict]] | None:
    """One call of `calls` changed by `kind`; None when the record has nothing to change."""
    index = rng.randrange(len(calls))
    name, args = calls[index]
    properties, required = _properties(record, name)
    args = dict(args)
    if kind == "wrong_type":
        typed = [k for k in args if WRONG_VALUE.get((properties.get(k) or {}).get("type"))]
        if not typed:
            return None
        key = rng.choice(typed)
        args[key] = WRONG_VALUE[properties[key]["type"]]
    elif kind == "missing_required":
        present = [k for k in required if k in args]
        if not present:
            return None
        del args[rng.choice(present)]
    elif kind == "enum":
        enums = [k for k, p in properties.items() if isinstance(p, dict) and p.get("enum")]
        if not enums:
            return None
        args[rng.choice(enums)] = "not_a_listed_value"
    elif kind == "unknown_tool":
        name = "lookup_records"
    elif kind == "unknown_argument":
        args["verbose_mode"] = True
    elif kind == "invented_identifier":
        strings = [
            k
            for k, p in properties.items()
            if isinstance(p, dict) and p.get("type") in ("string", "String") and not p.get("enum")
        ]
        if not strings:
            return None
        key = rng.choice(strings)
        args[key] = invented_identifier(key, rng)
    out = list(calls)
    out[index] = (name, args)
    return out


NUMBER_TYPES = ("integer", "float", "number")


def irrelevant_call(record: dict) -> list[tuple[str, dict]]:
    """The declared tool called anyway: required arguments from the request's numbers and
    words where their type allows, else a plain placeholder of the right type."""
    import re

    function = record["function"][0]
    text = " ".join(t["content"] for t in record["question"][0] if t["role"] == "user")
    numbers = [float(n) if "." in n else int(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]
    words = re.findall(r"[A-Z][a-z]+", text)
    properties, required = _properties(record, function["name"])
    args: dict[str, Any] = {}
    for key in required:
        kind = (properties.get(key) or {}).get("type")
        if kind in NUMBER_TYPES:
            args[key] = numbers.pop(0) if numbers else 1
        elif kind == "boolean":
            args[key] = True
        elif kind in ("array", "tuple"):
            args[key] = numbers[:2] or [1]
        elif kind == "dict":
            args[key] = {}
        else:
            enum = (properties.get(key) or {}).get("enum")
            args[key] = enum[0] if enum else (words.pop(0) if words else "value")
    return [(function["name"], args)]


def bfcl_items(folder: Path, limit: int | None) -> list[dict]:
    """(kind, run) items: valid runs, mutated runs and irrelevance runs."""
    items = []
    for category in BFCL_CATEGORIES:
        records = _jsonl(folder / f"BFCL_v4_{category}.json")
        answers = {
            a["id"]: a for a in _jsonl(folder / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for index, record in enumerate(records[:limit] if limit else records):
            rng = random.Random(record["id"])
            split = SPLITS[index % 2]
            calls = valid_calls(answers[record["id"]]["ground_truth"])
            items.append(
                {
                    "kind": "valid",
                    "id": record["id"],
                    "split": split,
                    "run": openai_run(record["id"], record, calls),
                }
            )
            for kind in MUTATIONS:
                changed = mutate(kind, record, calls, rng)
                if changed is not None:
                    run = openai_run(f"{record['id']}:{kind}", record, changed)
                    items.append({"kind": kind, "id": record["id"], "split": split, "run": run})
    irrelevance = _jsonl(folder / "BFCL_v4_irrelevance.json")
    for index, record in enumerate(irrelevance[:limit] if limit else irrelevance):
        run = openai_run(f"{record['id']}", record, irrelevant_call(record))
        items.append(
            {"kind": "irrelevance", "id": record["id"], "split": SPLITS[index % 2], "run": run}
        )
    return items  # fmt: skip


def tool_call_metrics(items: list[dict]) -> dict[str, Any]:
    invalid = [i for i in items if i["kind"] != "valid"]
    valid = [i for i in items if i["kind"] == "valid"]
    tp = sum(i["flagged"] for i in invalid)
    fp = sum(i["flagged"] for i in valid)
    by_kind = {}
    for kind in ("valid", *MUTATIONS, "irrelevance"):
        chosen = [i for i in items if i["kind"] == kind]
        if chosen:
            by_kind[kind] = {
                "runs": len(chosen),
                "flagged": round(sum(i["flagged"] for i in chosen) / len(chosen), 4),
            }
    return {
        "valid_runs": len(valid),
        "invalid_runs": len(invalid),
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / len(invalid), 4) if invalid else None,
        "valid_flag_rate": round(fp / len(valid), 4) if valid else None,
        "by_kind": by_kind,
        "valid_flagged_examples": [
            {"id": i["id"], "errors": i["errors"][:3]} for i in valid if i["flagged"]
        ][:15],
        "invalid_missed_examples": [
            {"id": i["id"], "kind": i["kind"]} for i in invalid if not i["flagged"]
        ][:15],
    }  # fmt: skip


def run_tool_calls(folder: Path, limit: int | None) -> dict[str, Any]:
    from agents.checking import formats, tool_calls

    items = bfcl_items(folder, limit)
    started = time.perf_counter()
    for item in items:
        run = formats.parse_run(item["run"])
        validations = tool_calls.verify_run(run, [], set())
        item["flagged"] = any(v.status != "valid" for v in validations)
        item["errors"] = [e for v in validations for e in v.errors]
        tool_fit.record(item, run, validations)
        item.pop("run")
    seconds = time.perf_counter() - started
    return {
        **tool_call_metrics(items),
        **{f"{s}_split": tool_call_metrics([i for i in items if i["split"] == s]) for s in SPLITS},
        "fit_rule": tool_fit.fit_sweep(items),
        "seconds_per_run": round(seconds / max(1, len(items)), 5),
    }


# ---------------------------------------------------------------- HaluEval runs


def search_run(run_id: str, record: dict, answer: str) -> dict:
    return {
        "run_id": run_id,
        "question": record["question"],
        "tool_results": [
            {
                "tool": "search",
                "call_id": "call_1",
                "args": {"query": record["question"]},
                "content": {"results": [{"snippet": record["knowledge"]}]},
            }
        ],
        "answer": answer,
    }


NO_EVIDENCE_RESULTS = (
    ("empty", {"results": []}, False),
    ("error", "Error: upstream search service returned HTTP 503", False),
    ("is_error", "connection reset by peer", True),
    ("not_found", {"found": False, "message": "No documents matched the query."}, False),
)


def no_evidence_run(run_id: str, record: dict, index: int) -> dict:
    kind, content, is_error = NO_EVIDENCE_RESULTS[index % len(NO_EVIDENCE_RESULTS)]
    run = search_run(run_id, record, record["right_answer"])
    run["tool_results"][0].update(content=content, is_error=is_error)
    return run


def halueval_items(folder: Path, start: int, stop: int) -> list[dict]:
    records = _jsonl(folder / "qa_first500.jsonl")
    items = []
    for index, record in enumerate(records[start:stop], start=start):
        split = "choose" if index < CHOOSE_RECORDS else "report"
        for kind, run in (
            ("clean", search_run(f"halueval-{index}:right", record, record["right_answer"])),
            (
                "hallucinated",
                search_run(f"halueval-{index}:hallucinated", record, record["hallucinated_answer"]),
            ),
            ("no_evidence", no_evidence_run(f"halueval-{index}:no-evidence", record, index)),
        ):
            items.append({"kind": kind, "split": split, "record": index, "run": run})
    return items


def claim_metrics(items: list[dict]) -> dict[str, Any]:
    def rate(kind: str) -> float | None:
        chosen = [i for i in items if i["kind"] == kind]
        return round(sum(i["flagged"] for i in chosen) / len(chosen), 4) if chosen else None

    return {
        "runs": len(items),
        "clean_flag_rate": rate("clean"),
        "hallucinated_flagged": rate("hallucinated"),
        "no_evidence_flagged": rate("no_evidence"),
        "judge_calls": sum(i["judge_calls"] for i in items),
        "seconds": common.latency_stats([i["seconds"] for i in items]),
    }


def run_claims(folder: Path, start: int, stop: int, config: dict) -> dict[str, Any]:
    from agents.checking import check_run, make_toolkit
    from agents.checking.check import judge_label

    toolkit = make_toolkit(config)
    items = halueval_items(folder, start, stop)
    for number, item in enumerate(items, start=1):
        report = check_run(item["run"], config, toolkit=toolkit)
        item.update(
            flagged=report["action"] != "emit",
            action=report["action"],
            mode=report["diagnosis"]["mode"],
            seconds=report["seconds"],
            judge_calls=report["judge_calls"],
            reasons=[r for c in report["claims"] for r in c["reasons"]][:2],
        )
        item.pop("run")
        if number % 60 == 0:
            common.console.print(f"agent_runs: {number}/{len(items)} HaluEval-built runs")
    splits = {s: [i for i in items if i["split"] == s] for s in ("choose", "report")}
    return {
        "judge": judge_label(toolkit.config),
        "config": config,
        "records": f"{start + 1}-{min(stop, start + len(items) // 3)}",
        "all": claim_metrics(items),
        **{f"{s}_split": claim_metrics(chosen) for s, chosen in splits.items() if chosen},
        "missed_examples": [
            {k: i[k] for k in ("record", "kind", "action", "mode", "reasons")}
            for i in items
            if i["flagged"] != (i["kind"] != "clean")
        ][:20],
    }


def six_claim_run(records: list[dict], index: int) -> dict:
    """3 tool results (three records' knowledge) and an answer of 6 sentences: per record, one
    sentence of its knowledge (verbatim, decided without the judge) and its right answer as a
    sentence of its own (a short answer the judge reads against the question)."""
    chosen = records[index : index + 3]
    sentences = []
    for record in chosen:
        parts = [s.strip() for s in record["knowledge"].replace(".", ".\n").splitlines()]
        first = next((s for s in parts if len(s.split()) >= 5), parts[0])
        answer = record["right_answer"].strip().rstrip(".")
        sentences += [first, f"The answer is {answer}."]
    return {
        "run_id": f"six-claims-{index}",
        "question": " ".join(r["question"] for r in chosen),
        "tool_results": [
            {"tool": "search", "call_id": f"call_{n}",
             "content": {"results": [{"snippet": r["knowledge"]}]}}
            for n, r in enumerate(chosen, start=1)
        ],
        "answer": " ".join(sentences[:6]),
    }  # fmt: skip


def run_speed(folder: Path, runs: int, config: dict) -> dict[str, Any]:
    from agents.checking import check_run, make_toolkit

    records = _jsonl(folder / "qa_first500.jsonl")[CHOOSE_RECORDS:]
    toolkit = make_toolkit(config)
    check_run(six_claim_run(records, 0), config, toolkit=toolkit)  # loads the judge's model
    seconds, claims, calls = [], [], []
    for index in range(3, 3 * runs + 3, 3):
        report = check_run(six_claim_run(records, index), config, toolkit=toolkit)
        seconds.append(report["seconds"])
        claims.append(len(report["claims"]))
        calls.append(report["judge_calls"])
    return {
        "runs": len(seconds),
        "median_seconds": round(statistics.median(seconds), 3) if seconds else None,
        "latency": common.latency_stats(seconds),
        "claims_per_run": statistics.mean(claims) if claims else None,
        "judge_calls_per_run": statistics.mean(calls) if calls else None,
    }


# ---------------------------------------------------------------- the bench


def choose(results: dict[str, dict]) -> str:
    """The setting chosen on the choose split: among those meeting both answer targets (clean
    flagged <= 0.10, hallucinated flagged >= 0.90) the one flagging most hallucinated answers;
    when none meets both, the best balanced accuracy."""

    def balanced(m: dict) -> float:
        return (1 - m["clean_flag_rate"] + m["hallucinated_flagged"]) / 2

    metrics = {k: r["all"] for k, r in results.items()}
    meeting = [
        k
        for k, m in metrics.items()
        if m["clean_flag_rate"] <= TARGETS["clean_flag_rate_max"]
        and m["hallucinated_flagged"] >= TARGETS["hallucinated_flagged"]
    ]
    if meeting:
        return max(meeting, key=lambda k: (metrics[k]["hallucinated_flagged"], k))
    return max(metrics, key=lambda k: (balanced(metrics[k]), k))


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Options (`--set agent_runs.KEY=VALUE`): records (HaluEval records, default 100: 1-50
    choose, the rest report), bfcl_limit (records per BFCL category), speed_runs, judge;
    speed_only=true: only the 6-claim runs' timing, with and without the fast judge
    (bench/results/agent_runs-speed.json)."""
    options = {"records": 100, "bfcl_limit": None, "speed_runs": 15, "judge": "auto"}
    options |= {"speed_only": False}
    options |= (overrides or {}).get(NAME, {})
    base = {"judge": options["judge"]}
    result: dict[str, Any] = {"targets": TARGETS, "options": options}
    if options["speed_only"]:  # the 6-claim runs only: the GGUF alone and with the fast judge
        halueval = common.dataset_dir("halueval_qa", ("qa_first500.jsonl",))
        speed = {"gguf": run_speed(halueval, int(options["speed_runs"]), {**base, "judge": "llm"})}
        speed["fast_judge"] = run_speed(
            halueval, int(options["speed_runs"]), {**base, "judge": "fast"}
        )
        result["speed_6_claims"] = speed
        common.write_result(f"{NAME}-speed", result, results_dir)
        return result
    skipped = []
    try:
        bfcl = common.dataset_dir("bfcl", ("possible_answer/BFCL_v4_simple_python.json",))
        result["tool_calls"] = run_tool_calls(bfcl, options["bfcl_limit"])
    except common.Skipped as exc:
        skipped.append(str(exc))
    try:
        halueval = common.dataset_dir("halueval_qa", ("qa_first500.jsonl",))
        # the judge's answers cached across the two settings and the report runs (the same
        # claims recur); the speed runs below are not cached
        cache = {"guardrails": {"judge_cache_dir": str(common.CACHE / "agent_runs_judge")}}
        settings = {
            "short_answers_judged": {**base, **cache, "judge_short_answers": True},
            "verbatim_short_answers": {**base, **cache, "judge_short_answers": False},
        }
        stop = min(int(options["records"]), CHOOSE_RECORDS)
        chosen_on = {k: run_claims(halueval, 0, stop, c) for k, c in settings.items()}
        chosen = choose(chosen_on)
        result["choose"] = {"chosen": chosen, "by_setting": chosen_on}
        if int(options["records"]) > CHOOSE_RECORDS:
            result["claims"] = run_claims(
                halueval, CHOOSE_RECORDS, int(options["records"]), settings[chosen]
            )
        uncached = {k: v for k, v in settings[chosen].items() if k != "guardrails"}
        result["speed_6_claims"] = run_speed(halueval, int(options["speed_runs"]), uncached)
    except common.Skipped as exc:
        skipped.append(str(exc))
    if len(skipped) == 2:
        raise common.Skipped("; ".join(skipped))
    result["skipped"] = skipped
    common.write_result(NAME, result, results_dir)
    return result


def summarize(result: dict[str, Any]) -> str:
    lines = []
    if tc := result.get("tool_calls"):
        rep = tc.get("report_split") or tc
        lines.append(
            f"BFCL tool calls, report split: recall {rep['recall']}, precision "
            f"{rep['precision']}, valid flagged {rep['valid_flag_rate']}"
        )
        lines.append(
            f"BFCL tool calls: {tc['invalid_runs']} invalid / {tc['valid_runs']} valid runs; "
            f"recall {tc['recall']}, precision {tc['precision']}, valid flagged "
            f"{tc['valid_flag_rate']}"
        )
        lines += [f"- {k}: {v['flagged']} of {v['runs']} flagged" for k, v in tc["by_kind"].items()]
        lines += tool_fit.summary_lines(tc.get("fit_rule"))
    if ch := result.get("choose"):
        for name, cl in ch["by_setting"].items():
            m = cl["all"]
            lines.append(
                f"HaluEval runs, records {cl['records']} (choose), {name}: clean flagged "
                f"{m['clean_flag_rate']}, hallucinated flagged {m['hallucinated_flagged']}, "
                f"empty/error results flagged {m['no_evidence_flagged']}"
            )
        lines.append(f"chosen: {ch['chosen']}")
    if cl := result.get("claims"):
        for split in ("report_split",):
            if m := cl.get(split):
                lines.append(
                    f"HaluEval runs, records {cl['records']} (report, judge {cl['judge']}): "
                    f"clean flagged "
                    f"{m['clean_flag_rate']}, hallucinated flagged {m['hallucinated_flagged']}, "
                    f"empty/error results flagged {m['no_evidence_flagged']}, "
                    f"median {m['seconds']['p50_ms']} ms/run"
                )
    speeds = result.get("speed_6_claims") or {}
    speeds = {"": speeds} if "median_seconds" in speeds else speeds  # speed_only: two settings
    for setting, sp in speeds.items():
        lines.append(
            f"6-claim runs with 3 tool results{f' ({setting})' if setting else ''}: median "
            f"{sp['median_seconds']} s over {sp['runs']} runs, {sp['judge_calls_per_run']} judge "
            "calls each"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- the frozen eval set

SET_NAME = "agent-runs-v1"
# Records of neither the BFCL choose split (even records) nor HaluEval records 1-200 (the
# bench's choose and report runs): odd BFCL records, every 8th; HaluEval records 451-500.
SET_BFCL_EVERY = 8
SET_HALUEVAL = (450, 500)
SET_NO_EVIDENCE = (470, 500)


def set_records(bfcl: Path, halueval: Path) -> list[dict]:
    """The records of agent-runs-v1, deterministic: labels correct / hallucinated / no_evidence
    (HaluEval-built runs) and valid_call / invalid_call (BFCL-built runs)."""
    records = []
    for item in bfcl_items(bfcl, None):
        index = int(item["id"].rsplit("_", 1)[1])
        if index % 2 == 0 or (index // 2) % SET_BFCL_EVERY:
            continue
        label = "valid_call" if item["kind"] == "valid" else "invalid_call"
        records.append({"id": item["run"]["run_id"], "label": label, "kind": item["kind"],
                        "run": item["run"]})  # fmt: skip
    for item in halueval_items(halueval, *SET_HALUEVAL):
        if item["kind"] == "no_evidence" and item["record"] < SET_NO_EVIDENCE[0]:
            continue
        label = {"clean": "correct"}.get(item["kind"], item["kind"])
        records.append({"id": item["run"]["run_id"], "label": label, "kind": item["kind"],
                        "run": item["run"]})  # fmt: skip
    return records


NOTICE = """# Notice: public material in this detection set

`records.jsonl` holds agent runs built by `python -m bench.agent_runs --freeze` from
two public data sets; nothing was fitted on them.

- **BFCL** (Berkeley Function Calling Leaderboard v4, non-live Python categories and
  irrelevance; ShishirPatil/gorilla, berkeley-function-call-leaderboard/bfcl_eval/data @
  6ea5797; Apache License 2.0, https://www.apache.org/licenses/LICENSE-2.0): the user requests
  and declared tools of every 8th odd-numbered record, with the ground-truth call
  (`valid_call`) and calls changed by bench/agent_runs.py (`invalid_call`: wrong type, missing
  required argument, value outside an enum, unknown tool or argument, invented identifier, a
  call for an irrelevance request). The requests, tool declarations and argument values are
  BFCL's, modified as described.
- **HaluEval QA** (RUCAIBox/HaluEval, records 451-500 of its QA part; MIT License, Copyright (c)
  2020 RUCAIBox, reproduced below): each record's knowledge as a search tool's JSON result, with
  the right answer (`correct`), the hallucinated answer (`hallucinated`), and for records
  471-500 an empty, error or not-found result with the right answer anyway (`no_evidence`).

MIT License

Copyright (c) 2020 RUCAIBox

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def freeze(root: Path | None = None) -> Path:
    """Write eval/sets/agent-runs-v1 (records, NOTICE, manifest); refuses to overwrite."""
    from eval.detection_sets import write_manifest

    folder = Path(root or common.ROOT) / "eval" / "sets" / SET_NAME
    if folder.exists():
        raise SystemExit(f"{folder} exists: a frozen set is never rewritten (make -v2)")
    bfcl = common.dataset_dir("bfcl", ("possible_answer/BFCL_v4_simple_python.json",))
    halueval = common.dataset_dir("halueval_qa", ("qa_first500.jsonl",))
    records = set_records(bfcl, halueval)
    folder.mkdir(parents=True)
    lines = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
    (folder / "records.jsonl").write_text(lines, encoding="utf-8")
    (folder / "NOTICE.md").write_text(NOTICE, encoding="utf-8")
    counts: dict[str, int] = {}
    for record in records:
        counts[record["label"]] = counts.get(record["label"], 0) + 1
    write_manifest(
        folder,
        {
            "name": SET_NAME,
            "description": "Agent runs: tool calls to verify (BFCL-built) and answers "
            "over tool results (HaluEval-built); flagged = the report's action is not emit",
            "checker": "agents.checking.detection.check_record",
            "overrides": {"agent_runs": {}},
            "source": "BFCL v4 (Apache-2.0), HaluEval QA (MIT); see NOTICE.md",
            "counts": dict(sorted(counts.items())),
        },
    )
    return folder


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--freeze"]:
        print(freeze())
    else:
        raise SystemExit("usage: python -m bench.agent_runs --freeze")
