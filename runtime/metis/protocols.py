"""The parts of the store the client relies on, stated as a Protocol.

The client needs a handful of store operations, not the store's implementation; naming
them here keeps the dependency visible and lets tests pass a spy or an in-memory double.
`metis.store.Store` satisfies it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from metis_schema.v3 import ExchangeSettings, Message, RequestOptions, SettingsRevision, ToolDefinition

from .ids import ToolIdMap


class SessionRecord(Protocol):
    """What the client reads from a stored session."""

    @property
    def id(self) -> str: ...

    @property
    def workspace_path(self) -> str: ...

    @property
    def active_model(self) -> str | None: ...

    @property
    def routing_policy(self) -> Mapping[str, Any] | None: ...


class SessionStore(Protocol):
    """Store operations the client and CLI use."""

    def create_session(
        self,
        workspace_path: str,
        *,
        active_model: str | None = None,
        routing_policy: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        title: str | None = None,
        source: str | None = None,
        parent_session_id: str | None = None,
        fork_message_id: str | None = None,
    ) -> SessionRecord: ...

    def get_session(self, session_id: str) -> SessionRecord: ...

    def set_active_model(self, session_id: str, model: str) -> Any: ...

    def append(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> Any: ...

    def append_many(self, messages: Iterable[Message], *, tool_ids: ToolIdMap | None = None) -> Any: ...

    def append_planned(
        self, session_id: str, plan: Callable[[list[Message]], Sequence[Message]]
    ) -> list[Message]:
        """Append what `plan` makes of the session's history, read in the same write
        transaction (`metis.ops.repair` answers the calls still open)."""
        ...

    def upsert_partial(self, message: Message) -> Any: ...

    def finalize(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> Any: ...

    def load_session(self, session_id: str, *, after: str | None = None) -> Sequence[Message]:
        """The session's messages in order; with `after`, only those appended after that one
        (MessageNotFoundError when the session has no such message). A store may leave
        `after` out: the session then reads whole sessions."""
        ...

    def get_message(self, message_id: str) -> Message:
        """One stored message by id (MessageNotFoundError if there is none)."""
        ...

    def save_tool_ids(self, session_id: str, tool_ids: ToolIdMap) -> Any: ...

    def load_tool_ids(self, session_id: str) -> ToolIdMap: ...

    def record_settings(
        self,
        session_id: str,
        tools: Sequence[ToolDefinition],
        options: RequestOptions | None = None,
        *,
        reply_id: str | None = None,
    ) -> int:
        """Record the tools and request options in force (a new revision only when they
        changed); with `reply_id`, the exchange of that reply as sent with them."""
        ...

    def settings(self, session_id: str, revision: int | None = None) -> SettingsRevision | None:
        """The session's settings revision (the latest when None); None when it has none."""
        ...

    def settings_revisions(self, session_id: str) -> Sequence[SettingsRevision]: ...

    def exchange_settings(self, session_id: str) -> Sequence[ExchangeSettings]: ...

    def put_settings(
        self, revisions: Sequence[SettingsRevision], exchanges: Sequence[ExchangeSettings] = ()
    ) -> Any: ...


class ExchangeTracer(Protocol):
    """Something that wraps each exchange, e.g. in an OpenTelemetry span (`metis.ops.otel`):
    entered with the session, the model and the messages sent; the function it yields is
    called with the reply."""

    def exchange(
        self, session_id: str, model: str, sent: Sequence[Message]
    ) -> AbstractContextManager[Callable[[Message], None]]: ...


__all__ = ["ExchangeTracer", "SessionRecord", "SessionStore"]
