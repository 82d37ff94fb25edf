"""The synchronous client: `Client` opens sessions, `Session.send` runs one request.

Only the HTTP exchange lives here (httpx.Client, retries, streaming bytes into the
adapter); what surrounds it is `SessionCore`, shared with the async client.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
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
        self.http = httpx.Client(transport=transport, timeout=timeout)

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

    def resume(self, session_id: str, *, tools: Sequence[ToolDefinition] = ()) -> Session:
        """An existing session (SessionNotFoundError if there is none)."""
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

    def _send_with_retries(self, prepared: Prepared) -> tuple[httpx.Response, float]:
        """Send until a non-error response (left open for streaming) or a final failure."""
        content = _json.dumps(prepared.body)
        policy = self.settings.retry
        attempt = 0
        while True:
            started = self.settings.clock()
            request = self.http.build_request("POST", prepared.url, content=content, headers=prepared.headers)
            try:
                response = self.http.send(request, stream=True)
            except httpx.HTTPError as exc:
                name = prepared.adapter.name
                delay: float = send_failure(exc, name=name, url=prepared.url, policy=policy, attempt=attempt)
            else:
                if response.status_code < 400:
                    return response, started
                try:
                    raw = response.read()
                finally:
                    response.close()
                error = provider_error(prepared.adapter, response, raw)
                retry = retry_delay(policy, attempt, response, error)
                if retry is None:
                    raise error
                delay = retry
            self.sleep(delay)
            attempt += 1

    def _exchange(self, core: SessionCore, prepared: Prepared, on_event: EventCallback | None) -> Message:
        response, started = self._send_with_retries(prepared)
        if not prepared.stream:
            try:
                raw = response.read()
            except httpx.HTTPError as exc:
                raise read_failure(exc, name=prepared.adapter.name) from exc
            finally:
                response.close()
            return core.reply(prepared, raw, started)
        run = core.stream(prepared, on_event, started)
        try:
            for chunk in response.iter_bytes():
                run.feed(chunk)
        except BaseException as exc:
            error = stream_failure(exc, run, name=prepared.adapter.name)
            if error is None:
                raise
            raise error from exc
        finally:
            response.close()
        return run.close()


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
        **options: Any,
    ) -> Message:
        """Send `content` (or, with None, continue after tool results) and return the reply.

        `model` overrides the model for this message only (routing mode OVERRIDE);
        `options` are AdapterOptions fields (max_tokens, temperature, tool_choice, ...).
        """
        prepared = self.core.prepare(content, model=model, tools=tools, stream=stream, options=options)
        try:
            with self.core.traced(prepared) as done:
                reply = self.client._exchange(self.core, prepared, on_event)
                done(reply)
        except MetisError as exc:
            exc.redact(prepared.secrets)  # a server may echo the key back in its error body
            raise
        return reply

    def compact(self, keep_last: int, *, summarizer: str | None = None) -> Message:
        """Have `summarizer` (default: the session's model) summarize all but the last
        `keep_last` messages; the summary is stored as a compaction block that later
        requests send instead of the turns it covers (`metis.ops.compact`). The stored
        turns stay. Returns the compaction message."""
        prepared = self.core.prepare_compaction(keep_last, summarizer)
        try:
            return self.client._exchange(self.core, prepared, None)
        except MetisError as exc:
            exc.redact(prepared.secrets)
            raise


__all__ = ["DEFAULT_TIMEOUT", "Client", "Session"]
