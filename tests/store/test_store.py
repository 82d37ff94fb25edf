"""The Store API: sessions, appends checked against spec §5, tool call bookkeeping, reads."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metis.canonical import conversation_hash, message_hash, read_message
from metis.errors import InvariantError, MetisError, SessionNotFoundError, StoreError
from metis.ids import ToolIdMap, new_message_id, new_tool_id
from metis.store import AsyncStore, DuplicateMessageError, Store, ToolCallStatus, default_path, open_store
from metis.store._codec import decode, encode, from_micros, to_micros
from metis_schema import CURRENT_VERSION
from metis_schema.v3 import MessageStatus

from tests.support.store_support import (
    assistant,
    conversation,
    every_shape,
    ids,
    message,
    raw_rows,
    stamp,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)
from tests.support.strategies import conversations

SID = "sess_test"


_TARGETS: dict[int, str] = {}


@pytest.fixture
def store(target: str) -> Iterator[Store]:
    s = open_store(target)
    _TARGETS[id(s)] = target
    s.create_session("/work/project", session_id=SID, active_model="anthropic:claude-sonnet-4-6")
    yield s
    s.close()
    del _TARGETS[id(s)]


def rows(store: Store, sql: str, *args: object) -> list[tuple[object, ...]]:
    """`sql` run on the store's database by its plain driver."""
    return raw_rows(_TARGETS[id(store)], sql, *args)


def is_postgres(store: Store) -> bool:
    return _TARGETS[id(store)].startswith("postgresql://")


# --- sessions -------------------------------------------------------------------------------


def test_sessions_are_created_listed_updated_and_deleted(store: Store) -> None:
    other = store.create_session("/elsewhere", routing_policy={"default_model": "openai:gpt-5", "n": 2})
    assert other.id.startswith("sess_")
    assert other.routing_policy == {"default_model": "openai:gpt-5", "n": 2}
    assert store.get_session(other.id) == other
    assert {s.id for s in store.list_sessions()} == {SID, other.id}

    info = store.set_active_model(SID, "openai:gpt-5")
    assert info.active_model == "openai:gpt-5"
    assert store.get_session(SID).active_model == "openai:gpt-5"
    assert store.list_sessions()[0].id == SID, "most recently changed first"
    assert info.updated_at >= info.created_at

    store.append_many(conversation(SID, 2))
    store.delete_session(SID)
    with pytest.raises(SessionNotFoundError):
        store.get_session(SID)
    for table in ("messages", "tool_calls", "tool_id_map", "sessions"):
        assert rows(
            store,
            f"SELECT COUNT(*) FROM {table} WHERE {'id' if table == 'sessions' else 'session_id'} = ?",
            SID,
        ) == [(0,)]
    assert [s.id for s in store.list_sessions()] == [other.id]


def test_session_errors_are_typed(store: Store) -> None:
    for call in (
        lambda: store.get_session("nope"),
        lambda: store.delete_session("nope"),
        lambda: store.set_active_model("nope", "openai:gpt-5"),
        lambda: store.load_session("nope"),
        lambda: store.load_tool_ids("nope"),
        lambda: store.tool_calls("nope"),
        lambda: store.failed_tool_calls("nope"),
        lambda: store.append(user("nope")),
    ):
        with pytest.raises(SessionNotFoundError):
            call()
    with pytest.raises(StoreError, match="already exists"):
        store.create_session("/x", session_id=SID)
    with pytest.raises(StoreError, match="session id"):
        store.create_session("/x", session_id="")
    with pytest.raises(StoreError, match="canonical model id"):
        store.set_active_model(SID, "gpt-5")
    with pytest.raises(StoreError, match="JSON"):
        store.create_session("/x", routing_policy={"when": {1, 2}})


def test_default_path_is_under_metis_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METIS_HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / "metis.sqlite3"
    with Store.open() as s:
        assert s.path == tmp_path / "home" / "metis.sqlite3"
        s.create_session("/w")
    assert (tmp_path / "home" / "metis.sqlite3").stat().st_mode & 0o077 == 0, "conversations are owner-only"
    monkeypatch.delenv("METIS_HOME")
    assert default_path().name == "metis.sqlite3" and "metis" in str(default_path().parent)


# --- append and load ---------------------------------------------------------------------------


