"""The database's own schema: spec §9.1's tables, plus the two the store needs, versioned.

The three tables of §9.1 (sessions, messages, tool_calls) and their indexes are copied as
the spec writes them, so any SQLite tool reading the file sees the documented layout.
Two tables are added: `tool_id_map` persists each session's ToolIdMap (the canonical ↔
provider tool id bindings of §6.2, which replay to a provider needs and which the
`tool_calls` row alone cannot hold: one call may be known to several providers), and
`metis_meta` records which version of this layout the file has.

That layout version is not the message schema_version (§10.1, a property of each row):
it changes when a table or index changes. `MIGRATIONS` lists the step from each older
layout to the next, so a newer metis upgrades an older file in place, in one transaction
(SQLite DDL is transactional); a file from a newer metis is refused, never rewritten.
Version 0 is a file holding only the §9.1 tables, as made by hand from the spec.

Layout 2 adds four nullable columns to `sessions` (`SESSION_LABELS`): a title and a
source, so sessions can be told apart in a list, and the parent session and fork point
of a session branched from another. They are added with ALTER TABLE, after the §9.1
columns, so the spec's columns keep their order and a §9.1 reader still finds them.
The parent is recorded, not a foreign key: a parent may be deleted after its forks, and
`metis store copy` may bring a fork before its parent, and neither should fail.

Layout 3 adds an index on `messages(session_id)` (`MESSAGE_ORDER`): in SQLite its entries
are (session_id, rowid), so reading a session a page at a time after a given rowid
(`Store.iter_messages`) is an index range scan; without it each page either re-sorted
the whole session or scanned every later row of the file.

Layout 4 adds two tables beside the others (`SETTINGS_TABLES`), none of §9.1's changed: a
session is the whole conversation, so it keeps the tool definitions and request options
its exchanges were sent with. `session_settings` holds one row per version of them (a
`SettingsRevision`: a new revision only when the tools or the options change),
`exchange_settings` one row per exchange naming the revision it was sent with (an
`ExchangeSettings`), keyed by the id of the exchange's reply. That id is chosen when the
request is built, before any reply exists, so the row has no foreign key to `messages`: a
request that failed before a reply was stored leaves a row whose message never came.
"""

from __future__ import annotations

from dataclasses import dataclass

DB_SCHEMA_VERSION = 5
"""Layout version this code writes and reads."""

SPEC_TABLES = """
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  workspace_path TEXT NOT NULL,
  active_model TEXT,
  routing_policy_json TEXT,
  schema_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  role TEXT NOT NULL,
  content_json TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  schema_version INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE INDEX IF NOT EXISTS idx_messages_session_created ON messages(session_id, created_at);

CREATE TABLE IF NOT EXISTS tool_calls (
  id TEXT PRIMARY KEY,                  -- canonical tool_use id
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,             -- the ASSISTANT message containing the tool_use
  result_message_id TEXT,               -- the TOOL message answering it (nullable)
  name TEXT NOT NULL,
  status TEXT NOT NULL,                 -- pending | succeeded | failed | cancelled
  provider_id TEXT,                     -- the provider's id at the time of generation
  provider TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  FOREIGN KEY (session_id) REFERENCES sessions(id),
  FOREIGN KEY (message_id) REFERENCES messages(id),
  FOREIGN KEY (result_message_id) REFERENCES messages(id)
);
CREATE INDEX IF NOT EXISTS idx_tool_calls_session_status ON tool_calls(session_id, status);
"""
"""Spec §9.1 verbatim (plus IF NOT EXISTS, so it also serves as the v0 → v1 repair)."""

STORE_TABLES = """
CREATE TABLE IF NOT EXISTS metis_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS tool_id_map (
  session_id TEXT NOT NULL,
  canonical TEXT NOT NULL,              -- tu_<ulid>
  provider TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  origin TEXT NOT NULL,                 -- provider | minted
  seq INTEGER NOT NULL,                 -- position in the session's ToolIdMap
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE INDEX IF NOT EXISTS idx_tool_id_map_canonical ON tool_id_map(session_id, canonical, provider);
"""
"""Tables the store adds beside the spec's."""

SESSION_LABELS = """
ALTER TABLE sessions ADD COLUMN title TEXT;
ALTER TABLE sessions ADD COLUMN source TEXT;
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
ALTER TABLE sessions ADD COLUMN fork_message_id TEXT;
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
"""
"""Layout 1 → 2: what a session is called, where it came from, and what it was forked from."""

