"""What the store hands back besides messages: sessions, tool call rows, and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from ..errors import StoreError


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


class DuplicateMessageError(StoreError):
    """A message with this id is already stored; nothing was written."""


__all__ = ["DuplicateMessageError", "SessionInfo", "ToolCallRecord", "ToolCallStatus"]
