"""Persistence of canonical conversations in SQLite (spec §9).

`Store.open()` opens the per-user database (or the file you name); `AsyncStore` is the
same API for asyncio code. Messages are checked against spec §5 on the way in, kept as
canonical JSON, and read back as canonical models, older schema versions migrated.

Modules: `sqlite` (the Store), `_schema`/`_layout` (tables and their in-place upgrade),
`_conn` (transactions and retry under concurrent writers), `_codec` (rows <-> models),
`_checks` (what an append must satisfy), `_paths` (where the file lives).
"""

from __future__ import annotations

from ._aio import AsyncStore
from ._conn import RetryPolicy
from ._open import open_store
from ._paths import default_path, metis_home
from ._schema import DB_SCHEMA_VERSION
from ._store import Store
from ._types import DuplicateMessageError, SessionInfo, ToolCallRecord, ToolCallStatus

__all__ = [
    "DB_SCHEMA_VERSION",
    "AsyncStore",
    "DuplicateMessageError",
    "RetryPolicy",
    "SessionInfo",
    "Store",
    "ToolCallRecord",
    "ToolCallStatus",
    "default_path",
    "metis_home",
    "open_store",
]
