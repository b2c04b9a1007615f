"""The tool declarations agents see: one JSON Schema per tool, rendered for OpenAI function
calling (chat completions and the Responses API), Anthropic tool use and MCP
(`grounding tools --format openai|openai_responses|anthropic`)."""

from __future__ import annotations

from typing import Any

QUERY = {
    "type": "string",
    "minLength": 1,
    "maxLength": 2000,
    "description": "The question, in the user's words, naming what it is about.",
}
QUERY_TYPE = {
    "type": "string",
    "description": "What kind of question it is; selects which sources may answer it. Critical "
    "types (pricing, contract, dates) get a confidence check. Omit for general.",
    "enum": ["general", "pricing", "contract", "dates", "policy", "hr", "sla", "support"],
}
RUN = {
    "type": "object",
    "description": "An agent run to check: an OpenAI chat run {messages, tools}, an Anthropic "
    "Messages run {system, messages, tools}, or a generic run {question, tool_results, answer}.",
}

TOOLS: dict[str, dict[str, Any]] = {
    "search_knowledge_base": {
        "description": "Search the company knowledge base. Returns a grounded result: status "
        "(success, low_relevance, not_found, technical_error), is_error, an instruction to "
        "follow, the content and its sources. Follow the instruction; never answer from your "
        "own knowledge when is_error is true.",
        "parameters": {
            "type": "object",
            "properties": {"query": QUERY, "query_type": QUERY_TYPE},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
    "answer_with_citations": {
        "description": "Answer a question from the knowledge base with citations, or a "
        "structured refusal when the sources do not support an answer; includes the audit "
        "report. Slower than search (it may run the local language model).",
        "parameters": {
            "type": "object",
            "properties": {"question": QUERY, "query_type": QUERY_TYPE},
            "required": ["question"],
            "additionalProperties": False,
        },
    },
    "check_answer": {
        "description": "Check an agent run (its tool calls, tool results and final answer) for "
        "hallucinations: returns a report with per-claim support and an action "
        "(emit, revise, block).",
        "parameters": {
            "type": "object",
            "properties": {"run": RUN},
            "required": ["run"],
            "additionalProperties": False,
        },
    },
}


def declarations(fmt: str, names: list[str] | None = None) -> list[dict[str, Any]]:
    """The tools as `fmt` declares them: openai (chat completions `tools`), openai_responses
    (the Responses API's and the Agents SDK's flat function tools) or anthropic."""
    chosen = {n: t for n, t in TOOLS.items() if names is None or n in names}
    if fmt == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": tool["description"],
                    "parameters": tool["parameters"],
                },
            }
            for name, tool in chosen.items()
        ]
    if fmt == "openai_responses":
        return [
            {
                "type": "function",
                "name": name,
                "description": tool["description"],
                "parameters": tool["parameters"],
            }
            for name, tool in chosen.items()
        ]
    if fmt == "anthropic":
        return [
            {"name": name, "description": tool["description"], "input_schema": tool["parameters"]}
            for name, tool in chosen.items()
        ]
    raise ValueError(f"unknown format {fmt!r}; use openai, openai_responses or anthropic")
