"""Canonical message -> a provider's *reply*: the direction a gateway needs.

Adapters read replies and write requests; `metis serve` also writes replies, in the wire
format its client spoke, whatever provider answered upstream. An assistant turn in a
request and a reply's content have the same shape in every API here (Anthropic's reply
`content` is an assistant turn's `content`; a Chat reply's `choices[0].message` is an
assistant message; Responses `output` items are assistant input items), so each reply
writer renders the message through its adapter's own request writer — one path for the
blocks, their ids and what cannot be carried — and adds only the reply envelope: ids,
stop reason, usage. Streams are written from the canonical events as they arrive
(`ReplyEncoder`), closed from the assembled message, whose usage and stop reason are
final only then.

What a reply cannot carry to its client (another provider's opaque reasoning, a server
tool result the format has no item for) is dropped with the §7.3 WARN by the request
writer, exactly as a request to that provider would drop it; the stored message keeps
everything.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import Message, MessageMetadata, Role, StreamEvent

from ... import _json
from .losses import Losses

if TYPE_CHECKING:
    from .base import AdapterOptions


@dataclass(frozen=True)
class ReplyOptions:
    """What a reply writer needs beside the message.

    `options` are the request options the gateway would use to send *to* the client's
    format: `model` a model of that format's provider, `endpoint` the endpoint the reply
    came from (so opaque reasoning goes back to a client of the same endpoint only),
    `tool_ids` the session's map (each canonical call id leaves under the id this format's
    client will send back). `model_name` is echoed as the reply's `model` (what the client
    asked for); `reply_id` is the reply's own id (the gateway derives it from the stored
    message id, so `GET /v1/responses/{id}` finds it); `created` is Unix seconds;
    `producer` is the provider that answered upstream (a stream encoder decides from it and
    `options.endpoint`, before the message exists, what a whole reply's writer decides from
    the message's metadata: whether opaque reasoning may go to this client)."""

    options: AdapterOptions
    model_name: str
    reply_id: str
    created: int
    producer: str | None = None
    include_usage: bool = False
    """Chat Completions only: the client asked for the usage chunk
    (`stream_options.include_usage`); the other formats always stream their usage."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event frame (`event:` line where the format names its events)."""
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + _json.dumps(data) + b"\n\n"


def probe(block: Any, reply: ReplyOptions) -> Message:
    """A one-block assistant message from the reply's producer, so that a block a stream
    delivered whole is rendered by the same writer as a whole reply."""
    return Message.model_validate(
        {
            "id": PROBE_ID,
            "session_id": reply.options.session_id,
            "role": Role.assistant,
            "content": [block],
            "metadata": MessageMetadata(provider=reply.producer, endpoint=reply.options.endpoint),
            "created_at": datetime.now(UTC),
            "schema_version": CURRENT_VERSION,
        }
    )


KEPT_WHOLE = frozenset({"server_tool_use", "server_tool_result", "compaction"})
"""Blocks a reply writer renders from what the whole reply kept for replay (the provider's
own item, verbatim), which a stream does not have until it ends: a streamed reply leaves
them out, with the §7.3 WARN; the stored message keeps them, and the gateway replays them
upstream from there."""


def left_out_of_stream(block: Any, index: int, reply: ReplyOptions, adapter: str) -> bool:
    """Whether a block that arrived whole stays out of this streamed reply (`KEPT_WHOLE`),
    logged once."""
    if block.type not in KEPT_WHOLE:
        return False
    Losses(adapter, reply.options.session_id).lost(
        reply.reply_id,
        block.type,
        "a streamed reply carries no provider item kept for replay (the stored message keeps it)",
        at=f"block #{index} of the streamed reply {reply.reply_id}",
    )
    return True


PROBE_ID = "0" * 26
"""The id of a `probe` message (never stored; a drop WARN about it names this id)."""


class ReplyEncoder(ABC):
    """Canonical stream events of one reply -> the client's stream bytes.

    `start` opens the stream, `feed` translates each event as it arrives (bytes may be
    empty when an event has nothing to say in this format), `finish` closes it from the
    assembled message (final usage and stop reason), `fail` ends it with the format's
    error event. Blocks are opened and closed in index order; a provider that interleaves
    deltas of two blocks has the later one's events written after the earlier closes."""

    @abstractmethod
    def start(self) -> bytes:
        """Frames that open the stream."""

    @abstractmethod
    def feed(self, event: StreamEvent) -> bytes:
        """Frames for one canonical event."""

    @abstractmethod
    def finish(self, message: Message) -> bytes:
        """Frames that close the stream, from the assembled message."""

    @abstractmethod
    def fail(self, code: str, message: str) -> bytes:
        """The format's error event, ending the stream."""
