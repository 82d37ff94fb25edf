"""One gateway exchange: an inbound request in a client's wire format -> canonical ->
the upstream provider through the metis client -> the reply in the client's format.

The inbound format's adapter imports the request (its history, tools and options) into
a session; the session sends it to the model the request names, whatever provider that
is; the reply is written back by the inbound adapter's reply writer (`adapters._kit.reply`).
Nothing here translates a wire format itself.

The session's store is the exchange's `writes.ExchangeWrites`: what the client would
write at once (the new turns, the settings, the reply) is gathered with the gateway's own
rows and committed in one transaction, in a worker thread, before the reply's last bytes
go back (`Exchanges._record`). The exchange's reads of the store run in worker threads too
(`Exchanges.prepare`: the request's import and the session it continues); what the send
reads afterwards, on the event loop, the exchange's writes answer from what was read then.
So a slow store holds up the requests that wait on it, never the loop's other clients.

A stateless request (no session header, no `previous_response_id`) is imported once,
under a probe session, so that its history can be fingerprinted before its session is
known (`_recognize`); its new turns are then re-keyed to that session (`_rekeyed`).

The model field names any catalog model or alias (`anthropic:claude-sonnet-4-6` through
the OpenAI SDK, `sonnet`); a bare provider model name (`gpt-4o` to `/v1/chat/completions`,
`claude-sonnet-4-5` to `/v1/messages`) means the inbound API's own provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, cast

from metis_schema.v3 import Message, Role, StreamEvent, TextBlock

from .. import adapters
from ..adapters import AdapterOptions, WireImport
from ..adapters._kit.losses import said_already
from ..adapters._kit.reply import ReplyEncoder, ReplyOptions
from ..catalog import load_catalog
from ..client import AsyncClient
from ..client._async import AsyncSession
from ..client._session import ClientSettings, SessionCore, create_record
from ..client._stream import CheckpointPolicy
from ..continuation import REPLY_PREFIX, find_response
from ..endpoints import normalize_endpoint
from ..errors import MetisError, ProviderError, StoreError, UnknownModelError
from ..fingerprint import KeyChain
from ..ids import ToolIdMap, new_message_id
from ..ops.compact import replayable
from ..ops.fork import moved
from ..store import Store
from .writes import ExchangeWrites

log = logging.getLogger("metis.gateway")

Principal = tuple[str | None, str | None]
"""(user id, team id) a request is made for: its gateway key's."""
ANONYMOUS: Principal = (None, None)

_PROBE_SESSION = "sess_gateway_probe"
"""Session id a request is imported under only to fingerprint it (never stored)."""

RECORD_RETRIES = (0.05, 0.2, 1.0, 5.0)
"""Delays before each retry of a reply the store failed to record (then it is reported lost)."""

DRAIN_GRACE = 10.0
"""Seconds a stopping gateway waits for its last commits beyond its retries' delays."""

RECORD_HEADER = "x-metis-record"
"""Reply header set when the store failed to record the exchange: `retrying` (its one
transaction is retried in the background); absent when it was recorded before the reply
was written."""

_ONE_CHECKPOINT = CheckpointPolicy(events=sys.maxsize, seconds=math.inf)
"""A gateway stream's checkpoints stay in its exchange's writes until the one commit
(`writes`): taking more than the first one would only cost the loop the snapshots."""

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


def _nothing_to_answer() -> GatewayRequestError:
    """The refusal of a request whose last message is the model's (or that adds none)."""
    return GatewayRequestError(
        "the request adds nothing to answer: its last message is the model's",
        path="messages",
        hint="send the user's turn or the tool results",
    )


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
    writes: ExchangeWrites
    """The exchange's store work, committed once (`Exchanges._record`)."""
    chain: KeyChain
    """The prefix keys of the conversation as the client sent it (its reply extends them)."""
    principal: Principal = ANONYMOUS
    withheld: bool = False
    """`store: false`: recorded, but not served back by id (`GET /v1/responses/{id}`,
    `previous_response_id`)."""
    record: str | None = None
    """Set to `retrying` when the exchange could not be recorded at once (`RECORD_HEADER`)."""
    request_key: str | None = None
    """The client-view key of the whole request, when it was recognized by fingerprint."""
    claim: tuple[str, str] | None = None
    """(session, message) the exchange continues from, in `Exchanges.continuing` until it
    is recorded."""
    stored_in: str | None = None
    """The fork the exchange was stored in when a concurrent request continued the same
    conversation first (`writes.ExchangeWrites.gate`); None: `session`."""

    @property
    def session_id(self) -> str:
        """The session the exchange is stored in."""
        return self.stored_in or str(self.session.id)


