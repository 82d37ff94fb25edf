"""Gemini fast paths give what the general paths give.

- `from_wire_response` folds a whole response straight into blocks (`_PartFolder(direct=True)`)
  and takes the usual parts without the checked reads; the reference here is the event path
  it replaced: every part through the checked `fold`, the events into a StreamAssembler.
  Random bodies (valid or not) must give equal messages, or the same typed error.
- `to_wire` fills its call map while walking the history; a result whose call comes later in
  the history, and results answering calls in another order, are placed as with a map built
  up front.
- Plain-text tool results skip the JSON parse; text that is a JSON object is still sent as one.
"""

from __future__ import annotations

from typing import Any

import pytest
from gemini_support import ADAPTER, MODEL, assistant, context, normalized, options, sse, tool_result, user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metis.adapters import gemini
from metis.assembly import RequestContext, StreamAssembler
from metis.errors import MetisError
from metis.ids import ToolIdMap, new_tool_id
from metis.usage import normalize_usage
from metis_schema.v1 import Message, StreamEvent


def checked_read(response: Any, body: dict[str, Any], path: str) -> list[StreamEvent]:
    """`_Response.read` as written before its inline reads: every field through the checked
    readers, every part through the checked `_PartFolder.fold`."""
    field, opt_str, as_dict, as_list = gemini._field, gemini._opt_str, gemini._dict, gemini._list
    response.response_id = (
        opt_str(field(body, "responseId", "response_id"), path + "responseId") or response.response_id
    )
    version = field(body, "modelVersion", "model_version")
    response.model_version = opt_str(version, path + "modelVersion") or response.model_version
    events: list[StreamEvent] = []
    candidates = body.get("candidates")
    if candidates is not None and (candidates := as_list(candidates, path + "candidates")):
        where = path + "candidates[0]"
        candidate = as_dict(candidates[0], where)
        content = candidate.get("content")
        if content is not None:
            parts = as_dict(content, where + ".content").get("parts") or []
            for j, part in enumerate(as_list(parts, where + ".content.parts")):
                events.extend(response.folder.fold(part, f"{where}.content.parts[{j}]"))
        reason = field(candidate, "finishReason", "finish_reason")
        name = gemini._enum_name(reason, gemini._FINISH_BY_NUMBER, "FINISH_REASON", where + ".finishReason")
        response.finish_reason = name or response.finish_reason
        message = field(candidate, "finishMessage", "finish_message")
        response.finish_message = opt_str(message, where + ".finishMessage") or response.finish_message
    response._prompt_feedback(body, path)
    usage = field(body, "usageMetadata", "usage_metadata")
    if usage is not None:
        counts = normalize_usage("gemini", as_dict(usage, path + "usageMetadata"))
        if counts != response.counts:
            response.counts = counts
    return events


def reference(body: Any, ctx: RequestContext) -> Message:
    """The event path `from_wire_response` took before the direct one (`checked_read`, the
    events folded by a StreamAssembler)."""
    wrapped = body[0] if isinstance(body, list) and len(body) == 1 else body
    if isinstance(wrapped, dict) and "error" in wrapped:
        raise ADAPTER.parse_error(body)
    response = gemini._Response(ctx)
    response.read = lambda body, path: checked_read(response, body, path)  # type: ignore[method-assign]
    events = response.consume(body, "")
    if not response.completed:
        events.extend(response.complete())
    assembler = StreamAssembler(ctx, "gemini")
    assembler.feed_all(events)
    return assembler.finish(response.provider_raw())


def outcome(fn: Any, body: Any) -> Any:
    """The normalized message, or (error type, message, path) of the typed error raised."""
    try:
        return normalized(fn(body, context(ToolIdMap("sess_gemini"))))
    except MetisError as exc:
        return type(exc).__name__, str(exc), getattr(exc, "path", None)


SIGNATURES = st.sampled_from(["c2lnLWE=", "c2lnLWI=", ""])
TEXTS = st.one_of(st.sampled_from(["", "a", "bc"]), st.text(max_size=4))
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=4,
)


