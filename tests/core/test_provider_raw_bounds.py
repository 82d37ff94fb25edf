"""provider_raw is bounded in depth and size where it enters (issue 17, item 6)."""

from __future__ import annotations

from typing import Any

import pytest
from metis import adapters
from metis.assembly import RequestContext
from metis.canonical import message_to_json, read_message
from metis.errors import WireFormatError
from metis.ids import ToolIdMap

MODEL = "anthropic:claude-sonnet-4-6"


def _reply(extra: Any) -> dict[str, Any]:
    """An Anthropic reply with a block metis has no type for: kept whole in provider_raw."""
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "hi"}, {"type": "server_thing", "x": extra}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 4},
    }


def _context(**kw: Any) -> RequestContext:
    return RequestContext(session_id="s", model=MODEL, tool_ids=ToolIdMap("s"), **kw)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_provider_raw_nested_past_the_bound_is_refused_at_ingress() -> None:
    """It used to be accepted and then broke storing the message (a raw
    PydanticSerializationError from the persistence serializer)."""
    with pytest.raises(WireFormatError, match="deeper than 100") as caught:
        adapters.get("anthropic").from_wire_response(_reply(_nested(400)), _context())
    assert caught.value.path == "metadata.provider_raw"


def test_provider_raw_within_the_bounds_is_kept_and_stored() -> None:
    message = adapters.get("anthropic").from_wire_response(_reply(_nested(50)), _context())
    assert read_message(message_to_json(message)) == message


def test_provider_raw_size_is_bounded_and_the_bounds_are_configurable() -> None:
    reply = _reply("y" * 5000)
    with pytest.raises(WireFormatError, match="limit is 4000"):
        adapters.get("anthropic").from_wire_response(reply, _context(max_provider_raw_bytes=4000))
    assert adapters.get("anthropic").from_wire_response(reply, _context()).metadata.provider_raw
    with pytest.raises(WireFormatError, match="deeper than 10"):
        adapters.get("anthropic").from_wire_response(_reply(_nested(20)), _context(max_provider_raw_depth=10))


def test_a_streamed_reply_is_bounded_the_same_way() -> None:
    import json

    events = [
        {"type": "message_start", "message": {**_reply(None), "content": [], "stop_reason": None}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_thing", "x": _nested(400)},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    body = b"".join(b"event: %s\ndata: %s\n\n" % (e["type"].encode(), json.dumps(e).encode()) for e in events)
    with pytest.raises(WireFormatError):
        adapters.get("anthropic").assemble_stream([body], _context())
