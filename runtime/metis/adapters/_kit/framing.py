"""Incremental framing of provider stream bodies: SSE, NDJSON, and a streamed JSON array.

Adapters are transport-free: they receive the HTTP body in arbitrary pieces (bytes or
str, split anywhere, even inside a UTF-8 sequence) and must frame it themselves. These
framers are the only code that knows where one event ends and the next begins.

Two promises hold for every framer, whatever the server sends:

- **Linear time.** Each piece is scanned once, when it arrives; the text of an unfinished
  event is kept as a list of pieces and joined once, when the event ends. (Appending each
  piece to one growing string and re-scanning it made a long line quadratic: a 2 MiB line
  in 1 KiB pieces re-copied the buffer two thousand times.)
- **Bounded memory.** One event (a line, an SSE event's data, an array element) may hold at
  most `max_event_chars` characters; past that the framer raises `StreamLimitError`
  instead of buffering a line that never ends until the process runs out of memory.
  The bound is the caller's: `AdapterOptions.max_event_chars` (a `send` option), carried
  to the stream decoder on `RequestContext.max_event_chars`.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from ...errors import AdapterError, StreamLimitError, WireFormatError

DEFAULT_MAX_EVENT_CHARS = 64 * 1024 * 1024
"""Default bound on one event. Generous on purpose: image-generating models (Gemini, the
OpenAI image tools) send a whole base64 image inside one event, tens of megabytes at most;
anything beyond that is a broken or hostile server, not a reply."""


def _too_large(limit: int) -> StreamLimitError:
    return StreamLimitError(
        f"stream event exceeds {limit} characters",
        limit=limit,
        hint="the server sent one event larger than max_event_chars; raise the bound if that is legitimate",
    )


def _limit(limit: int | None) -> int:
    """The bound a framer was given (None: the default), checked: a positive integer."""
    if limit is None:
        return DEFAULT_MAX_EVENT_CHARS
    if type(limit) is not int or limit < 1:
        raise AdapterError(f"max_event_chars must be a positive integer or None, got {limit!r:.40}")
    return limit


class _Pending:
    """The text of one unfinished event, kept as pieces and joined once when it ends."""

    def __init__(self, limit: int | None) -> None:
        self.limit = _limit(limit)
        self._pieces: list[str] = []
        self._size = 0

    def add(self, piece: str) -> None:
        if piece:
            self._size += len(piece)
            if self._size > self.limit:
                raise _too_large(self.limit)
            self._pieces.append(piece)

    def take(self, last: str = "") -> str:
        """The whole event (the kept pieces, then `last`), and an empty buffer again."""
        if self._size + len(last) > self.limit:
            raise _too_large(self.limit)
        text = "".join(self._pieces) + last if self._pieces else last
        self._pieces, self._size = [], 0
        return text

    def __bool__(self) -> bool:
        return self._size > 0


class _Text:
    """Bytes or str pieces -> str, decoding UTF-8 incrementally."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")

    def text(self, data: bytes | str) -> str:
        if isinstance(data, str):
            return data
        try:
            return self._decoder.decode(data)
        except UnicodeDecodeError as exc:
            raise WireFormatError(f"stream is not valid UTF-8: {exc.reason}") from exc

    def finish(self) -> str:
        """End of body. A multi-byte character cut by the end of the stream belongs to an
        unfinished event, so it is discarded rather than raised: the stream was cut."""
        try:
            return self._decoder.decode(b"", True)
        except UnicodeDecodeError:
            self._decoder.reset()
            return ""


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its `event:` name (None when absent) and joined `data:` lines."""

    event: str | None
    data: str


_LINE_END = re.compile(r"\r\n|\r|\n")


class SSEFramer:
    """Server-sent events per the WHATWG rules: `event:`/`data:` fields, `:` comment lines
    (e.g. `: OPENROUTER PROCESSING`) ignored, CR/LF/CRLF line ends, blank line dispatches.
    The bound covers the unfinished line and the event's data lines together."""

    def __init__(self, *, max_event_chars: int | None = None) -> None:
        self._text = _Text()
        self._line_pending = _Pending(max_event_chars)
        self._limit = self._line_pending.limit
        self._after_cr = False  # the last piece ended in CR: a LF opening the next one is its pair
        self._event: str | None = None
        self._data: list[str] = []
        self._data_size = 0

    def feed(self, data: bytes | str) -> list[SSEEvent]:
        return self._scan(self._text.text(data))

    def close(self) -> list[SSEEvent]:
        """End of body. Per the WHATWG rules an event not terminated by a blank line is
        discarded: a stream cut mid-event must not deliver half an event."""
        events = self._scan(self._text.finish())
        if self._line_pending:
            events.extend(self._line(self._line_pending.take()))
        self._event, self._data, self._data_size = None, [], 0
        return events

    def _scan(self, text: str) -> list[SSEEvent]:
        if not text:
            return []
        if self._after_cr and text[0] == "\n":
            text = text[1:]
        self._after_cr = text.endswith("\r")
        # CR-only line ends are rare: plain str.split (a C memchr scan) unless a CR is there
        *lines, rest = _LINE_END.split(text) if "\r" in text else text.split("\n")
        events: list[SSEEvent] = []
        if lines:
            lines[0] = self._line_pending.take(lines[0])
            for line in lines:
                events.extend(self._line(line))
        self._line_pending.add(rest)
        if self._data_size + len(self._data) + bool(self._line_pending) > self._limit:
            raise _too_large(self._limit)
        return events

    def _line(self, line: str) -> list[SSEEvent]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return []
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data_size += len(value)
            if self._data_size + len(self._data) > self._limit:
                raise _too_large(self._limit)
            self._data.append(value)
        return []

    def _dispatch(self) -> list[SSEEvent]:
        if not self._data:
            self._event = None
            return []
        event = SSEEvent(self._event, "\n".join(self._data))
        self._event, self._data, self._data_size = None, [], 0
        return [event]


