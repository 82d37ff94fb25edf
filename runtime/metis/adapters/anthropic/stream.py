"""Anthropic SSE -> canonical StreamEvents (`AnthropicStreamDecoder`).

Each event's data is checked against `wire.StreamEvent` by pydantic-core; the block index
of every canonical event is Anthropic's content index. `ping` and event or delta types
added later are ignored; an `error` event ends the stream as an ErrorEvent.

Text, thinking and client tool calls stream as deltas. Blocks Anthropic delivers whole or
finishes with deltas that are not text (server tool calls and results, compaction, text
with citations) are rebuilt as the wire block a whole reply holds and read at
`content_block_stop` through the same `assistant_block` as a whole reply, then sent as
one `block` event (which replaces the text deltas that streamed at its index), so a
streamed reply carries every block its whole reply carries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from metis_schema.v3 import (
    BlockEvent,
    MessageCompleteEvent,
    RedactedThinkingBlock,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolUseBlock,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
)

from ... import _json
from ...assembly import RequestContext
from ...errors import WireFormatError
from ...usage import normalize_usage, usage_event
from .._kit.base import FramedDecoder
from .._kit.framing import SSEEvent, SSEFramer
from .._kit.losses import Losses, log
from .._kit.provider_errors import error_event
from .._kit.reader import read_json
from . import wire
from .facts import FACTS, PROVIDER, USAGE
from .from_wire import assistant_block
from .provider_raw import Replay, response_raw, warn_foreign

_EVENT: Any = wire.StreamEvent
"""The declared event union (an alias, not a class: `read_json` gives it back untyped)."""

_READ_AT_STOP = frozenset({"server_tool_use", "mcp_tool_use", "compaction", *wire.SERVER_TOOL_RESULTS})
"""Wire block types read whole at their `content_block_stop` (after their deltas)."""

_EVENT_COUNTS = {
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
    "units",
}
"""The event fields a partial usage object leaves as they were (None) when it lacks them."""


class AnthropicStreamDecoder(FramedDecoder[SSEEvent]):
    """Anthropic SSE -> canonical StreamEvents for one response."""

    def __init__(self, context: RequestContext) -> None:
        self._context = context
        self._framer = SSEFramer(max_event_chars=context.max_event_chars)
        self._tool_blocks: set[int] = set()
        self._foreign_json: dict[int, list[str]] = {}
        self._whole: dict[int, dict[str, Any]] = {}
        """Blocks read whole at their stop (server tools, compaction), as they started."""
        self._whole_json: dict[int, list[str]] = {}
        self._texts: dict[int, list[str]] = {}
        self._citations: dict[int, list[Any]] = {}
        self._replay = Replay()
        self._id: str | None = None
        self._model: str | None = None
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._started = False
        self._ended = False

    def _frame(self, frame: SSEEvent) -> list[StreamEvent]:
        # at close, complete events only: the framer discards a cut one
        return self._event(frame.event, frame.data)

    def provider_raw(self) -> dict[str, Any] | None:
        if not self._started:
            return None
        self._finish_foreign()
        return response_raw(self._id, self._model, self._stop_reason, self._stop_sequence, self._replay)

    def _event(self, name: str | None, data: str) -> list[StreamEvent]:
        if self._ended:
            return []
        try:
            event = read_json(
                _EVENT, data, provider=PROVIDER, what=f"stream event {name!r}" if name else "stream event"
            )
        except WireFormatError as exc:
            raise WireFormatError(exc.message, provider=PROVIDER, path=exc.path, raw=data[:300]) from None
        kind = event.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None  # a hostile `type` may be an object
        if handler is None:
            log.debug("ignored anthropic stream event %r", event.get("type", name))
            return []
        return handler(self, event)

    def _message_start(self, event: wire.MessageStart) -> list[StreamEvent]:
        message = event["message"]
        self._started = True
        self._id, self._model = message.get("id"), message.get("model")
        return _usage_event(message.get("usage"))

    def _block_start(self, event: wire.ContentBlockStart) -> list[StreamEvent]:
        index = event["index"]
        block: Mapping[str, Any] = event["content_block"]
        kind = block.get("type")
        if isinstance(kind, str) and kind in _READ_AT_STOP:  # a hostile `type` may be a list
            self._whole[index] = dict(block)
            self._whole_json[index] = []
            return []
        canonical = assistant_block(block, index, tool_ids=self._context.tool_ids, replay=self._replay)
        if isinstance(canonical, ToolUseBlock):
            self._tool_blocks.add(index)
            events: list[StreamEvent] = [
                ToolUseStartEvent(index=index, id=canonical.id, name=canonical.name, provider_id=block["id"])
            ]
            if canonical.input:
                events.append(
                    ToolUseInputDeltaEvent(index=index, partial_json=_json.dumps(canonical.input).decode())
                )
            return events
        if isinstance(canonical, TextBlock):
            self._whole[index] = dict(block)
            self._texts[index] = [canonical.text]
            self._citations[index] = list(block.get("citations") or ())
            return [TextDeltaEvent(index=index, text=canonical.text)]
        if isinstance(canonical, ThinkingBlock):
            return [ThinkingDeltaEvent(index=index, text=canonical.text, signature=canonical.signature)]
        if isinstance(canonical, RedactedThinkingBlock):
            return [ThinkingDeltaEvent(index=index, redacted_data=canonical.data)]
        # kept whole in provider_raw (container_upload, later types); some stream JSON input too
        self._foreign_json[index] = []
        warn_foreign(
            self._context.session_id, self._context.message_id, [str(block.get("type"))], "streamed response"
        )
        return []

    def _block_delta(self, event: wire.ContentBlockDelta) -> list[StreamEvent]:
        delta: Any = event["delta"]
        kind = delta.get("type")
        handler = _DELTAS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            log.debug("ignored anthropic delta type %r", delta.get("type"))
            return []
        return handler(self, event["index"], delta)

    def _text_delta(self, index: int, delta: wire.TextDelta) -> list[StreamEvent]:
        if index in self._texts:
            self._texts[index].append(delta["text"])
        return [TextDeltaEvent(index=index, text=delta["text"])]

    def _input_json_delta(self, index: int, delta: wire.InputJsonDelta) -> list[StreamEvent]:
        if index in self._whole_json:  # a server tool's input: read with its block at the stop
            self._whole_json[index].append(delta["partial_json"])
            return []
        if index in self._foreign_json:  # a foreign block's input: folded into it
            self._foreign_json[index].append(delta["partial_json"])
            return []
        return [ToolUseInputDeltaEvent(index=index, partial_json=delta["partial_json"])]

    def _thinking_delta(self, index: int, delta: wire.ThinkingDelta) -> list[StreamEvent]:
        return [ThinkingDeltaEvent(index=index, text=delta["thinking"])]

    def _signature_delta(self, index: int, delta: wire.SignatureDelta) -> list[StreamEvent]:
        return [ThinkingDeltaEvent(index=index, signature=delta["signature"])]

    def _citations_delta(self, index: int, delta: wire.CitationsDelta) -> list[StreamEvent]:
        if index in self._citations:
            self._citations[index].append(delta["citation"])
        return []

    def _compaction_delta(self, index: int, delta: wire.CompactionDelta) -> list[StreamEvent]:
        block = self._whole.get(index)
        if block is not None and block.get("type") == "compaction":  # the delta holds the whole summary
            block.update({k: v for k, v in delta.items() if k != "type"})
        return []

    def _block_stop(self, event: wire.ContentBlockStop) -> list[StreamEvent]:
        index = event["index"]
        if index in self._tool_blocks:
            return [ToolUseEndEvent(index=index)]
        block = self._whole.pop(index, None)
        if block is None:
            return []
        texts, citations = self._texts.pop(index, None), self._citations.pop(index, None)
        if texts is not None:
            if not citations:
                return []  # the text deltas already carried the whole block
            block.update(text="".join(texts), citations=citations)
        parts = self._whole_json.pop(index, None)
        if parts and "".join(parts).strip():
            try:
                block["input"] = _json.loads("".join(parts))
            except _json.JSONDecodeError:  # as for a foreign block: the input it started with stays
                self._not_json(block, index, "read as it started")
        canonical = assistant_block(block, index, tool_ids=self._context.tool_ids, replay=self._replay)
        lost, self._replay.lost = self._replay.lost, []
        if canonical is None or lost:
            kept = [str(block.get("type"))] if canonical is None else []
            warn_foreign(self._context.session_id, self._context.message_id, kept, "streamed response", lost)
        return [] if canonical is None else [BlockEvent(index=index, block=canonical)]

    def _message_delta(self, event: wire.MessageDelta) -> list[StreamEvent]:
        delta: wire.StopDelta = event.get("delta") or {}
        if "stop_reason" in delta:
            self._stop_reason = delta["stop_reason"]
        if "stop_sequence" in delta:
            self._stop_sequence = delta["stop_sequence"]
        return _usage_event(event.get("usage"))

    def _message_stop(self, event: wire.MessageStop) -> list[StreamEvent]:
        self._ended = True
        return [
            MessageCompleteEvent(
                stop_reason=FACTS.stop_reason(self._stop_reason),
                provider_stop_reason=self._stop_reason,
                response_id=self._id,
                provider_model=self._model,
            )
        ]

    def _error(self, event: wire.ErrorBody) -> list[StreamEvent]:
        self._ended = True
        return [error_event(FACTS, event, path="stream")]

    def _not_json(self, block: dict[str, Any], index: int, what: str) -> None:
        """One §7.3 WARN: a block's streamed input is not JSON (its input is `what`)."""
        kind = str(block.get("type") or "block")
        reason = f"streamed {kind} input at {index} is not JSON; {what}"
        Losses(PROVIDER, self._context.session_id).lost(self._context.message_id, kind, reason)

    def _finish_foreign(self) -> None:
        """Server-tool blocks stream their input as JSON deltas: fold it into the kept block."""
        for index, parts in self._foreign_json.items():
            text = "".join(parts)
            block = self._replay.foreign.get(str(index))
            if text.strip() and block is not None:
                try:
                    block["input"] = _json.loads(text)
                except _json.JSONDecodeError:
                    self._not_json(block, index, "kept as sent")
        self._foreign_json.clear()


