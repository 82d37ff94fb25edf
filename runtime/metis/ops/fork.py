"""Branch: a new session that continues from an earlier message of another.

The fork holds copies of the parent's messages up to and including the fork point, under
new ids: message ids and canonical tool ids are keys of the whole store (spec §5.2.2:
tool ids never cross sessions), so each copy gets a fresh message id and each tool call a
fresh `tu_` id, its result and `parent_tool_use_id` renamed with it (and a compaction's
`through` follows the message it names). The parent's tool id
map entries for those calls come along, bound to the new ids, so a provider is sent the
same provider ids it issued and replay stays byte-for-byte what the parent would send.

The settings the copied history was sent with come along too: the parent's settings
revisions (tool sets and request options) up to the one in force at the fork point — the
revision the parent's next exchange after it was sent with, else the parent's latest —
under their own numbers, and the revision of each copied reply, under its new id. A
resumed fork sends the tools the parent would have sent from there.

Where the fork came from is stored with it: the sessions table's `parent_session_id`
and `fork_message_id` (`fork_origin` reads them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from metis_schema.v3 import (
    CompactionBlock,
    ContentBlock,
    ExchangeSettings,
    Message,
    SettingsRevision,
    ToolResultBlock,
    ToolUseBlock,
)

from ..errors import MessageNotFoundError
from ..ids import ToolIdEntry, ToolIdMap, new_message_id, new_tool_id
from ..protocols import SessionRecord, SessionStore
from . import compact


class ForkedRow(Protocol):
    """Where a stored session was forked from (`metis.store.SessionInfo` has it)."""

    @property
    def parent_session_id(self) -> str | None: ...

    @property
    def fork_message_id(self) -> str | None: ...


@dataclass(frozen=True)
class ForkOrigin:
    """Where a forked session branched off: the parent session and the message it kept last."""

    session_id: str
    message_id: str


def fork_origin(session: ForkedRow) -> ForkOrigin | None:
    """The origin of a forked session; None for a session that was not forked."""
    parent, message = session.parent_session_id, session.fork_message_id
    return None if parent is None or message is None else ForkOrigin(parent, message)


def moved(
    message: Message,
    session_id: str,
    tool_ids: Mapping[str, str],
    *,
    message_ids: Mapping[str, str] | None = None,
) -> Message:
    """`message` as a message of `session_id`, each tool id it names that `tool_ids` renames
    renamed: its calls, the calls its results answer, its `parent_tool_use_id`, and the ids
    an adapter's own data keys by call (`provider_raw`: Chat Completions keeps a call's raw
    argument text under its canonical id, which a replay sends byte for byte). With
    `message_ids`, its own id and the message a compaction names are renamed too.

    The one renaming of a message's ids: a fork's copies (`copy_messages`) and the gateway's
    re-keyed imports and branched exchanges (`gateway.writes`) use it alike."""
    content = [_renamed(block, tool_ids, message_ids or {}) for block in message.content]
    metadata = message.metadata
    update: dict[str, Any] = {}
    parent = metadata.parent_tool_use_id
    if parent is not None and parent in tool_ids:
        update["parent_tool_use_id"] = tool_ids[parent]
    if metadata.provider_raw:
        update["provider_raw"] = _renamed_raw(metadata.provider_raw, tool_ids)
    if update:
        metadata = metadata.model_copy(update=update)
    changes: dict[str, Any] = {"session_id": session_id, "content": content, "metadata": metadata}
    if message_ids is not None:
        changes["id"] = message_ids.get(message.id, message.id)
    return message.model_copy(update=changes)


def _renamed(
    block: ContentBlock, tool_ids: Mapping[str, str], message_ids: Mapping[str, str]
) -> ContentBlock:
    if isinstance(block, ToolUseBlock) and block.id in tool_ids:
        return block.model_copy(update={"id": tool_ids[block.id]})
    if isinstance(block, ToolResultBlock) and block.tool_use_id in tool_ids:
        return block.model_copy(update={"tool_use_id": tool_ids[block.tool_use_id]})
    if isinstance(block, CompactionBlock) and message_ids:  # names the last message it covers
        return compact.renamed(block, message_ids)
    return block


def _renamed_raw(value: Any, renamed: Mapping[str, str]) -> Any:
    """JSON `value` with each key and string that is a renamed id renamed (a canonical
    `tu_<ulid>` id is never anything else's text)."""
    if isinstance(value, str):
        return renamed.get(value, value)
    if isinstance(value, dict):
        return {renamed.get(k, k): _renamed_raw(v, renamed) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed_raw(v, renamed) for v in value]
    return value


def copy_messages(messages: Sequence[Message], session_id: str) -> tuple[list[Message], dict[str, str]]:
    """`messages` as messages of `session_id`, under new message and tool ids; also the
    old -> new tool id mapping."""
    tool_ids = {
        block.id: new_tool_id()
        for message in messages
        for block in message.content
        if isinstance(block, ToolUseBlock)
    }
    message_ids = {message.id: new_message_id() for message in messages}
    copies = [moved(message, session_id, tool_ids, message_ids=message_ids) for message in messages]
    return copies, tool_ids


def carried_tool_ids(parent: ToolIdMap, renamed: Mapping[str, str], session_id: str) -> ToolIdMap:
    """The fork's tool id map: the parent's entries for the copied calls, under their new ids."""
    entries = [
        ToolIdEntry(renamed[e.canonical], e.provider, e.provider_id, e.origin)
        for e in parent
        if e.canonical in renamed
    ]
    return ToolIdMap(session_id, entries)


def carried_settings(
    store: SessionStore, session_id: str, history: Sequence[Message], copies: Sequence[Message], fork_id: str
) -> tuple[list[SettingsRevision], list[ExchangeSettings]]:
    """The fork's settings revisions and exchange rows (see module doc): `copies` are the
    fork's copies of the first messages of the parent's `history`, in order."""
    revisions = store.settings_revisions(session_id)
    if not revisions:
        return [], []
    sent_with = {e.message_id: e.revision for e in store.exchange_settings(session_id)}
    later = [sent_with[m.id] for m in history[len(copies) :] if m.id in sent_with]
    upto = later[0] if later else revisions[-1].revision
    kept = [r.model_copy(update={"session_id": fork_id}) for r in revisions if r.revision <= upto]
    exchanges = [
        ExchangeSettings(session_id=fork_id, message_id=copy.id, revision=sent_with[old.id])
        for old, copy in zip(history, copies, strict=False)
        if old.id in sent_with
    ]
    return kept, exchanges


@dataclass(frozen=True)
class Fork:
    """A fork as `fork_into` made it."""

    session: SessionRecord
    renamed: dict[str, str]
    """Each copied tool call's id in the parent -> its copy's id in the fork."""


def fork_session(
    store: SessionStore, session_id: str, *, at: str, new_session_id: str | None = None
) -> SessionRecord:
    """A new session holding `session_id`'s history up to and including message `at`
    (`fork_into`)."""
    return fork_into(store, session_id, at=at, new_session_id=new_session_id).session


def fork_into(store: SessionStore, session_id: str, *, at: str, new_session_id: str | None = None) -> Fork:
    """A new session holding `session_id`'s history up to and including message `at`, and
    how its copies renamed the calls (a writer moving more of the parent's turns into the
    fork renames them alike: the gateway's branched exchanges, `gateway.writes`).

    The fork keeps the parent's workspace, model and routing policy, plus its origin
    (`fork_origin`). MessageNotFoundError, and nothing created, when `at` is not a
    stored message of the session (a PARTIAL checkpoint is not: it may still change).
    """
    parent = store.get_session(session_id)
    history = list(store.load_session(session_id))
    cut = next((i for i, message in enumerate(history) if message.id == at), None)
    if cut is None:
        raise MessageNotFoundError(
            f"session {session_id!r} has no message {at!r} to fork at",
            message_id=at,
            hint="`metis show SESSION` lists its messages",
        )
    fork = store.create_session(
        parent.workspace_path,
        active_model=parent.active_model,
        routing_policy=parent.routing_policy,
        session_id=new_session_id,
        parent_session_id=session_id,
        fork_message_id=at,
    )
    copies, renamed = copy_messages(history[: cut + 1], fork.id)
    store.append_many(copies, tool_ids=carried_tool_ids(store.load_tool_ids(session_id), renamed, fork.id))
    store.put_settings(*carried_settings(store, session_id, history, copies, fork.id))
    return Fork(fork, renamed)


__all__ = [
    "Fork",
    "ForkOrigin",
    "ForkedRow",
    "carried_settings",
    "carried_tool_ids",
    "copy_messages",
    "fork_into",
    "fork_origin",
    "fork_session",
    "moved",
]
