"""One system's way of doing one benchmark job, and what its output must look like."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple


@dataclass(frozen=True)
class Contender:
    """`run` does the job once (the timed call); `shape` reads what its output holds, to be
    compared with what a correct output must hold before anything is timed."""

    system: str
    run: Callable[[], Any]
    shape: Callable[[Any], Any]
    first: float | None = None
    """Seconds the checking run took (None: not checked yet)."""

    def checked(self, expected: Any) -> Contender:
        """This contender, after one run whose output has the `expected` shape (else an
        AssertionError naming the system: a system doing less than the job is not timed)."""
        start = time.perf_counter()
        out = self.run()
        first = time.perf_counter() - start
        got = self.shape(out)
        if got != expected:
            raise AssertionError(f"{self.system}: output has {got}, a correct one has {expected}")
        return dataclasses.replace(self, first=first)


class ReplyShape(NamedTuple):
    """What a parsed reply holds: content blocks (text counted once), tool calls, and the
    output tokens of its usage."""

    blocks: int
    tool_calls: int
    output_tokens: int
