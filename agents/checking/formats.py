"""Agent runs in, from the formats agents write; one `AgentRun` out, or a one-line error.

Six formats, told apart by their shape (or named by a top-level `"format"` key):

- **OpenAI Chat Completions**: `messages` (system / user / assistant with `tool_calls` / `tool`
  with `tool_call_id`; the legacy `function_call` / `function` turns too) and `tools` as
  `{"type": "function", "function": {"name", "parameters"}}` (or the legacy `functions`).
  A `choices[0].message` beside the messages is the final turn.
- **Anthropic Messages**: `messages` whose content holds `tool_use` blocks (`id`, `name`, `input`)
  and `tool_result` blocks (`tool_use_id`, `content`, `is_error`); `tools` with `input_schema`;
  `system` as a string or text blocks.
- **OpenAI Responses** (`openai_responses`; the Agents SDK's `to_input_list()` too): `input`
  (text, or items: `message` with `input_text` / `output_text` parts, `function_call` with
  `call_id`, `name`, `arguments`, `function_call_output` with `call_id`, `output`), `output` (the
  response's items) beside it, `instructions` as the system text, `tools` as flat function
  declarations (`{"type": "function", "name", "parameters"}`; built-in tools are skipped). Other
  items (reasoning, built-in tool calls) carry nothing this reads and are skipped.
- **Gemini** (`gemini`; the Gemini API / Vertex AI `generateContent` request, camelCase or the
  Python SDK's snake_case): `contents` of `user` / `model` turns whose `parts` hold `text`,
  `functionCall` (`name`, `args`, `id`?) and `functionResponse` (`name`, `response`, `id`?);
  `tools` as `[{"functionDeclarations": [...]}]` (or the declarations' list itself);
  `systemInstruction` as the system text; a response's `candidates[0].content` is the final turn.
  A response without an id answers the earliest unanswered call of its name.
- **LangChain / LangGraph** (`langchain`): `messages` as `messages_to_dict` writes them
  (`{"type": "ai", "data": {...}}`), as plain dicts (`{"type": "ai", "content", "tool_calls"}`)
  or as `dumpd` writes them (`{"lc": 1, "id": [..., "AIMessage"], "kwargs": {...}}`): `human`,
  `system`, `ai` with `tool_calls` (`name`, `args`, `id`; `invalid_tool_calls` too) and `tool`
  with `tool_call_id`, `content` and `status`.
- **generic**: `{"question", "tool_results": [{"tool", "call_id"?, "args"?, "content",
  "is_error"?}], "answer", "tools"?}`, for anything else. The calls may also come as their own
  list, `"tool_calls": [{"id", "name", "arguments"}]`, joined to their results by id.

`tools` may be declared as OpenAI, Anthropic (`input_schema`) or MCP (`inputSchema`) write them.

`run_id` (or `id`) names a run; without one it is `<file stem>:<line or index>`. A run that cannot
be read raises `RunFormatError` whose message names what is wrong in one line; `load` turns each
into a `RunError` and goes on with the batch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = ("openai", "anthropic", "openai_responses", "gemini", "langchain", "generic")
# LangChain's message types (`messages_to_dict`'s "type") and its class names (`dumpd`'s id)
LANGCHAIN_TYPES = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "chat": "chat",
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": "chat",
}
# Items of the Responses API that a bare list (`to_input_list()`) is made of
RESPONSES_ITEMS = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "web_search_call"}
)
RUN_SUFFIXES = (".json", ".jsonl")


class RunFormatError(ValueError):
    """A run that cannot be read; the message is one line naming what is wrong."""


@dataclass
class ToolCall:
    call_id: str
    name: str
    args: Any  # the parsed arguments (a dict when well formed)
    position: int  # order among the run's events: what came before it is its provenance
    args_error: str | None = None  # arguments that are not JSON, as the model wrote them


@dataclass
class ToolResult:
    call_id: str | None
    name: str
    content: Any  # text, or the parsed JSON of a structured result
    position: int
    is_error: bool = False


@dataclass
class AgentRun:
    run_id: str
    format: str
    question: str
    user_texts: list[str]  # system and user turns: what the user (or the developer) provided
    tools: dict[str, dict] | None  # declared tool name -> JSON schema of its arguments
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    answer: str | None = None  # the final assistant text; None when the run ends on a call
    model: str | None = None
    tool_descriptions: dict[str, str] = field(default_factory=dict)

    def result_for(self, call: ToolCall) -> ToolResult | None:
        return next((r for r in self.results if r.call_id == call.call_id), None)


@dataclass
class RunError:
    run_id: str
    source: str  # file and line (or index) it came from
    error: str


# ---------------------------------------------------------------- helpers

TEXT_BLOCKS = ("text", "input_text", "output_text", None)


def _text(content: Any) -> str:
    """The text of a message content: a string, or the text of its text blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in TEXT_BLOCKS:
                parts.append(str(block.get("text") or ""))
            elif isinstance(block, dict) and block.get("type") == "refusal":
                parts.append(str(block.get("refusal") or ""))  # the model's own refusal
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict) and "text" in content:
        return str(content["text"])
    raise RunFormatError(f"content of type {type(content).__name__} is neither text nor blocks")


