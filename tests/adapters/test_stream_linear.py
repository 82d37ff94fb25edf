"""A Gemini stream decodes in time linear in its parts (issue 29, item 12).

For each text part the reader summed the lengths of the block's text so far (to place a
later citation), so a stream of many small parts was quadratic: 4x the parts, delivered as
one JSON array or one SSE body, took 11-13x the time. The check compares the CPU time of
this process (not wall time: other processes on a loaded machine do not count) for 2,000
and 16,000 parts, best of several runs: linear is about 8x, the quadratic reader took about
40x; the bound of 20x leaves room for noise. `python -m bench.bench_framing` prints the times.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.assembly import RequestContext
from metis.ids import ToolIdMap

from tests.support.gemini_support import MODEL, sse

SMALL, LARGE = 2_000, 16_000
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


def _cpu_seconds(parts: int, *, as_sse: bool, tries: int) -> float:
    """Best of `tries`: CPU seconds to decode a stream of `parts` text parts given in one
    piece, the cyclic garbage collector paused (its passes over the growing number of live
    objects are the interpreter's cost, not the decoder's, and vary from run to run)."""
    body = _body(parts, as_sse=as_sse)
    best = float("inf")
    for _ in range(tries):
        context = RequestContext(session_id="s", model=MODEL, tool_ids=ToolIdMap("s"))
        decoder = adapters.get("gemini").stream_decoder(context)
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            events = [*decoder.feed(body), *decoder.close()]
            best = min(best, time.process_time() - started)
        finally:
            gc.enable()
        assert len(events) > parts  # every part was read
    return best


@pytest.mark.parametrize("as_sse", [False, True], ids=["json-array", "sse"])
def test_many_text_parts_in_one_piece_decode_in_linear_time(as_sse: bool) -> None:
    small = _cpu_seconds(SMALL, as_sse=as_sse, tries=5)
    large = _cpu_seconds(LARGE, as_sse=as_sse, tries=3)
    ratio = large / max(small, 1e-3)
    assert ratio < MOST_RATIO, (
        f"{LARGE // SMALL}x the parts took {ratio:.1f}x the CPU time ({small:.3f} s, {large:.3f} s)"
    )
