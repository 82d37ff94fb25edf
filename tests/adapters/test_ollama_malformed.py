"""Malformed Ollama input fails with a typed error that says where, or is dropped cleanly
with a WARN and the raw text kept; lossy projection logs exactly one WARN per block."""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import logging
from typing import Any

import pytest
from metis import (
    CriticalBlockError,
    MetisError,
    ProviderError,
    TextBlock,
    ThinkingBlock,
    ToolIdMap,
    ToolUseBlock,
    WireFormatError,
)
from metis.events import RecordingSink

from tests.adapters.test_ollama_adapter import (
    ADAPTER,
    SESSION,
    assistant,
    context,
    load_wire,
    mid,
    options,
    tid,
    tool_result,
    user,
)

RESPONSE = load_wire("response_thinking_tools.json")


def mutated(path: tuple[Any, ...], value: Any, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A deep copy of `body` (default: the thinking+tools response) with one field replaced (or removed)."""
    result = copy.deepcopy(body if body is not None else RESPONSE)
    node: Any = result
    for key in path[:-1]:
        node = node[key]
    if value is _REMOVE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return result


_REMOVE = object()

BAD_RESPONSES = [
    # (path, value, expected error path)
    (("message",), _REMOVE, "message"),
    (("message",), "hello", "message"),
    (("message", "content"), ["a"], "message.content"),
    (("message", "thinking"), 3, "message.thinking"),
    (("message", "tool_calls"), {"function": {}}, "message.tool_calls"),
    (("message", "tool_calls", 0), "call", "message.tool_calls[0]"),
    (("message", "tool_calls", 0, "function"), _REMOVE, "message.tool_calls[0].function"),
    (("message", "tool_calls", 1, "function", "name"), _REMOVE, "message.tool_calls[1].function.name"),
    (("message", "tool_calls", 1, "function", "name"), 7, "message.tool_calls[1].function.name"),
    (
        ("message", "tool_calls", 0, "function", "arguments"),
        ["Paris"],
        "message.tool_calls[0].function.arguments",
    ),
    (  # a scalar failing a union: the path names no union branch
        ("message", "tool_calls", 0, "function", "arguments"),
        5,
        "message.tool_calls[0].function.arguments",
    ),
    (("message", "tool_calls", 0, "function", "index"), "0", "message.tool_calls[0].function.index"),
    (("message", "tool_calls", 0, "id"), 12, "message.tool_calls[0].id"),
    (("done",), False, "done"),
    (("done_reason",), 1, "done_reason"),
    (("prompt_eval_count",), "many", "prompt_eval_count"),
    (("eval_count",), -3, "eval_count"),
    (("total_duration",), 1.5, "total_duration"),
]


@pytest.mark.parametrize(("path", "value", "where"), BAD_RESPONSES, ids=[w for _, _, w in BAD_RESPONSES])
def test_malformed_response_is_a_wire_format_error_with_a_path(
    path: tuple[Any, ...], value: Any, where: str
) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_response(mutated(path, value), context("qwen3", ToolIdMap(SESSION)))
    assert info.value.path == where and info.value.provider == "ollama"


@pytest.mark.parametrize("body", [None, [], "text", 3])
def test_response_that_is_not_an_object(body: Any) -> None:
    with pytest.raises(
        WireFormatError, match=r"malformed ollama response: \(root\): Input should be a valid dictionary"
    ):
        ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION)))


def test_arguments_that_are_not_json_are_kept_raw_with_an_event(caplog: pytest.LogCaptureFixture) -> None:
    sink = RecordingSink()
    body = mutated(("message", "tool_calls", 0, "function", "arguments"), '{"city": "Paris", ')
    with caplog.at_level(logging.WARNING):
        message = ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION), events=sink))
    call = next(b for b in message.content if isinstance(b, ToolUseBlock))
    assert call.input == {}
    raw = message.metadata.provider_raw or {}
    assert raw["unparsed_arguments"] == {call.id: '{"city": "Paris", '}
    assert raw["string_arguments"] == [call.id]
    (event,) = sink.of_type("tool_input_invalid")
    assert event.payload["tool_use_id"] == call.id and event.payload["raw"] == '{"city": "Paris", '
    assert any("kept raw text" in r.getMessage() for r in caplog.records)
    # replayed to Ollama the call still carries an object (the server rejects strings)
    tool_ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(body, context("qwen3", tool_ids))
    sent = ADAPTER.to_wire([user(1, TextBlock(text="q")), message], [], options("qwen3", tool_ids))
    assert sent["messages"][-1]["tool_calls"][0]["function"]["arguments"] == {}


def test_unknown_done_reason_and_unknown_fields_are_tolerated() -> None:
    body = mutated(("done_reason",), "cancelled")
    body["message"]["tool_calls"][0]["function"]["extra"] = True
    body["logprobs"] = []
    message = ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION)))
    assert message.metadata.stop_reason == "other"
    assert (message.metadata.provider_raw or {})["done_reason"] == "cancelled"


# --- streams --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"not json\n", "stream line 1"),
        (b'{"message":{"content":"a"},"done":false}\n[1, 2]\n', "stream line 2"),
        (b'{"message":{"content":5},"done":false}\n', "stream line 1.message.content"),
        (b'{"message":{"content":"a"},"done":"no"}\n', "stream line 1.done"),
        (
            b'{"message":{"content":"","tool_calls":[{"function":{"arguments":{}}}]},"done":false}\n',
            "stream line 1.message.tool_calls[0].function.name",
        ),
        (b'{"message":{"content":""},"done":true,"eval_count":"x"}\n', "stream line 1.eval_count"),
    ],
)
def test_malformed_stream_lines(data: bytes, where: str) -> None:
    with pytest.raises(WireFormatError) as info:
        list(ADAPTER.stream_response([data], context("qwen3", ToolIdMap(SESSION))))
    assert info.value.path == where


def test_invalid_utf8_mid_stream_is_a_wire_format_error() -> None:
    with pytest.raises(WireFormatError, match="UTF-8"):
        list(
            ADAPTER.stream_response(
                [b'{"message":{"content":"\xff"},"done":false}\n'], context("qwen3", ToolIdMap(SESSION))
            )
        )


@pytest.mark.parametrize("pieces", [[], [b""], [""], [b"\n\n"], ["  \n"]])
def test_empty_streams_give_no_events(pieces: list[bytes | str]) -> None:
    assert list(ADAPTER.stream_response(pieces, context("qwen3", ToolIdMap(SESSION)))) == []


# --- requests ------------------------------------------------------------------------------------------

REQUEST = load_wire("request_qwen3.json")

BAD_REQUESTS = [
    (("model",), _REMOVE, "model"),
    (("model",), 3, "model"),
    (("messages",), {"role": "user"}, "messages"),
    (("messages", 0), "hi", "messages[0]"),
    (("messages", 0, "role"), "developer", "messages[0].role"),
    (("messages", 1, "content"), [{"type": "text", "text": "x"}], "messages[1].content"),
    (("messages", 1, "images"), ["!!notbase64!!"], "messages[1].images[0]"),
    (("messages", 1, "images"), [42], "messages[1].images[0]"),
    (
        ("messages", 2, "tool_calls", 0, "function", "arguments"),
        5,
        "messages[2].tool_calls[0].function.arguments",
    ),
    (("messages", 3, "tool_name"), "no_such_tool", "messages[3]"),
    (("messages", 4, "tool_name"), 9, "messages[4].tool_name"),
    (("tools",), {"type": "function"}, "tools"),
    (("tools", 0, "type"), "retrieval", "tools[0].type"),
    (("tools", 0, "function", "name"), _REMOVE, "tools[0].function.name"),
    (("tools", 1, "function", "parameters"), "object", "tools[1].function.parameters"),
    (("stream",), "yes", "stream"),
    (("options",), ["temperature"], "options"),
    (("options", "stop"), "<|im_end|>", "options.stop"),
    (("options", "num_predict"), "1024", "options.num_predict"),
    (("options", "temperature"), True, "options.temperature"),
]


@pytest.mark.parametrize(("path", "value", "where"), BAD_REQUESTS, ids=[w for _, _, w in BAD_REQUESTS])
def test_malformed_request_is_a_wire_format_error_with_a_path(
    path: tuple[Any, ...], value: Any, where: str
) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_request(
            mutated(path, value, REQUEST), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
        )
    assert info.value.path == where


def test_tool_result_without_a_preceding_call_is_refused() -> None:
    body = {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "42"}],
    }
    with pytest.raises(WireFormatError, match="answers no unanswered tool call") as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == "messages[1]"


def test_unknown_message_fields_are_logged_and_kept_not_lost_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = {"model": "qwen3:8b", "messages": [{"role": "user", "content": "x", "name": "bob"}]}
    with caplog.at_level(logging.WARNING):
        imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.messages[0].content == [TextBlock(text="x")]
    assert any("messages[0].name" in r.getMessage() for r in caplog.records)
    assert imported.dropped == [
        {"path": "messages[0].name", "value": "bob", "reason": "not an Ollama message field metis knows"}
    ]


def test_fields_a_role_cannot_carry_are_listed_as_dropped() -> None:
    image = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()
    body = {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "be brief", "images": [image]},
            {"role": "user", "content": "hi", "thinking": "", "tool_calls": []},  # empty: nothing lost
            {"role": "assistant", "content": "hello", "images": [image]},
        ],
        "tools": [
            {
                "type": "function",
                "strict": True,
                "function": {"name": "f", "description": "d", "parameters": {"type": "object"}, "x": 1},
            }
        ],
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    dropped = {(d["path"], d["reason"]) for d in imported.dropped}
    assert dropped == {
        ("messages[0].images", "SYSTEM messages do not carry images"),
        ("messages[2].images", "ASSISTANT messages do not carry images"),
        ("tools[0].strict", "not part of a canonical tool definition"),
        ("tools[0].function.x", "not part of a canonical tool definition"),
    }
    assert [d["value"] for d in imported.dropped if d["path"].endswith("images")] == [
        [image],
        [image],
    ]


def test_unknown_model_name_resolves_conservatively() -> None:
    body = {"model": "mistral-nemo:12b", "messages": [{"role": "user", "content": "x"}], "stream": False}
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.model == "ollama:mistral-nemo:12b"
    assert ADAPTER.to_wire(imported.messages, imported.tools, imported.options) == body


def test_never_a_bare_exception_from_random_json_shapes() -> None:
    """Feed type-confused variants of every field; only typed errors may come out."""
    samples: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], [None], {}, {"a": None}]
    for key in list(RESPONSE) + [f"message.{k}" for k in RESPONSE["message"]]:
        for sample in samples:
            path = tuple(key.split("."))
            with contextlib.suppress(MetisError):
                ADAPTER.from_wire_response(mutated(path, sample), context("qwen3", ToolIdMap(SESSION)))
    for key in REQUEST:
        for sample in samples:
            with contextlib.suppress(MetisError):
                ADAPTER.from_wire_request(
                    mutated((key,), sample, REQUEST), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
                )
    for sample in samples:
        line = json.dumps({"message": sample, "done": True, "prompt_eval_count": sample}).encode() + b"\n"
        with contextlib.suppress(MetisError):
            list(ADAPTER.stream_response([line], context("qwen3", ToolIdMap(SESSION))))


def test_error_bodies_raise_provider_errors() -> None:
    with pytest.raises(ProviderError) as info:
        ADAPTER.from_wire_response(
            {"error": "model 'qwen9' not found, try pulling it first"}, context("qwen3", ToolIdMap(SESSION))
        )
    assert info.value.error_type == "model_not_found" and not info.value.retryable
    empty = ADAPTER.parse_error("", 500)
    assert (empty.error_type, empty.retryable, empty.message) == ("http_500", True, "HTTP 500 http_500: ")
    text = ADAPTER.parse_error(b"404 page not found", 404)
    assert (text.error_type, text.retryable, text.message) == (
        "http_404",
        False,
        "HTTP 404 http_404: 404 page not found",
    )


# --- lossy projection ---------------------------------------------------------------------------------


def test_signed_thinking_writes_exactly_one_warn_with_five_fields(caplog: pytest.LogCaptureFixture) -> None:
    foreign = assistant(
        2,
        ThinkingBlock(text="secret reasoning", signature="c2lnbmF0dXJl"),
        TextBlock(text="ok"),
        provider="anthropic",
        model="anthropic:claude-sonnet-4-6",
    )
    sink = RecordingSink()
    with caplog.at_level(logging.DEBUG):
        body = ADAPTER.to_wire(
            [user(1, TextBlock(text="hi")), foreign], [], options("qwen3", ToolIdMap(SESSION))
        )
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    record = warnings[0]
    assert record.levelno == logging.WARNING and record.name == "metis.adapters"
    fields = {k: getattr(record, k) for k in ("session_id", "message_id", "block_type", "adapter", "reason")}
    assert fields["session_id"] == SESSION and fields["message_id"] == mid(2)
    assert fields["block_type"] == "thinking" and fields["adapter"] == "ollama" and fields["reason"]
    assert "secret reasoning" not in json.dumps(body)
    assert sink.events == []  # a log line, never an event: to_wire has no sink to emit to at all


def test_critical_block_that_cannot_go_raises() -> None:
    message = assistant(
        2, ThinkingBlock(text="must keep", signature="c2ln"), TextBlock(text="ok"), critical=[0]
    )
    with pytest.raises(CriticalBlockError) as info:
        ADAPTER.to_wire([user(1, TextBlock(text="hi")), message], [], options("qwen3", ToolIdMap(SESSION)))
    assert info.value.path == "content[0]" and info.value.message_id == mid(2)


def test_blocks_a_tool_result_cannot_carry_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    call = assistant(2, ToolUseBlock(id=tid(1), name="probe", input={}))
    # The schema no longer lets a tool_result hold thinking; a message built around the
    # models (model_construct, an older reader) still must not reach the wire with it.
    result = tool_result(3, tid(1), TextBlock(text="done"))
    inner = result.content[0]
    inner.__dict__["content"] = [*inner.content, ThinkingBlock(text="nested")]
    with caplog.at_level(logging.WARNING):
        body = ADAPTER.to_wire(
            [user(1, TextBlock(text="go")), call, result], [], options("qwen3", ToolIdMap(SESSION))
        )
    assert body["messages"][2] == {"role": "tool", "content": "done", "tool_name": "probe"}
    assert [getattr(r, "block_type", None) for r in caplog.records] == ["thinking in tool_result"]


def test_orphan_tool_result_is_sent_without_a_name_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    orphan = tool_result(2, tid(9), TextBlock(text="late result"))
    with caplog.at_level(logging.WARNING):
        body = ADAPTER.to_wire(
            [user(1, TextBlock(text="go")), orphan], [], options("qwen3", ToolIdMap(SESSION))
        )
    assert body["messages"][1] == {"role": "tool", "content": "late result"}
    assert [getattr(r, "block_type", None) for r in caplog.records] == ["tool_result.tool_name"]


def test_failing_url_fetcher_is_a_typed_error() -> None:
    from metis import MediaSourceKind

    from tests.adapters.test_ollama_adapter import image

    def fetcher(url: str) -> bytes:
        raise OSError("connection refused")

    message = user(1, image(MediaSourceKind.url, "https://example.com/a.png"))
    with pytest.raises(MetisError, match="could not fetch image"):
        ADAPTER.to_wire(
            [message], [], options("gemma3", ToolIdMap(SESSION), allow_url_fetch=True, url_fetcher=fetcher)
        )


def test_a_request_field_named_dropped_is_kept_apart_from_the_drops() -> None:
    body = {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "x", "name": "bob"}],
        "dropped": "the caller's own field",
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert {(d["path"], str(d["value"])) for d in imported.dropped} == {("messages[0].name", "bob")}
    # no Ollama field (the server ignores it): kept as Ollama's own, replayed as it was sent
    assert imported.options.provider_options == {
        "ollama": {"dropped": "the caller's own field", "metis": {"stream_sent": False}}
    }


def test_a_dropped_field_is_listed_as_it_was_sent() -> None:
    """An image is read into raw base64; a dropped one is listed as the string the client sent."""
    url = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()
    body = {"model": "qwen3:8b", "messages": [{"role": "system", "content": "be brief", "images": [url]}]}
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.dropped == [
        {"path": "messages[0].images", "value": [url], "reason": "SYSTEM messages do not carry images"}
    ]