@st.composite
def parts(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text", "thought", "call", "call", "call", "signature", "extra", "odd"]))
    part: dict[str, Any]
    if kind == "text":
        part = {"text": draw(TEXTS)}
    elif kind == "thought":
        part = {"text": draw(TEXTS), "thought": draw(st.sampled_from([True, True, False, "yes"]))}
    elif kind == "call":
        call: dict[str, Any] = {
            "name": draw(st.sampled_from(["get_weather", "get_weather", "f", "", None, 3]))
        }
        args = draw(
            st.one_of(
                st.just({"city": "Paris", "units": "metric"}),
                JSON_VALUES,
                st.sampled_from(['{"a": 1}', '{"a": ', "[1]", ""]),
            )
        )
        if draw(st.integers(0, 3)):
            call["args"] = args
        if draw(st.booleans()):
            call["id"] = draw(st.sampled_from(["call-1", "", None, 7]))
        part = {draw(st.sampled_from(["functionCall", "functionCall", "function_call"])): call}
    elif kind == "signature":
        part = {"text": ""} if draw(st.booleans()) else {}
    elif kind == "extra":
        part = draw(
            st.sampled_from([{"executableCode": {"code": "1"}}, {"inlineData": {"data": "AA=="}}, {}])
        )
    else:
        return draw(
            st.sampled_from([5, "x", None, {"text": 3}, {"functionCall": "f"}, {"functionCall": None}])
        )
    if draw(st.booleans()):
        key = draw(st.sampled_from(["thoughtSignature", "thoughtSignature", "thought_signature"]))
        part[key] = draw(st.one_of(SIGNATURES, st.sampled_from([None, 1])))
    return part


@st.composite
def bodies(draw: st.DrawFn) -> Any:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": draw(st.lists(parts(), max_size=5))}}
    finish = draw(st.sampled_from(["STOP", "MAX_TOKENS", 2, 10, "FINISH_REASON_UNSPECIFIED", None, "", 1.5]))
    if finish is not None:
        candidate[draw(st.sampled_from(["finishReason", "finish_reason"]))] = finish
    if draw(st.booleans()):
        candidate["finishMessage"] = draw(st.sampled_from(["stopped", "", 3]))
    body: dict[str, Any] = {"candidates": [candidate]}
    if draw(st.booleans()):
        usage = {"promptTokenCount": 12, "candidatesTokenCount": draw(st.integers(0, 3))}
        body["usageMetadata"] = draw(st.sampled_from([usage, usage, usage, 5, [], None]))
    if draw(st.booleans()):
        body[draw(st.sampled_from(["responseId", "response_id"]))] = draw(st.sampled_from(["r-1", "", 5]))
    if draw(st.booleans()):
        body["modelVersion"] = draw(st.sampled_from(["gemini-2.5-flash", None]))
    if draw(st.booleans()):
        body["promptFeedback"] = {"blockReason": draw(st.sampled_from(["SAFETY", 1, "OTHER"]))}
    if draw(st.integers(0, 9)) == 0:
        body["candidates"] = draw(st.sampled_from([[], "x", [3], {"content": candidate["content"]}]))
    return body


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
def test_whole_response_equals_the_event_path(body: dict[str, Any]) -> None:
    assert outcome(ADAPTER.from_wire_response, body) == outcome(reference, body)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies())
def test_whole_response_equals_the_assembled_stream(body: dict[str, Any]) -> None:
    whole = outcome(ADAPTER.from_wire_response, body)
    raw = {} if isinstance(whole, tuple) else whole["metadata"].get("provider_raw", {})
    if "finishReason" not in raw and "blockReason" not in raw:
        return  # a malformed or unfinished body: a stream has its own handling of those
    streamed = normalized(ADAPTER.assemble_stream([sse([body])], context(ToolIdMap("sess_gemini"))))
    assert whole == streamed


