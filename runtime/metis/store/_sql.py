"""The statements that write `messages` and `tool_calls` rows, written once.

The store (`sqlite`) and the benchmark floors (`bench/bench_store.py`) write with these
very statements, so "the same rows with
the same SQL" holds by construction. Every value is a bound parameter.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

MESSAGE_COLUMNS = "id, session_id, role, content_json, metadata_json, created_at, schema_version"
TOOL_CALL_COLUMNS = (
    "id, session_id, message_id, result_message_id, name, status, provider_id, provider, "
    "created_at, completed_at"
)
INSERT_MESSAGE = f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
INSERT_TOOL_CALL = f"INSERT INTO tool_calls ({TOOL_CALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
ANSWER_OPEN_CALL = (
    "UPDATE tool_calls SET status = ?, result_message_id = ?, completed_at = ? "
    "WHERE id = ? AND session_id = ? AND result_message_id IS NULL"
)
"""Answer a call of the session that is still open: (status, result message id, completed
at, tool id, session id). It updates no row for a call answered before (the store has
checked, before writing, that the call is open)."""


TOUCH_SESSION = "UPDATE sessions SET updated_at = ? WHERE id = ?"
"""Mark a session changed: (updated at, session id)."""


def insert_tool_calls(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Write `tool_calls` rows (a function of its own so tests can make it fail midway)."""
    conn.executemany(INSERT_TOOL_CALL, rows)


__all__ = [
    "ANSWER_OPEN_CALL",
    "INSERT_MESSAGE",
    "INSERT_TOOL_CALL",
    "MESSAGE_COLUMNS",
    "TOOL_CALL_COLUMNS",
    "TOUCH_SESSION",
    "insert_tool_calls",
]
