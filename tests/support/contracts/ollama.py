"""Ollama contract: the official `ollama` SDK (0.6.3) models judge our /api/chat bodies.

The SDK alone is a weak judge, so `check_request` adds the server's own rules:

- `ChatRequest.messages` is typed `Sequence[Mapping[str, Any] | Message]`: any dict passes
  as a Mapping, so validating the body with `ChatRequest` checks no message at all (a
  string `arguments` or an array `content` sail through). Each message is therefore run
  through the SDK client's own conversion (`_copy_messages`: `Message.model_validate`,
  images wrapped in `Image`, then serialized, which checks the base64).
- The SDK drops unknown keys (a misspelled `tool_nmae` vanishes) and so does the Go
  server; keys are held to the known sets here.
- The server rejects tool-call `arguments` that are not an object and a `content` that
  is not a string (spec/provider-wire-formats.md §4); both rules are restated explicitly
  so they hold whatever the SDK's types become.

The SDK types use `Sequence`/`Mapping`, which pydantic validates eagerly; the validated
values are still drained like the other providers' (DESIGN.md, "Contract tests"), so a
lazily validated field would not slip through after an SDK upgrade.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
from ollama import ChatResponse, Message, Options, Tool
from ollama._client import _copy_messages
from ollama._types import ChatRequest

MODEL = "qwen3:8b"
CREATED_AT = "2026-05-08T12:00:03.512345Z"

REQUEST_KEYS = frozenset(ChatRequest.model_fields)
MESSAGE_KEYS = frozenset(Message.model_fields)
TOOL_CALL_KEYS = frozenset({"id", "function"})  # `id`: newer servers send it and accept it back
FUNCTION_KEYS = frozenset({"index", "name", "arguments"})  # `index` sits inside `function`
OPTION_KEYS = frozenset(Options.model_fields)
ROLES = frozenset({"system", "user", "assistant", "tool"})
THINK_LEVELS = frozenset({"low", "medium", "high"})


class ContractError(AssertionError):
    """A body the Ollama server (or its SDK) would not accept as we mean it."""


def drain(value: Any) -> Any:
    """The validated value with every lazy iterator turned into a list, recursively."""
    if isinstance(value, Mapping):
        return {k: drain(v) for k, v in value.items()}
    if hasattr(value, "model_dump"):
        return drain(value.model_dump())
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, list | tuple | Iterator) or (
        isinstance(value, Iterable) and not isinstance(value, set)
    ):
        return [drain(v) for v in value]
    return value


def check_request(body: dict[str, Any]) -> None:
    """Raise (ContractError or pydantic ValidationError) unless `body` is a valid /api/chat body."""
    problems: list[str] = []
    unknown = set(body) - REQUEST_KEYS
    if unknown:
        problems.append(f"unknown top-level keys {sorted(unknown)}")
    drain(ChatRequest.model_validate(body))
    for key in ("stream", "logprobs"):  # pydantic's lax bool takes "yes"; Go's JSON decoder does not
        if key in body and not isinstance(body[key], bool):
            problems.append(f"{key} must be a JSON boolean, got {body[key]!r}")
    if not isinstance(body.get("messages", []), list):
        problems.append("messages must be an array")
    orjson.dumps(body)  # plain JSON, nothing Python-only
    options = body.get("options")
    if options is not None:
        Options.model_validate(options)
        if set(options) - OPTION_KEYS:
            problems.append(f"unknown options {sorted(set(options) - OPTION_KEYS)}")
    think = body.get("think")
    if think is not None and not (isinstance(think, bool) or think in THINK_LEVELS):
        problems.append(f"think must be a boolean or one of {sorted(THINK_LEVELS)}, got {think!r}")
    for i, message in enumerate(body.get("messages") or []):
        problems.extend(f"messages[{i}]: {p}" for p in _message_problems(message))
    for i, tool in enumerate(body.get("tools") or []):
        Tool.model_validate(tool)
        if tool.get("type") != "function" or not isinstance(tool.get("function", {}).get("name"), str):
            problems.append(f"tools[{i}] must be a named function tool")
    if problems:
        raise ContractError("; ".join(problems))
    # The SDK client's own conversion of every message (validates, then serializes images).
    drain([m.model_dump(exclude_none=True) for m in _copy_messages(body.get("messages") or [])])


def _message_problems(message: Any) -> list[str]:
    if not isinstance(message, Mapping):
        return ["a message must be an object"]
    problems: list[str] = []
    if set(message) - MESSAGE_KEYS:
        problems.append(f"unknown keys {sorted(set(message) - MESSAGE_KEYS)}")
    if message.get("role") not in ROLES:
        problems.append(f"role must be one of {sorted(ROLES)}, got {message.get('role')!r}")
    if "content" in message and not isinstance(message["content"], str):
        problems.append(f"content must be a string, got {type(message['content']).__name__}")
    for key in ("thinking", "tool_name"):
        if key in message and not isinstance(message[key], str):
            problems.append(f"{key} must be a string")
    for j, image in enumerate(message.get("images") or []):
        problems.extend(f"images[{j}]: {p}" for p in _image_problems(image))
    for j, call in enumerate(message.get("tool_calls") or []):
        problems.extend(f"tool_calls[{j}]: {p}" for p in _call_problems(call))
    if message.get("tool_calls") and message.get("role") != "assistant":
        problems.append("only assistant messages carry tool_calls")
    return problems


def _image_problems(image: Any) -> list[str]:
    if not isinstance(image, str):
        return ["an image must be a base64 string"]
    if image.startswith("data:"):
        return ["an image must be raw base64, without a data: prefix"]
    try:
        base64.b64decode(image, validate=True)
    except (binascii.Error, ValueError):
        return ["an image is not valid base64"]
    return []


def _call_problems(call: Any) -> list[str]:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return ["a tool call must be an object with a function object"]
    problems = [f"unknown keys {sorted(set(call) - TOOL_CALL_KEYS)}"] if set(call) - TOOL_CALL_KEYS else []
    function = call["function"]
    if set(function) - FUNCTION_KEYS:
        problems.append(f"unknown function keys {sorted(set(function) - FUNCTION_KEYS)}")
    if not isinstance(function.get("name"), str) or not function["name"]:
        problems.append("function.name must be a non-empty string")
    if not isinstance(function.get("arguments"), dict):
        # The SDK's ChatRequest lets a JSON string through; the server answers
        # "cannot unmarshal string into ... api.ToolCallFunctionArguments".
        problems.append(
            f"function.arguments must be an object, got {type(function.get('arguments')).__name__}"
        )
    if "id" in call and not isinstance(call["id"], str):
        problems.append("id must be a string")
    return problems


def check_response(body: dict[str, Any]) -> None:
    """Raise unless the SDK's ChatResponse accepts `body`."""
    ChatResponse.model_validate(body)


