"""`append_many`'s common case: each message encoded, screened and inserted in one pass.

`Store.append_many` must refuse a batch exactly when appending its messages one by one
would, with the same error, and write the same rows. Its careful path (`sqlite._put`:
`BatchChecks` per message, then `_tool_call_rows`) answers that, but walks every message
several times over: `encode`, `is_clean`, the link screen, `referenced_ids`, the
provider id lookup, the rows. For a batch of 1,000 messages that Python work cost more
than all of SQLite's inserts.

`write` runs inside the batch's transaction. It hands SQLite's `executemany` a generator
(`_rows`) that encodes each message (`_codec.encode_fast`), screens it on the JSON values
it was just written from (they mirror the models exactly: each block the dict of a block
of that very class, of a kind its role may carry, every field of its exact type), builds
its `tool_calls` rows, and yields its `messages` row, which SQLite inserts while its
strings are still in the CPU's caches. The screen never decides that something is
wrong: at the first doubt it raises `Unconfirmed`, the caller rolls the transaction back,
and the careful path runs from the start, finds the first failing message and raises
what it raises. So a doubtful batch costs time, never a different outcome, and the
careful path stays the only one that words errors.

The screen checks what `invariants.is_clean` and the careful path's per-message checks
check, and assumes, while it walks, that the database holds none of the batch's message
ids and tool ids, that its sessions exist, and that every call the batch answers without
opening it is stored, in the same session, unanswered. The writes themselves confirm it:
the primary and foreign keys refuse a message id or tool id already stored (or twice in
the batch) and a session that does not exist, and each such answer must update exactly
one open row of its session. If anything disagrees, `Unconfirmed` again.

The write lock is held while the batch is encoded (some 4 µs a message): the price of
inserting each row as it is made rather than holding a thousand of them first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from metis_schema.v1 import Message

from ..ids import ToolIdMap, is_tool_id, provider_of
from . import _sql
from ._checks import stored_provider_ids
from ._codec import GcPaused, Row, encode_fast
from ._types import CANCELLED, FAILED, PENDING, SUCCEEDED


class Unconfirmed(Exception):
    """The fast path cannot vouch for the batch (a doubt of the screen, or a write the
    database refused): the caller rolls the transaction back and runs the careful path,
    which finds the problem, if there is one, and words it."""


def write(
    conn: sqlite3.Connection, messages: Sequence[Message], tool_ids: ToolIdMap | None, now: int
) -> None:
    """Write the batch's `messages` and `tool_calls` rows and touch its sessions (`now`),
    in the caller's transaction; raises Unconfirmed (the caller must roll back) at any doubt.

    The cyclic garbage collector is paused meanwhile, for the reason `decode_all` pauses
    it: a batch of 1,000 messages makes some 10,000 dicts, lists and tuples, none of them
    cyclic, and the collections they trigger traverse every live object of the process.
    """
    walk = _Walk()
    with GcPaused(True):
        try:
            conn.executemany(_sql.INSERT_MESSAGE, _rows(messages, tool_ids, walk))
        except sqlite3.IntegrityError:  # a message id taken, or a session that does not exist
            raise Unconfirmed from None
    for session_id in walk.sessions:
        if conn.execute(_sql.TOUCH_SESSION, (now, session_id)).rowcount != 1:
            raise Unconfirmed
    if walk.unmapped:
        _fill_provider_ids(conn, walk)
    if walk.call_rows:
        try:
            _sql.insert_tool_calls(conn, walk.call_rows)
        except sqlite3.IntegrityError:  # a tool id already stored
            raise Unconfirmed from None
    updates = walk.updates
    if updates and conn.executemany(_sql.ANSWER_OPEN_CALL, updates).rowcount != len(updates):
        raise Unconfirmed  # a call stored before that is not open in that session


class _Walk:
    """What `_rows` has built and learned so far, over the messages of one batch."""

    __slots__ = ("call_rows", "sessions", "unmapped", "updates")

    def __init__(self) -> None:
        self.sessions: dict[str, None] = {}
        """The batch's sessions, in order of appearance."""
        self.call_rows: list[list[Any]] = []
        """The batch's `tool_calls` rows, answers to calls of the batch folded in."""
        self.updates: list[tuple[Any, ...]] = []
        """Answers to calls stored before (`_sql.ANSWER_OPEN_CALL` parameters)."""
        self.unmapped: list[int] = []
        """Indexes of call rows whose provider id is to be read from the stored map."""


