"""Small builders for canonical messages: `metis.user("hi")`, `metis.tool_result(id, "42")`.

A `Message` needs an id, a session id, metadata and a creation time besides its content;
writing those by hand for every turn buries what the turn says. These builders fill them
in (a fresh monotonic ULID, UTC now, empty metadata) and validate the result, so a bad
argument fails here with a `DocumentError` naming the field, not later in an adapter.
The client's sessions build their user and tool messages through the same functions.
There is no assistant builder: a complete reply carries its model, provider, routing and
usage (spec §5.3), which an adapter reading the provider's response fills in.

`session_id` defaults to `LOCAL_SESSION`: enough for messages that are only translated
(`adapter.to_wire`) or hashed. Messages you store belong to a real session: pass its id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import ContentBlock, Message, Role, TextBlock
from pydantic import ValidationError

from .errors import DocumentError
from .ids import new_message_id
from .validation import pydantic_problems

Content = str | Sequence[ContentBlock | Mapping[str, Any]]
"""Plain text, or content blocks (models or their JSON form)."""

LOCAL_SESSION = "local"
"""The session id of messages built without one (translation and hashing only)."""


def blocks(content: Content) -> list[Any]:
    """`content` as a list of blocks: text becomes one TextBlock."""
    if isinstance(content, str):
        return [TextBlock(type="text", text=content)]
    return list(content)


def message(
    role: Role | str,
    content: Content,
    *,
    session_id: str = LOCAL_SESSION,
    metadata: Mapping[str, Any] | None = None,
    what: str = "message",
) -> Message:
    """A validated canonical message of `role` with a fresh id and the current UTC time."""
    try:
        return Message.model_validate(
            {
                "id": new_message_id(),
                "session_id": session_id,
                "role": role,
                "content": blocks(content),
                "metadata": dict(metadata or {}),
                "created_at": datetime.now(UTC),
                "schema_version": CURRENT_VERSION,
            }
        )
    except ValidationError as exc:
        raise DocumentError(what, pydantic_problems(exc)) from None


def user(content: Content, *, session_id: str = LOCAL_SESSION) -> Message:
    """A USER message: `metis.user("What is in README.md?")`."""
    return message(Role.user, content, session_id=session_id, what="user message")


def system(content: Content, *, session_id: str = LOCAL_SESSION) -> Message:
    """A SYSTEM message (instructions); adapters place it where each provider wants it."""
    return message(Role.system, content, session_id=session_id, what="system message")


def tool_result(
    call_id: str, content: Content, *, is_error: bool = False, session_id: str = LOCAL_SESSION
) -> Message:
    """A TOOL message answering the tool call `call_id` (a canonical `tu_<ulid>` id)."""
    result = {"type": "tool_result", "tool_use_id": call_id, "content": blocks(content), "is_error": is_error}
    return message(
        Role.tool,
        [result],
        session_id=session_id,
        metadata={"parent_tool_use_id": call_id},
        what="tool result",
    )


__all__ = ["LOCAL_SESSION", "Content", "blocks", "message", "system", "tool_result", "user"]