TOOL_CALLS = (
    ("get_weather", {"city": "Paris", "unit": "celsius"}),
    ("get_weather", {"city": "Rome", "unit": "celsius"}),
)
TEXT = "I'll check the weather in both cities."
USAGE = {"prompt_eval_count": 211, "eval_count": 58}
DURATIONS = {
    "total_duration": 2_145_300_125,
    "load_duration": 18_204_541,
    "prompt_eval_duration": 190_112_000,
    "eval_duration": 1_902_331_000,
}


def _calls() -> list[Message.ToolCall]:
    return [
        Message.ToolCall(function=Message.ToolCall.Function(name=name, arguments=args))
        for name, args in TOOL_CALLS
    ]


def response_fixture() -> dict[str, Any]:
    """A non-streamed response: text + two tool calls + usage, built with the SDK's ChatResponse
    and dumped as the server sends it (the SDK's ToolCall has no `id`: older servers' shape)."""
    response = ChatResponse(
        model=MODEL,
        created_at=CREATED_AT,
        message=Message(role="assistant", content=TEXT, tool_calls=_calls()),
        done=True,
        done_reason="stop",
        **USAGE,
        **DURATIONS,
    )
    return orjson.loads(response.model_dump_json(exclude_none=True))


def stream_fixture() -> list[bytes]:
    """The same response streamed: NDJSON lines of content deltas, one line with both whole
    tool calls, and the final `done: true` line with the counters and an empty content."""
    pieces = ["I'll check", " the weather", " in both cities."]
    assert "".join(pieces) == TEXT
    lines = [
        ChatResponse(
            model=MODEL, created_at=CREATED_AT, message=Message(role="assistant", content=p), done=False
        )
        for p in pieces
    ]
    lines.append(
        ChatResponse(
            model=MODEL,
            created_at=CREATED_AT,
            message=Message(role="assistant", content="", tool_calls=_calls()),
            done=False,
        )
    )
    lines.append(
        ChatResponse(
            model=MODEL,
            created_at=CREATED_AT,
            message=Message(role="assistant", content=""),
            done=True,
            done_reason="stop",
            **USAGE,
            **DURATIONS,
        )
    )
    return [line.model_dump_json(exclude_none=True).encode() + b"\n" for line in lines]


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A real error: tools sent to a model without tool support (HTTP 400)."""
    return 400, {"error": "registry.ollama.ai/library/gemma3:4b does not support tools"}


__all__ = [
    "ContractError",
    "check_request",
    "check_response",
    "drain",
    "error_fixture",
    "response_fixture",
    "stream_fixture",
]
