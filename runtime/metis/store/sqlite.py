"""The SQLite backend: one connection to one file, the zero-set-up default.

SQLite serializes writers itself; `_conn` makes every write transaction take the write
lock up front (BEGIN IMMEDIATE) and retries a busy file within a time budget, and
`_layout` brings the file to the current layout on open. One lock around the connection
makes the backend safe to share between threads.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from ..errors import StoreError
from . import _conn, _layout
from ._paths import default_path
from ._sql import SQLITE, Db, Dialect

T = TypeVar("T")
R = TypeVar("R")


class _Transaction(Protocol):
    """`_conn.write` or `_conn.read`: `fn` run in one transaction of the connection."""

    def __call__(
        self, conn: sqlite3.Connection, policy: _conn.RetryPolicy, fn: Callable[[sqlite3.Connection], R]
    ) -> R: ...


class SqliteBackend:
    """Transactions on one SQLite file (see module doc); `open` it."""

    def __init__(self, conn: sqlite3.Connection, path: Path | None, policy: _conn.RetryPolicy) -> None:
        self.conn = conn
        self._path = path
        self._policy = policy
        self._lock = threading.RLock()
        self._db = Db(SQLITE, conn.execute, conn.executemany)

    @property
    def dialect(self) -> Dialect:
        return SQLITE

    @property
    def path(self) -> Path | None:
        return self._path

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        retry: _conn.RetryPolicy | None = None,
        synchronous: str = "FULL",
    ) -> SqliteBackend:
        """The file at `path` (default: `default_path()`; ":memory:" for none), created or
        upgraded in place."""
        policy = retry or _conn.RetryPolicy()
        target: Path | None = None
        if path is None:
            target = default_path()
        elif str(path) != ":memory:":
            target = Path(path)
        conn = _conn.connect(target if target is not None else ":memory:", policy, synchronous=synchronous)
        try:
            _layout.upgrade(conn, policy)
        except BaseException:
            conn.close()
            raise
        return cls(conn, target, policy)

    def write(self, fn: Callable[[Db], T]) -> T:
        """`fn` in one BEGIN IMMEDIATE transaction, retried while the file is busy."""
        return self._locked(_conn.write, fn)

    def read(self, fn: Callable[[Db], T]) -> T:
        """`fn` in one read transaction (one snapshot)."""
        return self._locked(_conn.read, fn)

    def _locked(self, transaction: _Transaction, fn: Callable[[Db], T]) -> T:
        """`fn` inside `transaction` (`_conn.write` or `_conn.read`) on the one connection,
        under its lock; a SQLite error is a StoreError."""
        with self._lock:
            try:
                return transaction(self.conn, self._policy, lambda _: fn(self._db))
            except sqlite3.Error as exc:
                raise StoreError(f"sqlite: {exc}") from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self.conn.close()


__all__ = ["SqliteBackend"]
