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
TOP_K = {
    "type": "integer",
    "minimum": 1,
    "maximum": 20,
    "description": "How many sources to return (default 8); with it the result carries "
    "next_cursor when there are more.",
}
FILTERS = {
    "type": "object",
    "description": "Narrow the search to some documents (only ever within what the caller may "
    "read): doc_types, trust_tiers, published_after / published_before (YYYY-MM-DD), doc_ids.",
    "properties": {
        "doc_types": {"type": "array", "items": {"type": "string"}},
        "trust_tiers": {"type": "array", "items": {"type": "string"}},
        "published_after": {"type": "string", "format": "date"},
        "published_before": {"type": "string", "format": "date"},
        "doc_ids": {"type": "array", "items": {"type": "string"}, "maxItems": 200},
    },
    "additionalProperties": False,
}
CURSOR = {
    "type": "string",
    "maxLength": 200,
    "description": "The next_cursor of the previous result, with the same query, query_type, "
    "top_k and filters, for the next sources.",
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
            "properties": {
                "query": QUERY,
                "query_type": QUERY_TYPE,
                "top_k": TOP_K,
                "filters": FILTERS,
                "cursor": CURSOR,
            },
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


def _result_schema() -> dict[str, Any]:
    from agents.serving.result import ToolResult

    return ToolResult.model_json_schema()


_OBJECT_OR_NULL = {"anyOf": [{"type": "object"}, {"type": "null"}]}
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "search_knowledge_base": _result_schema(),
    "answer_with_citations": {
        "type": "object",
        "description": "The cited answer (or refusal) and its hallucination report; `result` "
        "is the technical-error result when the answer could not be made.",
        "properties": {
            "answer": _OBJECT_OR_NULL,
            "report": _OBJECT_OR_NULL,
            "result": _OBJECT_OR_NULL,
        },
        "required": ["answer", "report"],
    },
    "check_answer": {
        "type": "object",
        "description": "The run's hallucination report: per-claim support and an action.",
        "properties": {"report": {"type": "object"}},
        "required": ["report"],
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
