"""The store's SQL, written once for both databases, and the few places where they differ.

Every statement is written here (or beside the code that runs it) in one text, with `?`
parameters. What SQLite and PostgreSQL spell differently is a `Dialect` field: how a list
of ids becomes a table, how a JSON column is read as text or a field out of it, which
column keeps append order. `Db` runs that text on one connection inside one transaction,
in the connection's own parameter style. Every value is a bound parameter; no part of a
message ever becomes SQL text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

MESSAGE_COLUMNS = "id, session_id, role, content_json, metadata_json, created_at, schema_version"
TOOL_CALL_COLUMNS = (
    "id, session_id, message_id, result_message_id, name, status, provider_id, provider, "
    "created_at, completed_at"
)
SESSION_LABEL_COLUMNS = "title, source, parent_session_id, fork_message_id"
SESSION_COLUMNS = (
    "id, workspace_path, active_model, routing_policy_json, schema_version, created_at, updated_at, "
    + SESSION_LABEL_COLUMNS
)
INSERT_TOOL_CALL = f"INSERT INTO tool_calls ({TOOL_CALL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
ANSWER_OPEN_CALL = (
    "UPDATE tool_calls SET status = ?, result_message_id = ?, completed_at = ? "
    "WHERE id = ? AND session_id = ? AND result_message_id IS NULL"
)
"""Answer a call of the session that is still open: (status, result message id, completed
at, tool id, session id). It updates no row for a call answered before (the store has
checked, before writing, that the call is open)."""

TOUCH_SESSION = "UPDATE sessions SET updated_at = ? WHERE id = ?"
"""Mark a session changed: (updated at, session id). On PostgreSQL it also locks the
session's row until the transaction ends, which is what serializes writers of a session."""


@dataclass(frozen=True)
class Dialect:
    """What one database spells differently (see module doc)."""

    name: str
    ids: str
    """A table `j` of the ids in one parameter (a JSON array), its column named `value`,
    joined to the table that follows it, driving one index probe per id (SQLite's CROSS
    JOIN keeps that order; PostgreSQL's planner finds it)."""
    status_of: str
    """`{}`, a `metadata_json` column, -> the message's status as text."""
    order: str
    """The `messages` column that keeps append order."""
    json_out: str
    """`{}`, a JSON column, read as JSON text."""
    json_in: str
    """The parameter of a JSON column."""
    json_shaped: str
    """True when a row's `content_json` is a JSON array and its `metadata_json` an object
    (on SQLite, also: both are JSON at all), never failing on a damaged row."""
    usage_number: str
    """`{}`, a key of `metadata.usage`, -> its value as a number (a token count)."""
    usage_decimal: str
    """`{}`, a key of `metadata.usage` holding a decimal string (`cost_usd`), -> its value
    as `decimal_sum` takes it (PostgreSQL: numeric, NULL when it is not a decimal)."""
    decimal_sum: str
    """`{}` -> the exact sum of `usage_decimal` values: PostgreSQL's numeric SUM; on SQLite
    `_conn.DecimalSum`, which sums them as Python Decimals (SQLite's SUM adds floats)."""
    has_usage: str
    """True when the row's metadata has a `usage` object."""
    usage_text: str
    """`{}`, a key of `metadata.usage`, -> its value as text."""
    meta_text: str
    """`{}`, a top-level key of `metadata` (`user_id`, `model`), -> its value as text."""
    placeholder: str = "?"
    _texts: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def text(self, sql: str) -> str:
        """`sql` (written with `?` parameters) in this database's parameter style."""
        if self.placeholder == "?":
            return sql
        out = self._texts.get(sql)
        if out is None:
            out = self._texts[sql] = sql.replace("?", self.placeholder)
        return out

    @property
    def insert_message(self) -> str:
        j = self.json_in
        return f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES (?, ?, ?, {j}, {j}, ?, ?)"

    @property
    def replace_partial(self) -> str:
        j = self.json_in
        return (
            f"UPDATE messages SET role = ?, content_json = {j}, metadata_json = {j}, created_at = ?, "
            "schema_version = ? WHERE id = ?"
        )

    @property
    def insert_session(self) -> str:
        return (
            f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, {self.json_in}, ?, ?, ?, ?, ?, ?, ?)"
        )

    @property
    def message_columns(self) -> str:
        j = self.json_out
        return (
            f"id, session_id, role, {j.format('content_json')}, {j.format('metadata_json')}, "
            "created_at, schema_version"
        )

    @property
    def session_columns(self) -> str:
        policy = self.json_out.format("routing_policy_json")
        return (
            f"id, workspace_path, active_model, {policy}, schema_version, created_at, updated_at, "
            + SESSION_LABEL_COLUMNS
        )


