"""Check any agent's run (tool calls, tool results, final answer) in one HallucinationReport.

    from agents.checking import check_run
    report = check_run({"messages": [...], "tools": [...]})   # OpenAI, Anthropic or generic
    report["action"]  # emit | revise | block

Part of the guardrails stage: the claims go through its one claim checker
(`stages.guardrails.check_answer`); this package adds the run formats (`formats`), tool-call
verification (`tool_calls`), evidence from tool results (`tool_evidence`), the run-level diagnosis
(`diagnosis`), `check_run` (`check`) and the eval set's checker (`detection`).
"""

from __future__ import annotations

from agents.checking.check import VERSION, Config, check_run, make_toolkit
from agents.checking.formats import (
    AgentRun,
    RunError,
    RunFormatError,
    load,
    parse_run,
)

__all__ = [
    "VERSION",
    "AgentRun",
    "Config",
    "RunError",
    "RunFormatError",
    "check_run",
    "load",
    "make_toolkit",
    "parse_run",
]
