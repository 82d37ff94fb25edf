"""One gateway exchange: an inbound request in a client's wire format -> canonical ->
the upstream provider through the metis client -> the reply in the client's format.

The inbound format's adapter imports the request (its history, tools and options) into
a session; the session sends it to the model the request names, whatever provider that
is; the reply is stored like any other and written back by the inbound adapter's reply
writer (`adapters._reply`). Nothing here translates a wire format itself.

The model field names any catalog model or alias (`anthropic:claude-sonnet-4-6` through
the OpenAI SDK, `sonnet`); a bare provider model name (`gpt-4o` to `/v1/chat/completions`,
`claude-sonnet-4-5` to `/v1/messages`) means the inbound API's own provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from metis_schema.v3 import Message, Role, StreamEvent

from .. import adapters
from ..adapters import AdapterOptions
from ..adapters._reply import ReplyOptions
from ..catalog import load_catalog
from ..client import AsyncClient
from ..continuation import REPLY_PREFIX, find_response
from ..endpoints import normalize_endpoint
from ..errors import MetisError, ProviderError, UnknownModelError
from ..ids import new_message_id

INBOUND_PROVIDER = {"chat": "openai", "messages": "anthropic", "responses": "responses"}
"""Inbound API -> the adapter that reads its requests and writes its replies."""


SESSION_HEADER = "x-metis-session-id"
"""Request header naming the session to continue; the reply names the session it used."""

_SENT_OPTIONS = frozenset(
    f.name
    for f in fields(AdapterOptions)
    if f.name not in {"model", "session_id", "tool_ids", "workspace", "stream"}
) - {"endpoint", "allow_url_fetch", "url_fetcher", "max_media_bytes", "max_event_chars", "extra"}
"""The imported options a send carries on: the canonical ones and the provider-only ones."""


class GatewayRequestError(MetisError):
    """The client's request cannot be served as sent (bad JSON, an unknown model...);
    `status` is the HTTP status it answers with."""

    def __init__(self, message: str, *, status: int = 400, **kw: str | None) -> None:
        super().__init__(message, **kw)
        self.status = status


def target_model(inbound: str, requested: object) -> str:
    """The catalog id a request's `model` names (see the module docstring)."""
    if not isinstance(requested, str) or not requested:
        raise GatewayRequestError("the request names no model", path="model")
    catalog = load_catalog()
    # a bare name is the inbound API's own provider's model first (`gpt-4o` to the Chat
    # API is OpenAI's), then an alias (`sonnet`), then an unlisted model of that provider
    own = f"{inbound}:{requested}"
    candidates = [(requested, True)] if ":" in requested else [(own, False), (requested, False), (own, True)]
    for name, unlisted in candidates:
        try:
            return catalog.resolve(name, allow_unlisted=unlisted).id
        except UnknownModelError:
            continue
    raise GatewayRequestError(
        f"unknown model {requested!r}",
        path="model",
        hint="name a catalog model or alias (`metis models`), e.g. anthropic:claude-sonnet-4-6",
    )


def _writer_model(inbound: str, target: str) -> str:
    """The model a reply writer writes for: the target when the client's API is its
    provider's, else one of that API's own models (the writer needs a model of its
    provider; what it asks of it, media and replay, concerns the client's format)."""
    catalog = load_catalog()
    if catalog.resolve(target).provider == inbound:
        return target
    return catalog.for_provider(inbound)[0].id


def _send_options(imported: AdapterOptions) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _SENT_OPTIONS:
        value = getattr(imported, name)
        if value not in (None, {}, [], ()):
            out[name] = value
    return out


@dataclass
class Prepared:
    """A request imported into its session, ready to send."""

    inbound: str
    session: Any
    target: str
    tools: list[Any]
    options: dict[str, Any]
    stream: bool
    include_usage: bool
    model_name: str


