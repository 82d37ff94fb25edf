"""The store: sessions, their messages, and the tool calls inside them (spec §9).

One `Store` class for every database: it holds a backend (`sqlite.SqliteBackend`, one
connection to one file; `postgres.PostgresBackend`, a pool of connections to a server)
that runs each transaction, and speaks the SQL of `_sql` in the backend's dialect. Every
write is one transaction that either commits whole or leaves nothing behind: a message
row, the `tool_calls` rows it opens or answers, the session's `updated_at` and its tool
id map go in together. A write begins by touching the rows of the sessions it writes to
(in sorted order): on PostgreSQL that locks them, so writers of one session take turns
and append order is commit order; SQLite takes its one write lock up front anyway.
A message is checked before it is written — its own invariants and its links to earlier
tool calls, answered from the `tool_calls` table (`_checks`) — so the table never holds a
conversation that breaks spec §5 at status complete.

Streaming fits in with two more entry points: `upsert_partial` keeps a PARTIAL checkpoint
of a message while it streams (unchecked, since a partial message may break invariants,
§5.1.5), and `finalize` replaces it with the final message, checked then. Every message
write — one message or many, whole, partial or final — takes one route: a batch of
`_Write`s, each with its mode, checked whole and then written (`_write_messages`) in one
transaction of its sessions (`Store._locked`). Several writes in one transaction are that
route's own shape: one batch.

The store knows nothing of providers (docs/architecture.md "Data flow"): it records
`metadata.provider` and the id that provider issued, and it has no place for API keys,
request headers or anything else a client holds. Every value reaches the database as a
bound parameter; no part of a message ever becomes SQL text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

import orjson
from metis_schema import CURRENT_VERSION
from metis_schema.v3 import (
    ExchangeSettings,
    Message,
    MessageStatus,
    RequestOptions,
    Role,
    SettingsRevision,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)
from pydantic import ValidationError

from .. import _json
from ..canonical import Decoded
from ..errors import (
    InvariantError,
    MessageNotFoundError,
    MetisError,
    NewerSchemaError,
    SessionNotFoundError,
    StoreError,
)
from ..ids import ToolIdEntry, ToolIdMap, new_session_id
from . import _gateway, _settings, _sql
from ._checks import BatchChecks, stored_provider_ids
from ._codec import Reader, Row, current, decode, decode_all, decode_each, encode, from_micros
from ._conn import RetryPolicy
from ._types import (
    CANCELLED,
    FAILED,
    PENDING,
    SUCCEEDED,
    DuplicateMessageError,
    SessionInfo,
    SessionStats,
    ToolCallRecord,
    ToolCallStatus,
)
from .sqlite import SqliteBackend

T = TypeVar("T")
Mode = Literal["append", "finalize", "partial"]

_MAX_SESSION_ID = 128
PAGE_SIZE = 500
"""Messages per page of `iter_messages`: small enough that a page of long messages stays a
few megabytes, large enough that the per-transaction cost is lost in the decoding."""
_MAX_LABEL = 4096
"""Longest title or source kept: a label for a list, not a document."""
# Enum members read once: `Role.assistant` is a descriptor call each time, on every message.
_ASSISTANT, _TOOL = Role.assistant, Role.tool
_COMPLETE, _PARTIAL, _CANCELLED = MessageStatus.complete, MessageStatus.partial, MessageStatus.cancelled


def _now_us() -> int:
    return time.time_ns() // 1_000


class Backend(Protocol):
    """A database the Store can run transactions on (`sqlite.SqliteBackend`,
    `postgres.PostgresBackend`). Each runs `fn` with a `_sql.Db` inside one transaction,
    retrying the whole of `fn` where the database asks for it (a busy SQLite file, a
    PostgreSQL serialization failure or deadlock, a connection lost before the commit),
    and turns its driver's errors into StoreError."""

    @property
    def dialect(self) -> _sql.Dialect: ...

    @property
    def path(self) -> Path | None: ...

    def write(self, fn: Callable[[_sql.Db], T]) -> T: ...

    def read(self, fn: Callable[[_sql.Db], T]) -> T: ...

    def close(self) -> None: ...