class NDJSONFramer:
    """Newline-delimited JSON (Ollama): one JSON document per non-blank line."""

    def __init__(self, *, max_event_chars: int | None = None) -> None:
        self._text = _Text()
        self._pending = _Pending(max_event_chars)

    def feed(self, data: bytes | str) -> list[str]:
        *lines, rest = self._text.text(data).split("\n")
        out: list[str] = []
        if lines:
            lines[0] = self._pending.take(lines[0])
            limit = self._pending.limit
            for line in lines:
                if len(line) > limit:
                    raise _too_large(limit)
                if stripped := line.strip():
                    out.append(stripped)
        self._pending.add(rest)
        return out

    def close(self) -> list[str]:
        rest = self._pending.take(self._text.finish()).strip()
        return [rest] if rest else []


_JSON_SPACE = " \t\r\n"
_NEXT_SIGNIFICANT = re.compile(r"[^ \t\r\n]")
_STRING_STOP = re.compile(r'["\\]')
_NESTED_STOP = re.compile(r'["\[\]{}]')
_SCALAR_STOP = re.compile(r"[,\]]")


class JSONArrayFramer:
    """A JSON array streamed element by element (Gemini without `alt=sse`): yields the text
    of each top-level element as soon as it is complete.

    Only what decides where an element ends is looked at: inside a string the scanner jumps
    to the next quote or backslash, inside an element to the next bracket or quote (regex
    searches, not a Python loop per character). Validating the element is the JSON
    parser's job, later."""

    def __init__(self, *, max_event_chars: int | None = None) -> None:
        self._text = _Text()
        self._pending = _Pending(max_event_chars)
        self._depth = 0  # 0: before `[` or after the closing `]`; 1: between elements
        self._in_string = False
        self._escape = False
        self._element = False  # an element has started and not yet ended
        self._opened = False
        self._closed = False

    def feed(self, data: bytes | str) -> list[str]:
        text = self._text.text(data)
        out: list[str] = []
        start = 0  # where the unfinished element's text begins in this piece
        i, n = 0, len(text)
        while i < n and not self._closed:
            if self._in_string:
                if self._escape:
                    self._escape, i = False, i + 1
                    continue
                found = _STRING_STOP.search(text, i)
                if found is None:
                    break
                i = found.start()
                if text[i] == "\\":
                    self._escape = True
                else:
                    self._in_string = False
                i += 1
                continue
            if self._depth >= 2:
                found = _NESTED_STOP.search(text, i)
            elif self._depth == 1 and self._element:
                found = _SCALAR_STOP.search(text, i)
            else:
                found = _NEXT_SIGNIFICANT.search(text, i)
            if found is None:
                break
            i = found.start()
            ch = text[i]
            if self._depth == 0:
                if self._opened or ch != "[":
                    raise WireFormatError("stream is not a JSON array", raw=text[i : i + 200])
                self._opened, self._depth = True, 1
            elif self._depth == 1 and self._element:  # a scalar element ends at `,` or `]`
                out.append(self._pending.take(text[start:i]).strip(_JSON_SPACE))
                self._element = False
                if ch == "]":
                    self._depth, self._closed = 0, True
            elif self._depth == 1:
                if ch == "]":
                    self._depth, self._closed = 0, True
                elif ch != ",":
                    self._element, start = True, i
                    if ch in "[{":
                        self._depth = 2
                    elif ch == '"':
                        self._in_string = True
            elif ch == '"':
                self._in_string = True
            elif ch in "[{":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 1:
                    out.append(self._pending.take(text[start : i + 1]))
                    self._element = False
            i += 1
        if self._element:
            self._pending.add(text[start:])
        return out

    def close(self) -> list[str]:
        """End of body. An array that never closed means the stream was cut: what was
        complete has been returned already, the unfinished element is discarded, and the
        adapter reports the message as cancelled (no completion event arrived)."""
        self._text.finish()
        self._pending.take()
        self._element = False
        return []


__all__ = ["DEFAULT_MAX_EVENT_CHARS", "JSONArrayFramer", "NDJSONFramer", "SSEEvent", "SSEFramer"]
