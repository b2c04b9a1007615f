"""The grounded tool result: one object in one of four states, and its renderings for agents.

States (the rerank stage decides them, thresholds in configs/pipeline.yaml):
- success          confident content: "answer from it, cite it"
- low_relevance    content with a warning that the answer may be inaccurate
- not_found        `is_error`: do not answer from own knowledge, say it is missing
- technical_error  `is_error`: say the search is unavailable, no technical details, by error
                   kind (timeout or unavailable, rate limit, authorization or configuration,
                   unknown)

The instruction texts come from configs/agents.yaml. Internal error messages never enter a
result: they go to the server's log only.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from agents.serving.agents_config import AgentsConfig

State = Literal["success", "low_relevance", "not_found", "technical_error"]
ErrorKind = Literal["timeout", "unavailable", "rate_limit", "auth", "unknown"]
ERROR_STATES = ("not_found", "technical_error")


class Span(BaseModel):
    doc_id: str
    chunk_id: str | None = None
    char_start: int | None = None
    char_end: int | None = None


class Source(BaseModel):
    evidence_id: str
    uri: str | None = Field(
        None, description="doc://{doc_id}#{start}-{end}: open the cited span with its section"
    )
    title: str | None = None
    section: str | None = None
    anchor: str | None = Field(None, description="slide, page, cell range… in the original file")
    span: Span
    text: str = Field(description="the quoted passage")
    score: float | None = None


class Attempt(BaseModel):
    attempt: int
    query: str
    state: str
    score: float | None = None
    stop_reason: str | None = None


class ToolResult(BaseModel):
    """What a tool hands an agent: {status, is_error, instruction, content, sources, score,
    attempts}; `error_kind` only for a technical error, `unwritten_names` when the query names
    what no readable source writes."""

    status: State
    is_error: bool
    instruction: str
    content: str
    sources: list[Source] = []
    score: float | None = None
    attempts: list[Attempt] = []
    query: str
    query_type: str | None = None
    error_kind: ErrorKind | None = None
    unwritten_names: list[str] | None = None
    next_cursor: str | None = Field(
        None, description="pass as `cursor` with the same search for the next sources"
    )

    def model_text(self) -> str:
        """The result as the model reads it: JSON of what it needs, nothing internal."""
        body: dict[str, Any] = {
            "status": self.status,
            "is_error": self.is_error,
            "instruction": self.instruction,
        }
        if self.content:
            body["content"] = self.content
        if self.sources:
            body["sources"] = [
                {
                    "id": s.evidence_id,
                    "title": s.title,
                    "section": s.section,
                    **({"anchor": s.anchor} if s.anchor else {}),
                    **({"uri": s.uri} if s.uri else {}),
                    "score": None if s.score is None else round(s.score, 3),
                }
                for s in self.sources
            ]
        if self.next_cursor:
            body["next_cursor"] = self.next_cursor
        return json.dumps(body, ensure_ascii=False)

    def openai_message(self, tool_call_id: str) -> dict[str, Any]:
        """An OpenAI chat `tool` message answering `tool_call_id`."""
        return {"role": "tool", "tool_call_id": tool_call_id, "content": self.model_text()}

    def responses_item(self, call_id: str) -> dict[str, Any]:
        """An OpenAI Responses `function_call_output` input item answering `call_id`."""
        return {"type": "function_call_output", "call_id": call_id, "output": self.model_text()}

    def anthropic_block(self, tool_use_id: str) -> dict[str, Any]:
        """An Anthropic `tool_result` content block, with `is_error` for the two error states."""
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.model_text(),
            "is_error": self.is_error,
        }


def instruction_for(agents: AgentsConfig, state: str, error_kind: str | None = None) -> str:
    texts = agents.instructions
    if state == "technical_error":
        return (
            texts.technical_error.get(error_kind or "unknown") or texts.technical_error["unknown"]
        )
    return {"success": texts.success, "low_relevance": texts.low_relevance}.get(
        state, texts.not_found
    )


def technical_error(
    agents: AgentsConfig, query: str, kind: str = "unknown", query_type: str | None = None
) -> ToolResult:
    """The technical-error result: no content, no details, the instruction for its kind."""
    kind = kind if kind in ("timeout", "unavailable", "rate_limit", "auth") else "unknown"
    return ToolResult(
        status="technical_error",
        is_error=True,
        instruction=instruction_for(agents, "technical_error", kind),
        content="",
        query=query,
        query_type=query_type,
        error_kind=kind,  # type: ignore[arg-type]
    )


def not_found(
    agents: AgentsConfig,
    query: str,
    query_type: str | None = None,
    *,
    score: float | None = None,
    attempts: list[Attempt] | None = None,
    unwritten: list[str] | None = None,
) -> ToolResult:
    content = "No content found answers this query."
    if unwritten:
        content += f" No readable source mentions: {', '.join(unwritten)}."
    return ToolResult(
        status="not_found",
        is_error=True,
        instruction=instruction_for(agents, "not_found"),
        content=content,
        score=score,
        attempts=attempts or [],
        query=query,
        query_type=query_type,
        unwritten_names=unwritten or None,
    )


LOW_RELEVANCE_WARNING = "Warning: this content may not answer the query exactly."


def with_content(
    agents: AgentsConfig,
    state: str,
    query: str,
    sources: list[Source],
    *,
    query_type: str | None = None,
    score: float | None = None,
    attempts: list[Attempt] | None = None,
) -> ToolResult:
    """success or low_relevance: the sources' passages as content, each under its label."""
    parts = [LOW_RELEVANCE_WARNING] if state == "low_relevance" else []
    for source in sources:
        where = " — ".join(p for p in (source.title, source.section, source.anchor) if p)
        parts.append(f"[{source.evidence_id}] {where}\n{source.text}")
    return ToolResult(
        status=state,  # type: ignore[arg-type]
        is_error=False,
        instruction=instruction_for(agents, state),
        content="\n\n".join(parts),
        sources=sources,
        score=score,
        attempts=attempts or [],
        query=query,
        query_type=query_type,
    )
