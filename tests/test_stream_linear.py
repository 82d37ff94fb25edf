"""A Gemini stream decodes in time linear in its parts (issue 29, item 12).

For each text part the reader summed the lengths of the block's text so far (to place a
later citation), so a stream of many small parts was quadratic: 4x the parts, delivered as
one JSON array or one SSE body, took 11-13x the time. The check compares the CPU time of
this process (not wall time: other processes on a loaded machine do not count) for N and
8N parts, best of three: linear is about 8x, the quadratic reader was past 30x; the bound
of 20x leaves room for noise. `python -m bench.bench_framing` prints the times.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest
from gemini_support import MODEL, sse
from metis import adapters
from metis.assembly import RequestContext
from metis.ids import ToolIdMap

SMALL, LARGE = 1_000, 8_000
MOST_RATIO = 20.0


def _body(parts: int, *, as_sse: bool) -> bytes:
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": f"word {i} "}]}, "index": 0}]}
        for i in range(parts)
    ]
    chunks.append(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "."}]}, "finishReason": "STOP"}]}
    )
    return sse(chunks) if as_sse else orjson.dumps(chunks)


def _cpu_seconds(parts: int, *, as_sse: bool) -> float:
    """Best of three: CPU seconds to decode a stream of `parts` text parts given in one piece."""
    body = _body(parts, as_sse=as_sse)
    best = float("inf")
    for _ in range(3):
        context = RequestContext(session_id="s", model=MODEL, tool_ids=ToolIdMap("s"))
        decoder = adapters.get("gemini").stream_decoder(context)
        started = time.process_time()
        events = [*decoder.feed(body), *decoder.close()]
        best = min(best, time.process_time() - started)
        assert len(events) > parts  # every part was read
    return best


@pytest.mark.parametrize("as_sse", [False, True], ids=["json-array", "sse"])
def test_many_text_parts_in_one_piece_decode_in_linear_time(as_sse: bool) -> None:
    small = _cpu_seconds(SMALL, as_sse=as_sse)
    large = _cpu_seconds(LARGE, as_sse=as_sse)
    ratio = large / max(small, 1e-3)
    assert ratio < MOST_RATIO, (
        f"{LARGE // SMALL}x the parts took {ratio:.1f}x the CPU time ({small:.3f} s, {large:.3f} s)"
    )
