"""Shared benchmark plumbing: rows, timing (best of rounds, taken in turns), peak memory, and
the canonical conversation builder the store benchmarks make their data with."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
"""The benchmark conversations' clock: every `created_at` is at or after it."""

Turn = list[tuple[str, list[dict[str, Any]], dict[str, Any]]]
"""One round of a conversation: (role, content, metadata) documents of its messages, in order."""


@dataclass
class Row:
    """One reported measurement, optionally beside what it is measured against (a floor, or
    a peer library doing the same job) and a target for their ratio."""

    area: str
    name: str
    value: float
    unit: str
    floor: float | None = None
    floor_name: str | None = None
    target: str | None = None  # e.g. "<= 0.50 (metis 2x faster)"
    ok: bool | None = None
    detail: str | None = None
    """Anything else the row reports (the per-message times behind a growth ratio)."""

    @property
    def ratio(self) -> float | None:
        """value / floor: for timed rows, metis's time over the other's (below 1: metis is faster)."""
        if self.floor in (None, 0):
            return None
        assert self.floor is not None
        return self.value / self.floor

    def as_dict(self) -> dict[str, Any]:
        """JSON-compatible form for bench/results.json."""
        return {
            "area": self.area,
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "floor": self.floor,
            "floor_name": self.floor_name,
            "ratio": self.ratio,
            "target": self.target,
            "ok": self.ok,
            "detail": self.detail,
        }


def interleaved(fns: Mapping[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """Least of `repeat` results of each function, called in turns (round after round).

    Each function times its own work and returns the seconds it measured (a run, a call,
    wall or CPU time, as its caller chooses). Two systems timed one after the other can land
    in different spells of a busy machine (this 2-core VM drifts by half within a minute),
    which skews their ratio; run in alternation, a slow spell hits both.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], fn())
    return best


def per_call(
    fns: Mapping[str, Callable[[], object]], repeat: int, first: Mapping[str, float | None] | None = None
) -> dict[str, float]:
    """Seconds per call of each function, least of `repeat` rounds taken in turns (`interleaved`).

    A round calls a function as many times as take at least 50 ms (counted once, before the
    rounds, which also warms every function up; `first` may give the seconds a call already
    made took: one that took 50 ms or more is not called again to count). Objects alive
    before the rounds are frozen out of the cyclic collector (`gc.freeze`): a collection
    then costs what the code timed allocates, not what the benchmark process happens to
    hold, and that is the same for every system. The collector itself stays on, as it is in a user's process.
    """
    known = first or {}
    timers = {name: _timer(fn, _calls_for(fn, known.get(name))) for name, fn in fns.items()}
    gc.collect()
    gc.freeze()
    try:
        return interleaved(timers, repeat)
    finally:
        gc.unfreeze()


def _timer(fn: Callable[[], object], number: int) -> Callable[[], float]:
    """A timer: seconds per call of `fn`, over `number` calls in a row (wall time)."""

    def timed() -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - start) / number

    return timed


def _calls_for(fn: Callable[[], object], first: float | None = None) -> int:
    """How many calls of `fn` take at least 50 ms (at most a million)."""
    if first is not None and first > 0.05:
        return 1
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        if time.perf_counter() - start > 0.05 or number >= 1_000_000:
            return number
        number *= 4


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak bytes allocated (tracemalloc) while running `fn` once."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def conversation(
    n: int,
    turn: Callable[[str], Turn],
    *,
    session_id: str = "sess_bench",
    spacing: timedelta | None = None,
) -> list[Any]:
    """The first `n` messages of `turn(call_id)` repeated, each round with a new tool id.

    `turn` gives a round's messages as documents (it decides every role, block and
    metadata field); each gets a new message id and `session_id`, and is validated into a
    canonical `Message`. Every `created_at` is `T0`, or with `spacing`, the k-th message's
    (from 1) is `T0 + k * spacing`.
    """
    from metis.ids import new_message_id, new_tool_id
    from metis_schema import CURRENT_VERSION
    from metis_schema.v3 import Message

    out: list[Any] = []
    while len(out) < n:
        for role, content, metadata in turn(new_tool_id()):
            created_at = T0 if spacing is None else T0 + spacing * (len(out) + 1)
            document = {
                "id": new_message_id(),
                "session_id": session_id,
                "role": role,
                "content": content,
                "metadata": metadata,
                "created_at": created_at,
                "schema_version": CURRENT_VERSION,
            }
            out.append(Message.model_validate(document))
    return out[:n]
