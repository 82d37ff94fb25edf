"""Gemini streaming: SSE and JSON-array bodies in any chunking, equivalence with the whole
response, signatures arriving late, cut streams, error chunks, usage."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    MessageCompleteEvent,
    MessageStatus,
    StopReason,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UsageUpdateEvent,
)

from tests.support import golden
from tests.support.contracts.gemini import check_request
from tests.support.gemini_support import (
    ADAPTER,
    PROVIDER,
    SESSION,
    chunked,
    context,
    dump,
    merged_body,
    normalized,
    options,
    raw_bytes,
    sse,
    sse_chunks,
    user,
    wire,
)

STREAMS = golden.inputs(PROVIDER, "stream")
"""Every stream body, SSE or JSON array (the array and the SSE body of one generation share
their expected events)."""
WHOLE = [
    "stream_thinking_tools.sse",
    "stream_text_signature.sse",
    "stream_grounding_search.sse",
    "stream_code_execution.sse",
]
"""The SSE bodies of generations that finish (their chunks merge into one whole response)."""


def chunkings(data: bytes) -> list[list[bytes]]:
    """Whole, 1-byte, 7-byte, line by line and two random splittings of the same body."""
    rng = random.Random(20260508)
    out = [[data], chunked(data, 1), chunked(data, 7), data.splitlines(keepends=True)]
    for _ in range(2):
        cuts = sorted(rng.sample(range(1, len(data)), 25))
        out.append([data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)])
    return out


def events_json(pieces: list[bytes]) -> list[Any]:
    events = list(ADAPTER.stream_response(pieces, context()))
    return normalized([e.model_dump(mode="json", exclude_none=True) for e in events])


@pytest.mark.parametrize("name", STREAMS)
def test_every_chunking_gives_the_same_events(name: str) -> None:
    data = raw_bytes(name)
    expected = events_json([data])
    for pieces in chunkings(data):
        assert events_json(pieces) == expected
    golden.check(PROVIDER, golden.expected_name(name), expected)


@pytest.mark.parametrize("name", WHOLE)
def test_assembled_stream_equals_the_whole_response(name: str) -> None:
    """Canonical JSON incl. provider_raw, fixed id/time, for 1-byte and random chunkings."""
    data = raw_bytes(name)
    whole = ADAPTER.from_wire_response(merged_body(sse_chunks(data)), context())
    for pieces in chunkings(data):
        streamed = ADAPTER.assemble_stream(pieces, context())
        assert normalized(streamed) == normalized(whole)
    assert whole.metadata.status == MessageStatus.complete


def test_stream_equals_the_recorded_whole_response() -> None:
    """The thinking/tools stream and response_thinking_tools.json are the same generation."""
    streamed = ADAPTER.assemble_stream(chunked(raw_bytes("stream_thinking_tools.sse"), 1), context())
    whole = ADAPTER.from_wire_response(wire("response_thinking_tools.json"), context())
    assert normalized(streamed) == normalized(whole)


def test_json_array_stream_equals_sse() -> None:
    """Without `alt=sse` the endpoint sends one JSON array; the decoder sniffs `[`."""
    array = raw_bytes("stream_thinking_tools.array.json")
    expected = events_json([raw_bytes("stream_thinking_tools.sse")])
    for pieces in chunkings(array):
        assert events_json(pieces) == expected
    assert events_json([b"  \r\n", *chunked(array, 3)]) == expected, "leading blank lines before `[`"


def test_stream_event_shapes() -> None:
    events = list(ADAPTER.stream_response([raw_bytes("stream_thinking_tools.sse")], context()))
    kinds = [type(e) for e in events if not isinstance(e, UsageUpdateEvent)]
    assert kinds == [
        ThinkingDeltaEvent, ThinkingDeltaEvent, TextDeltaEvent, TextDeltaEvent,
        ToolUseStartEvent, ToolUseInputDeltaEvent, ToolUseEndEvent,
        ToolUseStartEvent, ToolUseInputDeltaEvent, ToolUseEndEvent,
        MessageCompleteEvent,
    ]  # fmt: skip
    starts = [e for e in events if isinstance(e, ToolUseStartEvent)]
    assert [e.index for e in starts] == [2, 3] and all(e.provider_id is None for e in starts)
    deltas = [orjson.loads(e.partial_json) for e in events if isinstance(e, ToolUseInputDeltaEvent)]
    assert deltas == [{"city": "Paris", "units": "metric"}, {"city": "Oslo", "units": "metric"}]
    complete = events[-1]
    assert isinstance(complete, MessageCompleteEvent)
    assert (complete.stop_reason, complete.provider_stop_reason) == (StopReason.tool_use, "STOP")
    assert (complete.response_id, complete.provider_model) == ("p2zYaP3vLqXLz7IPm5bJmAk", "gemini-2.5-flash")


def test_last_usage_wins() -> None:
    message = ADAPTER.assemble_stream([raw_bytes("stream_thinking_tools.sse")], context())
    usage = message.metadata.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (156, 256, 154)


def test_signature_on_a_final_empty_part_is_captured_and_replayed() -> None:
    data = raw_bytes("stream_text_signature.sse")
    signature = sse_chunks(data)[-1]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    decoder = ADAPTER.stream_decoder(context())
    for piece in chunked(data, 5):
        decoder.feed(piece)
    decoder.close()
    raw = decoder.provider_raw() or {}
    assert raw["extra_parts"] == [[1, {"text": "", "thoughtSignature": signature}]]
    ids = ToolIdMap(SESSION)
    message = ADAPTER.assemble_stream([data], context(ids))
    assert [b.type for b in message.content] == ["text"]
    body = ADAPTER.to_wire([user("weather?"), message], [], options(ids))
    check_request(body)
    assert body["contents"][1]["parts"] == [
        {"text": "Paris: 18°C and light rain. Oslo: no data (the weather service timed out)."},
        {"text": "", "thoughtSignature": signature},
    ], "the text deltas are one part; the signature part comes back where it was"


def test_signed_parallel_calls_replay_from_the_stream() -> None:
    ids = ToolIdMap(SESSION)
    message = ADAPTER.assemble_stream(chunked(raw_bytes("stream_thinking_tools.sse"), 11), context(ids))
    body = ADAPTER.to_wire([user("weather?"), message], [], options(ids))
    check_request(body)
    expected = wire("response_thinking_tools.json")["candidates"][0]["content"]
    assert body["contents"][1] == expected


# --- cut streams and errors -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["sse", "array"])
def test_a_stream_cut_early_is_cancelled_with_what_arrived(fmt: str) -> None:
    data = raw_bytes("stream_thinking_tools.sse" if fmt == "sse" else "stream_thinking_tools.array.json")
    cut = data[: data.index(b'"Oslo"')]  # inside the chunk with the calls
    message = ADAPTER.assemble_stream(chunked(cut, 1), context())
    assert message.metadata.status == MessageStatus.cancelled
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[1].text == "Let me look both up."  # type: ignore[union-attr]


def test_a_stream_cut_after_a_tool_call_keeps_it() -> None:
    chunks = sse_chunks(raw_bytes("stream_thinking_tools.sse"))
    calls = chunks[-1]["candidates"][0]["content"]["parts"]
    early = [*chunks[:-1], {"candidates": [{"content": {"role": "model", "parts": calls[:1]}}]}]
    message = ADAPTER.assemble_stream([sse(early)], context())
    assert message.metadata.status == MessageStatus.cancelled
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[2].input == {"city": "Paris", "units": "metric"}  # type: ignore[union-attr]
    assert (message.metadata.provider_raw or {})["part_signatures"][0][0] == 2


def test_an_error_chunk_ends_the_message_with_error_and_keeps_the_text() -> None:
    for pieces in chunkings(raw_bytes("stream_error_midway.sse")):
        message = ADAPTER.assemble_stream(pieces, context())
        assert message.metadata.status == MessageStatus.error
        assert message.metadata.stop_reason == StopReason.error
        assert message.content[0].text == "Paris: 18°C and light rain. "  # type: ignore[union-attr]
        error = (message.metadata.provider_raw or {})["error"]
        assert error == {"code": "UNAVAILABLE", "message": "The model is overloaded. Please try again later."}
    events = list(ADAPTER.stream_response([raw_bytes("stream_error_midway.sse")], context()))
    assert events[-1].type == "error" and events[-1].retryable  # type: ignore[union-attr]


def test_chunks_after_an_error_are_ignored() -> None:
    chunks = [
        {"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}},
        {"candidates": [{"content": {"parts": [{"text": "late"}]}, "finishReason": "STOP"}]},
    ]
    message = ADAPTER.assemble_stream([sse(chunks)], context())
    assert message.metadata.status == MessageStatus.error and message.content == []


def test_an_empty_answer_in_a_stream_is_an_error_like_the_whole_response() -> None:
    body = wire("response_safety_empty.json")
    streamed = ADAPTER.assemble_stream([sse([body])], context())
    whole = ADAPTER.from_wire_response(body, context())
    assert dump(streamed) == dump(whole)
    assert streamed.metadata.status == MessageStatus.error


def test_stream_tolerates_done_and_comments_and_empty_pieces() -> None:
    data = b": keep-alive\n\n" + raw_bytes("stream_text_signature.sse") + b"data: [DONE]\n\n"
    message = ADAPTER.assemble_stream([b"", *chunked(data, 9), b""], context())
    assert message.metadata.status == MessageStatus.complete


def test_str_pieces_work_like_bytes() -> None:
    text = raw_bytes("stream_thinking_tools.sse").decode()
    streamed = ADAPTER.assemble_stream([text[i : i + 13] for i in range(0, len(text), 13)], context())
    assert normalized(streamed) == normalized(ADAPTER.assemble_stream([text.encode()], context()))


async def test_async_stream() -> None:
    async def pieces() -> Any:
        for piece in chunked(raw_bytes("stream_thinking_tools.sse"), 64):
            yield piece

    events = [e async for e in ADAPTER.astream_response(pieces(), context())]
    assert events[-1].type == "message_complete"


@pytest.mark.parametrize("body", [b"", b"   \r\n\n"])
def test_an_empty_stream_is_a_wire_format_error(body: bytes) -> None:
    with pytest.raises(WireFormatError, match="empty") as info:
        list(ADAPTER.stream_response([body], context()))
    assert info.value.path == "stream"


def test_a_malformed_chunk_mid_stream_is_a_wire_format_error_with_its_path() -> None:
    data = raw_bytes("stream_text_signature.sse").replace(b'"Oslo:', b"Oslo:", 1)
    with pytest.raises(WireFormatError) as info:
        list(ADAPTER.stream_response([data], context()))
    assert info.value.path == "stream[1]" and info.value.raw is not None


def test_a_wrongly_typed_chunk_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError) as info:
        list(
            ADAPTER.stream_response(
                [sse([{"candidates": [{"content": {"parts": [{"text": 5}]}}]}])], context()
            )
        )
    assert info.value.path == "stream[0].candidates[0].content.parts[0].text"
