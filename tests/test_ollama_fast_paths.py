"""Ollama fast paths give what the general paths give.

- `to_wire` fills its tool id -> name map while walking the history: a result still gets the
  name of the *last* call with its id (as with a map built up front), a result whose call comes
  later still gets its name, silently; assistant turns of text and calls take a short path
  that writes the same dicts as the general one.
- Response reading takes the usual shapes with exact type tests and no path strings; any
  other value goes to the checked readers: random messages must read the same, or raise the
  same typed error with the same path.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metis import TextBlock, ThinkingBlock, ToolIdMap, ToolUseBlock
from metis.adapters import ollama
from metis.errors import WireFormatError
from test_ollama_adapter import assistant, lossy_records, options, tid, tool_result, user, wire

MODEL = "ollama:qwen3-8b"


def call(n: int, name: str = "get_weather") -> ToolUseBlock:
    return ToolUseBlock(id=tid(n), name=name, input={"city": "Paris"})


def test_a_reused_tool_id_names_its_result_after_the_last_call() -> None:
    history = [
        user(1, TextBlock(text="hi")),
        assistant(2, call(1, "read_file")),
        tool_result(3, tid(1), TextBlock(text="first")),
        assistant(4, TextBlock(text="again"), call(1, "get_weather")),  # the same id, another tool
        tool_result(5, tid(1), TextBlock(text="second")),
    ]
    messages = wire(history, [], options(MODEL, ToolIdMap("s")))["messages"]
    assert [m.get("tool_name") for m in messages if m["role"] == "tool"] == ["get_weather", "get_weather"]


def test_a_result_before_its_call_gets_its_name_without_a_warn(caplog: pytest.LogCaptureFixture) -> None:
    history = [
        user(1, TextBlock(text="hi")),
        tool_result(2, tid(2), TextBlock(text="early")),
        assistant(3, TextBlock(text="calling"), call(2, "read_file")),
        tool_result(4, tid(9), TextBlock(text="orphan")),
    ]
    with caplog.at_level(logging.WARNING):
        messages = ollama.ADAPTER.to_wire(history, [], options(MODEL, ToolIdMap("s")))["messages"]
    assert messages[1] == {"role": "tool", "content": "early", "tool_name": "read_file"}
    assert messages[3] == {"role": "tool", "content": "orphan"}
    assert [r.block_type for r in lossy_records(caplog)] == ["tool_result.tool_name"]  # type: ignore[attr-defined]


def test_assistant_turn_shapes() -> None:
    ids = ToolIdMap("s")
    ids.bind(tid(2), "ollama", "call_b")
    own = {"adapter": "ollama", "tool_call_index": {tid(2): 1, tid(3): True}}
    history = [
        user(1, TextBlock(text="hi")),
        assistant(2, TextBlock(text="a"), call(1), call(2), provider_raw=own),  # fast path
        assistant(3, call(3)),  # fast path, no text
        assistant(4, call(4), TextBlock(text="after")),  # text after a call: general path
        assistant(5, TextBlock(text="x"), TextBlock(text="y"), call(5)),  # two texts: general path
        assistant(6, ThinkingBlock(text="hmm"), TextBlock(text="z")),  # thinking: general path
        assistant(7, call(6), provider_raw={"adapter": "other", "tool_call_index": {tid(6): 4}}),
    ]
    messages = wire(history, [], options(MODEL, ids))["messages"]
    function = {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert messages[1:] == [
        {
            "role": "assistant",
            "content": "a",
            "tool_calls": [{"function": function}, {"id": "call_b", "function": {**function, "index": 1}}],
        },
        {"role": "assistant", "content": "", "tool_calls": [{"function": function}]},
        {"role": "assistant", "content": "after", "tool_calls": [{"function": function}]},
        {"role": "assistant", "content": "x\n\ny", "tool_calls": [{"function": function}]},
        {"role": "assistant", "content": "z", "thinking": "hmm"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": function}]},
    ]


def test_text_then_one_call_without_replay_data() -> None:
    history = [
        user(1, TextBlock(text="hi")),
        assistant(2, TextBlock(text="a"), call(1)),
        assistant(
            3,
            TextBlock(text="b"),
            call(2),
            provider_raw={"adapter": "ollama", "tool_call_index": {tid(2): 0}},
        ),
    ]
    messages = wire(history, [], options(MODEL, ToolIdMap("s")))["messages"]
    function = {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert messages[1:] == [
        {"role": "assistant", "content": "a", "tool_calls": [{"function": function}]},
        {"role": "assistant", "content": "b", "tool_calls": [{"function": {**function, "index": 0}}]},
    ]


# --- response reading ---------------------------------------------------------------------------

VALUES = st.sampled_from([None, "", "x", 0, 3, True, 1.5, [], {}, ["a"], {"a": 1}, '{"a": 1}'])


@st.composite
def calls(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(VALUES)
    function: dict[str, Any] = {}
    for key, good in (("name", "get_weather"), ("arguments", {"city": "Oslo"}), ("index", 0)):
        if draw(st.integers(0, 3)):
            function[key] = good if draw(st.integers(0, 2)) else draw(VALUES)
    value: dict[str, Any] = {"function": function if draw(st.integers(0, 5)) else draw(VALUES)}
    if draw(st.booleans()):
        value["id"] = draw(st.sampled_from(["call_1", "", None, 4]))
    return value


@st.composite
def chunks(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 19)) == 0:
        return draw(VALUES)
    message: dict[str, Any] = {"role": "assistant"}
    for key, good in (("content", "hello"), ("thinking", "hmm")):
        if draw(st.booleans()):
            message[key] = good if draw(st.integers(0, 2)) else draw(VALUES)
    if draw(st.booleans()):
        message["tool_calls"] = (
            draw(st.lists(calls(), max_size=3)) if draw(st.integers(0, 4)) else draw(VALUES)
        )
    if draw(st.integers(0, 3)) == 0:
        message["images"] = draw(st.sampled_from([["aGk="], [], None, "x"]))
    return message


def read(reader: Any, value: Any) -> Any:
    try:
        return reader(value, "message")
    except WireFormatError as exc:
        return str(exc), exc.path


@settings(max_examples=500, deadline=None)
@given(chunks())
def test_message_reader_fast_path_equals_the_checked_one(value: Any) -> None:
    assert read(ollama._read_chunk, value) == read(ollama._read_chunk_checked, value)


GOOD_FUNCTION = {"name": "get_weather", "arguments": {"city": "Oslo"}}


@pytest.mark.parametrize(
    "value",
    [
        {
            "content": "a",
            "tool_calls": [{"function": GOOD_FUNCTION}, {"id": "c1", "function": GOOD_FUNCTION}],
        },
        {"tool_calls": [{"id": "", "function": GOOD_FUNCTION}]},
        {"tool_calls": [{"id": None, "function": {**GOOD_FUNCTION, "index": 2}}]},
        {"tool_calls": [{"function": {**GOOD_FUNCTION, "index": True}}]},
        {"tool_calls": [{"function": {**GOOD_FUNCTION, "index": 1.0}}]},
        {"tool_calls": [{"function": {**GOOD_FUNCTION, "arguments": '{"a": 1}'}}]},
        {"tool_calls": [{"function": {"name": "f"}}]},
        {"tool_calls": [{"function": {**GOOD_FUNCTION, "name": ""}}]},
        {"tool_calls": [{"id": 5, "function": GOOD_FUNCTION}]},
        {"thinking": "", "content": None, "images": []},
        {"thinking": 1},
        {"content": "a", "images": "x"},
    ],
)
def test_message_reader_cases(value: Any) -> None:
    assert read(ollama._read_chunk, value) == read(ollama._read_chunk_checked, value)


def checked_final(raw: Any, body: dict[str, Any]) -> None:
    """`_Raw.record_final` as written before its inline reads."""
    raw.model = ollama._opt_str(body, "model", "") or raw.model
    raw.done_reason = ollama._opt_str(body, "done_reason", "")
    for key in ollama._DURATIONS:
        value = ollama._opt_int(body, key, "")
        if value is not None:
            raw.durations_ns[key] = value


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "model": VALUES | st.just("qwen3:8b"),
            "done_reason": VALUES | st.just("stop"),
            "total_duration": VALUES | st.integers(0, 10**12),
            "eval_duration": VALUES | st.integers(0, 10**12),
        },
    )
)
def test_final_fields_fast_path_equals_the_checked_one(body: dict[str, Any]) -> None:
    def outcome(record: Any) -> Any:
        raw = ollama._Raw(model="earlier")
        try:
            record(raw, body)
        except WireFormatError as exc:
            return str(exc), exc.path
        return raw.as_dict()

    assert outcome(lambda raw, b: raw.record_final(b, "")) == outcome(checked_final)