def parse_json_text(value: Any) -> Any:
    """A tool result or arguments string holding JSON, parsed; anything else as given."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _tool_descriptions(run: dict) -> dict[str, str]:
    found = {}
    for tool in run.get("tools") or run.get("functions") or run.get("function") or []:
        spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            found[spec["name"]] = str(spec.get("description") or "")
    return found


def _tool_schemas(run: dict) -> dict[str, dict] | None:
    """Declared tools: OpenAI `tools` / `functions`, Anthropic `tools` (`input_schema`), MCP's
    tool list (`inputSchema`), BFCL's `function`."""
    declared = run.get("tools") or run.get("functions") or run.get("function")
    if declared is None:
        return None
    if not isinstance(declared, list):
        raise RunFormatError("'tools' is not a list")
    tools: dict[str, dict] = {}
    for index, tool in enumerate(declared):
        if not isinstance(tool, dict):
            raise RunFormatError(f"tools[{index}] is not an object")
        spec = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        name = spec.get("name")
        if not name or not isinstance(name, str):
            raise RunFormatError(f"tools[{index}] has no name")
        keys = ("parameters", "input_schema", "inputSchema")  # OpenAI, Anthropic, MCP
        schema = next((spec[k] for k in keys if k in spec), {"type": "object"})
        tools[name] = schema if isinstance(schema, dict) else {}
    return tools


def _call_args(raw: Any, where: str) -> tuple[Any, str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            return json.loads(raw), None
        except json.JSONDecodeError as exc:
            return raw, f"{where}: arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    return raw, None


def _run_id(run: dict, fallback: str) -> str:
    value = run.get("run_id") or run.get("id")
    return str(value) if value not in (None, "") else fallback


# ---------------------------------------------------------------- the formats


def detect_format(run: Any) -> str:
    if not isinstance(run, dict):
        raise RunFormatError(f"a run is a JSON object, got {type(run).__name__}")
    named = run.get("format")
    if named is not None:
        if named not in FORMATS:
            raise RunFormatError(f"unknown format {named!r}; known: {', '.join(FORMATS)}")
        return named
    messages = run.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise RunFormatError("'messages' is not a list")
    if isinstance(run.get("contents"), list):
        return "gemini"
    if isinstance(messages, list) and messages and all(_langchain_message(m) for m in messages):
        return "langchain"
    if isinstance(messages, list):
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                for b in content
            ):
                return "anthropic"
        if isinstance(run.get("system"), str | list) or any(
            isinstance(t, dict) and "input_schema" in t for t in run.get("tools") or []
        ):
            return "anthropic"
        return "openai"
    if "input" in run and isinstance(run["input"], str | list):
        return "openai_responses"
    if "question" in run or "tool_results" in run or "answer" in run:
        return "generic"
    keys = ", ".join(sorted(run)[:8]) or "none"
    raise RunFormatError(
        f"not a run: no 'messages' (OpenAI / Anthropic / LangChain), 'contents' (Gemini), "
        f"'input' (OpenAI Responses) nor 'question' + 'tool_results' + 'answer' (generic); "
        f"keys: {keys}"
    )


