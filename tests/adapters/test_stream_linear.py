"""A Gemini stream decodes with work linear in its parts (issue 29, item 12).

For each text part the reader summed the lengths of the block's text so far (to place a
later citation), so a stream of many small parts was quadratic: 4x the parts, delivered as
one JSON array or one SSE body, took 11-13x the time. The check counts work, not time (the
project keeps timings in benchmarks: `python -m bench.bench_framing` prints them): every
Python and C function call the decoder makes, through `sys.setprofile`, for 2,000 and
16,000 parts. Linear decoding makes 8x the calls for 8x the parts (plus a constant); the
quadratic reader's per-part sum was a generator over the texts so far, one call per earlier
part, so its count grows with the square. The count is deterministic: the bound of 9x is
exact arithmetic, not room for noise.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.assembly import RequestContext
from metis.ids import ToolIdMap

from tests.support.gemini_support import MODEL, sse

SMALL, LARGE = 2_000, 16_000
MOST_RATIO = 9.0
"""Calls for LARGE parts over calls for SMALL: 8 when linear (the per-stream constant only
lowers it); the quadratic reader's ratio was far above 9 (its extra calls alone grow 64x)."""


def _body(parts: int, *, as_sse: bool) -> bytes:
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": f"word {i} "}]}, "index": 0}]}
        for i in range(parts)
    ]
    chunks.append(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "."}]}, "finishReason": "STOP"}]}
    )
    return sse(chunks) if as_sse else orjson.dumps(chunks)


def _calls(parts: int, *, as_sse: bool) -> int:
    """Function calls (Python and C) made while decoding a stream of `parts` text parts given
    in one piece."""
    body = _body(parts, as_sse=as_sse)
    context = RequestContext(session_id="s", model=MODEL, tool_ids=ToolIdMap("s"))
    decoder = adapters.get("gemini").stream_decoder(context)
    count = 0

    def profile(_frame: FrameType, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        events = [*decoder.feed(body), *decoder.close()]
    finally:
        sys.setprofile(None)
    assert len(events) > parts  # every part was read
    return count


@pytest.mark.parametrize("as_sse", [False, True], ids=["json-array", "sse"])
def test_many_text_parts_in_one_piece_decode_in_linear_work(as_sse: bool) -> None:
    small = _calls(SMALL, as_sse=as_sse)
    large = _calls(LARGE, as_sse=as_sse)
    ratio = large / small
    assert ratio < MOST_RATIO, (
        f"{LARGE // SMALL}x the parts made {ratio:.2f}x the calls ({small:,}, {large:,})"
    )
