"""Lossy projection (spec §7.3): drop what the target cannot carry, say so once, at WARN.

Not a bus event, by design: a WARN log line through stdlib logging, with the five fields
as `extra` attributes so any handler can read them (`record.session_id`, ...). A block
listed in `metadata.critical_blocks` is never dropped: the request fails instead.

Every one of the five fields is set and non-empty. `message_id` names the canonical
message the loss is in; where no message exists to name it carries a marker instead:
`REQUEST` for a loss of the request itself (an option, a tool definition, a directive),
and, at import, where the canonical message is still being made and has no id, the wire
position of the message it is read from (`messages[2]`, `contents[0]`, `input[3]`).

A block is named by its index in its message (`block_at`). A stream encoder renders a
block that arrived whole as a one-block message standing in for the reply's message
(`_kit.reply.probe`, under `standing_in`): a loss said about that stand-in names the reply's
message and the block's own index in it, not position 0 of a message that never exists.
A render whose losses another render of the same message already said (the gateway
fingerprints a reply as its client holds it, after the reply writer said what the client
does not get) runs under `said_already`: each loss is said once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from metis_schema.v3 import ContentBlock, Message, TextBlock, ToolResultBlock

from ...errors import CriticalBlockError

log = logging.getLogger("metis.adapters")

REQUEST = "request"
"""The `message_id` of a loss that belongs to the request, not to one message (see module doc)."""

WORDING = "%s %s at %s for %s (session %s): %s"
"""The one wording of every loss WARN: outcome, block type, where, adapter, session, reason
(`Losses._say`). The outcome is one of `DROPPED` (a whole block: the CLI's drop report
tells it by this first word), `LOST` (part of a message, or of the request),
`NOT_IMPORTED` (an import's, listed in `WireImport.dropped`) and `ASSUMED` (a capability
taken beyond the catalog's word: what might be lost upstream instead)."""

DROPPED = "dropped"
LOST = "lost"
NOT_IMPORTED = "not imported"
ASSUMED = "assumed"

_MESSAGE_AT = re.compile(r"^(?:messages|contents|input)\[\d+\]")
"""A wire path's first step when it is a message of the request (`messages[2]`, `input[0]`)."""


_STAND_IN: ContextVar[tuple[str, int] | None] = ContextVar("metis_loss_stand_in", default=None)
"""While a one-block message stands in for block `index` of message `id` (`standing_in`):
`(id, index)`."""


@contextmanager
def standing_in(message_id: str, index: int) -> Iterator[None]:
    """Within: a one-block message with id `message_id` is the stand-in for block `index` of
    that message, so a loss said about its block names `block #<index>` (`block_at`)."""
    token = _STAND_IN.set((message_id, index))
    try:
        yield
    finally:
        _STAND_IN.reset(token)


_SAID_ALREADY: ContextVar[bool] = ContextVar("metis_losses_said_already", default=False)
"""Whether the losses met now were said already (`said_already`)."""


@contextmanager
def said_already() -> Iterator[None]:
    """Within: no loss is logged (an import still lists what it did not take in
    `WireImport.dropped`, and a critical block still fails). For a render of what another
    render already reported on, so that each loss is said once."""
    token = _SAID_ALREADY.set(True)
    try:
        yield
    finally:
        _SAID_ALREADY.reset(token)


def block_index(message: Message, index: int) -> int:
    """The index of block `index` of `message` in the message it belongs to: itself, or the
    one a stand-in (`standing_in`) is rendered for."""
    stand_in = _STAND_IN.get()
    if stand_in is not None and stand_in[0] == message.id and len(message.content) == 1:
        return stand_in[1]
    return index


def block_at(message: Message, index: int) -> str:
    """Where block `index` of `message` is, as a loss WARN says it (`block #3 of message <id>`)."""
    return f"block #{block_index(message, index)} of message {message.id}"


def is_critical(message: Message, index: int) -> bool:
    """Whether block `index` of `message` is marked critical."""
    critical = message.metadata.critical_blocks
    return critical is not None and index in critical


class Losses:
    """The one §7.3 loss reporter of an adapter at work on one session's request or reply.

    Every loss an adapter meets goes through one of its methods, which all log the one
    wording (`WORDING`) with the five fields as `extra`:

    - `block`: a whole block dropped (or `CriticalBlockError` for a critical one);
    - `lost`: part of a message lost (a field, a cache point, a wire part with no canonical
      type); no message id (None) means the request's own loss (`REQUEST`);
    - `request`: a loss of the request itself (an option, a tool definition, a directive);
    - `imported`: what a request import cannot carry, also kept in `WireImport.dropped`;
    - `citations`, `cache_points`: the per-message and per-request summaries of those;
    - `assumed`: no loss, but its risk: a block sent although the catalog says the target
      does not take it, on the evidence of `message` (said with the same fields).

    `session_id` is the session of the request or reply; a loss inside a given message
    names that message's own session. `dropped` is what `imported` listed: an importer
    hands it on as `WireImport.dropped`.
    """

    __slots__ = ("adapter", "dropped", "session_id")

    def __init__(self, adapter: str, session_id: str | None) -> None:
        self.adapter = adapter
        self.session_id = session_id
        self.dropped: list[dict[str, Any]] = []

    def block(self, message: Message, index: int, block_type: str, reason: str) -> None:
        """Drop block `index` of `message` with one WARN, or raise if it is critical."""
        if is_critical(message, index):
            where = block_index(message, index)
            raise CriticalBlockError(
                f"{self.adapter} cannot carry critical {block_type} block #{where}: {reason}",
                provider=self.adapter,
                message_id=message.id,
                path=f"content[{where}]",
                hint="route to a model that supports it, or unmark the block as critical",
            )
        self._say(DROPPED, message, block_type, reason, at=block_at(message, index))

    def lost(
        self,
        message: Message | str | None,
        block_type: str,
        reason: str,
        *,
        at: str | None = None,
        whole: bool = False,
    ) -> None:
        """Part of `message` (a message, or the id of one being made) lost: a field, a
        marker, a wire part with no canonical form, or (`whole`) a whole thing no index
        names (a block inside a tool result, a message's opaque blocks). `at` says where
        more closely than the message; no message (None) is the request's own loss."""
        self._say(DROPPED if whole else LOST, message or REQUEST, block_type, reason, at=at)

    def request(self, block_type: str, reason: str, *, at: str | None = None, whole: bool = False) -> None:
        """A loss of the request itself, not of one message (`message_id` is `REQUEST`):
        an option, a directive, or (`whole`) a tool definition dropped."""
        self._say(DROPPED if whole else LOST, REQUEST, block_type, reason, at=at)

    def assumed(self, message: Message, block_type: str, reason: str) -> None:
        """A capability widened on the evidence of `message` (`media_admission`): the block
        type is sent where the catalog says it is not taken, with this WARN."""
        self._say(ASSUMED, message, block_type, reason)

    def imported(self, path: str, value: Any, reason: str) -> None:
        """What a request import cannot carry: kept in `dropped` (the importer's
        `WireImport.dropped`, entries `{path, value, reason}`) and said in one WARN. No
        message id yet: the message is being made, so it is named by its wire position (the
        path's first step), or `REQUEST` for a field outside the messages; the block type is
        the wire part's `type`, else the last name of its path."""
        kind = value.get("type") if isinstance(value, dict) else None
        block_type = (
            kind if isinstance(kind, str) and kind else re.sub(r"\[\d+\]$", "", path.rsplit(".", 1)[-1])
        )
        at = f"{path} (listed in WireImport.dropped)"
        self._say(NOT_IMPORTED, wire_message(path), block_type or "field", reason, at=at, path=path)
        self.dropped.append({"path": path, "value": value, "reason": reason})

    def cache_points(self, messages: Sequence[Message], reason: str) -> None:
        """One WARN for a request whose blocks hold `cache_point`s the target has no per-block
        marker for (it caches on its own, or through another API): the breakpoints are a single
        loss of the request, not one per block, so the first message holding one names it."""
        for message in messages:
            if any(_holds_cache_point(block) for block in message.content):
                self.lost(message.id, "cache_point", reason)  # the request's session: one loss of it
                return

    def citations(self, messages: Sequence[Message], reason: str) -> None:
        """One WARN per message whose text blocks hold citations the adapter has no field for
        (§7.3): the text goes, its citations do not. A message of the adapter's own making is
        not warned about: a provider whose citations are reply-only takes its own replies back
        without them by design, and makes them again."""
        for message in messages:
            if message.metadata.provider == self.adapter:
                continue
            cited = sum(len(b.citations) for b in message.content if isinstance(b, TextBlock) and b.citations)
            if cited:
                at = f"{cited} citation(s) of message {message.id}"
                self._say(DROPPED, message, "text/citations", reason, at=at)

    def _say(
        self,
        outcome: str,
        message: Message | str,
        block_type: str,
        reason: str,
        *,
        at: str | None = None,
        path: str | None = None,
    ) -> None:
        """The one WARN line (`WORDING`) with the five §7.3 fields (and an import's `path`):
        a loss in `message` names its session, one in a message being made (or `REQUEST`)
        the reporter's."""
        if _SAID_ALREADY.get():
            return
        session_id, message_id = (
            (message.session_id, message.id) if isinstance(message, Message) else (self.session_id, message)
        )
        fields: dict[str, Any] = {
            "session_id": session_id,
            "message_id": message_id,
            "block_type": block_type,
            "adapter": self.adapter,
            "reason": reason,
        }
        if path is not None:
            fields["path"] = path
        where = at or ("the request" if message_id == REQUEST else f"message {message_id}")
        log.warning(WORDING, outcome, block_type, where, self.adapter, session_id, reason, extra=fields)


def _holds_cache_point(block: ContentBlock) -> bool:
    if block.cache_point is not None:
        return True
    return isinstance(block, ToolResultBlock) and any(p.cache_point is not None for p in block.content)


def wire_message(path: str) -> str:
    """The `message_id` of a loss at wire `path` before its canonical message exists: the
    wire position of the message (`input[3]`), or `REQUEST` for a field outside them."""
    where = _MESSAGE_AT.match(path)
    return where.group(0) if where else REQUEST


__all__ = [
    "ASSUMED",
    "DROPPED",
    "LOST",
    "NOT_IMPORTED",
    "REQUEST",
    "WORDING",
    "Losses",
    "block_at",
    "block_index",
    "is_critical",
    "log",
    "said_already",
    "standing_in",
    "wire_message",
]
