"""Shared benchmark plumbing: rows, timing (best of rounds, taken in turns) and peak memory."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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


def per_call_interleaved(fns: dict[str, Callable[[], object]], *, repeat: int = 7) -> dict[str, float]:
    """Seconds per call of each function, best of `repeat` rounds taken in turns.

    A measurement and its floor timed one after the other can land in different spells of
    a busy machine (this 2-core VM drifts by half within a minute), which skews their
    ratio; run in alternation, a slow spell hits both.

    The cyclic garbage collector is paused while timing, for both alike: the bodies built
    and parsed here are acyclic (freed by reference counting), and a collection's cost
    depends on everything else the benchmark process holds, not on the code measured. With
    it running, the orjson floor of one body was seen to vary threefold between runs.
    """
    numbers = {name: _calls_for(fn) for name, fn in fns.items()}
    best = dict.fromkeys(fns, float("inf"))
    gc.collect()
    paused = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in fns.items():
                number = numbers[name]
                start = time.perf_counter()
                for _ in range(number):
                    fn()
                best[name] = min(best[name], (time.perf_counter() - start) / number)
    finally:
        if paused:
            gc.enable()
    return best


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
