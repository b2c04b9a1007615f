"""Agent runs on the frozen held-out set agent-runs-v2: valid calls flagged, valid runs emitted,
each mutation kind caught.

The set (`eval/sets/agent-runs-v2`, written by scripts/make_agent_runs_v2.py; nothing is fitted
on it) holds, per scenario, a valid run, the same run ending on its calls, and one mutated run.
Every record goes through `agents.checking.check_run` with its default settings (or `--set
agent_runs_v2.judge=...`). Reported:

- `valid_calls`: the share of the valid calls rejected (per call, all causes: schema, invented
  identifier, tool fit), over the `valid_call` runs; and of those runs flagged;
- `valid_runs`: the share of `correct` runs emitted (their answer restates valid results), with
  the actions and diagnoses of the others;
- `mutations`: per kind, the share flagged (`caught`); for a changed or invented argument also
  the share whose changed call itself was rejected (`call_rejected`); for an answer mutation
  also the share caught among those whose valid pair was emitted (`caught_where_pair_emitted`:
  flagged for the mutation, not for whatever flagged the valid run too);
- each rate by language and run format; the seconds a run took.

Targets (the set's README): valid calls flagged <= 0.03, valid runs emitted >= 0.90, each
mutation kind caught >= 0.95. `python -m bench agent_runs_v2` writes
bench/results/agent_runs_v2.json.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import common

NAME = "agent_runs_v2"
DESCRIPTION = "held-out agent runs (agent-runs-v2): valid calls flagged, runs emitted, mutations"
SET_NAME = "agent-runs-v2"
TARGETS = {
    "valid_call_flag_rate_max": 0.03,
    "valid_run_emitted_min": 0.90,
    "mutation_caught_min": 0.95,
}
SAMPLE_SEED = 56
ARGUMENT_MUTATIONS = ("date", "time", "amount", "address", "ip", "id", "enum")


def _rate(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def _by(rows: list[dict], key: str, value: str) -> dict[str, float | None]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row[value])
    return {k: _rate(v) for k, v in sorted(groups.items())}


def _mutated_call(report: dict, mutation: dict) -> dict | None:
    """The validation of the call the mutation changed: the last call of its tool."""
    rows = [v for v in report.get("tool_call_validations") or [] if v["tool"] == mutation["tool"]]
    return rows[-1] if rows else None


def _reasons(validation: dict) -> list[str]:
    """A rejected call's errors by the rule that made them, their values left out."""
    found = []
    for error in validation.get("errors") or [validation.get("status", "rejected")]:
        text = str(error)
        if "does not fit the request" in text:
            found.append("tool fit")
        elif text.startswith("invented identifier"):
            found.append("invented identifier")
        else:
            found.append(" ".join(text.split("'")[0].split()[:6]) or "rejected")
    return found


def check_records(
    records: list[dict],
    settings: dict[str, Any],
    rows_file: Path | None = None,
    name: str = NAME,
) -> list[dict]:
    """One row per record: the report's action, diagnosis, calls' statuses, seconds. With
    `rows_file`, each row is appended to it as it is made, and records it already holds are not
    checked again (a long run resumes where it stopped)."""
    from agents.checking.check import Config, check_run, make_toolkit

    done = _read_rows([rows_file]) if rows_file and rows_file.is_file() else []
    seen = {row["id"] for row in done}
    config = Config(**settings)
    toolkit = make_toolkit(config)
    rows = list(done)
    for index, record in enumerate(records):
        if record["id"] in seen:
            continue
        started = time.perf_counter()
        try:
            report = check_run(record["run"], config, toolkit=toolkit)
        except Exception as exc:  # a record the check cannot read is an error row, not a verdict
            rows.append({**_meta(record), "error": f"{type(exc).__name__}: {exc}"[:300]})
            _append(rows_file, rows[-1])
            continue
        validations = report.get("tool_call_validations") or []
        row = {
            **_meta(record),
            "action": report["action"],
            "flagged": report["action"] != "emit",
            "mode": (report.get("diagnosis") or {}).get("mode"),
            "calls": len(validations),
            "calls_rejected": sum(v["status"] != "valid" for v in validations),
            "rejected_reasons": [
                x for v in validations if v["status"] != "valid" for x in _reasons(v)
            ],
            "claim_statuses": [c.get("status") for c in report.get("claims") or []],
            "seconds": round(time.perf_counter() - started, 4),
        }
        if record["label"].startswith("changed_") or record["label"] == "invented_value":
            target = _mutated_call(report, record["mutation"])
            row["call_rejected"] = bool(target and target["status"] != "valid")
        rows.append(row)
        _append(rows_file, row)
        if (index + 1) % 100 == 0:
            common.console.print(f"  {name}: {index + 1}/{len(records)} records")
    return rows


