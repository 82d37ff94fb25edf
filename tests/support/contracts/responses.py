"""Contract of the Responses API wire, checked twice: with the official `openai` SDK (3.54)
and with `openresponses-types` (the Open Responses specification's own Python types).

Requests: `ResponseCreateParams{NonStreaming,Streaming}` are TypedDicts whose lists are
`Iterable[...]`, validated lazily by pydantic; `materialize` (the Chat contract's) walks the
result so every item really is checked (DESIGN.md, "Contract tests"). TypedDicts accept
unknown keys, so `check_request` also checks each input item's and tool's keys against the
SDK TypedDict of its type. Then the same body must validate as Open Responses'
`CreateResponseBody` (a strict pydantic model: its item unions are real).

Responses and stream events are built through the SDK models (`Response`,
`ResponseStreamEvent` members) and checked against `ResponseResource` and the Open
Responses streaming event models.
"""

from __future__ import annotations

import json
from typing import Any

import openresponses_types as ort
from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    Response,
    ResponseFunctionToolCallParam,
    ResponseOutputMessageParam,
    ResponseReasoningItemParam,
    ResponseStreamEvent,
)
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from openai.types.responses.response_input_param import FunctionCallOutput, Message
from pydantic import TypeAdapter

from tests.support.contracts.openai import ContractError, materialize

_NON_STREAMING = TypeAdapter(ResponseCreateParamsNonStreaming)
_STREAMING = TypeAdapter(ResponseCreateParamsStreaming)
_STREAM_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def _keys(typed_dict: Any) -> frozenset[str]:
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


TOP_KEYS = _keys(ResponseCreateParamsNonStreaming) | _keys(ResponseCreateParamsStreaming)
ITEM_KEYS: dict[str, frozenset[str]] = {
    # an assistant message given back as the output item it was (`id`, `status`) is one too
    "message": _keys(EasyInputMessageParam) | _keys(Message) | _keys(ResponseOutputMessageParam),
    "function_call": _keys(ResponseFunctionToolCallParam),
    "function_call_output": _keys(FunctionCallOutput),
    "reasoning": _keys(ResponseReasoningItemParam),
}
FUNCTION_TOOL_KEYS = _keys(FunctionToolParam)


def _items(body: dict[str, Any]) -> list[Any]:
    """The input items (none when `input` is one string, a user message of its own)."""
    items = body.get("input")
    return items if isinstance(items, list) else []


def unknown_keys(body: dict[str, Any]) -> list[str]:
    problems = [k for k in body if k not in TOP_KEYS]
    for i, item in enumerate(_items(body)):
        allowed = ITEM_KEYS.get(str(item.get("type", "message")))
        if allowed is not None:
            problems += [f"input[{i}].{k}" for k in item if k not in allowed]
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("type") == "function":
            problems += [f"tools[{i}].{k}" for k in tool if k not in FUNCTION_TOOL_KEYS]
    return problems


def sdk_validate(body: dict[str, Any]) -> Any:
    """Validate against the openai SDK's request TypedDict, iterating every Iterable."""
    adapter = _STREAMING if body.get("stream") is True else _NON_STREAMING
    return materialize(adapter.validate_python(body))


def check_request(body: dict[str, Any], *, open_responses: bool = True) -> None:
    """Raise when `body` is not a valid request for the openai SDK and for Open Responses
    (`open_responses=False`: OpenAI's alone, for bodies with OpenAI's built-in tools)."""
    sdk_validate(body)
    problems = unknown_keys(body)
    if problems:
        raise ContractError(f"keys the SDK does not declare: {problems}")
    if open_responses:
        ort.CreateResponseBody.model_validate(body)
    for i, item in enumerate(_items(body)):
        if len(item.get("call_id") or "") > 64:
            raise ContractError(f"input[{i}].call_id is longer than 64 characters")
    # A continuation's outputs answer calls of the response it names (the server has them).
    link_problems = [] if body.get("previous_response_id") else _links(body)
    if link_problems:
        raise ContractError("; ".join(link_problems))


