"""What one session does around a request, shared by the sync and async clients.

Everything here is I/O-free apart from store calls: choosing the model and recording
why (spec §4.3), refusing a swap the history cannot survive before any request
(§8.4), building the body through the adapter with the session's tool id map (§6.2),
and persisting the user message before the request and the assistant message after,
so a crash never loses what the user typed and never stores half a reply as COMPLETE.
The sync and async clients add only the HTTP part.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Self

from metis_schema.v3 import (
    CatalogEntry,
    Message,
    MessageStatus,
    RequestOptions,
    Role,
    RoutingDecisionRecord,
    ToolDefinition,
    ToolUseBlock,
)

from .. import adapters, builders, continuation
from .._logredact import remember
from ..adapters import Adapter, AdapterOptions, WireBody
from ..assembly import RequestContext
from ..builders import Content
from ..catalog import load_catalog
from ..endpoints import normalize_endpoint
from ..errors import ClientError, MessageNotFoundError, MetisError, StoreError, ToolSchemaError
from ..events import EventSink
from ..ids import ToolIdMap, new_message_id
from ..ops import compact
from ..ops.repair import open_calls, settle_partials
from ..protocols import ExchangeTracer, SessionRecord, SessionStore
from ..routing import ChainPolicy, check_swap, decision_record
from ..settings import request_options
from ..tools import ToolRegistry
from ._config import Endpoint, resolve_endpoint
from ._deadline import Deadlines
from ._http import json_body
from ._retry import RetryPolicy
from ._stream import CheckpointPolicy, EventCallback, StreamRun, elapsed_ms, reply_not_saved

_OPTION_NAMES = frozenset(f.name for f in fields(AdapterOptions)) - {
    "model",
    "session_id",
    "tool_ids",
    "workspace",
    "stream",
    "endpoint",
}
DEFAULT_MODEL = "sonnet"
_log = logging.getLogger("metis.client")


@dataclass
class ClientSettings:
    """Configuration shared by every session of one client."""

    store: SessionStore
    api_keys: Mapping[str, str | None] = field(default_factory=dict)
    base_urls: Mapping[str, str] = field(default_factory=dict)
    events: EventSink | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    checkpoints: CheckpointPolicy = field(default_factory=CheckpointPolicy)
    deadlines: Deadlines = field(default_factory=Deadlines)
    """Total time a send and a stream may take (`_deadline`)."""
    clock: Callable[[], float] = time.monotonic
    default_model: str = DEFAULT_MODEL
    user_agent: str = "metis/0.1.0"
    auto_repair: bool = False
    """Repair a session's open tool calls before each send (`SessionCore.repair`)."""
    tracer: ExchangeTracer | None = None
    """Wraps each exchange (`metis.ops.otel.instrument` sets an OpenTelemetry one)."""

    def endpoint(self, adapter: Adapter) -> Endpoint:
        return resolve_endpoint(adapter, api_keys=self.api_keys, base_urls=self.base_urls)


@dataclass
class Prepared:
    """One request, ready to send: where, what, and how to read the answer."""

    adapter: Adapter
    url: str
    headers: dict[str, str]
    body: WireBody
    context: RequestContext
    stream: bool
    compacts_through: str | None = None
    """Set for a compaction's summary request: the reply is stored as a compaction block
    covering the session up to this message (`metis.ops.compact`)."""
    secrets: tuple[str, ...] = ()
    """Values redacted from any error this request raises (its API key)."""
    options: RequestOptions | None = None
    """The request's options as the store records them (`metis.settings`)."""


