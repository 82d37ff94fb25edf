"""A recorded stream -> the body the adapter's own stream decoder reads.

Streams are assembled by the adapters (`Adapter.assemble_stream`), never parsed here: this
module only hands them the framing their decoder expects. A recording may keep a stream
as sent (SSE, NDJSON, a JSON array) or as a list of parsed events; when the framing is
not the decoder's, the events are split with the adapters' own framers
(`adapters._kit.framing`) and written again in the decoder's framing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import _json
from ..adapters._kit.framing import JSONArrayFramer, NDJSONFramer, SSEFramer

NDJSON_STREAMS = frozenset({"ollama"})
"""Adapters whose stream is NDJSON; every other one's is SSE."""
ARRAY_STREAMS = frozenset({"gemini"})
"""Adapters whose decoder also reads a streamed JSON array (Gemini without `alt=sse`)."""
_SSE_LINE = re.compile(r"^(?:data|event):", re.MULTILINE)

_Event = tuple[str | None, str]
"""(SSE event name or None, the event's data as JSON text)."""


def _split(text: str, framing: str) -> list[_Event]:
    if framing == "sse":
        framer = SSEFramer()
        return [(e.event, e.data) for e in (*framer.feed(text), *framer.close())]
    lines = NDJSONFramer() if framing == "ndjson" else JSONArrayFramer()
    return [(None, data) for data in (*lines.feed(text), *lines.close())]


def _framing(text: str) -> str:
    if text.lstrip().startswith("["):
        return "array"
    return "sse" if _SSE_LINE.search(text) else "ndjson"


def _parsed(events: list[Any]) -> list[_Event]:
    out: list[_Event] = []
    for item in events:
        name, event = None, item
        if isinstance(item, Mapping) and set(item) <= {"event", "data"} and "data" in item:
            name, event = item.get("event"), item["data"]  # {event, data} as a logger keeps SSE
        out.append(
            (
                name if isinstance(name, str) else None,
                event if isinstance(event, str) else _json.write(event).decode("utf-8"),
            )
        )
    return out


def stream_body(adapter: str, reply: str | list[Any]) -> str:
    """The stream in `adapter`'s framing (see the module docstring)."""
    native = "ndjson" if adapter in NDJSON_STREAMS else "sse"
    if isinstance(reply, str):
        framing = _framing(reply)
        if framing == native or (framing == "array" and adapter in ARRAY_STREAMS):
            return reply
        events = _split(reply, framing)
    else:
        events = _parsed(reply)
    if native == "ndjson":
        return "".join(f"{_one_line(data)}\n" for _, data in events if data.strip() not in ("", "[DONE]"))
    return "".join(_sse(name, data) for name, data in events)


def _one_line(data: str) -> str:
    """An event's JSON on one line (an array element may be pretty-printed over several)."""
    if "\n" not in data:
        return data
    try:
        return _json.write(_json.loads(data)).decode("utf-8")
    except ValueError:
        return data.replace("\n", " ")  # not JSON: the decoder reports it


def _sse(name: str | None, data: str) -> str:
    lines = "".join(f"data: {line}\n" for line in data.splitlines() or [""])  # one per line of the data
    return (f"event: {name}\n" if name else "") + lines + "\n"


__all__ = ["ARRAY_STREAMS", "NDJSON_STREAMS", "stream_body"]
