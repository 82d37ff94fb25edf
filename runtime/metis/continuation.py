"""A request that continues a provider-held response: the one rule that finds the history
it stands for in the store, used by the client and the gateway alike.

A Responses request may name its earlier turns instead of sending them
(`previous_response_id`). The importer records that name (`MessageMetadata.continues`);
nothing of the history is invented. When the request is written for a provider that
cannot look the id up (another provider, or a request that must stand alone: `store:
false`), the history has to come from the store:

- `find_response`: the stored ASSISTANT message a response id names: a reply this metis
  issued itself (the gateway's `resp_<message id>`), else a stored reply of the
  provider whose own id it is (its adapter reads that from what it kept:
  `REPLY_IDS`);
- `history_before`: that message's conversation up to and including it;
- `resolve`: the messages a send writes, with that history in front of the first
  continued message and the continued tool results linked to the calls it made.

Only the gateway writes the history at the wire (it continues the stored session
itself); the client writes it into the messages it sends, never into the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from metis_schema.v3 import Message, MessageStatus, Role, ToolResultBlock

from .adapters._kit.losses import Losses
from .adapters.responses.from_wire import reply_id as responses_reply_id
from .errors import MetisError
from .ids import ToolIdMap
from .ops import compact

REPLY_PREFIX = {"openai": "chatcmpl-", "anthropic": "msg_", "responses": "resp_"}
"""Reply id prefix per wire format of a reply this metis wrote (the gateway); the rest is
the stored message's id, so a reply can be found again (`find_response`)."""

REPLY_IDS: Mapping[str, Callable[[Message], str | None]] = {"responses": responses_reply_id}
"""Provider -> the id it gave a stored reply of its own (read by that provider's adapter
from what it kept); the providers whose requests can name an earlier response."""


class ContinuationStore(Protocol):
    """What the rule reads of a store (`metis.store.Store`; `list_sessions`, when the store
    has it, widens the search beyond the continuing session)."""

    def get_message(self, message_id: str) -> Message: ...

    def load_session(self, session_id: str) -> Sequence[Message]: ...

    def load_tool_ids(self, session_id: str) -> ToolIdMap: ...


def find_response(
    store: ContinuationStore,
    response_id: str,
    *,
    provider: str = "responses",
    first: str | None = None,
    provider_ids: bool = True,
) -> Message | None:
    """The stored ASSISTANT message `response_id` names (see the module doc), or None.

    A provider's own id is looked for in session `first` (the continuing session, where a
    reply is most often kept), then in every other stored session, in order; not at all
    with `provider_ids=False` (the gateway: its clients only ever see its own reply ids,
    and a wrong one must not cost a walk through the store)."""
    prefix = REPLY_PREFIX.get(provider)
    if prefix is not None and response_id.startswith(prefix):
        try:
            message = store.get_message(response_id.removeprefix(prefix))
        except MetisError:
            message = None
        if message is not None and message.role is Role.assistant:
            return message
    read_id = REPLY_IDS.get(provider)
    if read_id is None or not provider_ids:
        return None
    listed = getattr(store, "list_sessions", None)
    sessions = [str(s.id) for s in listed()] if callable(listed) else []
    ordered = ([first] if first is not None else []) + [s for s in sessions if s != first]
    for session_id in ordered:
        try:
            messages = store.load_session(session_id)
        except MetisError:
            continue
        for message in messages:
            ours = message.role is Role.assistant and message.metadata.provider == provider
            if ours and read_id(message) == response_id:
                return message
    return None


def resolved_to(messages: Sequence[Message], found: Message) -> list[Message]:
    """`messages` with each continuation naming `found`'s response resolved to it
    (`Continuation.message_id`): the stored reply the id stands for, when an import finds it."""
    own = {REPLY_PREFIX.get(found.metadata.provider or "", "\0") + found.id}
    read_id = REPLY_IDS.get(found.metadata.provider or "")
    if read_id is not None and (response_id := read_id(found)) is not None:
        own.add(response_id)
    out: list[Message] = []
    for message in messages:
        named = message.metadata.continues
        if named is None or named.message_id is not None or named.response_id not in own:
            out.append(message)
            continue
        continues = named.model_copy(update={"message_id": found.id})
        metadata = message.metadata.model_copy(update={"continues": continues})
        out.append(message.model_copy(update={"metadata": metadata}))
    return out