EDGE_PARTS: list[list[Any]] = [
    [{"text": "a", "thought": True, "thoughtSignature": "c2ln"}, {"text": "b", "thought": True}],
    [{"text": "", "thought": True, "thoughtSignature": "c2ln"}, {"text": "", "thought": True}],
    [{"text": "a", "thought": True}, {"text": "", "thought": True, "thoughtSignature": "c2ln"}],
    [{"text": "a"}, {"text": "", "thoughtSignature": "c2ln"}, {"text": "b"}],
    [{"text": "a", "thoughtSignature": "c2ln"}, {"text": "b", "thoughtSignature": "c2lnMg=="}],
    [{"text": "a", "thought_signature": "c2ln"}, {"thoughtSignature": "c2ln"}, {"text": "b"}],
    [{"functionCall": {"name": "f", "args": {"a": 1, "b": [2]}}, "thoughtSignature": "c2ln"}, {"text": "x"}],
    [{"function_call": {"name": "f", "args": "[1]"}}, {"functionCall": {"name": "g", "id": "c-1"}}],
    [{"functionCall": None, "text": "a"}, {"text": "b", "thought": False}, {"executableCode": {}}],
]


@pytest.mark.parametrize(
    "body",
    [
        *({"candidates": [{"content": {"parts": parts}, "finishReason": "STOP"}]} for parts in EDGE_PARTS),
        {"candidates": [{"finishReason": "SAFETY"}], "usageMetadata": {"promptTokenCount": 3}},
        {
            "candidates": [{"finishReason": "FINISH_REASON_UNSPECIFIED", "finishMessage": ""}],
            "responseId": "",
        },
        {"promptFeedback": {"blockReason": "SAFETY"}},
        [{"candidates": [{"content": {"parts": [{"text": "a"}]}}]}],
    ],
)
def test_edge_bodies_equal_the_event_path(body: Any) -> None:
    assert outcome(ADAPTER.from_wire_response, body) == outcome(reference, body)


# --- to_wire --------------------------------------------------------------------------------


def call(tool_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"city": name}}


def test_a_result_before_its_call_in_the_history_is_still_paired() -> None:
    first, second = new_tool_id(), new_tool_id()
    history = [
        user("hi"),
        tool_result(second, "late"),  # answers a call that only comes later in the history
        assistant([call(first, "get_time")], provider="gemini", model=MODEL),
        tool_result(first, "ok"),
        assistant([call(second)], provider="gemini", model=MODEL),
    ]
    contents = ADAPTER.to_wire(history, [], options(ToolIdMap("sess_gemini")))["contents"]
    assert contents[1] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "late"}}}],
    }
    assert contents[3]["parts"][0]["functionResponse"]["name"] == "get_time"


def test_a_batch_of_results_follows_the_order_of_the_calls() -> None:
    first, second = new_tool_id(), new_tool_id()
    history = [
        user("hi"),
        assistant([call(first, "get_time"), call(second)], provider="gemini", model=MODEL),
        tool_result(second, "b"),
        tool_result(first, "a"),
    ]
    contents = ADAPTER.to_wire(history, [], options(ToolIdMap("sess_gemini")))["contents"]
    names = [part["functionResponse"]["name"] for part in contents[2]["parts"]]
    assert names == ["get_time", "get_weather"]


@pytest.mark.parametrize(
    ("text", "is_error", "expected"),
    [
        ("plain", False, {"output": "plain"}),
        ("plain", True, {"error": "plain"}),
        ('{"a": 1}', False, {"a": 1}),
        (' \n\t{"a": 1}', False, {"a": 1}),
        ('{"error": "x"}', False, {"output": {"error": "x"}}),
        ('{"error": "x"}', True, {"error": "x"}),
        ('{"a": 1}', True, {"error": {"a": 1}}),
        ("\ufeff{}", False, {"output": "\ufeff{}"}),
        ("[1]", False, {"output": "[1]"}),
        ("{not json", False, {"output": "{not json"}),
        ("", False, {"output": ""}),
    ],
)
def test_result_object(text: str, is_error: bool, expected: dict[str, Any]) -> None:
    assert gemini._result_object(text, is_error) == expected
