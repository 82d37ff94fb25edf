"""`open_store(target)`: the one place a store is chosen, by path or URL.

Wherever metis takes a store — `Client(store=...)`, the CLI's `--db` and `METIS_DB` — it
passes the string here: a path (or `sqlite:///path`, or nothing for the per-user default)
is a SQLite file; a `postgresql://` (or `postgres://`) URL is a PostgreSQL database.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import StoreError
from ._codec import Reader
from ._store import Store
from ._urls import SQLITE_SCHEME, is_postgres_url
from .sqlite import SqliteBackend


def open_store(
    target: str | os.PathLike[str] | None = None, *, reader: Reader | None = None, **options: Any
) -> Store:
    """The store at `target` (see module doc), created or upgraded in place.

    `options` go to the backend: `retry`, `synchronous` for SQLite (see `Store.open`);
    `min_size`, `max_size`, `timeout`, `retry` for PostgreSQL (see
    `postgres.PostgresBackend.open`). `reader` replaces the document reader.
    """
    if is_postgres_url(target):
        from .postgres import PostgresBackend  # psycopg only when PostgreSQL is asked for

        return Store(PostgresBackend.open(str(target), **options), reader)
    path: str | os.PathLike[str] | None = target
    if isinstance(target, str) and target.startswith(SQLITE_SCHEME):
        rest = target.removeprefix(SQLITE_SCHEME)
        if not rest.startswith("/"):
            raise StoreError(
                f"not a SQLite URL: {target!r}", hint="sqlite:///relative/path or sqlite:////abs/path"
            )
        path = rest[1:] or ":memory:"
    elif isinstance(target, str) and "://" in target:
        raise StoreError(
            f"unknown store URL scheme: {target.split('://', 1)[0]!r}",
            hint="a SQLite path, sqlite:///path, or postgresql://user@host/database",
        )
    return Store(SqliteBackend.open(path, **options), reader)


__all__ = ["open_store"]
