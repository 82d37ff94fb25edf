"""The turns of a recorded request, as the importers build them (`assembly.imported_assistant`,
`assembly.imported_message`): each part built once, every message owning its own.

An imported ASSISTANT turn's usage is the one zero Usage (`no-usage`) that `make_usage`
makes for zero counts: made once and copied per message, not built and checked per turn
(issue 25). The models are mutable, so the copies must share nothing that can change: a
message edited after the import (a caller setting its latency, say) changes no other.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from metis import adapters
from metis.assembly import imported_message
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis.pricing import NO_USAGE, UNPRICED, make_usage
from metis.usage import TokenCounts
from metis_schema.v3 import ContentBlock, Message, Role, TextBlock

SESSION = "sess_imported_turns"

BODY: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "user", "content": "Read the router."},
        {
            "role": "assistant",
            "content": "Reading it.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"p":"r.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "def route(): ..."},
        {"role": "assistant", "content": "It routes."},
    ],
}


def _assistants() -> list[Message]:
    imported = adapters.get("openai").from_wire_request(BODY, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    return [m for m in imported.messages if m.role == Role.assistant]


def test_an_imported_turn_records_the_zero_usage_make_usage_makes() -> None:
    expected = make_usage(TokenCounts(), pricing_key=UNPRICED, latency_ms=0)
    for message in _assistants():
        usage = message.metadata.usage
        assert usage == expected
        assert usage is not None and usage.pricing_version == NO_USAGE and usage.cost_usd == 0


def test_each_imported_turn_owns_its_usage_and_routing() -> None:
    first, second = _assistants()
    assert first.metadata.usage is not second.metadata.usage
    assert first.metadata.routing is not second.metadata.routing
    routing_a, routing_b = first.metadata.routing, second.metadata.routing
    assert routing_a is not None and routing_b is not None
    assert routing_a.alternatives_considered is not routing_b.alternatives_considered
    # every value the shared zero Usage holds is immutable, so a shallow copy shares nothing
    usage = first.metadata.usage
    assert usage is not None
    assert all(isinstance(value, int | str | Decimal | type(None)) for _, value in usage), dict(usage)

    assert first.metadata.usage is not None and second.metadata.usage is not None
    first.metadata.usage.latency_ms = 1234
    routing_a.alternatives_considered.append("openai:gpt-4o-mini")
    assert second.metadata.usage.latency_ms == 0
    assert routing_b.alternatives_considered == []
    (third, _) = _assistants()
    assert third.metadata.usage is not None and third.metadata.usage.latency_ms == 0, "a later import"


def test_an_imported_turn_owns_its_content_list() -> None:
    content: list[ContentBlock] = [TextBlock(type="text", text="hi")]
    message = imported_message(SESSION, Role.user, content, provider="openai", path="messages[0]")
    content.append(TextBlock(type="text", text="added later"))
    assert [b.text for b in message.content if isinstance(b, TextBlock)] == ["hi"]


@pytest.mark.parametrize(
    ("metadata", "where"),
    [
        ({"parent_tool_use_id": "call_1"}, "metadata.parent_tool_use_id"),
        ({"routing_note": "x"}, "metadata.routing_note"),
    ],
)
def test_metadata_an_import_cannot_hold_is_a_typed_error_naming_the_field(
    metadata: dict[str, Any], where: str
) -> None:
    """The metadata is built with the message, in one validation: a value it refuses is a
    WireFormatError at the request's path, naming the metadata field (not an untyped error)."""
    with pytest.raises(WireFormatError) as caught:
        imported_message(
            SESSION,
            Role.user,
            [TextBlock(type="text", text="hi")],
            provider="openai",
            path="messages[3]",
            metadata=metadata,
        )
    assert caught.value.path == "messages[3]"
    assert where in str(caught.value)
