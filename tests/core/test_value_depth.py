"""JSON values inside blocks are bounded where they enter (assembly.MAX_VALUE_DEPTH).

A tool input nested past what the serializers write (orjson stops at 254 levels) used to
be taken in, then fail with an untyped TypeError when the usage estimate, the hash or the
store wrote it. Found by `python -m bench.fuzz` (shape-derived Anthropic replies).
"""

from __future__ import annotations

from typing import Any

import pytest
from metis import adapters
from metis.assembly import MAX_VALUE_DEPTH, RequestContext
from metis.errors import WireFormatError
from metis.ids import ToolIdMap

SESSION = "sess_value_depth"


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    node = value
    for _ in range(levels - 1):
        node["a"] = {}
        node = node["a"]
    return value


def _reply(tool_input: dict[str, Any], *, usage: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "lookup", "input": tool_input}],
        "stop_reason": "tool_use",
    }
    if usage:
        body["usage"] = {"input_tokens": 3, "output_tokens": 4}
    return body


def _context() -> RequestContext:
    return RequestContext(
        session_id=SESSION, model="anthropic:claude-sonnet-4-6", tool_ids=ToolIdMap(SESSION)
    )


@pytest.mark.parametrize("usage", [True, False], ids=["with usage", "usage estimated"])
def test_a_tool_input_past_the_bound_is_a_typed_error_at_its_path(usage: bool) -> None:
    with pytest.raises(WireFormatError) as caught:
        adapters.get("anthropic").from_wire_response(_reply(_deep(300), usage=usage), _context())
    assert caught.value.path == "content[0].input"
    assert str(MAX_VALUE_DEPTH) in caught.value.message


def test_a_tool_input_at_the_bound_is_read_and_hashes() -> None:
    from metis import message_hash

    message = adapters.get("anthropic").from_wire_response(
        _reply(_deep(MAX_VALUE_DEPTH), usage=False), _context()
    )
    assert len(message_hash(message)) == 64


def test_an_imported_history_is_bounded_too() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_01", "name": "f", "input": _deep(300)}],
            },
        ],
    }
    with pytest.raises(WireFormatError):
        adapters.get("anthropic").from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
