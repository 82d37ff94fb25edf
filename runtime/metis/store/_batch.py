"""`append_many`'s common case: each message encoded and screened in one pass, then written.

`sqlite._append_all` must refuse a batch exactly when appending its messages one by one
would, with the same error, and write the same rows. Its careful path (`BatchChecks`
per message, then `_tool_call_rows`) answers that, but walks every message several
times over: `encode`, `is_clean`, the link screen, `referenced_ids`, the provider id
lookup, the rows. For a batch of 1,000 messages that Python work cost more than all of
SQLite's inserts.

`prepare` encodes the batch and, in the same loop, screens each message on the JSON
values it was just written from (`_codec.encode_fast`: they mirror the models exactly,
each block the dict of a block of that very class, every field of its exact type), and
builds the `tool_calls` rows. The screen never decides that something is wrong: a
batch is either cleared, with its rows (`Prepared.walk`), or not, and then the careful
path runs from the start, finds the first failing message and raises what it raises.
So an uncleared batch costs time, never a different outcome, and the careful path stays
the only one that words errors.

The screen checks what `invariants.is_clean` and the careful path's per-message checks
check, and assumes, while it walks, that the database holds none of the batch's message
ids and tool ids, and that every call the batch answers without opening it is stored,
in the same session, unanswered. The writes themselves confirm it (`write_confirmed`):
the primary keys refuse a message id or tool id already stored (or twice in the batch),
and each such answer must update exactly one open row of its session. If anything
disagrees, the transaction is rolled back and the batch goes down the careful path
(`Unconfirmed`), which finds the problem and words the error.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from metis_schema.v1 import Message, Role

from ..ids import ToolIdMap, is_tool_id, provider_of
from ..invariants import ALLOWED_BLOCKS
from . import _sql
from ._checks import has_stored_map, stored_provider_ids
from ._codec import GcPaused, Row, encode_fast, encode_slow
from ._types import ToolCallStatus

_PENDING, _CANCELLED = ToolCallStatus.pending.value, ToolCallStatus.cancelled.value
_FAILED, _SUCCEEDED = ToolCallStatus.failed.value, ToolCallStatus.succeeded.value
_USER_KINDS = ALLOWED_BLOCKS[Role.user]
_SYSTEM_KINDS = ALLOWED_BLOCKS[Role.system]
_ASSISTANT_PLAIN = ALLOWED_BLOCKS[Role.assistant] - {"tool_use"}
"""§5.1.3's table, as the screen reads it (an ASSISTANT's tool_use blocks are screened one by one)."""


class Plan(NamedTuple):
    """The rows a batch writes: `messages` rows, `tool_calls` rows (answers to calls of the
    same batch folded in), and answers to calls stored before (`_sql.ANSWER_OPEN_CALL`)."""

    message_rows: Sequence[Row]
    call_rows: Sequence[Sequence[Any]]
    updates: Sequence[tuple[Any, ...]]


class Prepared(list[tuple[Message, Row]]):
    """A batch's (message, row) pairs, as `encode` makes them, and `walk`: the screen's
    result when it cleared every message, else None (the careful path decides)."""

    walk: _Screen | None = None


def prepare(messages: Iterable[Message], tool_ids: ToolIdMap | None) -> Prepared:
    """Encode each message (raising `encode`'s StoreError) and screen the batch, in one pass.

    The screen is written into the loop, the roles inline, on purpose: it runs once per
    appended message, and a method call per message was a sixth of its cost. It checks
    what `invariants.is_clean` and the careful path's per-message checks check, on the
    JSON values `encode_fast` just wrote the message from: a block's `type` is its
    class's tag, a present metadata field has its exact type, an absent one is None, a
    tool_result's parts are text and image blocks (the encoder writes no other), and
    `created_at` is UTC (the encoder takes no other time). At the first doubt the
    screen stops, and the careful path decides.

    The cyclic garbage collector is paused meanwhile, for the reason `decode_all` pauses
    it: a batch of 1,000 messages makes some 10,000 dicts, lists and tuples, none of them
    cyclic, and the collections they trigger traverse every live object of the process.
    """
    batch = Prepared()
    add = batch.append
    screen = _Screen(tool_ids)
    call_rows, calls, answered = screen.call_rows, screen.calls, screen.answered
    deferred, updates, unmapped = screen.deferred, screen.updates, screen.unmapped
    clear = True  # every message so far cleared
    with GcPaused(True):
        for message in messages:
            fast = encode_fast(message)
            if fast is None:
                add((message, encode_slow(message)))
                clear = False
                continue
            row, (blocks, meta) = fast
            add((message, row))
            if not clear:
                continue
            clear = False  # until this message is through
            status = meta["status"]
            if status == "partial":
                continue
            mid, session, role, created = row[0], row[1], row[2], row[5]
            if type(mid) is not str or type(session) is not str:
                continue
            if role == "tool":  # one tool_result, answering an open call of its session, once
                if len(blocks) != 1:
                    continue
                block = blocks[0]
                if block["type"] != "tool_result":
                    continue
                tool_id = block["tool_use_id"]
                if meta.get("parent_tool_use_id") != tool_id:
                    continue
                if tool_id in answered or not is_tool_id(tool_id):
                    continue
                answered.add(tool_id)
                state = _FAILED if block["is_error"] else _SUCCEEDED
                index = calls.get(tool_id)
                if index is None:  # a call stored before: its UPDATE must find it, open
                    deferred[tool_id] = session
                    updates.append((state, mid, created, tool_id, session))
                else:
                    call = call_rows[index]
                    if call[1] != session:
                        continue
                    call[3], call[5], call[9] = mid, state, created
            elif role == "assistant":  # §5.3 metadata when complete; a new row per tool_use
                complete = status == "complete"
                provider = meta.get("provider")
                model = meta.get("model")
                if complete and not (
                    blocks
                    and provider is not None
                    and model is not None
                    and provider_of(model) == provider
                    and "routing" in meta
                    and "usage" in meta
                ):
                    continue
                opened = True
                for block in blocks:
                    kind = block["type"]
                    if kind == "tool_use":
                        tool_id = block["id"]
                        if tool_id in calls or tool_id in deferred or not is_tool_id(tool_id):
                            opened = False
                            break
                        calls[tool_id] = len(call_rows)
                        provider_id = None
                        if provider is not None:
                            if tool_ids is not None:
                                provider_id = tool_ids.provider_id(tool_id, provider)
                            else:
                                unmapped.append(len(call_rows))
                        state, done = (_PENDING, None) if complete else (_CANCELLED, created)
                        call_rows.append(
                            [
                                tool_id,
                                session,
                                mid,
                                None,
                                block["name"],
                                state,
                                provider_id,
                                provider,
                                created,
                                done,
                            ]
                        )
                    elif kind not in _ASSISTANT_PLAIN:
                        opened = False
                        break
                if not opened:
                    continue
            else:  # user or system: no generator expressions here, each costs a block's screening
                kinds = _USER_KINDS if role == "user" else _SYSTEM_KINDS
                if not blocks and status == "complete" and role == "user":
                    continue
                for block in blocks:
                    if block["type"] not in kinds:
                        break
                else:
                    clear = True
                continue
            clear = True
    batch.walk = screen if clear else None
    return batch


def cleared(batch: object) -> bool:
    """True when `prepare` cleared every message of `batch` (so none of them is PARTIAL)."""
    return isinstance(batch, Prepared) and batch.walk is not None


def confirmed(conn: sqlite3.Connection, batch: Sequence[tuple[Message, Row]]) -> Plan | None:
    """The rows to write for a cleared batch (None: the careful path decides); what it
    assumed of the database is confirmed as they are written (`write_confirmed`)."""
    screen = batch.walk if isinstance(batch, Prepared) else None
    if screen is None:
        return None
    if screen.unmapped:
        _fill_provider_ids(conn, screen)
    return Plan([row for _, row in batch], screen.call_rows, screen.updates)


def write_confirmed(conn: sqlite3.Connection, batch: Sequence[tuple[Message, Row]], plan: Plan) -> None:
    """Write a cleared batch's rows, the database confirming what the screen assumed.

    The primary keys refuse a message id or a tool id already stored (or twice in the
    batch), and each answer to a call stored before must update exactly one row: that
    call, in the same session, still unanswered. Anything else rolls the transaction
    back (`Unconfirmed`) and the batch runs again down the careful path, which finds the
    problem and words it. No lookup is made first: the writes are the lookups.
    """
    try:
        conn.executemany(_sql.INSERT_MESSAGE, plan.message_rows)
        if plan.call_rows:
            _sql.insert_tool_calls(conn, plan.call_rows)
    except sqlite3.IntegrityError:
        forget(batch)
        raise Unconfirmed from None
    if plan.updates:
        answered = conn.executemany(_sql.ANSWER_OPEN_CALL, plan.updates).rowcount
        if answered != len(plan.updates):
            forget(batch)
            raise Unconfirmed


class Unconfirmed(Exception):
    """The INSERT of a cleared batch's messages failed (an id already stored, or twice in
    the batch): the transaction is rolled back and the batch, `forget`-ed, runs again
    down the careful path, which finds the duplicate and words the error."""


def forget(batch: Sequence[tuple[Message, Row]]) -> None:
    """Send `batch` down the careful path from now on (its INSERT was refused)."""
    if isinstance(batch, Prepared):
        batch.walk = None


class _Screen:
    """What the screen has built and learned so far, over the messages of one batch."""

    __slots__ = ("answered", "call_rows", "calls", "deferred", "filled", "tool_ids", "unmapped", "updates")

    def __init__(self, tool_ids: ToolIdMap | None) -> None:
        self.tool_ids = tool_ids
        self.call_rows: list[list[Any]] = []
        """The batch's `tool_calls` rows, answers to calls of the batch folded in."""
        self.updates: list[tuple[Any, ...]] = []
        """Answers to calls stored before (`_sql.ANSWER_OPEN_CALL` parameters)."""
        self.calls: dict[str, int] = {}
        """Tool id -> index in `call_rows`, for each tool_use of the batch."""
        self.answered: set[str] = set()
        """Tool ids the batch's tool_results answer."""
        self.deferred: dict[str, str] = {}
        """Tool id -> session, for each answer to a call the batch did not open."""
        self.unmapped: list[int] = []
        """Indexes of call rows whose provider id is to be read from the stored map."""
        self.filled = False
        """Some of those rows hold a provider id read from the map (a retry must reset them)."""


def _fill_provider_ids(conn: sqlite3.Connection, screen: _Screen) -> None:
    """Provider ids of the batch's calls from the stored tool id map (no map was given), as
    the careful path reads them (`stored_provider_ids`). Every such row is (re)set: a
    retried transaction may find another map. Sessions without a stored map (the usual
    case when none is given) are passed over without walking their rows."""
    call_rows, unmapped = screen.call_rows, screen.unmapped
    mapped = {session for session in {call_rows[i][1] for i in unmapped} if has_stored_map(conn, session)}
    if not mapped and not screen.filled:
        return  # every provider id stays None, as `prepare` left it
    wanted: dict[str, list[str]] = {}
    for index in unmapped:
        call = call_rows[index]
        if call[1] in mapped:
            wanted.setdefault(call[1], []).append(call[0])
    found = stored_provider_ids(conn, wanted)
    for index in unmapped:
        call = call_rows[index]
        call[6] = found.get((call[1], call[0], call[7]))
    screen.filled = bool(found)


__all__ = ["Plan", "Prepared", "Unconfirmed", "cleared", "confirmed", "forget", "prepare"]