def test_a_conversation_reads_back_equal_and_in_order(store: Store) -> None:
    written = every_shape(SID) + conversation(SID, 3)
    for m in written:
        store.append(m)
    loaded = store.load_session(SID)
    assert ids(loaded) == ids(written)
    assert loaded == written
    assert [message_hash(m) for m in loaded] == [message_hash(m) for m in written]
    assert [m.model_dump(mode="json") for m in loaded] == [m.model_dump(mode="json") for m in written]
    assert store.get_message(written[3].id) == written[3]
    with pytest.raises(StoreError, match="no message"):
        store.get_message(new_message_id())


def test_load_after_a_message_reads_only_what_was_appended_later(store: Store) -> None:
    written = conversation(SID, 3)
    store.append_many(written[:4])
    store.append_many(written[4:])
    assert ids(store.load_session(SID, after=written[3].id)) == ids(written[4:])
    assert store.load_session(SID, after=written[-1].id) == []
    store.create_session("/other", session_id="sess_other")
    with pytest.raises(StoreError, match="no message"):
        store.load_session("sess_other", after=written[0].id)  # not a message of that session
    with pytest.raises(StoreError, match="no message"):
        store.load_session(SID, after=new_message_id())
    with pytest.raises(SessionNotFoundError):
        store.load_session("sess_missing", after=written[0].id)
    assert asyncio.run(AsyncStore(store).load_session(SID, after=written[3].id)) == written[4:]


def test_load_order_is_append_order_not_timestamp_order(store: Store) -> None:
    late = user(SID, "stamped later, appended first")
    early = message(
        SID,
        "user",
        [{"type": "text", "text": "stamped earlier"}],
        created_at=late.created_at - timedelta(hours=1),
    )
    store.append(late)
    store.append(early)
    assert ids(store.load_session(SID)) == [late.id, early.id]
    if store.path is not None:
        with sqlite3.connect(store.path) as conn:
            conn.execute("VACUUM")
        assert ids(Store.open(store.path).load_session(SID)) == [late.id, early.id], "VACUUM keeps row order"


def test_rows_hold_spec_columns(store: Store) -> None:
    m = tool_call(SID)
    store.append(m)
    (row,) = rows(
        store,
        "SELECT id, session_id, role, content_json, metadata_json, created_at, schema_version FROM messages",
    )
    assert row[:3] == (m.id, SID, "assistant")
    micros = (m.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert row[5] == micros and row[6] == CURRENT_VERSION
    if is_postgres(store):  # jsonb, read back by the driver as JSON values
        assert row[3][0] == {"type": "text", "text": "I'll read the file."}
        assert isinstance(row[4], dict) and row[4]["provider"] == "anthropic"
        types = "SELECT pg_typeof(content_json)::text, pg_typeof(metadata_json)::text, pg_typeof(created_at)::text"
        assert rows(store, f"{types} FROM messages") == [("jsonb", "jsonb", "bigint")]
        return
    assert isinstance(row[3], str) and row[3].startswith('[{"type":"text"')
    assert isinstance(row[4], str) and '"provider":"anthropic"' in row[4]
    assert rows(
        store, "SELECT typeof(content_json), typeof(metadata_json), typeof(created_at) FROM messages"
    ) == [("text", "text", "integer")]


def test_invalid_message_writes_nothing_and_names_the_rule(store: Store) -> None:
    bad = assistant(SID).model_copy(
        update={"metadata": assistant(SID).metadata.model_copy(update={"usage": None})}
    )
    with pytest.raises(InvariantError) as caught:
        store.append(bad)
    assert any(v.rule == "§5.3.3" for v in caught.value.violations)
    orphan = tool_result(SID, new_tool_id())
    with pytest.raises(InvariantError, match=r"§5\.2\.2"):
        store.append(orphan)
    with pytest.raises(InvariantError, match=r"§4\.1"):
        store.append(
            user(SID).model_copy(
                update={"created_at": datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))}
            )
        )
    assert rows(store, "SELECT COUNT(*) FROM messages") == [(0,)]
    assert store.get_session(SID).updated_at == store.get_session(SID).created_at, (
        "not even the session is touched"
    )


def test_append_many_is_all_or_nothing(store: Store) -> None:
    good = conversation(SID, 2)
    broken = tool_result(SID, new_tool_id())
    with pytest.raises(InvariantError):
        store.append_many([*good, broken])
    assert store.load_session(SID) == []
    store.append_many(good)
    assert store.load_session(SID) == good


