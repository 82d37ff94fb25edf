"""The asyncio client: the same surface as `Client`, with `await session.send(...)`.

Store calls stay synchronous (SQLite writes are short and local); only the network is
awaited. A task cancelled mid-stream (asyncio.CancelledError) still persists what had
arrived as CANCELLED, then the cancellation propagates as asyncio expects.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from metis_schema.v3 import Message, ToolDefinition

from .. import _json
from ..errors import MetisError
from ..events import EventSink
from ._http import provider_error, read_failure, retry_delay, send_failure, stream_failure
from ._protocols import SessionStore
from ._retry import RetryPolicy
from ._session import DEFAULT_MODEL, ClientBase, Content, Prepared, SessionBase, SessionCore
from ._stream import CheckpointPolicy, EventCallback
from ._sync import DEFAULT_TIMEOUT


class AsyncClient(ClientBase):
    """Sessions over httpx.AsyncClient. `transport` lets tests inject an httpx.MockTransport."""

    def __init__(
        self,
        store: SessionStore | str | os.PathLike[str] | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        api_keys: Mapping[str, str | None] | None = None,
        base_urls: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        events: EventSink | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        checkpoints: CheckpointPolicy | None = None,
        default_model: str = DEFAULT_MODEL,
    ) -> None:
        self._setup(
            store,
            api_keys=api_keys,
            base_urls=base_urls,
            events=events,
            retry=RetryPolicy(max_retries=max_retries, max_delay=max_retry_delay),
            checkpoints=checkpoints,
            clock=clock,
            default_model=default_model,
        )
        self.sleep = sleep
        self.http = httpx.AsyncClient(transport=transport, timeout=timeout)

    def session(
        self,
        model: str | None = None,
        *,
        workspace: Path | str | None = None,
        tools: Sequence[ToolDefinition] = (),
        title: str | None = None,
        source: str | None = None,
    ) -> AsyncSession:
        """A new session whose default model is `model` (else the client's default);
        `title` and `source` label it in the store (`metis sessions` lists them)."""
        return AsyncSession(self, self._new_core(model, workspace, tools, title=title, source=source))

    def resume(self, session_id: str, *, tools: Sequence[ToolDefinition] = ()) -> AsyncSession:
        """An existing session (SessionNotFoundError if there is none)."""
        return AsyncSession(self, self._resumed_core(session_id, tools))

    async def aclose(self) -> None:
        await self.http.aclose()
        self._close_owned_store()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- HTTP ---------------------------------------------------------------------------------

    async def _send_with_retries(self, prepared: Prepared) -> tuple[httpx.Response, float]:
        content = _json.dumps(prepared.body)
        policy = self.settings.retry
        name = prepared.adapter.name
        attempt = 0
        while True:
            started = self.settings.clock()
            request = self.http.build_request("POST", prepared.url, content=content, headers=prepared.headers)
            try:
                response = await self.http.send(request, stream=True)
            except httpx.HTTPError as exc:
                delay: float = send_failure(exc, name=name, url=prepared.url, policy=policy, attempt=attempt)
            else:
                if response.status_code < 400:
                    return response, started
                try:
                    raw = await response.aread()
                finally:
                    await response.aclose()
                error = provider_error(prepared.adapter, response, raw)
                retry = retry_delay(policy, attempt, response, error)
                if retry is None:
                    raise error
                delay = retry
            await self.sleep(delay)
            attempt += 1

    async def _exchange(
        self, core: SessionCore, prepared: Prepared, on_event: EventCallback | None
    ) -> Message:
        response, started = await self._send_with_retries(prepared)
        name = prepared.adapter.name
        if not prepared.stream:
            try:
                raw = await response.aread()
            except httpx.HTTPError as exc:
                raise read_failure(exc, name=name) from exc
            finally:
                await response.aclose()
            return core.reply(prepared, raw, started)
        run = core.stream(prepared, on_event, started)
        try:
            async for chunk in response.aiter_bytes():
                run.feed(chunk)
        except BaseException as exc:  # asyncio.CancelledError included: saved, then re-raised
            error = stream_failure(exc, run, name=name)
            if error is None:
                raise
            raise error from exc
        finally:
            await response.aclose()
        return run.close()


class AsyncSession(SessionBase):
    """One conversation over the async client (see `Session`)."""

    def __init__(self, client: AsyncClient, core: SessionCore) -> None:
        super().__init__(core)
        self.client = client

    async def send(
        self,
        content: Content | None = None,
        *,
        model: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        stream: bool = False,
        on_event: EventCallback | None = None,
        **options: Any,
    ) -> Message:
        """As `Session.send`, awaited."""
        prepared = self.core.prepare(content, model=model, tools=tools, stream=stream, options=options)
        try:
            with self.core.traced(prepared) as done:
                reply = await self.client._exchange(self.core, prepared, on_event)
                done(reply)
        except MetisError as exc:
            exc.redact(prepared.secrets)  # a server may echo the key back in its error body
            raise
        return reply

    async def compact(self, keep_last: int, *, summarizer: str | None = None) -> Message:
        """Have `summarizer` (default: the session's model) summarize all but the last
        `keep_last` messages; the summary is stored as a compaction block that later
        requests send instead of the turns it covers (`metis.ops.compact`). The stored
        turns stay. Returns the compaction message."""
        prepared = self.core.prepare_compaction(keep_last, summarizer)
        try:
            return await self.client._exchange(self.core, prepared, None)
        except MetisError as exc:
            exc.redact(prepared.secrets)
            raise


__all__ = ["AsyncClient", "AsyncSession"]
