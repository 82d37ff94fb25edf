"""A session's tool sets and request options: rows of `session_settings` and `exchange_settings`.

What an exchange was sent with besides its messages (layout 4, `_sqlite_ddl.SETTINGS_TABLES`):
the tool definitions and the canonical request options, kept as the schema's own records
(`SettingsRevision`, `ExchangeSettings` of schema v3) so that any language reads them.
Tools are stored as whole ToolDefinition documents, as their model dumps them: a field a
later schema adds to a tool is stored and read back with no change here.

A revision is written only when the tools or the options differ from the session's latest
(compared as JSON values, so the text either database keeps them as does not matter); the
exchange row names the revision by number. The functions here run inside a transaction the
Store opened (`_store`), which has already locked the session's row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import ExchangeSettings, RequestOptions, SettingsRevision, ToolDefinition
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from .. import _json
from .._json import has_long_digit_run, refuse_non_finite, refuse_too_long
from ..errors import NewerSchemaError, StoreError
from . import _sql
from ._codec import from_micros, to_micros

TOOL_LIST: TypeAdapter[list[ToolDefinition]] = TypeAdapter(list[ToolDefinition])
"""The persistence format of a tool set (a JSON array of ToolDefinition documents)."""


def _columns(dialect: _sql.Dialect) -> str:
    j = dialect.json_out
    tools, options = j.format("tools_json"), j.format("options_json")
    return f"session_id, revision, {tools}, {options}, created_at, schema_version"


def _insert(dialect: _sql.Dialect) -> str:
    j = dialect.json_in
    return (
        "INSERT INTO session_settings (session_id, revision, tools_json, options_json, created_at, "
        f"schema_version) VALUES (?, ?, {j}, {j}, ?, ?)"
    )


def encode(tools: Sequence[ToolDefinition], options: RequestOptions) -> tuple[str, str]:
    """(tools_json, options_json) of a settings row; StoreError when a value cannot be
    stored as it is (a NaN, an integer too long to read back, a model built unvalidated)."""
    try:
        tools_json = TOOL_LIST.dump_json(list(tools), exclude_none=True, warnings="error").decode()
        options_json = options.model_dump_json(exclude_none=True, warnings="error")
        for text, value in ((tools_json, list(tools)), (options_json, options)):
            if "null" in text or has_long_digit_run(text):
                python = TOOL_LIST.dump_python(value) if isinstance(value, list) else value.model_dump()
                refuse_non_finite(python)
                refuse_too_long(python)
    except (AttributeError, TypeError, ValueError, PydanticSerializationError) as exc:
        raise StoreError(f"not storable settings: {exc}") from exc
    return tools_json, options_json


def _row(conn: _sql.Db, session_id: str, number: int | None, columns: str) -> Any:
    """`columns` of the session's revision `number` (its latest with None), or None: the one
    lookup of a revision, to read it and to write beside it."""
    sql = f"SELECT {columns} FROM session_settings WHERE session_id = ?"
    if number is None:
        return conn.one(sql + " ORDER BY revision DESC LIMIT 1", (session_id,))
    return conn.one(sql + " AND revision = ?", (session_id, number))


def _put(
    conn: _sql.Db, session_id: str, number: int | None, settings: tuple[str, str], created: int
) -> tuple[int, bool]:
    """(revision, written): write `settings` (tools_json, options_json) as revision `number`,
    or with None as the session's next one, unless the revision looked at (that number;
    the latest) holds the same (compared as JSON values, so the text either database keeps
    them as does not matter). StoreError when another revision holds the number given."""
    j = conn.dialect.json_out
    stored = _row(conn, session_id, number, f"revision, {j.format('tools_json')}, {j.format('options_json')}")
    if stored is not None:
        if (_json.loads(stored[1]), _json.loads(stored[2])) == tuple(map(_json.loads, settings)):
            return int(stored[0]), False
        if number is not None:
            raise StoreError(
                f"session {session_id!r} already holds another settings revision {number}",
                hint="the two stores hold different settings for this session",
            )
    if number is None:
        number = 1 if stored is None else int(stored[0]) + 1
    conn.execute(_insert(conn.dialect), (session_id, number, *settings, created, CURRENT_VERSION))
    return number, True


def record(conn: _sql.Db, session_id: str, tools_json: str, options_json: str, now: int) -> int:
    """The revision these settings are: the latest when it holds the same, else a new one."""
    return _put(conn, session_id, None, (tools_json, options_json), now)[0]


def put_revision(conn: _sql.Db, revision: SettingsRevision) -> bool:
    """Write a revision as given (a copy or a fork); False when the same is already there,
    StoreError when a different one holds its number."""
    settings = encode(revision.tools, revision.options)
    return _put(conn, revision.session_id, revision.revision, settings, to_micros(revision.created_at))[1]


def link(conn: _sql.Db, exchange: ExchangeSettings) -> bool:
    """Record the revision an exchange was sent with; False when it is already recorded,
    StoreError when the reply id is recorded otherwise or the revision does not exist."""
    row = conn.one(
        "SELECT session_id, revision FROM exchange_settings WHERE message_id = ?", (exchange.message_id,)
    )
    if row is not None:
        if (row[0], int(row[1])) == (exchange.session_id, exchange.revision):
            return False
        raise StoreError(
            f"exchange {exchange.message_id} is already recorded, with revision {row[1]} of {row[0]!r}",
            message_id=exchange.message_id,
        )
    known = conn.one(
        "SELECT 1 FROM session_settings WHERE session_id = ? AND revision = ?",
        (exchange.session_id, exchange.revision),
    )
    if known is None:
        raise StoreError(
            f"session {exchange.session_id!r} has no settings revision {exchange.revision}",
            message_id=exchange.message_id,
            hint="record the revision before the exchanges sent with it",
        )
    conn.execute(
        "INSERT INTO exchange_settings (message_id, session_id, revision) VALUES (?, ?, ?)",
        (exchange.message_id, exchange.session_id, exchange.revision),
    )
    return True


def revisions(conn: _sql.Db, session_id: str) -> list[SettingsRevision]:
    """The session's revisions, oldest first."""
    sql = f"SELECT {_columns(conn.dialect)} FROM session_settings WHERE session_id = ? ORDER BY revision"
    return [_decode(row) for row in conn.all(sql, (session_id,))]


