"""Reading provider HTTP responses: error bodies to typed errors, bodies to JSON.

Shared by the sync and async clients so both turn a 4xx/5xx into the adapter's own
ProviderError (the provider's message, not httpx's) and decide retries the same way.
"""

from __future__ import annotations

from typing import Any

import httpx

from .. import _json
from ..adapters import Adapter
from ..errors import MetisError, ProviderError, WireFormatError
from ._errors import RequestCancelledError, RequestTimeoutError, TransportError
from ._retry import RetryPolicy, parse_retry_after
from ._stream import StreamRun


def error_body(raw: bytes) -> Any:
    """An error body as JSON when it is JSON, else its text (an HTML 502 page, say)."""
    try:
        return _json.loads(raw)
    except _json.JSONDecodeError:
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
        value = _json.loads(raw)
    except _json.JSONDecodeError as exc:
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


def send_failure(exc: httpx.HTTPError, *, name: str, url: str, policy: RetryPolicy, attempt: int) -> float:
    """Seconds to wait before retrying after `exc` while sending, or the typed error to raise.

    One decision for the sync and async clients: only failures before a response started
    are retried; a timeout or any other transport failure ends the request.
    """
    if isinstance(exc, RETRYABLE_TRANSPORT):
        delay = policy.delay(attempt)
        if delay is not None:
            return delay
        raise TransportError(f"cannot reach {name} at {url}: {exc}", provider=name) from exc
    if isinstance(exc, httpx.TimeoutException):
        raise RequestTimeoutError(f"{name} timed out: {exc}", provider=name) from exc
    raise TransportError(f"request to {name} failed: {exc}", provider=name) from exc


def read_failure(exc: httpx.HTTPError, *, name: str) -> MetisError:
    """The typed error for a failure while reading a whole (non-streamed) response."""
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeoutError(f"{name} timed out: {exc}", provider=name)
    return TransportError(f"reading the {name} response failed: {exc}", provider=name)


def stream_failure(exc: BaseException, run: StreamRun, *, name: str) -> MetisError | None:
    """Save what arrived as CANCELLED and return the typed error for an interrupted stream.

    None means "re-raise `exc` as it is" (e.g. asyncio.CancelledError, after saving). A
    MetisError (a malformed event) is a failed exchange: what arrived is saved as ERROR.
    """
    if isinstance(exc, MetisError):
        run.fail(exc)
        return None
    partial = run.cancel()
    if isinstance(exc, httpx.TimeoutException):
        message = f"{name} stream timed out; kept what arrived as CANCELLED"
        return RequestTimeoutError(message, partial=partial, provider=name, message_id=partial.id)
    if isinstance(exc, httpx.HTTPError):
        message = f"{name} stream broke: {exc}; kept what arrived as CANCELLED"
        return TransportError(message, partial=partial, provider=name, message_id=partial.id)
    if isinstance(exc, KeyboardInterrupt):
        return RequestCancelledError(
            "cancelled; kept what arrived as CANCELLED", partial=partial, message_id=partial.id
        )
    return None


__all__ = [
    "RETRYABLE_TRANSPORT",
    "error_body",
    "json_body",
    "provider_error",
    "read_failure",
    "retry_delay",
    "send_failure",
    "stream_failure",
]
