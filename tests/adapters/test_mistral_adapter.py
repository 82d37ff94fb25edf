"""Mistral as a Chat Completions dialect row: goldens and what the row changes.

Goldens: every wire input under tests/golden/mistral/ (built through the `mistralai` SDK's
response and chunk models, in the shapes of Mistral's API reference) is read and compared
with the expected output beside it; streams also split anywhere. Behaviour: 9-character
alphanumeric tool call ids minted through the session's ToolIdMap for calls made
elsewhere, Magistral's thinking parts read and sent back to the same model only, the
`any` tool choice, the flat error envelope, and malformed thinking parts as
WireFormatErrors at their paths.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.assembly import RequestContext
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, MessageStatus, Role, StopReason

from tests.support import golden
from tests.support.contracts import mistral as contract
from tests.support.contracts import openai as openai_contract
from tests.support.messages import build_message
from tests.support.openai_chat_support import (
    SESSION,
    canonical,
    chunkings,
    context,
    events_document,
    fixed_tool_ids,
    import_document,
    recorded,
)

__all__ = ["fixed_tool_ids"]

PROVIDER = "mistral"
MAGISTRAL = "mistral:magistral-medium-latest"
MEDIUM = "mistral:mistral-medium-latest"
ADAPTER = adapters.get(PROVIDER)
_NINE = re.compile(r"[a-zA-Z0-9]{9}")


def model(name: str) -> str:
    return MEDIUM if "text" in name else MAGISTRAL


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "response"))
def test_reply_golden(name: str, fixed_tool_ids: None) -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, name), context(model(name)))
    golden.check(PROVIDER, golden.expected_name(name), canonical(message))
    assert message.metadata.status == MessageStatus.complete


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "stream"))
def test_stream_events_golden(name: str, fixed_tool_ids: None) -> None:
    data = recorded(PROVIDER, name)
    events = events_document(list(ADAPTER.stream_response([data], context(model(name)))))
    golden.check(PROVIDER, golden.expected_name(name), events)
    for how, pieces in chunkings(data).items():
        split = list(ADAPTER.stream_response(pieces, context(model(name), ToolIdMap(SESSION))))
        assert [{k: v for k, v in e.items() if k != "id"} for e in events_document(split)] == [
            {k: v for k, v in e.items() if k != "id"} for e in events
        ], how


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "request"))
def test_request_import_golden(name: str, fixed_tool_ids: None) -> None:
    body = recorded(PROVIDER, name)
    contract.check_request(body)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    golden.check(PROVIDER, golden.expected_name(name), import_document(imported))
    again = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again)
    if name == "request_prefix.json":  # the prefill's `prefix: true` is its meaning: written back
        assert again == body
        assert imported.dropped == []
        return
    # the assistant turn (thinking part, text, Mistral's own call id) replays as it was
    assert again["messages"][2] == body["messages"][2]
    assert again["messages"][3]["tool_call_id"] == body["messages"][3]["tool_call_id"]
    assert again["tool_choice"] == body["tool_choice"] == "any"


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "error"))
def test_error_golden(name: str) -> None:
    golden.check_error(PROVIDER, name)


def test_magistral_thinking_is_a_thinking_block_and_goes_back_to_the_same_model_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = ToolIdMap(SESSION)
    reply = ADAPTER.from_wire_response(
        contract.response_fixture(), RequestContext(session_id=SESSION, model=MAGISTRAL, tool_ids=ids)
    )
    assert [b.type for b in reply.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert reply.metadata.stop_reason == StopReason.tool_use
    user = _message(Role.user, [{"type": "text", "text": "weather?"}])
    body = ADAPTER.to_wire(
        [user, reply], [], AdapterOptions(model=MAGISTRAL, session_id=SESSION, tool_ids=ids)
    )
    contract.check_request(body)
    assistant = body["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": [{"type": "text", "text": reply.content[0].text}],  # type: ignore[union-attr]
    }
    assert [c["id"] for c in assistant["tool_calls"]] == ["D681PevKs", "Xb3kPq9Lm"]  # its own ids replay
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        other = ADAPTER.to_wire(
            [user, reply], [], AdapterOptions(model=MEDIUM, session_id=SESSION, tool_ids=ids)
        )
    contract.check_request(other)
    assert other["messages"][1]["content"] == "Checking both cities now."
    assert [r.block_type for r in caplog.records if hasattr(r, "block_type")] == ["thinking"]  # type: ignore[attr-defined]


def test_model_length_is_a_context_window_exceeded_stop_and_a_thinking_signature_is_kept() -> None:
    """Issue 30 item 7: `model_length` said the context was full (not "other"); a thinking
    chunk's `signature` is kept on the reply and the stream, and sent back to the same model."""
    name = "response_thinking_signed_model_length.json"
    reply = ADAPTER.from_wire_response(recorded(PROVIDER, name), context(MAGISTRAL))
    assert reply.metadata.stop_reason == StopReason.context_window_exceeded
    assert reply.content[0].signature == "c2lnbmF0dXJlLW1hZ2lzdHJhbC0x"  # type: ignore[union-attr]
    streamed = ADAPTER.assemble_stream(
        [recorded(PROVIDER, "stream_thinking_signed_model_length.sse")], context(MAGISTRAL)
    )
    assert streamed.metadata.stop_reason == StopReason.context_window_exceeded
    assert streamed.content[0].signature == "c2lnbmF0dXJlLW1hZ2lzdHJhbC0x"  # type: ignore[union-attr]
    user = _message(Role.user, [{"type": "text", "text": "Summarise."}])
    ask = _message(Role.user, [{"type": "text", "text": "Go on."}])
    body = ADAPTER.to_wire(
        [user, streamed, ask],
        [],
        AdapterOptions(model=MAGISTRAL, session_id=SESSION, tool_ids=ToolIdMap(SESSION)),
    )
    contract.check_request(body)
    assert body["messages"][1]["content"][0]["signature"] == "c2lnbmF0dXJlLW1hZ2lzdHJhbC0x"


