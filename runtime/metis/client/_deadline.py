"""Total deadlines: how long one send, and one stream, may take in all.

httpx's timeouts are per operation: a read timeout of 2 s is met by a server that sends a
keep-alive comment, or one byte, every second, for as long as it likes. A deadline bounds
the whole: the *send* (every attempt, the waits between them, and a non-streamed body
read to its end) and the *stream* (a streamed body, from its headers to its last byte).
Past it the request ends with a `DeadlineExceededError` that names the deadline; a stream
keeps what arrived as CANCELLED first, as any interrupted stream does.

Each deadline is enforced three ways, so neither silence nor dribbling outlasts it: every
httpx timeout of a request is capped at the time left; the time left is checked whenever
bytes arrive; and while a body is read, the sync client arms a watchdog that shuts the
connection's socket when the deadline passes (a blocked read then returns at once), where
the async client runs the whole send, and the whole stream, under `asyncio.timeout`.

One gap is left in the sync client: before a response exists there is no socket to shut
(httpx does not expose it), so a server that dribbles its *headers* a byte at a time is
bounded by httpcore's 100 KiB header limit, not by the send deadline; silence there is
still cut by the capped timeouts.
"""

from __future__ import annotations

import contextlib
import math
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Literal

import httpx
from metis_schema.v3 import Message

from ..errors import ClientError
from ._errors import DeadlineExceededError

DEFAULT_SEND_DEADLINE = 900.0
"""Seconds one send may take in all (attempts, retry waits, a non-streamed body): above the
600 s read timeout a long non-streamed generation may need, far below "forever"."""
DEFAULT_STREAM_DEADLINE = 3600.0
"""Seconds one streamed body may take: an hour covers the longest generations providers
stream; a server dribbling keep-alives past that is not producing a reply."""

Which = Literal["send", "stream"]


def checked_deadline(name: str, seconds: float | None) -> float | None:
    """`seconds` when it is a usable deadline (positive and finite) or None (no deadline)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise ClientError(f"{name} must be a positive number of seconds or None, got {seconds!r:.40}")
    if seconds <= 0:
        raise ClientError(f"{name} must be a positive number of seconds or None, got {seconds!r:.40}")
    return float(seconds)


@dataclass(frozen=True)
class Deadlines:
    """The client's two deadlines, in seconds (None: none)."""

    send: float | None = DEFAULT_SEND_DEADLINE
    stream: float | None = DEFAULT_STREAM_DEADLINE

    def __post_init__(self) -> None:
        checked_deadline("send_deadline", self.send)
        checked_deadline("stream_deadline", self.stream)


class Deadline:
    """One running deadline: started now on `clock`, `seconds` long (None: unbounded)."""

    def __init__(self, which: Which, seconds: float | None, clock: Callable[[], float]) -> None:
        self.which = which
        self.seconds = seconds
        self.clock = clock
        self.ends = None if seconds is None else clock() + seconds

    def remaining(self) -> float | None:
        """Seconds left (never negative), None without a deadline."""
        return None if self.ends is None else max(self.ends - self.clock(), 0.0)

    def passed(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0.0

    def check(self, provider: str) -> None:
        """Raise the deadline's error once it has passed (called whenever bytes arrive)."""
        if self.passed():
            raise self.error(provider)

    def allows(self, delay: float) -> bool:
        """Whether waiting `delay` seconds (before a retry) still ends inside the deadline."""
        left = self.remaining()
        return left is None or delay < left

    def timeout(self, base: httpx.Timeout) -> httpx.Timeout:
        """`base` with each of its timeouts capped at the time left."""
        left = self.remaining()
        if left is None:
            return base
        left = max(left, 0.001)  # zero would mean "no timeout" to some backends

        def cap(value: float | None) -> float:
            return left if value is None else min(value, left)

        return httpx.Timeout(
            connect=cap(base.connect), read=cap(base.read), write=cap(base.write), pool=cap(base.pool)
        )

    def error(
        self, provider: str, *, partial: Message | None = None, last: BaseException | None = None
    ) -> DeadlineExceededError:
        """The typed error: which deadline, how long, and what was kept or last went wrong."""
        option = f"{self.which}_deadline"
        message = f"{provider}: the {self.which} deadline of {self.seconds:g}s passed"
        if partial is not None:
            message += "; kept what arrived as CANCELLED"
        if last is not None:
            message += f" (last failure: {last})"
        return DeadlineExceededError(
            message,
            which=self.which,
            seconds=self.seconds,
            partial=partial,
            provider=provider,
            message_id=partial.id if partial is not None else None,
            hint=f"raise Client({option}=...) if the server is slow but making progress",
        )


class Watchdog:
    """Shuts a sync response's socket when `deadline` passes, so a read blocked on a silent
    server returns at once (httpx then raises, and `fired` says why). Without a socket
    (an injected transport) it only marks `fired`; the per-chunk check still holds."""

    def __init__(self, response: httpx.Response, deadline: Deadline) -> None:
        self.response = response
        self.fired = threading.Event()
        left = deadline.remaining()
        self._timer = None if left is None else threading.Timer(left, self._fire)
        if self._timer is not None:
            self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        if self._timer is not None:
            self._timer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _fire(self) -> None:
        self.fired.set()
        stream = self.response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


__all__ = [
    "DEFAULT_SEND_DEADLINE",
    "DEFAULT_STREAM_DEADLINE",
    "Deadline",
    "Deadlines",
    "Watchdog",
    "checked_deadline",
]
