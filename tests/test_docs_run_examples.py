"""The run examples of docs/agents/check-runs.md are read as the format their section names and
checked end to end: the page a new user copies from cannot drift from the reader."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agents.checking import check_run
from agents.checking.formats import parse_run

PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents" / "check-runs.md"
SECTIONS = {
    "OpenAI Chat Completions": "openai",
    "Anthropic Messages": "anthropic",
    "OpenAI Responses": "openai_responses",
    "Gemini": "gemini",
    "LangChain / LangGraph": "langchain",
    "Generic": "generic",
}


def examples() -> list[tuple[str, str, dict]]:
    """(section, expected format, run) for every run in a json block under a format's heading."""
    text = PAGE.read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"^### (.+?)\n(.*?)(?=^##)", text, re.S | re.M):
        expected = SECTIONS.get(match.group(1).strip())
        for block in re.findall(r"```json\n(.*?)\n```", match.group(2), re.S):
            try:
                runs = [json.loads(block)]
            except json.JSONDecodeError:  # JSONL: one run a line
                runs = [json.loads(line) for line in block.splitlines() if line.strip()]
            found += [(match.group(1).strip(), expected, run) for run in runs]
    return found


def test_every_format_section_has_an_example():
    assert {section for section, _, _ in examples()} == set(SECTIONS)


@pytest.mark.parametrize("section, expected, run", examples(), ids=lambda v: str(v)[:20])
def test_a_docs_example_is_read_as_its_format_and_checked(section, expected, run):
    parsed = parse_run(run, "docs")
    assert parsed.format == expected, section
    report = check_run(run, {"judge": "none"})
    assert report["action"] in ("emit", "revise", "block") and report["format"] == expected
    assert len(report["tool_call_validations"]) == len(parsed.calls)
