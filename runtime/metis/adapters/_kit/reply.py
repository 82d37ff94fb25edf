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
everything. A stream says each drop once, naming the reply's message and the block's index
in it: a block that arrives whole is rendered then (`probe`, whose losses name the block
where it is), and `finish` renders none of what the stream wrote again: it says the drop of
each block the stream never wrote (`StreamBlocks.unsaid`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import ContentBlock, Message, MessageMetadata, Role, StreamEvent

from ... import _json
from .losses import Losses, standing_in

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
    message id, so `GET /v1/responses/{id}` finds it); `message_id` is that stored
    message's id, known before a stream's message exists (the gateway names the reply
    first), so a drop WARN names it; `created` is Unix seconds;
    `producer` is the provider that answered upstream (a stream encoder decides from it and
    `options.endpoint`, before the message exists, what a whole reply's writer decides from
    the message's metadata: whether opaque reasoning may go to this client)."""

    options: AdapterOptions
    model_name: str
    reply_id: str
    message_id: str
    created: int
    producer: str | None = None
    include_usage: bool = False
    """Chat Completions only: the client asked for the usage chunk
    (`stream_options.include_usage`); the other formats always stream their usage."""


def sse(data: Any, event: str | None = None) -> bytes:
    """One Server-Sent Event frame (`event:` line where the format names its events)."""
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + _json.dumps(data) + b"\n\n"


@contextmanager
def probe(block: Any, index: int, reply: ReplyOptions) -> Iterator[Message]:
    """A one-block assistant message from the reply's producer standing in for block `index`
    of the reply's message, so that a block a stream delivered whole is rendered by the same
    writer as a whole reply; within, a loss said about it names the reply's message and
    `index` (`losses.standing_in`)."""
    message = Message.model_validate(
        {
            "id": reply.message_id,
            "session_id": reply.options.session_id,
            "role": Role.assistant,
            "content": [block],
            "metadata": MessageMetadata(provider=reply.producer, endpoint=reply.options.endpoint),
            "created_at": datetime.now(UTC),
            "schema_version": CURRENT_VERSION,
        }
    )
    with standing_in(message.id, index):
        yield message


KEPT_WHOLE = frozenset({"server_tool_use", "server_tool_result", "compaction"})
"""Blocks a reply writer renders from what the whole reply kept for replay (the provider's
own item, verbatim), which a stream does not have until it ends: a streamed reply leaves
them out, with the §7.3 WARN; the stored message keeps them, and the gateway replays them
upstream from there."""

_NOT_KEPT_YET = "a streamed reply carries no provider item kept for replay (the stored message keeps it)"


def left_out_of_stream(block: Any, index: int, reply: ReplyOptions, adapter: str) -> bool:
    """Whether a block that arrived whole stays out of this streamed reply (`KEPT_WHOLE`),
    its drop said once."""
    if block.type not in KEPT_WHOLE:
        return False
    with probe(block, index, reply) as message:
        Losses(adapter, reply.options.session_id).block(message, 0, block.type, _NOT_KEPT_YET)
    return True


@dataclass
class StreamBlocks:
    """The block indexes the events of one streamed reply named (`note`, every event).

    The assembled message holds a block for each of them, in index order, so when the stream
    ends `unsaid` finds the message's blocks the stream neither wrote nor said the drop of
    (reasoning this client does not take, say): the encoder says their drops then, once,
    naming the index each has in the message, without writing the rest again."""

    came: set[int] = field(default_factory=set)

    def note(self, event: StreamEvent) -> None:
        """An event of the stream (one with no block index changes nothing)."""
        index = getattr(event, "index", None)
        if isinstance(index, int):
            self.came.add(index)

    def unsaid(self, message: Message, settled: Collection[int]) -> list[tuple[int, ContentBlock]]:
        """The blocks of the finished `message`, with their index in it, whose stream index is
        not in `settled` (written, or its drop said). The message's blocks map to the indexes
        that came, in order; a stream whose indexes do not (an index that made no block) is
        read as numbered from 0."""
        came = sorted(self.came)
        indexes = came if len(came) == len(message.content) else range(len(message.content))
        return [
            (position, block)
            for position, (index, block) in enumerate(zip(indexes, message.content, strict=True))
            if index not in settled
        ]


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