def history_before(store: ContinuationStore, message: Message) -> list[Message]:
    """`message`'s conversation up to and including it, as a send replays it: its
    session's messages without replies that did not finish, each compaction's summary in
    place of the turns it covers (`ops.compact.project`)."""
    out: list[Message] = []
    for stored in store.load_session(message.session_id):
        if stored.role is not Role.assistant or stored.metadata.status is MessageStatus.complete:
            out.append(stored)
        if stored.id == message.id:
            break
    return compact.project(out)


def needs_history(continues_provider: str, target_provider: str, provider_options: Mapping[str, Any]) -> bool:
    """Whether a request for `target_provider` must carry the continued history itself:
    the target is not the provider holding it, or the request stands alone (`store:
    false` in its options)."""
    if target_provider != continues_provider:
        return True
    own = provider_options.get(target_provider)
    return isinstance(own, Mapping) and own.get("store") is False


def resolve(
    store: ContinuationStore,
    messages: Sequence[Message],
    *,
    target_provider: str,
    tool_ids: ToolIdMap,
    provider_options: Mapping[str, Any],
) -> tuple[list[Message], dict[str, Any]]:
    """The messages to write for `target_provider` and the provider options to send.

    When a message names a continued response (`metadata.continues`) and the target must
    carry that history (`needs_history`), the stored history is put in front of the first
    such message, each continued tool result answers the canonical id of the stored call
    it answers (the provider's call id, looked up in both sessions' maps), and the
    continued provider's `previous_response_id` option is left out (the history stands in
    its place). Otherwise, and when the store does not hold that history, the provider
    that holds it is sent its id (`previous_response_id` from the reference when the
    options do not give it); any other provider gets the messages as they are, with one
    WARN carrying the five fields."""
    options = dict(provider_options)
    at = next((i for i, m in enumerate(messages) if m.metadata.continues is not None), None)
    if at is None:
        return list(messages), options
    continues = messages[at].metadata.continues
    assert continues is not None
    own = options.get(continues.provider)
    own = dict(own) if isinstance(own, Mapping) else {}
    found = None
    if needs_history(continues.provider, target_provider, options):
        found = find_response(
            store, continues.response_id, provider=continues.provider, first=messages[at].session_id
        )
    if found is not None:
        own.pop("previous_response_id", None)
        if own or continues.provider in options:
            options[continues.provider] = own
        history = history_before(store, found)
        linked = _linker(store, found.session_id, continues.provider, tool_ids)
        return [*messages[:at], *history, *(linked(m) for m in messages[at:])], options
    if target_provider == continues.provider:
        options[continues.provider] = {"previous_response_id": continues.response_id, **own}
        return list(messages), options
    Losses(target_provider, messages[at].session_id).lost(
        messages[at].id,
        "continuation",
        f"the history of {continues.provider} response {continues.response_id} is not stored",
    )
    return list(messages), options


def linked(
    store: ContinuationStore, messages: Sequence[Message], found: Message, tool_ids: ToolIdMap
) -> list[Message]:
    """`messages` (read under `tool_ids`) with their continued tool results answering the
    calls of `found`'s session by the same provider id: the conversation as it reads after
    the stored reply."""
    provider = found.metadata.provider or ""
    link = _linker(store, found.session_id, provider, tool_ids)
    return [link(m) for m in messages]


def _linker(
    store: ContinuationStore, held_in: str, provider: str, tool_ids: ToolIdMap
) -> Callable[[Message], Message]:
    """Continued TOOL messages -> copies answering the stored call with the same provider id."""
    stored_ids = store.load_tool_ids(held_in)
    by_call = {provider_id: canonical for canonical, provider_id in stored_ids.issued_by(provider).items()}

    def link(message: Message) -> Message:
        if message.metadata.continues is None or message.role is not Role.tool:
            return message
        block = message.content[0]
        if not isinstance(block, ToolResultBlock):
            return message
        call_id = tool_ids.provider_id(block.tool_use_id, provider)
        stored = by_call.get(call_id) if call_id is not None else None
        if stored is None or stored == block.tool_use_id:
            return message
        content = [block.model_copy(update={"tool_use_id": stored})]
        metadata = message.metadata.model_copy(update={"parent_tool_use_id": stored})
        return message.model_copy(update={"content": content, "metadata": metadata})

    return link


__all__ = [
    "REPLY_IDS",
    "REPLY_PREFIX",
    "ContinuationStore",
    "find_response",
    "history_before",
    "linked",
    "needs_history",
    "resolve",
    "resolved_to",
]
