"""Incremental framing of provider stream bodies: SSE, NDJSON, and a streamed JSON array.

Adapters are transport-free: they receive the HTTP body in arbitrary pieces (bytes or
str, split anywhere, even inside a UTF-8 sequence) and must frame it themselves. These
framers are the only code that knows where one event ends and the next begins.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from ..errors import WireFormatError


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


class SSEFramer:
    """Server-sent events per the WHATWG rules: `event:`/`data:` fields, `:` comment lines
    (e.g. `: OPENROUTER PROCESSING`) ignored, CR/LF/CRLF line ends, blank line dispatches."""

    def __init__(self) -> None:
        self._text = _Text()
        self._buffer = ""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, data: bytes | str) -> list[SSEEvent]:
        self._buffer += self._text.text(data)
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """End of body. Per the WHATWG rules an event not terminated by a blank line is
        discarded: a stream cut mid-event must not deliver half an event."""
        self._buffer += self._text.finish()
        events = self._drain(final=True)
        self._buffer, self._event, self._data = "", None, []
        return events

    def _drain(self, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        while True:
            cut = min((i for i in (self._buffer.find("\n"), self._buffer.find("\r")) if i >= 0), default=-1)
            if cut < 0:
                return events
            if self._buffer[cut] == "\r" and cut + 1 == len(self._buffer) and not final:
                return events  # a CR at the end may be half of a CRLF
            line = self._buffer[:cut]
            skip = 2 if self._buffer[cut : cut + 2] == "\r\n" else 1
            self._buffer = self._buffer[cut + skip :]
            events.extend(self._line(line))

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
            self._data.append(value)
        return []

    def _dispatch(self) -> list[SSEEvent]:
        if not self._data:
            self._event = None
            return []
        event = SSEEvent(self._event, "\n".join(self._data))
        self._event, self._data = None, []
        return [event]


class NDJSONFramer:
    """Newline-delimited JSON (Ollama): one JSON document per non-blank line."""

    def __init__(self) -> None:
        self._text = _Text()
        self._buffer = ""

    def feed(self, data: bytes | str) -> list[str]:
        self._buffer += self._text.text(data)
        *lines, self._buffer = self._buffer.split("\n")
        return [line.strip() for line in lines if line.strip()]

    def close(self) -> list[str]:
        rest = (self._buffer + self._text.finish()).strip()
        self._buffer = ""
        return [rest] if rest else []


class JSONArrayFramer:
    """A JSON array streamed element by element (Gemini without `alt=sse`): yields the text
    of each top-level element as soon as it is complete."""

    def __init__(self) -> None:
        self._text = _Text()
        self._buffer = ""
        self._pos = 0
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._start: int | None = None
        self._opened = False

    def feed(self, data: bytes | str) -> list[str]:
        self._buffer += self._text.text(data)
        out: list[str] = []
        buf = self._buffer
        i = self._pos
        while i < len(buf):
            ch = buf[i]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif ch == "\\":
                    self._escape = True
                elif ch == '"':
                    self._in_string = False
            elif ch == '"':
                self._in_string = True
                if self._depth == 1 and self._start is None:
                    self._start = i
            elif ch in "[{":
                if not self._opened:
                    if ch != "[":
                        raise WireFormatError("stream is not a JSON array", raw=buf[:200])
                    self._opened = True
                elif self._depth == 1:
                    self._start = i
                self._depth += 1
            elif ch in "]}":
                self._depth -= 1
                if self._depth == 1 and self._start is not None:
                    out.append(buf[self._start : i + 1])
                    self._start = None
            elif ch not in " \t\r\n," and self._depth == 1 and self._start is None:
                self._start = i  # a scalar element; unusual but framed
            elif ch == "," and self._depth == 1 and self._start is not None:
                out.append(buf[self._start : i].strip())
                self._start = None
            i += 1
        if self._start is None:  # nothing pending: drop consumed text
            self._buffer, self._pos = "", 0
        else:
            self._buffer = buf[self._start :]
            self._pos = i - self._start
            self._start = 0
        return out

    def close(self) -> list[str]:
        """End of body. An array that never closed means the stream was cut: what was
        complete has been returned already, the unfinished element is discarded, and the
        adapter reports the message as cancelled (no completion event arrived)."""
        self._text.finish()
        self._buffer, self._start = "", None
        return []


__all__ = ["JSONArrayFramer", "NDJSONFramer", "SSEEvent", "SSEFramer"]