def test_links_are_checked_against_earlier_batches_and_sessions(store: Store) -> None:
    call = tool_call(SID)
    store.append(call)
    (tid,) = tool_ids_of(call)
    store.create_session("/w", session_id="sess_other")
    with pytest.raises(InvariantError, match="never cross sessions"):
        store.append(tool_result("sess_other", tid))
    store.append(tool_result(SID, tid))
    with pytest.raises(InvariantError, match="already answered"):
        store.append(tool_result(SID, tid, "again"))
    with pytest.raises(InvariantError, match="already used"):
        store.append(tool_call(SID, tool_id=tid))


def test_duplicate_ids_are_a_typed_error_and_write_nothing(store: Store) -> None:
    call = tool_call(SID)
    answer = tool_result(SID, tool_ids_of(call)[0])
    store.append_many([call, answer])
    for again in (call, answer, user(SID).model_copy(update={"id": call.id})):
        with pytest.raises(DuplicateMessageError):
            store.append(again)
    store.create_session("/w", session_id="sess_2")
    with pytest.raises(DuplicateMessageError):
        store.append(user("sess_2").model_copy(update={"id": call.id}))
    assert rows(store, "SELECT COUNT(*) FROM messages") == [(2,)]
    assert store.load_session("sess_2") == []


# --- tool calls -----------------------------------------------------------------------------------


def test_tool_calls_follow_their_results(store: Store) -> None:
    call = tool_call(SID, calls=3)
    a, b, c = tool_ids_of(call)
    store.append(call)
    assert [r.status for r in store.tool_calls(SID)] == [ToolCallStatus.pending] * 3
    assert [r.id for r in store.unanswered_tool_calls(SID)] == [a, b, c]
    ok, bad = tool_result(SID, a), tool_result(SID, b, "boom", is_error=True)
    store.append(ok)
    store.append(bad)
    records = {r.id: r for r in store.tool_calls(SID)}
    assert records[a].status == ToolCallStatus.succeeded and records[a].result_message_id == ok.id
    assert records[a].completed_at == ok.created_at
    assert records[b].status == ToolCallStatus.failed and records[b].result_message_id == bad.id
    assert records[c].status == ToolCallStatus.pending and records[c].completed_at is None
    assert records[a].message_id == call.id and records[a].name == "read_file"
    assert records[a].provider == "anthropic" and records[a].created_at == call.created_at
    assert [r.id for r in store.unanswered_tool_calls(SID)] == [c]
    assert store.failed_tool_calls(SID) == {SID: 1}
    store.create_session("/w", session_id="sess_clean")
    assert store.failed_tool_calls("sess_clean") == {"sess_clean": 0}
    assert store.failed_tool_calls() == {SID: 1}


@pytest.mark.parametrize("status", ["cancelled", "error"])
def test_a_stopped_turn_closes_its_calls(store: Store, status: str) -> None:
    call = tool_call(SID, calls=2, status=status)
    store.append(call)
    assert {r.status for r in store.tool_calls(SID)} == {ToolCallStatus.cancelled}
    assert store.unanswered_tool_calls(SID) == []
    # A synthetic result (providers want every tool_use answered) is still accepted.
    store.append(tool_result(SID, tool_ids_of(call)[0], "cancelled by user", is_error=True))
    assert store.failed_tool_calls(SID) == {SID: 1}


def test_provider_ids_come_from_the_session_map(store: Store) -> None:
    ids_map = ToolIdMap(SID)
    canonical = ids_map.register_incoming("anthropic", "toolu_01ABC")
    call = tool_call(SID, tool_id=canonical)
    store.append(call, tool_ids=ids_map)
    assert store.tool_calls(SID)[0].provider_id == "toolu_01ABC"
    assert [e.provider_id for e in store.load_tool_ids(SID)] == ["toolu_01ABC"]

    # Without a map argument, the stored map answers.
    second = ids_map.register_incoming("anthropic", "toolu_02DEF")
    store.save_tool_ids(SID, ids_map)
    store.append(tool_call(SID, tool_id=second))
    assert [r.provider_id for r in store.tool_calls(SID)] == ["toolu_01ABC", "toolu_02DEF"]
    with pytest.raises(StoreError, match="belongs to session"):
        store.save_tool_ids("sess_x", ids_map)
    with pytest.raises(StoreError, match="tool id map of session"):
        store.append(user("sess_x"), tool_ids=ids_map)


