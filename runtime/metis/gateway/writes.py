"""One gateway exchange's store work: gathered while the exchange runs, committed once.

An exchange writes several things: a new session (or a fork), the request's new turns,
the settings revision the request was sent with, the reply, the tool ids, the
conversation's tip, a `store: false` mark. Each of them is a Store write of its own when
the metis client makes it; the gateway gives each exchange's session an `ExchangeWrites`
as its store instead, so those writes are queued, in order, and committed by `commit`,
in one transaction (`Store.atomically`), in a worker thread, once the reply is there.
Nothing the exchange stores is half-written, and the event loop never waits on the
database for a write.

Reads go to the store, with the exchange's queued writes laid over them (the session
made, the turns appended), so the client's send reads what it would have read had each
write committed at once. The gateway makes the exchange's first reads in a worker thread
(`exchange.Exchanges.prepare`); the session read then is kept, so the send's reads on the
event loop are answered from it. A message queued for appending is checked first, against that
view, by the rules the store checks at commit (`metis.invariants`), so a request that
breaks them is refused before anything goes upstream, as before.

A stateless continuation is recognized from the conversation's tip stored before; when
another request (of this process or another) continued the same tip first, the commit
finds it, under the session's write lock, and stores this exchange in a fork of the
session at that tip instead (`gate`, `_branch`): concurrent continuations branch apart,
none mixes into another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import (
    ExchangeSettings,
    Message,
    MessageStatus,
    SettingsRevision,
    ToolResultBlock,
    ToolUseBlock,
)

from ..errors import InvariantError, MessageNotFoundError, StoreError
from ..ids import ToolIdMap, new_session_id
from ..invariants import check_links, check_message
from ..ops.compact import replayable
from ..ops.fork import fork_into, moved
from ..store import SessionInfo, Store

Op = tuple[str, tuple[Any, ...], dict[str, Any]]
"""A queued write: the Store method's name and its arguments."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _queued(
    method: Callable[Concatenate[Store, _P], _R], result: _R
) -> Callable[Concatenate[ExchangeWrites, _P], _R]:
    """`ExchangeWrites`' form of a Store write that nothing reads back before the commit:
    queued as it is called, under the Store method's own signature (stated once, by the
    store); `result` stands for what the store would return."""
    name = method.__name__

    def queue(self: ExchangeWrites, /, *args: _P.args, **kw: _P.kwargs) -> _R:
        self._queue(name, args, kw)
        return result

    queue.__name__ = queue.__qualname__ = name
    queue.__doc__ = f"`Store.{name}`, queued (committed with the exchange)."
    return queue