class SessionCore:
    """State and bookkeeping of one session (see module docstring)."""

    def __init__(
        self,
        settings: ClientSettings,
        record: SessionRecord,
        *,
        tools: Sequence[ToolDefinition] | None = (),
    ) -> None:
        self.settings = settings
        self.store = settings.store
        self.id = record.id
        self.workspace = Path(record.workspace_path)
        policy = dict(record.routing_policy or {})
        catalog = load_catalog()
        self.default_model = catalog.resolve(str(policy.get("default_model") or settings.default_model)).id
        self.default_level = str(policy.get("default_level", "global"))
        self.active_model = catalog.resolve(record.active_model or self.default_model).id
        # The registry checks each tool (§5.4 schema subset, side effects, unique names): a
        # tool the spec refuses fails here, before anything is stored or sent. Replies are
        # checked against it too (§5.2.4, `RequestContext.tools`). None: the tool set the
        # session last recorded (`Store.settings`), so a resumed session sends what it sent.
        self._unusable_tools: ToolSchemaError | None = None
        if tools is None:
            stored = self.store.settings(self.id)
            self.registry = self._stored_registry(() if stored is None else stored.tools)
        else:
            self.registry = ToolRegistry(tools)
        self.tools: tuple[ToolDefinition, ...] = tuple(self.registry)
        self.tool_ids: ToolIdMap = self.store.load_tool_ids(self.id)
        # The history read so far; its first `_settled` messages are final (not PARTIAL),
        # and the store never changes a final row, so later reads fetch only what follows.
        self._history: list[Message] = []
        self._settled = 0
        # A SessionStore of the caller's may read whole sessions only (no `after=`): asked
        # once, here, so that a TypeError raised inside a store's read is never taken for it.
        self._incremental = "after" in inspect.signature(self.store.load_session).parameters
        self.auto_repair = settings.auto_repair

    def _stored_registry(self, tools: Sequence[ToolDefinition]) -> ToolRegistry:
        """The registry of the tools the session recorded. One outside the §5.4 subset (an
        import keeps tools as recorded) makes the session's first send fail, not its opening:
        what needs no tools (compaction, repair, reading) still works."""
        try:
            return ToolRegistry(tools)
        except ToolSchemaError as exc:
            self._unusable_tools = exc
            return ToolRegistry(())

    # --- reading --------------------------------------------------------------------------

    @property
    def sticky(self) -> bool:
        """True when the active model was chosen by a swap rather than the session default."""
        return self.active_model != self.default_model

    def history(self) -> list[Message]:
        """Every stored message of the session, in order (the session's own objects: callers
        outside the client get copies, `Session.messages`).

        Read incrementally: only rows after the last message already read that can no
        longer change (a PARTIAL checkpoint may still be finalized in place, so it is read
        again), whoever wrote them: this client, another process, the CLI. A long session
        is not decoded again on every send.
        """
        history: list[Message] | None = None
        settled = 0
        if self._settled and self._incremental:
            after = self._history[self._settled - 1].id
            try:
                fresh = list(self.store.load_session(self.id, after=after))
            except MessageNotFoundError:  # the message read last is gone (the session was recreated)
                pass
            else:
                history, settled = self._history[: self._settled] + fresh, self._settled
        if history is None:
            history = list(self.store.load_session(self.id))
        while settled < len(history) and history[settled].metadata.status != MessageStatus.partial:
            settled += 1
        self._history, self._settled = history, settled
        return list(history)

    # --- building -------------------------------------------------------------------------

    def user_message(self, content: Content) -> Message:
        """A USER message of `content` (validated; not stored yet)."""
        return builders.user(content, session_id=self.id)

    def tool_message(self, tool_use_id: str, content: Content, *, is_error: bool) -> Message:
        """A TOOL message answering `tool_use_id` (validated; not stored yet)."""
        return builders.tool_result(tool_use_id, content, is_error=is_error, session_id=self.id)

    def routing(self, target: str, *, override: bool) -> RoutingDecisionRecord:
        """The routing record of this turn (spec §4.3); `decision_record` also emits `route.decided`."""
        if override:
            chain, reason = ChainPolicy.PER_MESSAGE_OVERRIDE, "per-message model override"
        elif self.sticky:
            chain, reason = ChainPolicy.MANUAL_STICKY, "user swap (sticky session model)"
        elif self.default_level == "workspace":
            chain, reason = ChainPolicy.WORKSPACE_DEFAULT, "session default model"
        else:
            chain, reason = ChainPolicy.GLOBAL_DEFAULT, "global default model"
        return decision_record(chain, target, reason, events=self.settings.events)

    def check_capable(self, history: Sequence[Message], target: str, tools: Sequence[ToolDefinition]) -> None:
        """Raise CapabilityError (and emit routing_constraint_failure) if `target` can't carry the history."""
        check_swap(history, target, tools=tools, events=self.settings.events, active_model=self.active_model)

    def prepare(
        self,
        content: Content | None,
        *,
        model: str | None,
        tools: Sequence[ToolDefinition] | None,
        stream: bool,
        options: Mapping[str, Any],
        reply_id: str | None = None,
        principal: tuple[str | None, str | None] = (None, None),
    ) -> Prepared:
        """Validate, route, build the body and store the user message; nothing is sent yet.
        `principal` (user id, team id) is recorded on the user message and the reply.

        Every refusal (an unknown option, unanswered tool calls, a model that cannot carry
        the history, a body the adapter cannot build) happens before the user message is
        stored, so a refused send leaves the session as it was.
        """
        unknown = sorted(set(options) - _OPTION_NAMES)
        if unknown:
            raise ClientError(
                f"unknown request option(s): {', '.join(unknown)}", hint=f"known: {sorted(_OPTION_NAMES)}"
            )
        unusable = self._unusable_tools
        if tools is None and unusable is not None:
            raise ToolSchemaError(
                f"session {self.id}: a stored tool cannot be offered: {unusable.message}",
                path=unusable.path,
                hint="resume the session with tools= to send it with others",
            ) from unusable
        registry = self.registry if tools is None else ToolRegistry(tools)
        tools = tuple(registry)
        if self.auto_repair:
            self.repair()
        history = self.history()
        # A PARTIAL row here is a stream cut before its end was saved (a crash, a store that
        # failed): finalize it as CANCELLED. Only rows after the settled prefix can be one.
        if settle_partials(self.store, history[self._settled :]):
            history = self.history()
        wire_history = compact.replayable(history)
        _refuse_unanswered(wire_history, self.id)
        if not tools:
            _warn_toolless(wire_history, self.id)
        user = self.user_message(content) if content is not None else None
        if user is not None and principal != (None, None):
            user.metadata.user_id, user.metadata.team_id = principal
        if user is None and (not wire_history or wire_history[-1].role == Role.assistant):
            raise ClientError("nothing to send: give content, or answer the tool calls first")
        pending = [*wire_history, *([user] if user else [])]
        entry = load_catalog().resolve(model or self.active_model)
        pending, options = self._continued(pending, entry.provider, options)
        if entry.id != self.active_model:
            self.check_capable(pending, entry.id, tools)
        prepared = self._build(
            entry, pending, registry, stream=stream, override=model is not None, options=options
        )
        # The reply's id is chosen now (or given: a gateway names its reply first), so the
        # exchange is recorded with the tools and options it is sent with before it is sent
        # (a new settings revision if they changed).
        prepared.context.message_id = reply_id if reply_id is not None else new_message_id()
        prepared.context.user_id, prepared.context.team_id = principal
        self.store.record_settings(self.id, tools, prepared.options, reply_id=prepared.context.message_id)
        if user is not None:
            self.store.append(user)
        return prepared

    def _continued(
        self, pending: list[Message], provider: str, options: Mapping[str, Any]
    ) -> tuple[list[Message], Mapping[str, Any]]:
        """`pending` with the history a continued response stands for, from the store, when
        `provider` must be sent it (`metis.continuation.resolve`), and the options to send."""
        if all(m.metadata.continues is None for m in pending):
            return pending, options
        messages, provider_options = continuation.resolve(
            self.store,
            pending,
            target_provider=provider,
            tool_ids=self.tool_ids,
            provider_options=options.get("provider_options") or {},
        )
        if provider_options:
            options = {**options, "provider_options": provider_options}
        return messages, options

    def record_tools(self) -> int:
        """Record the session's tools as the ones in force, with the options it last recorded
        (a new settings revision when they differ from the stored ones); the revision."""
        latest = self.store.settings(self.id)
        return self.store.record_settings(self.id, self.tools, None if latest is None else latest.options)

    def _build(
        self,
        entry: CatalogEntry,
        pending: Sequence[Message],
        registry: ToolRegistry,
        *,
        stream: bool,
        override: bool,
        options: Mapping[str, Any],
    ) -> Prepared:
        """The request for `entry`: body via the adapter, URL, headers and response context."""
        adapter = adapters.get(entry.provider)
        endpoint = self.settings.endpoint(adapter)
        sent_to = normalize_endpoint(endpoint.base_url)
        adapter_options = AdapterOptions(
            model=entry.id,
            session_id=self.id,
            tool_ids=self.tool_ids,
            workspace=self.workspace,
            stream=stream,
            endpoint=sent_to,
            **dict(options),
        )
        recorded = request_options(adapter_options, adapter.name)  # the caller's, not the server defaults
        if endpoint.custom_base_url and adapter.custom_server_extra:
            adapter_options.extra = _merged(adapter.custom_server_extra, adapter_options.extra)
        body = adapter.to_wire(pending, tuple(registry), adapter_options)
        context = RequestContext(
            session_id=self.id,
            model=entry.id,
            tool_ids=self.tool_ids,
            routing=self.routing(entry.id, override=override),
            tools=registry,
            events=self.settings.events,
            # a streamed reply whose usage never arrives is priced from this (assembly.py)
            estimated_input_tokens=adapter.estimate_input_tokens(pending, tuple(registry))
            if stream
            else None,
            endpoint=sent_to,
            max_event_chars=adapter_options.max_event_chars,
        )
        headers = {
            "content-type": "application/json",
            "user-agent": self.settings.user_agent,
            **adapter.auth_headers(endpoint.api_key),
            **adapter.request_headers(body),
        }
        url = adapter.endpoint(endpoint.base_url, entry.wire_model, stream=stream)
        secrets = (endpoint.api_key,) if endpoint.api_key else ()
        remember(endpoint.api_key)  # kept out of log records too (metis._logredact)
        return Prepared(adapter, url, headers, body, context, stream, secrets=secrets, options=recorded)

    # --- storing ----------------------------------------------------------------------------

    def reply(self, prepared: Prepared, raw: bytes, started: float) -> Message:
        """The Message of a whole (non-streamed) reply body, stored with its new tool ids in
        one transaction. (A streamed reply's `finalize` does the same, whether it completed
        or was cut: see `stream`.)"""
        prepared.context.latency_ms = elapsed_ms(self.settings.clock, started)
        message = prepared.adapter.from_wire_response(json_body(prepared.adapter, raw), prepared.context)
        if prepared.compacts_through is not None:
            message = compact.compaction_message(message, prepared.compacts_through)
        try:
            self.store.append(message, tool_ids=self.tool_ids)
        except StoreError as exc:
            raise reply_not_saved(message, exc, checkpointed=False) from exc
        return message

    def stream(
        self, prepared: Prepared, on_event: EventCallback | None, started: float, status: int = 200
    ) -> StreamRun:
        """The run that assembles, checkpoints and finally stores a streamed reply."""
        return StreamRun(
            prepared.adapter,
            prepared.context,
            self.store,
            on_event=on_event,
            checkpoints=self.settings.checkpoints,
            started=started,
            clock=self.settings.clock,
            status=status,
        )

    def add_tool_result(self, tool_use_id: str, content: Content, *, is_error: bool = False) -> Message:
        """Store a TOOL message answering `tool_use_id` (the store checks it exists and is unanswered)."""
        message = self.tool_message(tool_use_id, content, is_error=is_error)
        self.store.append(message, tool_ids=self.tool_ids)
        return message

    def repair(self, reason: str | None = None) -> list[Message]:
        """Answer every open tool call with an interruption error (`metis.ops.repair`)."""
        from ..ops.repair import DEFAULT_REASON, repair_session

        return repair_session(self.store, self.id, reason=reason or DEFAULT_REASON, history=self.history())

    def prepare_compaction(self, keep_last: int, summarizer: str | None) -> Prepared:
        """The summarizer's request for a compaction that keeps the last `keep_last` messages
        (`metis.ops.compact`); its reply is stored by `reply` as the compaction."""
        plan = compact.plan(compact.replayable(self.history()), keep_last, self.id)
        entry = load_catalog().resolve(summarizer or self.active_model)
        request = compact.summary_request(self.id, plan.covered)
        no_tools = ToolRegistry(())
        prepared = self._build(
            entry, request, no_tools, stream=False, override=summarizer is not None, options={}
        )
        prepared.compacts_through = plan.through
        return prepared

    def traced(self, prepared: Prepared) -> AbstractContextManager[Callable[[Message], None]]:
        """The settings' tracer around one exchange (a no-op without one)."""
        tracer = self.settings.tracer
        if tracer is None:
            return nullcontext(_ignore)
        return tracer.exchange(self.id, prepared.context.model, compact.replayable(self.history()))

    def swap(self, model: str) -> str:
        """Make `model` the sticky model if the history allows it (spec §8.4); returns its id."""
        target = load_catalog().resolve(model).id
        self.check_capable(compact.replayable(self.history()), target, self.tools)
        self.store.set_active_model(self.id, target)
        self.active_model = target
        return target


