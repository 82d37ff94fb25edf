"""`AsyncStore`: the Store's API for asyncio code, each call run in a worker thread.

Database calls block; an agent loop must not stall its event loop on a commit (a FULL
fsync can take milliseconds, a locked database seconds, a PostgreSQL round trip a
network's latency). `asyncio.to_thread` is enough, for both backends, with the one Store
implementation: the SQLite backend serializes use of its connection with a lock, and the
PostgreSQL backend hands each call its own pooled connection, so concurrent awaits are
safe (and, on PostgreSQL, run in parallel).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from metis_schema.v3 import ExchangeSettings, Message, RequestOptions, SettingsRevision, ToolDefinition

from ..canonical import Decoded
from ..ids import ToolIdMap
from ._open import open_store
from ._store import PAGE_SIZE, Store
from ._types import SessionInfo, SessionStats, ToolCallRecord


class AsyncStore:
    """Awaitable twin of `Store`'s session, message, settings and tool-call methods (same
    signatures, same errors). Not of `read_pages` (the CLI's), nor of the gateway's rows
    and `atomically`: the gateway runs its `Store` calls in worker threads of its own."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    async def open(cls, target: str | os.PathLike[str] | None = None, **options: Any) -> AsyncStore:
        """`open_store(target)` (a SQLite path or a postgresql:// URL) in a worker thread."""
        return cls(await asyncio.to_thread(open_store, target, **options))

    async def close(self) -> None:
        await asyncio.to_thread(self.store.close)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def create_session(
        self,
        workspace_path: str | os.PathLike[str],
        *,
        active_model: str | None = None,
        routing_policy: Mapping[str, Any] | None = None,
        session_id: str | None = None,
        title: str | None = None,
        source: str | None = None,
        parent_session_id: str | None = None,
        fork_message_id: str | None = None,
    ) -> SessionInfo:
        return await asyncio.to_thread(
            self.store.create_session,
            workspace_path,
            active_model=active_model,
            routing_policy=routing_policy,
            session_id=session_id,
            title=title,
            source=source,
            parent_session_id=parent_session_id,
            fork_message_id=fork_message_id,
        )

    async def get_session(self, session_id: str) -> SessionInfo:
        return await asyncio.to_thread(self.store.get_session, session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        return await asyncio.to_thread(self.store.list_sessions)

    async def session_stats(self, session_id: str) -> SessionStats:
        return await asyncio.to_thread(self.store.session_stats, session_id)

    async def delete_session(self, session_id: str) -> None:
        await asyncio.to_thread(self.store.delete_session, session_id)

    async def set_active_model(self, session_id: str, model: str | None) -> SessionInfo:
        return await asyncio.to_thread(self.store.set_active_model, session_id, model)

    async def set_title(self, session_id: str, title: str | None) -> SessionInfo:
        return await asyncio.to_thread(self.store.set_title, session_id, title)

    async def append(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        await asyncio.to_thread(self.store.append, message, tool_ids=tool_ids)

    async def append_many(self, messages: Iterable[Message], *, tool_ids: ToolIdMap | None = None) -> None:
        await asyncio.to_thread(self.store.append_many, list(messages), tool_ids=tool_ids)

    async def append_planned(
        self,
        session_id: str,
        plan: Callable[[list[Message]], Sequence[Message]],
        *,
        tool_ids: ToolIdMap | None = None,
    ) -> list[Message]:
        return await asyncio.to_thread(self.store.append_planned, session_id, plan, tool_ids=tool_ids)

    async def upsert_partial(self, message: Message) -> None:
        await asyncio.to_thread(self.store.upsert_partial, message)

    async def finalize(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        await asyncio.to_thread(self.store.finalize, message, tool_ids=tool_ids)

    async def load_session(
        self, session_id: str, *, include_partial: bool = True, after: str | None = None
    ) -> list[Message]:
        return await asyncio.to_thread(
            self.store.load_session, session_id, include_partial=include_partial, after=after
        )

    async def read_session(self, session_id: str) -> Decoded:
        return await asyncio.to_thread(self.store.read_session, session_id)

    async def iter_messages(
        self,
        session_id: str,
        *,
        include_partial: bool = True,
        after: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> AsyncIterator[Message]:
        """`Store.iter_messages`, each page read in a worker thread."""
        messages = self.store.iter_messages(
            session_id, include_partial=include_partial, after=after, page_size=page_size
        )
        while page := await asyncio.to_thread(list, itertools.islice(messages, page_size)):
            for message in page:
                yield message

    async def get_message(self, message_id: str) -> Message:
        return await asyncio.to_thread(self.store.get_message, message_id)

    async def save_tool_ids(self, session_id: str, tool_ids: ToolIdMap) -> None:
        await asyncio.to_thread(self.store.save_tool_ids, session_id, tool_ids)

    async def load_tool_ids(self, session_id: str) -> ToolIdMap:
        return await asyncio.to_thread(self.store.load_tool_ids, session_id)

    async def record_settings(
        self,
        session_id: str,
        tools: Sequence[ToolDefinition],
        options: RequestOptions | None = None,
        *,
        reply_id: str | None = None,
    ) -> int:
        return await asyncio.to_thread(
            self.store.record_settings, session_id, list(tools), options, reply_id=reply_id
        )

    async def settings(self, session_id: str, revision: int | None = None) -> SettingsRevision | None:
        return await asyncio.to_thread(self.store.settings, session_id, revision)

    async def settings_revisions(self, session_id: str) -> list[SettingsRevision]:
        return await asyncio.to_thread(self.store.settings_revisions, session_id)

    async def exchange_settings(self, session_id: str) -> list[ExchangeSettings]:
        return await asyncio.to_thread(self.store.exchange_settings, session_id)

    async def put_settings(
        self, revisions: Sequence[SettingsRevision], exchanges: Sequence[ExchangeSettings] = ()
    ) -> int:
        return await asyncio.to_thread(self.store.put_settings, list(revisions), list(exchanges))

    async def tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        return await asyncio.to_thread(self.store.tool_calls, session_id)

    async def unanswered_tool_calls(self, session_id: str) -> list[ToolCallRecord]:
        return await asyncio.to_thread(self.store.unanswered_tool_calls, session_id)

    async def failed_tool_calls(self, session_id: str | None = None) -> dict[str, int]:
        return await asyncio.to_thread(self.store.failed_tool_calls, session_id)


__all__ = ["AsyncStore"]