def test_tool_id_map_round_trips_and_syncs_incrementally(store: Store) -> None:
    ids_map = ToolIdMap(SID)
    first = ids_map.register_incoming("openai", "call_1")
    ids_map.outgoing(first, "anthropic")
    store.save_tool_ids(SID, ids_map)
    assert store.load_tool_ids(SID).to_dict() == ids_map.to_dict()

    ids_map.register_incoming("openai", "call_2")
    store.append(user(SID), tool_ids=ids_map)  # new entries only
    assert store.load_tool_ids(SID).to_dict() == ids_map.to_dict()

    unrelated = ToolIdMap(SID)
    unrelated.register_incoming("gemini", "g1")
    store.append(user(SID), tool_ids=unrelated)  # not an extension: rewritten whole
    assert store.load_tool_ids(SID).to_dict() == unrelated.to_dict()
    restored = store.load_tool_ids(SID)
    assert restored.provider_id(next(iter(unrelated)).canonical, "gemini") == "g1"


# --- streaming checkpoints --------------------------------------------------------------------------


def test_partial_checkpoints_are_replaced_by_the_final_message(store: Store) -> None:
    store.append(user(SID))
    final = tool_call(SID, calls=1)
    partial = final.model_copy(
        update={
            "content": final.content[:1],
            "metadata": final.metadata.model_copy(update={"status": MessageStatus.partial, "usage": None}),
        }
    )
    store.upsert_partial(partial.model_copy(update={"content": []}))
    store.upsert_partial(partial)
    assert store.load_session(SID)[-1] == partial
    assert store.load_session(SID, include_partial=False)[-1].role.value == "user"
    assert store.tool_calls(SID) == []
    store.append(user(SID, "typed while streaming"))

    store.finalize(final)
    loaded = store.load_session(SID)
    assert loaded[1] == final, "finalize keeps the checkpoint's place"
    assert [r.status for r in store.tool_calls(SID)] == [ToolCallStatus.pending]
    with pytest.raises(DuplicateMessageError):
        store.finalize(final)
    with pytest.raises(DuplicateMessageError):
        store.upsert_partial(partial)
    with pytest.raises(StoreError, match="partial"):
        store.upsert_partial(final)
    with pytest.raises(StoreError, match="partial"):
        store.finalize(partial)


def test_finalize_checks_and_a_bad_final_keeps_the_checkpoint(store: Store) -> None:
    final = assistant(SID)
    partial = final.model_copy(
        update={"metadata": final.metadata.model_copy(update={"status": MessageStatus.partial})}
    )
    store.upsert_partial(partial)
    broken = final.model_copy(update={"metadata": final.metadata.model_copy(update={"routing": None})})
    with pytest.raises(InvariantError, match=r"§5\.3\.2"):
        store.finalize(broken)
    assert store.load_session(SID) == [partial]
    store.finalize(final)
    assert store.load_session(SID) == [final]
    fresh = assistant(SID)
    store.finalize(fresh)  # no checkpoint: an append
    assert ids(store.load_session(SID)) == [final.id, fresh.id]


# --- the read paths ----------------------------------------------------------------------------------


def test_every_shape_reads_back_as_written(store: Store) -> None:
    for m in every_shape(SID):
        back = decode(encode(m), None)
        assert back == m
        assert back.model_dump(mode="json", exclude_none=True) == m.model_dump(mode="json", exclude_none=True)
        assert back == read_message(m.model_dump(mode="json"))
    thinking = every_shape(SID)[6]
    row = encode(thinking)
    assert '"cost_usd":"0.0000001"' in row[4], "decimals stay fixed-point in the stored JSON"
    usage = decode(row, None).metadata.usage
    assert usage is not None and usage.cost_usd == Decimal("1E-7")


