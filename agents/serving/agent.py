"""`grounding agent "question"`: a small reference agent loop, end to end.

The model (the local GGUF through llama.cpp, or any OpenAI-compatible server: the shared `llm`
block of the generation stage, or --base-url) gets the `search_knowledge_base` tool; each call
runs the engine's search for this process's principal and goes back to the model as an OpenAI
`tool` message carrying the grounded result and its instruction. The model answers from it.
The whole run (messages, tools) is returned, and checked by the agent-run detector when it is
installed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from agents.serving import tools
from agents.serving.engine import Engine, jsonable
from agents.serving.http_api import load_check_run
from stages.models import chat
from stages.models.errors import LLMError
from stages.models.settings import LLMSettings

log = logging.getLogger(__name__)
SEARCH = "search_knowledge_base"
SYSTEM = (
    "You answer employees' questions about the company. Always call search_knowledge_base "
    "first. Follow the instruction in each tool result exactly: answer only from its content "
    "and cite the source title; when is_error is true, do not answer from your own knowledge."
)


class ToolModel:
    """One chat turn with tool declarations: llama.cpp in process, or an OpenAI-compatible
    server. Returns the assistant message (content and/or tool_calls)."""

    def __init__(self, settings: LLMSettings, max_tokens: int = 300) -> None:
        self.settings = settings
        self.max_tokens = max_tokens

    def turn(self, messages: list[dict], declared: list[dict], choice: str) -> dict[str, Any]:
        request = {
            "messages": messages,
            "tools": declared,
            "tool_choice": choice,
            "temperature": 0.0,
            "seed": 0,
            "max_tokens": self.max_tokens,
        }
        if self.settings.backend == "openai_compatible":
            return self._remote(request)
        client = chat.chat_client(self.settings, max_tokens=self.max_tokens)
        try:
            body = client.server.handle_chat_completions(request)  # type: ignore[attr-defined]
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp tool call failed: {exc}") from exc
        return chat.server_reply(body, "agent")["choices"][0]["message"]

    def _remote(self, request: dict[str, Any]) -> dict[str, Any]:
        base = self.settings.server_base_url()
        if not base:
            raise LLMError("llm.base_url (or GROUNDING_LLM_BASE_URL) is not set")
        key = self.settings.server_api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        payload = {**request, "model": self.settings.server_model()}
        try:
            response = httpx.post(
                f"{base.rstrip('/')}/chat/completions",
                json=payload,
                headers=headers,
                timeout=self.settings.timeout_s,
            )
            response.raise_for_status()
            return response.json()["choices"][0]["message"]
        except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
            raise LLMError(f"chat completion failed: {exc}") from exc


def run_agent(
    engine: Engine, model: ToolModel, question: str, principal: str, max_turns: int = 4
) -> dict[str, Any]:
    """The agent's run: it searches first, then may search again or answer. A model that only
    repeats a search it made, or runs out of turns, gets the grounded result's own answer
    (`answered_by` "grounded_result"), never its tool-call text as the answer."""
    declared = tools.declarations("openai", [SEARCH])
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    grounded: list[dict[str, Any]] = []
    done: set[str] = set()  # the searches made, by their arguments
    answer, answered_by = None, "model"
    for turn in range(max_turns):
        last = turn == max_turns - 1
        # "auto", not "required": llama.cpp's forced-call grammar is slow on 2 cores, and the
        # loop makes the first search itself when the model does not
        message = model.turn(messages, declared, "none" if last else "auto")
        calls = message.get("tool_calls") or calls_in_text(message.get("content"))
        if not calls and turn == 0:  # search first, always: an answer needs a grounded result
            arguments = json.dumps({"query": question})
            calls = [{"type": "function", "function": {"name": SEARCH, "arguments": arguments}}]
            message = {"content": ""}
        if not calls:
            text = (message.get("content") or "").strip()
            if text:  # an empty reply is no answer: the grounded result's own follows
                answer = text
                messages.append({"role": "assistant", "content": answer})
            break
        fresh = [c for c in calls if _arguments(c) not in done]
        if not fresh or last:  # nothing new to search: answer from what was found
            break
        messages.append({"role": "assistant", "content": "", "tool_calls": fresh})
        for number, call in enumerate(fresh):
            call["id"] = call.get("id") or f"call_{turn}_{number}"
            done.add(_arguments(call))
            result = _call_search(engine, call, principal, question)
            grounded.append(result.model_dump(mode="json"))
            messages.append(result.openai_message(call["id"]))
    if answer is None:
        answer, answered_by = grounded_answer(grounded[-1] if grounded else None), "grounded_result"
        messages.append({"role": "assistant", "content": answer})
    run = {"messages": messages, "tools": declared}
    report = None
    check_run = load_check_run()
    if check_run is not None:
        try:
            report = check_run(run)
            report = report.model_dump(mode="json") if hasattr(report, "model_dump") else report
        except Exception as exc:  # the check is advice; the run stands without it
            log.warning("agent-run check failed: %s", exc)
    return {
        "answer": answer,
        "answered_by": answered_by,
        "tool_results": grounded,
        "run": run,
        "report": jsonable(report),
    }


def grounded_answer(result: dict[str, Any] | None) -> str:
    """What the grounded result itself lets one say, when the model did not say it: a refusal
    in the plain words people (and the agent-run detector) read as one."""
    if result is None or result["status"] == "technical_error":
        return "I could not access the knowledge base search right now; please try again later."
    if result["status"] == "not_found":
        return (
            "I could not find this in the knowledge base. Please ask a clearer or more specific "
            "question."
        )
    top = result["sources"][0]
    caveat = (
        " This may not answer the question exactly." if result["status"] == "low_relevance" else ""
    )
    return f"{top['text']} [{top['evidence_id']}: {top['title']}]{caveat}"


def _arguments(call: dict[str, Any]) -> str:
    return json.dumps(_parsed_arguments(call), sort_keys=True)


def _parsed_arguments(call: dict[str, Any]) -> dict[str, Any]:
    try:
        arguments = json.loads((call.get("function") or {}).get("arguments") or "{}")
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def calls_in_text(content: str | None) -> list[dict[str, Any]]:
    """Tool calls a small model wrote as text (JSON objects naming the tool, fenced, in
    `<tools>` tags or bare), as chat-completion `tool_calls`; [] when the text is an answer."""
    if not content or SEARCH not in content:
        return []
    decoder, calls, seen = json.JSONDecoder(), [], set()
    for start in (i for i, char in enumerate(content) if char == "{"):
        try:
            parsed, _ = decoder.raw_decode(content, start)
        except ValueError:
            continue
        if not isinstance(parsed, dict) or parsed.get("name") != SEARCH:
            continue
        arguments = json.dumps(parsed.get("arguments") or parsed.get("parameters") or {})
        if arguments not in seen:
            seen.add(arguments)
            calls.append({"type": "function", "function": {"name": SEARCH, "arguments": arguments}})
    return calls


def _call_search(engine: Engine, call: dict[str, Any], principal: str, question: str):
    arguments = _parsed_arguments(call)
    query = str(arguments.get("query") or question)
    query_type = arguments.get("query_type")
    if query_type not in tools.QUERY_TYPE["enum"]:
        query_type = None
    return engine.search(query, principal, query_type)
