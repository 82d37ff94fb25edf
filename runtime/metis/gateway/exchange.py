"""One gateway exchange: an inbound request in a client's wire format -> canonical ->
the upstream provider through the metis client -> the reply in the client's format.

The inbound format's adapter imports the request (its history, tools and options) into
a session; the session sends it to the model the request names, whatever provider that
is; the reply is stored like any other and written back by the inbound adapter's reply
writer (`adapters._kit.reply`). Nothing here translates a wire format itself.

The model field names any catalog model or alias (`anthropic:claude-sonnet-4-6` through
the OpenAI SDK, `sonnet`); a bare provider model name (`gpt-4o` to `/v1/chat/completions`,
`claude-sonnet-4-5` to `/v1/messages`) means the inbound API's own provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, cast

from metis_schema.v3 import Message, Role, StreamEvent

from .. import adapters
from ..adapters import AdapterOptions
from ..adapters._kit.reply import ReplyEncoder, ReplyOptions
from ..catalog import load_catalog
from ..client import AsyncClient
from ..client._errors import ReplyNotSavedError
from ..continuation import REPLY_PREFIX, find_response
from ..endpoints import normalize_endpoint
from ..errors import MetisError, ProviderError, UnknownModelError
from ..fingerprint import prefix_keys
from ..ids import ToolIdMap, new_message_id
from ..ops.compact import replayable
from ..store import DuplicateMessageError, Store

log = logging.getLogger("metis.gateway")

Principal = tuple[str | None, str | None]
"""(user id, team id) a request is made for: its gateway key's."""
ANONYMOUS: Principal = (None, None)

_PROBE_SESSION = "sess_gateway_probe"
"""Session id a request is imported under only to fingerprint it (never stored)."""

RECORD_RETRIES = (0.05, 0.2, 1.0, 5.0)
"""Delays before each retry of a reply the store failed to record (then it is reported lost)."""

RECORD_HEADER = "x-metis-record"
"""Reply header set when the store failed to record the reply: `retrying` (the reply is
retried in the background); absent when it was recorded before the reply was written."""

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


def client_view(
    inbound: str, model: str | None, session_id: str, tool_ids: ToolIdMap, endpoint: str | None
) -> AdapterOptions:
    """The options that write a conversation as a client of the `inbound` API sees it: its
    replies, the stored reply `GET /v1/responses/{id}` returns, its input items, the history a
    continuation puts in front, and the view its fingerprint is taken of. The writer needs a
    model of the inbound API's provider (what it asks of the model, media and replay, concerns
    the client's format): `model` when it is one, else one of that API's own; `endpoint` is
    where the conversation's replies came from (opaque reasoning goes back to a client of the
    same endpoint only)."""
    catalog = load_catalog()
    if model is None or catalog.resolve(model).provider != inbound:
        model = catalog.for_provider(inbound)[0].id
    return AdapterOptions(model=model, session_id=session_id, tool_ids=tool_ids, endpoint=endpoint)


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
    principal: Principal = ANONYMOUS
    withheld: bool = False
    """`store: false`: recorded, but not served back by id (`GET /v1/responses/{id}`,
    `previous_response_id`)."""
    record: str | None = None
    """Set to `retrying` when the reply could not be recorded at once (`RECORD_HEADER`)."""
    request_key: str | None = None
    """The client-view key of the whole request, when it was recognized by fingerprint."""


def _unless_continued(tip: str, fresh: list[Message]) -> Callable[[list[Message]], list[Message]]:
    """`Store.append_planned`'s plan: `fresh`, unless the session, read under its write
    lock, holds turns a provider is sent after `tip` (a concurrent request continued the
    same conversation first, perhaps in another process); then nothing."""

    def plan(history: list[Message]) -> list[Message]:
        ids = [m.id for m in history]
        after = history[ids.index(tip) + 1 :] if tip in ids else history
        return [] if replayable(after) else fresh

    return plan


