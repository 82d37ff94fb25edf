"""Which stored session an imported exchange belongs to: new, a continuation, or a copy.

Recorded traffic repeats itself: every request re-sends the history, and the same file
gets imported twice. `Threads` keeps the prefix keys (`metis.fingerprint.prefix_keys`) of
the sessions in play, so that an exchange whose messages are all already a stored
conversation (or the start of one) is a duplicate, and an exchange whose history starts
with a whole stored conversation continues it: only the messages past that point are new.
A stored conversation is matched through its replayable messages too (an ERROR or
CANCELLED reply left out), since a retry re-sends the history without the failed reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from metis_schema.v3 import Message, MessageStatus, Role

from ..fingerprint import KeyChain, prefix_keys


@dataclass(frozen=True)
class Placement:
    """Where an exchange's messages go: `messages[start:]` into `session_id`."""

    kind: Literal["new", "append", "duplicate"]
    session_id: str | None = None
    start: int = 0


def _replayable(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role != Role.assistant or m.metadata.status == MessageStatus.complete]


class Threads:
    """The conversations an import can match (see the module docstring)."""

    def __init__(self) -> None:
        self._prefixes: dict[str, str] = {}
        """Key of every prefix of every conversation -> its session."""
        self._tips: dict[str, str] = {}
        """Key of a whole conversation (and of its replayable messages) -> its session."""
        self._messages: dict[str, list[Message]] = {}
        self._tip_keys: dict[str, list[str]] = {}
        self._chains: dict[str, tuple[KeyChain, list[str]]] = {}
        """Session -> the key chain of its messages so far and their keys: a session that
        grows is keyed from its new messages only (an import appends one exchange at a time)."""

    def messages(self, session_id: str) -> list[Message]:
        """The messages recorded for `session_id` (a copy)."""
        return list(self._messages.get(session_id, []))

    def add(self, session_id: str, messages: Sequence[Message]) -> None:
        """Record `session_id`'s messages (all of them, as stored so far). A session that
        grew is continued only from its new end: its old tips are forgotten, so a branch
        from an earlier point becomes a session of its own, never a mixed-up one."""
        for key in self._tip_keys.pop(session_id, []):
            if self._tips.get(key) == session_id:
                del self._tips[key]
        before = self._messages.get(session_id, [])
        self._messages[session_id] = list(messages)
        keys = self._keys(session_id, before, messages)
        kept = _replayable(messages)
        # keyed again only when a reply that did not finish was left out (rarely): else the same
        replayable = keys if len(kept) == len(messages) else prefix_keys(kept)
        for key in (*keys, *replayable):  # a retry's exchange (no failed reply in it) is known too
            self._prefixes.setdefault(key, session_id)
        tips = [keys[-1]] if keys else []
        if replayable and replayable is not keys:
            tips.append(replayable[-1])
        for key in tips:
            self._tips[key] = session_id
        self._tip_keys[session_id] = tips

    def _keys(self, session_id: str, before: list[Message], messages: Sequence[Message]) -> list[str]:
        """`prefix_keys(messages)`, extending the session's chain when `messages` continue
        the ones it was keyed with (the same message objects first), else keyed anew."""
        chain, keys = self._chains.get(session_id, (None, []))
        grown = (
            chain is not None
            and len(messages) >= len(before)
            and all(a is b for a, b in zip(before, messages, strict=False))
        )
        if chain is None or not grown:
            chain, keys = KeyChain(), []
            before = []
        keys = [*keys, *chain.extend(messages[len(before) :])]
        self._chains[session_id] = (chain, keys)
        return keys

    def place(self, messages: Sequence[Message]) -> Placement:
        """Where `messages` (one exchange: the request's history and the reply) belong."""
        keys = prefix_keys(messages)
        if not keys:
            return Placement("new")
        known = self._prefixes.get(keys[-1])
        if known is not None:
            return Placement("duplicate", known)
        for i in range(len(keys) - 1, 0, -1):
            session_id = self._tips.get(keys[i - 1])
            if session_id is not None:
                return Placement("append", session_id, i)
        return Placement("new")


__all__ = ["Placement", "Threads"]
