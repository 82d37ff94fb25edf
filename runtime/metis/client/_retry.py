"""When to retry a request and how long to wait, without doing any waiting itself.

Providers rate-limit (429) and overload (5xx, Anthropic's 529) routinely; a client that
gives up at once is useless and one that hammers back is worse. The policy is
exponential backoff with full jitter, capped, and a server's own `Retry-After`
(seconds or an HTTP date; OpenAI's `retry-after-ms` too) wins over the computed delay
because the server knows when it will have capacity. The caller does the sleeping, so
tests inject a fake sleep and run instantly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from ..errors import retryable_status


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait per `retry-after-ms` / `Retry-After` (seconds or HTTP date), or None."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


@dataclass
class RetryPolicy:
    """Bounded exponential backoff with full jitter; `Retry-After` honoured up to `max_delay`."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    rng: Callable[[], float] = field(default=random.random)

    def backoff(self, attempt: int) -> float:
        """Delay before retry number `attempt + 1` when the server gave no hint."""
        ceiling = min(self.max_delay, self.base_delay * 2.0**attempt)
        return ceiling * (0.5 + 0.5 * self.rng())  # jitter in [ceiling/2, ceiling]

    def delay(self, attempt: int, *, retry_after: float | None = None) -> float | None:
        """Seconds to wait before another attempt, or None when retries are exhausted."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return min(retry_after, self.max_delay)
        return self.backoff(attempt)

    def should_retry_status(self, status: int, *, provider_says_retryable: bool) -> bool:
        """Whether an HTTP error status is worth another attempt."""
        return retryable_status(status) or provider_says_retryable


__all__ = ["RetryPolicy", "parse_retry_after"]
