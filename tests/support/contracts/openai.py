"""Contract of the OpenAI Chat Completions wire, checked with the official `openai` SDK (3.54).

Requests: `CompletionCreateParams{NonStreaming,Streaming}` are TypedDicts whose lists are
`Iterable[...]`, which pydantic validates lazily, only when iterated; `materialize` walks the
validated result and turns every iterator into a list, so a bad message or part is really
rejected (DESIGN.md, "Contract tests"). TypedDicts also accept unknown keys, so
`check_request` adds a strict key check against the TypedDicts' own key sets: a misspelled
optional field fails here too. OpenRouter's contract reuses both with its extension keys.

Responses and chunks are the SDK's pydantic models (`ChatCompletion`, `ChatCompletionChunk`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionChunk,
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartInputAudioParam,
    ChatCompletionContentPartRefusalParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_content_part_param import File
from openai.types.chat.completion_create_params import (
    CompletionCreateParamsNonStreaming,
    CompletionCreateParamsStreaming,
)
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

_NON_STREAMING = TypeAdapter(CompletionCreateParamsNonStreaming)
_STREAMING = TypeAdapter(CompletionCreateParamsStreaming)


def _keys(typed_dict: Any) -> frozenset[str]:
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


TOP_KEYS = _keys(CompletionCreateParamsNonStreaming) | _keys(CompletionCreateParamsStreaming)
MESSAGE_KEYS: dict[str, frozenset[str]] = {
    "system": _keys(ChatCompletionSystemMessageParam),
    "developer": _keys(ChatCompletionDeveloperMessageParam),
    "user": _keys(ChatCompletionUserMessageParam),
    "assistant": _keys(ChatCompletionAssistantMessageParam),
    "tool": _keys(ChatCompletionToolMessageParam),
}
PART_KEYS: dict[str, frozenset[str]] = {
    "text": _keys(ChatCompletionContentPartTextParam),
    "image_url": _keys(ChatCompletionContentPartImageParam),
    "input_audio": _keys(ChatCompletionContentPartInputAudioParam),
    "file": _keys(File),
    "refusal": _keys(ChatCompletionContentPartRefusalParam),
}
TOOL_KEYS = _keys(ChatCompletionFunctionToolParam)
FUNCTION_KEYS = _keys(FunctionDefinition)
TOOL_CALL_KEYS = _keys(ChatCompletionMessageFunctionToolCallParam)


class ContractError(AssertionError):
    """A body breaks the provider's wire contract."""


def materialize(value: Any) -> Any:
    """Deep copy with every lazily validated iterator consumed (this is where pydantic checks them)."""
    if isinstance(value, Mapping):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, list | tuple | Iterator) or (
        isinstance(value, Iterable) and not isinstance(value, set)
    ):
        return [materialize(v) for v in value]
    return value


def sdk_validate(body: dict[str, Any]) -> Any:
    """Validate against the SDK request TypedDict, iterating every Iterable; raises pydantic's ValidationError."""
    adapter = _STREAMING if body.get("stream") is True else _NON_STREAMING
    return materialize(adapter.validate_python(body))


def unknown_keys(
    body: dict[str, Any],
    *,
    top: Iterable[str] = (),
    message: Iterable[str] = (),
    part: Iterable[str] = (),
    tool: Iterable[str] = (),
) -> list[str]:
    """Paths of keys no SDK TypedDict declares (plus the extension keys allowed by the caller)."""
    problems: list[str] = []

    def check(obj: Any, allowed: frozenset[str], path: str) -> None:
        if isinstance(obj, dict):
            problems.extend(f"{path}.{k}" for k in obj if k not in allowed)

    check(body, TOP_KEYS | set(top), "")
    for i, msg in enumerate(body.get("messages") or []):
        if not isinstance(msg, dict):
            continue
        check(msg, MESSAGE_KEYS.get(str(msg.get("role")), frozenset()) | set(message), f"messages[{i}]")
        content = msg.get("content")
        for j, p in enumerate(content if isinstance(content, list) else []):
            if isinstance(p, dict):
                check(
                    p,
                    PART_KEYS.get(str(p.get("type")), frozenset()) | set(part),
                    f"messages[{i}].content[{j}]",
                )
        for k, call in enumerate(msg.get("tool_calls") or []):
            check(call, TOOL_CALL_KEYS, f"messages[{i}].tool_calls[{k}]")
    for i, t in enumerate(body.get("tools") or []):
        check(t, TOOL_KEYS | set(tool), f"tools[{i}]")
        if isinstance(t, dict):
            check(t.get("function"), FUNCTION_KEYS, f"tools[{i}].function")
    return problems


