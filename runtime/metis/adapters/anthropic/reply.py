"""Canonical reply -> an Anthropic Messages reply, whole (`write_reply`) or as SSE
(`AnthropicReplyEncoder`): what `metis serve` answers an Anthropic SDK with.

The reply's `content` is what `to_wire.write_request` makes of the message as an
assistant turn (`adapters._kit.reply` says why); the envelope adds the id, the stop reason in
Anthropic's spelling and usage in Anthropic's counting (`input_tokens` without cache
reads and writes, as canonical usage counts it). The stream follows Anthropic's event
order: `message_start`, then each block's `content_block_start` / deltas /
`content_block_stop` in index order, `message_delta` with the stop reason and the final
usage, `message_stop`.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import (
    BlockEvent,
    Message,
    StopReason,
    StreamEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    Usage,
)

from .._kit.base import WireBody
from .._kit.losses import Losses
from .._kit.provenance import produced_here
from .._kit.reply import ReplyEncoder, ReplyOptions, StreamBlocks, left_out_of_stream, probe, sse
from .facts import FACTS, PROVIDER
from .to_wire import write_request

_NOT_SENT = "this stream sent no block for it (the stored message keeps it)"
"""Why a block the whole reply's writer would carry, but this stream never wrote, is dropped."""


def stop_reason(reason: StopReason | None) -> str:
    """A canonical stop reason as Anthropic spells it (its facts row)."""
    return FACTS.stop_reason_to_wire(reason)


def usage(counts: Usage | None) -> dict[str, int]:
    """Canonical usage -> Anthropic's `usage` (input as the usage rule reads it: without
    the cache's tokens)."""
    if counts is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {
        "input_tokens": FACTS.reported_prompt(counts),
        "output_tokens": counts.output_tokens,
        "cache_creation_input_tokens": counts.cache_creation_input_tokens,
        "cache_read_input_tokens": counts.cached_input_tokens,
    }


def content(message: Message, reply: ReplyOptions) -> list[dict[str, Any]]:
    """The message as the content of an Anthropic assistant turn (the request writer's)."""
    body = write_request([message], [], reply.options)
    turns = body.get("messages") or []
    return list(turns[0]["content"]) if turns else []


def write_reply(message: Message, reply: ReplyOptions) -> WireBody:
    """A whole `POST /v1/messages` reply body for `message`."""
    return {
        "id": reply.reply_id,
        "type": "message",
        "role": "assistant",
        "model": reply.model_name,
        "content": content(message, reply),
        "stop_reason": stop_reason(message.metadata.stop_reason),
        "stop_sequence": None,
        "usage": usage(message.metadata.usage),
    }


