"""The §9.1 tables in PostgreSQL types, versioned, and their upgrade in one transaction.

The same tables, columns and indexes as the SQLite file (`_sqlite_ddl`), in PostgreSQL's
types: JSON columns are `jsonb`, times `bigint` microseconds since the epoch (UTC), as in
SQLite. One column is added: `messages.seq`, an identity that keeps append order (what
SQLite's rowid does); the store assigns it under the session's row lock, so within a
session it is commit order, which incremental reads (`load_session(after=...)`) rely on.

Layout 2 adds the sessions' title, source, parent session and fork point (see
`_sqlite_ddl.SESSION_LABELS`), nullable, as one ALTER TABLE. Layout 4 adds the sessions' tool
sets and request options and the revision each exchange was sent with (see
`_sqlite_ddl.SETTINGS_TABLES`), their documents as `jsonb`. Layout 5 adds the gateway's
conversation tips, keys and withheld replies (see `_sqlite_ddl.GATEWAY_TABLES`).

`MIGRATIONS` lists the DDL from each layout version to the next, as for SQLite; `upgrade`
applies the missing steps and records the new version in one transaction (PostgreSQL DDL
is transactional) under an advisory lock, so processes opening a fresh database at once
create it once, and a failed upgrade leaves the database as it was. A database of a newer
layout is refused, never rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import StoreError
from ._sql import Db
from ._sqlite_ddl import DB_SCHEMA_VERSION, META_VERSION_KEY, LayoutStep

TABLES_V1 = """
CREATE TABLE metis_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  workspace_path TEXT NOT NULL,
  active_model TEXT,
  routing_policy_json JSONB,
  schema_version INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL,
  content_json JSONB NOT NULL,
  metadata_json JSONB NOT NULL,
  created_at BIGINT NOT NULL,
  schema_version INTEGER NOT NULL,
  seq BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX idx_messages_session_created ON messages(session_id, created_at);
CREATE UNIQUE INDEX idx_messages_session_seq ON messages(session_id, seq);

CREATE TABLE tool_calls (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  message_id TEXT NOT NULL REFERENCES messages(id),
  result_message_id TEXT REFERENCES messages(id),
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  provider_id TEXT,
  provider TEXT,
  created_at BIGINT NOT NULL,
  completed_at BIGINT
);
CREATE INDEX idx_tool_calls_session_status ON tool_calls(session_id, status);

