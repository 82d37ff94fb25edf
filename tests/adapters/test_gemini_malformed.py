"""Gemini malformed input: typed errors with a path, or a logged clean drop that keeps the raw
data; never a bare KeyError/TypeError/JSONDecodeError/ValidationError."""

from __future__ import annotations

import contextlib
import copy
import logging
import random
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metis.errors import MetisError, WireFormatError
from metis.events import RecordingSink
from metis.ids import ToolIdMap
from metis_schema.v3 import MessageStatus, StopReason

from tests.support.gemini_support import (
    ADAPTER,
    SESSION,
    context,
    options,
    raw_bytes,
    sse,
    sse_chunks,
    user,
    wire,
)


def response(*parts: Any, finish: Any = "STOP") -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": finish}]}


# --- tool arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize("args", ['{"city": "Par', "[1, 2]", 42, ["a"]])
def test_arguments_that_are_not_an_object_are_kept_raw(args: Any, caplog: pytest.LogCaptureFixture) -> None:
    sink = RecordingSink()
    ids = ToolIdMap(SESSION)
    body = response({"functionCall": {"name": "get_weather", "args": args}})
    with caplog.at_level(logging.WARNING, logger="metis"):
        message = ADAPTER.from_wire_response(body, context(ids, events=sink))
    call = message.content[0]
    assert call.type == "tool_use" and call.input == {}
    raw = (message.metadata.provider_raw or {})["unparsed_arguments"]
    assert raw == {call.id: args if isinstance(args, str) else orjson.dumps(args).decode()}
    assert len(sink.of_type("tool_input_invalid")) == 1
    assert any("kept raw text" in r.getMessage() for r in caplog.records)
    # replay to Gemini sends back exactly what Gemini sent
    out = ADAPTER.to_wire([user("x"), message], [], options(ids))
    assert out["contents"][1]["parts"][0]["functionCall"]["args"] == args


def test_arguments_given_as_json_text_of_an_object_are_parsed() -> None:
    message = ADAPTER.from_wire_response(
        response({"functionCall": {"name": "f", "args": '{"a": 1}'}}), context()
    )
    assert message.content[0].input == {"a": 1}  # type: ignore[union-attr]


def test_missing_args_are_an_empty_object() -> None:
    message = ADAPTER.from_wire_response(response({"functionCall": {"name": "f"}}), context())
    assert message.content[0].input == {}  # type: ignore[union-attr]


# --- unknown and malformed parts ------------------------------------------------------------------


def test_unknown_part_kinds_are_kept_for_replay_with_a_warn(caplog: pytest.LogCaptureFixture) -> None:
    part = {"videoMetadata": {"fps": 1}, "fileData": {"mimeType": "video/mp4", "fileUri": "gs://b/v.mp4"}}
    with caplog.at_level(logging.WARNING, logger="metis"):
        message = ADAPTER.from_wire_response(response({"text": "a"}, part, {"text": "b"}), context())
    assert [b.text for b in message.content] == ["a", "b"]  # type: ignore[union-attr]
    assert (message.metadata.provider_raw or {})["extra_parts"] == [[1, part]]
    assert any("no canonical block" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ([], ""),
        ({"candidates": {"content": 1}}, "candidates.content"),
        ({"candidates": "x"}, "candidates"),
        ({"candidates": [{"content": {"parts": [5]}}]}, "candidates[0].content.parts[0]"),
        ({"candidates": [{"content": {"parts": "text"}}]}, "candidates[0].content.parts"),
        ({"candidates": [{"content": {"parts": [{"text": ["a"]}]}}]}, "candidates[0].content.parts[0].text"),
        (
            {"candidates": [{"content": {"parts": [{"text": "a", "thought": "yes"}]}}]},
            "candidates[0].content.parts[0].thought",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
            "candidates[0].content.parts[0].functionCall.name",
        ),
        (
            {"candidates": [{"content": {"parts": [{"functionCall": "f"}]}}]},
            "candidates[0].content.parts[0].functionCall",
        ),
        (
            {"candidates": [{"content": {"parts": [{"text": "a", "thoughtSignature": 12}]}}]},
            "candidates[0].content.parts[0].thoughtSignature",
        ),
        ({"candidates": [{"finishReason": 1.5}]}, "candidates[0].finishReason"),
        ({"candidates": [{"finishReason": True}]}, "candidates[0].finishReason"),
        ({"candidates": [], "usageMetadata": {"promptTokenCount": -1}}, "usageMetadata.promptTokenCount"),
        ({"candidates": [], "usageMetadata": {"promptTokenCount": "many"}}, "usageMetadata.promptTokenCount"),
        (
            {"candidates": [], "usageMetadata": {"candidatesTokenCount": True}},
            "usageMetadata.candidatesTokenCount",
        ),
        ({"candidates": [], "usageMetadata": []}, "usageMetadata"),
        ({"promptFeedback": {"blockReason": []}}, "promptFeedback.blockReason"),
        ({"responseId": 7}, "responseId"),
    ],
)
def test_malformed_responses_are_typed_errors_with_a_path(body: Any, path: str) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_response(body, context())
    assert info.value.path == path and info.value.provider == "gemini"


