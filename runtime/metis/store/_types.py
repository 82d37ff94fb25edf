"""What the store hands back besides messages: sessions, tool call rows, and its errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from ..errors import MetisError, StoreError


class ToolCallStatus(StrEnum):
    """Lifecycle of one tool call in the `tool_calls` table (spec §9.1)."""

    pending = "pending"
    """Issued by the model; no TOOL message has answered it yet."""
    succeeded = "succeeded"
    """Answered by a tool_result with is_error false."""
    failed = "failed"
    """Answered by a tool_result with is_error true."""
    cancelled = "cancelled"
    """Its assistant turn was cancelled or failed, or a CANCELLED TOOL message stands in for
    its result (`metis.ops.repair`): it did not run to completion."""


PENDING, SUCCEEDED = ToolCallStatus.pending.value, ToolCallStatus.succeeded.value
FAILED, CANCELLED = ToolCallStatus.failed.value, ToolCallStatus.cancelled.value
"""The statuses as the plain strings the `tool_calls` rows hold (read once: an enum
member's `.value` is a property call, and the rows are built once per tool call)."""


@dataclass(frozen=True)
class SessionInfo:
    """One row of `sessions`."""

    id: str
    workspace_path: str
    active_model: str | None
    routing_policy: dict[str, Any] | None
    schema_version: int
    """Canonical message schema version the session was created under."""
    created_at: datetime
    updated_at: datetime
    """Time of the session's last change (a message appended, the model swapped)."""
    title: str | None = None
    """What the session is called in a list (`metis sessions`); None until one is given."""
    source: str | None = None
    """Where it came from: "chat", "demo", the file it was imported from, ... (free text)."""
    parent_session_id: str | None = None
    """The session it was forked from (a record: that session may since have been deleted)."""
    fork_message_id: str | None = None
    """The parent's message the fork's history ends with (None unless forked)."""


@dataclass(frozen=True)
class ToolCallRecord:
    """One row of `tool_calls`: a tool_use and, once answered, its result."""

    id: str
    session_id: str
    message_id: str
    result_message_id: str | None
    name: str
    status: ToolCallStatus
    provider_id: str | None
    provider: str | None
    created_at: datetime
    completed_at: datetime | None


@dataclass
class SessionStats:
    """What a list of sessions says about one, counted by the database (`Store.session_stats`)
    without reading a message into a model."""

    messages: int = 0
    """Rows this metis can read (not those below)."""
    tokens: int = 0
    """Input (with cache writes and cached reads) and output tokens of every usage."""
    cost: Decimal = field(default_factory=Decimal)
    """Sum of the stored costs (exact on PostgreSQL; on SQLite summed as floats, exact to far
    more places than a list shows)."""
    with_usage: int = 0
    unpriced: int = 0
    """Messages whose usage was stored unpriced."""
    billed: Decimal | None = None
    """What providers reported they billed, over the replies that carry it (None: none do)."""
    first_user_text: str | None = None
    """The first non-blank text of a user message (what an untitled session is called)."""
    problems: list[MetisError] = field(default_factory=list)
    """One error per row not counted: a NewerSchemaError for a row a newer metis wrote, a
    StoreError naming a damaged row (its JSON broken, or not shaped as a message)."""


class DuplicateMessageError(StoreError):
    """A message with this id is already stored; nothing was written."""


__all__ = ["DuplicateMessageError", "SessionInfo", "SessionStats", "ToolCallRecord", "ToolCallStatus"]
