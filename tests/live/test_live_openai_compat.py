"""Live suite: a real OpenAI-compatible server (a local llama.cpp server, vLLM, OpenAI itself).

Skipped unless METIS_LIVE_OPENAI_BASE_URL is set (e.g. http://127.0.0.1:8765/v1).
METIS_LIVE_MODEL picks the model (default: "openai:" + the first id /models lists);
METIS_LIVE_API_KEY is sent as the Bearer key when the server wants one.

One session, in order: a plain exchange, a streamed one, a forced tool call answered with
a tool result, everything persisted and read back from a reopened store, then the same
history built for Anthropic: every tool id must resolve there too. llama.cpp servers issue
tool ids longer than OpenAI's 40-character limit; the ToolIdMap must keep the ids sent
back to the server consistent and within that limit.

The tool call is forced by naming the tool (`tool_choice` = the tool's name, sent as
`{"type": "function", "function": {"name": ...}}`): OpenAI also accepts "required", but
llama-cpp-python's function-calling chat handler supports only the named form.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.canonical import messages_equal
from metis.client import Client, Session
from metis.store import Store
from metis_schema.v3 import (
    Message,
    MessageStatus,
    Role,
    SideEffects,
    StreamEvent,
    TextDeltaEvent,
    ToolDefinition,
    ToolUseBlock,
)

BASE_URL = os.environ.get("METIS_LIVE_OPENAI_BASE_URL", "")
API_KEY = os.environ.get("METIS_LIVE_API_KEY") or None
TIMEOUT = float(os.environ.get("METIS_LIVE_TIMEOUT", "300"))

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not BASE_URL, reason="set METIS_LIVE_OPENAI_BASE_URL to run the live suite"),
]

READ_FILE = ToolDefinition(
    name="read_file",
    description="Read a text file from the workspace and return its contents.",
    input_schema={
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Workspace-relative path"}},
        "required": ["path"],
    },
    side_effects=SideEffects.read,
)


def _first_model() -> str:
    headers = {"Authorization": f"Bearer {API_KEY}"} if API_KEY else {}
    listed = httpx.get(BASE_URL.rstrip("/") + "/models", headers=headers, timeout=30).json()
    return "openai:" + str(listed["data"][0]["id"])


@dataclass
class Live:
    """The live session shared, in order, by the tests of this module."""

    db: Path
    workspace: Path
    store: Store
    client: Client
    session: Session
    replies: list[Message] = field(default_factory=list)
    server_tool_ids: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    root = tmp_path_factory.mktemp("live")
    model = os.environ.get("METIS_LIVE_MODEL") or _first_model()
    store = Store.open(root / "live.sqlite3")
    client = Client(
        store, base_urls={"openai": BASE_URL}, api_keys={"openai": API_KEY}, timeout=TIMEOUT, max_retries=2
    )
    session = client.session(model, workspace=root, tools=[READ_FILE])
    yield Live(root / "live.sqlite3", root, store, client, session)
    client.close()
    store.close()


def _assert_reply(reply: Message) -> None:
    assert reply.role == Role.assistant
    assert reply.metadata.status == MessageStatus.complete
    assert reply.metadata.provider == "openai" and reply.metadata.usage is not None
    assert reply.metadata.usage.latency_ms > 0


def test_plain_exchange(live: Live) -> None:
    reply = live.session.send("Reply with one short sentence about the sea.", tools=[], max_tokens=48)
    _assert_reply(reply)
    live.replies.append(reply)


def test_streamed_exchange(live: Live) -> None:
    events: list[StreamEvent] = []
    reply = live.session.send(
        "Now one sentence about the sky.", tools=[], max_tokens=48, stream=True, on_event=events.append
    )
    _assert_reply(reply)
    assert any(isinstance(e, TextDeltaEvent) for e in events) or not reply.content[0].model_dump().get("text")
    assert live.store.load_session(live.session.id)[-1].metadata.status == MessageStatus.complete
    live.replies.append(reply)


def test_forced_tool_call_answered_with_a_result(live: Live) -> None:
    call_reply = live.session.send(
        "Use the read_file tool to read README.md.", tool_choice="read_file", max_tokens=96
    )
    _assert_reply(call_reply)
    calls = [b for b in call_reply.content if isinstance(b, ToolUseBlock)]
    assert calls and calls[0].name == "read_file"
    for call in calls:
        server_id = live.session.tool_ids.provider_id(call.id, "openai")
        assert server_id, "the server's tool id is recorded in the session's map"
        live.server_tool_ids[call.id] = server_id
        live.session.add_tool_result(call.id, "# metis\n\nCanonical LLM conversations across providers.")

    answer = live.session.send(max_tokens=64)
    _assert_reply(answer)
    live.replies.extend([call_reply, answer])

    # The ids sent back in the second request: the tool message matches its call, within 40 chars.
    for call in calls:
        sent = live.session.tool_ids.outgoing(call.id, "openai")
        assert len(sent) <= 40
        if len(live.server_tool_ids[call.id]) <= 40:
            assert sent == live.server_tool_ids[call.id]


def test_reload_then_continue_on_anthropic(live: Live) -> None:
    with Store.open(live.db) as again:
        loaded = again.load_session(live.session.id)
        tool_ids = again.load_tool_ids(live.session.id)
    in_memory = live.store.load_session(live.session.id)
    assert len(loaded) == len(in_memory) >= 8
    assert all(messages_equal(a, b) for a, b in zip(loaded, in_memory, strict=True))
    for reply in live.replies:
        assert any(messages_equal(reply, m) for m in loaded)
    recorded = {r.id: r.provider_id for r in live.store.tool_calls(live.session.id)}
    for canonical, server_id in live.server_tool_ids.items():
        assert tool_ids.resolve_incoming("openai", server_id) == canonical  # the server's id maps back
        assert recorded[canonical] == server_id  # and the tool_calls row keeps it

    options = AdapterOptions(
        model="sonnet", session_id=live.session.id, tool_ids=tool_ids, workspace=live.workspace
    )
    body: dict[str, Any] = adapters.get("anthropic").to_wire(loaded, [READ_FILE], options)
    uses = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    results = [
        b
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert uses and {u["id"] for u in uses} == {r["tool_use_id"] for r in results}
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]+", u["id"]) for u in uses)
    for canonical in live.server_tool_ids:
        assert tool_ids.outgoing(canonical, "anthropic") in {u["id"] for u in uses}
    try:
        from tests.support.contracts import anthropic as anthropic_contract
    except ImportError:  # the contract suite is not on the path when this file runs alone
        return
    anthropic_contract.check_request(body)
