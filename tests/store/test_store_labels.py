"""Sessions' title, source and lineage (layout 2): stored, updated, copied, and upgraded into
files and databases written by the previous release."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from metis.errors import SessionNotFoundError, StoreError
from metis.store import DB_SCHEMA_VERSION, AsyncStore, Store, _sqlite_ddl, copy_store, open_store
from metis.store import _pg_ddl as pg_schema
from metis.store._codec import encode

from tests.support.paths import FIXTURES
from tests.support.store_support import BACKENDS, conversation, new_target, postgres, raw_rows

MODEL = "anthropic:claude-sonnet-4-6"
IMPORT_NOTES = (
    '{"default_model": "anthropic:claude-sonnet-4-6", "default_level": "workspace", '
    '"imported_from": "anthropic", "source": "traffic/a.json", "title": "Summarize README.md"}'
)
"""Routing policy of a session `metis import` of layout 1 wrote: title and source as notes."""


def test_labels_are_stored_and_read_back(target: str) -> None:
    with open_store(target) as s:
        made = s.create_session(
            "/w",
            session_id="sess_child",
            active_model=MODEL,
            title="Refactor the parser",
            source="chat",
            parent_session_id="sess_parent",
            fork_message_id="01HZ0000000000000000000000",
        )
        plain = s.create_session("/w", session_id="sess_plain")
        got = s.get_session("sess_child")
        assert got == made
        assert (got.title, got.source, got.parent_session_id, got.fork_message_id) == (
            "Refactor the parser",
            "chat",
            "sess_parent",
            "01HZ0000000000000000000000",
        )
        assert (plain.title, plain.source, plain.parent_session_id, plain.fork_message_id) == (None,) * 4
        assert {i.id: i.title for i in s.list_sessions()} == {
            "sess_child": "Refactor the parser",
            "sess_plain": None,
        }
    rows = raw_rows(target, "SELECT title, source FROM sessions WHERE id = ?", "sess_child")
    assert rows == [("Refactor the parser", "chat")]


def test_set_title_renames_and_marks_the_session_changed(target: str) -> None:
    with open_store(target) as s:
        before = s.create_session("/w", session_id="sess_a", source="demo")
        s.append_many(conversation("sess_a", 1))
        after = s.set_title("sess_a", "A better name")
        assert after.title == "A better name" and after.source == "demo"
        assert after.updated_at > before.updated_at
        assert s.get_session("sess_a") == after
        assert s.set_title("sess_a", None).title is None
        assert len(s.load_session("sess_a")) == 4, "renaming leaves the messages alone"
        with pytest.raises(SessionNotFoundError, match="sess_missing"):
            s.set_title("sess_missing", "x")


def test_bad_labels_are_refused_before_anything_is_written(target: str) -> None:
    with open_store(target) as s:
        with pytest.raises(StoreError, match="needs the parent session"):
            s.create_session("/w", session_id="sess_x", fork_message_id="01HZ0000000000000000000000")
        with pytest.raises(StoreError, match="title must be a string"):
            s.create_session("/w", session_id="sess_x", title=42)  # type: ignore[arg-type]
        with pytest.raises(StoreError, match="source must be a string of at most"):
            s.create_session("/w", session_id="sess_x", source="x" * 5000)
        s.create_session("/w", session_id="sess_y")
        with pytest.raises(StoreError, match="title must be a string"):
            s.set_title("sess_y", ["not", "text"])  # type: ignore[arg-type]
        assert [i.id for i in s.list_sessions()] == ["sess_y"]
        assert s.get_session("sess_y").title is None


def test_the_async_store_passes_labels_through(target: str) -> None:
    async def run() -> tuple[str | None, str | None, str | None]:
        store = AsyncStore(open_store(target))
        try:
            made = await store.create_session("/w", session_id="sess_a", source="import.json", title="t")
            renamed = await store.set_title("sess_a", "renamed")
            return made.source, made.title, renamed.title
        finally:
            await store.close()

    assert asyncio.run(run()) == ("import.json", "t", "renamed")


@pytest.mark.parametrize(("src_kind", "dst_kind"), [(a, b) for a in BACKENDS for b in BACKENDS if a != b])
def test_copy_carries_the_labels(tmp_path: Path, src_kind: str, dst_kind: str) -> None:
    src, dst = new_target(src_kind, tmp_path), new_target(dst_kind, tmp_path)
    with open_store(src) as a:
        a.create_session("/w", session_id="sess_p", title="parent", source="recorded/a.json")
        a.append_many(conversation("sess_p", 1))
        fork_at = a.load_session("sess_p")[1].id
        a.create_session(
            "/w",
            session_id="sess_f",
            title="fork",
            source="fork",
            parent_session_id="sess_p",
            fork_message_id=fork_at,
        )
    with open_store(src) as a, open_store(dst) as b:
        copy_store(a, b)
        labels = {
            i.id: (i.title, i.source, i.parent_session_id, i.fork_message_id) for i in b.list_sessions()
        }
        assert labels == {
            "sess_p": ("parent", "recorded/a.json", None, None),
            "sess_f": ("fork", "fork", "sess_p", fork_at),
        }
        a.set_title("sess_p", "parent, renamed")
        report = copy_store(a, b)
        assert (report.sessions_created, report.messages_copied) == (0, 0)
        assert b.get_session("sess_p").title == "parent, renamed"


# --- stores written by the previous release (layout 1) -------------------------------------------


def make_layout1_file(path: Path) -> list[object]:
    """A file exactly as the previous release wrote it: layout 1, a session with messages."""
    msgs = conversation("sess_old", 2)
    conn = sqlite3.connect(path)
    conn.executescript(_sqlite_ddl.SPEC_TABLES + _sqlite_ddl.STORE_TABLES)
    conn.execute("INSERT INTO metis_meta VALUES ('db_schema_version', '1')")
    conn.execute(
        "INSERT INTO sessions VALUES ('sess_old', '/old', ?, "
        """'{"default_model": "anthropic:claude-sonnet-4-6", "title": "not an import"}', 1, 1, 1)""",
        (MODEL,),
    )
    conn.execute("INSERT INTO sessions VALUES ('sess_imp', '/old', ?, ?, 1, 1, 2)", (MODEL, IMPORT_NOTES))
    for m in msgs:
        conn.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)", encode(m))
    conn.commit()
    conn.close()
    return list(msgs)


def test_a_layout1_sqlite_file_is_upgraded_in_place_and_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / "previous-release.sqlite3"
    msgs = make_layout1_file(path)
    with Store.open(path) as s:
        old = s.get_session("sess_old")
        assert (old.title, old.source, old.parent_session_id, old.fork_message_id) == (None,) * 4
        assert old.routing_policy == {"default_model": MODEL, "title": "not an import"}, "left as it was"
        imported = s.get_session("sess_imp")
        assert (imported.title, imported.source) == ("Summarize README.md", "traffic/a.json")
        assert imported.routing_policy == {
            "default_model": MODEL,
            "default_level": "workspace",
            "imported_from": "anthropic",
        }, "moved, not copied"
        assert s.load_session("sess_old") == msgs
        s.append_many(conversation("sess_old", 1))
        assert s.set_title("sess_old", "named now").title == "named now"
        s.create_session("/new", session_id="sess_new", title="new", source="chat")
        assert s.get_session("sess_new").source == "chat"
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM metis_meta").fetchone() == (str(DB_SCHEMA_VERSION),)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert [r[1] for r in conn.execute("PRAGMA table_info(sessions)")][-4:] == [
        "title",
        "source",
        "parent_session_id",
        "fork_message_id",
    ]
    conn.close()


def test_a_layout1_postgresql_database_is_migrated(tmp_path: Path) -> None:
    import psycopg

    url = postgres().fresh()
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in (s.strip() for s in pg_schema.TABLES_V1.split(";")):
            if statement:
                conn.execute(statement)  # type: ignore[call-overload]
        conn.execute("INSERT INTO metis_meta VALUES ('db_schema_version', '1')")
        conn.execute(
            "INSERT INTO sessions (id, workspace_path, active_model, routing_policy_json, schema_version, "
            "created_at, updated_at) VALUES ('sess_old', '/old', %s, NULL, 1, 1, 1), "
            "('sess_imp', '/old', %s, %s::jsonb, 1, 1, 2)",
            (MODEL, MODEL, IMPORT_NOTES),
        )
    with open_store(url) as s:
        assert s.get_session("sess_old").title is None
        imported = s.get_session("sess_imp")
        assert (imported.title, imported.source) == ("Summarize README.md", "traffic/a.json")
        assert imported.routing_policy is not None and "title" not in imported.routing_policy
        assert imported.routing_policy["imported_from"] == "anthropic"
        s.append_many(conversation("sess_old", 1))
        assert s.set_title("sess_old", "named").title == "named"
        s.create_session("/w", session_id="sess_f", parent_session_id="sess_old", source="fork")
        assert s.get_session("sess_f").parent_session_id == "sess_old"
    assert raw_rows(url, "SELECT value FROM metis_meta") == [(str(DB_SCHEMA_VERSION),)]
    indexes = {
        r[0] for r in raw_rows(url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
    }
    assert "idx_sessions_parent" in indexes


def test_the_previous_release_fixture_opens_upgraded_and_takes_titles(tmp_path: Path) -> None:
    """tests/fixtures/store_v1/store.sqlite3 was written by metis 0.1.0 (layout 1)."""
    import shutil

    path = tmp_path / "store.sqlite3"  # opening upgrades in place: never the committed file
    shutil.copyfile(FIXTURES / "store_v1" / "store.sqlite3", path)
    with Store.open(path) as s:
        infos = {i.id: i for i in s.list_sessions()}
        assert set(infos) == {"sess_v1_text", "sess_v1_tools", "sess_v1_thinking", "sess_v1_image"}
        assert all((i.title, i.source, i.parent_session_id) == (None, None, None) for i in infos.values())
        before = {sid: s.load_session(sid) for sid in infos}
        assert s.set_title("sess_v1_tools", "tool loop").title == "tool loop"
        assert {sid: s.load_session(sid) for sid in infos} == before, "the messages read back unchanged"
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM metis_meta").fetchone() == (str(DB_SCHEMA_VERSION),)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