class AnthropicReplyEncoder(ReplyEncoder):
    """Canonical stream events -> Anthropic SSE, one block open at a time."""

    def __init__(self, reply: ReplyOptions) -> None:
        self._reply = reply
        self._own = produced_here(reply.producer, reply.options.endpoint, PROVIDER, reply.options)
        """Whether thinking may go to this client (it came from Anthropic at this endpoint)."""
        self._wire: dict[int, int] = {}
        """Canonical block index -> Anthropic content index, for blocks this stream carries."""
        self._closed: set[int] = set()
        self._open: int | None = None
        self._skipped: set[int] = set()
        """Canonical indexes this client does not get."""
        self._said: set[int] = set()
        """Skipped indexes whose drop was said as their block arrived (the rest: in `finish`)."""
        self._blocks = StreamBlocks()

    def start(self) -> bytes:
        message: dict[str, Any] = {
            "id": self._reply.reply_id,
            "type": "message",
            "role": "assistant",
            "model": self._reply.model_name,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return sse({"type": "message_start", "message": message}, "message_start")

    def feed(self, event: StreamEvent) -> bytes:
        self._blocks.note(event)
        if isinstance(event, TextDeltaEvent):
            return self._delta(
                event.index, {"type": "text", "text": ""}, {"type": "text_delta", "text": event.text}
            )
        if isinstance(event, ThinkingDeltaEvent):
            return self._thinking(event.index, event.text, event.signature, event.redacted_data)
        if isinstance(event, ToolUseStartEvent):
            tool_id = self._reply.options.tool_ids.outgoing(event.id, PROVIDER)
            block = {"type": "tool_use", "id": tool_id, "name": event.name, "input": {}}
            return self._begin(event.index, block)
        if isinstance(event, ToolUseInputDeltaEvent):
            delta = {"type": "input_json_delta", "partial_json": event.partial_json}
            return self._delta(event.index, None, delta)
        if isinstance(event, ToolUseEndEvent):
            return self._close()
        if isinstance(event, BlockEvent):
            return self._whole(event.index, event.block)
        return b""  # usage and completion close the stream in `finish`; errors in `fail`

    def finish(self, message: Message) -> bytes:
        """The stop reason and final usage; each block the stream never wrote nor said the
        drop of (another provider's reasoning) is said dropped, once."""
        for index, block in self._blocks.unsaid(message, {*self._wire, *self._said}):
            with probe(block, index, self._reply) as alone:
                if content(alone, self._reply):  # else the writer said why it drops it
                    Losses(PROVIDER, self._reply.options.session_id).block(
                        message, index, block.type, _NOT_SENT
                    )
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(message.metadata.stop_reason), "stop_sequence": None},
            "usage": usage(message.metadata.usage),
        }
        return self._close() + sse(delta, "message_delta") + sse({"type": "message_stop"}, "message_stop")

    def fail(self, code: str, message: str) -> bytes:
        error = {"type": "error", "error": {"type": code or "api_error", "message": message}}
        return self._close() + sse(error, "error")

    # --- blocks, in index order -------------------------------------------------------------

    def _begin(self, index: int, block: dict[str, Any]) -> bytes:
        if index in self._wire or index in self._skipped:
            return b""
        out = self._close()
        position = len(self._wire)
        self._wire[index] = position
        self._open = index
        return out + sse(
            {"type": "content_block_start", "index": position, "content_block": block}, "content_block_start"
        )

    def _delta(self, index: int, opening: dict[str, Any] | None, delta: dict[str, Any]) -> bytes:
        if index in self._skipped or index in self._closed:
            return b""  # a block this client does not get, or a late delta of a closed block
        out = b""
        if index not in self._wire:
            if opening is None:
                return b""
            out = self._begin(index, opening)
        elif self._open != index:
            return b""
        event = {"type": "content_block_delta", "index": self._wire[index], "delta": delta}
        return out + sse(event, "content_block_delta")

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        index, self._open = self._open, None
        self._closed.add(index)
        return sse({"type": "content_block_stop", "index": self._wire[index]}, "content_block_stop")

    def _thinking(self, index: int, text: str | None, signature: str | None, redacted: str | None) -> bytes:
        if not self._own:
            self._skipped.add(index)  # the whole writer drops it too: `finish` says so
            return b""
        if redacted is not None:
            return self._begin(index, {"type": "redacted_thinking", "data": redacted}) + self._close()
        opening = {"type": "thinking", "thinking": "", "signature": ""}
        out = b""
        if text:
            out += self._delta(index, opening, {"type": "thinking_delta", "thinking": text})
        if signature:
            out += self._delta(index, opening, {"type": "signature_delta", "signature": signature})
        return out

    def _whole(self, index: int, block: Any) -> bytes:
        """A block delivered whole, written as the whole reply's writer writes it; nothing
        when this client cannot take it (the writer drops it with its WARN). A text block
        whose text already streamed at this index adds only its citations."""
        if left_out_of_stream(block, index, self._reply, PROVIDER):
            self._skipped.add(index)
            self._said.add(index)
            return b""
        with probe(block, index, self._reply) as message:
            wires = content(message, self._reply)
        if not wires:
            self._skipped.add(index)
            self._said.add(index)
            return b""
        wire = wires[0]
        if wire.get("type") != "text":
            return self._begin(index, wire) + self._close()
        out = (
            b""
            if index in self._wire
            else self._delta(
                index, {"type": "text", "text": ""}, {"type": "text_delta", "text": wire["text"]}
            )
        )
        for citation in wire.get("citations", []):
            out += self._delta(index, None, {"type": "citations_delta", "citation": citation})
        return out