def _rows(messages: Sequence[Message], tool_ids: ToolIdMap | None, walk: _Walk) -> Iterator[Row]:
    """Each message's `messages` row, once encoded and screened (raises Unconfirmed).

    The screen is written into the loop, the roles inline, on purpose: it runs once per
    appended message, and a method call per message was a sixth of its cost. It checks
    what `invariants.is_clean` and the careful path's per-message checks check, on the
    JSON values `encode_fast` just wrote the message from: a block's `type` is its
    class's tag and of a kind its role may carry, a present metadata field has its exact
    type, an absent one is None, a tool_result's parts are text and image blocks (the
    encoder writes no other), and `created_at` is UTC (the encoder takes no other time).
    """
    own_session = None if tool_ids is None else tool_ids.session_id
    sessions, call_rows, updates, unmapped = walk.sessions, walk.call_rows, walk.updates, walk.unmapped
    calls: dict[str, int] = {}  # tool id -> index in call_rows, for each tool_use of the batch
    answered: set[str] = set()  # tool ids the batch's tool_results answer
    deferred: set[str] = set()  # ... of them, those of calls the batch did not open
    last = None  # the session of the message before
    for message in messages:
        fast = encode_fast(message)
        if fast is None:
            raise Unconfirmed
        row, (blocks, meta) = fast
        status = meta["status"]
        if status == "partial":  # stored as a checkpoint: the careful path's to do
            raise Unconfirmed
        mid, session, role, created = row[0], row[1], row[2], row[5]
        if type(mid) is not str or type(session) is not str:
            raise Unconfirmed
        if session is not last:
            if own_session is not None and session != own_session:
                raise Unconfirmed  # a tool id map of another session: the careful path says so
            sessions[session] = None
            last = session
        if role == "tool":  # one tool_result, answering an open call of its session, once
            if len(blocks) != 1:
                raise Unconfirmed
            block = blocks[0]
            tool_id = block["tool_use_id"]
            if meta.get("parent_tool_use_id") != tool_id or tool_id in answered or not is_tool_id(tool_id):
                raise Unconfirmed
            answered.add(tool_id)
            state = FAILED if block["is_error"] else SUCCEEDED
            index = calls.get(tool_id)
            if index is None:  # a call stored before: its UPDATE must find it, open
                deferred.add(tool_id)
                updates.append((state, mid, created, tool_id, session))
            else:
                call = call_rows[index]
                if call[1] != session:
                    raise Unconfirmed
                call[3], call[5], call[9] = mid, state, created
        elif role == "assistant":  # §5.3 metadata when complete; a new row per tool_use
            provider = meta.get("provider")
            if status == "complete":
                model = meta.get("model")
                if not (
                    blocks
                    and provider is not None
                    and model is not None
                    and provider_of(model) == provider
                    and "routing" in meta
                    and "usage" in meta
                ):
                    raise Unconfirmed
                state, done = PENDING, None
            else:
                state, done = CANCELLED, created
            for block in blocks:
                if block["type"] != "tool_use":
                    continue
                tool_id = block["id"]
                if tool_id in calls or tool_id in deferred or not is_tool_id(tool_id):
                    raise Unconfirmed
                calls[tool_id] = len(call_rows)
                provider_id = None
                if provider is not None:
                    if tool_ids is not None:
                        provider_id = tool_ids.provider_id(tool_id, provider)
                    else:
                        unmapped.append(len(call_rows))
                call_rows.append(
                    [tool_id, session, mid, None, block["name"], state, provider_id, provider, created, done]
                )
        elif not blocks and status == "complete" and role == "user":  # §5.1.1
            raise Unconfirmed
        yield row


def _fill_provider_ids(conn: sqlite3.Connection, walk: _Walk) -> None:
    """Provider ids of the batch's calls from the stored tool id map (no map was given), as
    the careful path reads them (`stored_provider_ids`, which passes over sessions without
    a stored map: the usual case when none is given)."""
    call_rows = walk.call_rows
    wanted: dict[str, list[str]] = {}
    for index in walk.unmapped:
        call = call_rows[index]
        wanted.setdefault(call[1], []).append(call[0])
    found = stored_provider_ids(conn, wanted)
    if found:
        for index in walk.unmapped:
            call = call_rows[index]
            call[6] = found.get((call[1], call[0], call[7]))


__all__ = ["Unconfirmed", "write"]