def parse_run(run: Any, fallback_id: str = "") -> AgentRun:
    """One run in any of the six formats; raises RunFormatError naming what is wrong."""
    kind = detect_format(run)
    fallback = (
        fallback_id
        or "run-"
        + hashlib.sha256(json.dumps(run, sort_keys=True, default=str).encode()).hexdigest()[:12]
    )
    parser = {
        "openai": _openai,
        "anthropic": _anthropic,
        "openai_responses": _responses,
        "gemini": _gemini,
        "langchain": _langchain,
        "generic": _generic,
    }[kind]
    parsed = parser(run, _run_id(run, fallback))
    parsed.tool_descriptions = _tool_descriptions(_gemini_tools(run) if kind == "gemini" else run)
    if not parsed.question and parsed.answer is None and not parsed.calls:
        raise RunFormatError(f"{kind} run has no user question, no tool call and no answer")
    return parsed


def _messages(run: dict) -> list[dict]:
    messages = run.get("messages")
    if not isinstance(messages, list):
        raise RunFormatError("'messages' is not a list")
    messages = list(messages)
    choices = run.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    if isinstance(first, dict) and isinstance(first.get("message"), dict):
        messages.append(choices[0]["message"])  # the completion's reply: the final turn
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RunFormatError(f"messages[{index}] has no role")
    return messages


def _openai(run: dict, run_id: str) -> AgentRun:
    parsed = AgentRun(run_id, "openai", "", [], _tool_schemas(run), model=run.get("model"))
    names: dict[str, str] = {}
    last_text: tuple[int, str] | None = None
    for index, message in enumerate(_messages(run)):
        role, where = message["role"], f"messages[{index}]"
        if role in ("system", "developer", "user"):
            text = _text(message.get("content"))
            parsed.user_texts.append(text)
            if role == "user":
                parsed.question = text
        elif role == "assistant":
            calls = list(message.get("tool_calls") or [])
            if isinstance(message.get("function_call"), dict):
                calls.append({"id": f"call_{index}", "function": message["function_call"]})
            for number, call in enumerate(calls):
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not function.get("name"):
                    raise RunFormatError(f"{where}.tool_calls[{number}] has no function.name")
                call_id = str(call.get("id") or f"call_{index}_{number}")
                args, error = _call_args(function.get("arguments"), f"{where}.tool_calls[{number}]")
                parsed.calls.append(ToolCall(call_id, function["name"], args, index, error))
                names[call_id] = function["name"]
            text = _text(message.get("content"))
            if text.strip() and not calls:
                last_text = (index, text)
        elif role in ("tool", "function"):
            call_id = message.get("tool_call_id")
            if role == "tool" and not call_id:
                raise RunFormatError(f"{where}: a tool message without tool_call_id")
            name = message.get("name") or names.get(call_id or "") or "unknown"
            if role == "function" and not call_id:
                call_id = next((c.call_id for c in reversed(parsed.calls) if c.name == name), None)
            content = parse_json_text(message.get("content"))
            if isinstance(content, list):
                content = parse_json_text(_text(content))
            parsed.results.append(ToolResult(call_id, name, content, index))
        else:
            raise RunFormatError(f"{where} has unknown role {role!r}")
    parsed.answer = _final(last_text, parsed)
    return parsed


def _final(last_text: tuple[int, str] | None, parsed: AgentRun) -> str | None:
    """The final answer: the last assistant text that comes after every tool result."""
    if last_text is None:
        return None
    after = max((r.position for r in parsed.results), default=-1)
    after = max(after, max((c.position for c in parsed.calls), default=-1))
    return last_text[1] if last_text[0] > after else None


def _anthropic(run: dict, run_id: str) -> AgentRun:
    parsed = AgentRun(run_id, "anthropic", "", [], _tool_schemas(run), model=run.get("model"))
    if run.get("system"):
        parsed.user_texts.append(_text(run["system"]))
    names: dict[str, str] = {}
    last_text: tuple[int, str] | None = None
    for index, message in enumerate(_messages(run)):
        role, where = message["role"], f"messages[{index}]"
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if role not in ("user", "assistant", "system"):
            raise RunFormatError(f"{where} has unknown role {role!r}")
        texts = []
        for number, block in enumerate(blocks):
            if isinstance(block, str):
                block = {"type": "text", "text": block}
            if not isinstance(block, dict):
                raise RunFormatError(f"{where}.content[{number}] is not a block")
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_use":
                if not block.get("name") or not block.get("id"):
                    raise RunFormatError(f"{where}.content[{number}]: tool_use without id or name")
                args = block.get("input", {})
                parsed.calls.append(ToolCall(str(block["id"]), block["name"], args, index))
                names[str(block["id"])] = block["name"]
            elif kind == "tool_result":
                call_id = block.get("tool_use_id")
                if not call_id:
                    raise RunFormatError(f"{where}.content[{number}]: tool_result without id")
                body = block.get("content")
                body = _text(body) if isinstance(body, list) else body
                parsed.results.append(
                    ToolResult(
                        str(call_id),
                        names.get(str(call_id), "unknown"),
                        parse_json_text(body),
                        index,
                        bool(block.get("is_error")),
                    )
                )
        text = "\n".join(t for t in texts if t)
        if role in ("user", "system") and text:
            parsed.user_texts.append(text)
            if role == "user":
                parsed.question = text
        elif (
            role == "assistant" and text.strip() and all(c.position != index for c in parsed.calls)
        ):
            last_text = (index, text)
    parsed.answer = _final(last_text, parsed)
    return parsed


