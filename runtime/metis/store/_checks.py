"""Is this message allowed at the end of its session? Answered from the row, not the history.

Appending must not reload the conversation: a session of 10,000 messages would make
every append read all of them. The per-message invariants (spec §5.1, §5.3) need only the
message (`metis.invariants.check_message`); the cross-message ones of §5.2 — a
tool_result answers a tool_use of the same session (§5.2.2), at most once, and tool ids
are never reused (§5.2.3) — need only the `tool_calls` rows of the ids this message
mentions, one indexed lookup (`metis.invariants.check_links`). One rule comes from the
store's layout and is added here: `created_at` must be UTC (§4.1; the column holds UTC
microseconds, so another offset could not be read back as written).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from metis_schema.v1 import Message, ToolResultBlock, ToolUseBlock

from ..invariants import Violation, check_links, check_message

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


def known_calls(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, KnownCall]:
    """`tool_calls` rows for `ids` (any session: a foreign id must be seen to be refused)."""
    wanted = list(ids)
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    rows = conn.execute(
        f"SELECT id, session_id, result_message_id FROM tool_calls WHERE id IN ({marks})",
        wanted,
    )
    return {row[0]: KnownCall(row[1], row[2] is not None) for row in rows}


def violations(conn: sqlite3.Connection, message: Message) -> list[Violation]:
    """Every reason `message` may not be appended now; empty when it may."""
    found = check_message(message)
    ids = referenced_ids(message)
    if ids:  # check_links looks at tool_use / tool_result blocks only
        known = known_calls(conn, ids)
        tool_uses = {tool_id: call.session_id for tool_id, call in known.items()}
        answered = {tool_id for tool_id, call in known.items() if call.answered}
        found.extend(check_links(message, tool_uses=tool_uses, answered=answered))
    offset = message.created_at.utcoffset()
    if offset != _ZERO:
        found.append(
            Violation(message.id, "created_at", "§4.1", f"created_at must be UTC, has offset {offset}")
        )
    return found


__all__ = ["KnownCall", "known_calls", "referenced_ids", "violations"]
