"""The synchronous client: `Client` opens sessions, `Session.send` runs one request.

Only the HTTP exchange lives here (httpx.Client, retries, streaming bytes into the
adapter); what surrounds it is `SessionCore`, shared with the async client.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from metis_schema.v3 import Message, ToolDefinition

from .. import _json
from .._inflate import ACCEPT_ENCODING, Inflater, inflated
from ..events import EventSink
from ..protocols import SessionStore
from ._deadline import DEFAULT_SEND_DEADLINE, DEFAULT_STREAM_DEADLINE, Deadline, Watchdog
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

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)


class Client(ClientBase):
    """Sessions over httpx.Client. `transport` lets tests inject an httpx.MockTransport."""

    def __init__(
        self,
        store: SessionStore | str | os.PathLike[str] | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        api_keys: Mapping[str, str | None] | None = None,
        base_urls: Mapping[str, str] | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_retry_delay: float = 30.0,
        events: EventSink | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        checkpoints: CheckpointPolicy | None = None,
        default_model: str = DEFAULT_MODEL,
        send_deadline: float | None = DEFAULT_SEND_DEADLINE,
        stream_deadline: float | None = DEFAULT_STREAM_DEADLINE,
    ) -> None:
        """`timeout` bounds each network operation (httpx's connect, read, write, pool);
        `send_deadline` bounds a whole send (every attempt, the waits between them, a
        non-streamed body) and `stream_deadline` a whole streamed body, in seconds (None:
        unbounded), so a server that dribbles cannot hold a request; past one, the send
        raises DeadlineExceededError naming it."""
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
        self.http = httpx.Client(
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
    ) -> Session:
        """A new session whose default model is `model` (else the client's default);
        `title` and `source` label it in the store (`metis sessions` lists them)."""
        return Session(self, self._new_core(model, workspace, tools, title=title, source=source))

    def resume(self, session_id: str, *, tools: Sequence[ToolDefinition] | None = None) -> Session:
        """An existing session (SessionNotFoundError if there is none), with the tools it last
        recorded; `tools` replaces them (recorded as the session's new tool set). A stored
        tool outside the §5.4 schema subset (an imported one may be) makes each send that
        would offer it a ToolSchemaError: pass `tools=` to resume it with others."""
        return Session(self, self._resumed_core(session_id, tools))

    def close(self) -> None:
        self.http.close()
        self._close_owned_store()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- HTTP ---------------------------------------------------------------------------------

    def _send_with_retries(self, prepared: Prepared, deadline: Deadline) -> tuple[httpx.Response, float]:
        """Send until a success (left open for its body) or a final failure, inside `deadline`."""
        content = _json.dumps(prepared.body)
        policy = self.settings.retry
        name = prepared.adapter.name
        attempt = 0
        while True:
            started = self.settings.clock()
            deadline.check(name)
            request = attempt_request(self.http, prepared.url, content, prepared.headers, deadline)
            try:
                response = self.http.send(request, stream=True)
            except httpx.HTTPError as exc:
                delay: float = send_failure(
                    exc, name=name, url=prepared.url, policy=policy, attempt=attempt, deadline=deadline
                )
            else:
                if 200 <= response.status_code < 300:
                    return response, started
                try:
                    body = self._read(response, ERROR_BODY_LIMIT, deadline, name)
                finally:
                    response.close()
                delay = failed_attempt(
                    prepared.adapter, response, body, policy=policy, attempt=attempt, deadline=deadline
                )
            self.sleep(delay)
            attempt += 1

    def _read(self, response: httpx.Response, limit: int, deadline: Deadline, name: str) -> Body:
        """A body read whole, inflated at most to `limit` bytes (then cut), inside `deadline`."""
        body = Body(limit)
        late = False
        with Watchdog(response, deadline) as watchdog:
            try:
                with closing(_body(response, name)) as pieces:
                    for chunk in pieces:
                        late = deadline.passed()
                        if late or not body.add(chunk):
                            break
            except httpx.HTTPError as exc:
                raise read_failure(
                    exc, name=name, deadline=deadline, expired=watchdog.fired.is_set()
                ) from exc
        if late or watchdog.fired.is_set():  # a body cut by the close of its socket may end "cleanly"
            raise deadline.error(name)
        return body

    def _exchange(self, core: SessionCore, prepared: Prepared, on_event: EventCallback | None) -> Message:
        name = prepared.adapter.name
        deadlines, clock = self.settings.deadlines, self.settings.clock
        send = Deadline("send", deadlines.send, clock)
        response, started = self._send_with_retries(prepared, send)
        if not prepared.stream:
            try:
                body = self._read(response, reply_limit(prepared.context), send, name)
            finally:
                response.close()
            return core.reply(prepared, body.reply(name), started)
        run = core.stream(prepared, on_event, started, response.status_code)
        deadline = Deadline("stream", deadlines.stream, clock)
        cut = False
        watchdog = Watchdog(response, deadline)
        try:
            with watchdog, closing(_body(response, name)) as pieces:
                for chunk in pieces:
                    cut = deadline.passed()
                    if cut:
                        break
                    run.feed(chunk)
            cut = cut or watchdog.fired.is_set()  # a body cut by the close of its socket may end "cleanly"
        except BaseException as exc:
            error = stream_failure(exc, run, name=name, deadline=deadline, expired=watchdog.fired.is_set())
            if error is None:
                raise
            raise error from exc
        finally:
            response.close()
        if cut:
            raise stream_cut(run, deadline, name=name)
        return run.close()


def _body(response: httpx.Response, name: str) -> Generator[bytes]:
    """The response's body inflated in bounded pieces (`_inflate`). A response built whole (an
    injected transport's) holds its content already inflated."""
    if response.is_stream_consumed:
        return inflated([response.content], Inflater(None))
    return inflated(response.iter_raw(), Inflater(response.headers.get("content-encoding"), provider=name))


class Session(SessionBase):
    """One conversation: send, answer tool calls, swap models. Every step is persisted."""

    def __init__(self, client: Client, core: SessionCore) -> None:
        super().__init__(core)
        self.client = client

    def send(
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
        """Send `content` (or, with None, continue after tool results) and return the reply.

        `model` overrides the model for this message only (routing mode OVERRIDE);
        `options` are AdapterOptions fields (max_tokens, temperature, tool_choice, ...).
        `reply_id` names the reply message before it exists (a new message id, see
        `metis.ids.new_message_id`): a gateway streams its reply's id first. `user_id` and
        `team_id` are recorded on the messages this send stores (a gateway's key's principal).
        """
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
            reply = self.client._exchange(self.core, prepared, on_event)
            done(reply)
        return reply

    def compact(self, keep_last: int, *, summarizer: str | None = None) -> Message:
        """Have `summarizer` (default: the session's model) summarize all but the last
        `keep_last` messages; the summary is stored as a compaction block that later
        requests send instead of the turns it covers (`metis.ops.compact`). The stored
        turns stay. Returns the compaction message."""
        prepared = self.core.prepare_compaction(keep_last, summarizer)
        with redacting(prepared):
            return self.client._exchange(self.core, prepared, None)


__all__ = ["DEFAULT_TIMEOUT", "Client", "Session"]
