"""Bring a database file to the layout this code expects, in place, in one transaction.

Run once per `Store.open`. The layout version is first read without the write lock (no
tables: a fresh file; the §9.1 tables without `metis_meta`: layout 0), so opening a file
that is current never waits for another process's writes. Otherwise, under BEGIN
IMMEDIATE, the version is read again, the missing steps of `_sqlite_ddl.MIGRATIONS` run in
order, and the new version is recorded — all in one transaction, so a failed upgrade
leaves the file exactly as it was and two processes opening a fresh file at once cannot
both create it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..errors import StoreError
from ._conn import RetryPolicy, read, split_sql, write
from ._sqlite_ddl import CREATE_CURRENT, DB_SCHEMA_VERSION, META_VERSION_KEY, MIGRATIONS, LayoutStep


def layout_version(conn: sqlite3.Connection) -> int | None:
    """The file's layout version; None for an empty file."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "metis_meta" in tables:
        row = conn.execute("SELECT value FROM metis_meta WHERE key = ?", (META_VERSION_KEY,)).fetchone()
        if row is None:
            raise StoreError("metis_meta has no layout version", hint="the file was not written by metis")
        try:
            return int(row[0])
        except ValueError as exc:
            raise StoreError(f"metis_meta layout version {row[0]!r} is not an integer") from exc
    if "messages" in tables or "sessions" in tables:
        return 0
    if tables:
        raise StoreError(
            f"not a metis database (tables: {', '.join(sorted(tables))})",
            hint="point the store at a new file or at one metis created",
        )
    return None


def _run(conn: sqlite3.Connection, script: str) -> None:
    for statement in split_sql(script):
        conn.execute(statement)


def _set_version(conn: sqlite3.Connection, version: int) -> None:
    conn.execute(
        "INSERT INTO metis_meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (META_VERSION_KEY, str(version)),
    )


def upgrade(
    conn: sqlite3.Connection,
    policy: RetryPolicy,
    *,
    steps: Sequence[LayoutStep] = MIGRATIONS,
    target: int = DB_SCHEMA_VERSION,
) -> tuple[int | None, int]:
    """Create or upgrade the layout to `target`; returns (version found, version now)."""
    found = read(conn, policy, layout_version)
    if found == target:
        return found, target

    def apply(c: sqlite3.Connection) -> tuple[int | None, int]:
        found = layout_version(c)
        if found is None:
            _run(c, CREATE_CURRENT if target == DB_SCHEMA_VERSION else _script_upto(steps, 0, target))
            _set_version(c, target)
            return None, target
        if found > target:
            raise StoreError(
                f"database layout v{found} is newer than this metis understands (v{target})",
                hint="upgrade metis; an older metis never rewrites a newer file",
            )
        if found < target:
            _run(c, _script_upto(steps, found, target))
            _set_version(c, target)
        return found, target

    return write(conn, policy, apply)


def _script_upto(steps: Sequence[LayoutStep], start: int, target: int) -> str:
    by_version = {step.from_version: step for step in steps}
    parts = []
    for version in range(start, target):
        step = by_version.get(version)
        if step is None:
            raise StoreError(f"no layout migration from v{version} to v{version + 1}")
        parts.append(step.sql)
    return "\n".join(parts)


__all__ = ["layout_version", "upgrade"]
