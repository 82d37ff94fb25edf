"""Client failures that carry what was saved before they happened.

A stream that stops early (a timeout, a dropped connection, Ctrl-C) is not lost: the
client persists what arrived as a CANCELLED message first, and the error it raises
points at that message so the caller can show or resume it.
"""

from __future__ import annotations

from metis_schema.v3 import Message

from ..errors import ClientError


class TransportError(ClientError):
    """The request could not be sent or the connection broke (after any retries)."""

    def __init__(self, message: str, *, partial: Message | None = None, **kw: str | None) -> None:
        self.partial = partial
        super().__init__(message, **kw)


class RequestTimeoutError(TransportError):
    """The provider did not answer in time; `partial` is the CANCELLED message, if streaming."""


class RequestCancelledError(TransportError):
    """The caller interrupted the request (Ctrl-C); `partial` is the CANCELLED message."""


class ReplayError(ClientError):
    """A replayed (recorded) exchange does not match the request the client made."""


__all__ = ["ReplayError", "RequestCancelledError", "RequestTimeoutError", "TransportError"]