def _append(rows_file: Path | None, row: dict) -> None:
    if rows_file is not None:
        with rows_file.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _read_rows(files: list[Path]) -> list[dict]:
    """The rows of earlier (or parallel) runs; a line cut short by a stopped run is skipped."""
    rows = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def _meta(record: dict) -> dict:
    keys = ("id", "label", "lang", "format", "style", "pair", "domain")
    return {k: record.get(k) for k in keys}


def summarize_rows(rows: list[dict]) -> dict[str, Any]:
    """The figures of the result file from the per-record rows."""
    ok = [r for r in rows if "error" not in r]
    by_label: dict[str, list[dict]] = defaultdict(list)
    for row in ok:
        by_label[row["label"]].append(row)
    calls = by_label["valid_call"]
    call_total = sum(r["calls"] for r in calls)
    valid_calls = {
        "runs": len(calls),
        "calls": call_total,
        "call_flag_rate": round(sum(r["calls_rejected"] for r in calls) / call_total, 4)
        if call_total
        else None,
        "run_flag_rate": _rate([r["flagged"] for r in calls]),
        "run_flag_rate_by_lang": _by(calls, "lang", "flagged"),
        "run_flag_rate_by_format": _by(calls, "format", "flagged"),
        "run_flag_rate_by_domain": _by(calls, "domain", "flagged"),
        "rejected_reasons": dict(
            Counter(x for r in calls for x in r["rejected_reasons"]).most_common()
        ),
    }
    runs = by_label["correct"]
    emitted = [r for r in runs if not r["flagged"]]
    valid_runs = {
        "runs": len(runs),
        "emitted": _rate([not r["flagged"] for r in runs]),
        "actions": dict(Counter(r["action"] for r in runs).most_common()),
        "diagnoses_not_emitted": dict(
            Counter(r["mode"] for r in runs if r["flagged"]).most_common()
        ),
        "calls_rejected_in_runs": sum(r["calls_rejected"] for r in runs),
        "claim_statuses_not_emitted": dict(
            Counter(s for r in runs if r["flagged"] for s in r["claim_statuses"]).most_common()
        ),
        "emitted_by_lang": _by(runs, "lang", "flagged"),
        "emitted_by_format": _by(runs, "format", "flagged"),
        "emitted_by_style": _by(runs, "style", "flagged"),
    }
    for key in ("emitted_by_lang", "emitted_by_format", "emitted_by_style"):
        valid_runs[key] = {k: round(1 - v, 4) for k, v in valid_runs[key].items() if v is not None}
    pair_emitted = {r["pair"] for r in emitted}
    calls_passed = {r["pair"] for r in calls if not r["flagged"]}
    mutations = {}
    kinds = [f"changed_{k}" for k in ARGUMENT_MUTATIONS] + [
        "invented_value",
        "contradiction",
        "unsupported_addition",
    ]
    for kind in kinds:
        group = by_label.get(kind, [])
        entry: dict[str, Any] = {"runs": len(group), "caught": _rate([r["flagged"] for r in group])}
        if kind.startswith("changed_") or kind == "invented_value":
            entry["call_rejected"] = _rate([r.get("call_rejected", False) for r in group])
            clean = [r for r in group if r["pair"] in calls_passed]
            entry["caught_where_pair_passed"] = _rate([r["flagged"] for r in clean])
            entry["pairs_passed"] = len(clean)
        else:
            clean = [r for r in group if r["pair"] in pair_emitted]
            entry["caught_where_pair_emitted"] = _rate([r["flagged"] for r in clean])
            entry["pairs_emitted"] = len(clean)
        entry["caught_by_lang"] = _by(group, "lang", "flagged")
        mutations[kind] = entry
    seconds = [r["seconds"] for r in ok]
    met = {
        "valid_call_flag_rate": valid_calls["call_flag_rate"] is not None
        and valid_calls["call_flag_rate"] <= TARGETS["valid_call_flag_rate_max"],
        "valid_run_emitted": valid_runs["emitted"] is not None
        and valid_runs["emitted"] >= TARGETS["valid_run_emitted_min"],
        **{
            f"caught.{k}": (m["caught"] or 0) >= TARGETS["mutation_caught_min"]
            for k, m in mutations.items()
        },
    }
    return {
        "records": len(rows),
        "errors": len(rows) - len(ok),
        "error_examples": [r["error"] for r in rows if "error" in r][:5],
        "valid_calls": valid_calls,
        "valid_runs": valid_runs,
        "mutations": mutations,
        "seconds": {
            "median": round(statistics.median(seconds), 4) if seconds else None,
            "mean": round(statistics.fmean(seconds), 4) if seconds else None,
            "max": round(max(seconds), 4) if seconds else None,
            "median_correct": round(statistics.median([r["seconds"] for r in runs]), 4)
            if runs
            else None,
        },
        "targets_met": met,
    }


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    *,
    name: str = NAME,
    set_name: str = SET_NAME,
    half_of: Callable[[str], str] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Options (`--set agent_runs_v2.KEY=VALUE`): judge (the check's, default its own default),
    limit (the first N scenarios, all three records of each; a limited run is marked so);
    sample=N: only the `correct` runs, N of them drawn with `seed` (default 56), for the emitted
    share where the whole set cannot be checked in the time at hand (marked limited; the
    result file gets a `-sampleN` suffix);
    shard=K/N checks every Nth scenario from the Kth into bench/.cache/agent_runs_v2/ (resumable)
    and writes no result; merge=true writes the result from the shards' rows (partial=true: from
    the scenarios they have finished, marked limited). The default judge's result is
    bench/results/agent_runs_v2.json; another judge's agent_runs_v2-judge-<judge>.json."""
    from eval.detection_sets import load_detection_set

    options: dict[str, Any] = {"judge": None, "limit": None, "shard": None, "merge": False}
    options |= {"partial": False, "sample": None, "seed": SAMPLE_SEED}
    options |= (overrides or {}).get(name, {})
    dset = load_detection_set(set_name)  # refuses a set changed since it was frozen
    records = dset.records
    if options["limit"]:
        pairs = sorted({r["pair"] for r in records})[: int(options["limit"])]
        records = [r for r in records if r["pair"] in set(pairs)]
    if options["sample"]:  # the valid runs only, a seeded sample of them: the emitted share
        correct = [r for r in records if r["label"] == "correct"]
        size = min(int(options["sample"]), len(correct))
        records = random.Random(int(options["seed"])).sample(correct, size)
    settings = {"judge": options["judge"]} if options["judge"] else {}
    shards = common.CACHE / name / (f"judge-{options['judge']}" if options["judge"] else "")
    started = time.perf_counter()
    if options["shard"]:
        k, n = (int(x) for x in str(options["shard"]).split("/"))
        pairs = sorted({r["pair"] for r in records})[k::n]
        shards.mkdir(parents=True, exist_ok=True)
        mine = [r for r in records if r["pair"] in set(pairs)]
        check_records(mine, settings, shards / f"rows-{k}-of-{n}.jsonl", name)
        return {"shard": options["shard"], "records": len(mine)}
    if options["merge"]:
        ids = {r["id"] for r in records}
        rows = [r for r in _read_rows(sorted(shards.glob("rows-*.jsonl"))) if r["id"] in ids]
        rows = list({r["id"]: r for r in rows}.values())
        missing = len(ids) - len(rows)
        if missing and not options["partial"]:
            raise common.Skipped(f"{missing} of {len(ids)} records have no row in {shards}")
        if missing:  # partial=true: the scenarios whose three records were all checked
            per_pair = Counter(r["pair"] for r in rows)
            rows = [r for r in rows if per_pair[r["pair"]] == 3]
            records = [r for r in records if per_pair[r["pair"]] == 3]
    else:
        rows = check_records(records, settings, name=name)
    result: dict[str, Any] = {
        "set": set_name,
        "set_hash": dset.set_hash,
        "targets": TARGETS,
        "options": options,
        "limited": len(records) < len(dset.records),
        "scenarios": len({r["pair"] for r in records}),
        **summarize_rows(rows),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "check": _check_version(),
    }
    if half_of:  # a set whose failures may be read in one half only: the figures of each half
        result["halves"] = {
            half: compact(summarize_rows([r for r in rows if half_of(r["pair"]) == half]))
            for half in sorted({half_of(r["pair"]) for r in rows})
        }
    stem = name if not options["judge"] else f"{name}-judge-{options['judge']}"
    stem += f"-sample{options['sample']}" if options["sample"] else ""
    common.write_result(stem, result, results_dir)
    return result