def test_unknown_stored_parts_are_dropped_with_one_warning(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    m = user(SID)
    row = encode(m)
    odd = (
        row[0],
        row[1],
        row[2],
        row[3][:-1] + ',{"type":"hologram","data":"x"}]',
        row[4][:-1] + ',"org_id":"o"}',
        row[5],
        row[6],
    )
    with caplog.at_level("WARNING", logger="metis.compat"):
        out = decode(odd, None)
    assert out == m
    assert len(caplog.records) == 1 and "hologram" in caplog.text and "org_id" in caplog.text


def test_corrupt_rows_are_a_store_error(store: Store) -> None:
    if is_postgres(store):
        pytest.skip("a jsonb column holds only valid JSON")
    m = user(SID)
    store.append(m)
    assert store.path is not None
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE messages SET content_json = '[{' WHERE id = ?", (m.id,))
    with pytest.raises(StoreError, match="unreadable") as caught:
        store.load_session(SID)
    assert caught.value.message_id == m.id


def test_conversation_hash_survives_reopen(target: str) -> None:
    written = conversation(SID, 5)
    with open_store(target) as s:
        s.create_session("/w", session_id=SID)
        s.append_many(written)
    with open_store(target) as s:
        assert conversation_hash(s.load_session(SID)) == conversation_hash(written)


# --- async ---------------------------------------------------------------------------------------


async def test_async_store_runs_the_same_api(target: str) -> None:
    async with await AsyncStore.open(target) as s:
        info = await s.create_session("/w")
        written = conversation(info.id, 3)
        await asyncio.gather(*(s.append(m) for m in written[:1]))
        await s.append_many(written[1:])
        assert await s.load_session(info.id) == written
        assert (await s.get_session(info.id)).id == info.id
        assert [x.id for x in await s.list_sessions()] == [info.id]
        assert len(await s.tool_calls(info.id)) == 3
        assert await s.unanswered_tool_calls(info.id) == []
        assert await s.failed_tool_calls() == {}
        ids_map = ToolIdMap(info.id)
        ids_map.register_incoming("openai", "call_9")
        await s.save_tool_ids(info.id, ids_map)
        assert (await s.load_tool_ids(info.id)).to_dict() == ids_map.to_dict()
        final = assistant(info.id)
        partial = final.model_copy(
            update={"metadata": final.metadata.model_copy(update={"status": MessageStatus.partial})}
        )
        await s.upsert_partial(partial)
        await s.finalize(final)
        assert (await s.get_message(final.id)) == final
        await s.set_active_model(info.id, "openai:gpt-5")
        await s.delete_session(info.id)
        assert await s.list_sessions() == []


def test_messages_must_be_utc_but_any_utc_tzinfo_works(store: Store) -> None:
    from zoneinfo import ZoneInfo

    m = user(SID).model_copy(
        update={"created_at": datetime(2026, 5, 8, 12, 0, 0, 123456, tzinfo=ZoneInfo("UTC"))}
    )
    store.append(m)
    assert store.load_session(SID) == [m]
    assert store.load_session(SID)[0].created_at.microsecond == 123456
    assert message_hash(store.load_session(SID)[0]) == message_hash(m)


def test_stamp_helper_is_monotonic() -> None:
    assert stamp() < stamp()


# --- properties ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conversations())
def test_any_valid_conversation_round_trips(tmp_path: Path, drawn: tuple[list[Any], list[Any]]) -> None:
    messages, _ = drawn
    with Store.open(":memory:") as s:
        s.create_session(str(tmp_path), session_id=messages[0].session_id)
        s.append_many(messages)
        loaded = s.load_session(messages[0].session_id)
        assert conversation_hash(loaded) == conversation_hash(messages)
        assert [m.model_dump(mode="json") for m in loaded] == [m.model_dump(mode="json") for m in messages]
        calls = [b for m in messages for b in m.content if b.type == "tool_use"]
        assert len(s.tool_calls(messages[0].session_id)) == len(calls)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2026, 5, 8, 12, 0, 0, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ],
)
def test_times_are_exact_integer_microseconds(moment: datetime) -> None:
    micros = to_micros(moment)
    assert isinstance(micros, int)
    assert micros == (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert from_micros(micros) == moment


def test_unvalidated_garbage_is_refused_with_a_typed_error(store: Store) -> None:
    good = user(SID)
    naive = good.model_copy(update={"created_at": datetime(2026, 1, 1)})
    junk = good.model_copy(update={"id": new_message_id(), "content": [object()]})
    for bad in (naive, junk):
        with pytest.raises(StoreError, match="not a storable message"):
            store.append(bad)
    with pytest.raises(StoreError, match="not a storable message"):
        store.append("not even a message")  # type: ignore[arg-type]
    assert store.load_session(SID) == []


# --- a batch decides as appending its messages one at a time would ------------------------------

OTHER = "sess_other"


def _changed(m: Any, **update: Any) -> Any:
    return m.model_copy(update=update)  # no validation: what a caller may hand the store


def _broken_batches() -> list[list[Any]]:
    """Batches that fail, each in its own way, some only because of what came before."""
    call = tool_call(SID)
    tid = tool_ids_of(call)[0]
    answer = tool_result(SID, tid)
    base = [user(SID), call, answer]
    later = user(SID)
    offset = _changed(user(SID), created_at=datetime(2026, 5, 8, tzinfo=timezone(timedelta(hours=2))))
    foreign_call = tool_call(OTHER)
    return [
        [*base, answer.model_copy(update={"id": new_message_id()})],  # answered twice
        [*base, base[0]],  # the same message twice
        [later, later.model_copy()],  # duplicate id within the batch
        [tool_result(SID, new_tool_id())],  # answers nothing
        [*base, tool_call(SID, tool_id=tid)],  # tool id reused
        [foreign_call, tool_result(SID, tool_ids_of(foreign_call)[0])],  # crosses sessions
        [user(SID), offset],  # not UTC
        [user(SID), _changed(assistant(SID), content=[])],  # empty, complete
        [base[0], _changed(call, content=[]), call],  # a fault first
        [user(SID), user(SID), _changed(later, content=[])],  # faulty duplicate of `later`
        [message(SID, "system", []), message(OTHER, "user", [{"type": "text", "text": "hi"}])],
    ]


def _outcome(tmp: Path, batches: list[list[Any]], *, one_by_one: bool) -> tuple[Any, ...]:
    """Each batch appended whole (or its messages one at a time, stopping at the first
    error and undoing the batch): the errors raised and what the tables then hold."""
    errors: list[Any] = []
    path = tmp / f"{one_by_one}.sqlite3"
    with Store.open(path) as s:
        s.create_session("/w", session_id=SID)
        s.create_session("/w", session_id=OTHER)
        for batch in batches:
            try:
                if not one_by_one:
                    s.append_many(batch)
                else:
                    done: list[Any] = []
                    try:
                        for m in batch:
                            s.append(m)
                            done.append(m)
                    finally:
                        if len(done) != len(batch):
                            _forget(s, done)
                errors.append(None)
            except MetisError as exc:
                errors.append(
                    (type(exc).__name__, str(exc), [str(v) for v in getattr(exc, "violations", [])])
                )
    with sqlite3.connect(path) as conn:
        state = {
            t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall()
            for t in ("messages", "tool_calls")
        }
    return errors, state


def _forget(s: Store, done: list[Any]) -> None:
    """Undo appends (the one-at-a-time side of a batch that failed part-way)."""
    assert s.path is not None
    with sqlite3.connect(s.path) as conn:
        for m in reversed(done):
            conn.execute("DELETE FROM tool_calls WHERE message_id = ?", (m.id,))
            conn.execute(
                "UPDATE tool_calls SET status = 'pending', result_message_id = NULL, completed_at = NULL "
                "WHERE result_message_id = ?",
                (m.id,),
            )
            conn.execute("DELETE FROM messages WHERE id = ?", (m.id,))


def test_a_batch_refuses_what_appending_one_at_a_time_refuses(tmp_path: Path) -> None:
    batches = _broken_batches()
    batched = _outcome(tmp_path, batches, one_by_one=False)
    single = _outcome(tmp_path, batches, one_by_one=True)
    assert batched == single
    errors = batched[0]
    assert [e is None for e in errors] == [False] * 10 + [True]
    assert {e[0] for e in errors if e} == {"InvariantError", "DuplicateMessageError"}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=conversations(), drop=st.integers(0, 30))
