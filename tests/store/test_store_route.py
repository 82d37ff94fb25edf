"""One write route: whole, batched, partial and final messages are checked and written alike.

Every message write of the Store (`append`, `append_many`, `upsert_partial`, `finalize`,
`append_planned`, `save_tool_ids`) is one batch of writes, checked whole before a row is
written and written in one transaction. These tests hold that: the same faults are refused
the same way whatever the entry point, a failure anywhere in a batch leaves nothing, a
batch is checked before its first row is written and looked up once however long it is,
and each write kind commits exactly once (SQLite's statement trace counts the COMMITs).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from metis.errors import InvariantError, StoreError
from metis.ids import ToolIdMap, new_tool_id
from metis.store import DuplicateMessageError, Store, _sql, open_store
from metis_schema.v3 import Message, ToolDefinition

from tests.support.store_support import (
    assistant,
    assistant_meta,
    message,
    raw_rows,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)

SID = "sess_route"
TOOL = ToolDefinition(
    name="read_file", description="Read a file.", input_schema={"type": "object"}, side_effects="read"
)


@pytest.fixture
def store(target: str) -> Iterator[Store]:
    s = open_store(target)
    s.create_session("/w", session_id=SID)
    yield s
    s.close()


def rows(target: str) -> list[tuple[Any, ...]]:
    """Every message and tool call row, as the database's plain driver reads them."""
    messages = raw_rows(target, "SELECT id, role FROM messages ORDER BY id")
    calls = raw_rows(target, "SELECT id, status, result_message_id FROM tool_calls ORDER BY id")
    return [*messages, *calls]


def final_of(partial: Message, text: str = "Done.") -> Message:
    """The final (complete) form of a streamed partial assistant message."""
    return message(SID, "assistant", [{"type": "text", "text": text}], assistant_meta(), id=partial.id)


def checkpoint(session_id: str, message_id: str) -> Message:
    """A PARTIAL assistant message of `session_id` under `message_id`."""
    return message(
        session_id, "assistant", [{"type": "text", "text": "Rea"}], assistant_meta("partial"), id=message_id
    )


def orphan_result() -> Message:
    """A tool result answering a call no message opened (§5.2.2)."""
    return tool_result(SID, new_tool_id())


# --- the same faults, refused the same way by every entry point ------------------------------


def test_a_broken_message_is_refused_alike_by_append_finalize_and_a_batch_with_a_partial(
    store: Store, target: str
) -> None:
    store.append(user(SID))
    partial = assistant(SID, "Rea", status="partial")
    store.upsert_partial(partial)
    before = rows(target)
    broken = orphan_result()
    refused: list[str] = []
    for write in (
        lambda: store.append(broken),
        lambda: store.finalize(broken),
        lambda: store.append_many([assistant(SID, "x", status="partial"), broken]),
        lambda: store.append_planned(SID, lambda _: [broken]),
    ):
        with pytest.raises(InvariantError) as caught:
            write()
        refused.append(str(caught.value))
    assert len(set(refused)) == 1, refused  # one check, one wording
    assert rows(target) == before


def test_a_taken_id_is_refused_alike_and_only_a_checkpoint_of_the_same_session_is_replaced(
    store: Store, target: str
) -> None:
    store.create_session("/w", session_id="sess_other")
    done = assistant(SID)
    store.append(done)
    before = rows(target)
    taken: list[str] = []
    for write in (
        lambda: store.append(done),
        lambda: store.finalize(done),
        lambda: store.upsert_partial(checkpoint(SID, done.id)),
        lambda: store.append_many([user(SID), done]),
    ):
        with pytest.raises(DuplicateMessageError) as caught:
            write()
        taken.append(str(caught.value))
    assert len(set(taken)) == 1, taken
    partial = assistant(SID, "Rea", status="partial")
    store.upsert_partial(partial)
    with pytest.raises(DuplicateMessageError, match="partial checkpoint"):
        store.append(final_of(partial))  # append never replaces: finalize does
    with pytest.raises(DuplicateMessageError, match="partial checkpoint"):
        store.upsert_partial(checkpoint("sess_other", partial.id))
    assert sorted(rows(target)) == sorted([*before, (partial.id, "assistant")])
    assert store.load_session(SID)[-1] == partial


# --- partial, then finalize, then a batch holding a partial: one route --------------------------


def test_partial_then_finalize_then_a_batch_with_a_partial_write_what_appends_would(
    store: Store, target: str
) -> None:
    call = tool_call(SID, calls=2, status="partial")
    store.upsert_partial(call)
    store.upsert_partial(call)  # a refresh replaces the checkpoint in place
    assert store.tool_calls(SID) == []  # a checkpoint opens no call
    final = message(SID, "assistant", [b.model_dump() for b in call.content], assistant_meta(), id=call.id)
    store.finalize(final)
    assert [c.status for c in store.tool_calls(SID)] == ["pending", "pending"]
    first, second = tool_ids_of(final)
    streaming = assistant(SID, "Thinking", status="partial")
    batch = [tool_result(SID, first), streaming, tool_result(SID, second), user(SID)]
    store.append_many(batch)
    assert [m.id for m in store.load_session(SID)] == [final.id, *(m.id for m in batch)]
    assert {c.id: (c.status, c.result_message_id) for c in store.tool_calls(SID)} == {
        first: ("succeeded", batch[0].id),
        second: ("succeeded", batch[2].id),
    }
    store.finalize(final_of(streaming))
    assert store.load_session(SID, include_partial=False)[-3].id == streaming.id  # its place kept


