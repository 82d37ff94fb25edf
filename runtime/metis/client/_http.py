"""Reading provider HTTP responses: error bodies to typed errors, bodies to JSON.

Shared by the sync and async clients so both turn a 4xx/5xx into the adapter's own
ProviderError (the provider's message, not httpx's) and decide retries the same way.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from ..adapters import Adapter
from ..errors import ProviderError, WireFormatError
from ._retry import RetryPolicy, parse_retry_after


def error_body(raw: bytes) -> Any:
    """An error body as JSON when it is JSON, else its text (an HTML 502 page, say)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", errors="replace")


def provider_error(adapter: Adapter, response: httpx.Response, raw: bytes) -> ProviderError:
    """The adapter's typed error for an HTTP error response."""
    return adapter.parse_error(error_body(raw), response.status_code)


def retry_delay(
    policy: RetryPolicy, attempt: int, response: httpx.Response, error: ProviderError
) -> float | None:
    """Seconds to wait before retrying this error response, or None to give up now."""
    if not policy.should_retry_status(response.status_code, provider_says_retryable=error.retryable):
        return None
    return policy.delay(attempt, retry_after=parse_retry_after(response.headers))


def json_body(adapter: Adapter, raw: bytes) -> dict[str, Any]:
    """A successful response body as a JSON object."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise WireFormatError(
            f"response is not JSON: {exc}", provider=adapter.name, raw=raw[:500].decode(errors="replace")
        ) from None
    if not isinstance(value, dict):
        raise WireFormatError(
            "response is not a JSON object", provider=adapter.name, raw=raw[:500].decode(errors="replace")
        )
    return value


RETRYABLE_TRANSPORT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.RemoteProtocolError)
"""Failures before a response started: the request never reached the model, so retrying is safe."""

__all__ = ["RETRYABLE_TRANSPORT", "error_body", "json_body", "provider_error", "retry_delay"]