def _responses(run: dict, run_id: str) -> AgentRun:
    declared = run.get("tools")
    if isinstance(declared, list):  # built-in tools ({"type": "web_search"}) declare no schema
        run = {**run, "tools": [t for t in declared if not _builtin(t)]}
    parsed = AgentRun(
        run_id, "openai_responses", "", [], _tool_schemas(run), model=run.get("model")
    )
    if isinstance(run.get("instructions"), str) and run["instructions"].strip():
        parsed.user_texts.append(run["instructions"])
    items = run.get("input")
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items
    output = run.get("output", [])
    if not isinstance(items, list) or not isinstance(output, list):
        raise RunFormatError("'input' and 'output' must be text or lists of items")
    places = [f"input[{i}]" for i in range(len(items))]
    places += [f"output[{i}]" for i in range(len(output))]
    names: dict[str, str] = {}
    last_text: tuple[int, str] | None = None
    for index, (where, item) in enumerate(zip(places, [*items, *output], strict=True)):
        if not isinstance(item, dict):
            raise RunFormatError(f"{where} is not an object")
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            role, text = item.get("role"), _text(item.get("content"))
            if role in ("system", "developer", "user"):
                parsed.user_texts.append(text)
                parsed.question = text if role == "user" else parsed.question
            elif role == "assistant":
                last_text = (index, text) if text.strip() else last_text
            else:
                raise RunFormatError(f"{where} has unknown role {role!r}")
        elif kind == "function_call":
            call_id, name = item.get("call_id") or item.get("id"), item.get("name")
            if not call_id or not name:
                raise RunFormatError(f"{where}: function_call without call_id or name")
            args, error = _call_args(item.get("arguments"), where)
            parsed.calls.append(ToolCall(str(call_id), name, args, index, error))
            names[str(call_id)] = name
        elif kind == "function_call_output":
            if not item.get("call_id"):
                raise RunFormatError(f"{where}: function_call_output without call_id")
            call_id, body = str(item["call_id"]), item.get("output")
            body = _text(body) if isinstance(body, list) else body
            name = names.get(call_id, "unknown")
            parsed.results.append(ToolResult(call_id, name, parse_json_text(body), index))
    parsed.answer = _final(last_text, parsed)
    return parsed


