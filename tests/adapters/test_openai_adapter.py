"""The OpenAI Chat Completions adapter: goldens, round trips, streams, contract, malformed input, swaps.

Wire inputs are recorded-shape fixtures in tests/golden/openai/ (their usage counts were
computed offline with the o200k_base tokenizer and the OpenAI cookbook's per-message and
per-tool overheads); expected outputs sit beside them, named by tests/support/golden.py's scheme
(METIS_UPDATE_GOLDEN=1 rewrites them).
"""

from __future__ import annotations

import base64
import json
import logging
from importlib.metadata import version
from pathlib import Path
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.adapters import WireImport
from metis.errors import CriticalBlockError, ProviderError, WireFormatError, WorkspaceError
from metis.events import RecordingSink
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    ErrorEvent,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    MessageCompleteEvent,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    StopReason,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ToolUseBlock,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UsageUpdateEvent,
)

from tests.support import golden
from tests.support.contracts import openai as contract
from tests.support.messages import build_message
from tests.support.openai_chat_support import (
    READ_TOOL,
    SESSION,
    WEATHER_TOOL,
    assistant,
    canonical,
    chunkings,
    context,
    fixed_tool_ids,
    msg,
    normalize_tool_ids,
    options,
    recorded,
    text,
    tid,
    tool_result,
    warnings,
    wire_equivalent,
)

__all__ = ["fixed_tool_ids"]  # the fixture is used by name

ADAPTER = adapters.get("openai")
MODEL = "openai:gpt-4.1"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def image(kind: MediaSourceKind, data: str, media_type: str = "image/png") -> ImageBlock:
    return ImageBlock(type="image", source=MediaSource(kind=kind, data=data), media_type=media_type)


# --- canonical -> wire ---------------------------------------------------------------------


def swapped_session(tmp_path: Path) -> tuple[list[Message], ToolIdMap]:
    """A session begun on Anthropic (toolu_ ids in the map), with every block type."""
    (tmp_path / "shots").mkdir()
    (tmp_path / "shots" / "failure.png").write_bytes(base64.b64decode(PNG_1PX))
    ids = ToolIdMap(SESSION)
    ids.bind(tid(1), "anthropic", "toolu_01A9xKq3Lm7Np2Rs5Tv8Wy4Z")
    ids.bind(tid(2), "anthropic", "toolu_01B3cDe6Fg9Hi2Jk5Lm8No1P")
    messages = [
        msg(1, Role.system, [text("You are a careful coding assistant.")]),
        msg(2, Role.system, []),
        msg(
            3,
            Role.user,
            [
                text("Why does this fail? Screenshots attached."),
                image(MediaSourceKind.base64, PNG_1PX),
                image(MediaSourceKind.url, "https://example.com/diagram.jpg", "image/jpeg"),
                image(MediaSourceKind.file_ref, "shots/failure.png"),
            ],
        ),
        assistant(
            4,
            [
                ThinkingBlock(
                    type="thinking", text="I should read the file.", signature="EqQBCkYIBxgCKkB" * 20
                ),
                text("Let me check the README and the weather."),
                ToolUseBlock(type="tool_use", id=tid(1), name="read_file", input={"path": "README.md"}),
                ToolUseBlock(
                    type="tool_use", id=tid(2), name="get_weather", input={"city": "Paris", "days": 2}
                ),
            ],
            model="anthropic:claude-sonnet-4-6",
        ),
        tool_result(
            5, tid(1), [text("# metis\nOne canonical format."), image(MediaSourceKind.base64, PNG_1PX)]
        ),
        tool_result(6, tid(2), [text("error: weather service unavailable")], is_error=True),
        assistant(
            7,
            [text("The README says:"), text("metis keeps one format.")],
            model="anthropic:claude-sonnet-4-6",
        ),
        msg(8, Role.user, [text("Thanks! Now check Tokyo.")]),
    ]
    return messages, ids


