"""The store's fast paths give exactly what the paths they shortcut give.

- `_codec.encode_fast` writes the bytes pydantic's serializer writes, and hands anything
  unusual back to it;
- a batch of appends (`_batch.write`, else `sqlite._append_all`) leaves the database,
  and raises the error, that appending its messages one by one (`sqlite._put_one`) would;
- `_codec.encode_fast` writes the row `encode` wrote before it, and the values it hands
  the batch screen (`_batch`) are what its JSON columns say; a clean batch is written
  without the careful path, and a batch the screen cleared wrongly never is.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from enum import StrEnum
from itertools import pairwise
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metis._json import non_finite
from metis.canonical import CONTENT_LIST
from metis.errors import MetisError, StoreError
from metis.ids import ToolIdMap, new_message_id, new_tool_id
from metis.store import DuplicateMessageError, Store, _batch
from metis.store import sqlite as store_sqlite
from metis.store._codec import _fixed, encode, encode_fast, to_micros
from metis_schema.v1 import Message, MessageStatus, Role, TextBlock, ToolResultBlock, ToolUseBlock
from strategies import conversations
from test_store_support import (
    assistant,
    conversation,
    every_shape,
    message,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)

SID = "sess_fast"
OTHER = "sess_other"


def pydantic_json(m: Message) -> tuple[str, str]:
    """What `encode` wrote before `encode_fast`: pydantic's own serializer."""
    content = CONTENT_LIST.dump_json(m.content, exclude_none=True, warnings="error").decode()
    return content, m.metadata.model_dump_json(exclude_none=True, warnings="error")


def _fast_json(m: Message) -> tuple[str, str] | None:
    """The two JSON columns `encode_fast` writes, or None when it hands the message over."""
    fast = encode_fast(m)
    return None if fast is None else (fast[0][3], fast[0][4])


def changed(m: Message, **update: Any) -> Message:
    return m.model_copy(update=update)  # no validation: what a caller may hand the store


# --- _fast_json -----------------------------------------------------------------------------------


def test_fast_json_is_pydantics_json_for_every_shape() -> None:
    for m in [*every_shape(SID), *conversation(SID, 2)]:
        assert _fast_json(m) == pydantic_json(m)


@settings(max_examples=60, deadline=None)
@given(conversations())
def test_fast_json_is_pydantics_json_for_any_conversation(drawn: tuple[list[Any], list[Any]]) -> None:
    for m in drawn[0]:
        assert _fast_json(m) == pydantic_json(m)


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
JSON_TREES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(),
    tool_input=st.dictionaries(st.text(max_size=8), JSON_TREES, max_size=4),
    raw=st.dictionaries(st.text(max_size=8), JSON_TREES, max_size=4),
    confidence=st.none() | st.floats(0, 1),
    cost=st.decimals(min_value=0, max_value=10**6, allow_nan=False, places=None).filter(
        lambda d: d.is_finite() and not d.is_signed()
    ),
)
def test_fast_json_writes_strings_numbers_and_nesting_as_pydantic_does(
    text: str, tool_input: dict[str, Any], raw: dict[str, Any], confidence: float | None, cost: Decimal
) -> None:
    call = tool_call(SID)
    use = call.content[1]
    assert isinstance(use, ToolUseBlock)
    metadata = call.metadata
    assert metadata.routing is not None and metadata.usage is not None
    routing = metadata.routing.model_copy(update={"confidence": confidence, "rule_name": text or None})
    usage = metadata.usage.model_copy(update={"cost_usd": cost})
    m = changed(
        call,
        content=[TextBlock(text=text), use.model_copy(update={"input": tool_input})],
        metadata=metadata.model_copy(
            update={"routing": routing, "usage": usage, "provider_raw": raw, "user_id": text}
        ),
    )
    try:
        expected: tuple[str, str] | None = pydantic_json(m)
    except Exception:  # e.g. a lone surrogate: pydantic refuses it, and so must the fast path
        expected = None
    fast = _fast_json(m)
    assert fast is None or fast == expected
    if non_finite([tool_input, raw]) is not None:  # pydantic writes NaN as null; the store refuses it
        assert fast is None
        with pytest.raises(StoreError, match="NaN and Infinity are not JSON"):
            encode(m)
    elif expected is not None:
        assert encode(m)[3:5] == expected


