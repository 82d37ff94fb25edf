"""Name the broken tool links of a stored session while it is read, for readers that show
or export it.

The store checks every link when a message is appended (§5.2.2, §5.2.3), so a session it
wrote has none broken. A row changed afterwards can break one: a tool_use id edited in
the database leaves a result answering no call (an orphan) and a call no result answers.
`metis show` and `metis export` still show and write such a session — it is the record —
but say so: `audited` passes the messages through and logs one WARN per broken link on
logger `metis.ops.links` (the CLI prints them on stderr), naming the session and the
message, with `extra={"session_id", "message_id", "tool_id"}`.

The links are judged by `metis.invariants.check_links`, the one copy of the rules, fed the
calls seen so far. A call of a COMPLETE assistant turn that no result answers is named at
the end (its result may be the damaged row; or the tool loop stopped there, and
`metis repair` answers it), as `metis.ops.repair.open_calls` finds them. Memory: the ids
of the session's calls, not its messages.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from metis_schema.v3 import Message, MessageStatus, Role, ToolResultBlock, ToolUseBlock

from ..invariants import check_links

log = logging.getLogger(__name__)


def audited(session_id: str, messages: Iterable[Message]) -> Iterator[Message]:
    """`messages` as they are, a WARN logged for each broken tool link (see module doc)."""
    calls: dict[str, str] = {}  # every tool_use id seen -> its session (what check_links reads)
    answered: set[str] = set()
    waiting: dict[str, tuple[str, str]] = {}  # open calls of COMPLETE turns -> (message id, name)
    for message in messages:
        for violation in check_links(message, tool_uses=calls, answered=answered):
            log.warning(
                "session %s, message %s: %s (%s); a damaged row?",
                session_id,
                message.id,
                violation.problem,
                violation.path,
                extra={"session_id": session_id, "message_id": message.id, "tool_id": None},
            )
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                calls.setdefault(block.id, message.session_id)
                if message.role == Role.assistant and message.metadata.status == MessageStatus.complete:
                    waiting[block.id] = (message.id, block.name)
            elif isinstance(block, ToolResultBlock) and message.role == Role.tool:
                answered.add(block.tool_use_id)
                waiting.pop(block.tool_use_id, None)
        yield message
    for tool_id, (message_id, name) in waiting.items():
        log.warning(
            "session %s, message %s: tool call %s (%s) has no result (its result's row may be "
            "damaged; `metis repair` answers a call the tool loop left open)",
            session_id,
            message_id,
            tool_id,
            name,
            extra={"session_id": session_id, "message_id": message_id, "tool_id": tool_id},
        )


__all__ = ["audited"]
