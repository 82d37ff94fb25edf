"""The database layout: spec §9.1's tables exactly, the store's own tables, and upgrades in place."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from metis.errors import StoreError
from metis.store import DB_SCHEMA_VERSION, Store, _layout, _sqlite_ddl
from metis.store._conn import RetryPolicy, connect
from metis.store._sqlite_ddl import LayoutStep

from tests.support.store_support import conversation, tool_ids_of

SPEC_DDL = """
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  workspace_path TEXT NOT NULL,
  active_model TEXT,
  routing_policy_json TEXT,
  schema_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  role TEXT NOT NULL,
  content_json TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  schema_version INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE INDEX idx_messages_session_created ON messages(session_id, created_at);
CREATE TABLE tool_calls (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  result_message_id TEXT,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  provider_id TEXT,
  provider TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  FOREIGN KEY (session_id) REFERENCES sessions(id),
  FOREIGN KEY (message_id) REFERENCES messages(id),
  FOREIGN KEY (result_message_id) REFERENCES messages(id)
);
CREATE INDEX idx_tool_calls_session_status ON tool_calls(session_id, status);
"""
"""Spec §9.1, transcribed by hand (comments dropped): the reference the store is held to."""


def describe(conn: sqlite3.Connection) -> dict[str, object]:
    """Columns (name, type, notnull, pk), foreign keys and indexes of every table."""
    out: dict[str, object] = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        out[table] = {
            "columns": [(r[1], r[2], r[3], r[5]) for r in conn.execute(f"PRAGMA table_info({table})")],
            "fks": sorted(tuple(r[2:5]) for r in conn.execute(f"PRAGMA foreign_key_list({table})")),
            "indexes": sorted(
                (r[1], tuple(c[2] for c in conn.execute(f"PRAGMA index_info({r[1]})")))
                for r in conn.execute(f"PRAGMA index_list({table})")
                if r[3] == "c"  # created by CREATE INDEX (not the primary key's own)
            ),
        }
    return out


def test_spec_tables_are_exactly_as_written(tmp_path: Path) -> None:
    reference = sqlite3.connect(":memory:")
    reference.executescript(SPEC_DDL)
    with Store.open(tmp_path / "m.sqlite3"):
        pass
    ours = describe(sqlite3.connect(tmp_path / "m.sqlite3"))
    spec = describe(reference)
    sessions, spec_sessions = ours.pop("sessions"), spec.pop("sessions")
    assert isinstance(sessions, dict) and isinstance(spec_sessions, dict)
    # The spec's columns first, as written; the layout-2 labels after them, nullable.
    n = len(spec_sessions["columns"])
    assert sessions["columns"][:n] == spec_sessions["columns"]
    assert sessions["columns"][n:] == [
        (name, "TEXT", 0, 0) for name in ("title", "source", "parent_session_id", "fork_message_id")
    ]
    assert sessions["fks"] == spec_sessions["fks"]
    assert sessions["indexes"] == [("idx_sessions_parent", ("parent_session_id",))]
    messages, spec_messages = ours["messages"], spec["messages"]
    assert isinstance(messages, dict) and isinstance(spec_messages, dict)
    # The spec's index, and layout 3's index of a session's messages in append order.
    assert messages["indexes"] == [
        *spec_messages["indexes"],
        ("idx_messages_session_order", ("session_id",)),
    ]
    ours["messages"] = {**messages, "indexes": spec_messages["indexes"]}
    assert {t: ours[t] for t in spec} == spec
    assert set(ours) == {
        *spec,
        "metis_meta",
        "tool_id_map",
        "session_settings",
        "exchange_settings",
        "session_tips",
        "gateway_keys",
        "withheld_replies",
    }
    # Layout 4: a session's tool sets and options, versioned, and the revision of each exchange.
    settings, exchanges = ours["session_settings"], ours["exchange_settings"]
    assert isinstance(settings, dict) and isinstance(exchanges, dict)
    assert [c[0] for c in settings["columns"]] == [
        "session_id",
        "revision",
        "tools_json",
        "options_json",
        "created_at",
        "schema_version",
    ]
    assert settings["fks"] == [("sessions", "session_id", "id")]
    assert [c[0] for c in exchanges["columns"]] == ["message_id", "session_id", "revision"]
    assert exchanges["fks"] == [
        ("session_settings", "revision", "revision"),
        ("session_settings", "session_id", "session_id"),
    ]
    tool_id_map = ours["tool_id_map"]
    assert isinstance(tool_id_map, dict)
    assert [c[0] for c in tool_id_map["columns"]] == [
        "session_id",
        "canonical",
        "provider",
        "provider_id",
        "origin",
        "seq",
    ]


def test_connection_settings(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.sqlite3") as store:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)
        assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
        assert conn.execute("SELECT value FROM metis_meta WHERE key = 'db_schema_version'").fetchone() == (
            str(DB_SCHEMA_VERSION),
        )
    with Store.open(tmp_path / "n.sqlite3", synchronous="NORMAL") as store:
        assert store._conn.execute("PRAGMA synchronous").fetchone() == (1,)
    with pytest.raises(StoreError, match="synchronous"):
        Store.open(tmp_path / "o.sqlite3", synchronous="OFF")


def test_foreign_keys_are_enforced(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.sqlite3") as store, pytest.raises(sqlite3.IntegrityError):
        store._conn.execute(
            "INSERT INTO messages VALUES ('01HZ0000000000000000000000', 'no_such_session', 'user', '[]', '{}', 0, 1)"
        )


def make_v0_file(path: Path) -> list[object]:
    """A file as made by hand from spec §9.1 (layout 0), holding one session of messages."""
    msgs = conversation("sess_old", 2)
    conn = sqlite3.connect(path)
    conn.executescript(SPEC_DDL)
    conn.execute(
        "INSERT INTO sessions VALUES ('sess_old', '/old', 'anthropic:claude-sonnet-4-6', NULL, 1, 1, 1)"
    )
    from metis.store._codec import encode

    for m in msgs:
        conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", encode(m))
    call = msgs[1]
    (tid,) = tool_ids_of(call)
    conn.execute(
        "INSERT INTO tool_calls VALUES (?, 'sess_old', ?, NULL, 'read_file', 'pending', 'toolu_9', 'anthropic', 0, NULL)",
        (tid, call.id),
    )
    conn.commit()
    conn.close()
    return list(msgs)


def test_a_v0_file_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    msgs = make_v0_file(path)
    conn = connect(path, RetryPolicy())
    assert _layout.layout_version(conn) == 0
    conn.close()

    with Store.open(path) as store:
        assert store.load_session("sess_old") == msgs
        assert store.tool_calls("sess_old")[0].provider_id == "toolu_9"
        assert len(store.load_tool_ids("sess_old")) == 0
        store.append_many(conversation("sess_old", 1))
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM metis_meta").fetchone() == (str(DB_SCHEMA_VERSION),)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_failed_upgrade_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.sqlite3"
    make_v0_file(path)
    before = describe(sqlite3.connect(path))
    broken = (
        LayoutStep(0, _sqlite_ddl.STORE_TABLES + "\nCREATE TABLE half_done (x);\nTHIS IS NOT SQL;", "broken"),
    )
    conn = connect(path, RetryPolicy())
    with pytest.raises(StoreError, match="syntax error"):
        _layout.upgrade(conn, RetryPolicy(), steps=broken, target=1)
    conn.close()
    assert describe(sqlite3.connect(path)) == before, "one transaction: nothing of the step remains"


def test_upgrade_runs_every_missing_step_in_order(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with Store.open(path):
        pass
    later = (
        *_sqlite_ddl.MIGRATIONS,
        LayoutStep(DB_SCHEMA_VERSION, "CREATE TABLE next_marker (x INTEGER);", "next"),
        LayoutStep(DB_SCHEMA_VERSION + 1, "ALTER TABLE next_marker ADD COLUMN y TEXT;", "after next"),
    )
    top = DB_SCHEMA_VERSION + 2
    conn = connect(path, RetryPolicy())
    assert _layout.upgrade(conn, RetryPolicy(), steps=later, target=top) == (DB_SCHEMA_VERSION, top)
    assert [r[1] for r in conn.execute("PRAGMA table_info(next_marker)")] == ["x", "y"]
    assert _layout.upgrade(conn, RetryPolicy(), steps=later, target=top) == (top, top)
    conn.close()
    # This metis knows layouts up to DB_SCHEMA_VERSION: it must refuse the newer file, not rewrite it.
    with pytest.raises(StoreError, match=re.escape(f"v{top} is newer")):
        Store.open(path)


def test_foreign_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    sqlite3.connect(path).executescript("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');")
    with pytest.raises(StoreError, match="not a metis database"):
        Store.open(path)
    assert sqlite3.connect(path).execute("SELECT x FROM notes").fetchall() == [("mine",)]


def test_two_stores_opening_a_fresh_file_agree(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    a, b = Store.open(path), Store.open(path)
    a.create_session("/w", session_id="s")
    assert b.get_session("s").workspace_path == "/w"
    a.close()
    b.close()


def test_memory_store_works() -> None:
    with Store.open(":memory:") as store:
        store.create_session("/w", session_id="s")
        msgs = conversation("s", 1)
        store.append_many(msgs)
        assert store.load_session("s") == msgs
        assert store.path is None


def test_unopenable_paths_are_a_store_error(tmp_path: Path) -> None:
    not_a_db = tmp_path / "garbage.sqlite3"
    not_a_db.write_bytes(b"this is not a database file at all" * 100)
    with pytest.raises(StoreError, match=r"cannot open|not a database"):
        Store.open(not_a_db)
    (tmp_path / "dir.sqlite3").mkdir()
    with pytest.raises(StoreError):
        Store.open(tmp_path / "dir.sqlite3")