class Colour(StrEnum):
    red = "red"


class Text(str):
    pass


@pytest.mark.parametrize(
    "mutate",
    [
        lambda m: changed(m, content=[TextBlock.model_construct(text=Text("sub"))]),
        lambda m: changed(m, content=[TextBlock.model_construct(text=12)]),
        lambda m: changed(m, content=[ToolUseBlock.model_construct(id="x", name="n", input={1: "a"})]),
        lambda m: changed(
            m, content=[ToolUseBlock.model_construct(id="x", name="n", input={"t": UUID(int=1)})]
        ),
        lambda m: changed(
            m, content=[ToolUseBlock.model_construct(id="x", name="n", input={"t": datetime(2026, 1, 1)})]
        ),
        lambda m: changed(
            m, content=[ToolUseBlock.model_construct(id="x", name="n", input={"d": Decimal(1)})]
        ),
        lambda m: changed(
            m, content=[ToolUseBlock.model_construct(id="x", name="n", input={"c": Colour.red})]
        ),
        lambda m: changed(m, content=[ToolUseBlock.model_construct(id="x", name="n", input={"b": 2**70})]),
        lambda m: changed(m, metadata=m.metadata.model_copy(update={"status": "complete"})),
        lambda m: changed(m, metadata=m.metadata.model_copy(update={"critical_blocks": [True]})),
        lambda m: changed(m, metadata=m.metadata.model_copy(update={"provider_raw": {"k": {1, 2}}})),
        lambda m: changed(m, metadata=m.metadata.model_copy(update={"model": Text("anthropic:x")})),
    ],
)
def test_unusual_values_are_left_to_pydantic(mutate: Callable[[Message], Message]) -> None:
    m = mutate(assistant(SID))
    fast = _fast_json(m)
    try:
        expected: tuple[str, str] | BaseException = pydantic_json(m)
    except Exception as exc:
        expected = exc
    if isinstance(expected, BaseException):
        assert fast is None
        with pytest.raises(MetisError, match="not a storable message"):
            encode(m)
    else:
        assert fast in (None, expected)
        assert encode(m)[3:5] == expected


# --- messages with a part out of place -------------------------------------------------------------------------------------


def mutations(m: Message) -> list[Any]:
    """`m` with one part out of place, built without validation."""
    meta = m.metadata
    tid = new_tool_id()
    return [
        m,
        changed(m, role=Role.user),
        changed(m, role=Role.tool),
        changed(m, role=Role.system),
        changed(m, role="assistant"),
        changed(m, role="robot"),
        changed(m, content=[]),
        changed(m, content=tuple(m.content)),
        changed(m, content=[*m.content, {"type": "text", "text": "a dict"}]),
        changed(m, content=[TextBlock.model_construct(type="tool_use", text="x")]),
        changed(m, content=[ToolUseBlock.model_construct(id="call_1", name="x", input={})]),
        changed(m, content=[ToolUseBlock.model_construct(id=tid, name="x", input=[1])]),
        changed(m, content=[ToolUseBlock.model_construct(id=tid, name="x")]),
        changed(
            m,
            content=[
                ToolResultBlock.model_construct(tool_use_id=tid, content=[ToolUseBlock.model_construct()])
            ],
        ),
        changed(m, content=[ToolResultBlock.model_construct(tool_use_id=tid, content=[])]),
        changed(m, content=[ToolResultBlock.model_construct(tool_use_id="bad", content=[])]),
        changed(m, metadata=meta.model_copy(update={"status": MessageStatus.partial})),
        changed(m, metadata=meta.model_copy(update={"status": MessageStatus.cancelled})),
        changed(m, metadata=meta.model_copy(update={"model": None})),
        changed(m, metadata=meta.model_copy(update={"provider": "openai"})),
        changed(m, metadata=meta.model_copy(update={"routing": None, "usage": None})),
        changed(m, metadata=meta.model_copy(update={"parent_tool_use_id": tid})),
        changed(m, metadata=meta.model_copy(update={"parent_tool_use_id": "nope"})),
        changed(m, metadata=meta.model_copy(update={"model": 7})),
        changed(m, metadata={"status": "complete"}),
        changed(m, metadata=None),
        m.model_dump(),
    ]


