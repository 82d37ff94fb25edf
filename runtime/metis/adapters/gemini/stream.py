"""Gemini streams -> canonical StreamEvents.

`streamGenerateContent?alt=sse` sends data-only SSE (no `[DONE]`); without `alt=sse` the body
is one JSON array. The decoder sniffs the first non-blank character (`[`: an array). Every chunk
is a whole GenerateContentResponse, read through the declared shape and folded by the same
`ResponseState` a whole response uses: text parts are deltas, a call arrives whole, the last
`usageMetadata` wins, `finishReason` ends the message. A stream cut short just ends (the
assembler makes it CANCELLED with what arrived).
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import StreamEvent

from ...assembly import RequestContext
from ...errors import WireFormatError
from .._kit.base import StreamDecoder
from .._kit.framing import JSONArrayFramer, SSEFramer
from .._kit.reader import read_json
from .facts import NAME
from .from_wire import ResponseState
from .wire import GenerateContentResponse


class GeminiStreamDecoder(StreamDecoder):
    """SSE (`alt=sse`) or JSON-array stream -> canonical events (see the module docstring)."""

    def __init__(self, context: RequestContext) -> None:
        self._response = ResponseState(context)
        self._max_event_chars = context.max_event_chars
        self._framer: SSEFramer | JSONArrayFramer | None = None
        self._pending: list[bytes | str] = []
        self._chunks = 0

    def feed(self, data: bytes | str) -> list[StreamEvent]:
        if not data:
            return []
        if self._framer is None:
            self._pending.append(data)
            first = _first_char(self._pending)
            if first is None:
                return []
            framer = JSONArrayFramer if first == "[" else SSEFramer
            self._framer = framer(max_event_chars=self._max_event_chars)
            pieces, self._pending = self._pending, []
            return self._handle([text for piece in pieces for text in self._frame(piece)])
        return self._handle(self._frame(data))

    def close(self) -> list[StreamEvent]:
        if self._framer is None:
            raise WireFormatError("the stream body is empty", provider=NAME, path="stream")
        if isinstance(self._framer, SSEFramer):
            return self._handle([event.data for event in self._framer.close()])
        return self._handle(self._framer.close())

    def provider_raw(self) -> dict[str, Any] | None:
        return self._response.provider_raw()

    def _frame(self, data: bytes | str) -> list[str]:
        if isinstance(self._framer, SSEFramer):
            return [event.data for event in self._framer.feed(data)]
        assert self._framer is not None
        return self._framer.feed(data)

    def _handle(self, texts: list[str]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for piece in texts:
            text = piece.strip()
            if not text or text == "[DONE]":
                continue
            path = f"stream[{self._chunks}]"
            chunk = read_json(GenerateContentResponse, text, provider=NAME, path=path, what="stream chunk")
            self._chunks += 1
            events.extend(self._response.consume(chunk, path + "."))
        return events


def _first_char(pieces: list[bytes | str]) -> str | None:
    """The first non-blank character of the body so far (None while it is all blank)."""
    for piece in pieces:
        text = piece if isinstance(piece, str) else piece.decode("latin-1")
        stripped = text.lstrip(" \t\r\n\ufeff")
        if stripped:
            return stripped[0]
    return None


__all__ = ["GeminiStreamDecoder"]
