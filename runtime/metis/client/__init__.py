"""The HTTP client: canonical sessions sent to real providers over httpx.

`Client` / `AsyncClient` open sessions (`client.session(model="sonnet")`,
`client.resume(session_id)`); `session.send(...)` runs one request through the model's
adapter and persists both sides in the store; `session.swap(model)` switches provider
mid-session after checking the history can survive it. Retries, streaming checkpoints
and cancellation are handled here so every caller gets them.

No server is trusted: each send and each stream has a total deadline
(`Client(send_deadline=, stream_deadline=)`, DeadlineExceededError), retry hints are
bounded, bodies are inflated a bounded piece at a time (BodyLimitError), an answer that
is not a reply (a redirect, a stream with no reply event) is NotAReplyError with the
server's text, and a reply the store could not save is ReplyNotSavedError carrying it.
"""

from __future__ import annotations

from ._async import AsyncClient, AsyncSession
from ._config import Endpoint, base_url_env, resolve_endpoint
from ._deadline import DEFAULT_SEND_DEADLINE, DEFAULT_STREAM_DEADLINE
from ._errors import (
    DeadlineExceededError,
    ReplayError,
    ReplyNotSavedError,
    RequestCancelledError,
    RequestTimeoutError,
    TransportError,
)
from ._recorded import Exchange, ReplayTransport
from ._retry import RetryPolicy, parse_retry_after
from ._session import DEFAULT_MODEL, Content
from ._stream import CheckpointPolicy, EventCallback
from ._sync import DEFAULT_TIMEOUT, Client, Session

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SEND_DEADLINE",
    "DEFAULT_STREAM_DEADLINE",
    "DEFAULT_TIMEOUT",
    "AsyncClient",
    "AsyncSession",
    "CheckpointPolicy",
    "Client",
    "Content",
    "DeadlineExceededError",
    "Endpoint",
    "EventCallback",
    "Exchange",
    "ReplayError",
    "ReplayTransport",
    "ReplyNotSavedError",
    "RequestCancelledError",
    "RequestTimeoutError",
    "RetryPolicy",
    "Session",
    "TransportError",
    "base_url_env",
    "parse_retry_after",
    "resolve_endpoint",
]
