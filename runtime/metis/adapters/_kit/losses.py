"""Lossy projection (spec §7.3): drop what the target cannot carry, say so once, at WARN.

Not a bus event, by design: a WARN log line through stdlib logging, with the five fields
as `extra` attributes so any handler can read them (`record.session_id`, ...). A block
listed in `metadata.critical_blocks` is never dropped: the request fails instead.

Every one of the five fields is set and non-empty. `message_id` names the canonical
message the loss is in; where no message exists to name it carries a marker instead:
`REQUEST` for a loss of the request itself (an option, a tool definition, a directive),
and, at import, where the canonical message is still being made and has no id, the wire
position of the message it is read from (`messages[2]`, `contents[0]`, `input[3]`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from metis_schema.v3 import ContentBlock, Message, TextBlock, ToolResultBlock

from ...errors import CriticalBlockError

log = logging.getLogger("metis.adapters")

REQUEST = "request"
"""The `message_id` of a loss that belongs to the request, not to one message (see module doc)."""

_MESSAGE_AT = re.compile(r"^(?:messages|contents|input)\[\d+\]")
"""A wire path's first step when it is a message of the request (`messages[2]`, `input[0]`)."""


def is_critical(message: Message, index: int) -> bool:
    """Whether block `index` of `message` is marked critical."""
    critical = message.metadata.critical_blocks
    return critical is not None and index in critical


def drop_block(*, adapter: str, message: Message, index: int, block_type: str, reason: str) -> None:
    """Drop block `index` of `message` with one WARN line, or raise if it is critical."""
    if is_critical(message, index):
        raise CriticalBlockError(
            f"{adapter} cannot carry critical {block_type} block #{index}: {reason}",
            provider=adapter,
            message_id=message.id,
            path=f"content[{index}]",
            hint="route to a model that supports it, or unmark the block as critical",
        )
    warn_loss(
        adapter=adapter,
        session_id=message.session_id,
        message_id=message.id,
        block_type=block_type,
        reason=reason,
        text=f"dropped {block_type} block from message {message.id} for {adapter}: {reason}",
    )


def warn_loss(
    *, adapter: str, session_id: str, message_id: str | None, block_type: str, reason: str, text: str
) -> None:
    """The one WARN line of a lossy projection (§7.3), with its five fields as `extra`:
    for whole dropped blocks (`drop_block`) and for losses that drop no block (a field a
    provider cannot carry, wire blocks with no canonical type). A loss with no message
    (`message_id` None) is the request's own: `REQUEST`."""
    log.warning(
        "%s",
        text,
        extra={
            "session_id": session_id,
            "message_id": message_id or REQUEST,
            "block_type": block_type,
            "adapter": adapter,
            "reason": reason,
        },
    )


def warn_cache_points(*, adapter: str, messages: Sequence[Message], session_id: str, reason: str) -> None:
    """One WARN for a request whose blocks hold `cache_point`s the target has no per-block
    marker for (it caches on its own, or through another API): the breakpoints are a single
    loss of the request, not one per block, so the first message holding one names it."""
    for message in messages:
        if any(_holds_cache_point(block) for block in message.content):
            warn_loss(
                adapter=adapter,
                session_id=session_id,
                message_id=message.id,
                block_type="cache_point",
                reason=reason,
                text=f"{adapter}: cache_point not sent: {reason}",
            )
            return


def warn_citations(*, adapter: str, messages: Sequence[Message], reason: str) -> None:
    """One WARN per message whose text blocks hold citations `adapter` has no field for
    (§7.3): the text goes, its citations do not. A message of `adapter`'s own making is
    not warned about: a provider whose citations are reply-only takes its own replies back
    without them by design, and makes them again."""
    for message in messages:
        if message.metadata.provider == adapter:
            continue
        cited = sum(len(b.citations) for b in message.content if isinstance(b, TextBlock) and b.citations)
        if cited:
            warn_loss(
                adapter=adapter,
                session_id=message.session_id,
                message_id=message.id,
                block_type="text/citations",
                reason=reason,
                text=f"dropped {cited} citation(s) of message {message.id} for {adapter}: {reason}",
            )


def _holds_cache_point(block: ContentBlock) -> bool:
    if block.cache_point is not None:
        return True
    return isinstance(block, ToolResultBlock) and any(p.cache_point is not None for p in block.content)


def wire_message(path: str) -> str:
    """The `message_id` of a loss at wire `path` before its canonical message exists: the
    wire position of the message (`input[3]`), or `REQUEST` for a field outside them."""
    where = _MESSAGE_AT.match(path)
    return where.group(0) if where else REQUEST


def import_drop(
    dropped: list[dict[str, Any]], *, adapter: str, session_id: str | None, path: str, value: Any, reason: str
) -> None:
    """What a request import cannot carry: kept in `dropped` (the importer's
    `WireImport.dropped`, entries `{path, value, reason}`) and said in one WARN with the five
    §7.3 fields (no message id yet: the message is being made, so it is named by its wire
    position, the path's first step, or `REQUEST` for a field outside the messages; the block
    type is the wire part's `type`, else the last name of its path) and the path."""
    kind = value.get("type") if isinstance(value, dict) else None
    block_type = kind if isinstance(kind, str) and kind else re.sub(r"\[\d+\]$", "", path.rsplit(".", 1)[-1])
    log.warning(
        "%s import: dropped %s: %s; listed in WireImport.dropped",
        adapter,
        path,
        reason,
        extra={
            "adapter": adapter,
            "session_id": session_id,
            "message_id": wire_message(path),
            "block_type": block_type or "field",
            "path": path,
            "reason": reason,
        },
    )
    dropped.append({"path": path, "value": value, "reason": reason})


__all__ = [
    "REQUEST",
    "drop_block",
    "import_drop",
    "is_critical",
    "log",
    "warn_cache_points",
    "warn_citations",
    "warn_loss",
    "wire_message",
]