@contextmanager
def redacting(prepared: Prepared) -> Iterator[None]:
    """Around one exchange: a MetisError leaving it has the request's secrets taken out of
    its text first (a server may echo the key back in its error body)."""
    try:
        yield
    except MetisError as exc:
        exc.redact(prepared.secrets)
        raise


def _ignore(reply: Message) -> None:
    """What an exchange without a tracer does with its reply."""


def _warn_toolless(history: Sequence[Message], session_id: str) -> None:
    """Say so when a history of tool calls goes out with no tool definitions (a session
    stored before its tools were recorded, resumed without `tools=`): Anthropic refuses such
    a request, and other providers see calls to tools they were never shown."""
    called = sorted({b.name for m in history for b in m.content if isinstance(b, ToolUseBlock)})
    if called:
        _log.warning(
            "session %s: the history calls %s but no tool definitions are sent "
            "(none recorded for the session); pass tools= to resume()",
            session_id,
            ", ".join(called),
            extra={"session_id": session_id},
        )


def _refuse_unanswered(history: Sequence[Message], session_id: str) -> None:
    """A provider rejects a request whose last tool calls have no results: say so before sending
    (the history sent holds only COMPLETE assistant turns, the ones `open_calls` looks at)."""
    unanswered = [f"{block.id} ({block.name})" for block in open_calls(history)]
    if unanswered:
        raise ClientError(
            f"session {session_id} has unanswered tool calls: {', '.join(unanswered)}",
            hint="answer each with session.add_tool_result(tool_use_id, ...) before sending",
        )