SQLITE = Dialect(
    name="sqlite",
    ids="json_each(?) AS j CROSS JOIN",
    status_of="json_extract({}, '$.status')",
    order="rowid",
    json_out="{}",
    json_in="?",
    json_shaped=(
        "CASE WHEN json_valid(content_json) AND json_valid(metadata_json) THEN "
        "json_type(content_json) = 'array' AND json_type(metadata_json) = 'object' ELSE 0 END"
    ),
    usage_number="CAST(json_extract(metadata_json, '$.usage.{}') AS INTEGER)",
    usage_decimal="json_extract(metadata_json, '$.usage.{}')",
    decimal_sum="metis_decimal_sum({})",
    has_usage="json_type(metadata_json, '$.usage') = 'object'",
    usage_text="json_extract(metadata_json, '$.usage.{}')",
    meta_text="json_extract(metadata_json, '$.{}')",
)
POSTGRESQL = Dialect(
    name="postgresql",
    ids="jsonb_array_elements_text(?::jsonb) AS j(value) JOIN",
    status_of="({} ->> 'status')",
    order="seq",
    json_out="{}::text",
    json_in="?::jsonb",
    json_shaped="jsonb_typeof(content_json) = 'array' AND jsonb_typeof(metadata_json) = 'object'",
    usage_number=(
        "CASE WHEN jsonb_typeof(metadata_json #> '{{usage,{0}}}') = 'number' "
        "THEN (metadata_json #>> '{{usage,{0}}}')::numeric END"
    ),
    usage_decimal=(
        "CASE WHEN (metadata_json #>> '{{usage,{0}}}') ~ '^-{{0,1}}[0-9]+([.][0-9]+){{0,1}}$' "
        "THEN (metadata_json #>> '{{usage,{0}}}')::numeric END"
    ),
    decimal_sum="SUM({})",
    has_usage="jsonb_typeof(metadata_json -> 'usage') = 'object'",
    usage_text="(metadata_json #>> '{{usage,{0}}}')",
    meta_text="(metadata_json ->> '{}')",
    placeholder="%s",  # psycopg's parameter style
)


class Cursor(Protocol):
    """What the store reads from a statement's result (sqlite3's and psycopg's cursors)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Db:
    """One connection inside one transaction, speaking the store's SQL (see module doc)."""

    __slots__ = ("_execute", "_executemany", "dialect")

    def __init__(
        self,
        dialect: Dialect,
        execute: Callable[[str, Sequence[Any]], Cursor],
        executemany: Callable[[str, Sequence[Sequence[Any]]], object],
    ) -> None:
        self.dialect = dialect
        self._execute = execute
        self._executemany = executemany

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement (written with `?` parameters)."""
        return self._execute(self.dialect.text(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of parameters."""
        if rows:
            self._executemany(self.dialect.text(sql), rows)

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row of a query, or None."""
        return self.execute(sql, params).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a query."""
        return self.execute(sql, params).fetchall()


def insert_tool_calls(db: Db, rows: Sequence[Sequence[Any]]) -> None:
    """Write `tool_calls` rows (a function of its own so tests can make it fail midway)."""
    db.executemany(INSERT_TOOL_CALL, rows)


__all__ = [
    "ANSWER_OPEN_CALL",
    "INSERT_TOOL_CALL",
    "MESSAGE_COLUMNS",
    "POSTGRESQL",
    "SESSION_COLUMNS",
    "SESSION_LABEL_COLUMNS",
    "SQLITE",
    "TOOL_CALL_COLUMNS",
    "TOUCH_SESSION",
    "Cursor",
    "Db",
    "Dialect",
    "insert_tool_calls",
]