def every_message() -> list[Message]:
    call = tool_call(SID, calls=2)
    return [
        *every_shape(SID),
        *conversation(SID, 1),
        call,
        tool_result(SID, tool_ids_of(call)[0]),
        tool_call(SID, status="cancelled"),
        assistant(SID, status="partial"),
    ]


# --- batched appends --------------------------------------------------------------------------------


def one_by_one(
    conn: sqlite3.Connection, batch: Any, tool_ids: ToolIdMap | None
) -> None:  # the per-message path `_batch.write` and `_append_all` replace
    for m, row in batch:
        store_sqlite._put_one(conn, m, row, "append", tool_ids)


def unconfirmed(*_: object) -> None:  # the batch writer, vouching for nothing
    raise _batch.Unconfirmed


def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    conn = store._conn
    return {
        table: conn.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
        for table in ("messages", "tool_calls", "tool_id_map")
    }


def outcome(
    tmp: Path, name: str, batches: list[list[Any]], tool_ids: ToolIdMap | None, setup: Callable[[Store], None]
) -> tuple[Any, ...]:
    store = Store.open(tmp / f"{name}.sqlite3")
    store.create_session("/w", session_id=SID)
    store.create_session("/w", session_id=OTHER)
    setup(store)
    errors = []
    for batch in batches:
        try:
            store.append_many(batch, tool_ids=tool_ids)
            errors.append(None)
        except MetisError as exc:
            violations = [str(v) for v in getattr(exc, "violations", [])]
            errors.append((type(exc).__name__, str(exc), violations))
    state = dump(store)
    store.close()
    return state, errors


def same_outcome(
    tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    batches: list[list[Any]],
    tool_ids: ToolIdMap | None = None,
    setup: Callable[[Store], None] = lambda s: None,
) -> tuple[Any, ...]:
    fast = outcome(tmp, "fast", batches, tool_ids, setup)
    with monkeypatch.context() as patched:
        patched.setattr(_batch, "write", unconfirmed)
        patched.setattr(store_sqlite, "_append_all", one_by_one)
        slow = outcome(tmp, "slow", batches, tool_ids, setup)
    assert fast == slow
    return fast


def test_batches_write_what_single_appends_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    messages = [*every_shape(SID), *conversation(SID, 3)]
    state, errors = same_outcome(tmp_path, monkeypatch, [messages[:5], messages[5:6], messages[6:]])
    assert errors == [None, None, None]
    assert len(state["messages"]) == len(messages)
    assert len(state["tool_calls"]) == 5


def test_answers_in_the_same_batch_or_a_later_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_call, cancelled = tool_call(SID, calls=2), tool_call(SID, status="cancelled")
    first, second = tool_ids_of(open_call)
    batches = [
        [user(SID), open_call, tool_result(SID, first, is_error=True), cancelled],
        [tool_result(SID, second), tool_result(SID, tool_ids_of(cancelled)[0])],
    ]
    state, errors = same_outcome(tmp_path, monkeypatch, batches)
    assert errors == [None, None]
    statuses = sorted(row[5] for row in state["tool_calls"])
    assert statuses == ["failed", "succeeded", "succeeded"]


def test_provider_ids_come_from_the_given_or_the_stored_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = [tool_call(SID, calls=2), tool_call(SID)]
    ids = ToolIdMap(SID)
    for call in calls:
        for tool_id in tool_ids_of(call):
            ids.bind(tool_id, "anthropic", f"toolu_{tool_id[-6:]}")
    stored = ToolIdMap(SID)
    stored.bind(tool_ids_of(calls[0])[0], "anthropic", "toolu_first")
    stored.bind(tool_ids_of(calls[0])[0], "anthropic", "toolu_again", "minted")
    stored.bind(tool_ids_of(calls[1])[0], "openai", "call_other_provider")
    (tmp_path / "given").mkdir()
    state, _ = same_outcome(tmp_path / "given", monkeypatch, [calls], ids)
    assert {row[6] for row in state["tool_calls"]} == {
        f"toolu_{t[-6:]}" for c in calls for t in tool_ids_of(c)
    }
    (tmp_path / "stored").mkdir()
    state, _ = same_outcome(
        tmp_path / "stored", monkeypatch, [calls], setup=lambda s: s.save_tool_ids(SID, stored)
    )
    assert [row[6] for row in state["tool_calls"]] == ["toolu_first", None, None]