class Exchanges:
    """The gateway's work, over one async client (one store, one HTTP pool)."""

    def __init__(self, client: AsyncClient, *, retries: tuple[float, ...] = RECORD_RETRIES) -> None:
        self.client = client
        self.store = cast("Store", client.store)
        """The client's store: the gateway's own rows (tips, keys) are a metis Store's."""
        self.retries = retries
        self.pending: set[asyncio.Task[None]] = set()
        """Background retries of replies not yet recorded."""
        self.lost = 0
        """Replies the store never recorded after every retry (each one logged as an error)."""

    async def prepare(
        self,
        inbound: str,
        body: dict[str, Any],
        headers: Mapping[str, str],
        principal: Principal = ANONYMOUS,
    ) -> Prepared:
        """Import the request into a session: the one its header names, else the stored
        conversation it continues (`previous_response_id`, else the longest stored tip its
        history starts with: `_recognize`), else a new one. Only the new turns are stored."""
        adapter = adapters.get(inbound)
        target = target_model(inbound, body.get("model"))
        wanted = headers.get(SESSION_HEADER)
        previous = body.get("previous_response_id") if inbound == "responses" else None
        request_key, tip = None, None
        if previous is not None:
            session, body, known = self._continuation(previous, body)
        elif wanted:
            session = self.client.resume(wanted)
            known = len(session.messages())
        else:
            session, known, request_key, tip = self._recognize(inbound, target, body)
        imported = adapter.from_wire_request(body, session_id=session.id, tool_ids=session.tool_ids)
        fresh = imported.messages[known:]
        retry = request_key is not None and known == len(imported.messages)
        if (not fresh and not retry) or (fresh and fresh[-1].role is Role.assistant):
            raise GatewayRequestError(
                "the request adds nothing to answer: its last message is the model's",
                path="messages",
                hint="send the user's turn or the tool results",
            )
        if principal != ANONYMOUS:
            for message in fresh:
                message.metadata.user_id, message.metadata.team_id = principal
        if tip is None or not fresh:
            self.store.append_many(fresh, tool_ids=session.tool_ids)
        elif not self.store.append_planned(
            session.id, _unless_continued(tip, fresh), tool_ids=session.tool_ids
        ):
            # another request continued the same conversation first: this one branches off
            log.info("gateway: session %s was continued meanwhile: branching at %s", session.id, tip)
            session = session.fork(tip)
            imported = adapter.from_wire_request(body, session_id=session.id, tool_ids=session.tool_ids)
            fresh = imported.messages[known:]
            for message in fresh:
                message.metadata.user_id, message.metadata.team_id = principal
            self.store.append_many(fresh, tool_ids=session.tool_ids)
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
            principal=principal,
            withheld=inbound == "responses" and body.get("store") is False,
            request_key=request_key,
        )

    def _recognize(self, inbound: str, target: str, body: dict[str, Any]) -> tuple[Any, int, str, str | None]:
        """The stored session a stateless request continues, how many of its imported
        messages that session holds already (a new session and 0 when it continues none),
        the key of the whole request as the client sent it, and the message the request
        continues from (None: a new session).

        The request's history is fingerprinted as the client sent it (`prefix_keys`) and
        looked up among the tips stored after each reply (`_remember_tip`), keyed the same
        way, in one indexed query: the prefixes that end at a reply, and the whole request,
        which is a tip when the same request failed before (`_remember_request`: a retry,
        which stores nothing again). A tip followed in its session by turns a provider is
        sent (not just a failed or cancelled reply) is a branch point: the session is forked
        there, so a regenerated or edited turn never mixes into the other branch.
        """
        probe = adapters.get(inbound).from_wire_request(
            body, session_id=_PROBE_SESSION, tool_ids=ToolIdMap(_PROBE_SESSION)
        )
        if not probe.messages or probe.messages[-1].role is Role.assistant:
            raise GatewayRequestError(  # refused before any session is made
                "the request adds nothing to answer: its last message is the model's",
                path="messages",
                hint="send the user's turn or the tool results",
            )
        keys = prefix_keys(probe.messages)
        candidates = [
            key
            for key, message in zip(keys[:-1], probe.messages[:-1], strict=True)
            if message.role is Role.assistant
        ]
        candidates.append(keys[-1])
        found = self.store.find_tip(candidates)
        if found is None:
            return self.client.session(target, source=f"gateway:{inbound}"), 0, keys[-1], None
        index, session_id, message_id = found
        session = self.client.resume(session_id)
        history = session.messages()
        ids = [m.id for m in history]
        after = history[ids.index(message_id) + 1 :] if message_id in ids else history
        if replayable(after):
            session = session.fork(message_id)
            message_id = session.messages()[-1].id  # the fork's copy of it (forks mint ids)
        return session, keys.index(candidates[index]) + 1, keys[-1], message_id

    def _remember_request(self, prepared: Prepared) -> None:
        """The request got no complete reply (the upstream failed, the client hung up): key
        the request itself as a tip, so the same request sent again (an SDK's retry) is
        answered in the same session without storing its turns twice."""
        if prepared.request_key is None:
            return
        history = prepared.session.messages()
        try:
            last = next(m for m in reversed(history) if m.role is not Role.assistant)
            self.store.put_tip(prepared.request_key, prepared.session.id, last.id)
        except (StopIteration, MetisError) as exc:
            log.warning(
                "gateway: session %s: the failed request's tip not kept: %s", prepared.session.id, exc
            )

    def stored_reply(self, response_id: str) -> Message | None:
        """The stored reply a gateway Responses id names (`continuation.find_response`, this
        gateway's own ids only); None for none, for a message that is no reply, and for one
        created with `store: false` (recorded, but neither served back by id nor continued)."""
        if not response_id.startswith(REPLY_PREFIX["responses"]):
            return None
        message = find_response(self.store, response_id, provider_ids=False)
        if message is None or message.role is not Role.assistant or self.store.is_withheld(message.id):
            return None
        return message

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
        message = self.stored_reply(previous)
        if message is None:
            raise GatewayRequestError(
                f"no stored response {previous!r} (none, or created with store: false)",
                path="previous_response_id",
                status=404,
            )
        session = self.client.resume(message.session_id)
        history = session.messages()
        if history[-1].id != message.id:
            session = session.fork(message.id)
            history = session.messages()
        writer = client_view(
            "responses", message.metadata.model, session.id, session.tool_ids, message.metadata.endpoint
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
            options=client_view(
                inbound, prepared.target, prepared.session.id, prepared.session.tool_ids, endpoint
            ),
            model_name=prepared.model_name,
            reply_id=REPLY_PREFIX[inbound] + message_id,
            created=int(time.time()),
            producer=producer,
            include_usage=prepared.include_usage,
        )

    async def reply(self, prepared: Prepared) -> tuple[dict[str, Any], Message]:
        """Send and answer whole."""
        try:
            message = await prepared.session.send(
                None,
                model=prepared.target,
                tools=prepared.tools,
                reply_id=new_message_id(),
                user_id=prepared.principal[0],
                team_id=prepared.principal[1],
                **prepared.options,
            )
        except ReplyNotSavedError as exc:
            message = self._record_later(prepared, exc, finalize=False)
            return self._write_reply(prepared, message), message
        except MetisError:
            self._remember_request(prepared)
            raise
        saved = len(prepared.session.tool_ids)  # what the reply's own transaction saved
        body = self._write_reply(prepared, message)  # first: it names the calls' ids the client sees
        await asyncio.to_thread(self._settle, prepared, message, saved)
        return body, message

    def _write_reply(self, prepared: Prepared, message: Message) -> dict[str, Any]:
        options = self.reply_options(
            prepared, message.id, message.metadata.provider, message.metadata.endpoint
        )
        return adapters.get(prepared.inbound).to_wire_reply(message, options)

    def _settle(self, prepared: Prepared, message: Message, saved: int | None = None) -> None:
        """What follows a recorded reply: the session's tool ids, `store: false`, and the
        conversation's tip as the client now holds it. A store failure here is logged, not
        raised: the reply is recorded and still goes back (a later request that misses the
        tip starts a new session; one that misses the ids has its answers refused).

        `saved`: how many tool ids the reply's own transaction saved with it; the ids are
        written again only when writing the reply for the client minted more (None: always).
        It runs in a worker thread (`asyncio.to_thread`) before the reply goes back, so the
        tip is stored before the client can send its next request, and the event loop
        serves other requests meanwhile; the request's session is not touched by the loop
        until it returns, and both stores take their own locks (SQLite: one lock around
        its connection; PostgreSQL: a connection pool)."""
        try:
            if saved is None or len(prepared.session.tool_ids) != saved:
                self._keep_ids(prepared)
            if prepared.withheld:
                self.store.withhold_reply(message.id, prepared.session.id)
            self._remember_tip(prepared, message)
        except MetisError as exc:
            log.warning("gateway: reply %s recorded, but not its session's ids or tip: %s", message.id, exc)

    def _remember_tip(self, prepared: Prepared, message: Message) -> None:
        """Key the session's conversation, as the client sees it after this reply, by its
        prefix key (`_recognize` looks requests up by it). The client sees the history as
        the inbound format carries it (thinking another provider wrote is dropped, Chat
        content is joined into one string...), so the stored history is written with the
        inbound adapter and imported back before it is fingerprinted."""
        session = prepared.session
        history = replayable(session.messages())
        if not history or history[-1].id != message.id:
            return  # another writer appended meanwhile: the next request names its turns
        copy = ToolIdMap(session.id, list(session.tool_ids))  # writing mints ids: a copy
        options = client_view(prepared.inbound, prepared.target, session.id, copy, message.metadata.endpoint)
        adapter = adapters.get(prepared.inbound)
        written = adapter.to_wire(history, [], options)
        seen = adapter.from_wire_request(
            written, session_id=_PROBE_SESSION, tool_ids=ToolIdMap(_PROBE_SESSION)
        ).messages
        keys = prefix_keys(seen)
        if keys:
            self.store.put_tip(keys[-1], session.id, message.id)

    def _keep_ids(self, prepared: Prepared) -> None:
        """Store the ids the reply gave its calls, so the client's answers, which name them,
        find their calls in the next request (of this process or another)."""
        self.store.save_tool_ids(prepared.session.id, prepared.session.tool_ids)

    def _record_later(self, prepared: Prepared, exc: ReplyNotSavedError, *, finalize: bool) -> Message:
        """The store failed to record a reply: the reply is answered anyway (marked
        `RECORD_HEADER: retrying`) and recorded in the background, `retries` times at most;
        a reply still not recorded then is logged as an error and counted in `lost`."""
        message = exc.reply
        prepared.record = "retrying"
        log.warning(
            "gateway: reply %s of session %s not recorded (%s); retrying",
            message.id,
            prepared.session.id,
            exc,
        )
        task = asyncio.ensure_future(self._retry_record(prepared, message, finalize=finalize))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)
        return message

    async def _retry_record(self, prepared: Prepared, message: Message, *, finalize: bool) -> None:
        store = self.store
        tool_ids = prepared.session.tool_ids
        for delay in self.retries:
            await asyncio.sleep(delay)
            try:
                if finalize:
                    await asyncio.to_thread(store.finalize, message, tool_ids=tool_ids)
                else:
                    await asyncio.to_thread(store.append, message, tool_ids=tool_ids)
            except DuplicateMessageError:
                pass  # the failed write had committed after all
            except MetisError as exc:
                log.warning("gateway: reply %s still not recorded: %s", message.id, exc)
                continue
            await asyncio.to_thread(self._settle, prepared, message)
            log.info("gateway: reply %s recorded on retry", message.id)
            return
        self.lost += 1
        log.error(
            "gateway: reply %s of session %s LOST from the record after %d retries",
            message.id,
            prepared.session.id,
            len(self.retries),
        )

    async def stream(self, prepared: Prepared) -> AsyncIterator[bytes]:
        """Send streamed; return the inbound format's stream once the upstream's first
        event arrived. A send that fails before any event (an upstream error status, a
        refusal by the client's checks, a store failure) raises here, before the response
        headers go out, so it answers as a whole reply's failure does: the inbound API's
        error shape with the upstream's status. A failure after the first event is an
        in-stream error event, as the providers' own streams end."""
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
                    user_id=prepared.principal[0],
                    team_id=prepared.principal[1],
                    **prepared.options,
                )
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(send())
        try:
            first = await queue.get()
            if first is None:  # the send ended before any event: its failure is the answer
                await asyncio.wait([task])
                failure = task.exception()
                if isinstance(failure, MetisError) and not isinstance(failure, ReplyNotSavedError):
                    self._remember_request(prepared)
                    raise failure
        except BaseException:
            await self._abandon(prepared, task)
            raise
        return self._frames(prepared, encoder, queue, task, first)

    async def _abandon(self, prepared: Prepared, task: asyncio.Task[Message]) -> None:
        """The client went away (or the stream cannot start): cancel the send, which stores
        what arrived as cancelled, and key the request for its retry."""
        if task.done():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, MetisError):
            await task
        self._remember_request(prepared)

    async def _frames(
        self,
        prepared: Prepared,
        encoder: ReplyEncoder,
        queue: asyncio.Queue[StreamEvent | None],
        task: asyncio.Task[Message],
        first: StreamEvent | None,
    ) -> AsyncIterator[bytes]:
        """The inbound format's stream of a send whose first event (`first`) arrived."""
        try:
            yield encoder.start()
            event = first
            while event is not None:
                frame = encoder.feed(event)
                if frame:
                    yield frame
                event = await queue.get()
            saved: int | None = None
            try:
                message = await task
                saved = len(prepared.session.tool_ids)  # what the reply's own transaction saved
            except ReplyNotSavedError as exc:
                message = self._record_later(prepared, exc, finalize=True)
            except ProviderError as exc:
                self._remember_request(prepared)
                yield encoder.fail(exc.error_type or "api_error", str(exc))
                return
            except MetisError as exc:
                self._remember_request(prepared)
                yield encoder.fail("api_error", str(exc))
                return
            frame = encoder.finish(message)  # first: it names the calls' ids the client sees
            if saved is not None:
                await asyncio.to_thread(self._settle, prepared, message, saved)
            yield frame
        finally:
            await self._abandon(prepared, task)


__all__ = [
    "ANONYMOUS",
    "INBOUND_PROVIDER",
    "RECORD_HEADER",
    "SESSION_HEADER",
    "Exchanges",
    "GatewayRequestError",
    "Principal",
    "target_model",
]
