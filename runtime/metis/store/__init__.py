"""Persistence of canonical conversations in SQLite or PostgreSQL (spec §9).

`open_store(target)` opens the store a path or URL names (`Store.open()`: the per-user
SQLite file, or the file you name); `AsyncStore` is the same API for asyncio code.
Messages are checked against spec §5 on the way in, kept as canonical JSON, and read back
as canonical models, older schema versions migrated. A session is read whole
(`load_session`, `read_session`) or a page at a time (`iter_messages`, `read_pages`), the
latter holding one page however long the session is. What the store writes it reads
back: an integer past the JSON reader's bound (`metis._json.MAX_INT_DIGITS`) is refused
at write, with a StoreError naming where it is. Beside its messages a session keeps the
tool definitions and request options its exchanges were sent with, versioned when they
change (`record_settings`, `settings`, `exchange_settings`: schema v3's `SettingsRevision`
and `ExchangeSettings`).

Modules: `_store` (the Store, over either backend), `sqlite` and `postgres` (the backends:
transactions and retry under concurrent writers; `_conn` for SQLite), `_sqlite_ddl`/`_layout`
and `_pg_ddl` (tables and their in-place upgrade), `_sql` (the SQL, and what each
database spells differently), `_codec` (rows <-> models), `_settings` (a session's tool
sets and request options, versioned), `_checks` (what an append must satisfy), `_open` (a
path or URL -> a store), `_copy` (one store into another), `_paths` (where the file
lives).
"""

from __future__ import annotations

from ._aio import AsyncStore
from ._conn import RetryPolicy
from ._copy import CopyReport, copy_store
from ._open import open_store
from ._paths import default_path, metis_home
from ._sqlite_ddl import DB_SCHEMA_VERSION
from ._store import Store
from ._types import DuplicateMessageError, SessionInfo, SessionStats, ToolCallRecord, ToolCallStatus

__all__ = [
    "DB_SCHEMA_VERSION",
    "AsyncStore",
    "CopyReport",
    "DuplicateMessageError",
    "RetryPolicy",
    "SessionInfo",
    "SessionStats",
    "Store",
    "ToolCallRecord",
    "ToolCallStatus",
    "copy_store",
    "default_path",
    "metis_home",
    "open_store",
]
