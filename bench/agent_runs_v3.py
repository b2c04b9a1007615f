"""Agent runs on the frozen held-out set agent-runs-v3: valid calls flagged, valid runs emitted,
each mutation kind caught.

The set (`eval/sets/agent-runs-v3`, written by scripts/make_agent_runs_v3.py) was written by an
author who had not read the check's rules and frozen before its first measurement, over 45
public-API tools agent-runs-v2 does not have, in six languages; nothing is fitted on it. The
bench is agent_runs_v2's (`bench.agent_runs_v2`: the same rows, figures and options) on this set:
`python -m bench agent_runs_v3 [--set agent_runs_v3.judge=none | agent_runs_v3.sample=N]` writes
bench/results/agent_runs_v3.json (another judge: agent_runs_v3-judge-<judge>.json; a sample:
-sampleN). Its result also gives the figures of each half of the set (`halves`, `half_of`):
failures of the open half may be read to find what the check gets wrong, the held half's never.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from bench import agent_runs_v2

NAME = "agent_runs_v3"
DESCRIPTION = "held-out agent runs, written blind (agent-runs-v3): calls flagged, runs, mutations"
SET_NAME = "agent-runs-v3"
TARGETS = agent_runs_v2.TARGETS


def half_of(pair: str) -> str:
    """The set's two halves by scenario, fixed after its first (blind) measurement: failures of
    the `open` half may be read to find what the check gets wrong; the `held` half's are never
    printed or read, only counted, so its figures stay blind to every later change."""
    return "held" if int(hashlib.sha256(pair.encode()).hexdigest(), 16) % 2 else "open"


def run(
    results_dir: Path | None = None,
    overrides: dict[str, dict[str, Any]] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Options as agent_runs_v2's, under `--set agent_runs_v3.KEY=VALUE`."""
    return agent_runs_v2.run(results_dir, overrides, name=NAME, set_name=SET_NAME, half_of=half_of)


def summarize(result: dict[str, Any]) -> str:
    text = agent_runs_v2.summarize(result)
    for half, figures in (result.get("halves") or {}).items():
        text += f"\n{half} half: {figures}"
    return text
