"""Fork (issue 19): a new session that continues from an earlier message of another.

The fork holds the parent's history up to and including the fork point under fresh
message and tool ids (both are keys of the whole store), records where it came from, and
carries the tool id map entries of the calls it copied: replayed to a provider, the fork
sends byte for byte what the parent's prefix sends. Store-level cases run on SQLite and
PostgreSQL alike; the client and CLI cases use recorded traffic.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis import adapters
from metis.adapters import AdapterOptions
from metis.canonical import message_hash
from metis.client import Client
from metis.errors import MessageNotFoundError
from metis.ops import ForkOrigin, fork_origin, fork_session
from metis.store import Store, ToolCallStatus, open_store
from metis_schema.v3 import Message, Role, ToolResultBlock, ToolUseBlock

from tests.support.cli_support import imported, run
from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body
from tests.support.store_support import BACKENDS, conversation, new_target

ANTHROPIC = PROVIDERS[0]


def tool_ids(messages: list[Message]) -> list[str]:
    """Every tool id the messages name, in order (uses, results, parent links)."""
    out: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                out.append(block.id)
            elif isinstance(block, ToolResultBlock):
                out.append(block.tool_use_id)
        if message.metadata.parent_tool_use_id:
            out.append(message.metadata.parent_tool_use_id)
    return out


def wire(store: Store, session_id: str, messages: list[Message], model: str) -> str:
    options = AdapterOptions(
        model=model, session_id=session_id, tool_ids=store.load_tool_ids(session_id), workspace=Path.cwd()
    )
    provider = model.split(":", 1)[0]
    return json.dumps(adapters.get(provider).to_wire(messages, (), options), sort_keys=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fork_copies_the_prefix_under_new_ids_and_records_its_origin(backend: str, tmp_path: Path) -> None:
    with open_store(new_target(backend, tmp_path)) as store:
        parent = store.create_session(str(tmp_path), active_model="anthropic:claude-sonnet-4-6").id
        store.append_many(conversation(parent, 3))
        history = store.load_session(parent)
        at = history[6]  # the second turn's tool result

        fork = fork_session(store, parent, at=at.id)
        copied = store.load_session(fork.id)

        assert fork_origin(store.get_session(fork.id)) == ForkOrigin(parent, at.id)
        assert fork_origin(store.get_session(parent)) is None
        assert store.get_session(fork.id).active_model == "anthropic:claude-sonnet-4-6"
        assert len(copied) == 7 and len(store.load_session(parent)) == len(history)  # parent unchanged
        assert not {m.id for m in copied} & {m.id for m in history}
        old, new = tool_ids(history[:7]), tool_ids(copied)
        assert len(new) == len(old) and not set(new) & set(old)
        # One new id per old one, used consistently by the use, its result and the link.
        assert len(set(zip(old, new, strict=True))) == len(set(old)) == len(set(new))
        for a, b in zip(history[:7], copied, strict=True):
            assert (a.role, a.created_at, a.metadata.usage) == (b.role, b.created_at, b.metadata.usage)
            assert message_hash(a) != message_hash(b)  # new ids: a different message
        rows = store.tool_calls(fork.id)
        assert [r.status for r in rows] == [ToolCallStatus.succeeded] * 2
        assert {r.message_id for r in rows} <= {m.id for m in copied}


def test_fork_of_a_tool_loop_replays_with_the_parents_provider_ids(store: Store, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    fake = FakeTime()
    with Client(
        store, transport=provider.transport(), api_keys=KEYS, sleep=fake.sleep, clock=fake.clock
    ) as client:
        session = client.session(ANTHROPIC.model, workspace=tmp_path)
        reply = session.send("Weather in two cities?")
        for n, block in enumerate(b for b in reply.content if isinstance(b, ToolUseBlock)):
            session.add_tool_result(block.id, f"result-{n}")
        history = session.messages()
        forked = session.fork(at=history[-1].id)
        assert forked.id != session.id and type(forked) is type(session)
        fork_history = forked.messages()
        assert len(fork_history) == len(history) == 4

        # The provider ids the parent's map bound come along, bound to the new tool ids.
        assert len(store.load_tool_ids(forked.id)) == len(store.load_tool_ids(session.id)) > 0
        assert wire(store, forked.id, fork_history, ANTHROPIC.model) == wire(
            store, session.id, history, ANTHROPIC.model
        )
        forked.send()  # the fork goes on by itself; the parent's last message is unchanged
    assert provider.body(1)["messages"][-1]["content"][0]["type"] == "tool_result"
    assert len(store.load_session(forked.id)) == 5 and len(store.load_session(session.id)) == 4


def test_fork_at_a_message_of_another_session_creates_nothing(store: Store, tmp_path: Path) -> None:
    a = store.create_session(str(tmp_path)).id
    b = store.create_session(str(tmp_path)).id
    store.append_many(conversation(a, 1))
    store.append_many(conversation(b, 1))
    foreign = store.load_session(b)[0].id
    before = len(store.list_sessions())
    with pytest.raises(MessageNotFoundError, match="no message") as caught:
        fork_session(store, a, at=foreign)
    assert caught.value.message_id == foreign
    assert len(store.list_sessions()) == before


def test_metis_fork_on_imported_traffic(tmp_path: Path) -> None:
    from tests.cli.test_cli import ANTHROPIC_BODY

    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(ANTHROPIC_BODY))
    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    (session,) = imported(runner, db, "anthropic", path)

    result = run(runner, "--db", db, "fork", session, "--at", "3")
    assert result.exit_code == 0, result.output
    fork = result.stdout.strip()
    assert fork.startswith("sess_") and fork != session
    assert f"forked {session} at #3" in result.stderr
    assert "4 message(s), 1 tool id binding(s) carried" in result.stderr
    with Store.open(db) as store:
        parent = store.load_session(session)
        copied = store.load_session(fork)
        assert [m.role for m in copied] == [Role.system, Role.user, Role.assistant, Role.tool]
        assert fork_origin(store.get_session(fork)) == ForkOrigin(session, parent[3].id)
        by_id = run(runner, "--db", db, "fork", session, "--at", parent[0].id)
        assert by_id.exit_code == 0, by_id.stderr
        assert "1 message(s)" in by_id.stderr
        ambiguous = run(runner, "--db", db, "fork", session, "--at", parent[0].id[:6])
        assert ambiguous.exit_code == 1 and "give more of the id" in ambiguous.stderr

    shown = run(runner, "--db", db, "show", fork)
    assert f"forked     from {session} at message {parent[3].id}" in shown.stdout
    as_json = json.loads(run(runner, "--db", db, "show", fork, "--json").stdout)
    assert (as_json["parent_session_id"], as_json["fork_message_id"]) == (session, parent[3].id)
    listed = run(runner, "--db", db, "sessions").stdout
    assert listed.count("⑂ ") == 2  # both forks, each under its parent's short id

    missing = run(runner, "--db", db, "fork", session, "--at", "99")
    assert missing.exit_code == 1 and "no #99" in missing.stderr


def test_fork_of_imported_chat_keeps_each_calls_raw_argument_text(store: Store, tmp_path: Path) -> None:
    """Chat keeps a call's arguments text as the provider wrote it (spacing, key order) in
    provider_raw under the call's canonical id: the fork's copy, under a new id, still sends
    that text byte for byte, not a re-serialization."""
    raw = '{ "city":  "Paris", "unit" : "C" }'
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": raw}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
        ],
    }
    parent = store.create_session(str(tmp_path), active_model="openai:gpt-4o").id
    tool_map = store.load_tool_ids(parent)
    imported_request = adapters.get("openai").from_wire_request(body, session_id=parent, tool_ids=tool_map)
    store.append_many(list(imported_request.messages))
    store.save_tool_ids(parent, tool_map)
    history = store.load_session(parent)

    fork = fork_session(store, parent, at=history[-1].id)
    copied = store.load_session(fork.id)

    assert tool_ids(copied)[0] != tool_ids(history)[0]
    sent = json.loads(wire(store, fork.id, copied, "openai:gpt-4o"))
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == raw
    assert wire(store, fork.id, copied, "openai:gpt-4o") == wire(store, parent, history, "openai:gpt-4o")