def test_a_retried_transaction_reads_provider_ids_from_the_map_as_it_is_then(tmp_path: Path) -> None:
    """`_batch.write` runs again when a busy transaction is retried: each run reads the
    stored map as it is then (a map gone by then gives no ids, one that appeared is read)."""
    call = tool_call(SID)
    stored = ToolIdMap(SID)
    stored.bind(tool_ids_of(call)[0], "anthropic", "toolu_then")
    store = Store.open(tmp_path / "s.sqlite3")
    store.create_session("/w", session_id=SID)
    conn = store._conn

    def provider_ids() -> list[Any]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            _batch.write(conn, [user(SID), call], None, 0)
            return [row[0] for row in conn.execute("SELECT provider_id FROM tool_calls")]
        finally:
            conn.execute("ROLLBACK")

    assert provider_ids() == [None]
    store.save_tool_ids(SID, stored)
    assert provider_ids() == ["toolu_then"]
    conn.execute("DELETE FROM tool_id_map")
    assert provider_ids() == [None]
    store.close()


def broken_batches() -> list[list[Any]]:
    """Batches that fail, each in its own way, some only because of what came before."""
    call = tool_call(SID)
    tid = tool_ids_of(call)[0]
    answer = tool_result(SID, tid)
    base = [user(SID), call, answer]
    later = user(SID)
    naive_offset = changed(user(SID), created_at=datetime(2026, 5, 8, tzinfo=timezone(timedelta(hours=2))))
    foreign_call = tool_call(OTHER)
    return [
        [*base, answer.model_copy(update={"id": new_message_id()})],  # answered twice
        [*base, base[0]],  # the same message twice
        [later, later.model_copy()],  # duplicate id within the batch
        [tool_result(SID, new_tool_id())],  # answers nothing
        [*base, tool_call(SID, tool_id=tid)],  # tool id reused
        [foreign_call, tool_result(SID, tool_ids_of(foreign_call)[0])],  # crosses sessions
        [user(SID), naive_offset],  # not UTC
        [user(SID), changed(assistant(SID), content=[])],  # empty, complete
        [base[0], changed(call, content=[]), call],  # a fault, then a duplicate... of nothing yet
        [user(SID), user(SID), changed(later, content=[])],  # duplicate (of `later`) that is also faulty
        [message(SID, "system", []), message(OTHER, "user", [{"type": "text", "text": "hi"}])],
    ]


def test_failing_batches_raise_what_single_appends_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches = broken_batches()
    _, errors = same_outcome(tmp_path, monkeypatch, batches)
    assert [e is None for e in errors] == [False] * 7 + [False, False, False, True]
    assert {e[0] for e in errors if e} == {"InvariantError", "DuplicateMessageError"}


def test_partial_checkpoints_keep_the_one_by_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partial = assistant(SID, status="partial")
    final = changed(partial, metadata=partial.metadata.model_copy(update={"status": MessageStatus.complete}))
    batches = [[user(SID), partial], [final], [changed(partial, id=new_message_id()), user(SID)]]
    _, errors = same_outcome(tmp_path, monkeypatch, batches)
    assert errors[0] is None and errors[1] is not None and "partial checkpoint" in errors[1][1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=conversations(), cuts=st.lists(st.integers(0, 30), max_size=3), drop=st.integers(0, 30))
def test_any_conversation_in_any_batches(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    drawn: tuple[list[Any], list[Any]],
    cuts: list[int],
    drop: int,
) -> None:
    messages = [m.model_copy(update={"session_id": SID}) for m in drawn[0]]
    messages = [m for i, m in enumerate(messages) if i != drop]  # may orphan a result
    bounds = sorted({0, len(messages), *(c for c in cuts if c < len(messages))})
    batches = [messages[a:b] for a, b in pairwise(bounds)]
    same_outcome(tmp_path_factory.mktemp("batches"), monkeypatch, batches)


