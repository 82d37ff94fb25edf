"""Streams decode with work linear in their parts: Gemini text parts (issue 29, item 12),
OpenRouter reasoning_details fragments (at the end).

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
import time
from types import FrameType
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import ThinkingBlock

from tests.support.gemini_support import MODEL, sse
from tests.support.openai_chat_support import context

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


# --- OpenRouter reasoning_details fragments ------------------------------------------------------

FEW, MANY = 5_000, 20_000
PIECE = "reasoning " * 40
"""One fragment's text (400 characters: long reasoning arrives as many such pieces)."""
MOST_PER_FRAGMENT = 2.0
"""Time per fragment for MANY fragments over FEW: about 1.2 when linear (measured; a larger
body costs the allocator a little more per fragment); the decoder that added each piece to
the text so far, copying it all again per fragment, measured 3.1 to 3.4."""


def _reasoning_stream(fragments: int) -> bytes:
    """An OpenRouter stream of `fragments` reasoning.text fragments of one item, its
    signature in a last fragment, then the answer."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "gen-1", "model": "anthropic/claude-sonnet-4.6", "choices": [choice]}
        return b"data: " + orjson.dumps(body) + b"\n\n"

    detail = {"type": "reasoning.text", "text": PIECE, "format": "anthropic-claude-v1", "index": 0}
    out = [chunk({"role": "assistant", "reasoning_details": [detail]})] * fragments
    out.append(chunk({"reasoning_details": [{"type": "reasoning.text", "signature": "c2ln", "index": 0}]}))
    out += [chunk({"content": "Done."}, "stop"), b"data: [DONE]\n\n"]
    return b"".join(out)


def _seconds_per_fragment(fragments: int) -> float:
    """The least time per fragment, of three, to read the stream into its message (checked)."""
    body = _reasoning_stream(fragments)
    adapter = adapters.get("openrouter")
    least = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        message = adapter.assemble_stream([body], context("openrouter:anthropic/claude-sonnet-4.6"))
        least = min(least, time.perf_counter() - began)
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert (thinking.text, thinking.signature) == (PIECE * fragments, "c2ln")
    raw = message.metadata.provider_raw or {}
    assert raw["reasoning_details"] == [
        {
            "type": "reasoning.text",
            "text": PIECE * fragments,
            "format": "anthropic-claude-v1",
            "index": 0,
            "signature": "c2ln",
        }
    ]
    return least / fragments


def test_many_reasoning_fragments_are_read_in_linear_time() -> None:
    # Each fragment's text is collected and joined once, when the reply is assembled: 4x
    # the fragments take about 4x the time, not more (the ratio of times per fragment,
    # not a bound on either).
    few = _seconds_per_fragment(FEW)
    many = _seconds_per_fragment(MANY)
    ratio = many / few
    assert ratio < MOST_PER_FRAGMENT, (
        f"{MANY // FEW}x the fragments took {ratio:.2f}x the time per fragment"
        f" ({few * 1e6:.1f} us, {many * 1e6:.1f} us)"
    )