def _builtin(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("type") not in (None, "function")


def _gemini_tools(run: dict) -> dict:
    """The run with its Gemini declarations as a flat `tools` list: `tools` holding
    `functionDeclarations` groups (built-in tools such as `googleSearch` skipped), a single such
    group, or a top-level `functionDeclarations`."""
    keys = ("functionDeclarations", "function_declarations")
    declared = run.get("tools")
    groups = declared if isinstance(declared, list) else [declared] if declared else []
    groups += [{key: run[key]} for key in keys if key in run]
    if declared is None and not groups:
        return run
    flat: list[Any] = []
    for index, group in enumerate(groups):
        if not isinstance(group, dict):
            raise RunFormatError(f"tools[{index}] is not an object")
        found = [group[key] for key in keys if key in group]
        if found and not isinstance(found[0], list):
            raise RunFormatError(f"tools[{index}].functionDeclarations is not a list")
        if found:
            flat += found[0]
        elif "name" in group:
            flat.append(group)  # a declaration written without its group
    for index, spec in enumerate(flat):
        if isinstance(spec, dict) and "parameters" not in spec:
            schema = spec.get("parametersJsonSchema", spec.get("parameters_json_schema"))
            if schema is not None:
                flat[index] = {**spec, "parameters": schema}
    return {**run, "tools": flat}


def _gemini_part(part: Any, *keys: str) -> Any:
    return next((part[key] for key in keys if isinstance(part, dict) and key in part), None)


def _gemini(run: dict, run_id: str) -> AgentRun:
    parsed = AgentRun(
        run_id, "gemini", "", [], _tool_schemas(_gemini_tools(run)), model=run.get("model")
    )
    system = _gemini_part(run, "systemInstruction", "system_instruction")
    if system:
        parts = system.get("parts") if isinstance(system, dict) else system
        parsed.user_texts.append(_text(parts) if isinstance(parts, list) else _text(system))
    contents = list(run["contents"])
    candidates = run.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if isinstance(first, dict) and isinstance(first.get("content"), dict):
        contents.append(first["content"])  # the response's reply: the final turn
    unanswered: list[ToolCall] = []
    last_text: tuple[int, str] | None = None
    for index, turn in enumerate(contents):
        where = f"contents[{index}]"
        if not isinstance(turn, dict) or not isinstance(turn.get("parts", []), list):
            raise RunFormatError(f"{where} is not a turn with a list of parts")
        role = turn.get("role", "user")
        if role not in ("user", "model", "function", "tool", "system"):
            raise RunFormatError(f"{where} has unknown role {role!r}")
        texts = []
        for number, part in enumerate(turn.get("parts", [])):
            place = f"{where}.parts[{number}]"
            if isinstance(part, str):
                part = {"text": part}
            if not isinstance(part, dict):
                raise RunFormatError(f"{place} is not a part")
            call = _gemini_part(part, "functionCall", "function_call")
            response = _gemini_part(part, "functionResponse", "function_response")
            if isinstance(part.get("text"), str) and not part.get("thought"):
                texts.append(part["text"])
            elif call is not None:
                if not isinstance(call, dict) or not call.get("name"):
                    raise RunFormatError(f"{place}: functionCall without name")
                call_id = str(call.get("id") or f"call_{index}_{number}")
                args, error = _call_args(call.get("args"), place)
                parsed.calls.append(ToolCall(call_id, call["name"], args, index, error))
                unanswered.append(parsed.calls[-1])
            elif response is not None:
                if not isinstance(response, dict) or not response.get("name"):
                    raise RunFormatError(f"{place}: functionResponse without name")
                answered = _answered(unanswered, response.get("id"), response["name"])
                call_id = answered.call_id if answered else response.get("id")
                body = _gemini_body(response.get("response"))
                is_error = isinstance(body, dict) and set(body) == {"error"}
                parsed.results.append(ToolResult(call_id, response["name"], body, index, is_error))
        text = "\n".join(t for t in texts if t)
        if role in ("user", "system") and text:
            parsed.user_texts.append(text)
            parsed.question = text if role == "user" else parsed.question
        elif role == "model" and text.strip() and all(c.position != index for c in parsed.calls):
            last_text = (index, text)
    parsed.answer = _final(last_text, parsed)
    return parsed


def _answered(unanswered: list[ToolCall], call_id: Any, name: str) -> ToolCall | None:
    """The call a response answers: by id when it has one, else the earliest unanswered call
    of its name."""
    for call in unanswered:
        if (call.call_id == str(call_id)) if call_id else call.name == name:
            unanswered.remove(call)
            return call
    return None


def _gemini_body(response: Any) -> Any:
    """A functionResponse's `response`: the SDK wraps a plain return value as {"result": ...}
    (or "output" / "content"), which is the result itself."""
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("result", "output", "content") and not isinstance(value, dict | list):
            return parse_json_text(value)
    return parse_json_text(response)


def _langchain_message(message: Any) -> bool:
    if not isinstance(message, dict) or "role" in message:
        return False
    if message.get("lc") is not None and isinstance(message.get("id"), list):
        return str(message["id"][-1]) in LANGCHAIN_TYPES
    return message.get("type") in LANGCHAIN_TYPES


def _langchain_fields(message: dict) -> tuple[str, dict]:
    """(type, fields) of a message in any of LangChain's three dict shapes."""
    if message.get("lc") is not None and isinstance(message.get("id"), list):
        fields = message.get("kwargs")
        return LANGCHAIN_TYPES[str(message["id"][-1])], fields if isinstance(fields, dict) else {}
    kind = LANGCHAIN_TYPES[message["type"]]
    data = message.get("data")
    return kind, data if isinstance(data, dict) else message


def _langchain(run: dict, run_id: str) -> AgentRun:
    parsed = AgentRun(run_id, "langchain", "", [], _tool_schemas(run), model=run.get("model"))
    names: dict[str, str] = {}
    last_text: tuple[int, str] | None = None
    for index, message in enumerate(run["messages"]):
        kind, fields = _langchain_fields(message)
        where = f"messages[{index}]"
        if kind == "chat":  # ChatMessage: a role of its own
            kind = {"assistant": "ai", "user": "human"}.get(str(fields.get("role")), "system")
        text = _text(fields.get("content"))
        if kind in ("human", "system"):
            parsed.user_texts.append(text)
            parsed.question = text if kind == "human" else parsed.question
        elif kind == "ai":
            calls = _langchain_calls(fields, where)
            for call in calls:
                parsed.calls.append(ToolCall(call[0], call[1], call[2], index, call[3]))
                names[call[0]] = call[1]
            if text.strip() and not calls:
                last_text = (index, text)
        else:
            call_id = fields.get("tool_call_id")
            name = fields.get("name") or names.get(str(call_id or "")) or "unknown"
            if not call_id:  # a FunctionMessage names its function, not its call
                call_id = next((c.call_id for c in reversed(parsed.calls) if c.name == name), None)
            if not call_id:
                raise RunFormatError(f"{where}: a tool message without tool_call_id or known name")
            content = fields.get("content")
            content = parse_json_text(_text(content) if isinstance(content, list) else content)
            is_error = fields.get("status") == "error"
            parsed.results.append(ToolResult(str(call_id), name, content, index, is_error))
    parsed.answer = _final(last_text, parsed)
    return parsed


def _langchain_calls(fields: dict, where: str) -> list[tuple[str, str, Any, str | None]]:
    """(id, name, args, args error) of an AIMessage's calls: `tool_calls` (args parsed), else the
    provider's own in `additional_kwargs.tool_calls`; `invalid_tool_calls` keep their text."""
    found = []
    raw = fields.get("tool_calls") or []
    if not raw:  # older exports keep only the provider's (OpenAI) calls
        extra = fields.get("additional_kwargs")
        raw = [
            {"id": c.get("id"), **(c.get("function") or {})}
            for c in (extra.get("tool_calls") or [] if isinstance(extra, dict) else [])
            if isinstance(c, dict)
        ]
    for number, call in enumerate(raw):
        if not isinstance(call, dict) or not call.get("name"):
            raise RunFormatError(f"{where}.tool_calls[{number}] has no name")
        call_id = str(call.get("id") or f"call_{where}_{number}")
        args, error = _call_args(call.get("args", call.get("arguments")), f"{where}.tool_calls")
        found.append((call_id, call["name"], args, error))
    for number, call in enumerate(fields.get("invalid_tool_calls") or []):
        if isinstance(call, dict) and call.get("name"):
            call_id = str(call.get("id") or f"invalid_{where}_{number}")
            args, error = _call_args(call.get("args"), f"{where}.invalid_tool_calls[{number}]")
            error = error or f"{where}.invalid_tool_calls[{number}]: {call.get('error')}"
            found.append((call_id, call["name"], args, error))
    return found


def _generic(run: dict, run_id: str) -> AgentRun:
    question = run.get("question")
    if not isinstance(question, str) or not question.strip():
        raise RunFormatError("generic run: 'question' is missing or not text")
    answer = run.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise RunFormatError("generic run: 'answer' is not text")
    results = run.get("tool_results", [])
    if not isinstance(results, list):
        raise RunFormatError("generic run: 'tool_results' is not a list")
    parsed = AgentRun(run_id, "generic", question, [question], _tool_schemas(run))
    if isinstance(run.get("system"), str):
        parsed.user_texts.insert(0, run["system"])
    parsed.model = run.get("model")
    # calls listed on their own come first, in order: call k at 2k, its result at 2k + 1
    parsed.calls = _generic_calls(run.get("tool_calls"))
    turn_of = {call.call_id: call.position for call in parsed.calls}
    later = 2 * len(parsed.calls)  # results of no listed call come after every listed one
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise RunFormatError(f"tool_results[{index}] is not an object")
        name = item.get("tool") or item.get("name")
        if not name:
            raise RunFormatError(f"tool_results[{index}] has no 'tool' name")
        call_id = str(item.get("call_id") or item.get("id") or f"call_{index + 1}")
        if call_id in turn_of:
            position = turn_of[call_id] + 1
        else:
            position = later + 2 * index + 1
            if "args" in item or "arguments" in item:
                args, error = _call_args(
                    item.get("args", item.get("arguments")), f"tool_results[{index}]"
                )
                parsed.calls.append(ToolCall(call_id, name, args, position - 1, error))
        content = item.get("content", item.get("result", item.get("output")))
        parsed.results.append(
            ToolResult(
                call_id, name, parse_json_text(content), position, bool(item.get("is_error"))
            )
        )
    parsed.results.sort(key=lambda r: r.position)
    parsed.answer = answer
    return parsed


def _generic_calls(raw: Any) -> list[ToolCall]:
    """A generic run's own `tool_calls` list: `{"id" | "call_id", "name" | "tool",
    "arguments" | "args"}` each (OpenAI's nested `function` too), call k at turn 2k."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise RunFormatError("generic run: 'tool_calls' is not a list")
    calls = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RunFormatError(f"tool_calls[{index}] is not an object")
        spec = item.get("function") if isinstance(item.get("function"), dict) else item
        name = spec.get("name") or spec.get("tool")
        if not name or not isinstance(name, str):
            raise RunFormatError(f"tool_calls[{index}] has no name")
        call_id = str(item.get("id") or item.get("call_id") or f"call_{index + 1}")
        args, error = _call_args(spec.get("arguments", spec.get("args")), f"tool_calls[{index}]")
        calls.append(ToolCall(call_id, name, args, 2 * index, error))
    return calls


# ---------------------------------------------------------------- files


def iter_sources(path: Path) -> list[Path]:
    """The run files of a path: the file itself, or a folder's .json / .jsonl files (sorted,
    recursively). Raises FileNotFoundError when there is nothing to read."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix in RUN_SUFFIXES and p.is_file())
        if not files:
            raise FileNotFoundError(f"{path}: no .json or .jsonl run files in this folder")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    return [path]


