"""When to retry a request and how long to wait, without doing any waiting itself.

Providers rate-limit (429) and overload (5xx, Anthropic's 529) routinely; a client that
gives up at once is useless and one that hammers back is worse. The policy is
exponential backoff with full jitter, capped, and a server's own `Retry-After`
(seconds or an HTTP date; OpenAI's `retry-after-ms` too) wins over the computed delay
because the server knows when it will have capacity. The caller does the sleeping, so
tests inject a fake sleep and run instantly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ..errors import ClientError, retryable_status


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait per `retry-after-ms` / `Retry-After` (seconds or HTTP date), or None.

    A server's hint is untrusted: one that is not a finite number (`nan`, `inf`, `1e400`) or
    date is no hint (None: the policy's own backoff applies), a negative one means now, and
    `RetryPolicy.delay` caps a huge one, so no header can make the client sleep without end
    or hand `time.sleep` / `asyncio.sleep` a value they refuse or never return from.
    """
    millis = _seconds(headers.get("retry-after-ms"), scale=1000.0)
    if millis is not None:
        return millis
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
    except OverflowError:
        return None


def _seconds(text: str | None, *, scale: float = 1.0) -> float | None:
    """`text` as a finite, non-negative number of seconds (divided by `scale`), else None."""
    if text is None:
        return None
    try:
        value = float(text.strip()) / scale
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return max(value, 0.0)


@dataclass
class RetryPolicy:
    """Bounded exponential backoff with full jitter; `Retry-After` honoured up to `max_delay`."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    rng: Callable[[], float] = field(default=random.random)

    def __post_init__(self) -> None:
        for name in ("base_delay", "max_delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
                raise ClientError(f"{name} must be a finite number of seconds >= 0, got {value!r:.40}")

    def backoff(self, attempt: int) -> float:
        """Delay before retry number `attempt + 1` when the server gave no hint."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(attempt, 64))
        return ceiling * (0.5 + 0.5 * self.rng())  # jitter in [ceiling/2, ceiling]

    def delay(self, attempt: int, *, retry_after: float | None = None) -> float | None:
        """Seconds to wait before another attempt, or None when retries are exhausted."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None and math.isfinite(retry_after):
            return min(max(retry_after, 0.0), self.max_delay)
        return self.backoff(attempt)

    def should_retry_status(self, status: int, *, provider_says_retryable: bool) -> bool:
        """Whether an HTTP error status is worth another attempt."""
        return retryable_status(status) or provider_says_retryable


__all__ = ["RetryPolicy", "parse_retry_after"]
