"""A Responses `previous_response_id` continuation is imported once.

The gateway writes the stored history in front of the client's input and imports the
whole request once: the messages the history makes are told from the client's by the
input items they were read from (`WireImport.paths`), not by importing the history again
alone. Real parts as in tests/gateway/test_gateway_reads.py: the official OpenAI SDK over
loopback HTTP, the scripted upstream, a real SQLite store.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from metis import adapters
from metis.gateway import SESSION_HEADER
from metis.gateway.exchange import _PROBE_SESSION
from metis.store import open_store
from metis_schema.v3 import Message

from tests.support.gateway_support import Gateway, ScriptedUpstream
from tests.support.gateway_support import openai_client as _openai

SONNET = "anthropic:claude-sonnet-4-6"
TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
]


def _blocks(message: Message) -> str:
    """A stored message as `role:block,block` (its block types)."""
    return f"{message.role.value}:" + ",".join(block.type for block in message.content)


def _text(message: Message) -> str:
    """The text a USER or TOOL message carries (a tool result's, for TOOL)."""
    block: Any = message.content[0]
    if block.type == "tool_result":
        block = block.content[0]
    return str(block.text)


def test_a_continuation_is_imported_once_and_stores_its_new_turns(
    upstream: ScriptedUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stored conversation with instructions, reasoning and a tool call, continued by
    # `previous_response_id` three times: the tool's output, a string input after the
    # reply to it, and another input after that same reply (its fork point: the session
    # goes on after it, so the continuation is stored in a fork). Each continuation
    # imports the Responses request once, and stores exactly its new turns after the
    # stored history.
    store_path = str(tmp_path / "gateway.sqlite3")
    responses = adapters.get("responses")
    from_wire_request: Callable[..., Any] = responses.from_wire_request
    imports: list[str] = []

    def counted(body: Any, **kw: Any) -> Any:
        if kw["session_id"] != _PROBE_SESSION:  # a continuation's (not a fingerprint probe's)
            imports.append(kw["session_id"])
        return from_wire_request(body, **kw)

    monkeypatch.setattr(responses, "from_wire_request", counted)
    served = Gateway(upstream, store_path)
    try:
        upstream.reply("/v1/messages", "anthropic/response_thinking.json")
        for _ in range(3):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        opened = client.responses.with_raw_response.create(
            model=SONNET, instructions="Answer briefly.", input="Weather in Paris?", tools=TOOLS
        )
        session = opened.headers[SESSION_HEADER]
        first = opened.parse()
        call = next(item for item in first.output if item.type == "function_call")
        assert imports == []
        second = client.responses.with_raw_response.create(
            model=SONNET,
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "14 °C"}],
            tools=TOOLS,
        )
        third = client.responses.with_raw_response.create(
            model=SONNET, previous_response_id=second.parse().id, input="And tomorrow?", tools=TOOLS
        )
        forked = client.responses.with_raw_response.create(
            model=SONNET,
            previous_response_id=second.parse().id,
            input=[{"role": "user", "content": [{"type": "input_text", "text": "And in Lyon?"}]}],
            tools=TOOLS,
        )
    finally:
        served.close()
    fork = forked.headers[SESSION_HEADER]
    assert second.headers[SESSION_HEADER] == third.headers[SESSION_HEADER] == session != fork
    assert imports == [session, session, fork], "each continuation imported once"

    # what the upstream was sent: the whole conversation each time, the history once
    sent = [body for path, body in upstream.received if path == "/v1/messages"]
    assert [[turn["role"] for turn in body["messages"]] for body in sent] == [
        ["user"],
        ["user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "user"],
    ]
    with open_store(store_path) as store:
        assert store.get_session(fork).parent_session_id == session
        stored = store.load_session(session)
        branch = store.load_session(fork)
    assert [_blocks(m) for m in stored] == [
        "system:text",
        "user:text",
        "assistant:thinking,redacted_thinking,text,tool_use",
        "tool:tool_result",
        "assistant:server_tool_use,server_tool_result,text",
        "user:text",
        "assistant:server_tool_use,server_tool_result,text",
    ]
    assert [_text(m) for m in stored[:2]] == ["Answer briefly.", "Weather in Paris?"]
    assert [_text(stored[3]), _text(stored[5])] == ["14 °C", "And tomorrow?"]
    tool_use: Any = stored[2].content[3]
    assert stored[3].content[0].tool_use_id == tool_use.id  # type: ignore[union-attr]
    assert stored[3].metadata.parent_tool_use_id == tool_use.id
    assert [_blocks(m) for m in branch] == [_blocks(m) for m in stored]
    assert [m.content for m in branch[:2]] == [m.content for m in stored[:2]], "the history as stored"
    assert [m.content for m in branch[4:5]] == [m.content for m in stored[4:5]]
    assert _text(branch[5]) == "And in Lyon?"
    renamed: Any = branch[2].content[3]  # a fork's copy names its own call id (`ops.fork`)
    assert branch[3].content[0].tool_use_id == renamed.id != tool_use.id  # type: ignore[union-attr]
    assert all(m.session_id == fork for m in branch)


def test_a_continuation_naming_instructions_stores_the_history_once(
    upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    # A stored conversation with no instructions, continued by a request that names some:
    # the request's `instructions` read first is not one of the client's turns, and the
    # stored reply after it is not taken for one either (counting the history by its
    # import alone stored that reply again, and sent it twice).
    store_path = str(tmp_path / "gateway.sqlite3")
    served = Gateway(upstream, store_path)
    try:
        for _ in range(2):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        first = client.responses.with_raw_response.create(model=SONNET, input="What happened?")
        client.responses.create(
            model=SONNET, previous_response_id=first.parse().id, input="And then?", instructions="Be brief."
        )
    finally:
        served.close()
    _, sent = upstream.received[-1]
    assert [turn["role"] for turn in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["system"] == "Be brief."  # the request's instructions reach the upstream
    with open_store(store_path) as store:
        stored = store.load_session(first.headers[SESSION_HEADER])
    # ... and are stored, as a system turn where the client's input starts
    assert [m.role.value for m in stored] == ["user", "assistant", "system", "user", "assistant"]
    assert _text(stored[2]) == "Be brief." and _text(stored[3]) == "And then?"


def test_a_continuation_changing_the_instructions_keeps_both_and_repeating_them_adds_none(
    upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    # Instructions a continuation repeats are the history's own (nothing new to store);
    # other instructions are stored and sent after the history's, which stay.
    store_path = str(tmp_path / "gateway.sqlite3")
    served = Gateway(upstream, store_path)
    try:
        for _ in range(3):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        first = client.responses.with_raw_response.create(
            model=SONNET, input="What happened?", instructions="Answer briefly."
        )
        second = client.responses.create(
            model=SONNET,
            previous_response_id=first.parse().id,
            input="And then?",
            instructions="Answer briefly.",
        )
        client.responses.create(
            model=SONNET, previous_response_id=second.id, input="Why?", instructions="Answer in French."
        )
    finally:
        served.close()
    _, sent = upstream.received[-1]
    assert sent["system"] == [
        {"type": "text", "text": "Answer briefly."},
        {"type": "text", "text": "Answer in French."},
    ]
    with open_store(store_path) as store:
        stored = store.load_session(first.headers[SESSION_HEADER])
    assert [m.role.value for m in stored] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "system",
        "user",
        "assistant",
    ]
    assert _text(stored[0]) == "Answer briefly." and _text(stored[5]) == "Answer in French."


def test_a_continuation_answering_a_call_at_a_fork_point(upstream: ScriptedUpstream, tmp_path: Path) -> None:
    # The client answers the same call twice, continuing the same response: the second
    # answer goes into a fork made at that response. The fork's copy of the call has an id
    # of its own (`ops.fork`), and the parent's bindings of it come along: the call id the
    # client was given still names it, and the upstream is sent the id it issued. (The
    # fork's map, written with its copied history, was not read back before the commit:
    # the answer was refused as answering no call.)
    store_path = str(tmp_path / "gateway.sqlite3")
    served = Gateway(upstream, store_path)
    try:
        upstream.reply("/v1/messages", "anthropic/response_thinking.json")
        for _ in range(2):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        opened = client.responses.with_raw_response.create(
            model=SONNET, input="Weather in Paris?", tools=TOOLS
        )
        first = opened.parse()
        call = next(item for item in first.output if item.type == "function_call")
        answers = []
        for output in ("14 °C", "15 °C"):
            answers.append(
                client.responses.with_raw_response.create(
                    model=SONNET,
                    previous_response_id=first.id,
                    input=[{"type": "function_call_output", "call_id": call.call_id, "output": output}],
                    tools=TOOLS,
                )
            )
    finally:
        served.close()
    session, fork = (answer.headers[SESSION_HEADER] for answer in answers)
    assert session == opened.headers[SESSION_HEADER] != fork
    sent = [body for path, body in upstream.received if path == "/v1/messages"][1:]
    issued = [
        (turn["content"][-1]["id"], body["messages"][2]["content"][0]["tool_use_id"])
        for body in sent
        for turn in body["messages"][1:2]
    ]
    assert issued[0] == issued[1] and issued[0][0] == issued[0][1], "the id Anthropic issued, both times"
    with open_store(store_path) as store:
        assert store.get_session(fork).parent_session_id == session
        branch = store.load_session(fork)
        carried = store.load_tool_ids(fork)
    assert [m.role.value for m in branch] == ["user", "assistant", "tool", "assistant"]
    assert _text(branch[2]) == "15 °C"
    copy: Any = branch[1].content[-1]
    assert branch[2].content[0].tool_use_id == copy.id  # type: ignore[union-attr]
    assert carried.provider_id(copy.id, "anthropic") == issued[0][0]
    assert carried.resolve_incoming("responses", call.call_id) == copy.id


def test_a_continuation_with_instructions_that_are_no_string_is_refused_naming_them(
    upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    served = Gateway(upstream, str(tmp_path / "gateway.sqlite3"))
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        first = client.responses.create(model=SONNET, input="What happened?")
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(
                model=SONNET,
                previous_response_id=first.id,
                input="And then?",
                instructions=7,  # type: ignore[arg-type]
            )
    finally:
        served.close()
    assert "instructions" in str(refused.value)
    assert len(upstream.received) == 1  # nothing sent for the refused request