def test_to_wire_golden_every_block_type(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    messages, ids = swapped_session(tmp_path)
    opts = options(
        MODEL,
        ids,
        workspace=tmp_path,
        max_tokens=512,
        temperature=0.3,
        stop=["END"],
        tool_choice="required",
        stream=True,
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(messages, [WEATHER_TOOL, READ_TOOL], opts)
    golden.check("openai", "every_block_type.request.golden.json", body)
    contract.check_request(body)
    dropped = [(r.block_type, r.message_id) for r in warnings(caplog)]  # type: ignore[attr-defined]
    assert dropped == [("thinking", messages[3].id), ("image", messages[4].id)]
    assert body["max_completion_tokens"] == 512 and "max_tokens" not in body
    assert body["stream_options"] == {"include_usage": True}
    # every tool result answers a tool call of the preceding assistant message, by the same id
    calls = [c["id"] for c in body["messages"][2]["tool_calls"]]
    assert [m["tool_call_id"] for m in body["messages"][3:5]] == calls
    assert all(len(c) <= 40 for c in calls)


def test_to_wire_developer_role_and_extra_merged_last() -> None:
    ids = ToolIdMap(SESSION)
    messages = [
        msg(1, Role.system, [text("Be brief."), text("Answer in French.")]),
        msg(2, Role.user, [text("Hi")]),
    ]
    opts = options(
        "gpt5",
        ids,
        tool_choice="read_file",
        extra={"metis": {"system_role": "developer"}, "reasoning_effort": "minimal", "temperature": 1},
        temperature=0.5,
    )
    body = ADAPTER.to_wire(messages, [READ_TOOL], opts)
    golden.check("openai", "developer_extra.request.golden.json", body)
    contract.check_request(body)
    assert body["messages"][0]["role"] == "developer"
    assert body["temperature"] == 1  # extra wins
    assert "metis" not in body


def test_to_wire_thinking_budget_is_not_sent_to_openai(caplog: pytest.LogCaptureFixture) -> None:
    body = ADAPTER.to_wire(
        [msg(1, Role.user, [text("hi")])], [], options(MODEL, ToolIdMap(SESSION), thinking_budget=2048)
    )
    assert "reasoning" not in body and "thinking" not in body
    assert any("thinking_budget" in r.getMessage() for r in warnings(caplog))


def test_images_dropped_for_text_only_model_and_unaccepted_type(caplog: pytest.LogCaptureFixture) -> None:
    user = msg(1, Role.user, [text("look"), image(MediaSourceKind.url, "https://example.com/a.png")])
    body = ADAPTER.to_wire([user], [], options("openai:my-local-llama", ToolIdMap(SESSION)))
    assert body["messages"] == [{"role": "user", "content": "look"}]
    assert [r.reason for r in warnings(caplog)] == ["openai:my-local-llama does not accept images"]  # type: ignore[attr-defined]
    caplog.clear()
    bmp = msg(2, Role.user, [image(MediaSourceKind.url, "https://example.com/a.bmp", "image/bmp")])
    body = ADAPTER.to_wire([bmp, user], [], options(MODEL, ToolIdMap(SESSION)))
    assert len(body["messages"]) == 1  # the user message that held only the image is gone
    assert warnings(caplog)[0].reason == "openai:gpt-4.1 does not accept image/bmp"  # type: ignore[attr-defined]


def test_file_ref_escaping_the_workspace_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside.png").write_bytes(b"x")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    user = msg(1, Role.user, [image(MediaSourceKind.file_ref, "../outside.png")])
    with pytest.raises(WorkspaceError, match="escapes the workspace"):
        ADAPTER.to_wire([user], [], options(MODEL, ToolIdMap(SESSION), workspace=workspace))


def test_lossy_thinking_drop_logs_one_warn_with_five_fields_and_no_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink = RecordingSink()
    message = assistant(
        3,
        [ThinkingBlock(type="thinking", text="hmm", signature="sig"), text("Answer.")],
        model="anthropic:claude-sonnet-4-6",
    )
    with caplog.at_level(logging.DEBUG):
        body = ADAPTER.to_wire(
            [msg(1, Role.user, [text("q")]), message], [], options(MODEL, ToolIdMap(SESSION))
        )
    assert body["messages"][1] == {"role": "assistant", "content": "Answer."}
    records = warnings(caplog)
    assert len(records) == 1
    fields = {
        k: getattr(records[0], k) for k in ("session_id", "message_id", "block_type", "adapter", "reason")
    }
    assert fields == {
        "session_id": SESSION,
        "message_id": message.id,
        "block_type": "thinking",
        "adapter": "openai",
        "reason": "reasoning from anthropic:claude-sonnet-4-6 via anthropic (its default API) goes back"
        " only to the model and endpoint that produced it, not openai:gpt-4.1 via openai (its default API)",
    }
    assert sink.events == []


def test_critical_thinking_block_fails_instead_of_dropping() -> None:
    message = assistant(
        3,
        [RedactedThinkingBlock(type="redacted_thinking", data="blob"), text("x")],
        model="anthropic:claude-sonnet-4-6",
    )
    message = message.model_copy(
        update={"metadata": message.metadata.model_copy(update={"critical_blocks": [0]})}
    )
    with pytest.raises(CriticalBlockError, match="critical redacted_thinking"):
        ADAPTER.to_wire([message], [], options(MODEL, ToolIdMap(SESSION)))


# --- responses -> canonical ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("stop", StopReason.end_turn),
        ("tool_calls", StopReason.tool_use),
        ("function_call", StopReason.tool_use),
        ("length", StopReason.max_tokens),
        ("content_filter", StopReason.content_filter),
        ("something_new", StopReason.other),
    ],
)
def test_every_finish_reason(finish: str, expected: StopReason) -> None:
    body = recorded("openai", "response_text.json")
    body["choices"][0]["finish_reason"] = finish
    message = ADAPTER.from_wire_response(body, context(MODEL))
    assert message.metadata.stop_reason == expected
    assert message.metadata.provider_raw["finish_reason"] == finish


def test_refusal_is_text_with_stop_reason_refusal() -> None:
    message = ADAPTER.from_wire_response(recorded("openai", "response_refusal.json"), context(MODEL))
    assert message.content == [text("I'm sorry, but I can't help with that request.")]
    assert message.metadata.stop_reason == StopReason.refusal


def test_usage_is_normalized_and_cost_is_local() -> None:
    message = ADAPTER.from_wire_response(recorded("openai", "response_length_rawargs.json"), context(MODEL))
    usage = message.metadata.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (386, 1920, 64)
    assert usage.pricing_version == f"genai-prices@{version('genai-prices')}"
    assert usage.cost_usd > 0


