"""Helpers shared by the tests/adapters/test_gemini_*.py files (goldens, contexts, canonical builders).

Wire inputs in tests/golden/gemini/ (`response_*.json`, `stream_*`, `request_recorded.json`)
are hand-written in the shapes of recorded AI Studio traffic (provider-wire-formats.md §3 and
google-genai 3.4's types); they and their `*.golden.json` outputs follow tests/support/golden.py's
naming scheme and are compared by its `check` (METIS_UPDATE_GOLDEN=1 rewrites, then review).
"""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from typing import Any

import metis.adapters
import orjson
from metis._genai_prices import data_version
from metis.adapters import AdapterOptions
from metis.adapters.gemini import GeminiAdapter
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, ToolDefinition

from tests.support import golden
from tests.support.contracts.gemini import check_request
from tests.support.messages import build_message

PROVIDER = "gemini"
FIXED_TIME = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
MODEL = "gemini:gemini-2.5-flash"
SESSION = "sess_gemini"
MESSAGE_ID = "01HZ0000000000000000000777"
PRICING = data_version()
"""The genai-prices data the goldens were priced with (replies dated FIXED_TIME)."""
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PNG_BYTES = base64.b64decode(PNG_1PX)
_TOOL_ID = re.compile(r"tu_[0-9A-HJKMNP-TV-Z]{26}")
_adapter = metis.adapters.get("gemini")
assert isinstance(_adapter, GeminiAdapter)
ADAPTER: GeminiAdapter = _adapter


def wire(name: str) -> Any:
    """A wire fixture (JSON) from tests/golden/gemini."""
    return orjson.loads(golden.read_input(PROVIDER, name))


def raw_bytes(name: str) -> bytes:
    """The bytes of a wire fixture (a stream body) from tests/golden/gemini."""
    return golden.read_input(PROVIDER, name)


def normalized(value: Any) -> Any:
    """Canonical JSON with minted tool ids replaced by their order of appearance."""
    if isinstance(value, Message):
        text = value.model_dump_json(exclude_none=True)
    elif isinstance(value, list) and value and isinstance(value[0], Message):
        text = "[" + ",".join(m.model_dump_json(exclude_none=True) for m in value) + "]"
    else:
        text = orjson.dumps(value).decode()
    seen: dict[str, str] = {}
    text = _TOOL_ID.sub(lambda m: seen.setdefault(m.group(0), f"tu_#{len(seen)}"), text)
    return orjson.loads(text)


def dump(message: Message) -> dict[str, Any]:
    """Canonical JSON of a message (the project's canonical form)."""
    return message.model_dump(mode="json", exclude_none=True)


def context(ids: ToolIdMap | None = None, model: str = MODEL, **kw: Any) -> RequestContext:
    return RequestContext(
        session_id=SESSION,
        model=model,
        tool_ids=ids if ids is not None else ToolIdMap(SESSION),
        message_id=MESSAGE_ID,
        created_at=FIXED_TIME,
        latency_ms=640,
        pricing_version=PRICING,
        **kw,
    )


def options(ids: ToolIdMap, **kw: Any) -> AdapterOptions:
    kw.setdefault("model", MODEL)
    return AdapterOptions(session_id=SESSION, tool_ids=ids, **kw)


def to_wire(messages: list[Message], tools: list[ToolDefinition], opts: AdapterOptions) -> dict[str, Any]:
    """`to_wire`, with every body checked against the SDK contract on the way out."""
    body = ADAPTER.to_wire(messages, tools, opts)
    check_request(body)
    return body


def message(role: str, content: list[dict[str, Any]], **metadata: Any) -> Message:
    return build_message(role, content, session_id=SESSION, created_at=FIXED_TIME, **metadata)


def user(text: str, *extra: dict[str, Any]) -> Message:
    return message("user", [{"type": "text", "text": text}, *extra])


def system(text: str) -> Message:
    return message("system", [{"type": "text", "text": text}])


def tool_result(
    tool_use_id: str, text: str, *, is_error: bool = False, extra: list[dict[str, Any]] | None = None
) -> Message:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(extra or [])
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error}
    return message("tool", [block], parent_tool_use_id=tool_use_id)


def assistant(content: list[dict[str, Any]], *, provider: str, model: str, **metadata: Any) -> Message:
    """A COMPLETE assistant message produced by another provider (usage and routing filled)."""
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_usd": "0",
        "pricing_version": PRICING,
        "latency_ms": 1,
    }
    routing = {"mode": "default", "chosen_model": model, "reason": "default model"}
    return message(
        "assistant", content, model=model, provider=provider, usage=usage, routing=routing, **metadata
    )


def image(kind: str, data: str, media_type: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "source": {"kind": kind, "data": data}, "media_type": media_type}


TOOLS = [
    ToolDefinition(
        name="get_weather",
        description="Current weather for a city.",
        input_schema={
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string", "enum": ["metric", "imperial"]},
            },
            "required": ["city"],
        },
        side_effects="network",
    ),
    ToolDefinition(
        name="get_time",
        description="The current UTC time.",
        input_schema={"type": "object", "properties": {}},
        side_effects="none",
    ),
]


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\r\n\r\n" for chunk in chunks)


def merged_body(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole response equivalent to a list of stream chunks: every part in order, the last
    finishReason, groundingMetadata, usage, id and model version."""
    parts: list[Any] = []
    body: dict[str, Any] = {}
    candidate: dict[str, Any] = {"index": 0}
    for chunk in chunks:
        for cand in chunk.get("candidates", [])[:1]:
            parts.extend(cand.get("content", {}).get("parts", []))
            for key in ("finishReason", "groundingMetadata"):
                if key in cand:
                    candidate[key] = cand[key]
        for key in ("usageMetadata", "modelVersion", "responseId"):
            if key in chunk:
                body[key] = chunk[key]
    candidate["content"] = {"role": "model", "parts": parts}
    body["candidates"] = [candidate]
    return body


def sse_chunks(data: bytes) -> list[dict[str, Any]]:
    """The JSON chunks of an SSE body (test-side reading, independent of the decoder)."""
    return [
        orjson.loads(line[len(b"data: ") :])
        for line in data.replace(b"\r\n", b"\n").split(b"\n")
        if line.startswith(b"data: ")
    ]


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]