class Exchanges:
    """The gateway's work, over one async client (one store, one HTTP pool)."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def prepare(self, inbound: str, body: dict[str, Any], headers: Mapping[str, str]) -> Prepared:
        """Import the request into a session (the one its header names, else a new one)."""
        adapter = adapters.get(inbound)
        target = target_model(inbound, body.get("model"))
        wanted = headers.get(SESSION_HEADER)
        previous = body.get("previous_response_id") if inbound == "responses" else None
        if previous is not None:
            session, body, known = self._continuation(previous, body)
        elif wanted:
            session = self.client.resume(wanted)
            known = len(session.messages())
        else:
            session, known = self.client.session(target, source=f"gateway:{inbound}"), 0
        imported = adapter.from_wire_request(body, session_id=session.id, tool_ids=session.tool_ids)
        fresh = imported.messages[known:]
        if not fresh or fresh[-1].role is Role.assistant:
            raise GatewayRequestError(
                "the request adds nothing to answer: its last message is the model's",
                path="messages",
                hint="send the user's turn or the tool results",
            )
        self.client.store.append_many(fresh, tool_ids=session.tool_ids)
        stream_options = body.get("stream_options")
        return Prepared(
            inbound=inbound,
            session=session,
            target=target,
            tools=list(imported.tools),
            options=_send_options(imported.options),
            stream=body.get("stream") is True,
            include_usage=isinstance(stream_options, dict) and stream_options.get("include_usage") is True,
            model_name=str(body.get("model")),
        )

    def _continuation(self, previous: object, body: dict[str, Any]) -> tuple[Any, dict[str, Any], int]:
        """A Responses request continuing a stored reply (`previous_response_id`), for any
        upstream: the session that holds the reply (a fork of it when the reply is not its
        last message), and the request with that history written in front of its input —
        so the upstream gets the whole conversation, not an id it never issued — with the
        number of messages that history imports to (they are stored already)."""
        if not isinstance(previous, str) or not previous.startswith(REPLY_PREFIX["responses"]):
            raise GatewayRequestError(
                f"unknown previous_response_id {previous!r}", path="previous_response_id"
            )
        message = find_response(self.client.store, previous, provider_ids=False)
        if message is None:
            raise GatewayRequestError(
                f"no stored response {previous!r}", path="previous_response_id", status=404
            )
        session = self.client.resume(message.session_id)
        history = session.messages()
        if history[-1].id != message.id:
            session = session.fork(message.id)
            history = session.messages()
        model = message.metadata.model or load_catalog().for_provider("responses")[0].id
        writer = AdapterOptions(
            model=_writer_model("responses", model), session_id=session.id, tool_ids=session.tool_ids
        )
        responses = adapters.get("responses")
        written = responses.to_wire(history, [], writer)
        items = [*written.get("input", [])]
        given = body.get("input")
        items += [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        continued = {k: v for k, v in body.items() if k != "previous_response_id"}
        continued["input"] = items
        if "instructions" in written and "instructions" not in continued:
            continued["instructions"] = written["instructions"]
        alone = {"model": body.get("model"), "input": written.get("input", [])}
        if "instructions" in written:
            alone["instructions"] = written["instructions"]
        known = len(
            responses.from_wire_request(alone, session_id=session.id, tool_ids=session.tool_ids).messages
        )
        return session, continued, known

    def reply_options(
        self, prepared: Prepared, message_id: str, producer: str | None, endpoint: str | None
    ) -> ReplyOptions:
        inbound = prepared.inbound
        return ReplyOptions(
            options=AdapterOptions(
                model=_writer_model(inbound, prepared.target),
                session_id=prepared.session.id,
                tool_ids=prepared.session.tool_ids,
                endpoint=endpoint,
            ),
            model_name=prepared.model_name,
            reply_id=REPLY_PREFIX[inbound] + message_id,
            created=int(time.time()),
            producer=producer,
            include_usage=prepared.include_usage,
        )

    async def reply(self, prepared: Prepared) -> tuple[dict[str, Any], Message]:
        """Send and answer whole."""
        message = await prepared.session.send(
            None, model=prepared.target, tools=prepared.tools, reply_id=new_message_id(), **prepared.options
        )
        options = self.reply_options(
            prepared, message.id, message.metadata.provider, message.metadata.endpoint
        )
        body = adapters.get(prepared.inbound).to_wire_reply(message, options)
        self._keep_ids(prepared)
        return body, message

    def _keep_ids(self, prepared: Prepared) -> None:
        """Store the ids the reply gave its calls, so the client's answers, which name them,
        find their calls in the next request (of this process or another)."""
        self.client.store.save_tool_ids(prepared.session.id, prepared.session.tool_ids)

    async def stream(self, prepared: Prepared) -> AsyncIterator[bytes]:
        """Send streamed and answer with the inbound format's stream, event by event."""
        queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        provider = load_catalog().resolve(prepared.target).provider
        reply_id = new_message_id()  # the stream names its reply first
        endpoint = self.client.settings.endpoint(adapters.get(provider)).base_url
        encoder = adapters.get(prepared.inbound).reply_encoder(
            self.reply_options(prepared, reply_id, provider, normalize_endpoint(endpoint))
        )

        async def send() -> Message:
            try:
                return await prepared.session.send(  # type: ignore[no-any-return]
                    None,
                    model=prepared.target,
                    tools=prepared.tools,
                    stream=True,
                    on_event=queue.put_nowait,
                    reply_id=reply_id,
                    **prepared.options,
                )
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(send())
        try:
            yield encoder.start()
            while (event := await queue.get()) is not None:
                frame = encoder.feed(event)
                if frame:
                    yield frame
            try:
                message = await task
            except ProviderError as exc:
                yield encoder.fail(exc.error_type or "api_error", str(exc))
                return
            except MetisError as exc:
                yield encoder.fail("api_error", str(exc))
                return
            frame = encoder.finish(message)
            self._keep_ids(prepared)
            yield frame
        finally:
            if not task.done():
                task.cancel()  # the client went away: the send stores what arrived as cancelled
                with contextlib.suppress(asyncio.CancelledError, MetisError):
                    await task


__all__ = ["INBOUND_PROVIDER", "SESSION_HEADER", "Exchanges", "GatewayRequestError", "target_model"]