def create_record(
    store: SessionStore,
    *,
    model: str | None,
    default_model: str,
    workspace: Path | str | None,
    title: str | None = None,
    source: str | None = None,
) -> SessionRecord:
    """A new stored session whose default model is `model` (workspace level) or the global
    default, labelled with `title` and `source` (what `metis sessions` lists it as)."""
    entry = load_catalog().resolve(model or default_model)
    level = "workspace" if model else "global"
    return store.create_session(
        str(Path(workspace or Path.cwd()).resolve()),
        active_model=entry.id,
        routing_policy=routing_policy(entry.id, level),
        title=title,
        source=source,
    )


def routing_policy(default_model: str, level: str, **extra: str) -> dict[str, str]:
    """The routing policy a new session stores: its default model and the level it was set
    at ("workspace" or "global"), which `SessionCore` reads back, plus any `extra` notes."""
    return {"default_model": default_model, "default_level": level, **extra}


__all__ = [
    "DEFAULT_MODEL",
    "ClientBase",
    "ClientSettings",
    "Content",
    "Prepared",
    "SessionBase",
    "SessionCore",
    "create_record",
    "routing_policy",
]


def _merged(defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """`given` over `defaults`, one level of dicts deep (e.g. the adapter directives under "metis")."""
    out = dict(defaults)
    for key, value in given.items():
        base = out.get(key)
        out[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    return out


class ClientBase:
    """What the sync and async clients share: settings, the store, and session cores.

    Only I/O differs between them (httpx.Client vs httpx.AsyncClient, sleep vs await);
    everything decided without I/O lives here and in SessionCore, written once.
    """

    settings: ClientSettings
    _close_store: Callable[[], None] | None

    def _setup(
        self,
        store: SessionStore | str | os.PathLike[str] | None,
        *,
        api_keys: Mapping[str, str | None] | None,
        base_urls: Mapping[str, str] | None,
        events: EventSink | None,
        max_retries: int,
        max_retry_delay: float,
        checkpoints: CheckpointPolicy | None,
        clock: Callable[[], float],
        default_model: str,
        send_deadline: float | None,
        stream_deadline: float | None,
    ) -> None:
        """The settings both clients take, from their constructors' own arguments."""
        if store is None or isinstance(store, str | os.PathLike):  # a path or URL: open_store's to open
            from ..store import open_store

            opened = open_store(store)
            store, self._close_store = opened, opened.close
        else:
            self._close_store = None
        self.settings = ClientSettings(
            store=store,
            api_keys=dict(api_keys or {}),
            base_urls=dict(base_urls or {}),
            events=events,
            retry=RetryPolicy(max_retries=max_retries, max_delay=max_retry_delay),
            checkpoints=checkpoints or CheckpointPolicy(),
            deadlines=Deadlines(send=send_deadline, stream=stream_deadline),
            clock=clock,
            default_model=default_model,
        )

    @property
    def store(self) -> SessionStore:
        """The store every session of this client persists to."""
        return self.settings.store

    def _new_core(
        self,
        model: str | None,
        workspace: Path | str | None,
        tools: Sequence[ToolDefinition],
        *,
        title: str | None = None,
        source: str | None = None,
    ) -> SessionCore:
        record = create_record(
            self.store,
            model=model,
            default_model=self.settings.default_model,
            workspace=workspace,
            title=title,
            source=source,
        )
        return SessionCore(self.settings, record, tools=tools)

    def _resumed_core(self, session_id: str, tools: Sequence[ToolDefinition] | None) -> SessionCore:
        """The stored session; with `tools`, those become its tool set in force (recorded as
        a new settings revision when they differ), without, the tools it last recorded."""
        core = SessionCore(self.settings, self.store.get_session(session_id), tools=tools)
        if tools is not None:
            core.record_tools()
        return core

    def _close_owned_store(self) -> None:
        if self._close_store is not None:
            self._close_store()
            self._close_store = None


class SessionBase:
    """What a sync `Session` and an `AsyncSession` share: everything but `send`.

    Answering a tool call, swapping the model and reading the conversation touch only
    the store, never the network, so both clients expose them unchanged from here.
    """

    def __init__(self, core: SessionCore) -> None:
        self.core = core

    @property
    def id(self) -> str:
        return self.core.id

    @property
    def active_model(self) -> str:
        """Canonical id of the model the next request goes to."""
        return self.core.active_model

    @property
    def tool_ids(self) -> ToolIdMap:
        """The session's ToolIdMap (canonical id <-> provider ids)."""
        return self.core.tool_ids

    def messages(self) -> list[Message]:
        """The stored conversation, in order, read afresh: the caller's own objects, so
        editing them changes nothing sent (a fresh read costs a quarter of deep-copying the
        history the session keeps)."""
        return list(self.core.store.load_session(self.core.id))

    def add_tool_result(self, tool_use_id: str, content: Content, *, is_error: bool = False) -> Message:
        """Answer a tool call; the next `send()` carries the result with the provider's id."""
        return self.core.add_tool_result(tool_use_id, content, is_error=is_error)

    def swap(self, model: str) -> str:
        """Switch the session's model (sticky); CapabilityError, and no change, if it can't carry history."""
        return self.core.swap(model)

    @property
    def auto_repair(self) -> bool:
        """When true, each send first repairs open tool calls (off unless asked for)."""
        return self.core.auto_repair

    @auto_repair.setter
    def auto_repair(self, value: bool) -> None:
        self.core.auto_repair = value

    def repair(self, reason: str | None = None) -> list[Message]:
        """Answer every tool call a crash left open with an interruption error, stored;
        the messages added (none when there was nothing to repair)."""
        return self.core.repair(reason)

    def fork(self, at: str) -> Self:
        """A new session of the same client and tools whose history is this one's up to and
        including message `at` (`metis.ops.fork`); this session is unchanged."""
        from ..ops.fork import fork_session

        record = fork_session(self.core.store, self.id, at=at)
        forked = copy.copy(self)
        forked.core = SessionCore(self.core.settings, record, tools=self.core.tools)
        return forked
