"""The PostgreSQL backend: one store shared by processes on many machines.

A pool of psycopg 3 connections (psycopg-pool); each transaction borrows one. Writes
run at READ COMMITTED and begin by updating the rows of the sessions they write to
(`_store`), which locks them: writers of one session take turns, each seeing what the
previous one committed, while writers of different sessions run side by side. Reads run
in a REPEATABLE READ, READ ONLY transaction, so the statements of one read see one
snapshot.

What the database asks to be retried is retried, as the whole transaction function (its
checks run again against what the other writer committed), with jittered backoff within
the policy's time budget: a serialization failure or deadlock; a unique key taken by a
concurrent commit after this transaction's checks ran (run again, the checks see it and
say so, e.g. a DuplicateMessageError); a connection lost before COMMIT was sent (the
server rolled the transaction back: nothing of it was written; the pool checks and
replaces connections, so a restarted server is reconnected to). A connection lost while
the COMMIT was in flight is not retried: its outcome is unknown, and the caller gets a
StoreError saying so. Nothing is surfaced untyped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from .._logredact import remember_password
from ..errors import StoreError
from . import _pg_ddl
from ._conn import RetryPolicy
from ._sql import POSTGRESQL, Db, Dialect
from ._urls import redacted, url_passwords

T = TypeVar("T")

_RETRIED = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
_UNIQUE_RETRIES = 3
"""A key taken by a concurrent commit: run again, and the checks word the conflict. A key
still taken after this many runs is a conflict the checks do not see: reported."""


class PostgresBackend:
    """Transactions on a PostgreSQL database through a connection pool (see module doc)."""

    def __init__(self, pool: ConnectionPool[Any], policy: RetryPolicy, timeout: float) -> None:
        self._pool = pool
        self._policy = policy
        self._timeout = timeout

    @property
    def dialect(self) -> Dialect:
        return POSTGRESQL

    @property
    def path(self) -> Path | None:
        return None

    @classmethod
    def open(
        cls,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> PostgresBackend:
        """Connect to the database at `url` (a libpq URL, postgresql://user@host/db) and
        create or upgrade its tables. `timeout`: how long to wait for a connection (the
        server down, or every pooled connection busy) before a StoreError.

        The URL's passwords are never shown: errors name the URL `redacted`, and the pool's
        log records (each failed attempt, with libpq's message, which may quote a malformed
        password) pass through `metis._logredact`'s filter, told them first."""
        for password in url_passwords(url):
            remember_password(password)
        pool: ConnectionPool[Any] = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True},
            check=ConnectionPool.check_connection,
            open=False,
            name="metis-store",
        )
        try:
            pool.open(wait=True, timeout=timeout)
        except PoolTimeout as exc:
            pool.close()
            raise StoreError(
                f"cannot connect to PostgreSQL at {redacted(url)} within {timeout:g}s",
                hint="is the server running, and the URL's host, port, user and database right?",
            ) from exc
        backend = cls(pool, retry or RetryPolicy(), timeout)
        try:
            backend.write(_pg_ddl.upgrade)
        except BaseException:
            pool.close()
            raise
        return backend

    def write(self, fn: Callable[[Db], T]) -> T:
        """`fn` in one READ COMMITTED transaction, retried as the module doc says."""
        return self._run(fn, "BEGIN")

    def read(self, fn: Callable[[Db], T]) -> T:
        """`fn` in one read-only snapshot, retried when the connection was lost."""
        return self._run(fn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def close(self) -> None:
        """Close every pooled connection (idempotent)."""
        self._pool.close()

    def _run(self, fn: Callable[[Db], T], begin: str) -> T:
        policy = self._policy
        deadline = time.monotonic() + policy.budget_s
        backoff = policy.first_backoff_s
        attempts = unique = 0
        while True:
            attempts += 1
            committing = False
            try:
                with self._pool.connection(timeout=self._timeout) as conn:
                    conn.execute(begin)
                    try:
                        result = fn(
                            Db(POSTGRESQL, conn.execute, lambda s, r: conn.cursor().executemany(s, r))
                        )
                        committing = True
                        conn.execute("COMMIT")
                    except BaseException:
                        _rollback(conn)
                        raise
                    return result
            except _RETRIED as exc:
                reason: psycopg.Error = exc
            except pg_errors.UniqueViolation as exc:
                unique += 1
                if unique > _UNIQUE_RETRIES:
                    raise StoreError(f"postgresql: {exc}") from exc
                reason = exc
            except psycopg.OperationalError as exc:
                if not _connection_lost(exc):
                    raise StoreError(f"postgresql: {exc}") from exc
                if committing:
                    raise StoreError(
                        f"postgresql: the connection was lost while committing; the write may or may "
                        f"not have been stored: {exc}",
                        hint="read the session back before writing it again",
                    ) from exc
                reason = exc
            except PoolTimeout as exc:
                raise StoreError(
                    f"postgresql: no connection within {self._timeout:g}s: {exc}",
                    hint="is the server running? (every pooled connection may also be busy)",
                ) from exc
            except psycopg.Error as exc:
                raise StoreError(f"postgresql: {exc}") from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreError(
                    f"postgresql: gave up after {attempts} attempts in {policy.budget_s:.1f}s: {reason}",
                    hint="the database kept refusing the transaction; retry later",
                ) from reason
            time.sleep(min(backoff * (0.5 + random.random()), remaining))
            backoff = min(backoff * 2, policy.max_backoff_s)


def _connection_lost(exc: psycopg.OperationalError) -> bool:
    """The connection broke (no SQLSTATE: the client saw it go), or the server is shutting
    down or starting (class 57P) or refused the connection (class 08): worth a new one."""
    state = exc.sqlstate
    return state is None or state.startswith(("57P", "08"))


def _rollback(conn: psycopg.Connection[Any]) -> None:
    """End a failed transaction, when the connection still can (a broken one the pool drops)."""
    if not conn.closed and conn.info.transaction_status in (
        TransactionStatus.INTRANS,
        TransactionStatus.INERROR,
    ):
        with suppress(psycopg.Error):  # the connection broke meanwhile: the server rolls back
            conn.execute("ROLLBACK")


__all__ = ["PostgresBackend"]