MOVE_IMPORT_NOTES = """
UPDATE sessions SET
  title = CASE json_type(routing_policy_json, '$.title')
    WHEN 'text' THEN json_extract(routing_policy_json, '$.title') END,
  source = CASE json_type(routing_policy_json, '$.source')
    WHEN 'text' THEN json_extract(routing_policy_json, '$.source') END,
  routing_policy_json = json_remove(routing_policy_json, '$.title', '$.source')
WHERE json_valid(routing_policy_json) AND json_type(routing_policy_json, '$.imported_from') = 'text';
"""
"""Layout 1 → 2, data: `metis import` of layout 1 kept a session's title and source file as
notes in its routing policy (marked by `imported_from`); they move to the new columns."""

MESSAGE_ORDER = """
CREATE INDEX IF NOT EXISTS idx_messages_session_order ON messages(session_id);
"""
"""Layout 2 → 3: a session's messages in append (rowid) order, for paged reads."""

SETTINGS_TABLES = """
CREATE TABLE IF NOT EXISTS session_settings (
  session_id TEXT NOT NULL,
  revision INTEGER NOT NULL,            -- 1, 2, ... one per change
  tools_json TEXT NOT NULL,             -- list of ToolDefinition documents
  options_json TEXT NOT NULL,           -- a RequestOptions document
  created_at INTEGER NOT NULL,
  schema_version INTEGER NOT NULL,
  PRIMARY KEY (session_id, revision),
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS exchange_settings (
  message_id TEXT PRIMARY KEY,          -- the exchange's reply (chosen before it exists)
  session_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  FOREIGN KEY (session_id, revision) REFERENCES session_settings(session_id, revision)
);
CREATE INDEX IF NOT EXISTS idx_exchange_settings_session ON exchange_settings(session_id, revision);
"""
"""Layout 3 → 4: the tool sets and request options a session was sent with, versioned, and
the version each exchange carried (see the module doc)."""


GATEWAY_TABLES = """
CREATE TABLE IF NOT EXISTS session_tips (
  tip_key TEXT PRIMARY KEY,             -- prefix key of the conversation as its client saw it
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,             -- the message the conversation ends at
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_session_tips_session ON session_tips(session_id);

CREATE TABLE IF NOT EXISTS gateway_keys (
  id TEXT PRIMARY KEY,                  -- key_<ulid>, shown by `metis keys list`
  key_hash TEXT NOT NULL UNIQUE,        -- sha256 hex of the key (the key is never stored)
  prefix TEXT NOT NULL,                 -- the key's first characters, to recognize it
  name TEXT,
  user_id TEXT,
  team_id TEXT,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);

CREATE TABLE IF NOT EXISTS withheld_replies (
  message_id TEXT PRIMARY KEY,          -- a reply sent with `store: false`
  session_id TEXT NOT NULL
);
"""
"""Layout 4 → 5: the gateway's conversation tips, keys and withheld replies (see the module doc)."""


@dataclass(frozen=True)
class LayoutStep:
    """DDL taking a file from layout `from_version` to `from_version + 1`."""

    from_version: int
    sql: str
    note: str


MIGRATIONS: tuple[LayoutStep, ...] = (
    LayoutStep(0, SPEC_TABLES + STORE_TABLES, "add metis_meta and tool_id_map beside the §9.1 tables"),
    LayoutStep(
        1,
        SESSION_LABELS + MOVE_IMPORT_NOTES,
        "add the sessions' title, source, parent session and fork point; move import notes there",
    ),
    LayoutStep(2, MESSAGE_ORDER, "index the messages of a session in append order"),
    LayoutStep(3, SETTINGS_TABLES, "add the sessions' tool sets and request options, versioned"),
    LayoutStep(4, GATEWAY_TABLES, "add the gateway's conversation tips, keys and withheld replies"),
)
"""One step per layout bump, in order. A new layout appends a step; old steps never change."""

CREATE_CURRENT = (
    SPEC_TABLES + STORE_TABLES + SESSION_LABELS + MESSAGE_ORDER + SETTINGS_TABLES + GATEWAY_TABLES
)
"""DDL of a fresh file at DB_SCHEMA_VERSION."""

META_VERSION_KEY = "db_schema_version"


__all__ = [
    "CREATE_CURRENT",
    "DB_SCHEMA_VERSION",
    "GATEWAY_TABLES",
    "MESSAGE_ORDER",
    "META_VERSION_KEY",
    "MIGRATIONS",
    "MOVE_IMPORT_NOTES",
    "SESSION_LABELS",
    "SETTINGS_TABLES",
    "SPEC_TABLES",
    "STORE_TABLES",
    "LayoutStep",
]