def compact(summary: dict[str, Any]) -> dict[str, Any]:
    """The headline figures of `summarize_rows`' result: no breakdowns, no examples."""
    return {
        "records": summary["records"],
        "valid_call_flag_rate": summary["valid_calls"]["call_flag_rate"],
        "valid_calls": summary["valid_calls"]["calls"],
        "valid_runs_emitted": summary["valid_runs"]["emitted"],
        "valid_runs": summary["valid_runs"]["runs"],
        "caught": {k: m["caught"] for k, m in summary["mutations"].items() if m["runs"]},
    }


def _check_version() -> str:
    from agents.checking import check

    return check.VERSION


def summarize(result: dict[str, Any]) -> str:
    if "shard" in result:
        return f"shard {result['shard']}: {result['records']} records checked (merge=true to sum)"
    vc, vr = result["valid_calls"], result["valid_runs"]
    lines = [
        f"{result.get('set', SET_NAME)} (held out; {result['records']} records, "
        f"check {result['check']}"
        f"{', limited' if result.get('limited') else ''}): valid calls flagged "
        f"{vc['call_flag_rate']} per call ({vc['run_flag_rate']} of {vc['runs']} call-only "
        f"runs), valid runs emitted {vr['emitted']} of {vr['runs']} "
        f"(target <= {TARGETS['valid_call_flag_rate_max']} / >= "
        f"{TARGETS['valid_run_emitted_min']})",
    ]
    for kind, m in result["mutations"].items():
        extra = (
            f", changed call rejected {m['call_rejected']}, where the valid call passed "
            f"{m['caught_where_pair_passed']} ({m['pairs_passed']})"
            if "call_rejected" in m
            else f", where the valid pair emitted {m['caught_where_pair_emitted']} "
            f"({m['pairs_emitted']})"
        )
        lines.append(f"- {kind}: caught {m['caught']} of {m['runs']}{extra}")
    lines.append(
        f"median {result['seconds']['median']} s a record, "
        f"{result['seconds']['median_correct']} s a whole run"
    )
    return "\n".join(lines)
