"""Shared benchmark plumbing: rows, timing (best of repeats) and peak memory."""

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


def per_call(fn: Callable[[], object], *, number: int | None = None, repeat: int = 5) -> float:
    """Seconds per call of `fn`: the best of `repeat` runs of `number` calls (auto-sized)."""
    if number is None:
        number = 1
        while True:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            if time.perf_counter() - start > 0.05 or number >= 1_000_000:
                break
            number *= 4
    best = float("inf")
    gc.collect()
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def peak_memory(fn: Callable[[], object]) -> int:
    """Peak bytes allocated (tracemalloc) while running `fn` once."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
