"""SQLite connections and transactions that survive other writers.

Several processes may append to one file (two terminals on one session, a CLI beside an
agent loop). SQLite serializes writers; what must not happen is a caller seeing
"database is locked". So every write transaction starts with BEGIN IMMEDIATE (it takes
the write lock up front, so a transaction never fails half-way for want of it), the
connection has a busy timeout (SQLite's own wait), and on top of that SQLITE_BUSY is
retried with jittered exponential backoff until a time budget is spent; only then is it
reported, as a StoreError. The retried unit is the whole transaction function, so its
reads and checks run again against what the other writer committed.

Connections run in autocommit mode (isolation_level=None): the sqlite3 module's implicit
transactions would otherwise begin and commit behind our back.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

from ..errors import StoreError

T = TypeVar("T")

_BUSY_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep trying when another connection holds the lock."""

    busy_timeout_ms: int = 5_000
    """SQLite's own wait inside each attempt."""
    budget_s: float = 30.0
    """Total time spent on one operation before giving up."""
    first_backoff_s: float = 0.002
    max_backoff_s: float = 0.25


def is_busy(exc: BaseException) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED (including extended codes)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    text = str(exc)
    return "locked" in text or "busy" in text


class DecimalSum:
    """`metis_decimal_sum(x)`, a SQLite aggregate: the exact sum of decimal strings (costs),
    as text; values that are not decimals are skipped, NULL when none is one."""

    def __init__(self) -> None:
        self.total: Decimal | None = None

    def step(self, value: object, /) -> None:
        if isinstance(value, str | int):
            try:
                number = Decimal(value)
            except ArithmeticError:  # not a decimal: a damaged value, not counted
                return
            if number.is_finite():
                self.total = number if self.total is None else self.total + number

    def finalize(self) -> str | None:
        return None if self.total is None else str(self.total)


def connect(path: Path | str, policy: RetryPolicy, *, synchronous: str = "FULL") -> sqlite3.Connection:
    """Open `path` with WAL, foreign keys and a busy timeout; the file is made owner-only."""
    if synchronous.upper() not in {"FULL", "NORMAL", "EXTRA"}:
        raise StoreError(f"unsupported synchronous mode {synchronous!r}", hint="FULL, NORMAL or EXTRA")
    try:
        if str(path) != ":memory:":
            _create_private(Path(path))
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the store at {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(policy.busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # typeshed types an aggregate's values as int only; sqlite3 passes any SQL value
        conn.create_aggregate("metis_decimal_sum", 1, DecimalSum)  # type: ignore[arg-type]
        with_retry(policy, lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
        conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"cannot open the store at {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _create_private(path: Path) -> None:
    """Create the file 0600 (and its directory 0700) before SQLite does: it holds conversations."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def with_retry(policy: RetryPolicy, fn: Callable[[], T]) -> T:
    """Run `fn`, retrying on SQLITE_BUSY with jittered backoff until the budget is spent."""
    deadline = time.monotonic() + policy.budget_s
    backoff = policy.first_backoff_s
    attempts = 0
    while True:
        attempts += 1
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise StoreError(f"sqlite: {exc}") from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreError(
                    f"database stayed locked by another writer for {policy.budget_s:.1f}s "
                    f"({attempts} attempts): {exc}",
                    hint="another process holds a long write transaction; retry later",
                ) from exc
            time.sleep(min(backoff * (0.5 + random.random()), remaining))
            backoff = min(backoff * 2, policy.max_backoff_s)


def write(conn: sqlite3.Connection, policy: RetryPolicy, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run `fn` in one BEGIN IMMEDIATE transaction: all of it commits, or none of it."""

    def attempt() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    return with_retry(policy, attempt)


def read(conn: sqlite3.Connection, policy: RetryPolicy, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run `fn` in one read transaction, so multi-statement reads see one snapshot."""

    def attempt() -> T:
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    return with_retry(policy, attempt)


def split_sql(script: str) -> list[str]:
    """Split DDL into statements (executescript would COMMIT our open transaction)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines(keepends=True):
        current.append(line)
        text = "".join(current)
        if sqlite3.complete_statement(text):
            if text.strip():
                statements.append(text.strip())
            current = []
    rest = "".join(current).strip()
    if rest:
        statements.append(rest)
    return statements


__all__ = ["RetryPolicy", "connect", "is_busy", "read", "split_sql", "with_retry", "write"]
