"""Shared by the agent-check tests of claims over one result: the structural verdict of a claim,
with the words the run lends it (the tool's name and the call's arguments)."""

from __future__ import annotations

from agents.checking import run_words, structured
from stages.common import values


def verdict(
    claim: str,
    result: dict,
    tool: str = "get_record",
    args: dict | None = None,
    language: str | None = None,
    context: set[str] | None = None,
) -> structured.Verdict:
    leaves = structured.leaves(result, tool, "c1")
    words = set(context or ()) | set(values.key_words(tool)) | run_words.argument_words(args or {})
    return structured.check_claim(claim, leaves, words, language)