# --- round trip §2.1.1 ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tools", "text", "content_filter", "length_rawargs", "llamacpp"])
def test_response_round_trips_to_the_same_wire_message(name: str) -> None:
    body = recorded("openai", f"response_{name}.json")
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(body, context(MODEL, ids))
    stored = Message.model_validate_json(message.model_dump_json())
    wire = ADAPTER.to_wire([msg(1, Role.user, [text("q")]), stored], [], options(MODEL, ids))["messages"][1]
    original = {
        k: v
        for k, v in body["choices"][0]["message"].items()
        if k in ("role", "content", "tool_calls", "reasoning_content")
    }
    if name == "llamacpp":
        # llama.cpp's 50-character id breaks OpenAI's 40-character rule: re-minted, the rest
        # exact, its reasoning_content included (the same model is asked again)
        assert len(wire["tool_calls"][0]["id"]) <= 40
        assert wire["tool_calls"][0]["id"] != original["tool_calls"][0]["id"]
        wire["tool_calls"][0]["id"] = original["tool_calls"][0]["id"]
        original["content"] = None  # "" with tool calls replays as null
    assert wire == original


def test_edited_tool_input_is_not_replayed_with_the_old_raw_arguments() -> None:
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(
        recorded("openai", "response_length_rawargs.json"), context(MODEL, ids)
    )
    call = message.content[1]
    assert isinstance(call, ToolUseBlock)
    edited = call.model_copy(update={"input": {"path": "docs/INDEX.md"}})
    message = message.model_copy(update={"content": [message.content[0], edited, message.content[2]]})
    wire = ADAPTER.to_wire([message], [], options(MODEL, ids))["messages"][0]
    assert wire["tool_calls"][0]["function"]["arguments"] == '{"path":"docs/INDEX.md"}'
    assert (
        wire["tool_calls"][1]["function"]["arguments"] == '{"path":"docs/CHANGEL'
    )  # unparsed, kept verbatim


# --- recorded request import round trip ------------------------------------------------------


@pytest.mark.parametrize("name", ["request_every_shape", "request_followup", "request_tools"])
def test_request_import_round_trip(name: str) -> None:
    body = recorded("openai", f"{name}.json")
    contract.check_request(body)
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    again = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    assert wire_equivalent(again) == wire_equivalent(body)
    contract.check_request(again)


def test_request_import_links_every_result_to_its_call() -> None:
    imported = ADAPTER.from_wire_request(
        recorded("openai", "request_every_shape.json"), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    roles = [m.role for m in imported.messages]
    assert roles.count(Role.user) == 4 and roles.count(Role.tool) == 3
    tool_msgs = [m for m in imported.messages if m.role == Role.tool]
    uses = [b.id for m in imported.messages for b in m.content if isinstance(b, ToolUseBlock)]
    assert [m.metadata.parent_tool_use_id for m in tool_msgs] == uses


def test_import_drops_unknown_parts_with_warn_and_keeps_them(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "model": "gpt-4.1",
        "messages": [
            {
                "role": "user",
                "name": "ada",
                "content": [
                    {"type": "text", "text": "Transcribe:"},
                    {"type": "video_url", "video_url": {"url": "https://example.com/x.mp4"}},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/x.png", "detail": "high"},
                    },
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                ],
            },
            {"role": "assistant", "content": "ok", "audio": {"id": "audio_1"}},
        ],
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    paths = [d["path"] for d in imported.dropped]
    assert paths == [
        "messages[0].name",
        "messages[0].content[1]",
        "messages[0].content[2].image_url.detail",
        "messages[1].audio",
    ]
    assert imported.dropped[1]["value"]["type"] == "video_url"
    assert len(warnings(caplog)) == 4
    assert [b.type for b in imported.messages[0].content] == ["text", "image", "audio"]


# --- streaming -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "response"), [("stream_tools", "response_tools"), ("stream_text", "response_text")]
)
def test_stream_assembles_to_the_non_streamed_message(stream: str, response: str) -> None:
    data = recorded("openai", f"{stream}.sse")
    ids_whole = ToolIdMap(SESSION)
    expected = normalize_tool_ids(
        canonical(
            ADAPTER.from_wire_response(recorded("openai", f"{response}.json"), context(MODEL, ids_whole))
        ),
        ids_whole,
        "openai",
    )
    for how, pieces in chunkings(data).items():
        ids = ToolIdMap(SESSION)
        message = ADAPTER.assemble_stream(pieces, context(MODEL, ids))
        assert normalize_tool_ids(canonical(message), ids, "openai") == expected, how


