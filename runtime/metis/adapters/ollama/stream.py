"""Ollama NDJSON streams -> canonical stream events (`OllamaStreamDecoder`).

Each line is one `StreamLine`: a delta (thinking and content pieces, or whole tool calls:
Ollama never splits a call across lines), the final `done: true` line with the reason and
the counters, or an error line (`{"error": "..."}`), which ends the response as ERROR.
Block indexes follow arrival, which is the order `from_wire.reply_content` uses, so an
assembled stream equals the non-streamed message.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import (
    MessageCompleteEvent,
    StreamEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UsageUpdateEvent,
)

from ...assembly import RequestContext
from ...errors import WireFormatError
from ...usage import normalize_usage
from .._kit.base import FramedDecoder
from .._kit.framing import NDJSONFramer
from .._kit.losses import Losses
from .._kit.provider_errors import error_event
from .._kit.reader import read_json
from .facts import FACTS, NAME
from .from_wire import Raw, arguments_text, drop_reply_images, stop_reason
from .wire import ReplyMessage, StreamLine, ToolCall


class OllamaStreamDecoder(FramedDecoder[str]):
    """NDJSON lines -> canonical events for one response."""

    def __init__(self, context: RequestContext) -> None:
        self._context = context
        self._framer = NDJSONFramer(max_event_chars=context.max_event_chars)
        self._lines = 0
        self._next_index = 0
        self._thinking_index: int | None = None
        self._text_index: int | None = None
        self._has_tool_calls = False
        self._finished = False
        self._raw = Raw()

    def _frame(self, frame: str) -> list[StreamEvent]:
        return self._line(frame)

    def _last_frame(self, frame: str) -> list[StreamEvent]:
        try:
            return self._line(frame)
        except WireFormatError as exc:
            # A cut connection leaves half a line: what came before is kept (CANCELLED).
            Losses(NAME, self._context.session_id).lost(
                self._context.message_id, "stream_line", f"stream ended inside a line; dropped it: {exc}"
            )
            return []

    def provider_raw(self) -> dict[str, Any] | None:
        return self._raw.as_dict()

    def _take(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index

    def _line(self, text: str) -> list[StreamEvent]:
        self._lines += 1
        line = read_json(
            StreamLine, text, provider=NAME, path=f"stream line {self._lines}", what="stream line"
        )
        if self._finished:
            reason = f"ignored a stream line after the end of the response: {text[:200]}"
            Losses(NAME, self._context.session_id).lost(self._context.message_id, "stream_line", reason)
            return []
        if "error" in line:
            self._finished = True
            return [error_event(FACTS, line, path=f"stream line {self._lines}")]
        self._raw.model = line.get("model") or self._raw.model
        message = line.get("message")
        events = self._deltas(message) if message is not None else []
        if line.get("done"):
            events.extend(self._complete(line))
        return events

    def _deltas(self, message: ReplyMessage) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        thinking = message.get("thinking")
        if thinking:
            if self._thinking_index is None:
                self._thinking_index = self._take()
            events.append(
                ThinkingDeltaEvent(type="thinking_delta", index=self._thinking_index, text=thinking)
            )
        text = message.get("content")
        if text:
            if self._text_index is None:
                self._text_index = self._take()
            events.append(TextDeltaEvent(type="text_delta", index=self._text_index, text=text))
        for call in message.get("tool_calls") or ():
            events.extend(self._tool_call(call))
        drop_reply_images(message, self._context)  # as a whole reply does
        return events

    def _tool_call(self, call: ToolCall) -> list[StreamEvent]:
        provider_id = call.get("id") or None
        canonical = self._context.tool_ids.register_incoming(NAME, provider_id)
        self._raw.record_call(canonical, call)
        self._has_tool_calls = True
        index = self._take()
        function = call["function"]
        return [
            ToolUseStartEvent(
                type="tool_use_start",
                index=index,
                id=canonical,
                name=function["name"],
                provider_id=provider_id,
            ),
            ToolUseInputDeltaEvent(
                type="tool_use_input_delta",
                index=index,
                partial_json=arguments_text(function.get("arguments")),
            ),
            ToolUseEndEvent(type="tool_use_end", index=index),
        ]

    def _complete(self, line: StreamLine) -> list[StreamEvent]:
        self._finished = True
        self._raw.record_final(line)
        events: list[StreamEvent] = []
        if self._next_index == 0:  # nothing arrived: the same empty text block from_wire gives
            events.append(TextDeltaEvent(type="text_delta", index=self._take(), text=""))
        counts = normalize_usage(NAME, line)
        events.append(
            UsageUpdateEvent(
                type="usage_update", input_tokens=counts.input_tokens, output_tokens=counts.output_tokens
            )
        )
        events.append(
            MessageCompleteEvent(
                type="message_complete",
                stop_reason=stop_reason(self._raw.done_reason, self._has_tool_calls),
                provider_stop_reason=self._raw.done_reason,
                provider_model=self._raw.model,
            )
        )
        return events


__all__ = ["OllamaStreamDecoder"]