def test_a_call_opened_and_answered_in_one_batch_with_a_partial_between_is_closed(store: Store) -> None:
    call = tool_call(SID)
    answer = tool_result(SID, tool_ids_of(call)[0])
    store.append_many([call, assistant(SID, "…", status="partial"), answer])
    (record,) = store.tool_calls(SID)
    assert (record.status, record.result_message_id) == ("succeeded", answer.id)


# --- a failure inside a batch leaves nothing -------------------------------------------------


def test_a_failure_inside_a_batch_with_a_partial_and_a_finalize_leaves_nothing(
    store: Store, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    streaming = assistant(SID, "Rea", status="partial")
    store.upsert_partial(streaming)
    before, session = rows(target), store.get_session(SID)

    def explode(conn: Any, call_rows: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(_sql, "insert_tool_calls", explode)
    ids = ToolIdMap(SID)
    ids.register_incoming("openai", "call_1")
    with pytest.raises(OSError, match="disk on fire"):
        store.append_many([user(SID), assistant(SID, "x", status="partial"), tool_call(SID)], tool_ids=ids)
    opening = [b.model_dump() for b in tool_call(SID).content]
    with pytest.raises(OSError, match="disk on fire"):
        store.finalize(message(SID, "assistant", opening, assistant_meta(), id=streaming.id))
    assert rows(target) == before
    assert store.get_session(SID) == session, "updated_at rolled back too"
    assert store.load_session(SID)[0].metadata.status == "partial"
    assert store.load_tool_ids(SID).to_dict() == ToolIdMap(SID).to_dict()


def test_a_tool_id_map_of_another_session_is_refused_before_anything_is_written(
    store: Store, target: str
) -> None:
    store.create_session("/w", session_id="sess_other")
    with pytest.raises(StoreError, match="tool id map of session 'sess_other'"):
        store.append_many([user(SID), assistant(SID, status="partial")], tool_ids=ToolIdMap("sess_other"))
    assert rows(target) == []


# --- checked whole, looked up once, committed once (SQLite's statement trace) ------------------


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[Store, list[str]]]:
    s = Store.open(tmp_path / "m.sqlite3")
    s.create_session("/w", session_id=SID)
    statements: list[str] = []
    conn: sqlite3.Connection = s._conn
    conn.set_trace_callback(statements.append)
    yield s, statements
    conn.set_trace_callback(None)
    s.close()


def _writes(statements: list[str]) -> list[str]:
    return [
        s for s in statements if s.lstrip().upper().startswith(("INSERT INTO MESSAGES", "UPDATE MESSAGES"))
    ]


def test_a_batch_with_a_partial_is_checked_whole_before_its_first_row_is_written(
    traced: tuple[Store, list[str]],
) -> None:
    store, statements = traced
    with pytest.raises(InvariantError):
        store.append_many([user(SID), assistant(SID, "x", status="partial"), orphan_result()])
    assert _writes(statements) == []


def test_a_batch_with_a_partial_is_looked_up_once_however_long_it_is(
    traced: tuple[Store, list[str]],
) -> None:
    store, statements = traced

    def selects(batch: list[Message]) -> int:
        statements.clear()
        store.append_many(batch)
        return sum(1 for s in statements if s.lstrip().upper().startswith("SELECT"))

    short = selects([assistant(SID, "a", status="partial"), user(SID)])
    long = selects([assistant(SID, "b", status="partial"), *(user(SID, str(i)) for i in range(30))])
    assert long == short


def _write_kinds(store: Store) -> list[tuple[str, Callable[[], object]]]:
    """Every kind of write the Store makes to a session's rows, in an order that works."""
    call = tool_call(SID, calls=2)
    streaming = assistant(SID, "Rea", status="partial")
    ids = ToolIdMap(SID)
    ids.register_incoming("openai", "call_1")
    answers = [tool_result(SID, t) for t in tool_ids_of(call)]
    return [
        ("append", lambda: store.append(user(SID))),
        ("append a tool call", lambda: store.append(call)),
        ("append_many", lambda: store.append_many(answers)),
        ("upsert_partial", lambda: store.upsert_partial(streaming)),
        ("upsert_partial again", lambda: store.upsert_partial(streaming)),
        ("finalize", lambda: store.finalize(final_of(streaming))),
        ("finalize without checkpoint", lambda: store.finalize(assistant(SID))),
        (
            "append_many with a partial",
            lambda: store.append_many([user(SID), assistant(SID, status="partial")]),
        ),
        ("append with tool ids", lambda: store.append(user(SID), tool_ids=ids)),
        ("append_planned", lambda: store.append_planned(SID, lambda _: [user(SID)])),
        ("save_tool_ids", lambda: store.save_tool_ids(SID, ids)),
        ("record_settings", lambda: store.record_settings(SID, [TOOL])),
        ("record_settings unchanged", lambda: store.record_settings(SID, [TOOL])),
        ("set_title", lambda: store.set_title(SID, "Route")),
        ("delete_session", lambda: store.delete_session(SID)),
    ]


def test_every_write_kind_is_one_transaction(traced: tuple[Store, list[str]]) -> None:
    store, statements = traced
    counted = {}
    for name, write in _write_kinds(store):
        statements.clear()
        write()
        upper = [s.strip().upper() for s in statements]
        counted[name] = (sum(s.startswith("BEGIN") for s in upper), upper.count("COMMIT"))
    assert counted == {name: (1, 1) for name, _ in _write_kinds(store)}
