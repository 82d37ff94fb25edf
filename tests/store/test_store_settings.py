"""A session's tool sets and request options in the store (layout 4), on SQLite and on a real
PostgreSQL server: versioned when they change, each exchange naming the revision it was sent
with, read back as the schema's own records, copied, deleted, and added to an older file in
place."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from metis.errors import NewerSchemaError, SessionNotFoundError, StoreError
from metis.ids import new_message_id
from metis.store import AsyncStore, Store, _sqlite_ddl, copy_store, open_store
from metis_schema.v3 import ExchangeSettings, RequestOptions, SettingsRevision, ToolDefinition

from tests.support.store_support import assistant, conversation, raw_rows, user

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather of a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    side_effects="network",
    requires_workspace=False,
)
READ_FILE = ToolDefinition(
    name="read_file",
    description="Read a file of the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    side_effects="read",
)
OPTIONS = RequestOptions.model_validate(
    {
        "max_tokens": 1024,
        "temperature": 0.5,
        "stop": ["END"],
        "tool_choice": "get_weather",
        "reasoning_effort": "low",
        "output_schema": {"name": "answer", "json_schema": {"type": "object"}, "strict": True},
        "provider_options": {"anthropic": {"top_k": 5, "metadata": {"user_id": "u-42"}}},
    }
)


def test_settings_are_versioned_when_they_change_and_each_exchange_names_its_revision(target: str) -> None:
    with open_store(target) as store:
        sid = store.create_session("/w").id
        assert store.settings(sid) is None and store.settings_revisions(sid) == []
        replies = [new_message_id() for _ in range(4)]
        assert store.record_settings(sid, [WEATHER], OPTIONS, reply_id=replies[0]) == 1
        assert store.record_settings(sid, [WEATHER], OPTIONS, reply_id=replies[1]) == 1  # unchanged
        assert store.record_settings(sid, [WEATHER, READ_FILE], OPTIONS, reply_id=replies[2]) == 2
        assert store.record_settings(sid, [WEATHER, READ_FILE], None, reply_id=replies[3]) == 3
        assert store.record_settings(sid, [WEATHER, READ_FILE]) == 3  # no reply: only what is in force

        latest = store.settings(sid)
        assert isinstance(latest, SettingsRevision)
        assert (latest.revision, [t.name for t in latest.tools], latest.options) == (
            3,
            ["get_weather", "read_file"],
            RequestOptions(),
        )
        first = store.settings(sid, 1)
        assert first is not None and first.tools == [WEATHER] and first.options == OPTIONS
        assert first.created_at.tzinfo is not None and first.created_at <= latest.created_at
        assert [r.revision for r in store.settings_revisions(sid)] == [1, 2, 3]
        assert store.settings(sid, 9) is None
        assert store.exchange_settings(sid) == [
            ExchangeSettings(session_id=sid, message_id=reply, revision=revision)
            for reply, revision in zip(replies, (1, 1, 2, 3), strict=True)
        ]
        # Another session numbers its own revisions.
        other = store.create_session("/w").id
        assert store.record_settings(other, [READ_FILE]) == 1


def test_the_rows_are_the_schema_records_in_the_databases_own_json(target: str) -> None:
    with open_store(target) as store:
        sid = store.create_session("/w").id
        reply = new_message_id()
        store.record_settings(sid, [WEATHER], OPTIONS, reply_id=reply)
    rows = raw_rows(target, "SELECT revision, tools_json, options_json, schema_version FROM session_settings")
    ((revision, tools, options, version),) = rows
    if isinstance(tools, str):  # SQLite keeps JSON text, PostgreSQL jsonb (psycopg reads it as values)
        import json

        tools, options = json.loads(tools), json.loads(options)
    assert revision == 1 and version == 3
    assert tools == [WEATHER.model_dump(mode="json", exclude_none=True)]
    assert options == OPTIONS.model_dump(mode="json", exclude_none=True)
    assert options["output_schema"]["json_schema"] == {"type": "object"}  # the record's name for it
    assert raw_rows(target, "SELECT message_id, session_id, revision FROM exchange_settings") == [
        (reply, sid, 1)
    ]


def test_refusals_write_nothing(target: str) -> None:
    with open_store(target) as store:
        sid = store.create_session("/w").id
        with pytest.raises(SessionNotFoundError):
            store.record_settings("sess_missing", [WEATHER])
        with pytest.raises(StoreError, match="not a message id"):
            store.record_settings(sid, [WEATHER], reply_id="msg_1")
        nan = ToolDefinition.model_construct(**{**WEATHER.model_dump(), "input_schema": {"x": float("nan")}})
        with pytest.raises(StoreError, match="not storable settings"):
            store.record_settings(sid, [nan])
        assert store.settings_revisions(sid) == [] and store.exchange_settings(sid) == []
        reply = new_message_id()
        store.record_settings(sid, [WEATHER], reply_id=reply)
        with pytest.raises(StoreError, match="already recorded"):  # a reply sent with one revision only
            store.record_settings(sid, [READ_FILE], reply_id=reply)
        assert [r.revision for r in store.settings_revisions(sid)] == [1], "the new revision was rolled back"
        with pytest.raises(StoreError, match="no settings revision 7"):
            store.put_settings(
                [], [ExchangeSettings(session_id=sid, message_id=new_message_id(), revision=7)]
            )
        moved = store.settings(sid, 1)
        assert moved is not None
        with pytest.raises(StoreError, match="another settings revision 1"):
            store.put_settings([moved.model_copy(update={"tools": [READ_FILE]})])


def test_delete_removes_them_and_copy_carries_them_both_ways(tmp_path: Path) -> None:
    from tests.support.store_support import postgres

    sqlite_path, url = str(tmp_path / "a.sqlite3"), postgres().fresh()
    with open_store(sqlite_path) as src, open_store(url) as pg:
        sid = src.create_session("/w").id
        history = conversation(sid, 1)
        src.record_settings(sid, [WEATHER], OPTIONS, reply_id=history[1].id)
        src.append_many(history)
        src.record_settings(sid, [WEATHER, READ_FILE], OPTIONS, reply_id=history[3].id)
        copy_store(src, pg)
        assert pg.settings_revisions(sid) == src.settings_revisions(sid)
        assert pg.exchange_settings(sid) == src.exchange_settings(sid)
        copy_store(src, pg)  # idempotent
        assert len(pg.settings_revisions(sid)) == 2
        back = str(tmp_path / "b.sqlite3")
        with open_store(back) as again:
            copy_store(pg, again)
            assert again.settings_revisions(sid) == src.settings_revisions(sid)
        src.delete_session(sid)
    assert raw_rows(sqlite_path, "SELECT COUNT(*) FROM session_settings") == [(0,)]
    assert raw_rows(sqlite_path, "SELECT COUNT(*) FROM exchange_settings") == [(0,)]


def test_a_revision_a_newer_metis_wrote_is_named_not_misread(target: str) -> None:
    with open_store(target) as store:
        sid = store.create_session("/w").id
        store.record_settings(sid, [WEATHER])
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute("UPDATE session_settings SET schema_version = 99")
    else:
        with sqlite3.connect(target) as conn:
            conn.execute("UPDATE session_settings SET schema_version = 99")
    with open_store(target) as store, pytest.raises(NewerSchemaError, match="schema v99") as caught:
        store.settings(sid)
    assert caught.value.row == f"{sid}/settings/1"


def test_a_layout_3_file_gains_the_tables_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    step3 = "\n".join(step.sql for step in _sqlite_ddl.MIGRATIONS[:3])
    conn.executescript(step3)
    conn.execute("INSERT INTO metis_meta VALUES ('db_schema_version', '3')")
    conn.execute(
        "INSERT INTO sessions (id, workspace_path, schema_version, created_at, updated_at) "
        "VALUES ('sess_old', '/w', 3, 0, 0)"
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.settings("sess_old") is None
        store.append(user("sess_old"))
        assert store.record_settings("sess_old", [WEATHER]) == 1
    assert raw_rows(str(path), "SELECT value FROM metis_meta") == [(str(_sqlite_ddl.DB_SCHEMA_VERSION),)]


def test_the_async_store_has_them_too(tmp_path: Path) -> None:
    async def main() -> None:
        async with await AsyncStore.open(tmp_path / "a.sqlite3") as store:
            sid = (await store.create_session("/w")).id
            reply = assistant(sid)
            assert await store.record_settings(sid, [WEATHER], OPTIONS, reply_id=reply.id) == 1
            latest = await store.settings(sid)
            assert latest is not None and latest.tools == [WEATHER]
            assert [r.revision for r in await store.settings_revisions(sid)] == [1]
            assert [e.message_id for e in await store.exchange_settings(sid)] == [reply.id]
            fork = (await store.create_session("/w")).id
            copied = latest.model_copy(
                update={"session_id": fork, "created_at": datetime(2026, 5, 8, tzinfo=UTC)}
            )
            assert await store.put_settings([copied]) == 1
            assert await store.put_settings([copied]) == 0

    asyncio.run(main())