def test_stream_events_of_parallel_tool_calls() -> None:
    ids = ToolIdMap(SESSION)
    events = list(
        ADAPTER.stream_response(
            chunkings(recorded("openai", "stream_tools.sse"))["7-byte"], context(MODEL, ids)
        )
    )
    starts = [e for e in events if isinstance(e, ToolUseStartEvent)]
    assert [(s.index, s.provider_id) for s in starts] == [
        (0, "call_Xk2P9vQm4LrT7wBn3YcJ8dHs"),
        (1, "call_Rz6Vb1Nq8KsW2mEt5UgA0fLp"),
    ]
    for start in starts:
        pieces = [
            e.partial_json for e in events if isinstance(e, ToolUseInputDeltaEvent) and e.index == start.index
        ]
        assert json.loads("".join(pieces))["unit"] == "celsius"
        assert ids.resolve_incoming("openai", start.provider_id or "") == start.id
    kinds = [type(e).__name__ for e in events]
    assert kinds[-4:] == ["ToolUseEndEvent", "ToolUseEndEvent", "UsageUpdateEvent", "MessageCompleteEvent"]
    complete = events[-1]
    assert isinstance(complete, MessageCompleteEvent)
    assert (complete.stop_reason, complete.provider_stop_reason) == (StopReason.tool_use, "tool_calls")
    assert complete.response_id == "chatcmpl-CeT7xQ2b9VnLmA4sK1pZrYw8uJd3F"


def test_stream_cut_early_is_cancelled_with_what_arrived() -> None:
    data = recorded("openai", "stream_tools.sse")
    third_tokyo_fragment = data.index(b'"index":1,"function"', data.index(b'"index":1,"function"') + 1)
    cut = data[: third_tokyo_fragment + 60]  # inside a chunk, Tokyo's arguments half received
    message = ADAPTER.assemble_stream([cut], context(MODEL))
    assert message.metadata.status == MessageStatus.cancelled
    assert [b.type for b in message.content] == ["tool_use", "tool_use"]
    paris, tokyo = message.content
    assert paris.input == {"city": "Paris", "unit": "celsius"}
    assert tokyo.input == {}
    kept = (message.metadata.provider_raw or {})["unparsed_arguments"][tokyo.id]
    assert '{"city":"Tokyo","unit":"celsius"}'.startswith(kept) and kept
    text_data = recorded("openai", "stream_text.sse")
    partial = ADAPTER.assemble_stream([text_data[:2000]], context(MODEL))
    assert partial.metadata.status == MessageStatus.cancelled
    assert partial.content[0].text.startswith("Right now Paris")


def test_sse_error_event_carries_the_error_object_itself() -> None:
    """A server may send `event: error` whose data is the error object, not an envelope."""
    data = recorded("openai", "stream_text.sse")
    head = data[: data.index(b"\n\n") + 2]
    error = b'event: error\ndata: {"message":"upstream overloaded","type":"overloaded_error","code":null}\n\n'
    events = list(ADAPTER.stream_response([head, error, b"data: [DONE]\n\n"], context(MODEL)))
    last = events[-1]
    assert isinstance(last, ErrorEvent)
    assert (last.code, last.message, last.retryable) == ("overloaded_error", "upstream overloaded", True)
    assert not any(isinstance(e, MessageCompleteEvent) for e in events)


def test_stream_error_chunk_ends_as_error_keeping_partial_text() -> None:
    data = recorded("openai", "stream_text.sse")
    head = data[: data.index(b"\n\n", 1500) + 2]
    error = b'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}\n\n'
    events = list(ADAPTER.stream_response([head, error, b"data: [DONE]\n\n"], context(MODEL)))
    assert isinstance(events[-1], ErrorEvent)
    assert (events[-1].code, events[-1].retryable) == ("server_error", True)
    message = ADAPTER.assemble_stream([head, error, b"data: [DONE]\n\n"], context(MODEL))
    assert message.metadata.status == MessageStatus.error
    assert message.metadata.stop_reason == StopReason.error
    assert message.content[0].text.startswith("Right now Paris")
    assert message.metadata.provider_raw["error"]["code"] == "server_error"


def test_stream_ignores_obfuscation_and_unknown_keys_and_empty_pieces() -> None:
    chunk = {
        "id": "c1",
        "choices": [{"index": 0, "delta": {"content": "hi", "future": 1}, "finish_reason": None}],
        "obfuscation": "zz",
        "new_top": {},
    }
    body = (
        b"data: "
        + orjson.dumps(chunk)
        + b"\n\n"
        + b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    message = ADAPTER.assemble_stream([b"", body, b""], context(MODEL))
    assert message.content == [text("hi")] and message.metadata.status == MessageStatus.complete


def test_empty_stream_is_cancelled_not_a_crash() -> None:
    message = ADAPTER.assemble_stream([b"", ""], context(MODEL))
    assert message.metadata.status == MessageStatus.cancelled and message.content == []


def test_stream_tool_call_whose_id_comes_after_its_name_is_bound() -> None:
    ids = ToolIdMap(SESSION)
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"name": "read_file", "arguments": '{"pa'}}]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "id": "call_late", "function": {"arguments": 'th":"a"}'}}]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    message = ADAPTER.assemble_stream([body], context(MODEL, ids))
    block = message.content[0]
    assert isinstance(block, ToolUseBlock) and block.input == {"path": "a"}
    assert ids.resolve_incoming("openai", "call_late") == block.id


def test_stream_server_reusing_index_zero_for_parallel_calls() -> None:
    """Some compatible servers send every parallel call at index 0, told apart by id."""
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{}"}}]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "id": "c2", "function": {"name": "b", "arguments": "{}"}}]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    message = ADAPTER.assemble_stream([body], context(MODEL))
    assert [b.name for b in message.content] == ["a", "b"]
    assert message.metadata.status == MessageStatus.complete  # no [DONE]: the end of the body completes