def test_call_arguments_json_cannot_carry_are_a_typed_error() -> None:
    """Only a Python caller can hand over an infinity; it is refused where it sits."""
    body = response({"text": "a"}, {"functionCall": {"name": "f", "args": {"x": float("inf")}}})
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_response(body, context())
    assert info.value.path == "candidates[0].content.parts[1].functionCall.args.x"


def test_a_response_without_finish_reason_still_completes() -> None:
    message = ADAPTER.from_wire_response(
        {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}, context()
    )
    assert (
        message.metadata.status == MessageStatus.complete and message.metadata.stop_reason == StopReason.other
    )


def test_an_empty_body_is_an_error_message_not_an_exception() -> None:
    message = ADAPTER.from_wire_response({}, context())
    assert message.metadata.status == MessageStatus.error
    assert (message.metadata.provider_raw or {})["error"]["code"] == "EMPTY_RESPONSE"


# --- request import -------------------------------------------------------------------------------


def _request(*contents: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"contents": list(contents), **extra}


CALLS = {
    "role": "model",
    "parts": [{"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "b", "args": {}}}],
}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "contents"),
        ("contents", ""),
        (_request({"role": "assistant", "parts": [{"text": "x"}]}), "contents[0].role"),
        (
            _request({"role": "user", "parts": [{"functionCall": {"name": "a"}}]}),
            "contents[0].parts[0].functionCall",
        ),
        (
            _request(CALLS, {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}),
            "contents[1].parts",
        ),
        (
            _request({"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]}),
            "contents[0].parts",
        ),
        (
            _request(
                CALLS,
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "a", "response": {}}},
                        {"functionResponse": {"name": "c", "response": {}}},
                    ],
                },
            ),
            "contents[1].parts[1].functionResponse.name",
        ),
        (
            _request(
                CALLS,
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "a", "response": "ok"}},
                        {"functionResponse": {"name": "b", "response": {}}},
                    ],
                },
            ),
            "contents[1].parts[0].functionResponse.response",
        ),
        (
            _request({"parts": [{"inlineData": {"mimeType": "image/PNG", "data": "AAAA"}}]}),
            "contents[0].parts[0]",
        ),
        (
            _request(
                {"parts": [{"text": "x"}]}, tools=[{"functionDeclarations": [{"name": "get weather!"}]}]
            ),
            "tools[0].functionDeclarations[0]",
        ),
        (
            _request(
                {"parts": [{"text": "x"}]}, tools=[{"functionDeclarations": [{"description": "no name"}]}]
            ),
            "tools[0].functionDeclarations[0].name",
        ),
        (
            _request({"parts": [{"text": "x"}]}, generationConfig={"maxOutputTokens": "lots"}),
            "generationConfig.maxOutputTokens",
        ),
        (_request({"parts": [{"text": "x"}]}, toolConfig=[]), "toolConfig"),
        (_request({"parts": [{"text": 1}]}), "contents[0].parts[0].text"),
    ],
)
def test_malformed_requests_are_typed_errors_with_a_path(body: Any, path: str) -> None:
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == path


