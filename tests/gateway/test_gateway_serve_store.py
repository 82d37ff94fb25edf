"""`metis serve`'s store: SQLite opened with synchronous=NORMAL (WAL), so a commit does
not wait for an fsync on the event loop (bench/README.md, gateway section), while a
committed exchange still survives the process."""

from __future__ import annotations

from pathlib import Path

import pytest
from metis.gateway.serve import store_from_env


def test_sqlite_store_commits_without_waiting_for_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METIS_DB", str(tmp_path / "gateway.sqlite3"))
    store = store_from_env()
    try:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL (FULL is 2)
    finally:
        store.close()