def test_a_trailing_assistant_message_is_a_prefix_and_one_from_elsewhere_is_marked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 30 item 7: a conversation ending with an assistant message (Anthropic's prefill)
    goes to Mistral with `prefix: true`, which Mistral needs to accept it; an assistant turn
    that awaits tool results is no prefix."""
    anthropic = adapters.get("anthropic")
    imported = anthropic.from_wire_request(
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 50,
            "messages": [
                {"role": "user", "content": "Name a colour."},
                {"role": "assistant", "content": "The colour is"},
            ],
        },
        session_id=SESSION,
        tool_ids=ToolIdMap(SESSION),
    )
    options = imported.options
    options.model = MEDIUM
    options.provider_options.clear()
    body = ADAPTER.to_wire(imported.messages, imported.tools, options)
    contract.check_request(body)
    assert body["messages"][-1] == {"role": "assistant", "content": "The colour is", "prefix": True}
    assert "prefix" not in body["messages"][0]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        again = ADAPTER.from_wire_request(
            {**body, "messages": [*body["messages"], {"role": "user", "content": "More."}]},
            session_id=SESSION,
            tool_ids=ToolIdMap(SESSION),
        )
    assert [d["path"] for d in again.dropped] == ["messages[1].prefix"]  # not the last: says more


def test_foreign_tool_ids_become_nine_alphanumerics_through_the_session_map(fixed_tool_ids: None) -> None:
    ids = ToolIdMap(SESSION)
    openai = adapters.get("openai")
    reply = openai.from_wire_response(
        openai_contract.response_fixture(),
        RequestContext(session_id=SESSION, model="openai:gpt-4.1", tool_ids=ids),
    )
    results = [
        _message(
            Role.tool,
            [{"type": "tool_result", "tool_use_id": b.id, "content": [{"type": "text", "text": "ok"}]}],
            parent_tool_use_id=b.id,
        )
        for b in reply.content
        if b.type == "tool_use"
    ]
    history = [_message(Role.user, [{"type": "text", "text": "hi"}]), reply, *results]
    body = ADAPTER.to_wire(history, [], AdapterOptions(model=MEDIUM, session_id=SESSION, tool_ids=ids))
    golden.check(PROVIDER, "conversation.request.golden.json", body)
    contract.check_request(body)
    calls = [c["id"] for c in body["messages"][1]["tool_calls"]]
    assert all(_NINE.fullmatch(c) for c in calls) and len(set(calls)) == 2
    assert [m["tool_call_id"] for m in body["messages"][2:]] == calls
    again = ADAPTER.to_wire(history, [], AdapterOptions(model=MEDIUM, session_id=SESSION, tool_ids=ids))
    assert again == body  # deterministic: the map remembers what it minted
    back = openai.to_wire(
        history, [], AdapterOptions(model="openai:gpt-4.1", session_id=SESSION, tool_ids=ids)
    )
    assert back["messages"][1]["tool_calls"][0]["id"] == "call_Nb2Vc7Xz4Lk9Jh1Gf6Ds3Aq8W"


@pytest.mark.parametrize(
    ("choice", "wire"), [("any", "any"), ("required", "any"), ("none", "none"), ("auto", "auto")]
)
def test_tool_choice_by_meaning(choice: str, wire: str) -> None:
    options = AdapterOptions(
        model=MEDIUM, session_id=SESSION, tool_ids=ToolIdMap(SESSION), tool_choice=choice
    )
    body = ADAPTER.to_wire([_message(Role.user, [{"type": "text", "text": "hi"}])], [], options)
    assert body["tool_choice"] == wire
    named = AdapterOptions(
        model=MEDIUM, session_id=SESSION, tool_ids=ToolIdMap(SESSION), tool_choice="lookup"
    )
    body = ADAPTER.to_wire([_message(Role.user, [{"type": "text", "text": "hi"}])], [], named)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}


def test_flat_error_envelope_and_usage() -> None:
    status, body = contract.error_fixture()
    error = ADAPTER.parse_error(body, status)
    assert error.error_type == "invalid_request_message_order" and not error.retryable
    assert "length 9" in error.message
    reply = ADAPTER.from_wire_response(contract.response_fixture(), context(MAGISTRAL))
    usage = reply.metadata.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (96, 41)


@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "thinking", "thinking": "plain"}, "choices[0].message.content[0].thinking"),
        (
            {"type": "thinking", "thinking": [{"type": "text", "text": 3}]},
            "choices[0].message.content[0].thinking[0].text",
        ),
    ],
)
def test_malformed_thinking_parts_name_their_path(part: dict[str, Any], path: str) -> None:
    body = contract.response_fixture()
    body["choices"][0]["message"]["content"] = [part]
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_response(body, context(MAGISTRAL))
    assert caught.value.path == path


def test_other_dialects_keep_a_thinking_key_as_an_unknown_part() -> None:
    body = json.loads(json.dumps(contract.response_fixture()))
    body["choices"][0]["message"]["content"][0]["thinking"] = "plain"
    message = adapters.get("openai").from_wire_response(body, context("openai:gpt-4.1"))
    assert [b.type for b in message.content][:1] == ["text"]


def _message(role: Role, content: list[dict[str, Any]], **metadata: Any) -> Message:
    return build_message(role, content, session_id=SESSION, created_at="2026-05-08T12:00:00Z", **metadata)


def test_convert_between_mistral_and_responses_on_the_command_line() -> None:
    from click.testing import CliRunner
    from metis.cli import cli

    path = str(golden.folder(PROVIDER) / "request_tools.json")
    runner = CliRunner()
    result = runner.invoke(cli, ["convert", "--from", "mistral", "--to", "responses", path])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert [i["type"] for i in body["input"] if i["type"] != "message"] == [
        "function_call",
        "function_call_output",
    ]
    assert (
        "goes back only to the model and endpoint that produced it" in result.stderr
    )  # Magistral's thinking stays home
    wrong = runner.invoke(cli, ["convert", "--from", "openai", "--to", "responses", path])
    assert wrong.exit_code == 2 and "Mistral `thinking` part" in wrong.output