def check_request(body: dict[str, Any]) -> None:
    """Raise when `body` is not a valid Chat Completions request for the openai SDK (deep, strict keys)."""
    sdk_validate(body)
    problems = unknown_keys(body)
    if problems:
        raise ContractError(f"keys the SDK does not declare: {problems}")


def check_response(body: dict[str, Any]) -> ChatCompletion:
    """A non-streamed response body parsed by the SDK's own model."""
    return ChatCompletion.model_validate(body)


def check_chunk(chunk: dict[str, Any]) -> ChatCompletionChunk:
    """One stream chunk parsed by the SDK's own model."""
    return ChatCompletionChunk.model_validate(chunk)


# --- fixtures built through the SDK's response models ------------------------------------------

_ID = "chatcmpl-CeTFx1Qa7Zs3Xd9Ce5Vf2Rb8Tg4Yh"
_MODEL = "gpt-4.1-2025-04-14"
_TEXT = "Checking both cities now."
_CALLS = [
    ("call_Nb2Vc7Xz4Lk9Jh1Gf6Ds3Aq8W", "get_weather", '{"city":"Paris"}'),
    ("call_Po5Iu0Yt8Re3Wq6Lk1Jh4Gf9D", "get_weather", '{"city":"Tokyo"}'),
]
_USAGE = {
    "prompt_tokens": 96,
    "completion_tokens": 41,
    "total_tokens": 137,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
}


def response_fixture() -> dict[str, Any]:
    """A response with text, two parallel tool calls and usage, built by `ChatCompletion`."""
    completion = ChatCompletion.model_validate(
        {
            "id": _ID,
            "object": "chat.completion",
            "created": 1763821000,
            "model": _MODEL,
            "system_fingerprint": "fp_b3f1157249",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": _TEXT,
                        "refusal": None,
                        "tool_calls": [
                            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                            for i, n, a in _CALLS
                        ],
                    },
                }
            ],
            "usage": _USAGE,
        }
    )
    return completion.model_dump(mode="json", exclude_unset=True)


def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    chunk = ChatCompletionChunk.model_validate(
        {
            "id": _ID,
            "object": "chat.completion.chunk",
            "created": 1763821000,
            "model": _MODEL,
            "system_fingerprint": "fp_b3f1157249",
            "choices": choices,
            "usage": usage,
            "obfuscation": "pAd",
        }
    )
    return b"data: " + json.dumps(chunk.model_dump(mode="json", exclude_unset=True)).encode() + b"\n\n"


def stream_fixture() -> list[bytes]:
    """The same response streamed (SSE events built by `ChatCompletionChunk`, then `[DONE]`)."""
    out = [_chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    out += [
        _chunk([{"index": 0, "delta": {"content": piece}}]) for piece in ("Checking ", "both cities", " now.")
    ]
    for k, (call_id, name, args) in enumerate(_CALLS):
        first = {"index": k, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(_chunk([{"index": 0, "delta": {"tool_calls": [first]}}]))
        for piece in (args[:5], args[5:]):
            out.append(
                _chunk(
                    [{"index": 0, "delta": {"tool_calls": [{"index": k, "function": {"arguments": piece}}]}}]
                )
            )
    out.append(_chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
    out.append(_chunk([], usage=_USAGE))
    out.append(b"data: [DONE]\n\n")
    return out


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A 429 rate-limit error body as OpenAI sends it."""
    return 429, {
        "error": {
            "message": "Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): "
            "Limit 30000, Used 29871, Requested 1200. Please try again in 2.142s.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


__all__ = [
    "ContractError",
    "check_chunk",
    "check_request",
    "check_response",
    "error_fixture",
    "materialize",
    "response_fixture",
    "sdk_validate",
    "stream_fixture",
    "unknown_keys",
]
