"""A small in-process event sink for the events spec'd as events (not logs).

Three event types travel here: `tool_input_invalid` (§5.2.4), `routing_constraint_failure`
(§8.4) and `route.decided` (§4.3). Lossy-projection diagnostics are deliberately *not*
events: they are WARN log lines (§7.3). The default sink does nothing, so emitting costs
a function call; pass a callable to observe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

EventType = Literal["tool_input_invalid", "routing_constraint_failure", "route.decided"]


@dataclass(frozen=True)
class Event:
    """One event: its type and a JSON-compatible payload."""

    type: EventType
    payload: Mapping[str, Any]


class EventSink(Protocol):
    """Anything callable with an Event."""

    def __call__(self, event: Event) -> None: ...


def null_sink(event: Event) -> None:
    """The default sink: drops every event."""


@dataclass
class RecordingSink:
    """A sink that keeps every event, for tests and the CLI."""

    events: list[Event] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of_type(self, type_: EventType) -> list[Event]:
        """Recorded events of one type."""
        return [e for e in self.events if e.type == type_]


def emit(sink: EventSink | None, type_: EventType, **payload: Any) -> None:
    """Send an event to `sink` (no-op when None)."""
    (sink or null_sink)(Event(type_, payload))


__all__ = ["Event", "EventSink", "EventType", "RecordingSink", "emit", "null_sink"]
