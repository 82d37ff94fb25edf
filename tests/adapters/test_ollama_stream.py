"""Ollama NDJSON streams: events in every chunking, assembly equal to the non-streamed
response, early cuts (CANCELLED) and error lines (ERROR), keeping what arrived."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator

import pytest
from metis import (
    ErrorEvent,
    MessageCompleteEvent,
    MessageStatus,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolIdMap,
    ToolUseBlock,
    ToolUseStartEvent,
    UsageUpdateEvent,
)

from tests.adapters.test_ollama_adapter import (
    ADAPTER,
    PROVIDER,
    SESSION,
    FixedToolIds,
    canonical,
    chunkings,
    context,
    install_fixed_ids,
    load_stream,
    load_wire,
)
from tests.support import golden
from tests.support.contracts.ollama import response_fixture, stream_fixture


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> FixedToolIds:
    return install_fixed_ids(monkeypatch)


PAIRS = [
    # (stream fixture, equivalent non-streamed response, canonical model)
    ("stream_thinking_tools.ndjson", "response_thinking_tools.json", "ollama:qwen3-8b"),
    ("stream_text.ndjson", "response_text.json", "ollama:llama-3.3-70b"),
]


def events_json(data: list[bytes], model: str, tool_ids: ToolIdMap | None = None) -> list[dict[str, object]]:
    stream = ADAPTER.stream_response(data, context(model, tool_ids or ToolIdMap(SESSION)))
    return [e.model_dump(mode="json", exclude_none=True) for e in stream]


STREAM_MODELS = {
    # stream fixture -> canonical model
    "stream_error.ndjson": "ollama:qwen3-8b",
    "stream_text.ndjson": "ollama:llama-3.3-70b",
    "stream_thinking_tools.ndjson": "ollama:qwen3-8b",
}


def test_every_stream_input_has_a_model() -> None:
    assert golden.inputs(PROVIDER, "stream") == sorted(STREAM_MODELS)


@pytest.mark.parametrize("stream", sorted(STREAM_MODELS))
def test_events_are_the_same_in_every_chunking(stream: str, fixed_ids: FixedToolIds) -> None:
    model = STREAM_MODELS[stream]
    data = load_stream(stream)
    expected = events_json([data], model)
    golden.check(PROVIDER, golden.expected_name(stream), expected)
    for label, pieces in chunkings(data):
        fixed_ids.reset()
        assert events_json(pieces, model) == expected, label
    text = data.decode()
    fixed_ids.reset()
    assert events_json([text[i : i + 7] for i in range(0, len(text), 7)], model) == expected, "str pieces"


def test_stream_event_shape(fixed_ids: FixedToolIds) -> None:
    events = list(
        ADAPTER.stream_response(
            [load_stream("stream_thinking_tools.ndjson")], context("qwen3", ToolIdMap(SESSION))
        )
    )
    kinds = [e.type for e in events]
    assert kinds[:6] == ["thinking_delta"] * 6
    assert kinds[6:] == ["tool_use_start", "tool_use_input_delta", "tool_use_end"] * 2 + [
        "usage_update",
        "message_complete",
    ]
    starts = [e for e in events if isinstance(e, ToolUseStartEvent)]
    assert [(s.index, s.provider_id) for s in starts] == [(1, "call_k2v9x1qd"), (2, "call_7hf3m0zp")]
    usage = next(e for e in events if isinstance(e, UsageUpdateEvent))
    assert (usage.input_tokens, usage.output_tokens) == (236, 87)
    done = events[-1]
    assert isinstance(done, MessageCompleteEvent)
    assert (done.stop_reason, done.provider_stop_reason, done.provider_model) == (
        StopReason.tool_use,
        "stop",
        "qwen3:8b",
    )


@pytest.mark.parametrize(("stream", "response", "model"), PAIRS)
def test_assembled_stream_equals_non_streamed(
    stream: str, response: str, model: str, fixed_ids: FixedToolIds
) -> None:
    expected = canonical(ADAPTER.from_wire_response(load_wire(response), context(model, ToolIdMap(SESSION))))
    for label, pieces in chunkings(load_stream(stream)):
        fixed_ids.reset()
        assembled = ADAPTER.assemble_stream(pieces, context(model, ToolIdMap(SESSION)))
        assert canonical(assembled) == expected, label  # provider_raw included


def test_sdk_built_stream_equals_sdk_built_response(fixed_ids: FixedToolIds) -> None:
    expected = canonical(ADAPTER.from_wire_response(response_fixture(), context("qwen3", ToolIdMap(SESSION))))
    fixed_ids.reset()
    assembled = ADAPTER.assemble_stream(stream_fixture(), context("qwen3", ToolIdMap(SESSION)))
    assert canonical(assembled) == expected
    assert [b.type for b in assembled.content] == ["text", "tool_use", "tool_use"]


def test_async_stream_matches_sync(fixed_ids: FixedToolIds) -> None:
    data = load_stream("stream_thinking_tools.ndjson")

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(data), 11):
            yield data[i : i + 11]

    async def collect() -> list[dict[str, object]]:
        return [
            e.model_dump(mode="json", exclude_none=True)
            async for e in ADAPTER.astream_response(chunks(), context("qwen3", ToolIdMap(SESSION)))
        ]

    got = asyncio.run(collect())
    fixed_ids.reset()
    assert got == events_json([data], "ollama:qwen3-8b")


def test_stream_cut_before_done_is_cancelled_with_what_arrived(fixed_ids: FixedToolIds) -> None:
    lines = load_stream("stream_thinking_tools.ndjson").splitlines(keepends=True)
    cut = b"".join(lines[:-1])  # everything but the final done line: thinking and both calls
    message = ADAPTER.assemble_stream([cut], context("qwen3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.cancelled
    assert isinstance(message.content[0], ThinkingBlock) and message.content[0].text.startswith(
        "The user wants"
    )
    assert [b.input for b in message.content if isinstance(b, ToolUseBlock)] == [
        {"city": "Paris", "unit": "celsius"},
        {"city": "Rome", "unit": "celsius"},
    ]
    assert message.metadata.usage is None and message.metadata.stop_reason is None


def test_stream_cut_inside_a_line_drops_only_that_line(
    fixed_ids: FixedToolIds, caplog: pytest.LogCaptureFixture
) -> None:
    data = load_stream("stream_text.ndjson")
    lines = data.splitlines(keepends=True)
    cut = b"".join(lines[:3]) + lines[3][:25]  # three deltas, then half a line
    with caplog.at_level(logging.WARNING):
        message = ADAPTER.assemble_stream([cut], context("llama3.3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.cancelled
    assert message.content == [TextBlock(text="Rayleigh scattering: shorter blue wavelengths")]
    assert any("ended inside a line" in r.getMessage() for r in caplog.records)
    # a cut inside a multi-byte UTF-8 character is a cut too
    snow = '{"model":"m","message":{"role":"assistant","content":"a"},"done":false}\n{"message":{"content":"\u2603'.encode()
    message = ADAPTER.assemble_stream([snow[:-1]], context("llama3.3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.cancelled and message.content == [TextBlock(text="a")]


def test_error_line_gives_error_status_and_keeps_partial_text() -> None:
    data = load_stream("stream_error.ndjson")
    events = list(ADAPTER.stream_response([data], context("qwen3", ToolIdMap(SESSION))))
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert (error.code, error.retryable, error.provider) == ("unknown_error", False, "ollama")
    assert error.message == "an error was encountered while running the model: unexpected EOF"
    message = ADAPTER.assemble_stream([data], context("qwen3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.error
    assert message.metadata.stop_reason == StopReason.error
    assert message.content == [TextBlock(text="The three largest moons of Jupiter are")]
    assert message.metadata.usage is None
    raw = message.metadata.provider_raw or {}
    assert raw["error"] == {"code": "unknown_error", "message": error.message}
    assert (raw["adapter"], raw["model"]) == ("ollama", "qwen3:8b")


def test_busy_error_mid_stream_is_retryable() -> None:
    line = (
        json.dumps({"error": "server busy, please try again.  maximum pending requests exceeded"}).encode()
        + b"\n"
    )
    (event,) = ADAPTER.stream_response([line], context("qwen3", ToolIdMap(SESSION)))
    assert isinstance(event, ErrorEvent) and event.retryable and event.code == "overloaded"


def test_lines_after_the_end_are_ignored(fixed_ids: FixedToolIds, caplog: pytest.LogCaptureFixture) -> None:
    data = (
        load_stream("stream_text.ndjson")
        + b'{"model":"x","message":{"role":"assistant","content":"late"},"done":false}\n'
    )
    with caplog.at_level(logging.WARNING):
        message = ADAPTER.assemble_stream([data], context("llama3.3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.complete
    assert "late" not in message.content[0].text  # type: ignore[union-attr]
    assert any("after the end" in r.getMessage() for r in caplog.records)


def test_empty_stream_pieces_and_blank_lines(fixed_ids: FixedToolIds) -> None:
    data = load_stream("stream_text.ndjson").replace(b"\n", b"\n\n\r\n")
    pieces = [b"", "", *[data[i : i + 5] for i in range(0, len(data), 5)], b""]
    fixed_ids.reset()
    message = ADAPTER.assemble_stream(pieces, context("llama3.3", ToolIdMap(SESSION)))
    assert message.metadata.status == MessageStatus.complete
    assert (
        ADAPTER.assemble_stream([b""], context("llama3.3", ToolIdMap(SESSION))).metadata.status
        == MessageStatus.cancelled
    )


def test_done_without_any_content_gives_an_empty_text_block(fixed_ids: FixedToolIds) -> None:
    body = load_wire("response_load.json")
    line = json.dumps(body).encode() + b"\n"
    assembled = ADAPTER.assemble_stream([line], context("qwen3", ToolIdMap(SESSION)))
    expected = ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION)))
    assert canonical(assembled) == canonical(expected)
    assert assembled.content == [TextBlock(text="")] and assembled.metadata.stop_reason == StopReason.other


def test_string_arguments_in_a_stream_match_the_response_path(fixed_ids: FixedToolIds) -> None:
    """A lax server sending string arguments (valid and invalid JSON): both paths agree,
    bad text is kept in provider_raw, and the call still gets its canonical id."""
    calls = [
        {"function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
        {"function": {"name": "get_weather", "arguments": '{"city": "Oslo"'}},
    ]
    final = {"done": True, "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 4}
    body = {
        "model": "qwen3:8b",
        "message": {"role": "assistant", "content": "", "tool_calls": calls},
        **final,
    }
    lines = [
        {
            "model": "qwen3:8b",
            "message": {"role": "assistant", "content": "", "tool_calls": calls},
            "done": False,
        },
        {"model": "qwen3:8b", "message": {"role": "assistant", "content": ""}, **final},
    ]
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    expected = canonical(ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION))))
    fixed_ids.reset()
    assert canonical(ADAPTER.assemble_stream([data], context("qwen3", ToolIdMap(SESSION)))) == expected
    raw = expected["metadata"]["provider_raw"]
    ids = [b["id"] for b in expected["content"]]
    assert raw["string_arguments"] == ids and raw["unparsed_arguments"] == {ids[1]: '{"city": "Oslo"'}
    assert [b["input"] for b in expected["content"]] == [{"city": "Oslo"}, {}]