def test_any_conversation_batched_or_not(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[list[Any], list[Any]], drop: int
) -> None:
    messages = [m.model_copy(update={"session_id": SID}) for m in drawn[0]]
    messages = [m for i, m in enumerate(messages) if i != drop]  # may orphan a result
    tmp = tmp_path_factory.mktemp("batches")
    halves = [messages[: len(messages) // 2], messages[len(messages) // 2 :]]
    assert _outcome(tmp, halves, one_by_one=False) == _outcome(tmp, halves, one_by_one=True)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 5, 8, 12, 0, 0, 123456, tzinfo=UTC),
        datetime(2026, 5, 8, 12, 0, 0, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999995, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_a_stored_time_reads_back_as_canonical_json_writes_it(store: Store, moment: datetime) -> None:
    """A settings revision's time is read back as a message's is (`_codec.from_micros`): the
    same instant, which the record's JSON writes as canonical JSON does."""
    from metis_schema.v3 import RequestOptions, SettingsRevision

    revision = SettingsRevision(
        session_id=SID, revision=1, tools=[], options=RequestOptions(), created_at=moment
    )
    store.put_settings([revision])
    read = store.settings(SID, 1)
    assert read is not None and read.created_at == moment
    assert read.model_dump(mode="json")["created_at"] == moment.isoformat().replace("+00:00", "Z")
