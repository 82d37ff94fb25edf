"""Shared benchmark plumbing: rows, timing (best of rounds, taken in turns), peak memory, and
the conversation builder the benchmarks make their data with."""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from metis.store._codec import GcPaused

_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)  # the providers' `contracts` fixtures (tests/contracts) are benchmark data

T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
"""The benchmark conversations' clock: every `created_at` is at or after it."""

Turn = list[tuple[str, list[dict[str, Any]], dict[str, Any]]]
"""One round of a conversation: (role, content, metadata) documents of its messages, in order."""


@dataclass
class Row:
    """One reported measurement, optionally beside a floor and a target ratio."""

    area: str
    name: str
    value: float
    unit: str
    floor: float | None = None
    floor_name: str | None = None
    target: str | None = None  # e.g. "<= 1.5x floor", "<= 20 us"
    ok: bool | None = None

    @property
    def ratio(self) -> float | None:
        """value / floor (for throughput rows the caller inverts before building the row)."""
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
        }


def interleaved(fns: Mapping[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """Least of `repeat` results of each function, called in turns (round after round).

    Each function times its own work and returns the seconds it measured (a run, a call,
    wall or CPU time, as its caller chooses). A measurement and its floor timed one after
    the other can land in different spells of a busy machine (this 2-core VM drifts by half
    within a minute), which skews their ratio; run in alternation, a slow spell hits both.
    """
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], fn())
    return best


def per_call_interleaved(fns: dict[str, Callable[[], object]], *, repeat: int = 7) -> dict[str, float]:
    """Seconds per call of each function, best of `repeat` rounds taken in turns (`interleaved`).

    Each round calls a function as many times as take at least 50 ms (counted once, before
    the rounds).

    The cyclic garbage collector is paused while timing, for both alike: the bodies built
    and parsed here are acyclic (freed by reference counting), and a collection's cost
    depends on everything else the benchmark process holds, not on the code measured. With
    it running, the orjson floor of one body was seen to vary threefold between runs.
    """
    timers = {name: _per_call(fn, _calls_for(fn)) for name, fn in fns.items()}
    gc.collect()
    with GcPaused(True):
        return interleaved(timers, repeat)


def _per_call(fn: Callable[[], object], number: int) -> Callable[[], float]:
    """A timer: seconds per call of `fn`, over `number` calls in a row (wall time)."""

    def timed() -> float:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        return (time.perf_counter() - start) / number

    return timed


def _calls_for(fn: Callable[[], object]) -> int:
    """How many calls of `fn` take at least 50 ms (at most a million)."""
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
    from metis_schema.v2 import Message

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
                "schema_version": 2,
            }
            out.append(Message.model_validate(document))
    return out[:n]
