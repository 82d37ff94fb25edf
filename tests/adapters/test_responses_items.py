"""Responses items of the provider's own tools that stand alone (issue 30 item 3):
`mcp_list_tools`, `mcp_approval_request` / `mcp_approval_response`, `tool_search_call` /
`tool_search_output`.

Each is a canonical block with its meaning (a server_tool_use: the listing, the call
awaiting approval, the search; a server_tool_result: the listing's tools, the decision,
the tools a search loaded), kept whole and sent back as itself to the same model, with no
WARN; to any other provider the blocks are dropped with the five-field WARN (no other
provider has these items: Anthropic's MCP connector has no approval step, its tool search
result is its own block). Goldens: `response_built_in_mcp_tool_search.json` (and its
stream), `request_built_in_items.json`, `request_built_in_mcp_approval.json`, in the
shapes of OpenAI's remote MCP and tool search guides (the `dmcp` example) and checked by
the openai SDK types (tests/golden/responses/_sources.md); the goldens' canonical forms
are checked by test_responses_adapter.py's golden tests, whole, streamed and split.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, Role, StopReason, TextBlock

from tests.support import golden
from tests.support.contracts import responses as contract
from tests.support.messages import build_message
from tests.support.openai_chat_support import SESSION, context, fixed_tool_ids, recorded

__all__ = ["fixed_tool_ids"]

RESPONSES = adapters.get("responses")
MODEL = "responses:gpt-5"
ITEM_TYPES = {
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "tool_search_call",
    "tool_search_output",
}
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")


def _body(name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(golden.read_input("responses", name))
    return found


def _items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i.get("type") in ITEM_TYPES]


def _user(text: str) -> Message:
    return build_message(
        Role.user, [TextBlock(type="text", text=text)], session_id=SESSION, created_at=golden_time()
    )


def golden_time() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def test_a_reply_with_the_items_reads_them_by_meaning_and_awaits_the_approval() -> None:
    body = recorded("responses", "response_built_in_mcp_tool_search.json")
    contract.check_response(body, open_responses=False)
    message = RESPONSES.from_wire_response(body, context(MODEL))
    kinds = [(b.type, getattr(b, "name", None)) for b in message.content]
    assert kinds == [
        ("server_tool_use", "mcp_list_tools"),
        ("server_tool_result", "mcp_list_tools"),
        ("server_tool_use", "tool_search"),
        ("server_tool_result", "tool_search"),
        ("text", None),
        ("server_tool_use", "mcp_approval_request"),
    ]
    assert message.metadata.stop_reason is StopReason.tool_use  # the approval ends the turn


def test_the_reply_goes_back_to_its_model_as_its_items_without_a_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = recorded("responses", "response_built_in_mcp_tool_search.json")
    reply = RESPONSES.from_wire_response(body, context(MODEL))
    history = [_user("Roll 2d4+1."), reply, _user("Approved.")]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        sent = RESPONSES.to_wire(
            history, [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
        )
    assert caplog.records == []
    assert _items(sent["input"]) == _items(body["output"])


def test_another_provider_gets_the_text_and_a_five_field_warn_per_item_block(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = recorded("responses", "response_built_in_mcp_tool_search.json")
    reply = RESPONSES.from_wire_response(body, context(MODEL))
    history = [_user("Roll 2d4+1."), reply, _user("Approved.")]
    options = AdapterOptions(
        model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        sent = adapters.get("anthropic").to_wire(history, [], options)
    assistant = sent["messages"][1]["content"]
    assert [b["type"] for b in assistant] == ["text"]
    dropped = [r for r in caplog.records if getattr(r, "message_id", None) == reply.id]
    assert len(dropped) == 5  # every server block but the text
    for record in dropped:
        assert all(getattr(record, name, None) for name in FIVE)


def test_an_imported_history_of_items_replays_them_exactly() -> None:
    body = _body("request_built_in_items.json")
    contract.sdk_validate(body)
    imported = RESPONSES.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.dropped == []
    again = RESPONSES.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again, open_responses=False)
    assert _items(again["input"]) == _items(body["input"])


def test_an_approval_continuing_a_response_imports_named_and_replays_exactly() -> None:
    body = _body("request_built_in_mcp_approval.json")
    contract.sdk_validate(body)
    imported = RESPONSES.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.dropped == []
    (message,) = imported.messages
    assert message.metadata.continues is not None
    assert message.metadata.continues.response_id == body["previous_response_id"]
    (result,) = message.content
    assert result.type == "server_tool_result"
    assert result.tool_use_id == body["input"][0]["approval_request_id"]
    again = RESPONSES.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again, open_responses=False)
    assert again["input"] == body["input"]
    assert again["previous_response_id"] == body["previous_response_id"]


def test_file_annotations_are_canonical_file_citations_read_without_a_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`file_citation`, `container_file_citation` and `file_path` are v3 file citations
    (this provider's file ids), no longer raw annotations with a WARN; the file search's
    results keep each file id as their search_result's `source`."""
    body = recorded("responses", "response_built_in_file_citations.json")
    contract.check_response(body, open_responses=False)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        message = RESPONSES.from_wire_response(body, context(MODEL))
    assert caplog.records == []
    raw = message.metadata.provider_raw or {}
    assert "annotations" not in raw
    texts = [b for b in message.content if isinstance(b, TextBlock)]
    cited = [c.model_dump(exclude_none=True) for b in texts for c in b.citations or ()]
    wire = [
        a for i in body["output"] if i["type"] == "message" for p in i["content"] for a in p["annotations"]
    ]
    assert [(c["file_id"], c.get("filename"), c.get("container_id")) for c in cited] == [
        (a["file_id"], a.get("filename"), a.get("container_id")) for a in wire
    ]
    assert all(c["provider"] == "responses" and c["type"] == "file" for c in cited)
    result = message.content[1]
    assert result.type == "server_tool_result"
    assert result.content[0].source == body["output"][0]["results"][0]["file_id"]  # type: ignore[union-attr]


