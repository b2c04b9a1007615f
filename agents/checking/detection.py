"""The checker of the frozen eval set `agent-runs-v1` (eval/detection_sets.py's detection sets).

Each record holds an agent `run` (any of the four formats) and a `label`: `correct` (a clean
run), `hallucinated`, `no_evidence` (every tool result empty or an error, an answer anyway),
`valid_call` or `invalid_call` (a tool call to verify, the run ending on it). Flagged = the
report's action is not `emit`, whatever the label: a rejected call makes a run `revise`.
"""

from __future__ import annotations

import functools
import json
import time
from typing import Any

from agents.checking.check import Config, check_run, make_toolkit
from stages import guardrails


@functools.lru_cache(maxsize=4)
def _toolkit(settings: str) -> guardrails.Toolkit:
    """One judge per settings for the whole set (records are checked one by one)."""
    return make_toolkit(Config(**json.loads(settings)))


def check_record(record: dict, overrides: dict[str, dict[str, Any]] | None = None) -> dict:
    """{"flagged", "seconds", "action", "judge_calls", "rejected_calls", "mode"} of one record;
    `overrides["agent_runs"]` are fields of the check's Config."""
    settings = dict((overrides or {}).get("agent_runs") or {})
    started = time.perf_counter()
    report = check_run(
        record["run"], Config(**settings), toolkit=_toolkit(json.dumps(settings, sort_keys=True))
    )
    return {
        "flagged": report["action"] != "emit",
        "action": report["action"],
        "mode": report["diagnosis"]["mode"],
        "seconds": round(time.perf_counter() - started, 4),
        "judge_calls": report["judge_calls"],
        "rejected_calls": sum(v["status"] != "valid" for v in report["tool_call_validations"]),
    }