def _links(body: dict[str, Any]) -> list[str]:
    """Every function_call_output answers a function_call before it."""
    calls: set[str] = set()
    problems = []
    for i, item in enumerate(_items(body)):
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        elif item.get("type") == "function_call_output" and item["call_id"] not in calls:
            problems.append(f"input[{i}] call_id {item['call_id']} answers no function_call")
    return problems


def _event_models() -> dict[str, type[Any]]:
    """Open Responses' streaming event models by their `type` value."""
    found: dict[str, type[Any]] = {}
    for name in dir(ort):
        model = getattr(ort, name)
        if (
            name.endswith("StreamingEvent")
            and hasattr(model, "model_fields")
            and "type" in model.model_fields
        ):
            annotation = model.model_fields["type"].annotation
            for member in getattr(annotation, "__members__", {}).values():
                found[member.value] = model
    return found


OPEN_RESPONSES_EVENTS = _event_models()


def check_event(event: dict[str, Any], *, openai: bool = True, open_responses: bool = True) -> None:
    """One stream event, checked by the openai SDK's event union and, for the event types
    the Open Responses specification defines, by its own model. The two disagree on one
    shape, the `error` event (OpenAI: fields at the top; Open Responses: under `error`):
    such an event is checked by the specification it follows."""
    if openai:
        _STREAM_EVENT.validate_python(event)
    model = OPEN_RESPONSES_EVENTS.get(event["type"])
    if model is not None and open_responses:
        model.model_validate(event)


def check_response(body: dict[str, Any], *, open_responses: bool = True) -> Response:
    """A response body parsed by both SDKs' models (built-in tool calls are OpenAI's alone:
    `open_responses=False` checks those with the openai SDK only)."""
    if open_responses:
        ort.ResponseResource.model_validate(body)
    return Response.model_validate(body)


# --- fixtures ---------------------------------------------------------------------------------

_ID = "resp_68c1f0e2a5b48190a6f3d2c1b0e9f8a70b1c2d3e4f5a6b7c"
_MODEL = "gpt-5-2025-08-07"
_TEXT = "Checking both cities now."
_SUMMARY = "**Planning the lookups**\n\nThe user wants weather for two cities; I will call the tool twice."
_ENCRYPTED = "gAAAAABowfDi3kX9QvH2Lq0Yb7nT1sR4uW8eZ6cA5dF3gJ2hK1mN0pO9qS8tV7wX6yZ5aB4cD3eF2gH1iJ0kL9mN8oP7q=="
_CALLS = [
    ("fc_68c1f0e5b1c08190", "call_Nb2Vc7Xz4Lk9Jh1Gf6Ds3Aq8", "get_weather", '{"city":"Paris"}'),
    ("fc_68c1f0e5b1d48190", "call_Po5Iu0Yt8Re3Wq6Lk1Jh4Gf9", "get_weather", '{"city":"Tokyo"}'),
]
USAGE = {
    "input_tokens": 312,
    "input_tokens_details": {"cached_tokens": 128, "cache_write_tokens": 0},
    "output_tokens": 187,
    "output_tokens_details": {"reasoning_tokens": 128},
    "total_tokens": 499,
}
REASONING_ITEM = {
    "id": "rs_68c1f0e3c2e48190a1b2",
    "type": "reasoning",
    "summary": [{"type": "summary_text", "text": _SUMMARY}],
    "encrypted_content": _ENCRYPTED,
}
MESSAGE_ITEM = {
    "id": "msg_68c1f0e4a9f88190",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "phase": "commentary",
    "content": [{"type": "output_text", "text": _TEXT, "annotations": [], "logprobs": []}],
}


def _call_item(item_id: str, call_id: str, name: str, args: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": args,
    }