def test_stream_reasoning_content_of_compatible_servers() -> None:
    chunks = [
        {
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": None, "reasoning_content": "Think"}}
            ]
        },
        {"choices": [{"index": 0, "delta": {"reasoning_content": "ing."}}]},
        {"choices": [{"index": 0, "delta": {"content": "Done."}}]},
        {
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        },
    ]
    body = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    message = ADAPTER.assemble_stream([body], context("openai:qwen3-8b"))
    assert message.content == [ThinkingBlock(type="thinking", text="Thinking."), text("Done.")]


# --- contract --------------------------------------------------------------------------------


def test_contract_fixtures_parse() -> None:
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(contract.response_fixture(), context(MODEL, ids))
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    streamed_ids = ToolIdMap(SESSION)
    streamed = ADAPTER.assemble_stream(contract.stream_fixture(), context(MODEL, streamed_ids))
    assert normalize_tool_ids(canonical(streamed), streamed_ids, "openai") == normalize_tool_ids(
        canonical(message), ids, "openai"
    )
    status, body = contract.error_fixture()
    error = ADAPTER.parse_error(body, status)
    assert isinstance(error, ProviderError) and error.retryable and error.error_type == "tokens"
    for chunk in recorded("openai", "stream_tools.sse").split(b"\n\n"):
        if chunk.startswith(b"data: {"):
            contract.check_chunk(json.loads(chunk[6:]))


@pytest.mark.parametrize(
    "broken",
    [
        {"model": "gpt-4.1", "messages": [{"role": "tool", "content": "no id"}]},
        {
            "model": "gpt-4.1",
            "messages": [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "x"}}],
                }
            ],
        },
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]},
        {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "max_completion_token": 5},
    ],
)
def test_contract_rejects_broken_bodies(broken: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValueError)):
        contract.check_request(broken)


# --- malformed input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ('{"city":"Paris"}', None),  # canonical: nothing kept
        ('{"city": "Paris"}', '{"city": "Paris"}'),  # whitespace
        ('{"b":1,"a":2}', None),  # canonical, keys not sorted
        ('{"city":"Par\\u00eds"}', '{"city":"Par\\u00eds"}'),  # an escape orjson writes differently
        ('{"n":1.0}', None),
        ('{"n":18446744073709551616}', None),  # beyond 64 bits: read exactly, written back the same
        ("", ""),
        ("  ", "  "),
        ("{}", None),
    ],
)
def test_arguments_text_is_kept_only_when_it_differs_from_the_canonical_text(
    raw: str, kept: str | None
) -> None:
    """What a reply's arguments keep for replay, and the same answer for a streamed call's
    joined text (read there without a value in hand)."""
    from metis.adapters.chat import kept_arguments, raw_arguments_to_keep
    from metis.assembly import parse_tool_arguments

    value, unparsed = parse_tool_arguments(raw, context=context(MODEL), tool_id=tid(1), name="f")
    assert unparsed is None
    assert kept_arguments(raw, value) == kept
    assert raw_arguments_to_keep(raw) == kept


def test_arguments_keep_wide_integers_exactly_and_refuse_nan() -> None:
    """JSON integers have no size limit (a tool input may hold a 128-bit id): they are read
    and written back digit for digit. NaN is not JSON: the text is kept raw, not read as a
    float the store would write as null."""
    from metis.adapters.chat import kept_arguments
    from metis.assembly import parse_tool_arguments

    raw = '{"id":340282366920938463463374607431768211457,"low":-9223372036854775809}'
    value, unparsed = parse_tool_arguments(raw, context=context(MODEL), tool_id=tid(1), name="f")
    assert unparsed is None
    assert value == {"id": 2**128 + 1, "low": -(2**63) - 1}
    assert kept_arguments(raw, value) is None  # written back exactly: nothing to keep
    value, unparsed = parse_tool_arguments('{"n":NaN}', context=context(MODEL), tool_id=tid(1), name="f")
    assert (value, unparsed) == ({}, '{"n":NaN}')


def test_block_helpers_build_what_the_model_constructors_build() -> None:
    """Response blocks are validated by calling the models' validators on a dict: the same
    values, the same fields set, the same refusals as the constructors."""
    from metis.adapters._kit.importing import text_block as _text_block
    from metis.adapters._kit.importing import thinking_block as _thinking_block
    from metis.adapters._kit.importing import tool_use_block as _tool_use_block
    from pydantic import ValidationError

    pairs = [
        (_text_block("hi"), TextBlock(type="text", text="hi")),
        (
            _tool_use_block(tid(1), "f", {"a": [1]}),
            ToolUseBlock(type="tool_use", id=tid(1), name="f", input={"a": [1]}),
        ),
        (_thinking_block({"type": "thinking", "text": "t"}), ThinkingBlock(type="thinking", text="t")),
        (
            _thinking_block({"type": "thinking", "text": "t", "signature": None}),
            ThinkingBlock(type="thinking", text="t", signature=None),
        ),
    ]
    for built, constructed in pairs:
        assert type(built) is type(constructed)
        assert built == constructed
        assert built.model_fields_set == constructed.model_fields_set
    with pytest.raises(ValidationError):
        _tool_use_block("call_1", "f", {})  # not a canonical id
    with pytest.raises(ValidationError):
        _text_block(5)  # type: ignore[arg-type]


