"""The in-process event sink: the three spec'd events travel here, lossy drops do not (§7.3)."""

from __future__ import annotations

import typing

from metis.events import Event, EventType, RecordingSink, emit, null_sink


def test_event_types_are_exactly_the_three_spec_events() -> None:
    assert set(typing.get_args(EventType)) == {
        "tool_input_invalid",
        "routing_constraint_failure",
        "route.decided",
    }
    # Lossy projection is a WARN log line, never an event (§7.3, §11.1.6).
    assert not any("drop" in name or "lossy" in name for name in typing.get_args(EventType))


def test_emit_delivers_type_and_payload() -> None:
    sink = RecordingSink()
    emit(sink, "route.decided", chosen_model="anthropic:claude-sonnet-4-6", mode="default")
    assert sink.events == [
        Event("route.decided", {"chosen_model": "anthropic:claude-sonnet-4-6", "mode": "default"})
    ]


def test_emit_without_a_sink_is_a_no_op() -> None:
    emit(None, "tool_input_invalid", tool_name="x")
    null_sink(Event("tool_input_invalid", {}))


def test_recording_sink_filters_by_type_and_keeps_order() -> None:
    sink = RecordingSink()
    emit(sink, "route.decided", n=1)
    emit(sink, "tool_input_invalid", n=2)
    emit(sink, "route.decided", n=3)
    assert [e.payload["n"] for e in sink.of_type("route.decided")] == [1, 3]
    assert [e.type for e in sink.events] == ["route.decided", "tool_input_invalid", "route.decided"]


def test_any_callable_is_a_sink() -> None:
    seen: list[str] = []
    emit(lambda event: seen.append(event.type), "routing_constraint_failure", model="m")
    assert seen == ["routing_constraint_failure"]


def test_events_are_immutable() -> None:
    event = Event("route.decided", {"a": 1})
    try:
        event.type = "tool_input_invalid"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("Event must be frozen")