def test_file_citations_to_anthropic_go_with_one_warn_naming_them(caplog: pytest.LogCaptureFixture) -> None:
    body = recorded("responses", "response_built_in_file_citations.json")
    reply = RESPONSES.from_wire_response(body, context(MODEL))
    history = [_user("What is deep research?"), reply, _user("Thanks.")]
    options = AdapterOptions(
        model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        sent = adapters.get("anthropic").to_wire(history, [], options)
    assert all("citations" not in b for b in sent["messages"][1]["content"])
    cites = [r for r in caplog.records if str(getattr(r, "block_type", "")).startswith("text/citation")]
    assert [r.block_type for r in cites] == ["text/citation:file"]  # type: ignore[attr-defined]
    assert cites[0].message_id == reply.id  # type: ignore[attr-defined]


def test_additional_tools_are_request_tools_and_their_item_goes_back_where_it_stood(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`additional_tools` (tools made available at that item): canonical tools of the
    request, so another provider is offered them by meaning; to Responses the item goes
    back as it came, before the same message, its tools not declared twice."""
    body = _body("request_additional_tools.json")
    contract.sdk_validate(body)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        imported = RESPONSES.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert caplog.records == [] and imported.dropped == []
    assert [(t.name, t.kind.value if t.kind else None) for t in imported.tools] == [
        ("get_weather", None),
        ("get_forecast", None),
        ("web_search", "web_search"),
    ]
    again = RESPONSES.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again, open_responses=False)
    # the item exactly, at its place between the two user turns (written as input parts)
    assert [i.get("type", "message") for i in again["input"]] == ["message", "additional_tools", "message"]
    assert again["input"][1] == body["input"][1]
    assert again["tools"] == body["tools"]
    options = AdapterOptions(
        model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    sent = adapters.get("anthropic").to_wire(imported.messages, imported.tools, options)
    assert [t["name"] for t in sent["tools"]] == ["get_weather", "get_forecast", "web_search"]


def test_a_stream_whose_response_names_no_text_model_ends_without_an_untyped_error() -> None:
    """The wire declares a response's `id` and `model` as anything: one that is not text is
    not named on the closing event (a pydantic error escaped before; found by the shape
    fuzzer)."""
    response = {"id": ["not", "text"], "model": [], "status": "completed", "output": []}
    events = [{"type": "response.completed", "response": response}]
    message = RESPONSES.assemble_stream(contract.sse(events), context(MODEL))
    assert message.metadata.status.value == "complete"