def test_invalid_arguments_keep_raw_text_and_emit_tool_input_invalid(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sink = RecordingSink()
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(
        recorded("openai", "response_length_rawargs.json"), context(MODEL, ids, events=sink)
    )
    bad = message.content[2]
    assert isinstance(bad, ToolUseBlock) and bad.input == {}
    raw = message.metadata.provider_raw or {}
    assert raw["unparsed_arguments"] == {bad.id: '{"path":"docs/CHANGEL'}
    assert [e.payload["tool_use_id"] for e in sink.of_type("tool_input_invalid")] == [bad.id]
    assert any("not valid JSON" in r.getMessage() for r in warnings(caplog))


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"choices": "nope"}, "choices"),
        ({"choices": []}, "choices"),
        ({"choices": [{"message": None}]}, "choices[0].message"),
        ({"choices": [{"message": {"role": "assistant", "content": 5}}]}, "choices[0].message.content"),
        (
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [{"id": "c", "type": "function", "function": {"arguments": "{}"}}],
                        }
                    }
                ]
            },
            "choices[0].message.tool_calls[0].function.name",
        ),
        (
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {"id": "c", "type": "function", "function": {"name": "x", "arguments": 5}}
                            ],
                        }
                    }
                ]
            },
            "choices[0].message.tool_calls[0].function.arguments",
        ),
        (
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {"id": 7, "type": "function", "function": {"name": "x", "arguments": "{}"}}
                            ],
                        }
                    }
                ]
            },
            "choices[0].message.tool_calls[0].id",
        ),
        ({"choices": ["nope"]}, "choices[0]"),
        (
            {"choices": [{"message": {"role": "assistant", "tool_calls": {"a": 1}}}]},
            "choices[0].message.tool_calls",
        ),
        (
            {"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c", "function": "f"}]}}]},
            "choices[0].message.tool_calls[0].function",
        ),
        (
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {
                                    "id": "c",
                                    "type": "function",
                                    "function": {"name": "x" * 129, "arguments": "{}"},
                                }
                            ],
                        }
                    }
                ]
            },
            "choices[0].message.tool_calls[0]",  # the canonical model refuses a 129-character name
        ),
    ],
)
def test_malformed_responses_raise_wire_format_errors_with_paths(body: dict[str, Any], path: str) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_response(body, context(MODEL))
    assert info.value.path == path


def test_error_body_under_200_raises_provider_error() -> None:
    with pytest.raises(ProviderError, match="server_error"):
        ADAPTER.from_wire_response(
            {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}},
            context(MODEL),
        )


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"model": "gpt-4.1", "messages": [{"role": "narrator", "content": "x"}]}, "messages[0]"),
        (
            {"model": "gpt-4.1", "messages": [{"role": "function", "name": "f", "content": "x"}]},
            "messages[0].role",
        ),
        (
            {
                "model": "gpt-4.1",
                "messages": [
                    {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}}
                ],
            },
            "messages[0].function_call",
        ),
        ({"model": "gpt-4.1", "messages": "x"}, "messages"),
        ({"messages": []}, "model"),
        ({"model": "gpt-4.1", "messages": [7]}, "messages[0]"),
        ({"model": "gpt-4.1", "messages": [{"role": "user", "content": 3}]}, "messages[0].content"),
        (
            {
                "model": "gpt-4.1",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}],
                    }
                ],
            },
            "messages[0].content[0].image_url.url",
        ),
        (
            {
                "model": "gpt-4.1",
                "messages": [],
                "tools": [{"type": "function", "function": {"description": "x"}}],
            },
            "tools[0].function.name",
        ),
    ],
)
def test_malformed_requests_raise_wire_format_errors_with_paths(body: dict[str, Any], path: str) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == path


def test_unknown_tool_call_id_in_import_names_its_path() -> None:
    body = recorded("openai", "request_followup.json")
    body["messages"][3]["tool_call_id"] = "call_never_made"
    with pytest.raises(WireFormatError, match="call_never_made") as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == "messages[3].tool_call_id"


def test_malformed_stream_chunk_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError) as info:
        list(ADAPTER.stream_response([b"data: {not json\n\n"], context(MODEL)))
    assert info.value.path == "stream" and info.value.raw == "{not json"


@pytest.mark.parametrize(
    ("chunk", "path"),
    [
        ({"choices": {"index": 0}}, "stream.choices"),
        ({"choices": [{"delta": {"content": 5}}]}, "stream.choices[0].delta.content"),
        (
            {"choices": [{"delta": {"tool_calls": [{"index": "0"}]}}]},
            "stream.choices[0].delta.tool_calls[0].index",
        ),
        (
            {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": 7}}]}}]},
            "stream.choices[0].delta.tool_calls[0].function.arguments",
        ),
        ({"choices": [{"finish_reason": True}]}, "stream.choices[0].finish_reason"),
        ({"choices": [], "usage": [1]}, "stream.usage"),
    ],
)
def test_malformed_stream_chunks_name_their_path(chunk: dict[str, Any], path: str) -> None:
    data = b"data: " + orjson.dumps(chunk) + b"\n\n"
    with pytest.raises(WireFormatError) as info:
        list(ADAPTER.stream_response([data], context(MODEL)))
    assert info.value.path == path and info.value.provider == "openai"


@pytest.mark.parametrize(
    ("field", "value"),
    [("temperature", "0.2"), ("top_p", True), ("max_completion_tokens", 5.5), ("stop", 3), ("tools", {})],
)
def test_mistyped_request_options_are_wire_format_errors_at_their_field(field: str, value: Any) -> None:
    """What the provider itself would refuse is refused on import, at the field, not replayed."""
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], field: value}
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == field