def revision(conn: _sql.Db, session_id: str, number: int | None) -> SettingsRevision | None:
    """Revision `number` of the session (the latest with None); None when there is none."""
    row = _row(conn, session_id, number, _columns(conn.dialect))
    return None if row is None else _decode(row)


def exchanges(conn: _sql.Db, session_id: str) -> list[ExchangeSettings]:
    """The session's exchange rows, by revision, then reply id (ULIDs: the order they were made)."""
    rows = conn.all(
        "SELECT session_id, message_id, revision FROM exchange_settings WHERE session_id = ? "
        "ORDER BY revision, message_id",
        (session_id,),
    )
    return [ExchangeSettings(session_id=r[0], message_id=r[1], revision=int(r[2])) for r in rows]


def delete(conn: _sql.Db, session_id: str) -> None:
    """Remove the session's settings rows (before its `sessions` row)."""
    conn.execute("DELETE FROM exchange_settings WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM session_settings WHERE session_id = ?", (session_id,))


def _decode(row: Sequence[Any]) -> SettingsRevision:
    session_id, revision, tools_json, options_json, created_us, version = row
    where = f"{session_id}/settings/{revision}"
    if int(version) > CURRENT_VERSION:
        raise NewerSchemaError.of(row=where, version=int(version), supported=CURRENT_VERSION, message_id=None)
    try:
        return SettingsRevision.model_validate(
            {
                "session_id": session_id,
                "revision": int(revision),
                "tools": _json.loads(tools_json),
                "options": _json.loads(options_json),
                "created_at": from_micros(int(created_us)),  # as a message row's (`_codec.document`)
            }
        )
    except (ValidationError, ValueError) as exc:
        raise StoreError(f"stored settings revision {where} is unreadable: {exc}") from exc


__all__ = [
    "TOOL_LIST",
    "delete",
    "encode",
    "exchanges",
    "link",
    "put_revision",
    "record",
    "revision",
    "revisions",
]
