"""Conversation fingerprints: is this history the one already stored, or its continuation?

A client re-sends the whole history with every request, so recorded traffic holds the
same conversation many times over, each request one turn longer. `message_hash` cannot
tell that two copies are the same conversation: it also covers message ids and times,
which every import mints anew, and tool call ids, which are canonical per session. A
fingerprint covers only what the conversation *says*: each message's role and content,
with tool call ids replaced by their order of first appearance in the conversation and
cache points (a client's hint, moved to the newest turn on every request) left out. A
message that did not finish (ERROR, CANCELLED) is marked so, and never equals the
complete one a retry brings.

`prefix_keys` chains the fingerprints, one key per prefix of the conversation, so "does
this history start with that stored one?" is one dict lookup per message. Used by
`metis import`; meant for any writer that meets re-sent histories (a gateway).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from metis_schema.v3 import Message, MessageStatus

from . import _json

_ID_KEYS = {
    "tool_use": "id",
    "server_tool_use": "id",
    "tool_result": "tool_use_id",
    "server_tool_result": "tool_use_id",
}
"""Block type -> the key holding a tool call id (numbered by first appearance)."""
_LEFT_OUT = frozenset({"cache_point"})
"""Block keys that do not change what a message says."""


class _Ordinals:
    """Tool call id -> `#n`, its order of first appearance in one conversation."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, tool_id: Any) -> str:
        key = str(tool_id)
        return self.seen.setdefault(key, f"#{len(self.seen)}")


def _block(block: dict[str, Any], ordinals: _Ordinals) -> dict[str, Any]:
    out = {k: v for k, v in block.items() if k not in _LEFT_OUT}
    id_key = _ID_KEYS.get(str(out.get("type")))
    if id_key is not None and id_key in out:
        out[id_key] = ordinals(out[id_key])
    content = out.get("content")
    if isinstance(content, list):  # a tool result's blocks
        out["content"] = [_block(b, ordinals) if isinstance(b, dict) else b for b in content]
    return out


def _fingerprint(message: Message, ordinals: _Ordinals) -> str:
    status = message.metadata.status
    blocks = [_block(b.model_dump(mode="json", exclude_none=True), ordinals) for b in message.content]
    head = str(message.role.value)
    if status is not None and status != MessageStatus.complete:
        head += f"/{status.value}"
    data = _json.write([head, blocks], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()


class KeyChain:
    """`prefix_keys` of a conversation that grows: `extend` with the next messages returns
    their keys, continuing from the ones before (the chained digest and the tool call
    numbering), so a writer that keyed a history keys its next turn without going over
    the history again (the gateway keys a reply so)."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()
        self._ordinals = _Ordinals()

    def extend(self, messages: Iterable[Message]) -> list[str]:
        """The keys of the conversation after each of `messages`, appended in order."""
        keys: list[str] = []
        digest, ordinals = self._digest, self._ordinals
        for message in messages:
            digest.update(_fingerprint(message, ordinals).encode("ascii"))
            keys.append(digest.copy().hexdigest())
        return keys


def prefix_keys(messages: Sequence[Message]) -> list[str]:
    """`keys[i]` names the conversation `messages[: i + 1]`: equal keys, equal conversations."""
    return KeyChain().extend(messages)


__all__ = ["KeyChain", "prefix_keys"]
