"""Reading provider HTTP responses: error bodies to typed errors, bodies to JSON.

Shared by the sync and async clients so both turn a 4xx/5xx into the adapter's own
ProviderError (the provider's message, not httpx's), a 3xx into NotAReplyError, read
bodies within the same bounds, and decide retries the same way.
"""

from __future__ import annotations

from typing import Any

import httpx

from .. import _json
from ..adapters import Adapter
from ..errors import BodyLimitError, MetisError, NotAReplyError, ProviderError, WireFormatError
from ._deadline import Deadline
from ._errors import ReplyNotSavedError, RequestCancelledError, RequestTimeoutError, TransportError
from ._retry import RetryPolicy, parse_retry_after
from ._stream import StreamRun, not_a_reply

ERROR_BODY_LIMIT = 1024 * 1024
"""Bytes of an error (or redirect) body read, once inflated: an error says what it has to
say in far less; the rest of a larger one (a compression bomb) is never inflated."""


class Body:
    """The bytes of a body read whole, bounded once inflated (`_inflate` hands them on in
    pieces of at most 64 KiB).

    `add` says whether there is room for more: past `limit` the body is `cut` and the
    reader stops, so a compressed bomb costs at most `limit` plus one piece.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cut = False
        self._parts: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> bool:
        room = self.limit - self._size
        if len(chunk) > room:
            chunk, self.cut = chunk[:room], True
        self._parts.append(chunk)
        self._size += len(chunk)
        return not self.cut

    def data(self) -> bytes:
        return b"".join(self._parts)

    def reply(self, name: str) -> bytes:
        """The whole body of a reply; BodyLimitError when it was cut (never parsed half)."""
        if self.cut:
            raise BodyLimitError(
                f"the response body inflates past {self.limit} bytes",
                limit=self.limit,
                provider=name,
                hint="a compressed bomb or a broken server; raise max_event_chars if a reply is this large",
            )
        return self.data()


def error_body(raw: bytes) -> Any:
    """An error body as JSON when it is JSON, else its text (an HTML 502 page, say)."""
    try:
        return _json.loads(raw)
    except _json.JSONDecodeError:
        return raw.decode("utf-8", errors="replace")


def provider_error(adapter: Adapter, response: httpx.Response, body: Body) -> ProviderError:
    """The typed error for a response that is not a success: the adapter's own for a 4xx or
    5xx (its text cut at ERROR_BODY_LIMIT), NotAReplyError for a 3xx (never followed: a
    POST is not re-sent elsewhere unasked, and a redirect's body is not the reply even
    when it looks like one)."""
    status = response.status_code
    if status < 400:
        return not_a_reply(adapter.name, status, body.data(), location=response.headers.get("location"))
    return adapter.parse_error(error_body(body.data()), status)


def retry_delay(
    policy: RetryPolicy, attempt: int, response: httpx.Response, error: ProviderError, deadline: Deadline
) -> float | None:
    """Seconds to wait before retrying this error response, or None to give up now (also
    when the wait would end past the send deadline: the server's error says more then)."""
    if isinstance(error, NotAReplyError):
        return None
    if not policy.should_retry_status(response.status_code, provider_says_retryable=error.retryable):
        return None
    delay = policy.delay(attempt, retry_after=parse_retry_after(response.headers))
    if delay is None or not deadline.allows(delay):
        return None
    return delay


def failed_attempt(
    adapter: Adapter,
    response: httpx.Response,
    body: Body,
    *,
    policy: RetryPolicy,
    attempt: int,
    deadline: Deadline,
) -> float:
    """The wait before the next attempt after a response that is not a success (its body read
    to `body`); its typed error (`provider_error`) raised when there is to be none."""
    error = provider_error(adapter, response, body)
    delay = retry_delay(policy, attempt, response, error, deadline)
    if delay is None:
        raise error
    return delay


def attempt_request(
    http: httpx.Client | httpx.AsyncClient,
    url: str,
    content: bytes,
    headers: dict[str, str],
    deadline: Deadline,
) -> httpx.Request:
    """One attempt's POST, its network timeout cut to what is left of `deadline`."""
    return http.build_request(
        "POST", url, content=content, headers=headers, timeout=deadline.timeout(http.timeout)
    )


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


def send_failure(
    exc: httpx.HTTPError, *, name: str, url: str, policy: RetryPolicy, attempt: int, deadline: Deadline
) -> float:
    """Seconds to wait before retrying after `exc` while sending, or the typed error to raise.

    One decision for the sync and async clients: only failures before a response started
    are retried, and only while the wait ends inside the send deadline; a timeout or any
    other transport failure ends the request (a timeout cut short by the send deadline
    says so).
    """
    if isinstance(exc, RETRYABLE_TRANSPORT):
        delay = policy.delay(attempt)
        if delay is not None and deadline.allows(delay):
            return delay
        raise TransportError(f"cannot reach {name} at {url}: {exc}", provider=name) from exc
    if isinstance(exc, httpx.TimeoutException):
        if deadline.passed():
            raise deadline.error(name, last=exc) from exc
        raise RequestTimeoutError(f"{name} timed out: {exc}", provider=name) from exc
    raise TransportError(f"request to {name} failed: {exc}", provider=name) from exc


def read_failure(exc: httpx.HTTPError, *, name: str, deadline: Deadline, expired: bool = False) -> MetisError:
    """The typed error for a failure while reading a whole (non-streamed) response;
    `expired`: the send deadline's watchdog or timer cut the read."""
    if expired or deadline.passed():
        return deadline.error(name, last=exc)
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeoutError(f"{name} timed out: {exc}", provider=name)
    return TransportError(f"reading the {name} response failed: {exc}", provider=name)


def stream_failure(
    exc: BaseException, run: StreamRun, *, name: str, deadline: Deadline, expired: bool = False
) -> MetisError | None:
    """Save what arrived as CANCELLED and return the typed error for an interrupted stream.

    None means "re-raise `exc` as it is" (e.g. asyncio.CancelledError, after saving). A
    MetisError (a malformed event) is a failed exchange: what arrived is saved as ERROR.
    `expired`: the stream deadline cut the stream (its watchdog or timer). When the store
    fails while saving, the ReplyNotSavedError that says so is what is returned.
    """
    if isinstance(exc, MetisError):
        try:
            run.fail(exc)
        except ReplyNotSavedError as lost:
            return lost
        return None
    if expired or (isinstance(exc, httpx.HTTPError) and deadline.passed()):
        return stream_cut(run, deadline, name=name)
    try:
        partial = run.cancel()
    except ReplyNotSavedError as lost:
        return lost
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


def stream_cut(run: StreamRun, deadline: Deadline, *, name: str) -> MetisError:
    """What arrived saved as CANCELLED, and the stream deadline's error pointing at it."""
    try:
        partial = run.cancel()
    except ReplyNotSavedError as lost:
        return lost
    return deadline.error(name, partial=partial)


__all__ = [
    "ERROR_BODY_LIMIT",
    "RETRYABLE_TRANSPORT",
    "Body",
    "error_body",
    "json_body",
    "provider_error",
    "read_failure",
    "retry_delay",
    "send_failure",
    "stream_cut",
    "stream_failure",
]
