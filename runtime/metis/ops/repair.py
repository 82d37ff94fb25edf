"""Repair: answer every tool call a crash left open, so the session can be sent again.

A process that dies between a model's tool call and the tool's result leaves the session
with a call no TOOL message answers, and every provider refuses a history like that (the
client refuses it first: `_refuse_unanswered`). Repair closes each such call with a
synthesized TOOL message: `is_error` true, a text saying the call was interrupted and
why, and status CANCELLED, which the store reads as "this call did not run to
completion" and records as a `cancelled` tool_calls row in the same transaction.

A reply whose stream was cut without its end being saved (the process died, or the store
failed mid-stream) stays a PARTIAL checkpoint; repair, and the client before each send
(`settle_partials`), finalize it in place as CANCELLED with what arrived and
`provider_raw["interrupted"]` saying why, as a stream cut while the client runs is saved.
Neither should run while another process is still streaming into the same session.

Idempotent: a repaired call is answered, so a second repair finds nothing to do, even one
running at the same time: the open calls are read inside the write transaction that
stores their stand-ins (`Store.append_planned`), so of two repairs of one session the
second waits for the first and then finds nothing open. Open calls are read from the
history (tool_use blocks of COMPLETE assistant turns without a
result), the same rule the client applies before sending, so any store that can load a
session can be repaired. Stand-ins are appended at the end of the session: the store is
append-only, so a call that later turns already follow is answered after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from metis_schema.v3 import (
    Message,
    MessageMetadata,
    MessageStatus,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from ..ids import ToolIdMap, new_message_id

DEFAULT_REASON = "the tool loop stopped before the tool returned a result"
"""Why a call is said to be interrupted when the caller does not say."""


class RepairStore(Protocol):
    """The store operations repair uses (`metis.store.Store` has them)."""

    def load_session(self, session_id: str) -> Sequence[Message]: ...

    def append_planned(
        self, session_id: str, plan: Callable[[list[Message]], Sequence[Message]]
    ) -> list[Message]: ...

    def finalize(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> Any: ...


INTERRUPTED = "the stream ended without its end being saved; this is what had arrived"
"""`provider_raw["interrupted"]` of a PARTIAL checkpoint finalized by `settle_partials`."""


def settle_partials(store: RepairStore, history: Sequence[Message]) -> list[Message]:
    """Finalize every PARTIAL assistant checkpoint of `history` as CANCELLED (see module doc);
    the messages stored. A checkpoint is what had arrived when it was last written."""
    settled = []
    for message in history:
        if message.role != Role.assistant or message.metadata.status != MessageStatus.partial:
            continue
        raw = {**(message.metadata.provider_raw or {}), "interrupted": INTERRUPTED}
        metadata = message.metadata.model_copy(
            update={"status": MessageStatus.cancelled, "provider_raw": raw}
        )
        final = message.model_copy(update={"metadata": metadata})
        store.finalize(final)
        settled.append(final)
    return settled


def open_calls(history: Sequence[Message]) -> list[ToolUseBlock]:
    """The tool calls of COMPLETE assistant turns that no TOOL message answers, in order.

    A CANCELLED or ERROR assistant turn is not replayed (its calls are already
    `cancelled` rows), so its calls need no answer.
    """
    answered = {
        block.tool_use_id
        for message in history
        if message.role == Role.tool
        for block in message.content
        if isinstance(block, ToolResultBlock)
    }
    return [
        block
        for message in history
        if message.role == Role.assistant and message.metadata.status == MessageStatus.complete
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.id not in answered
    ]


def interrupted_text(call: ToolUseBlock, reason: str) -> str:
    """What the model reads in place of the result it never got."""
    return (
        f"Tool call {call.name} ({call.id}) was interrupted: {reason}. It returned no result "
        "and may not have run; metis recorded this in its place when the session was repaired."
    )


def stand_in(session_id: str, call: ToolUseBlock, reason: str) -> Message:
    """The CANCELLED TOOL message that answers `call` with an interruption error."""
    result = ToolResultBlock(
        type="tool_result",
        tool_use_id=call.id,
        content=[TextBlock(type="text", text=interrupted_text(call, reason))],
        is_error=True,
    )
    return Message(
        id=new_message_id(),
        session_id=session_id,
        role=Role.tool,
        content=[result],
        metadata=MessageMetadata(parent_tool_use_id=call.id, status=MessageStatus.cancelled),
        created_at=datetime.now(UTC),
    )


def repair_session(
    store: RepairStore,
    session_id: str,
    *,
    reason: str = DEFAULT_REASON,
    history: Sequence[Message] | None = None,
) -> list[Message]:
    """Settle the session's PARTIAL checkpoints and answer every open tool call (see module
    doc); the messages stored: CANCELLED assistant turns first, then the stand-ins.

    All stand-ins go in one transaction, which reads the open calls. An empty list means
    there was nothing to repair. `history`: the session's messages when the caller has
    just read them (the client does, incrementally); when they hold no open call, no
    transaction is taken.
    """
    if history is None:
        history = store.load_session(session_id)
    settled = settle_partials(store, history)
    if not open_calls(history):
        return settled

    def answers(current: list[Message]) -> list[Message]:
        return [stand_in(session_id, call, reason) for call in open_calls(current)]

    return [*settled, *store.append_planned(session_id, answers)]


__all__ = [
    "DEFAULT_REASON",
    "INTERRUPTED",
    "RepairStore",
    "interrupted_text",
    "open_calls",
    "repair_session",
    "settle_partials",
    "stand_in",
]
