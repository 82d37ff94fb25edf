"""Anthropic contract: the official SDK's own types (anthropic 2.12) judge our bodies.

`check_request` validates a request body against `MessageCreateParams(Non)Streaming`.
Those are TypedDicts whose lists are `Iterable[...]`, which pydantic validates lazily,
only when iterated: the validated value is walked and every iterator drained, or a body
with a `tool_use` missing `name` would pass (DESIGN.md, "Contract tests").
Responses, stream events and error bodies are built from, or checked by, the SDK's
pydantic models, so the fixtures have the shapes the API really sends. A body, reply or
event holding a beta-only block (`compaction`, context management, the MCP connector's) is judged by the
SDK's beta types, the ones that declare it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson
from anthropic.types import (
    Message,
    RawMessageStreamEvent,
    TextBlock,
    ToolUseBlock,
    Usage,
)
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
from anthropic.types.beta import message_create_params as beta_params
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from anthropic.types.shared import ErrorResponse
from pydantic import TypeAdapter

_NON_STREAMING: TypeAdapter[Any] = TypeAdapter(MessageCreateParamsNonStreaming)
_STREAMING: TypeAdapter[Any] = TypeAdapter(MessageCreateParamsStreaming)
_EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
_BETA_NON_STREAMING: TypeAdapter[Any] = TypeAdapter(beta_params.MessageCreateParamsNonStreaming)
_BETA_STREAMING: TypeAdapter[Any] = TypeAdapter(beta_params.MessageCreateParamsStreaming)
_BETA_EVENT: TypeAdapter[Any] = TypeAdapter(BetaRawMessageStreamEvent)
_BETA_ONLY = (
    b'"type":"compaction"',
    b'"type":"compaction_delta"',
    b'"context_management":',
    b'"type":"mcp_tool_use"',
    b'"type":"mcp_tool_result"',
)
"""Wire values only the SDK's beta types declare."""


def _beta(value: Any) -> bool:
    encoded = orjson.dumps(value)
    return any(tag in encoded for tag in _BETA_ONLY)


def drain(value: Any) -> Any:
    """The validated value with every lazy iterator turned into a list, recursively
    (draining is what makes pydantic validate the items)."""
    if isinstance(value, Mapping):
        return {k: drain(v) for k, v in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, list | tuple | Iterator) or (
        isinstance(value, Iterable) and not isinstance(value, set)
    ):
        return [drain(v) for v in value]
    return value


def check_request(body: dict[str, Any]) -> None:
    """Raise (pydantic ValidationError) unless the SDK accepts `body` as a Messages request."""
    if _beta(body):
        adapter = _BETA_STREAMING if body.get("stream") is True else _BETA_NON_STREAMING
    else:
        adapter = _STREAMING if body.get("stream") is True else _NON_STREAMING
    drain(adapter.validate_python(body))
    orjson.dumps(body)  # and it is plain JSON


def check_response(body: dict[str, Any]) -> None:
    """Raise unless the SDK's Message model accepts `body`."""
    (BetaMessage if _beta(body) else Message).model_validate(body)


def check_stream_event(payload: dict[str, Any]) -> None:
    """Raise unless `payload` is a stream event the SDK knows (`ping` and `error` are
    handled by the SDK's SSE loop before its event union, so they are checked here)."""
    if payload.get("type") == "ping":
        assert set(payload) == {"type"}
    elif payload.get("type") == "error":
        ErrorResponse.model_validate(payload)
    else:
        (_BETA_EVENT if _beta(payload) else _EVENT).validate_python(payload)


RESPONSE_ID = "msg_01XFDUDYJgAACzvnptvVoYEL"
MODEL = "claude-sonnet-4-6"
TOOL_IDS = ("toolu_01A09q90qw90lq917835lq9", "toolu_01B7c2Yd3XnHdJkLmN0pQrSt")


def response_fixture() -> dict[str, Any]:
    """A non-streamed response: text + two parallel tool calls + usage with cache counts,
    built with the SDK's own models and dumped as the API would send it."""
    message = Message(
        id=RESPONSE_ID,
        type="message",
        role="assistant",
        model=MODEL,
        content=[
            TextBlock(type="text", text="I'll check both cities."),
            ToolUseBlock(type="tool_use", id=TOOL_IDS[0], name="get_weather", input={"city": "Paris"}),
            ToolUseBlock(
                type="tool_use", id=TOOL_IDS[1], name="get_weather", input={"city": "Rome", "unit": "c"}
            ),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=Usage(
            input_tokens=412,
            output_tokens=96,
            cache_creation_input_tokens=0,
            cache_read_input_tokens=1024,
        ),
    )
    return message.to_dict()


def _sse(event: str, data: str) -> bytes:
    return f"event: {event}\ndata: {data}\n\n".encode()


def stream_fixture() -> list[bytes]:
    """The stream of `response_fixture`, as recorded: padded JSON, a ping, the tool input
    split into fragments (the first one empty), and chunk boundaries inside events."""
    events = [
        _sse(
            "message_start",
            orjson.dumps(
                {
                    "type": "message_start",
                    "message": {
                        "id": RESPONSE_ID,
                        "type": "message",
                        "role": "assistant",
                        "model": MODEL,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 412,
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 1024,
                            "output_tokens": 1,
                        },
                    },
                }
            ).decode(),
        ),
        _sse(
            "content_block_start",
            '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        ),
        _sse("ping", '{"type": "ping"}'),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I\'ll check"}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" both cities."}}',
        ),
        _sse("content_block_stop", '{"type":"content_block_stop","index":0               }'),
        _sse(
            "content_block_start",
            '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use",'
            f'"id":"{TOOL_IDS[0]}","name":"get_weather","input":{{}}}}}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Pa"}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ris\\"}"}}',
        ),
        _sse("content_block_stop", '{"type":"content_block_stop","index":1}'),
        _sse(
            "content_block_start",
            '{"type":"content_block_start","index":2,"content_block":{"type":"tool_use",'
            f'"id":"{TOOL_IDS[1]}","name":"get_weather","input":{{}}}}}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"city\\": \\"Rome\\", "}}',
        ),
        _sse(
            "content_block_delta",
            '{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\\"unit\\": \\"c\\"}"}}',
        ),
        _sse("content_block_stop", '{"type":"content_block_stop","index":2  }'),
        _sse(
            "message_delta",
            '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},'
            '"usage":{"input_tokens":412,"cache_creation_input_tokens":0,"cache_read_input_tokens":1024,"output_tokens":96}}',
        ),
        _sse("message_stop", '{"type":"message_stop"   }'),
    ]
    whole = b"".join(events)
    # Recorded chunking: network reads rarely align with events; cut at fixed offsets too.
    cuts = sorted({*(sum(len(e) for e in events[:i]) for i in range(1, len(events))), 37, 401, 977})
    return [whole[a:b] for a, b in zip([0, *cuts], [*cuts, len(whole)], strict=True) if whole[a:b]]


def error_fixture() -> tuple[int, dict[str, Any]]:
    """An overloaded error as the API sends it (HTTP 529)."""
    body = {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }
    ErrorResponse.model_validate(body)
    return 529, body


__all__ = [
    "check_request",
    "check_response",
    "check_stream_event",
    "drain",
    "error_fixture",
    "response_fixture",
    "stream_fixture",
]