def read_file(path: Path) -> Iterator[AgentRun | RunError]:
    """The runs of one file: a JSON run, a JSON list of runs (or of one run's messages or
    Responses items), or JSONL with one run a line. An unreadable line or run is a RunError;
    the rest go on. Raises OSError / UnicodeDecodeError when the file itself cannot be read."""
    text = path.read_text(encoding="utf-8")
    stem = path.stem
    if path.suffix == ".jsonl" or (path.suffix != ".json" and "\n{" in text.strip()):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            source = f"{path.name}:{number}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                yield RunError(f"{stem}:{number}", source, f"not JSON ({exc.msg}, col {exc.colno})")
                continue
            yield _parsed(record, f"{stem}:{number}", source)
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        yield RunError(stem, path.name, f"not JSON ({exc.msg}, line {exc.lineno})")
        return
    if isinstance(data, list) and data and all(isinstance(m, dict) and "role" in m for m in data):
        data = {"messages": data}  # a bare message list is one OpenAI / Anthropic run
    elif isinstance(data, list) and data and all(_langchain_message(m) for m in data):
        data = {"messages": data}  # messages_to_dict's list: one LangChain run
    elif isinstance(data, list) and data and all(_responses_item(m) for m in data):
        data = {"input": data}  # a bare item list (the Agents SDK's to_input_list()): one run
    if isinstance(data, list):
        for index, record in enumerate(data):
            yield _parsed(record, f"{stem}:{index}", f"{path.name}[{index}]")
        return
    yield _parsed(data, stem, path.name)


def _responses_item(item: Any) -> bool:
    return isinstance(item, dict) and ("role" in item or item.get("type") in RESPONSES_ITEMS)


def _parsed(record: Any, fallback: str, source: str) -> AgentRun | RunError:
    try:
        return parse_run(record, fallback)
    except RunFormatError as exc:
        run_id = _run_id(record, fallback) if isinstance(record, dict) else fallback
        return RunError(run_id, source, str(exc))


def load(path: str | Path) -> list[AgentRun | RunError]:
    """Every run under `path` (file or folder), in order; a malformed one as a RunError.
    Raises FileNotFoundError for a path with nothing to read."""
    items: list[AgentRun | RunError] = []
    for source in iter_sources(Path(path)):
        try:
            items.extend(read_file(source))
        except (OSError, UnicodeDecodeError) as exc:
            items.append(RunError(source.stem, source.name, f"unreadable: {exc}"))
    return items
