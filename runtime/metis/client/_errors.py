"""Client failures that carry what was saved before they happened.

A stream that stops early (a timeout, a dropped connection, Ctrl-C) is not lost: the
client persists what arrived as a CANCELLED message first, and the error it raises
points at that message so the caller can show or resume it.
"""

from __future__ import annotations

from metis_schema.v3 import Message

from ..errors import ClientError, StoreError


class TransportError(ClientError):
    """The request could not be sent or the connection broke (after any retries)."""

    def __init__(self, message: str, *, partial: Message | None = None, **kw: str | None) -> None:
        self.partial = partial
        super().__init__(message, **kw)


class RequestTimeoutError(TransportError):
    """The provider did not answer in time; `partial` is the CANCELLED message, if streaming."""


class DeadlineExceededError(RequestTimeoutError):
    """A total deadline passed (`which`: "send" or "stream", `seconds` long; see
    `Client(send_deadline=..., stream_deadline=...)`); `partial` is the CANCELLED message of
    a stream it cut."""

    def __init__(
        self,
        message: str,
        *,
        which: str,
        seconds: float | None,
        partial: Message | None = None,
        **kw: str | None,
    ) -> None:
        self.which = which
        self.seconds = seconds
        super().__init__(message, partial=partial, **kw)


class ReplyNotSavedError(StoreError):
    """The store failed while a reply was being saved: what arrived is in `reply` (in
    memory only) and NOT in the store. A PARTIAL checkpoint it may have left is finalized
    as CANCELLED by the session's next send or by `metis repair`."""

    def __init__(self, message: str, *, reply: Message, **kw: str | None) -> None:
        self.reply = reply
        super().__init__(message, **kw)


class RequestCancelledError(TransportError):
    """The caller interrupted the request (Ctrl-C); `partial` is the CANCELLED message."""


class ReplayError(ClientError):
    """A replayed (recorded) exchange does not match the request the client made."""


__all__ = [
    "DeadlineExceededError",
    "ReplayError",
    "ReplyNotSavedError",
    "RequestCancelledError",
    "RequestTimeoutError",
    "TransportError",
]