CREATE TABLE tool_id_map (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  canonical TEXT NOT NULL,
  provider TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE INDEX idx_tool_id_map_canonical ON tool_id_map(session_id, canonical, provider);
"""
"""Layout 1: spec §9.1's tables and indexes, the store's two, and `messages.seq`."""

SESSION_LABELS_V2 = """
ALTER TABLE sessions
  ADD COLUMN title TEXT,
  ADD COLUMN source TEXT,
  ADD COLUMN parent_session_id TEXT,
  ADD COLUMN fork_message_id TEXT;
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
UPDATE sessions SET
  title = CASE jsonb_typeof(routing_policy_json -> 'title')
    WHEN 'string' THEN routing_policy_json ->> 'title' END,
  source = CASE jsonb_typeof(routing_policy_json -> 'source')
    WHEN 'string' THEN routing_policy_json ->> 'source' END,
  routing_policy_json = routing_policy_json - 'title' - 'source'
WHERE jsonb_typeof(routing_policy_json -> 'imported_from') = 'string';
"""
"""Layout 1 → 2: what a session is called, where it came from, and what it was forked from;
the title and source file `metis import` kept in layout 1's routing policy notes move there
(as `_sqlite_ddl.MOVE_IMPORT_NOTES` does for SQLite)."""

MESSAGE_ORDER_V3 = """
CREATE UNIQUE INDEX IF NOT EXISTS idx_messages_session_seq ON messages(session_id, seq);
"""
"""Layout 2 → 3: SQLite's layout 3 indexes a session's messages in append order for paged
reads; PostgreSQL has had that index (on `seq`) since layout 1, so the step only makes
sure of it and the two databases keep one layout number."""

SETTINGS_TABLES_V4 = """
CREATE TABLE session_settings (
  session_id TEXT NOT NULL REFERENCES sessions(id),
  revision INTEGER NOT NULL,
  tools_json JSONB NOT NULL,
  options_json JSONB NOT NULL,
  created_at BIGINT NOT NULL,
  schema_version INTEGER NOT NULL,
  PRIMARY KEY (session_id, revision)
);
CREATE TABLE exchange_settings (
  message_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  FOREIGN KEY (session_id, revision) REFERENCES session_settings(session_id, revision)
);
CREATE INDEX idx_exchange_settings_session ON exchange_settings(session_id, revision);
"""
"""Layout 3 → 4: the sessions' tool sets and request options, versioned, and the revision
each exchange was sent with (as `_sqlite_ddl.SETTINGS_TABLES` for SQLite)."""

GATEWAY_TABLES_V5 = """
CREATE TABLE session_tips (
  tip_key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX idx_session_tips_session ON session_tips(session_id);
CREATE TABLE gateway_keys (
  id TEXT PRIMARY KEY,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT,
  user_id TEXT,
  team_id TEXT,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE TABLE withheld_replies (
  message_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL
);
"""
"""Layout 4 → 5: the gateway's conversation tips, keys and withheld replies (as
`_sqlite_ddl.GATEWAY_TABLES` for SQLite)."""

MIGRATIONS: tuple[LayoutStep, ...] = (
    LayoutStep(0, TABLES_V1, "create the layout-1 tables"),
    LayoutStep(1, SESSION_LABELS_V2, "add the sessions' title, source, parent session and fork point"),
    LayoutStep(2, MESSAGE_ORDER_V3, "index the messages of a session in append order"),
    LayoutStep(3, SETTINGS_TABLES_V4, "add the sessions' tool sets and request options, versioned"),
    LayoutStep(4, GATEWAY_TABLES_V5, "add the gateway's conversation tips, keys and withheld replies"),
)
"""One step per layout bump, in order (version 0: an empty database). Old steps never change."""

_LOCK_KEY = 0x6D65_7469_7331  # "metis1": the advisory lock every upgrading process takes


def layout_version(db: Db) -> int | None:
    """The database's layout version; None when it has none of the store's tables."""
    found = {
        row[0]
        for row in db.all(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name IN ('metis_meta', 'sessions', 'messages', 'tool_calls', 'tool_id_map')"
        )
    }
    if "metis_meta" in found:
        row = db.one("SELECT value FROM metis_meta WHERE key = ?", (META_VERSION_KEY,))
        if row is None:
            raise StoreError("metis_meta has no layout version", hint="the database was not set up by metis")
        return int(row[0])
    if found:
        raise StoreError(
            f"tables named like the store's but not made by metis: {', '.join(sorted(found))}",
            hint="point the store at a new database (or schema) or at one metis set up",
        )
    return None


def upgrade(
    db: Db, *, steps: Sequence[LayoutStep] = MIGRATIONS, target: int = DB_SCHEMA_VERSION
) -> tuple[int | None, int]:
    """Create or upgrade the layout to `target` inside the caller's transaction; returns
    (version found, version now)."""
    db.execute("SELECT pg_advisory_xact_lock(?)", (_LOCK_KEY,))
    found = layout_version(db)
    start = 0 if found is None else found
    if start > target:
        raise StoreError(
            f"database layout v{start} is newer than this metis understands (v{target})",
            hint="upgrade metis; an older metis never rewrites a newer database",
        )
    by_version = {step.from_version: step for step in steps}
    for version in range(start, target):
        step = by_version.get(version)
        if step is None:
            raise StoreError(f"no layout migration from v{version} to v{version + 1}")
        for statement in (s.strip() for s in step.sql.split(";")):
            if statement:
                db.execute(statement)
    if start != target:
        db.execute(
            "INSERT INTO metis_meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (META_VERSION_KEY, str(target)),
        )
    return found, target


__all__ = [
    "GATEWAY_TABLES_V5",
    "MESSAGE_ORDER_V3",
    "MIGRATIONS",
    "SESSION_LABELS_V2",
    "SETTINGS_TABLES_V4",
    "TABLES_V1",
    "layout_version",
    "upgrade",
]