def _usage_event(usage: wire.Usage | None) -> list[StreamEvent]:
    """A usage object -> a usage_update with only the counts it reports (the rest stay as they were)."""
    if usage is None:
        return []
    counts = normalize_usage(PROVIDER, usage, read_as=wire.Usage)  # read with its event
    event = usage_event(counts)
    fields = USAGE.stated(usage)  # the totals this (maybe partial) object states, by the rule
    if event.units is not None:
        fields.add("units")
    if not fields:
        return []
    return [event.model_copy(update=dict.fromkeys(_EVENT_COUNTS - fields))]


_HANDLERS: dict[Any, Callable[[AnthropicStreamDecoder, Any], list[StreamEvent]]] = {
    "message_start": AnthropicStreamDecoder._message_start,
    "content_block_start": AnthropicStreamDecoder._block_start,
    "content_block_delta": AnthropicStreamDecoder._block_delta,
    "content_block_stop": AnthropicStreamDecoder._block_stop,
    "message_delta": AnthropicStreamDecoder._message_delta,
    "message_stop": AnthropicStreamDecoder._message_stop,
    "error": AnthropicStreamDecoder._error,
}
"""Stream event type -> handler; `ping` and unknown types are ignored."""

_DELTAS: dict[Any, Callable[[AnthropicStreamDecoder, int, Any], list[StreamEvent]]] = {
    "text_delta": AnthropicStreamDecoder._text_delta,
    "input_json_delta": AnthropicStreamDecoder._input_json_delta,
    "thinking_delta": AnthropicStreamDecoder._thinking_delta,
    "signature_delta": AnthropicStreamDecoder._signature_delta,
    "citations_delta": AnthropicStreamDecoder._citations_delta,
    "compaction_delta": AnthropicStreamDecoder._compaction_delta,
}
"""Delta type -> handler; delta types added later are ignored."""


__all__ = ["AnthropicStreamDecoder"]