@pytest.mark.parametrize(
    ("status", "body", "error_type", "retryable"),
    [
        (
            429,
            {
                "error": {
                    "message": "slow down",
                    "type": "requests",
                    "param": None,
                    "code": "rate_limit_exceeded",
                }
            },
            "requests",
            True,
        ),
        (
            500,
            {"error": {"message": "oops", "type": "server_error", "param": None, "code": None}},
            "server_error",
            True,
        ),
        (
            400,
            {
                "error": {
                    "message": "bad role",
                    "type": "invalid_request_error",
                    "param": "messages.[2].role",
                    "code": None,
                }
            },
            "invalid_request_error",
            False,
        ),
        (
            401,
            {
                "error": {
                    "message": "Incorrect API key",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            },
            "invalid_request_error",
            False,
        ),
        (
            429,
            {
                "error": {
                    "message": "You exceeded your current quota, please check your plan and billing details.",
                    "type": "insufficient_quota",
                    "param": None,
                    "code": "insufficient_quota",
                }
            },
            "insufficient_quota",
            False,
        ),
        (
            None,
            {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}},
            "requests",
            True,
        ),
        (502, b"<html>Bad gateway</html>", "http_502", True),
        (404, '{"error": "model not found"}', "http_404", False),
    ],
)
def test_parse_error(status: int | None, body: Any, error_type: str, retryable: bool) -> None:
    error = ADAPTER.parse_error(body, status)
    assert (error.error_type, error.retryable, error.status_code, error.provider) == (
        error_type,
        retryable,
        status,
        "openai",
    )
    if status == 400:
        assert "bad role (param messages.[2].role)" in str(error)


# --- mid-session swap ------------------------------------------------------------------------


def test_swap_from_anthropic_every_tool_result_matches_its_call(tmp_path: Path) -> None:
    messages, ids = swapped_session(tmp_path)
    body = ADAPTER.to_wire(messages, [WEATHER_TOOL, READ_TOOL], options(MODEL, ids, workspace=tmp_path))
    calls = {c["id"] for m in body["messages"] for c in m.get("tool_calls", [])}
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert set(results) == calls and len(calls) == 2
    assert ids.provider_id(tid(1), "openai") in calls


def test_llama_cpp_ids_are_re_minted_for_openai_and_stay_stable() -> None:
    """A 50-character id from an OpenAI-compatible server maps to canonical, then to a ≤40 id."""
    ids = ToolIdMap(SESSION)
    answer = ADAPTER.from_wire_response(
        recorded("openai", "response_llamacpp.json"), context("openai:qwen3-8b", ids)
    )
    call = answer.content[1]
    assert isinstance(call, ToolUseBlock)
    long_id = "kT3v9QmX2LpR7wBn4YcJ8dHsA1fG6uZe0NqW5xVb2MrK9tPjLs"
    assert len(long_id) == 50 and ids.resolve_incoming("openai", long_id) == call.id
    history = [msg(1, Role.user, [text("weather?")]), answer, tool_result(3, call.id, [text("14 C")])]
    body = ADAPTER.to_wire(history, [WEATHER_TOOL], options(MODEL, ids))
    sent = body["messages"][1]["tool_calls"][0]["id"]
    assert len(sent) <= 40 and body["messages"][2]["tool_call_id"] == sent
    again = ADAPTER.to_wire(history, [WEATHER_TOOL], options(MODEL, ToolIdMap.from_dict(ids.to_dict())))
    assert again["messages"][1]["tool_calls"][0]["id"] == sent
    contract.check_request(body)


def test_openrouter_upstream_ids_continue_on_openai() -> None:
    ids = ToolIdMap(SESSION)
    ids.bind(tid(7), "openrouter", "toolu_bdrk_01JqXvNcTy8Lm3Kd5Wp2Rs9Ab7Cd4Ef")
    history = [
        msg(1, Role.user, [text("read it")]),
        assistant(
            2,
            [ToolUseBlock(type="tool_use", id=tid(7), name="read_file", input={"path": "a"})],
            model="openrouter:anthropic/claude-sonnet-4.6",
        ),
        tool_result(3, tid(7), [text("content")]),
    ]
    body = ADAPTER.to_wire(history, [READ_TOOL], options(MODEL, ids))
    assert body["messages"][1]["tool_calls"][0]["id"] == body["messages"][2]["tool_call_id"]
    assert len(body["messages"][2]["tool_call_id"]) <= 40


# --- estimate --------------------------------------------------------------------------------

ESTIMATE_BOUND = 0.30
"""chars/4 over-counts o200k English prose and JSON punctuation: the estimate errs high (safe for budgets)."""


