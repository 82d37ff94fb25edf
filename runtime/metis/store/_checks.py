"""Is this message allowed at the end of its session? Answered from the row, not the history.

Appending must not reload the conversation: a session of 10,000 messages would make
every append read all of them. The per-message invariants (spec §5.1, §5.3) need only the
message (`metis.invariants.check_message`); the cross-message ones of §5.2 — a
tool_result answers a tool_use of the same session (§5.2.2), at most once, and tool ids
are never reused (§5.2.3) — need only the `tool_calls` rows of the ids this message
mentions, one indexed lookup (`metis.invariants.check_links`). One rule comes from the
store's layout and is added here: `created_at` must be UTC (§4.1; the column holds UTC
microseconds, so another offset could not be read back as written).

A batch of writes (`BatchChecks`) asks the same questions with one query for the whole
batch instead of one per message, and answers later messages from what the earlier ones
of the batch will have written: the same verdicts, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson
from metis_schema.v3 import Message, ToolResultBlock, ToolUseBlock

from ..invariants import Violation, check_links, check_message
from ._sql import Cursor, Db

_ZERO = timedelta(0)


@dataclass(frozen=True)
class KnownCall:
    """What the `tool_calls` table knows about one canonical tool id."""

    session_id: str
    answered: bool


def referenced_ids(message: Message) -> set[str]:
    """Every tool id `message` names: its tool_uses, its tool_results, its parent_tool_use_id."""
    ids: set[str] = set()
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            ids.add(block.id)
        elif isinstance(block, ToolResultBlock):
            ids.add(block.tool_use_id)
    if message.metadata.parent_tool_use_id:
        ids.add(message.metadata.parent_tool_use_id)
    return ids


def by_ids(conn: Db, sql: str, ids: Iterable[str], *params: Any) -> Cursor:
    """Run `sql`, whose `{ids}` is a table of `ids` (its first parameter: a JSON array).

    The one way the store looks rows up by a list of ids: `{ids} table ON
    table.key = j.value` (SQLite's `json_each`, PostgreSQL's `jsonb_array_elements_text`)
    drives one index probe per id, with no bound-parameter limit to chunk for and no SQL
    text that grows with the list (what `IN (...)` with hundreds of `?` would be).
    """
    return conn.execute(sql.format(ids=conn.dialect.ids), (orjson.dumps(list(ids)).decode(), *params))


def known_calls(conn: Db, ids: Iterable[str]) -> dict[str, KnownCall]:
    """`tool_calls` rows for `ids` (any session: a foreign id must be seen to be refused)."""
    rows = by_ids(
        conn,
        "SELECT t.id, t.session_id, t.result_message_id FROM {ids} tool_calls AS t ON t.id = j.value",
        ids,
    )
    return {row[0]: KnownCall(row[1], row[2] is not None) for row in rows}


def _check_utc(message: Message, found: list[Violation]) -> None:
    offset = message.created_at.utcoffset()
    if offset != _ZERO:
        found.append(
            Violation(message.id, "created_at", "§4.1", f"created_at must be UTC, has offset {offset}")
        )


Stored = tuple[str, str | None]
"""(session id, status) of a stored message."""


def stored_messages(conn: Db, ids: Iterable[str]) -> dict[str, Stored]:
    """(session id, status) of the stored messages among `ids`."""
    status = conn.dialect.status_of.format("m.metadata_json")
    rows = by_ids(
        conn,
        f"SELECT m.id, m.session_id, {status} FROM {{ids}} messages AS m ON m.id = j.value",
        ids,
    )
    return {row[0]: (row[1], row[2]) for row in rows}


def stored_provider_ids(conn: Db, wanted: Mapping[str, Iterable[str]]) -> dict[tuple[str, str, str], str]:
    """(session, canonical, provider) -> the first provider id the stored tool id map binds,
    for the canonical ids `wanted` names per session (one query per session)."""
    found: dict[tuple[str, str, str], str] = {}
    for session_id, canonical in wanted.items():
        if not has_stored_map(conn, session_id):
            continue  # the common case when no map is given: nothing to look up
        rows = by_ids(
            conn,
            "SELECT m.canonical, m.provider, m.provider_id FROM {ids} "
            "tool_id_map AS m ON m.session_id = ? AND m.canonical = j.value ORDER BY m.seq",
            canonical,
            session_id,
        )
        for canon, provider, provider_id in rows:
            found.setdefault((session_id, canon, provider), str(provider_id))
    return found


def has_stored_map(conn: Db, session_id: str) -> bool:
    """True when the session has a stored tool id map (one index probe)."""
    row = conn.execute("SELECT 1 FROM tool_id_map WHERE session_id = ? LIMIT 1", (session_id,))
    return row.fetchone() is not None


class BatchChecks:
    """`violations` and duplicate detection for a batch of writes (or one message), in order.

    Built inside the batch's transaction: two lookups (the tool ids of the `checked`
    messages in `tool_calls`, the ids of all `messages` in `messages`) replace the
    per-message queries. (A PARTIAL checkpoint is written unchecked, §5.1.5: it is among
    `messages`, for its id, and not among `checked`.) Then, message by message,
    `violations` answers as if the earlier messages had been written and looked up again,
    and `written` records what writing one changed: its id is taken, the tool_use rows
    it opened exist (open), the tool_use rows it answered are answered (exactly the rows
    the store's UPDATE matches: same id, same session).
    """

    def __init__(self, conn: Db, messages: Sequence[Message], checked: Sequence[Message]) -> None:
        wanted: set[str] = set()
        for message in checked:
            wanted |= referenced_ids(message)
        known = known_calls(conn, wanted) if wanted else {}
        self._tool_uses = {tool_id: call.session_id for tool_id, call in known.items()}
        self._answered = {tool_id for tool_id, call in known.items() if call.answered}
        self._stored: dict[str, Stored] = stored_messages(conn, {m.id for m in messages})

    def violations(self, message: Message) -> list[Violation]:
        """Every reason `message` may not be appended now (the batch's earlier messages
        written); empty when it may."""
        found = check_message(message)
        ids = referenced_ids(message)
        if ids:
            # What `known_calls(conn, ids)` would return now: only the ids this message
            # names (check_links must not see the rest of the batch's).
            tool_uses = {i: self._tool_uses[i] for i in ids if i in self._tool_uses}
            answered = {i for i in ids if i in self._answered}
            found.extend(check_links(message, tool_uses=tool_uses, answered=answered))
        _check_utc(message, found)
        return found

    def existing(self, message_id: str) -> Stored | None:
        """(session id, status) of the message stored under this id now, if any."""
        return self._stored.get(message_id)

    def written(self, message_id: str, session_id: str, status: str) -> None:
        """Record that a message was written (then `opened` / `answered` its tool calls)."""
        self._stored[message_id] = (session_id, status)

    def opened(self, tool_id: str, session_id: str) -> None:
        """Record that a `tool_calls` row was written for `tool_id`."""
        self._tool_uses[tool_id] = session_id

    def answered(self, tool_id: str, session_id: str) -> None:
        """Record the store's UPDATE answering `tool_id` (it matches id and session)."""
        if self._tool_uses.get(tool_id) == session_id:
            self._answered.add(tool_id)


__all__ = [
    "BatchChecks",
    "KnownCall",
    "by_ids",
    "has_stored_map",
    "known_calls",
    "referenced_ids",
    "stored_messages",
    "stored_provider_ids",
]