def test_times_stay_utc_microseconds(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.sqlite3") as store:
        store.create_session("/w", session_id=SID)
        m = user(SID)
        store.append_many([m])
        assert store.load_session(SID) == [m]
        assert m.created_at.tzinfo is UTC


# --- encode_fast and the screened batch path ------------------------------------------------------


def reference_row(m: Message) -> tuple[Any, ...]:
    """The row `encode` wrote before `encode_fast`: the model's fields, pydantic's JSON."""
    return (m.id, m.session_id, m.role.value, *pydantic_json(m), to_micros(m.created_at), m.schema_version)


def assert_fast_row(m: Any) -> None:
    fast = encode_fast(m)
    if fast is None:
        return
    row, (blocks, meta) = fast
    assert row == reference_row(m) == encode(m)
    assert orjson.loads(row[3]) == blocks
    assert orjson.loads(row[4]) == meta


def test_encode_fast_writes_the_row_encode_wrote() -> None:
    for m in every_message():
        assert encode_fast(m) is not None
        assert_fast_row(m)


@settings(max_examples=40, deadline=None)
@given(conversations())
def test_encode_fast_writes_the_row_encode_wrote_for_any_message(drawn: tuple[list[Any], list[Any]]) -> None:
    for original in drawn[0]:
        for m in mutations(original)[:-1]:  # the last is a dict
            try:
                pydantic_json(m)
            except Exception:  # pydantic refuses it: so must the fast path
                assert encode_fast(m) is None
                continue
            assert_fast_row(m)


def test_fixed_point_decimals_are_written_as_format_f() -> None:
    values = [Decimal(t) for t in ("NaN", "sNaN", "-NaN", "Infinity", "-Infinity", "0", "-0", "0E-7")]
    for sign in (0, 1):
        for digits in ((0,), (1,), (5, 0), (1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 0, 0, 0)):
            values.extend(Decimal((sign, digits, exponent)) for exponent in range(-30, 31))
    for value in values:
        assert _fixed(value) == format(value, "f"), value


def test_the_batch_writer_restores_the_garbage_collector(tmp_path: Path) -> None:
    was = gc.isenabled()
    store = Store.open(tmp_path / "gc.sqlite3")
    store.create_session("/w", session_id=SID)
    conn = store._conn
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            conn.execute("BEGIN IMMEDIATE")
            _batch.write(conn, [user(SID)], None, 0)
            assert gc.isenabled() is enabled
            with pytest.raises(_batch.Unconfirmed):  # the insert refuses it: no such session
                _batch.write(conn, [user("sess_nowhere")], None, 0)
            assert gc.isenabled() is enabled
            conn.execute("ROLLBACK")
    finally:
        (gc.enable if was else gc.disable)()
        store.close()


def test_what_the_screen_assumes_of_the_database_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # each assumption of `_batch` broken by what an earlier batch stored
    stored = user(SID)
    first, second, foreign = tool_call(SID, calls=2), tool_call(SID), tool_call(OTHER)
    a, b = tool_ids_of(first)
    zero = datetime(2026, 5, 8, 12, tzinfo=timezone(timedelta(0), "Z"))  # UTC, not `UTC` itself
    batches = [
        [stored, first, second, foreign],
        [tool_result(SID, a), user(SID)],  # answers a call stored before
        [tool_result(SID, a)],  # ... which is answered now
        [tool_result(SID, tool_ids_of(foreign)[0])],  # a stored call of another session
        [user(SID), tool_call(SID, tool_id=b)],  # a stored tool id used again
        [user(SID), stored],  # a stored message sent again
        [user(SID), changed(stored, session_id=OTHER)],  # ... even to another session
        [changed(user(SID), created_at=zero), tool_result(SID, b, is_error=True)],
        [tool_result(SID, tool_ids_of(second)[0]), tool_result(SID, new_tool_id())],  # answers nothing
    ]
    state, errors = same_outcome(tmp_path, monkeypatch, batches)
    assert [e is None for e in errors] == [True, True, False, False, False, False, False, True, False]
    assert errors[5] is not None and errors[5][0] == "DuplicateMessageError"
    assert len(state["messages"]) == 8


def test_an_answer_to_a_stored_call_with_a_foreign_id_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # a row another tool wrote: its id is not canonical (§5.2.1), however it is stored
    def setup(store: Store) -> None:
        store._conn.execute(
            "INSERT INTO messages (id, session_id, role, content_json, metadata_json, created_at, "
            "schema_version) VALUES ('msg_x', ?, 'assistant', '[]', '{}', 0, 1)",
            (SID,),
        )
        store._conn.execute(
            "INSERT INTO tool_calls (id, session_id, message_id, name, status, created_at) "
            "VALUES ('call_1', ?, 'msg_x', 'read_file', 'pending', 0)",
            (SID,),
        )

    answer = tool_result(SID, new_tool_id())
    block = ToolResultBlock.model_construct(tool_use_id="call_1", content=[TextBlock(text="ok")])
    foreign = changed(
        answer,
        content=[block],
        metadata=answer.metadata.model_copy(update={"parent_tool_use_id": "call_1"}),
    )
    _, errors = same_outcome(tmp_path, monkeypatch, [[user(SID), foreign]], setup=setup)
    assert errors[0] is not None and errors[0][0] == "InvariantError"


def test_faulty_messages_are_refused_as_one_by_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[list[Any]] = [every_message()]  # the originals, stored: links to them exist
    for original in every_message():
        for m in [*mutations(original)[:-1], changed(original, role=Role.assistant)]:
            batches.append([user(SID), changed(m, id=new_message_id())])
    pictured = next(m for m in every_shape(SID) if m.role == Role.user and len(m.content) > 1)
    for status in ("complete", "cancelled"):  # an image where only USER may have one
        batches.append([changed(assistant(SID, status=status), content=pictured.content)])
    call = tool_call(SID)
    answer = tool_result(SID, tool_ids_of(call)[0])
    astray = answer.metadata.model_copy(update={"parent_tool_use_id": new_tool_id()})
    batches.append([call, changed(answer, metadata=astray)])  # names another call than it answers
    _, errors = same_outcome(tmp_path, monkeypatch, batches)
    assert errors[0] is None
    assert sum(e is None for e in errors) < len(errors) / 2


def test_clean_batches_skip_the_careful_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def careful(*_: object) -> None:
        raise AssertionError("a clean batch went down the careful path")

    monkeypatch.setattr(store_sqlite, "_checked_plan", careful)
    with Store.open(tmp_path / "clean.sqlite3") as store:
        store.create_session("/w", session_id=SID)
        call = tool_call(SID, calls=2)
        first, second = tool_ids_of(call)
        store.append_many([*every_shape(SID), user(SID), call, tool_result(SID, first)])
        store.append_many([tool_result(SID, second), assistant(SID)])  # answers a stored call
        cancelled = tool_call(SID, status="cancelled")
        store.append(cancelled)
        status = {c.id: c.status for c in store.tool_calls(SID)}
        assert [status[t] for t in (first, second, *tool_ids_of(cancelled))] == [
            "succeeded",
            "succeeded",
            "cancelled",
        ]


def test_a_resent_message_is_refused_by_the_insert_and_named_by_the_careful_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    careful = store_sqlite._checked_plan
    taken: list[int] = []

    def counted(*args: Any) -> Any:
        taken.append(len(args[1]))
        return careful(*args)

    monkeypatch.setattr(store_sqlite, "_checked_plan", counted)
    with Store.open(tmp_path / "again.sqlite3") as store:
        store.create_session("/w", session_id=SID)
        sent = user(SID)
        store.append(sent)
        assert taken == []
        call = tool_call(SID)
        with pytest.raises(DuplicateMessageError, match="already stored"):
            store.append_many([call, tool_result(SID, tool_ids_of(call)[0]), sent])
        assert taken == [3]
        assert store.load_session(SID) == [sent]
        assert store.tool_calls(SID) == []