def response_body(
    output: list[dict[str, Any]],
    *,
    status: str = "completed",
    usage: dict[str, Any] | None = USAGE,
    incomplete: str | None = None,
    open_responses: bool = True,
) -> dict[str, Any]:
    """A whole response object around `output`, valid for both SDKs."""
    body = {
        "id": _ID,
        "object": "response",
        "created_at": 1757540578,
        "completed_at": 1757540581 if status == "completed" else None,
        "status": status,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "model": _MODEL,
        "previous_response_id": None,
        "instructions": None,
        "output": output,
        "error": None,
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "description": "Current weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                "strict": False,
            }
        ],
        "tool_choice": "auto",
        "truncation": "disabled",
        "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "top_p": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "top_logprobs": 0,
        "temperature": 1.0,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "usage": usage,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "store": False,
        "background": False,
        "service_tier": "default",
        "metadata": {},
        "safety_identifier": None,
        "prompt_cache_key": None,
    }
    check_response(body, open_responses=open_responses)
    return body


def response_fixture() -> dict[str, Any]:
    """Reasoning (summary + encrypted content), text, two parallel function calls, usage."""
    return response_body([REASONING_ITEM, MESSAGE_ITEM, *(_call_item(*c) for c in _CALLS)])


def sse(events: list[dict[str, Any]]) -> list[bytes]:
    """Events numbered in order and framed as the API sends them (`event:` + `data:`)."""
    out = []
    for number, fields in enumerate(events):
        event = {**fields, "sequence_number": number}
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    return out


def stream_fixture() -> list[bytes]:
    """The same response streamed as semantic events."""
    created = {
        **response_fixture(),
        "status": "in_progress",
        "output": [],
        "usage": None,
        "completed_at": None,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": created},
        {"type": "response.in_progress", "response": created},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**REASONING_ITEM, "summary": [], "encrypted_content": None},
        },
        {
            "type": "response.reasoning_summary_part.added",
            "item_id": REASONING_ITEM["id"],
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        },
    ]
    for piece in (_SUMMARY[:20], _SUMMARY[20:]):
        events.append(
            {
                "type": "response.reasoning_summary_text.delta",
                "item_id": REASONING_ITEM["id"],
                "output_index": 0,
                "summary_index": 0,
                "delta": piece,
                "obfuscation": "x1",
            }
        )
    events += [
        {
            "type": "response.reasoning_summary_text.done",
            "item_id": REASONING_ITEM["id"],
            "output_index": 0,
            "summary_index": 0,
            "text": _SUMMARY,
        },
        {
            "type": "response.reasoning_summary_part.done",
            "item_id": REASONING_ITEM["id"],
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": _SUMMARY},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING_ITEM},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {**MESSAGE_ITEM, "status": "in_progress", "content": []},
        },
        {
            "type": "response.content_part.added",
            "item_id": MESSAGE_ITEM["id"],
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    for piece in ("Checking ", "both cities", " now."):
        events.append(
            {
                "type": "response.output_text.delta",
                "item_id": MESSAGE_ITEM["id"],
                "output_index": 1,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
        )
    events += [
        {
            "type": "response.output_text.done",
            "item_id": MESSAGE_ITEM["id"],
            "output_index": 1,
            "content_index": 0,
            "text": _TEXT,
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 1, "item": MESSAGE_ITEM},
    ]
    for k, call in enumerate(_CALLS, start=2):
        item = _call_item(*call)
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": k,
                "item": {**item, "arguments": "", "status": "in_progress"},
            }
        )
        for piece in (call[3][:5], call[3][5:]):
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": call[0],
                    "output_index": k,
                    "delta": piece,
                }
            )
        events.append(
            {
                "type": "response.function_call_arguments.done",
                "item_id": call[0],
                "output_index": k,
                "arguments": call[3],
                "name": call[2],
            }
        )
        events.append({"type": "response.output_item.done", "output_index": k, "item": item})
    events.append({"type": "response.completed", "response": response_fixture()})
    return sse(events)


def error_fixture() -> tuple[int, dict[str, Any]]:
    """A 429 rate-limit error body as OpenAI sends it."""
    return 429, {
        "error": {
            "message": "Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): "
            "Limit 30000, Used 29871, Requested 1200. Please try again in 2.142s.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


__all__ = [
    "check_request",
    "check_response",
    "error_fixture",
    "response_body",
    "response_fixture",
    "sse",
    "stream_fixture",
]
