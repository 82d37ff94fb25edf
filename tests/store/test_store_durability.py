"""No partial rows, ever: failures roll back whole, concurrent writers lose nothing, kill -9 is safe."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from metis.errors import StoreError
from metis.ids import ToolIdMap
from metis.store import RetryPolicy, Store, _sql, open_store
from metis.store import _store as store_core

from tests.support.paths import REPO
from tests.support.store_support import (
    raw_rows,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)

SID = "sess_durable"


@pytest.fixture
def store(target: str) -> Iterator[Store]:
    s = open_store(target)
    s.create_session("/w", session_id=SID)
    yield s
    s.close()


def counts(target: str | Path) -> tuple[int, int, int]:
    """Rows in messages, tool_calls and tool_id_map, read by the database's plain driver."""
    (row,) = raw_rows(
        str(target),
        "SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM tool_calls), "
        "(SELECT COUNT(*) FROM tool_id_map)",
    )
    return (int(row[0]), int(row[1]), int(row[2]))


def test_a_failure_inside_append_rolls_back_the_message_and_its_tool_calls(
    store: Store, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = tool_call(SID, calls=2)

    def explode(conn: Any, rows: object) -> None:
        conn.execute(
            "INSERT INTO tool_calls (id, session_id, message_id, name, status, created_at) "
            "VALUES ('tu_x', ?, ?, 'half', 'pending', 0)",
            (SID, call.id),
        )
        raise RuntimeError("disk on fire")

    before = store.get_session(SID)
    monkeypatch.setattr(_sql, "insert_tool_calls", explode)
    with pytest.raises(RuntimeError, match="disk on fire"):
        store.append(call)
    assert counts(target) == (0, 0, 0)
    assert store.get_session(SID) == before, "updated_at rolled back too"

    monkeypatch.undo()
    store.append(call)
    assert counts(target) == (1, 2, 0)


def test_a_failure_answering_a_call_rolls_back_the_result(
    store: Store, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = tool_call(SID)
    store.append(call)
    answer = tool_result(SID, tool_ids_of(call)[0])
    ids = ToolIdMap(SID)
    ids.register_incoming("openai", "call_1")

    def explode(conn: Any, tool_ids: ToolIdMap) -> None:
        raise OSError("no space left")

    monkeypatch.setattr(store_core, "_sync_tool_ids", explode)
    with pytest.raises(OSError, match="no space"):
        store.append(answer, tool_ids=ids)
    assert counts(target) == (1, 1, 0)
    assert store.tool_calls(SID)[0].result_message_id is None
    assert store.tool_calls(SID)[0].status == "pending"


def test_lock_held_too_long_is_a_store_error_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with Store.open(path) as s:
        s.create_session("/w", session_id=SID)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    impatient = Store.open(path, retry=RetryPolicy(busy_timeout_ms=5, budget_s=0.3))
    started = time.monotonic()
    with pytest.raises(StoreError, match="locked") as caught:
        impatient.append(user(SID))
    assert not isinstance(caught.value, sqlite3.Error)
    assert 0.2 < time.monotonic() - started < 5
    holder.execute("ROLLBACK")
    impatient.append(user(SID))
    assert counts(path)[0] == 1


def test_busy_is_retried_until_the_lock_frees(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with Store.open(path) as s:
        s.create_session("/w", session_id=SID)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    # busy_timeout alone (1 ms) would fail; the retry loop carries it past the lock.
    patient = Store.open(path, retry=RetryPolicy(busy_timeout_ms=1, budget_s=20))
    patient.append(user(SID))
    release.join()
    assert counts(path)[0] == 1


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from metis.store import RetryPolicy, Store
    from tests.support.store_support import conversation, user

    path, worker, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = Store.open(path, retry=RetryPolicy(busy_timeout_ms=1, budget_s=60))
    own = f"sess_w{{worker}}"
    store.create_session("/w", session_id=own)
    for i in range(rounds):
        shared = user("sess_shared", f"worker {{worker}} line {{i}}")
        store.append(shared)
        print(shared.id, flush=True)
        batch = conversation(own, 1)
        if i % 2:
            store.append_many(batch)
        else:
            for m in batch:
                store.append(m)
        for m in batch:
            print(m.id, flush=True)
    """
)


@pytest.mark.slow
def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    with Store.open(path) as s:
        s.create_session("/w", session_id="sess_shared")
    workers, rounds = 4, 40
    script = WRITER.format(repo=str(REPO))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(w), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err and "busy" not in err
    committed = [line for out, _ in outputs for line in out.split()]
    assert len(committed) == workers * rounds * 5

    with Store.open(path) as s:
        shared = s.load_session("sess_shared")
        assert len(shared) == workers * rounds
        stored = {m.id for m in shared}
        for w in range(workers):
            own = s.load_session(f"sess_w{w}")
            assert len(own) == rounds * 4
            stored |= {m.id for m in own}
            assert len(s.tool_calls(f"sess_w{w}")) == rounds
            assert s.unanswered_tool_calls(f"sess_w{w}") == []
        assert stored == set(committed)
        # Each writer's own lines keep their order in the shared session.
        for w in range(workers):
            lines = [m.content[0].text for m in shared if m.content[0].text.startswith(f"worker {w} ")]
            assert lines == [f"worker {w} line {i}" for i in range(rounds)]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


APPENDER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from metis.store import Store
    from tests.support.store_support import conversation

    store = Store.open(sys.argv[1])
    store.create_session("/w", session_id="sess_kill")
    while True:
        for m in conversation("sess_kill", 5):
            store.append(m)
            print(m.id, flush=True)
    """
)


@pytest.mark.slow
def test_kill_9_during_appends_loses_no_committed_message(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-c", APPENDER.format(repo=str(REPO)), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    committed: list[str] = []
    deadline = time.monotonic() + 60
    while len(committed) < 400 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert len(committed) >= 400, proc.stderr.read() if proc.stderr else ""
    # Lines printed after the last one we read may exist too; none may be missing.
    with Store.open(path) as s:
        loaded = s.load_session("sess_kill")
        stored = [m.id for m in loaded]
        assert stored[: len(committed)] == committed
        calls = s.tool_calls("sess_kill")
        assert {c.message_id for c in calls} <= set(stored)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
