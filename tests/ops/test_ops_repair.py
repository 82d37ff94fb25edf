"""Repair (issue 19): a crash between a tool call and its result no longer blocks a session.

The crash is real traffic: a scripted provider answers with two tool calls and the
process "dies" before answering them. Repair stores one CANCELLED, is_error TOOL message
per open call, the store marks each call `cancelled`, a second repair adds nothing, and
the session can be sent again — by hand (`session.repair()`), automatically when asked
(`auto_repair`), or from the CLI (`metis repair`). Store-level cases run on SQLite and
PostgreSQL alike.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis.client import Client
from metis.errors import ClientError
from metis.ops import DEFAULT_REASON, open_calls, repair_session
from metis.store import Store, ToolCallStatus, open_store
from metis_schema.v3 import MessageStatus, Role, TextBlock, ToolResultBlock, ToolUseBlock

from tests.support.cli_support import ANTHROPIC_BODY, imported, run
from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body
from tests.support.store_support import BACKENDS, new_target, tool_call, tool_ids_of, tool_result, user

ANTHROPIC = PROVIDERS[0]


def crashed(store: Store, provider: ScriptedProvider, fake: FakeTime) -> tuple[Client, str, list[str]]:
    """A session whose reply asked for two tools, then nothing: the process died there."""
    client = Client(store, transport=provider.transport(), api_keys=KEYS, sleep=fake.sleep, clock=fake.clock)
    session = client.session(ANTHROPIC.model)
    reply = session.send("Weather in two cities?")
    calls = [b.id for b in reply.content if isinstance(b, ToolUseBlock)]
    assert len(calls) == 2 and len(store.unanswered_tool_calls(session.id)) == 2
    return client, session.id, calls


def test_repair_answers_each_open_call_once_and_cancels_it(store: Store) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    client, session_id, calls = crashed(store, provider, FakeTime())
    with client:
        session = client.resume(session_id)
        added = session.repair("the worker was killed")

    assert [m.metadata.parent_tool_use_id for m in added] == calls
    for message in added:
        assert message.role == Role.tool and message.metadata.status == MessageStatus.cancelled
        (block,) = message.content
        assert isinstance(block, ToolResultBlock) and block.is_error
        (text,) = block.content
        assert isinstance(text, TextBlock)
        assert "interrupted: the worker was killed" in text.text
    stored = store.load_session(session_id)
    assert stored[-2:] == added
    rows = {r.id: r for r in store.tool_calls(session_id)}
    assert {rows[c].status for c in calls} == {ToolCallStatus.cancelled}
    assert {rows[c].result_message_id for c in calls} == {m.id for m in added}
    assert store.unanswered_tool_calls(session_id) == []

    # Idempotent: nothing is open any more, so nothing is added.
    assert repair_session(store, session_id) == []
    assert len(store.load_session(session_id)) == len(stored)


def test_a_repaired_session_sends_the_interruption_to_the_provider(store: Store) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    client, session_id, _ = crashed(store, provider, FakeTime())
    with client:
        session = client.resume(session_id)
        with pytest.raises(ClientError, match="unanswered tool calls"):
            session.send("go on")  # without repair the session is stuck, as before
        session.repair()
        session.send("go on")
    results = [
        block
        for message in provider.body(1)["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == 2
    assert all(r["is_error"] is True and "interrupted" in json.dumps(r["content"]) for r in results)


def test_auto_repair_is_opt_in_and_repairs_before_send(store: Store) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    client, session_id, calls = crashed(store, provider, FakeTime())
    with client:
        session = client.resume(session_id)
        assert session.auto_repair is False
        with pytest.raises(ClientError, match="unanswered tool calls"):
            session.send("go on")
        client.settings.auto_repair = True  # client-wide: sessions opened from now on
        resumed = client.resume(session_id)
        assert resumed.auto_repair is True
        resumed.send("go on")
    assert len(provider.requests) == 2
    assert DEFAULT_REASON in provider.requests[1].content.decode()
    rows = {r.id: r.status for r in store.tool_calls(session_id)}
    assert [rows[c] for c in calls] == [ToolCallStatus.cancelled] * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_repair_on_every_backend_skips_answered_and_cancelled_calls(backend: str, tmp_path: Path) -> None:
    with open_store(new_target(backend, tmp_path)) as store:
        sid = store.create_session(str(tmp_path)).id
        answered, still_open = tool_call(sid), tool_call(sid, calls=2)
        cut_off = tool_call(sid, status="cancelled")  # its call was cancelled with it
        store.append_many(
            [user(sid), answered, tool_result(sid, tool_ids_of(answered)[0]), still_open, cut_off]
        )
        assert [c.id for c in open_calls(store.load_session(sid))] == tool_ids_of(still_open)

        added = repair_session(store, sid, reason="crash")
        assert [m.metadata.parent_tool_use_id for m in added] == tool_ids_of(still_open)
        statuses = {r.id: r.status for r in store.tool_calls(sid)}
        assert statuses == {
            tool_ids_of(answered)[0]: ToolCallStatus.succeeded,
            **dict.fromkeys(tool_ids_of(still_open), ToolCallStatus.cancelled),
            tool_ids_of(cut_off)[0]: ToolCallStatus.cancelled,
        }
        assert repair_session(store, sid) == []
        assert len(store.load_session(sid)) == 7


def test_metis_repair_on_imported_traffic(tmp_path: Path) -> None:
    """A recorded request whose last turn is a tool call nobody answered."""
    body = {**ANTHROPIC_BODY, "messages": ANTHROPIC_BODY["messages"][:2]}
    path = tmp_path / "open-call.json"
    path.write_text(json.dumps(body))
    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    (session,) = imported(runner, db, "anthropic", path)

    first = run(runner, "--db", db, "repair", session, "--reason", "recording ended")
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith(f"repaired 1 tool call(s) of {session}:")
    assert "-> cancelled, answered by" in first.stdout
    second = run(runner, "--db", db, "repair", session[:12])
    assert second.stdout == f"nothing to repair: {session} has no unanswered tool calls\n"
    with Store.open(db) as store:
        last = store.load_session(session)[-1]
        assert last.metadata.status == MessageStatus.cancelled
        assert "recording ended" in last.model_dump_json()
        assert [r.status for r in store.tool_calls(session)] == [ToolCallStatus.cancelled]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_repairs_at_once_answer_each_call_once(backend: str, tmp_path: Path) -> None:
    """Issue 29, item 10: two repairs of one session started together. The open calls are
    read inside the write transaction, so the second finds the first's answers and says
    there is nothing to repair (it used to read them before, and fail "already answered")."""
    import threading

    target = new_target(backend, tmp_path)
    with open_store(target) as store:
        sids = []
        for _ in range(6):
            sid = store.create_session(str(tmp_path)).id
            store.append_many([user(sid), tool_call(sid, calls=2)])
            sids.append(sid)
    stores = [open_store(target), open_store(target)]  # two connections, as two processes have
    try:
        for sid in sids:
            start = threading.Barrier(2)
            outcomes: list[object] = [None, None]

            def run(
                i: int, sid: str = sid, start: threading.Barrier = start, outcomes: list[object] = outcomes
            ) -> None:
                start.wait()
                try:
                    outcomes[i] = len(repair_session(stores[i], sid))
                except Exception as exc:  # the test reports it
                    outcomes[i] = exc

            threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert sorted(outcomes, key=str) == [0, 2], outcomes
            assert stores[0].unanswered_tool_calls(sid) == []
            assert len(stores[0].load_session(sid)) == 4
    finally:
        for store in stores:
            store.close()


def test_metis_repair_twice_at_once_exits_0_both_times(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "cli.sqlite3"
    with open_store(db) as store:
        sid = store.create_session(str(tmp_path)).id
        store.append_many([user(sid), tool_call(sid, calls=3)])
    command = [sys.executable, "-c", "from metis.cli import main; main()", "--db", str(db), "repair", sid]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    said = sorted(out.split(":")[0] for out, _ in outputs)
    assert said == ["nothing to repair", f"repaired 3 tool call(s) of {sid}"], outputs