@dataclass
class _Draft:
    """A request read into the session it continues, its new turns not queued yet
    (`Exchanges._import`, then `Exchanges._queue`)."""

    session: AsyncSession
    imported: WireImport
    known: int
    """How many of the imported messages the session holds already."""
    chain: KeyChain
    request_key: str | None = None
    tip: str | None = None
    """The stored message the request continues from, when it was recognized by fingerprint."""
    probe: ToolIdMap | None = None
    """The map of the probe session the request was imported under (`_recognize`), when it
    was: the messages are re-keyed to the session when queued."""


def _rekeyed(
    messages: list[Message], probe: ToolIdMap, session_id: str, tool_ids: ToolIdMap
) -> list[Message]:
    """`messages` of a request imported under the probe session (`probe` is the map that
    import bound), as importing the same request into `session_id` gives them: each call the
    probe import bound is registered in the session's map, in the import's order, as that
    import registers it (a call the session knows keeps its id, a new one is bound), and the
    messages name those ids and the session. Only the messages kept need moving (the new
    turns), but every call of the request is registered: which known call an import's n-th
    `call_0` is depends on the calls before it."""
    with tool_ids.importing():
        renamed = {
            entry.canonical: tool_ids.register_incoming(entry.provider, entry.provider_id)
            for entry in probe
            if entry.origin == "provider"
        }
    return [moved(message, session_id, renamed) for message in messages]


def _instructions_in_force(history: Sequence[Message]) -> str | None:
    """The text of the last SYSTEM message of `history` (the instructions its last turns
    were sent under), None when it has none."""
    last = next((m for m in reversed(history) if m.role is Role.system), None)
    if last is None:
        return None
    return "\n\n".join(block.text for block in last.content if isinstance(block, TextBlock))


def _written_before(imported: WireImport, items: int) -> int:
    """How many messages of a `previous_response_id` continuation's import the stored
    history written in front of the client's input made (`Exchanges._continuation`): the
    leading ones read from `instructions` or from one of the first `items` input items
    (`WireImport.paths` names a message by its first item: a run of assistant items the
    client's input goes on with counts as the history's, as the history imported alone
    counts it)."""
    history = {"instructions", *(f"input[{i}]" for i in range(items))}
    return next((n for n, path in enumerate(imported.paths) if path not in history), len(imported.paths))