class Store:
    """Sessions, messages and tool calls in one database (see module doc).

    Thread-safe and safe across processes (and, on PostgreSQL, machines). Open it with
    `metis.store.open_store(target)` (a path or URL) or `Store.open(path)` (SQLite); close
    it, or use it as a context manager.
    """

    def __init__(self, backend: Backend, reader: Reader | None = None) -> None:
        self._backend = backend
        self._reader = reader
        self._write = backend.write
        self._read = backend.read

    @property
    def path(self) -> Path | None:
        """The SQLite file (None for an in-memory or a PostgreSQL store)."""
        return self._backend.path

    @property
    def _conn(self) -> Any:
        """The SQLite connection, for tests that look at the file beside the store."""
        return getattr(self._backend, "conn", None)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        retry: RetryPolicy | None = None,
        synchronous: str = "FULL",
        reader: Reader | None = None,
    ) -> Store:
        """Open (creating or upgrading in place) the SQLite store at `path`.

        `path` defaults to `$METIS_HOME/metis.sqlite3`, else the per-user data directory.
        `synchronous="FULL"` makes every commit durable across power loss; "NORMAL" keeps
        it across process crashes only, and is faster. `reader` replaces the full
        document reader (default `metis.canonical.read_message`).
        """
        return cls(SqliteBackend.open(path, retry=retry, synchronous=synchronous), reader)

    def close(self) -> None:
        """Close the connection(s) (idempotent)."""
        self._backend.close()

    def atomically(self, work: Callable[[Store], T]) -> T:
        """Run `work` in one write transaction: every write it makes through the Store it is
        given commits together, or none does, and its reads see those writes.

        For a writer whose unit is several of the Store's writes (a gateway exchange: the
        session, its new turns, the settings they were sent with, the reply, the tip): the
        given Store runs each of its methods on the open transaction instead of one of its
        own, so they keep their checks and their order, and the database commits once. As
        any write, `work` may be run again from the start when the database asks for a
        retry (a busy file, a serialization failure), so it must not act outside the store.
        """
        return self._write(lambda conn: work(Store(_Joined(conn, self._backend.path), self._reader)))

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sessions -----------------------------------------------------------------------------

    def create_session(
        self,
        workspace_path: str | os.PathLike[str],
        *,
        active_model: str | None = None,
        routing_policy: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        title: str | None = None,
        source: str | None = None,
        parent_session_id: str | None = None,
        fork_message_id: str | None = None,
    ) -> SessionInfo:
        """A new, empty session; `session_id` defaults to a fresh `sess_<ulid>`.

        `title` and `source` label it for people (see SessionInfo); `parent_session_id`
        and `fork_message_id` record the session and message it was forked from. The
        lineage is recorded as given, not checked against the parent's rows: a copy may
        bring a fork before its parent, and the parent may be gone (fork checks it).
        """
        sid = new_session_id() if session_id is None else session_id
        if not isinstance(sid, str) or not 0 < len(sid) <= _MAX_SESSION_ID:
            raise StoreError(f"session id must be 1..{_MAX_SESSION_ID} characters, got {sid!r:.80}")
        labels = (
            _label("title", title),
            _label("source", source),
            _label("parent_session_id", parent_session_id, limit=_MAX_SESSION_ID),
            _label("fork_message_id", fork_message_id, limit=_MAX_SESSION_ID),
        )
        if fork_message_id is not None and parent_session_id is None:
            raise StoreError(
                f"session {sid!r}: a fork point ({fork_message_id!r}) needs the parent session it is in",
                message_id=fork_message_id,
            )
        policy_json = _policy_json(routing_policy)
        now = _now_us()
        row = (sid, os.fspath(workspace_path), active_model, policy_json, CURRENT_VERSION, now, now, *labels)

        def insert(conn: _sql.Db) -> None:
            if conn.one("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
                raise StoreError(f"session {sid!r} already exists")
            conn.execute(conn.dialect.insert_session, row)

        self._write(insert)
        return _session(row)

    def get_session(self, session_id: str) -> SessionInfo:
        """The session's row; SessionNotFoundError if there is none."""
        row = self._read(lambda conn: _session_row(conn, session_id))
        if row is None:
            raise SessionNotFoundError(f"no session {session_id!r}")
        return _session(row)

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, most recently changed first."""
        rows = self._read(
            lambda c: c.all(f"SELECT {c.dialect.session_columns} FROM sessions ORDER BY updated_at DESC, id")
        )
        return [_session(row) for row in rows]

    def session_stats(self, session_id: str) -> SessionStats:
        """The session's message count, tokens and cost as the database sums them, its first
        user text, and an error naming each row not counted (see SessionStats).

        For a list of sessions (`metis sessions`, the header of `metis show`): one aggregate
        query over the session's rows, reading a few fields of each row's metadata in the
        database, instead of reading every message into a model to print one line. A
        damaged row (JSON that does not parse, content that is not a list) is named and
        left out; it does not hide the session, nor the rest of the store.
        """

        def fetch(conn: _sql.Db) -> SessionStats:
            row = conn.one(_stats_sql(conn.dialect), (session_id,))
            stats = SessionStats(
                messages=int(row[0] or 0),
                tokens=int(row[1] or 0),
                cost=_decimal(row[2]),
                with_usage=int(row[3] or 0),
                unpriced=int(row[4] or 0),
                billed=_decimal(row[6]) if row[7] else None,
            )
            if row[5]:
                stats.problems = _row_problems(conn, session_id)
            stats.first_user_text = _first_user_text(conn, session_id)
            return stats

        return self._read_session(session_id, fetch)

    def delete_session(self, session_id: str) -> None:
        """Remove the session with its messages, tool calls, tool id map and settings, in one
        transaction."""

        def delete(conn: _sql.Db, _: int) -> None:  # its row locked: no append runs meanwhile
            for table in ("tool_calls", "tool_id_map", "messages"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            _settings.delete(conn, session_id)
            _gateway.delete(conn, session_id)
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

        self._locked([session_id], delete)

    def set_active_model(self, session_id: str, model: str | None) -> SessionInfo:
        """Record the session's sticky model (a canonical `<provider>:<model>` id, or None)."""
        if model is not None and (":" not in model or model.startswith(":")):
            raise StoreError(f"not a canonical model id: {model!r}", hint="use '<provider>:<model>'")
        return self._update_session(session_id, "active_model", model)

    def set_title(self, session_id: str, title: str | None) -> SessionInfo:
        """Name the session (None removes the title); SessionNotFoundError if there is none."""
        return self._update_session(session_id, "title", _label("title", title))

    def _update_session(
        self, session_id: str, column: Literal["active_model", "title"], value: Any
    ) -> SessionInfo:
        def update(conn: _sql.Db) -> Any:
            cur = conn.execute(
                f"UPDATE sessions SET {column} = ?, updated_at = ? WHERE id = ?",
                (value, _now_us(), session_id),
            )
            if cur.rowcount == 0:
                raise SessionNotFoundError(f"no session {session_id!r}")
            return _session_row(conn, session_id)

        return _session(self._write(update))

    # --- messages ------------------------------------------------------------------------------

    def append(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        """Check and store one message, with its tool call bookkeeping, in one transaction.

        A Message of an earlier schema version (`metis_schema.v1.Message`) is migrated
        on write (`_codec.current`). Raises InvariantError (nothing written) when the
        message breaks spec §5 or its links, DuplicateMessageError when its id is taken,
        SessionNotFoundError when its session does not exist. `tool_ids`, the session's id
        map after the response was parsed, supplies each new tool call's provider id and is
        saved in the same transaction. A PARTIAL message is stored unchecked, as by `upsert_partial`.
        """
        self.append_many([message], tool_ids=tool_ids)

    def append_many(self, messages: Iterable[Message], *, tool_ids: ToolIdMap | None = None) -> None:
        """`append` for several messages in order, in one transaction: all stored, or none.

        Each message is encoded once, then checked against what the earlier ones of the
        batch will have written (one lookup for the whole batch) and refused with the
        first failing message's error, or all are written with one `executemany` per
        statement.
        """
        batch = [_Write.of(current(message), None) for message in messages]
        if batch:
            self._put(batch, tool_ids)

    def upsert_partial(self, message: Message) -> None:
        """Store or refresh the PARTIAL checkpoint of a message that is still streaming."""
        message = current(message)
        if message.metadata.status != MessageStatus.partial:
            raise StoreError(
                f"upsert_partial takes a partial message, got status {message.metadata.status.value}",
                message_id=message.id,
                hint="store the final message with finalize()",
            )
        self._put([_Write.of(message, "partial")], None)

    def finalize(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        """Replace a message's PARTIAL checkpoint by its final form (checked as by `append`).

        Without a checkpoint this is `append`. A final message already stored under the
        id is a DuplicateMessageError.
        """
        message = current(message)
        if message.metadata.status == MessageStatus.partial:
            raise StoreError(
                "finalize takes a complete, cancelled or error message, got status partial",
                message_id=message.id,
                hint="checkpoint it with upsert_partial()",
            )
        self._put([_Write.of(message, "finalize")], tool_ids)

    def _put(self, batch: Sequence[_Write], tool_ids: ToolIdMap | None) -> None:
        """The one write route of messages (`append`, `append_many`, `upsert_partial`,
        `finalize`, `save_tool_ids`): the batch, whatever its modes, and the tool id map,
        in one transaction of its sessions (`_locked`) through `_write_messages`."""
        sessions = {w.row[1] for w in batch}
        if tool_ids is not None:
            foreign = sessions - {tool_ids.session_id}
            if foreign:
                raise StoreError(
                    f"tool id map of session {tool_ids.session_id!r} given for messages of "
                    f"{sorted(foreign)!r}"
                )
            sessions.add(tool_ids.session_id)
        self._locked(sessions, lambda conn, _: _write_messages(conn, batch, tool_ids))

    def _locked(self, sessions: Iterable[str], fn: Callable[[_sql.Db, int], T]) -> T:
        """Run `fn(conn, now)` in one write transaction that first marks each session changed
        (`_touch`, SessionNotFoundError for one that is not there), in sorted order: on
        PostgreSQL that locks their rows, and one order for every writer means no deadlock.
        Every write of a session's rows goes through here."""

        def run(conn: _sql.Db) -> T:
            now = _now_us()
            for session_id in sorted(sessions):
                _touch(conn, session_id, now)
            return fn(conn, now)

        return self._write(run)

    def _read_session(self, session_id: str, fn: Callable[[_sql.Db], T]) -> T:
        """`fn(conn)` in one read transaction, after checking that the session exists
        (SessionNotFoundError): the read-side twin of `_locked`, for every read of one
        session's rows."""

        def run(conn: _sql.Db) -> T:
            _require_session(conn, session_id)
            return fn(conn)

        return self._read(run)

    def append_planned(
        self,
        session_id: str,
        plan: Callable[[list[Message]], Sequence[Message]],
        *,
        tool_ids: ToolIdMap | None = None,
    ) -> list[Message]:
        """Append, as `append_many` does, the messages `plan` makes of the session's history
        read inside the same write transaction; the messages appended (none: nothing written).

        For a writer whose messages depend on what the session holds (`metis.ops.repair`
        answers the calls still open): the session's row is locked first (`_locked`), so the
        history `plan` sees is the last committed one, and no other writer of the session
        can change it before these messages are written. Two such writers run one after
        the other, the second seeing the first's messages.
        """

        def run(conn: _sql.Db, _: int) -> list[Message]:
            history = decode_all(_fetch_rows(conn, session_id, None, None, None)[0], self._reader)
            made = [current(message) for message in plan(history)]
            foreign = sorted({m.session_id for m in made} - {session_id})
            if foreign:
                raise StoreError(f"messages planned for session {session_id!r} belong to {foreign!r}")
            if made:
                _write_messages(conn, [_Write.of(m, None) for m in made], tool_ids)
            return made

        return self._locked([session_id], run)

    def load_session(
        self, session_id: str, *, include_partial: bool = True, after: str | None = None
    ) -> list[Message]:
        """The session's messages in the order they were appended.

        Append order is the conversation (the order of SQLite's rowids, of PostgreSQL's
        `seq` identity, taken under the session's lock; finalize() keeps the checkpoint's
        place). It is not re-derived from created_at, so
        a message stamped out of order, or by another writer's clock, is never moved.

        `after`: only the messages appended after that message of the session (a reader
        that holds the ones before need not decode them again; StoreError when the session
        has no such message).

        Rows of older schema versions are migrated on read, and unknown block types or
        metadata fields are dropped with one WARN per message (spec §10.3).
        """

        messages = decode_all(self._rows(session_id, after, None, None)[0], self._reader)
        if include_partial:
            return messages
        return [m for m in messages if m.metadata.status != _PARTIAL]

    def iter_messages(
        self,
        session_id: str,
        *,
        include_partial: bool = True,
        after: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> Iterator[Message]:
        """`load_session`, one page of `page_size` messages at a time: what a reader of a
        long session (`metis show`, `metis export`) walks through, holding one page.

        Each page is one short read transaction that continues after the last message of
        the one before, in append order (keyset pagination: an index probe, not an
        OFFSET that rescans what was read). A message appended meanwhile comes after
        those read, so it is read at the end; nothing is read twice or skipped.
        """
        for page in self._pages(session_id, after, page_size):
            for message in decode_all(page, self._reader):
                if include_partial or message.metadata.status != _PARTIAL:
                    yield message

    def read_session(self, session_id: str) -> Decoded:
        """Every message of the session this metis can read, in append order, and one
        NewerSchemaError (naming the row and its version) for each row a newer metis wrote.

        For readers that show what they can (`metis sessions`, `metis show`): one row from
        a newer release must not hide the rest of the session. `load_session` stays strict:
        code that continues a conversation must not silently lose a turn.
        """
        return decode_each(self._rows(session_id, None, None, None)[0], self._reader)

    def read_pages(self, session_id: str, *, page_size: int = PAGE_SIZE) -> Iterator[Decoded]:
        """`read_session`, one page of `page_size` rows at a time (as `iter_messages` pages)."""
        for page in self._pages(session_id, None, page_size):
            yield decode_each(page, self._reader)

    def _pages(self, session_id: str, after: str | None, page_size: int) -> Iterator[list[Row]]:
        """The session's rows in append order, `page_size` at a time, each page read in a
        transaction of its own from where the last one ended."""
        if not isinstance(page_size, int) or page_size < 1:
            raise StoreError(f"page_size must be a positive integer, got {page_size!r:.40}")
        rows, mark = self._rows(session_id, after, None, page_size)
        while rows:
            yield rows
            if len(rows) < page_size:
                return
            rows, mark = self._rows(session_id, None, mark, page_size)

    def _rows(
        self, session_id: str, after: str | None, mark: int | None, limit: int | None
    ) -> tuple[list[Row], int | None]:
        """At most `limit` (None: all) of the session's rows in append order, after message
        `after` or after append position `mark` when one is given, and the append position
        of the last row returned (None when none is). The session must exist unless
        `mark` is given (a later page of a session deleted meanwhile is empty)."""

        return self._read(lambda conn: _fetch_rows(conn, session_id, after, mark, limit))

    def get_message(self, message_id: str) -> Message:
        """One message by id; MessageNotFoundError if it is not stored."""
        row = self._read(
            lambda c: c.one(f"SELECT {c.dialect.message_columns} FROM messages WHERE id = ?", (message_id,))
        )
        if row is None:
            raise MessageNotFoundError(f"no message {message_id!r}", message_id=message_id)
        return decode(row, self._reader)

    # --- tool ids ------------------------------------------------------------------------------

    def save_tool_ids(self, session_id: str, tool_ids: ToolIdMap) -> None:
        """Persist the session's tool id map: only new entries, unless the stored map is not
        a prefix of this one (then it is replaced)."""
        if tool_ids.session_id != session_id:
            raise StoreError(f"tool id map belongs to session {tool_ids.session_id!r}, not {session_id!r}")

        self._put([], tool_ids)

    def load_tool_ids(self, session_id: str) -> ToolIdMap:
        """The session's tool id map as last saved (empty if never saved)."""

        rows = self._read_session(
            session_id,
            lambda conn: conn.all(
                "SELECT canonical, provider, provider_id, origin FROM tool_id_map "
                "WHERE session_id = ? ORDER BY seq",
                (session_id,),
            ),
        )
        return ToolIdMap(session_id, [ToolIdEntry(*row) for row in rows])

    # --- settings: the tools and options exchanges were sent with -------------------------------

    def record_settings(
        self,
        session_id: str,
        tools: Sequence[ToolDefinition],
        options: RequestOptions | None = None,
        *,
        reply_id: str | None = None,
    ) -> int:
        """Record the tool definitions and request options in force for the session, and
        return the revision they are: the latest when it holds the same, else a new one
        (`_settings`). With `reply_id`, the exchange whose reply has (or will have) that
        message id is recorded as sent with that revision, in the same transaction.

        What the client records before each send and an import records with the messages it
        reads; `settings` reads it back. SessionNotFoundError when there is no such session,
        StoreError (nothing written) when a value cannot be stored or `reply_id` is recorded
        with another revision.
        """
        tools_json, options_json = _settings.encode(tools, RequestOptions() if options is None else options)
        if reply_id is not None:
            _exchange(session_id, reply_id, 1)  # the id is checked before anything is written

        def run(conn: _sql.Db, now: int) -> int:  # the session locked: one writer numbers revisions
            revision = _settings.record(conn, session_id, tools_json, options_json, now)
            if reply_id is not None:
                _settings.link(conn, _exchange(session_id, reply_id, revision))
            return revision

        return self._locked([session_id], run)

    def settings(self, session_id: str, revision: int | None = None) -> SettingsRevision | None:
        """The session's settings revision `revision`, or the one in force (its latest) when
        None; None when the session has recorded no such settings."""
        return self._read_session(session_id, lambda conn: _settings.revision(conn, session_id, revision))

    def settings_revisions(self, session_id: str) -> list[SettingsRevision]:
        """Every settings revision of the session, oldest first."""
        return self._read_session(session_id, lambda conn: _settings.revisions(conn, session_id))

    def exchange_settings(self, session_id: str) -> list[ExchangeSettings]:
        """Which revision each exchange of the session was sent with, in the order they were sent."""
        return self._read_session(session_id, lambda conn: _settings.exchanges(conn, session_id))

    def put_settings(
        self, revisions: Sequence[SettingsRevision], exchanges: Sequence[ExchangeSettings] = ()
    ) -> int:
        """Write settings revisions and exchange rows as given, numbers and times kept (a
        store copied, a session forked), in one transaction; returns how many rows were new.
        Rows already there as given are skipped; a different revision under the same number,
        or an exchange recorded otherwise, is a StoreError and nothing is written."""
        sessions = {r.session_id for r in revisions} | {e.session_id for e in exchanges}

        def run(conn: _sql.Db, _: int) -> int:
            written = sum(_settings.put_revision(conn, r) for r in revisions)
            return written + sum(_settings.link(conn, e) for e in exchanges)

        return self._locked(sessions, run) if sessions else 0

    # --- the gateway's rows (`_gateway`): conversation tips, keys, withheld replies, usage ------

    def put_tip(self, key: str, session_id: str, message_id: str) -> None:
        """Record that the conversation `key` (a client-view prefix key) ends at `message_id`
        of `session_id` (replacing the session it named before)."""
        self._write(lambda conn: _gateway.put_tip(conn, key, session_id, message_id, _now_us()))

    def find_tip(self, keys: Sequence[str]) -> tuple[int, str, str] | None:
        """(index, session id, message id) of the last of `keys` that is a stored tip, in one
        indexed query; None when none is."""
        return self._read(lambda conn: _gateway.find_tip(conn, keys)) if keys else None

    def add_gateway_key(self, key: _gateway.GatewayKey, digest: str) -> None:
        """Store a gateway key's row under its digest (`_gateway.key_digest`; never the key)."""
        self._write(lambda conn: _gateway.add_key(conn, key, digest))

    def gateway_keys(self) -> list[_gateway.GatewayKey]:
        """Every gateway key's row, revoked ones included, oldest first."""
        return self._read(_gateway.keys)

    def has_gateway_keys(self) -> bool:
        """Whether a gateway key was ever created (revoked ones count)."""
        return self._read(_gateway.any_key)

    def resolve_gateway_key(self, key: str) -> _gateway.GatewayKey | None:
        """The live gateway key `key` is, else None."""
        return self._read(lambda conn: _gateway.resolve_key(conn, key))

    def revoke_gateway_key(self, key_id: str) -> bool:
        """Revoke a key by id; False when there is no live key of that id."""
        return self._write(lambda conn: _gateway.revoke_key(conn, key_id, _now_us()))

    def withhold_reply(self, message_id: str, session_id: str) -> None:
        """Mark a reply as not to be served back by id (a `store: false` request's)."""
        self._write(lambda conn: _gateway.withhold(conn, message_id, session_id))

    def is_withheld(self, message_id: str) -> bool:
        return self._read(lambda conn: _gateway.withheld(conn, message_id))

    def gateway_rows(self) -> _gateway.GatewayRows:
        """Every gateway row (keys as digests, tips, withheld replies), for a copy."""
        return self._read(_gateway.export)

    def put_gateway_rows(self, rows: _gateway.GatewayRows) -> int:
        """Merge another store's gateway rows (`_gateway.merge`) in one transaction; how many
        were new."""
        return self._write(lambda conn: _gateway.merge(conn, rows))

    def usage(self, by: str, *, since: int | None = None) -> list[_gateway.UsageRow]:
        """Tokens and cost of stored replies grouped by `by` (user, team or model), created at
        or after `since` (microseconds since the epoch) when given; StoreError for another `by`."""
        if by not in _gateway.USAGE_GROUPS:
            raise StoreError(f"usage groups by {sorted(_gateway.USAGE_GROUPS)}, not {by!r}")
        return self._read(lambda conn: _gateway.usage(conn, by, since))

    # --- tool calls ----------------------------------------------------------------------------

    def tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        """Every tool call of the session, oldest first."""
        return self._tool_calls(session_id, "")

    def unanswered_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        """Tool calls still pending: issued, not cancelled, no result yet (spec §9.2)."""
        return self._tool_calls(session_id, " AND status = 'pending'")

    def _tool_calls(self, session_id: str, where: str) -> list[ToolCallRecord]:
        sql = f"SELECT {_sql.TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ?{where} "
        rows = self._read_session(session_id, lambda c: c.all(sql + "ORDER BY created_at, id", (session_id,)))
        return [_tool_call(row) for row in rows]

    def failed_tool_calls(self, session_id: str | None = None) -> dict[str, int]:
        """Failed tool calls per session (spec §9.2); one session (even at 0) when named."""

        if session_id is not None:
            sql = "SELECT COUNT(*) FROM tool_calls WHERE session_id = ? AND status = 'failed'"
            row = self._read_session(session_id, lambda c: c.one(sql, (session_id,)))
            return {session_id: int(row[0])}
        sql = "SELECT session_id, COUNT(*) FROM tool_calls WHERE status = 'failed' GROUP BY session_id"
        return {sid: int(n) for sid, n in self._read(lambda c: c.all(sql))}


class _Joined:
    """The Backend of `Store.atomically`'s Store: every read and write runs on the one
    transaction already open (no BEGIN, no COMMIT of its own)."""

    def __init__(self, conn: _sql.Db, path: Path | None) -> None:
        self._conn = conn
        self._path = path

    @property
    def dialect(self) -> _sql.Dialect:
        return self._conn.dialect

    @property
    def path(self) -> Path | None:
        return self._path

    def write(self, fn: Callable[[_sql.Db], T]) -> T:
        return fn(self._conn)

    def read(self, fn: Callable[[_sql.Db], T]) -> T:
        return fn(self._conn)

    def close(self) -> None:
        """The transaction's owner closes the connection."""


# --- helpers (run inside a transaction) ------------------------------------------------------------


def _session_row(conn: _sql.Db, session_id: str) -> Any:
    """The session's row (`_session` reads it), or None."""
    return conn.one(f"SELECT {conn.dialect.session_columns} FROM sessions WHERE id = ?", (session_id,))


def _require_session(conn: _sql.Db, session_id: str) -> None:
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise SessionNotFoundError(f"no session {session_id!r}")


def _fetch_rows(
    conn: _sql.Db, session_id: str, after: str | None, mark: int | None, limit: int | None
) -> tuple[list[Row], int | None]:
    """`Store._rows` inside a transaction (see there)."""
    order = conn.dialect.order
    start = mark
    if start is None:
        _require_session(conn, session_id)
        if after is not None:
            found = conn.one(
                f"SELECT {order} FROM messages WHERE id = ? AND session_id = ?", (after, session_id)
            )
            if found is None:
                raise MessageNotFoundError(
                    f"session {session_id!r} has no message {after!r} to read after",
                    message_id=after,
                )
            start = found[0]
    sql = f"SELECT {conn.dialect.message_columns}, {order} FROM messages WHERE session_id = ?"
    params: list[Any] = [session_id]
    if start is not None:
        sql += f" AND {order} > ?"
        params.append(start)
    sql += f" ORDER BY {order}"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    found_rows = conn.all(sql, params)
    if not found_rows:
        return [], None
    return [row[:7] for row in found_rows], int(found_rows[-1][7])


_ROLES = "('system', 'user', 'assistant', 'tool')"
_READABLE, _NEWER = 1, 2
"""`state` of a row in `_rows_state`: counted; written by a newer metis; otherwise damaged (0)."""
_FIRST_TEXT_ROWS = 50
"""User rows looked at for a first text (a session's first user message has one)."""


def _rows_state(dialect: _sql.Dialect) -> str:
    """The session's rows with their `state` (see `_READABLE`), judged in SQL: a row is
    counted when it is of a version this metis reads, its role is one of the spec's, and
    its JSON columns are shaped as a message's. (The full check is the reader's, when a
    message is read.)"""
    return (
        f"SELECT id, schema_version, metadata_json, CASE WHEN schema_version > {CURRENT_VERSION} "
        f"THEN {_NEWER} WHEN schema_version >= 1 AND role IN {_ROLES} AND ({dialect.json_shaped}) "
        f"THEN {_READABLE} ELSE 0 END AS state FROM messages WHERE session_id = ?"
    )


def _stats_sql(dialect: _sql.Dialect) -> str:
    """One row: messages, tokens, cost, with usage, unpriced, rows not counted, billed cost and
    how many replies carry one (CASEs nest so
    that no JSON function ever reads a damaged row's columns). Only the dialect's fragments
    and the fixed usage keys below become SQL text."""

    def usage(value: str, other: str = "NULL") -> str:
        inner = f"CASE WHEN {dialect.has_usage} THEN {value} ELSE {other} END"
        return f"CASE WHEN state = {_READABLE} THEN {inner} END"

    tokens = " + ".join(
        f"COALESCE({dialect.usage_number.format(key)}, 0)"
        for key in ("input_tokens", "cache_creation_input_tokens", "output_tokens", "cached_input_tokens")
    )
    unpriced = f"CASE WHEN {dialect.usage_text.format('pricing_version')} = 'unpriced' THEN 1 ELSE 0 END"
    billed = f"CASE WHEN {dialect.usage_text.format('billed_cost_usd')} IS NULL THEN 0 ELSE 1 END"
    return (
        f"SELECT SUM(CASE WHEN state = {_READABLE} THEN 1 ELSE 0 END), SUM({usage(tokens)}), "
        f"{dialect.decimal_sum.format(usage(dialect.usage_decimal.format('cost_usd')))}, "
        f"SUM({usage('1', '0')}), SUM({usage(unpriced, '0')}), "
        f"SUM(CASE WHEN state = {_READABLE} THEN 0 ELSE 1 END), "
        f"{dialect.decimal_sum.format(usage(dialect.usage_decimal.format('billed_cost_usd')))}, "
        f"SUM({usage(billed, '0')}) FROM ({_rows_state(dialect)}) AS r"
    )


def _decimal(value: Any) -> Decimal:
    """A summed cost as a Decimal (PostgreSQL's numeric; `_conn.DecimalSum`'s text)."""
    if value is None:
        return Decimal(0)
    return value if isinstance(value, Decimal) else Decimal(value)


def _row_problems(conn: _sql.Db, session_id: str) -> list[MetisError]:
    """An error naming each row of the session `session_stats` does not count."""
    rows = conn.all(
        f"SELECT id, schema_version, state FROM ({_rows_state(conn.dialect)}) AS r "
        f"WHERE state <> {_READABLE}",
        (session_id,),
    )
    problems: list[MetisError] = []
    for mid, version, state in rows:
        if state == _NEWER:
            problems.append(
                NewerSchemaError.of(row=mid, version=int(version), supported=CURRENT_VERSION, message_id=mid)
            )
        else:
            problems.append(
                StoreError(
                    f"session {session_id!r}: stored message {mid} is unreadable (its row is not a "
                    "message document); left out",
                    message_id=mid,
                    hint=f"`metis show {session_id}` says what is wrong with it",
                )
            )
    return problems


def _first_user_text(conn: _sql.Db, session_id: str) -> str | None:
    """The first non-blank text block of the session's user messages, read from their
    content JSON (not into models); None when the first rows have none."""
    rows = conn.all(
        f"SELECT {conn.dialect.json_out.format('content_json')} FROM messages "
        f"WHERE session_id = ? AND role = 'user' ORDER BY {conn.dialect.order} LIMIT {_FIRST_TEXT_ROWS}",
        (session_id,),
    )
    for (content,) in rows:
        try:
            blocks = _json.loads(content)
        except ValueError:
            continue  # a damaged row: named by session_stats
        for block in blocks if isinstance(blocks, list) else ():
            text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
            if isinstance(text, str) and text.strip():
                return text
    return None


def _exchange(session_id: str, reply_id: str, revision: int) -> ExchangeSettings:
    """The exchange row of `reply_id` (StoreError when the id is not a message id)."""
    try:
        return ExchangeSettings(session_id=session_id, message_id=reply_id, revision=revision)
    except ValidationError as exc:
        raise StoreError(
            f"session {session_id!r}: reply id {reply_id!r:.80} is not a message id", message_id=None
        ) from exc


def _touch(conn: _sql.Db, session_id: str, now: int) -> None:
    """Mark the session changed; SessionNotFoundError if it does not exist."""
    cur = conn.execute(_sql.TOUCH_SESSION, (now, session_id))
    if cur.rowcount == 0:
        raise SessionNotFoundError(f"no session {session_id!r}", hint="create it with Store.create_session()")


def _duplicate(message: Message, existing: tuple[str, str | None]) -> DuplicateMessageError:
    what = "a partial checkpoint" if existing[1] == "partial" else "a message"
    return DuplicateMessageError(
        f"{what} with this id is already stored in session {existing[0]!r}",
        message_id=message.id,
        hint="finalize() replaces a partial checkpoint; anything else needs a new id",
    )


class _Write(NamedTuple):
    """One message of a write: the message, its row (`_codec.encode`), and its mode —
    `append` (a new message, checked), `finalize` (checked, replacing its own PARTIAL
    checkpoint when there is one) or `partial` (a checkpoint, stored unchecked, §5.1.5)."""

    message: Message
    row: Row
    mode: Mode

    @classmethod
    def of(cls, message: Message, mode: Mode | None) -> _Write:
        """The write of `message` (already `current`); no mode: as `append` stores it (a
        PARTIAL message as its checkpoint)."""
        if mode is None:
            mode = "partial" if message.metadata.status == _PARTIAL else "append"
        return cls(message, encode(message), mode)


class _Plan(NamedTuple):
    """The rows a batch writes: new `messages` rows, partial checkpoints replaced in place
    (`replace_partial` parameters), `tool_calls` rows (answers to calls of the same batch
    folded in), and answers to calls stored before (`_sql.ANSWER_OPEN_CALL`)."""

    inserts: Sequence[Row]
    replaces: Sequence[tuple[Any, ...]]
    call_rows: Sequence[Sequence[Any]]
    updates: Sequence[tuple[Any, ...]]


def _write_messages(conn: _sql.Db, batch: Sequence[_Write], tool_ids: ToolIdMap | None) -> None:
    """Every message write, whatever its mode, and the tool id map (its sessions locked).

    The batch is checked whole first (`_checked_plan`: raises the first failing message's
    error, nothing written), then written with one statement per kind of row, in this
    order: new messages (append order), replaced checkpoints, the tool calls they open,
    the answers to calls stored before, the tool id map. A batch of one message is the
    same route as a batch of a thousand.
    """
    if batch:
        plan = _checked_plan(conn, batch, tool_ids)
        conn.executemany(conn.dialect.insert_message, plan.inserts)
        conn.executemany(conn.dialect.replace_partial, plan.replaces)
        if plan.call_rows:
            _sql.insert_tool_calls(conn, plan.call_rows)
        conn.executemany(_sql.ANSWER_OPEN_CALL, plan.updates)
    if tool_ids is not None:
        _sync_tool_ids(conn, tool_ids)


def _checked_plan(conn: _sql.Db, batch: Sequence[_Write], tool_ids: ToolIdMap | None) -> _Plan:
    """The rows of the batch, each message checked in order (raises for the first failing one).

    The lookups are made once for the whole batch (`BatchChecks`, and the stored provider
    ids), and each message is checked against what the earlier ones will have written: a
    message id already taken is a DuplicateMessageError unless it is the PARTIAL checkpoint
    of the same session that a `finalize` or `partial` write replaces; a checked message
    (not `partial`) must pass `BatchChecks.violations`, and opens or answers its tool calls.
    """
    checked = [w.message for w in batch if w.mode != "partial"]
    checks = BatchChecks(conn, [w.message for w in batch], checked)
    lookup = ({} if tool_ids is not None else _stored_provider_ids(conn, checked)).get
    inserts: list[Row] = []
    replaces: list[tuple[Any, ...]] = []
    call_rows: list[tuple[Any, ...]] = []
    result_rows: list[tuple[Any, ...]] = []
    for message, row, mode in batch:
        existing = checks.existing(message.id)
        if existing is not None and (mode == "append" or existing != (message.session_id, "partial")):
            raise _duplicate(message, existing)  # a re-sent message: said so before what it breaks
        if mode != "partial":
            found = checks.violations(message)
            if found:
                raise InvariantError(found, message_id=message.id)
        if existing is None:
            inserts.append(row)
        else:
            replaces.append((*row[2:], message.id))
        checks.written(row[0], row[1], message.metadata.status)
        if mode == "partial":
            continue
        calls, results = len(call_rows), len(result_rows)
        _tool_call_rows(message, row[5], tool_ids, lookup, call_rows, result_rows)
        for call in call_rows[calls:]:
            checks.opened(call[0], call[1])
        for result in result_rows[results:]:
            checks.answered(result[3], result[4])
    updates = _close_new_calls(call_rows, result_rows)
    return _Plan(inserts, replaces, call_rows, updates)


def _close_new_calls(
    call_rows: list[tuple[Any, ...]], result_rows: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """Fold each answer to a call opened in the same batch into that call's row.

    An agent loop appends a tool call and its result together: inserting the row as the
    UPDATE would leave it (status, result message, completion time) ends in the same
    table, one statement instead of two. Answers to calls stored earlier (or that match
    no row of the batch: the UPDATE's `id` and `session_id` both) stay UPDATEs, in order.
    """
    opened = {row[0]: i for i, row in enumerate(call_rows)}
    updates = []
    for status, result_id, completed, tool_id, session_id in result_rows:
        i = opened.get(tool_id)
        if i is None or call_rows[i][1] != session_id:
            updates.append((status, result_id, completed, tool_id, session_id))
            continue
        row = call_rows[i]
        call_rows[i] = (*row[:3], result_id, row[4], status, row[6], row[7], row[8], completed)
    return updates


def _stored_provider_ids(conn: _sql.Db, messages: Sequence[Message]) -> dict[tuple[str, str, str], str]:
    """`stored_provider_ids` for every tool call the batch's checked messages open."""
    wanted: dict[str, set[str]] = {}
    for message in messages:
        if message.role == _ASSISTANT and message.metadata.provider is not None:
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    wanted.setdefault(message.session_id, set()).add(block.id)
    return stored_provider_ids(conn, wanted)


def _tool_call_rows(  # noqa: PLR0917  (runs once per message: positional on purpose)
    message: Message,
    created: int,
    tool_ids: ToolIdMap | None,
    stored: Callable[[tuple[str, str, str]], str | None],
    call_rows: list[tuple[Any, ...]],
    result_rows: list[tuple[Any, ...]],
) -> None:
    """The `tool_calls` rows `message` opens (`call_rows`) and the answers it gives
    (`result_rows`, parameters of `_sql.ANSWER_OPEN_CALL`). A tool call's provider id comes
    from `tool_ids` when given, else from `stored((session, canonical, provider))`."""
    role = message.role
    if role == _ASSISTANT:
        session_id, provider = message.session_id, message.metadata.provider
        is_open = message.metadata.status == _COMPLETE
        status = PENDING if is_open else CANCELLED
        for b in message.content:
            if not isinstance(b, ToolUseBlock):
                continue
            if provider is None:
                provider_id = None
            elif tool_ids is not None:
                provider_id = tool_ids.provider_id(b.id, provider)
            else:
                provider_id = stored((session_id, b.id, provider))
            call_rows.append(
                (
                    b.id,
                    session_id,
                    message.id,
                    None,
                    b.name,
                    status,
                    provider_id,
                    provider,
                    created,
                    None if is_open else created,
                )
            )
    elif role == _TOOL:
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                status = FAILED if block.is_error else SUCCEEDED
                if message.metadata.status == _CANCELLED:  # a stand-in for a call that never ran
                    status = CANCELLED
                result_rows.append((status, message.id, created, block.tool_use_id, message.session_id))


def _entry_row(session_id: str, seq: int, entry: ToolIdEntry) -> tuple[Any, ...]:
    return (session_id, entry.canonical, entry.provider, entry.provider_id, entry.origin, seq)


def _sync_tool_ids(conn: _sql.Db, tool_ids: ToolIdMap) -> None:
    """Save the map, writing only its new entries when the stored ones are its prefix.

    A ToolIdMap only ever grows, so after each response the stored map is a prefix of the
    caller's; the last stored entry is compared to make sure, else the map is rewritten.
    """
    sid = tool_ids.session_id
    entries = list(tool_ids)
    last = conn.execute(
        "SELECT seq, canonical, provider, provider_id, origin FROM tool_id_map WHERE session_id = ? "
        "ORDER BY seq DESC LIMIT 1",
        (sid,),
    ).fetchone()
    stored = 0 if last is None else int(last[0]) + 1
    if stored > len(entries) or (last is not None and ToolIdEntry(*last[1:]) != entries[stored - 1]):
        conn.execute("DELETE FROM tool_id_map WHERE session_id = ?", (sid,))  # not a prefix: rewrite
        stored = 0
    if stored < len(entries):
        conn.executemany(
            "INSERT INTO tool_id_map (session_id, canonical, provider, provider_id, origin, seq) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [_entry_row(sid, stored + i, e) for i, e in enumerate(entries[stored:])],
        )


def _policy_json(policy: Mapping[str, Any] | None) -> str | None:
    if policy is None:
        return None
    try:
        return _json.dumps(dict(policy), option=orjson.OPT_SORT_KEYS, what="routing_policy").decode()
    except TypeError as exc:
        raise StoreError(f"routing_policy is not JSON-serializable: {exc}") from exc


def _session(row: Sequence[Any]) -> SessionInfo:
    policy = None if row[3] is None else _json.loads(row[3])
    return SessionInfo(
        id=row[0],
        workspace_path=row[1],
        active_model=row[2],
        routing_policy=policy,
        schema_version=int(row[4]),
        created_at=from_micros(row[5]),
        updated_at=from_micros(row[6]),
        title=row[7],
        source=row[8],
        parent_session_id=row[9],
        fork_message_id=row[10],
    )


def _label(name: str, value: str | None, *, limit: int = _MAX_LABEL) -> str | None:
    """A session label as stored: None, or a string of at most `limit` characters."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise StoreError(f"session {name} must be a string of at most {limit} characters, got {value!r:.80}")
    return value


def _tool_call(row: Sequence[Any]) -> ToolCallRecord:
    return ToolCallRecord(
        id=row[0],
        session_id=row[1],
        message_id=row[2],
        result_message_id=row[3],
        name=row[4],
        status=ToolCallStatus(row[5]),
        provider_id=row[6],
        provider=row[7],
        created_at=from_micros(row[8]),
        completed_at=None if row[9] is None else from_micros(row[9]),
    )


__all__ = ["Store"]
