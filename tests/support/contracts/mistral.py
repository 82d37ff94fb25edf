"""Contract of Mistral's Chat Completions wire, checked with the official `mistralai` SDK (3.7).

Requests validate as `ChatCompletionRequest` / `ChatCompletionStreamRequest` (pydantic
models: their lists are real lists); unknown keys are accepted by those models, so
`check_request` also checks the body's and each message's keys against the model fields,
and every tool call id against Mistral's rule (exactly 9 alphanumerics). Responses and
chunks are built through `ChatCompletionResponse` and `CompletionChunk`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mistralai.client import models as m

from tests.support.contracts.openai import ContractError

_ID = re.compile(r"[a-zA-Z0-9]{9}")
_MESSAGE_MODELS = {
    "system": m.SystemMessage,
    "user": m.UserMessage,
    "assistant": m.AssistantMessage,
    "tool": m.ToolMessage,
}


def _fields(model: Any) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items())


def check_request(body: dict[str, Any]) -> None:
    """Raise when `body` is not a valid Mistral chat request (SDK models, strict keys, id rule)."""
    model = m.ChatCompletionStreamRequest if body.get("stream") is True else m.ChatCompletionRequest
    model.model_validate(body)
    problems = [k for k in body if k not in _fields(model)]
    for i, message in enumerate(body.get("messages") or []):
        allowed = _fields(_MESSAGE_MODELS[message["role"]])
        problems += [f"messages[{i}].{k}" for k in message if k not in allowed]
        for k, call in enumerate(message.get("tool_calls") or []):
            if not _ID.fullmatch(call["id"]):
                problems.append(f"messages[{i}].tool_calls[{k}].id {call['id']!r} is not 9 alphanumerics")
        if "tool_call_id" in message and not _ID.fullmatch(message["tool_call_id"]):
            problems.append(f"messages[{i}].tool_call_id {message['tool_call_id']!r} is not 9 alphanumerics")
    if problems:
        raise ContractError(f"breaks Mistral's contract: {problems}")


# --- fixtures built through the SDK's response models ------------------------------------------

_ID_RESPONSE = "cmpl-e5cc70bb28c444948073e77776eb30ef"
_MODEL = "magistral-medium-2509"
_THINKING = "The user wants two cities; call the weather tool for each."
_TEXT = "Checking both cities now."
_CALLS = [
    ("D681PevKs", "get_weather", '{"city": "Paris"}'),
    ("Xb3kPq9Lm", "get_weather", '{"city": "Tokyo"}'),
]
_USAGE = {"prompt_tokens": 96, "completion_tokens": 41, "total_tokens": 137}


def _dump(model: Any) -> dict[str, Any]:
    return dict(json.loads(model.model_dump_json(by_alias=True, exclude_unset=True)))


def response_fixture() -> dict[str, Any]:
    """Thinking, text and two parallel tool calls (Magistral's shape), built by `ChatCompletionResponse`."""
    return _dump(
        m.ChatCompletionResponse.model_validate(
            {
                "id": _ID_RESPONSE,
                "object": "chat.completion",
                "created": 1763821000,
                "model": _MODEL,
                "usage": _USAGE,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": [
                                {"type": "thinking", "thinking": [{"type": "text", "text": _THINKING}]},
                                {"type": "text", "text": _TEXT},
                            ],
                            "tool_calls": [
                                {
                                    "id": i,
                                    "type": "function",
                                    "function": {"name": n, "arguments": a},
                                    "index": k,
                                }
                                for k, (i, n, a) in enumerate(_CALLS)
                            ],
                        },
                    }
                ],
            }
        )
    )


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
    fields: dict[str, Any] = {
        "id": _ID_RESPONSE,
        "object": "chat.completion.chunk",
        "created": 1763821000,
        "model": _MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        fields["usage"] = usage
    return b"data: " + json.dumps(_dump(m.CompletionChunk.model_validate(fields))).encode() + b"\n\n"


def stream_fixture() -> list[bytes]:
    """The same response streamed: thinking chunks, text, whole tool calls, usage on the last chunk."""
    out = [_chunk({"role": "assistant", "content": ""})]
    for piece in (_THINKING[:20], _THINKING[20:]):
        out.append(_chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}))
    out += [_chunk({"content": piece}) for piece in ("Checking ", "both cities", " now.")]
    calls = [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}, "index": k}
        for k, (i, n, a) in enumerate(_CALLS)
    ]
    out.append(_chunk({"tool_calls": calls}))
    out.append(_chunk({"content": ""}, finish="tool_calls", usage=_USAGE))
    out.append(b"data: [DONE]\n\n")
    return out


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A 400 error body as Mistral sends it (flat, no `error` wrapper)."""
    return 400, {
        "object": "error",
        "message": "Tool call id has to be a string of length 9 with only a-z, A-Z and 0-9",
        "type": "invalid_request_message_order",
        "param": None,
        "code": "3230",
    }


__all__ = ["check_request", "error_fixture", "response_fixture", "stream_fixture"]