class Exchanges:
    """The gateway's work, over one async client (one store, one HTTP pool)."""

    def __init__(self, client: AsyncClient, *, retries: tuple[float, ...] = RECORD_RETRIES) -> None:
        self.client = client
        self.store = cast("Store", client.store)
        """The client's store: the gateway's own rows (tips, keys) are a metis Store's."""
        self.retries = retries
        self.pending: set[asyncio.Task[None]] = set()
        """Commits under way, their background retries, and the streams' relays (`_relay`):
        kept here so that none is collected before it ends."""
        self.lost = 0
        """Exchanges the store never recorded after every retry (each one logged as an error)."""
        self.continuing: dict[tuple[str, str], int] = {}
        """(session, message) -> how many exchanges of this process continue the session
        from that message and are not recorded yet: another request continuing from there
        branches off at once (`prepare`)."""

    async def drain(self) -> None:
        """Wait for the commits, retries and streams under way (the server is stopping),
        as long as the retries may take and a few seconds more; what is still not recorded
        then is logged as lost."""
        deadline = time.monotonic() + sum(self.retries) + DRAIN_GRACE
        while self.pending and (left := deadline - time.monotonic()) > 0:
            await asyncio.wait(list(self.pending), timeout=left)
        if self.pending:
            log.error("gateway: stopping with %d exchange(s) not recorded", len(self.pending))

    def _settings(self, writes: ExchangeWrites) -> ClientSettings:
        """The client's settings, over the exchange's writes as the store."""
        return dataclasses.replace(self.client.settings, store=writes, checkpoints=_ONE_CHECKPOINT)

    def _new_session(self, writes: ExchangeWrites, target: str, inbound: str) -> AsyncSession:
        """A new session (made at the exchange's commit), as `AsyncClient.session` makes one."""
        settings = self._settings(writes)
        record = create_record(
            writes,
            model=target,
            default_model=settings.default_model,
            workspace=None,
            source=f"gateway:{inbound}",
        )
        return AsyncSession(self.client, SessionCore(settings, record, tools=()))

    def _resume(self, writes: ExchangeWrites, session_id: str) -> AsyncSession:
        """A stored session with the tools it last recorded, as `AsyncClient.resume` opens it."""
        core = SessionCore(self._settings(writes), writes.get_session(session_id), tools=None)
        return AsyncSession(self.client, core)

    async def prepare(
        self,
        inbound: str,
        body: dict[str, Any],
        headers: Mapping[str, str],
        principal: Principal = ANONYMOUS,
    ) -> Prepared:
        """Import the request into a session: the one its header names, else the stored
        conversation it continues (`previous_response_id`, else the longest stored tip its
        history starts with: `_recognize`), else a new one. Only the new turns are written
        (queued in the exchange's writes, checked now, committed with the reply).

        Everything that reads the store runs in a worker thread (`_import`, `_queue`): a slow
        read holds up this request only, never the event loop's other clients. Between the
        two, on the loop, the request claims the point it continues from (`continuing`), or
        branches off when a request of this process holds it: checked and claimed with no
        await in between, so two requests never both take it."""
        target = target_model(inbound, body.get("model"))
        writes = ExchangeWrites(self.store)
        draft = await asyncio.to_thread(
            self._import, writes, inbound, target, body, headers.get(SESSION_HEADER)
        )
        fresh = draft.imported.messages[draft.known :]
        retry = draft.request_key is not None and draft.known == len(draft.imported.messages)
        if (not fresh and not retry) or (fresh and fresh[-1].role is Role.assistant):
            raise _nothing_to_answer()
        claim, fork_at = None, None
        if draft.tip is not None and fresh:
            # a request of this process continuing the conversation from there, not yet
            # recorded, makes this one branch off now (its session header names the fork);
            # else this one claims it, and another process continuing it first is found at
            # the commit, which branches then (`ExchangeWrites.gate`)
            if (draft.session.id, draft.tip) in self.continuing:
                fork_at = draft.tip
            else:
                writes.gate = claim = (draft.session.id, draft.tip)
                self.continuing[claim] = self.continuing.get(claim, 0) + 1
        try:
            session = await asyncio.to_thread(self._queue, writes, draft, fork_at, principal)
        except BaseException:
            self._unclaim(claim)
            raise
        stream_options = body.get("stream_options")
        return Prepared(
            inbound=inbound,
            session=session,
            target=target,
            tools=list(draft.imported.tools),
            options=_send_options(draft.imported.options),
            stream=body.get("stream") is True,
            include_usage=isinstance(stream_options, dict) and stream_options.get("include_usage") is True,
            model_name=str(body.get("model")),
            principal=principal,
            withheld=inbound == "responses" and body.get("store") is False,
            request_key=draft.request_key,
            writes=writes,
            chain=draft.chain,
            claim=claim,
        )

    def _import(
        self, writes: ExchangeWrites, inbound: str, target: str, body: dict[str, Any], wanted: str | None
    ) -> _Draft:
        """The request read into the session it continues (see `prepare`; in a worker thread)."""
        previous = body.get("previous_response_id") if inbound == "responses" else None
        history_items = None
        if previous is not None:
            session, body, history_items = self._continuation(writes, previous, body)
        elif wanted:
            session = self._resume(writes, wanted)
        else:
            return self._recognize(writes, inbound, target, body)
        imported = adapters.get(inbound).from_wire_request(
            body, session_id=session.id, tool_ids=session.tool_ids
        )
        # a continuation is imported once: the history's messages are told by their items
        known = len(session.messages()) if history_items is None else _written_before(imported, history_items)
        chain = KeyChain()
        chain.extend(imported.messages)
        return _Draft(session, imported, known, chain)

    def _queue(
        self, writes: ExchangeWrites, draft: _Draft, fork_at: str | None, principal: Principal
    ) -> AsyncSession:
        """Queue the request's new turns in the exchange's writes (checked now, in a worker
        thread): in the session it continues, or in a fork of it made at `fork_at`; a
        request imported under the probe session (`_recognize`) is re-keyed to that session
        first (`_rekeyed`): it is imported once. The session the turns are queued in."""
        session = draft.session
        if fork_at is not None:
            log.info("gateway: session %s is being continued: branching at %s", session.id, fork_at)
            session = session.fork(fork_at)
        fresh = draft.imported.messages[draft.known :]
        if draft.probe is not None:
            fresh = _rekeyed(fresh, draft.probe, session.id, session.tool_ids)
        if principal != ANONYMOUS:
            for message in fresh:
                message.metadata.user_id, message.metadata.team_id = principal
        writes.append_many(fresh, tool_ids=session.tool_ids)  # checked now, committed with the reply
        return session

    def _recognize(self, writes: ExchangeWrites, inbound: str, target: str, body: dict[str, Any]) -> _Draft:
        """The stored session a stateless request continues (a new session when it continues
        none), with the request imported once, under the probe session (`_queue` re-keys it
        to the session), how many of its messages that session holds already (0 for a new
        one), the key of the whole request as the client sent it, the message the request
        continues from (None: a new session), and the request's prefix keys.

        The request's history is fingerprinted as the client sent it (`KeyChain`) and
        looked up among the tips stored after each reply (`_remember_tip`), keyed the same
        way, in one indexed query: the prefixes that end at a reply, and the whole request,
        which is a tip when the same request failed before (`_remember_request`: a retry,
        which stores nothing again). A tip followed in its session by turns a provider is
        sent (not just a failed or cancelled reply) is a branch point: the session is forked
        there, so a regenerated or edited turn never mixes into the other branch.
        """
        probe_ids = ToolIdMap(_PROBE_SESSION)
        probe = adapters.get(inbound).from_wire_request(body, session_id=_PROBE_SESSION, tool_ids=probe_ids)
        if not probe.messages or probe.messages[-1].role is Role.assistant:
            raise _nothing_to_answer()  # refused before any session is made
        chain = KeyChain()
        keys = chain.extend(probe.messages)
        candidates = [
            key
            for key, message in zip(keys[:-1], probe.messages[:-1], strict=True)
            if message.role is Role.assistant
        ]
        candidates.append(keys[-1])
        found = self.store.find_tip(candidates)
        if found is None:
            session = self._new_session(writes, target, inbound)
            return _Draft(session, probe, 0, chain, request_key=keys[-1], probe=probe_ids)
        index, session_id, message_id = found
        session = self._resume(writes, session_id)
        history = session.messages()
        ids = [m.id for m in history]
        after = history[ids.index(message_id) + 1 :] if message_id in ids else history
        if replayable(after):
            session = session.fork(message_id)
            message_id = session.messages()[-1].id  # the fork's copy of it (forks mint ids)
        known = keys.index(candidates[index]) + 1
        return _Draft(session, probe, known, chain, request_key=keys[-1], tip=message_id, probe=probe_ids)

    def _remember_request(self, prepared: Prepared) -> None:
        """The request got no complete reply (the upstream failed, the client hung up): key
        the request itself as a tip, so the same request sent again (an SDK's retry) is
        answered in the same session without storing its turns twice."""
        if prepared.request_key is None:
            return
        history = prepared.session.messages()
        try:
            last = next(m for m in reversed(history) if m.role is not Role.assistant)
            prepared.writes.put_tip(prepared.request_key, prepared.session.id, last.id)
        except (StopIteration, MetisError) as exc:
            log.warning(
                "gateway: session %s: the failed request's tip not kept: %s", prepared.session.id, exc
            )

    def stored_reply(self, response_id: str) -> Message | None:
        """The stored reply a gateway Responses id names (`continuation.find_response`, this
        gateway's own ids only: it checks the prefix and that the message is a reply); None
        for none, and for one created with `store: false` (recorded, but neither served back
        by id nor continued)."""
        message = find_response(self.store, response_id, provider_ids=False)
        if message is None or self.store.is_withheld(message.id):
            return None
        return message

    def _continuation(
        self, writes: ExchangeWrites, previous: object, body: dict[str, Any]
    ) -> tuple[AsyncSession, dict[str, Any], int]:
        """A Responses request continuing a stored reply (`previous_response_id`), for any
        upstream: the session that holds the reply (a fork of it when the reply is not its
        last message), and the request with that history written in front of its input —
        so the upstream gets the whole conversation, not an id it never issued — with the
        number of input items that history takes. The request is imported once (`_import`):
        the messages those items make are the ones stored already (`_written_before`)."""
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
        session = self._resume(writes, message.session_id)
        history = session.messages()
        if history[-1].id != message.id:
            session = session.fork(message.id)
            history = session.messages()
        writer = client_view(
            "responses", message.metadata.model, session.id, session.tool_ids, message.metadata.endpoint
        )
        responses = adapters.get("responses")
        written = responses.to_wire(history, [], writer)
        stored_items = written.get("input", [])
        given = body.get("input")
        new_items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        continued = {k: v for k, v in body.items() if k not in ("previous_response_id", "instructions")}
        if "instructions" in written:
            continued["instructions"] = written["instructions"]
        own = body.get("instructions")
        if isinstance(own, str) and own != _instructions_in_force(history):
            # The request's own instructions, other than those the history ends under: OpenAI
            # applies them in place of the earlier ones. metis keeps the conversation whole,
            # so they are a system turn where the client's input starts (stored, and sent
            # upstream after the history), and the history keeps its own; never dropped as if
            # stored. Instructions a client repeats on every turn are the history's already.
            new_items.insert(0, {"role": "system", "content": own})
        elif own is not None and not isinstance(own, str):
            continued["instructions"] = own  # not a string: the import refuses it, at its path
        continued["input"] = [*stored_items, *new_items]
        return session, continued, len(stored_items)

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
            message_id=message_id,
            created=int(time.time()),
            producer=producer,
            include_usage=prepared.include_usage,
        )

    async def reply(self, prepared: Prepared) -> tuple[dict[str, Any], Message]:
        """Send and answer whole: the exchange is recorded (`_record`) once the reply is
        written for the client, before it goes back."""
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
        except MetisError:
            self._remember_request(prepared)
            await self._record(prepared)
            raise
        except BaseException:
            self._release(prepared)
            raise
        try:
            body = self._write_reply(prepared, message)  # first: it names the calls' ids the client sees
            self._settle(prepared, message)
        finally:  # the reply arrived: it is recorded even when it cannot be written for the client
            await self._record(prepared)
        return body, message

    def _write_reply(self, prepared: Prepared, message: Message) -> dict[str, Any]:
        options = self.reply_options(
            prepared, message.id, message.metadata.provider, message.metadata.endpoint
        )
        return adapters.get(prepared.inbound).to_wire_reply(message, options)

    def _settle(self, prepared: Prepared, message: Message) -> None:
        """What follows a reply, queued with it: `store: false`, and the conversation's tip
        as the client now holds it. (The tool ids writing the reply for the client minted
        are saved with the reply: its write names the session's map, read at commit.)"""
        if prepared.withheld:
            prepared.writes.withhold_reply(message.id, prepared.session.id)
        try:
            self._remember_tip(prepared, message)
        except MetisError as exc:
            log.warning("gateway: reply %s: its conversation's tip not kept: %s", message.id, exc)

    def _remember_tip(self, prepared: Prepared, message: Message) -> None:
        """Key the conversation as the client holds it after this reply (`_recognize` looks
        requests up by it): the request as the client sent it (`Prepared.chain`) extended by
        the reply as the client sends it back. The client sees the reply as the inbound
        format carries it (thinking another provider wrote dropped, Chat content joined into
        one string...), so the reply alone is written with the inbound adapter and imported
        back before it is fingerprinted: the work does not grow with the history."""
        session = prepared.session
        copy = ToolIdMap(session.id, list(session.tool_ids))  # writing mints ids: a copy
        options = client_view(prepared.inbound, prepared.target, session.id, copy, message.metadata.endpoint)
        adapter = adapters.get(prepared.inbound)
        with said_already():  # the reply's writer said what the client does not get
            written = adapter.to_wire([message], [], options)
            seen = adapter.from_wire_request(
                written, session_id=_PROBE_SESSION, tool_ids=ToolIdMap(_PROBE_SESSION)
            ).messages
        keys = prepared.chain.extend(seen)
        if keys:
            prepared.writes.put_tip(keys[-1], session.id, message.id)

    async def _record(self, prepared: Prepared) -> None:
        """Commit the exchange's writes, in one transaction, in a worker thread (the event
        loop serves other requests meanwhile); shielded, so a client that hangs up does not
        cut it short. A store that fails does not fail the exchange: its reply goes back
        (`RECORD_HEADER: retrying`) and the commit is retried in the background, `retries`
        times at most; an exchange still not recorded then is logged as an error and counted
        in `lost`."""
        task = asyncio.ensure_future(self._commit(prepared))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)
        await asyncio.shield(task)

    async def _commit(self, prepared: Prepared) -> None:
        try:
            prepared.stored_in = await asyncio.to_thread(prepared.writes.commit, self.store)
        except StoreError as exc:
            self._release(prepared)
            prepared.record = "retrying"
            log.warning(
                "gateway: exchange of session %s not recorded (%s); retrying", prepared.session.id, exc
            )
            retry = asyncio.ensure_future(self._retry_record(prepared))
            self.pending.add(retry)
            retry.add_done_callback(self.pending.discard)
            return
        except MetisError as exc:  # the store refused what was queued: a retry cannot help
            self._release(prepared)
            self._lose(prepared, exc)
            return
        self._release(prepared)
        if prepared.stored_in is not None:
            log.info(
                "gateway: session %s was continued meanwhile: the exchange branched into %s",
                prepared.session.id,
                prepared.stored_in,
            )

    def _release(self, prepared: Prepared) -> None:
        """The exchange is recorded (or will be by a retry, which the gate checks): it no
        longer keeps other requests of this process from continuing where it did."""
        claim, prepared.claim = prepared.claim, None
        self._unclaim(claim)

    def _unclaim(self, claim: tuple[str, str] | None) -> None:
        if claim is not None:
            left = self.continuing.pop(claim, 1) - 1
            if left:
                self.continuing[claim] = left

    async def _retry_record(self, prepared: Prepared) -> None:
        writes = prepared.writes
        for delay in self.retries:
            await asyncio.sleep(delay)
            try:
                if await asyncio.to_thread(writes.committed, self.store):
                    return  # the failed commit had committed after all
                prepared.stored_in = await asyncio.to_thread(writes.commit, self.store)
            except StoreError as exc:
                log.warning(
                    "gateway: exchange of session %s still not recorded: %s", prepared.session.id, exc
                )
                continue
            except MetisError as exc:
                self._lose(prepared, exc)
                return
            log.info("gateway: exchange of session %s recorded on retry", prepared.session.id)
            return
        self._lose(prepared, None)

    def _lose(self, prepared: Prepared, cause: MetisError | None) -> None:
        self.lost += 1
        log.error(
            "gateway: exchange of session %s LOST from the record after %d retries%s",
            prepared.session.id,
            len(self.retries) if cause is None else 0,
            "" if cause is None else f": {cause}",
        )

    async def stream(self, prepared: Prepared) -> AsyncIterator[bytes]:
        """Send streamed; return the inbound format's stream once the upstream's first
        event arrived. A send that fails before any event (an upstream error status, a
        refusal by the client's checks) raises here, before the response headers go out,
        so it answers as a whole reply's failure does: the inbound API's error shape with
        the upstream's status. A failure after the first event is an in-stream error event,
        as the providers' own streams end. The exchange is recorded before the stream's
        last frame goes out."""
        queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        reply_id = new_message_id()  # the stream names its reply first
        try:
            provider = load_catalog().resolve(prepared.target).provider
            endpoint = self.client.settings.endpoint(adapters.get(provider)).base_url
            encoder = adapters.get(prepared.inbound).reply_encoder(
                self.reply_options(prepared, reply_id, provider, normalize_endpoint(endpoint))
            )
        except BaseException:  # nothing sent: nothing to record
            self._release(prepared)
            raise

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
                if isinstance(failure, MetisError):
                    self._remember_request(prepared)
                    await self._record(prepared)
                    raise failure
        except BaseException:
            await self._abandon(prepared, task)
            raise
        frames: asyncio.Queue[bytes | None] = asyncio.Queue()
        owner = asyncio.ensure_future(self._relay(prepared, encoder, queue, task, first, frames))
        self.pending.add(owner)
        owner.add_done_callback(self.pending.discard)
        return self._frames(task, frames)

    async def _abandon(self, prepared: Prepared, task: asyncio.Task[Message]) -> None:
        """The stream cannot start: cancel the send, which keeps what arrived as cancelled,
        key the request for its retry, and record the exchange."""
        if task.done():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, MetisError):
            await task
        self._remember_request(prepared)
        await self._record(prepared)

    async def _relay(  # noqa: PLR0917  (one stream's parts, passed once)
        self,
        prepared: Prepared,
        encoder: ReplyEncoder,
        events: asyncio.Queue[StreamEvent | None],
        task: asyncio.Task[Message],
        first: StreamEvent | None,
        frames: asyncio.Queue[bytes | None],
    ) -> None:
        """Turn the send's events (from `first` on) into the inbound format's frames, and
        record the exchange when the send ends, before its last frame: a task of its own
        (`Exchanges.pending`), so the exchange is recorded whether or not the client reads
        the frames (`_frames`); a client that goes away cancels the send, whose reply is
        then recorded as cancelled with what arrived."""
        try:
            frames.put_nowait(encoder.start())
            event = first
            while event is not None:
                frame = encoder.feed(event)
                if frame:
                    frames.put_nowait(frame)
                event = await events.get()
            await asyncio.wait([task])
            failure = None if task.cancelled() else task.exception()
            if task.cancelled() or failure is not None:
                self._remember_request(prepared)
                await self._record(prepared)
                if isinstance(failure, MetisError):
                    kind = (failure.error_type if isinstance(failure, ProviderError) else None) or "api_error"
                    frames.put_nowait(encoder.fail(kind, str(failure)))
                return
            message = task.result()
            try:
                frame = encoder.finish(message)  # first: it names the calls' ids the client sees
                self._settle(prepared, message)
            finally:
                await self._record(prepared)
            frames.put_nowait(frame)
        finally:
            frames.put_nowait(None)

    @staticmethod
    async def _frames(
        task: asyncio.Task[Message], frames: asyncio.Queue[bytes | None]
    ) -> AsyncIterator[bytes]:
        """The frames `_relay` makes, as the response's body; a client that stops reading
        them (it went away) cancels the send."""
        try:
            while (frame := await frames.get()) is not None:
                yield frame
        finally:
            if not task.done():
                task.cancel()


__all__ = [
    "ANONYMOUS",
    "RECORD_HEADER",
    "SESSION_HEADER",
    "Exchanges",
    "GatewayRequestError",
    "Principal",
    "target_model",
]