class ExchangeWrites:
    """A SessionStore over `store` that queues one exchange's writes (see module doc)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ops: list[Op] = []
        self.gate: tuple[str, str] | None = None
        """(session id, message id): the exchange continues the stored session after that
        message, which must still be the last one a provider is sent when it commits (else:
        a fork). A session the exchange makes itself has no other writer."""
        self._created: dict[str, SessionInfo] = {}
        self._messages: dict[str, dict[str, Message]] = {}
        """Session -> its queued messages by id, in order (a finalized one replaces its checkpoint)."""
        self._maps: dict[str, ToolIdMap] = {}
        self._revisions: dict[str, list[SettingsRevision]] = {}
        self._exchanges: dict[str, list[ExchangeSettings]] = {}
        self._read: dict[str, list[Message]] = {}
        """Session -> its stored messages, as first read by the exchange."""
        self._links: dict[str, tuple[dict[str, str], set[str]]] = {}
        """Session -> (tool_use id -> session, answered ids), as queued (`_refuse_broken`)."""

    def __getattr__(self, name: str) -> Any:
        """Every other read is the store's (a write not queued here is refused, not run)."""
        if name in _UNQUEUED:
            raise StoreError(f"{name} is not part of a gateway exchange's writes")
        return getattr(self.store, name)

    # --- reads, with the queued writes laid over ------------------------------------------------

    def get_session(self, session_id: str) -> SessionInfo:
        made = self._created.get(session_id)
        return made if made is not None else self.store.get_session(session_id)

    def load_session(
        self, session_id: str, *, include_partial: bool = True, after: str | None = None
    ) -> list[Message]:
        """The session as stored when the exchange first read it (one read per exchange: its
        readers are the gateway, the client's send and the checks, moments apart; the commit
        checks again), with the exchange's queued messages laid over."""
        queued = self._messages.get(session_id, {})
        if after is not None and after in queued:
            ids = list(queued)
            out = list(queued.values())[ids.index(after) + 1 :]
        else:
            stored = self._stored_part(session_id, after)
            out = [queued.get(m.id, m) for m in stored]
            held = {m.id for m in stored}
            out += [m for mid, m in queued.items() if mid not in held]
        if include_partial:
            return out
        return [m for m in out if m.metadata.status is not MessageStatus.partial]

    def _stored_part(self, session_id: str, after: str | None) -> list[Message]:
        if session_id in self._created:
            return []
        read = self._read.get(session_id)
        if read is None:
            if after is not None:
                return list(self.store.load_session(session_id, after=after))
            read = self._read[session_id] = list(self.store.load_session(session_id))
        if after is None:
            return read
        ids = [m.id for m in read]
        if after not in ids:
            return list(self.store.load_session(session_id, after=after))
        return read[ids.index(after) + 1 :]

    def get_message(self, message_id: str) -> Message:
        for queued in self._messages.values():
            if message_id in queued:
                return queued[message_id]
        return self.store.get_message(message_id)

    def load_tool_ids(self, session_id: str) -> ToolIdMap:
        saved = self._maps.get(session_id)
        if saved is not None:
            return ToolIdMap(session_id, list(saved))
        return ToolIdMap(session_id) if session_id in self._created else self.store.load_tool_ids(session_id)

    def settings(self, session_id: str, revision: int | None = None) -> SettingsRevision | None:
        if session_id not in self._created:
            return self.store.settings(session_id, revision)
        kept = [r for r in self._revisions.get(session_id, []) if revision in {None, r.revision}]
        return kept[-1] if kept else None

    def settings_revisions(self, session_id: str) -> list[SettingsRevision]:
        if session_id not in self._created:
            return self.store.settings_revisions(session_id)
        return list(self._revisions.get(session_id, []))

    def exchange_settings(self, session_id: str) -> list[ExchangeSettings]:
        if session_id not in self._created:
            return self.store.exchange_settings(session_id)
        return list(self._exchanges.get(session_id, []))

    # --- writes, queued ---------------------------------------------------------------------------

    def create_session(self, workspace_path: str, **kw: Any) -> SessionInfo:
        session_id = kw.pop("session_id", None) or new_session_id()
        now = datetime.now(UTC)
        made = SessionInfo(
            id=session_id,
            workspace_path=str(workspace_path),
            active_model=kw.get("active_model"),
            routing_policy=kw.get("routing_policy"),
            schema_version=CURRENT_VERSION,
            created_at=now,
            updated_at=now,
            title=kw.get("title"),
            source=kw.get("source"),
            parent_session_id=kw.get("parent_session_id"),
            fork_message_id=kw.get("fork_message_id"),
        )
        self._created[session_id] = made
        self._queue("create_session", (workspace_path,), {**kw, "session_id": session_id})
        return made

    def append(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        self.append_many([message], tool_ids=tool_ids)

    def append_many(self, messages: Iterable[Message], *, tool_ids: ToolIdMap | None = None) -> None:
        batch = list(messages)
        if not batch:
            return
        self._refuse_broken(batch)
        for message in batch:
            self._messages.setdefault(message.session_id, {})[message.id] = message
        self._lay_map(tool_ids)
        self._queue("append_many", (batch,), {"tool_ids": tool_ids})

    def upsert_partial(self, message: Message) -> None:
        """A streaming reply's checkpoint: kept here only, replaced by its final form (one
        write per exchange; a gateway that dies mid-stream loses the exchange whole)."""
        self._messages.setdefault(message.session_id, {})[message.id] = message

    def finalize(self, message: Message, *, tool_ids: ToolIdMap | None = None) -> None:
        self._refuse_broken([message])
        self._messages.setdefault(message.session_id, {})[message.id] = message
        self._lay_map(tool_ids)
        self._queue("finalize", (message,), {"tool_ids": tool_ids})

    def _lay_map(self, tool_ids: ToolIdMap | None) -> None:
        """A write's tool id map (the session's whole map, which the commit saves) laid over
        the reads: a fork's, written with its copied history (`ops.fork`), is the parent's
        bindings of the copied calls, which the fork's session reads back before anything
        is committed (else it knows none of them: the ids its client was given included).
        Held, not copied: the queued write saves the map as it is at the commit too."""
        if tool_ids is not None:
            self._maps[tool_ids.session_id] = tool_ids

    def save_tool_ids(self, session_id: str, tool_ids: ToolIdMap) -> None:
        self._maps[session_id] = ToolIdMap(session_id, list(tool_ids))
        self._queue("save_tool_ids", (session_id, tool_ids), {})

    def put_settings(
        self, revisions: Sequence[SettingsRevision], exchanges: Sequence[ExchangeSettings] = ()
    ) -> int:
        for revision in revisions:
            self._revisions.setdefault(revision.session_id, []).append(revision)
        for exchange in exchanges:
            self._exchanges.setdefault(exchange.session_id, []).append(exchange)
        self._queue("put_settings", (list(revisions), list(exchanges)), {})
        return len(revisions) + len(exchanges)

    record_settings = _queued(Store.record_settings, 0)
    """Queued; the revision is numbered at commit (0 here: nothing reads it back)."""
    put_tip = _queued(Store.put_tip, None)
    withhold_reply = _queued(Store.withhold_reply, None)

    def _queue(self, name: str, args: tuple[Any, ...], kw: dict[str, Any]) -> None:
        self.ops.append((name, args, kw))

    def _refuse_broken(self, batch: Sequence[Message]) -> None:
        """InvariantError, nothing queued, when a message breaks spec §5 or its links to the
        session as queued (the checks the store makes at commit, made now: before the send)."""
        final = [m for m in batch if m.metadata.status is not MessageStatus.partial]
        if not final:
            return
        session_id = final[0].session_id
        links = self._links.get(session_id)
        if links is None:  # the session's calls, read once per exchange, then kept up to date
            links = self._links[session_id] = ({}, set())
            for message in self.load_session(session_id):
                _note_links(message, *links)
        tool_uses, answered = links
        for message in final:
            found = check_message(message) + check_links(message, tool_uses=tool_uses, answered=answered)
            if found:
                raise InvariantError(found, message_id=message.id)
            _note_links(message, tool_uses, answered)

    # --- the commit -------------------------------------------------------------------------------

    def committed(self, store: Store) -> bool:
        """Whether the exchange's last queued message is stored (a commit reported failed
        had committed after all); False when it queued none."""
        last = next(
            (m for queued in reversed(self._messages.values()) for m in reversed(queued.values())), None
        )
        if last is None:
            return False
        try:
            store.get_message(last.id)
        except MessageNotFoundError:
            return False
        return True

    def commit(self, store: Store) -> str | None:
        """Write everything queued in one transaction of `store` (see module doc); the
        session the exchange was stored in when the gate made it a fork, else None.

        The gate is checked after the queued writes, which lock the session first: when it
        finds the session continued meanwhile (the writes refused, too, when they answer the
        calls the other writer's turns answered), that transaction is rolled back, and the
        exchange is written into a fork of the session in another (one commit either way)."""
        try:
            store.atomically(self._apply)
        except _Continued as continued:
            (session_id, tip), fork = continued.gate, new_session_id()
            store.atomically(lambda joined: _run(joined, _branch(joined, self.ops, session_id, tip, fork)))
            return fork
        return None

    def _apply(self, store: Store) -> None:
        try:
            _run(store, self.ops)
        except InvariantError:
            # refused as a continuation of what another writer stored meanwhile (its turns
            # answered the calls this exchange answers too): that is the gate's case, a fork
            self._check_gate(store)
            raise
        self._check_gate(store)

    def _check_gate(self, store: Store) -> None:
        gate = self.gate
        if gate is not None and gate[0] not in self._created:
            own = set(self._messages.get(gate[0], ()))
            if _continued(store, *gate, own):
                raise _Continued(gate)


class _Continued(Exception):
    """Raised inside the commit's transaction (rolling it back) when the gate finds the
    session continued by another writer."""

    def __init__(self, gate: tuple[str, str]) -> None:
        super().__init__(gate)
        self.gate = gate


def _run(store: Store, ops: Sequence[Op]) -> None:
    for name, args, kw in ops:
        getattr(store, name)(*args, **kw)


_UNQUEUED = frozenset(
    {
        "append_planned",
        "atomically",
        "delete_session",
        "set_active_model",
        "set_title",
        "add_gateway_key",
        "revoke_gateway_key",
        "put_gateway_rows",
    }
)
"""Store writes an exchange never makes."""


def _note_links(message: Message, tool_uses: dict[str, str], answered: set[str]) -> None:
    """Add the calls `message` makes and answers (a PARTIAL checkpoint's are not made yet:
    the store keeps no calls of one, and finalizing it makes them)."""
    if message.metadata.status is MessageStatus.partial:
        return
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            tool_uses.setdefault(block.id, message.session_id)
        elif isinstance(block, ToolResultBlock):
            answered.add(block.tool_use_id)


def _continued(store: Store, session_id: str, tip: str, own: set[str]) -> bool:
    """Whether the session holds turns a provider is sent after `tip` other than the
    exchange's `own` (read inside the commit, after its writes locked the session: only
    the messages after `tip`, not the whole session)."""
    try:
        after = store.load_session(session_id, after=tip)
    except MessageNotFoundError:
        return True  # the tip is gone: the conversation is not the one continued
    return bool(replayable([m for m in after if m.id not in own]))


def _branch(store: Store, ops: Sequence[Op], session_id: str, tip: str, fork: str) -> list[Op]:
    """`ops` moved into a fork of `session_id` at `tip`, made inside the transaction: the
    exchange's messages and writes name the fork, its tool results the fork's copies of
    the calls they answer, and the fork's tool id map gains what the exchange added."""
    stored_map = store.load_tool_ids(session_id)
    renamed = fork_into(store, session_id, at=tip, new_session_id=fork).renamed
    fork_map = store.load_tool_ids(fork)
    known = set(stored_map)
    live = next(
        (v for _, args, kw in ops for v in (*args, *kw.values()) if isinstance(v, ToolIdMap)),
        None,
    )
    for entry in live or ():
        if entry not in known:
            canonical = renamed.get(entry.canonical, entry.canonical)
            fork_map.bind(canonical, entry.provider, entry.provider_id, entry.origin)

    def into_fork(value: Any) -> Any:
        if isinstance(value, str):
            return fork if value == session_id else value
        if isinstance(value, ToolIdMap):
            return fork_map if value.session_id == session_id else value
        if isinstance(value, Message):
            return moved(value, fork, renamed) if value.session_id == session_id else value
        if isinstance(value, list):
            return [into_fork(v) for v in value]
        return value

    return [
        (name, tuple(into_fork(a) for a in args), {k: into_fork(v) for k, v in kw.items()})
        for name, args, kw in ops
    ]


__all__ = ["ExchangeWrites"]
