"""The asyncio client: the same surface as `Client`, with `await session.send(...)`.

Store calls stay synchronous (SQLite writes are short and local); only the network is
awaited. A task cancelled mid-stream (asyncio.CancelledError) still persists what had
arrived as CANCELLED, then the cancellation propagates as asyncio expects.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from metis_schema.v3 import Message, ToolDefinition

from .. import _json
from .._inflate import ACCEPT_ENCODING, Inflater, ainflated
from ..events import EventSink
from ..protocols import SessionStore
from ._deadline import DEFAULT_SEND_DEADLINE, DEFAULT_STREAM_DEADLINE, Deadline
from ._http import (
    ERROR_BODY_LIMIT,
    Body,
    attempt_request,
    failed_attempt,
    read_failure,
    send_failure,
    stream_cut,
    stream_failure,
)
from ._session import DEFAULT_MODEL, ClientBase, Content, Prepared, SessionBase, SessionCore, redacting
from ._stream import CheckpointPolicy, EventCallback, reply_limit
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
        send_deadline: float | None = DEFAULT_SEND_DEADLINE,
        stream_deadline: float | None = DEFAULT_STREAM_DEADLINE,
    ) -> None:
        """As `Client`; the deadlines are enforced with `asyncio.timeout`."""
        self._setup(
            store,
            api_keys=api_keys,
            base_urls=base_urls,
            events=events,
            max_retries=max_retries,
            max_retry_delay=max_retry_delay,
            checkpoints=checkpoints,
            clock=clock,
            default_model=default_model,
            send_deadline=send_deadline,
            stream_deadline=stream_deadline,
        )
        self.sleep = sleep
        self.http = httpx.AsyncClient(
            transport=transport, timeout=timeout, headers={"accept-encoding": ACCEPT_ENCODING}
        )

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

    def resume(self, session_id: str, *, tools: Sequence[ToolDefinition] | None = None) -> AsyncSession:
        """An existing session (SessionNotFoundError if there is none), with the tools it last
        recorded; `tools` replaces them (recorded as the session's new tool set). A stored
        tool outside the §5.4 schema subset (an imported one may be) makes each send that
        would offer it a ToolSchemaError: pass `tools=` to resume it with others."""
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

    async def _send_with_retries(
        self, prepared: Prepared, deadline: Deadline
    ) -> tuple[httpx.Response, float]:
        content = _json.dumps(prepared.body)
        policy = self.settings.retry
        name = prepared.adapter.name
        attempt = 0
        while True:
            started = self.settings.clock()
            deadline.check(name)
            request = attempt_request(self.http, prepared.url, content, prepared.headers, deadline)
            try:
                response = await self.http.send(request, stream=True)
            except httpx.HTTPError as exc:
                delay: float = send_failure(
                    exc, name=name, url=prepared.url, policy=policy, attempt=attempt, deadline=deadline
                )
            else:
                if 200 <= response.status_code < 300:
                    return response, started
                try:
                    body = await self._read(response, ERROR_BODY_LIMIT, deadline, name)
                finally:
                    await response.aclose()
                delay = failed_attempt(
                    prepared.adapter, response, body, policy=policy, attempt=attempt, deadline=deadline
                )
            await self.sleep(delay)
            attempt += 1

    async def _read(self, response: httpx.Response, limit: int, deadline: Deadline, name: str) -> Body:
        """A body read whole, inflated at most to `limit` bytes (then cut), inside `deadline`
        (the caller's `asyncio.timeout` cuts a silent server; this checks between chunks)."""
        body = Body(limit)
        late = False
        try:
            async with aclosing(_body(response, name)) as pieces:
                async for chunk in pieces:
                    late = deadline.passed()
                    if late or not body.add(chunk):
                        break
        except httpx.HTTPError as exc:
            raise read_failure(exc, name=name, deadline=deadline) from exc
        if late:
            raise deadline.error(name)
        return body

    async def _exchange(
        self, core: SessionCore, prepared: Prepared, on_event: EventCallback | None
    ) -> Message:
        name = prepared.adapter.name
        deadlines, clock = self.settings.deadlines, self.settings.clock
        send = Deadline("send", deadlines.send, clock)
        timer = asyncio.timeout(send.remaining())
        try:
            async with timer:
                response, started = await self._send_with_retries(prepared, send)
                if not prepared.stream:
                    try:
                        body = await self._read(response, reply_limit(prepared.context), send, name)
                    finally:
                        await response.aclose()
        except TimeoutError as exc:
            if not timer.expired():
                raise
            raise send.error(name) from exc
        if not prepared.stream:
            return core.reply(prepared, body.reply(name), started)
        run = core.stream(prepared, on_event, started, response.status_code)
        deadline = Deadline("stream", deadlines.stream, clock)
        timer = asyncio.timeout(deadline.remaining())
        cut = False
        try:
            async with timer, aclosing(_body(response, name)) as pieces:
                async for chunk in pieces:
                    if deadline.passed():
                        cut = True
                        break
                    run.feed(chunk)
        except BaseException as exc:  # asyncio.CancelledError included: saved, then re-raised
            error = stream_failure(exc, run, name=name, deadline=deadline, expired=timer.expired())
            if error is None:
                raise
            raise error from exc
        finally:
            await response.aclose()
        if cut:
            raise stream_cut(run, deadline, name=name)
        return run.close()


def _body(response: httpx.Response, name: str) -> AsyncGenerator[bytes]:
    """The response's body inflated in bounded pieces (`_inflate`). A response built whole (an
    injected transport's) holds its content already inflated."""
    if response.is_stream_consumed:
        return ainflated(_whole(response.content), Inflater(None))
    return ainflated(response.aiter_raw(), Inflater(response.headers.get("content-encoding"), provider=name))


async def _whole(content: bytes) -> AsyncIterator[bytes]:
    yield content


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
        reply_id: str | None = None,
        user_id: str | None = None,
        team_id: str | None = None,
        **options: Any,
    ) -> Message:
        """As `Session.send`, awaited."""
        prepared = self.core.prepare(
            content,
            model=model,
            tools=tools,
            stream=stream,
            options=options,
            reply_id=reply_id,
            principal=(user_id, team_id),
        )
        with redacting(prepared), self.core.traced(prepared) as done:
            reply = await self.client._exchange(self.core, prepared, on_event)
            done(reply)
        return reply

    async def compact(self, keep_last: int, *, summarizer: str | None = None) -> Message:
        """Have `summarizer` (default: the session's model) summarize all but the last
        `keep_last` messages; the summary is stored as a compaction block that later
        requests send instead of the turns it covers (`metis.ops.compact`). The stored
        turns stay. Returns the compaction message."""
        prepared = self.core.prepare_compaction(keep_last, summarizer)
        with redacting(prepared):
            return await self.client._exchange(self.core, prepared, None)


__all__ = ["AsyncClient", "AsyncSession"]