@pytest.mark.parametrize(
    ("request_name", "response_name"),
    [("request_tools", "response_tools"), ("request_followup", "response_text")],
)
def test_estimate_input_tokens_error_is_bounded(request_name: str, response_name: str) -> None:
    """Measured against prompt_tokens of the paired recorded-shape response (see module doc)."""
    imported: WireImport = ADAPTER.from_wire_request(
        recorded("openai", f"{request_name}.json"), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    actual = recorded("openai", f"{response_name}.json")["usage"]["prompt_tokens"]
    estimate = ADAPTER.estimate_input_tokens(imported.messages, imported.tools)
    error = abs(estimate - actual) / actual
    print(f"{request_name}: estimate {estimate} vs {actual} prompt tokens, error {error:.1%}")
    assert error <= ESTIMATE_BOUND
    assert estimate >= actual * 0.95  # errs high, not low


def test_estimate_counts_images() -> None:
    plain = [msg(1, Role.user, [text("x" * 400)])]
    with_image = [msg(1, Role.user, [text("x" * 400), image(MediaSourceKind.url, "https://e.com/a.png")])]
    assert ADAPTER.estimate_input_tokens(with_image, []) - ADAPTER.estimate_input_tokens(plain, []) == 765


# --- transport facts -------------------------------------------------------------------------


def test_endpoint_and_auth() -> None:
    assert (
        ADAPTER.endpoint("https://api.openai.com/v1/", "gpt-4.1", stream=True)
        == "https://api.openai.com/v1/chat/completions"
    )
    assert ADAPTER.auth_headers("sk-x") == {"Authorization": "Bearer sk-x"}
    assert ADAPTER.auth_headers(None) == {}
    assert (ADAPTER.name, ADAPTER.default_base_url, ADAPTER.api_key_env) == (
        "openai",
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
    )


def test_streaming_and_tool_choice_options() -> None:
    ids = ToolIdMap(SESSION)
    user = [msg(1, Role.user, [text("hi")])]
    for choice, wire in [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_weather", {"type": "function", "function": {"name": "get_weather"}}),
    ]:
        body = ADAPTER.to_wire(user, [WEATHER_TOOL], options(MODEL, ids, tool_choice=choice))
        assert body["tool_choice"] == wire
        contract.check_request(body)
    plain = ADAPTER.to_wire(user, [], options(MODEL, ids))
    assert plain == {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
    assert isinstance(ADAPTER.to_wire(user, [], options(MODEL, ids, stream=True))["stream_options"], dict)
    assert TextDeltaEvent and ToolUseEndEvent and UsageUpdateEvent  # imported for readers of the event names


# --- OpenAI-compatible servers (llama-cpp-python) ---------------------------------------


def test_function_call_beside_tool_calls_is_ignored_as_a_duplicate() -> None:
    """llama-cpp-python copies tool_calls[0] into the deprecated function_call field."""
    import metis.adapters
    from metis.assembly import RequestContext
    from metis.ids import ToolIdMap

    long_id = "call_" + "x" * 54  # llama.cpp mints ids far beyond OpenAI's 40 characters
    call = {
        "id": long_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gemma3-270m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call],
                    "function_call": call["function"],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    ids = ToolIdMap("sess_llama")
    message = metis.adapters.get("openai").from_wire_response(
        body, RequestContext(session_id="sess_llama", model="openai:gemma3-270m", tool_ids=ids)
    )
    (block,) = [b for b in message.content if b.type == "tool_use"]
    assert block.input == {"city": "Paris"}
    assert ids.resolve_incoming("openai", long_id) == block.id
    assert len(ids.outgoing(block.id, "openai")) <= 40


def test_deprecated_function_call_alone_is_still_refused() -> None:
    import metis.adapters
    import pytest
    from metis.assembly import RequestContext
    from metis.errors import WireFormatError
    from metis.ids import ToolIdMap

    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "finish_reason": "function_call",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "function_call": {"name": "f", "arguments": "{}"},
                },
            }
        ],
    }
    with pytest.raises(WireFormatError, match="function_call"):
        metis.adapters.get("openai").from_wire_response(
            body, RequestContext(session_id="s", model="openai:gpt-5", tool_ids=ToolIdMap("s"))
        )


def test_empty_content_directive_sends_an_empty_string_beside_tool_calls() -> None:
    import metis.adapters
    from metis.adapters import AdapterOptions
    from metis.ids import ToolIdMap, new_tool_id

    call = new_tool_id()
    assistant = build_message(
        "assistant",
        [{"type": "tool_use", "id": call, "name": "f", "input": {}}],
        session_id="s",
        created_at="2026-05-08T12:00:00Z",
        model="openai:gpt-5",
        provider="openai",
        routing={"mode": "default", "chosen_model": "openai:gpt-5", "reason": "r"},
        usage={
            "input_tokens": 1,
            "output_tokens": 1,
            "cost_usd": "0",
            "pricing_version": "2026-05-08",
            "latency_ms": 1,
        },
    )
    adapter = metis.adapters.get("openai")
    default = adapter.to_wire(
        [assistant], [], AdapterOptions(model="openai:gpt-5", session_id="s", tool_ids=ToolIdMap("s"))
    )
    compat = adapter.to_wire(
        [assistant],
        [],
        AdapterOptions(
            model="openai:gpt-5",
            session_id="s",
            tool_ids=ToolIdMap("s"),
            extra={"metis": {"empty_content": ""}},
        ),
    )
    assert default["messages"][0]["content"] is None
    assert compat["messages"][0]["content"] == ""
    assert "metis" not in compat
