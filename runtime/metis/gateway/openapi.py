"""The gateway's OpenAPI document: what each route takes and answers, for clients and fuzzers.

The handlers read their bodies raw (bounded, then imported by the inbound adapter), so
FastAPI sees no request model and would publish none. The schemas here are declared
instead, derived from the official SDKs' own types — the request TypedDicts
(`CompletionCreateParams`, `MessageCreateParams`, `ResponseCreateParams`) and the reply
models (`ChatCompletion`, `Message`, `Response`) — through pydantic's JSON Schema, so the
document says what the SDKs send and parse, and moves with them. Each API's definitions
live under its own prefix in `components/schemas` (the SDKs reuse names). Errors are
declared in each API's own shape, the one `app` answers with. Nothing here validates a
request: the document describes, the adapters decide.

The SDKs are imported only when the document is first asked for (`GET /openapi.json`),
so serving requests never pays for them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from .exchange import SESSION_HEADER

_OPENAI_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
"""OpenAI's error body (Chat Completions and Responses): what its SDK reads into APIError."""

_ANTHROPIC_ERROR = {
    "type": "object",
    "required": ["type", "error"],
    "properties": {
        "type": {"const": "error"},
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
        },
    },
}
"""Anthropic's error body: what its SDK reads into APIStatusError."""

_MODEL_LIST = {
    "type": "object",
    "required": ["object", "data"],
    "properties": {
        "object": {"const": "list"},
        "data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "object", "created", "owned_by"],
                "properties": {
                    "id": {"type": "string"},
                    "object": {"const": "model"},
                    "created": {"type": "integer"},
                    "owned_by": {"type": "string"},
                },
            },
        },
    },
}


def _sdk_types() -> dict[str, tuple[Any, Any, Any]]:
    """API prefix -> (request type, reply type, stream event type), from the official SDKs."""
    from anthropic.types import Message, RawMessageStreamEvent
    from anthropic.types.message_create_params import MessageCreateParams
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.chat.completion_create_params import CompletionCreateParams
    from openai.types.responses import Response, ResponseStreamEvent
    from openai.types.responses.response_create_params import ResponseCreateParams

    return {
        "Chat": (CompletionCreateParams, ChatCompletion, ChatCompletionChunk),
        "Messages": (MessageCreateParams, Message, RawMessageStreamEvent),
        "Responses": (ResponseCreateParams, Response, ResponseStreamEvent),
    }


@cache
def components() -> dict[str, Any]:
    """`components/schemas`: each API's request, reply and stream event with their
    definitions, and the two error shapes."""
    schemas: dict[str, Any] = {
        "OpenAIError": _OPENAI_ERROR,
        "AnthropicError": _ANTHROPIC_ERROR,
        "ModelList": _MODEL_LIST,
    }
    for prefix, (request, reply, event) in _sdk_types().items():
        kinds: tuple[tuple[str, Any, JsonSchemaMode], ...] = (
            ("Request", request, "validation"),
            ("Reply", reply, "serialization"),
            ("StreamEvent", event, "serialization"),
        )
        for name, kind, mode in kinds:
            # definitions are named per schema: an SDK reuses class names across modules
            # (a reply's `Choice` and a chunk's `Choice` differ)
            template = f"#/components/schemas/{prefix}.{name}.{{model}}"
            schema = TypeAdapter(kind).json_schema(ref_template=template, mode=mode)
            for key, definition in schema.pop("$defs", {}).items():
                schemas[f"{prefix}.{name}.{key}"] = definition
            schemas[f"{prefix}.{name}"] = schema
    return schemas


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _sse_event(api: str) -> dict[str, Any]:
    """One Server-Sent Event of API `api`'s stream (OpenAPI before 3.2 has a stream's
    `schema` describe each event): its `data` is one of the SDK's stream events, or the
    API's error event; Chat Completions ends with `[DONE]`."""
    event = {"contentMediaType": "application/json", "contentSchema": _ref(f"{api}.StreamEvent")}
    data: dict[str, Any] = {"type": "string", **event}
    if api == "Chat":
        data = {"anyOf": [{"const": "[DONE]"}, {"type": "string", **event}]}
    if api == "Messages":  # Anthropic's `event: error` is outside its SDK's event union
        error = {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": _ref("AnthropicError"),
        }
        data = {"anyOf": [data, error]}
    return {
        "type": "object",
        "required": ["data"],
        "properties": {"event": {"type": "string"}, "data": data},
    }


def _errors(shape: str) -> dict[int | str, dict[str, Any]]:
    body = {"content": {"application/json": {"schema": _ref(shape)}}}
    return {
        "4XX": {
            "description": "The request is refused (or the upstream refused it), in this API's error shape",
            **body,
        },
        "5XX": {"description": "The upstream failed, with its status, in this API's error shape", **body},
    }


_SESSION_PARAMETER = {
    "name": SESSION_HEADER,
    "in": "header",
    "required": False,
    "schema": {"type": "string"},
    "description": "The stored session to continue (the reply names the session it used)",
}


_OPERATION_IDS = {"Chat": "createChatCompletion", "Messages": "createMessage", "Responses": "createResponse"}
"""The operation ids the providers' own OpenAPI documents give these routes."""


def create_route(api: str) -> dict[str, Any]:
    """The keyword arguments of a create route's declaration (`app.post(path, **...)`)
    for API `api` (`Chat`, `Messages` or `Responses`): its request body and replies."""
    error = "AnthropicError" if api == "Messages" else "OpenAIError"
    return {
        "operation_id": _OPERATION_IDS[api],
        "responses": {
            200: {
                "description": "The reply, whole (JSON) or streamed (`stream: true`: Server-Sent Events)",
                "content": {
                    "application/json": {"schema": _ref(f"{api}.Reply")},
                    "text/event-stream": {"schema": _sse_event(api)},
                },
                "headers": {
                    SESSION_HEADER: {"schema": {"type": "string"}, "description": "The session used"}
                },
            },
            **_errors(error),
        },
        "openapi_extra": {
            "parameters": [_SESSION_PARAMETER],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref(f"{api}.Request")}},
            },
        },
    }


def stored_response_route() -> dict[str, Any]:
    """`GET /v1/responses/{response_id}`: a stored Responses reply."""
    reply = {
        "description": "The stored reply",
        "content": {"application/json": {"schema": _ref("Responses.Reply")}},
    }
    return {"operation_id": "getResponse", "responses": {200: reply, **_errors("OpenAIError")}}


def models_route() -> dict[str, Any]:
    """`GET /v1/models`: the catalog in OpenAI's model list shape."""
    listed = {
        "description": "The catalog's models",
        "content": {"application/json": {"schema": _ref("ModelList")}},
    }
    return {"operation_id": "listModels", "responses": {200: listed, **_errors("OpenAIError")}}


def with_components(build: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """Wrap FastAPI's document builder (`app.openapi`) to add `components()` to it."""

    def document() -> dict[str, Any]:
        built = build()
        found = built.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in components().items():
            found.setdefault(name, schema)
        return built

    return document


__all__ = ["components", "create_route", "models_route", "stored_response_route", "with_components"]