def test_parts_with_no_canonical_block_in_a_request_are_dropped_cleanly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A PDF is a document block (v2); code in a user turn, or media without a type or data, has
    no canonical block: each is listed in `dropped` with one WARN."""
    pdf = {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0xLjQK"}}
    untyped = {"inlineData": {"data": "JVBERi0xLjQK"}}
    empty = {"fileData": {"mimeType": "video/mp4"}}
    code = {"executableCode": {"code": "1"}}
    body = _request({"parts": [{"text": "summarize"}, pdf, code, untyped, empty]})
    with caplog.at_level(logging.WARNING, logger="metis"):
        imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [b.type for b in imported.messages[0].content] == ["text", "document"]
    assert [(d["path"], d["value"]) for d in imported.dropped] == [
        ("contents[0].parts[2]", code),
        ("contents[0].parts[3]", untyped),
        ("contents[0].parts[4]", empty),
    ]
    assert sum("listed in WireImport.dropped" in r.getMessage() for r in caplog.records) == 3


def test_an_empty_model_turn_is_dropped_cleanly() -> None:
    body = _request(
        {"parts": [{"text": "hi"}]}, {"role": "model", "parts": []}, {"parts": [{"text": "again"}]}
    )
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [m.role.value for m in imported.messages] == ["user", "user"]
    assert imported.dropped[0]["path"] == "contents[1]"


def test_request_strings_and_single_objects_are_read_leniently() -> None:
    body = {
        "systemInstruction": "Be brief.",
        "contents": {"parts": {"text": "hi"}},
        "tools": {"functionDeclarations": {"name": "ping"}},
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [m.role.value for m in imported.messages] == ["system", "user"]
    assert [t.name for t in imported.tools] == ["ping"]


# --- never a bare exception -------------------------------------------------------------------------

_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "x", "STOP", "model", "user", "image/png", "AAAA"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "candidates",
                    "content",
                    "parts",
                    "text",
                    "thought",
                    "thoughtSignature",
                    "functionCall",
                    "name",
                    "args",
                    "id",
                    "finishReason",
                    "usageMetadata",
                    "promptTokenCount",
                    "role",
                    "functionResponse",
                    "response",
                    "inlineData",
                    "mimeType",
                    "data",
                    "fileData",
                    "fileUri",
                    "contents",
                    "tools",
                    "functionDeclarations",
                    "parameters",
                    "systemInstruction",
                    "generationConfig",
                    "toolConfig",
                    "error",
                    "promptFeedback",
                    "blockReason",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json)
def test_arbitrary_json_never_raises_a_bare_exception(value: Any) -> None:
    for call in (
        lambda: ADAPTER.from_wire_response(value, context()),
        lambda: ADAPTER.from_wire_request(value, session_id=SESSION, tool_ids=ToolIdMap(SESSION)),
        lambda: ADAPTER.assemble_stream(
            [sse([value]) if isinstance(value, dict) else orjson.dumps(value)], context()
        ),
    ):
        with contextlib.suppress(MetisError):
            call()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12))
def test_mutated_fixtures_never_raise_a_bare_exception(seed: int, count: int) -> None:
    """Deep coverage: a few values of realistic bodies swapped for values of other types."""
    rng = random.Random(seed)
    response = copy.deepcopy(wire("response_thinking_tools.json"))
    request = copy.deepcopy(wire("request_recorded.json"))
    chunks = sse_chunks(raw_bytes("stream_thinking_tools.sse"))
    for _ in range(count):
        _mutate(response, rng)
        _mutate(request, rng)
        _mutate(chunks, rng)
    for call in (
        lambda: ADAPTER.from_wire_response(response, context()),
        lambda: ADAPTER.from_wire_request(request, session_id=SESSION, tool_ids=ToolIdMap(SESSION)),
        lambda: ADAPTER.assemble_stream([sse(chunks)], context()),
    ):
        with contextlib.suppress(MetisError):
            call()


def _mutate(node: Any, rng: random.Random) -> None:
    """Replace one random value somewhere in `node` with a value of another type."""
    while True:
        keys = (
            list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        )
        if not keys:
            return
        key = rng.choice(keys)
        child = node[key]
        if isinstance(child, dict | list) and child and rng.random() < 0.7:
            node = child
            continue
        node[key] = rng.choice([None, 0, -1, "", "x", [], {}, True, 1.5, [1], {"a": 1}])
        return


def test_a_request_field_named_dropped_is_kept_apart_from_the_drops() -> None:
    body = {**_request({"parts": [{"text": "hi"}]}), "dropped": "the caller's own field"}
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.provider_options == {
        "gemini": {"dropped": "the caller's own field", "metis": {"spelling": {"roleless": [0]}}}
    }
    assert imported.dropped == []
