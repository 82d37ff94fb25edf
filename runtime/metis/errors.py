"""Typed errors for everything metis raises.

One base class, `MetisError`, so callers can catch the package's failures without
catching programming errors. Every error says what is wrong and where (a field path or
JSON pointer, the provider, the message id) and, where there is one, how to fix it.
Bad input never surfaces as a bare KeyError, TypeError or JSONDecodeError.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

REDACTED = "[REDACTED]"

MIN_SECRET_CHARS = 8
"""Shorter "keys" are placeholders (`ollama`, `none`, `x`) that local servers accept; erasing
every occurrence of such a word from error texts would garble them and protect nothing."""


def redact_text(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret replaced by REDACTED."""
    for secret in secrets:
        if len(secret) >= MIN_SECRET_CHARS and secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _redact_value(value: Any, secrets: tuple[str, ...]) -> Any:
    """A string redacted, or a JSON-like container redacted in place. Iterative: an error body
    may be nested as deep as the JSON parser allows, deeper than Python's recursion limit."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    stack = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, item in pairs:
            if isinstance(item, str):
                node[key] = redact_text(item, secrets)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


class MetisError(Exception):
    """Base class of every error metis raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        provider: str | None = None,
        message_id: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.provider = provider
        self.message_id = message_id
        self.hint = hint
        super().__init__(self._render())

    def redact(self, secrets: Iterable[str]) -> None:
        """Erase known secret values (the API key sent) from every text this error carries:
        its message, hint, location, and fields such as a ProviderError's echoed body or a
        WireFormatError's raw text. A server that echoes the key in a 401 body must not
        put it into logs and tracebacks through us."""
        keys = tuple(secret for secret in secrets if len(secret) >= MIN_SECRET_CHARS)
        if not keys:
            return
        for name, value in vars(self).items():
            setattr(self, name, _redact_value(value, keys))
        self.args = (self._render(),)

    def _render(self) -> str:
        where = [
            f"{label} {value}"
            for label, value in (
                ("provider", self.provider),
                ("message", self.message_id),
                ("at", self.path),
            )
            if value
        ]
        text = self.message + (f" ({', '.join(where)})" if where else "")
        return text + (f". {self.hint}" if self.hint else "")


# --- documents and schema --------------------------------------------------------------


@dataclass(frozen=True)
class FieldProblem:
    """One problem in a document: where, and what."""

    path: str
    problem: str
    rule: str | None = None

    def __str__(self) -> str:
        rule = f" [{self.rule}]" if self.rule else ""
        return f"{self.path or '(root)'}: {self.problem}{rule}"


def _listing(items: Sequence[object], most: int = 20) -> str:
    """The first `most` items, `; `-joined, and how many more there are."""
    more = f" (+{len(items) - most} more)" if len(items) > most else ""
    return "; ".join(str(item) for item in items[:most]) + more


class DocumentError(MetisError):
    """A document failed schema validation; `problems` lists every failure with its path."""

    def __init__(self, what: str, problems: Sequence[FieldProblem], **kw: str | None) -> None:
        self.problems = list(problems)
        super().__init__(f"{what} is invalid: {_listing(self.problems)}", **kw)


class NotJsonError(MetisError, ValueError):
    """A value JSON cannot carry, met where metis writes or takes one (`metis._json`): NaN or
    an infinity, a lone surrogate in a string or a key (not UTF-8, so not JSON text), an
    integer of more than 4,300 digits, nesting past what the writer writes. `path` is
    where inside the value; the message says what the value was (a message, a request
    option, a routing policy). Also a ValueError, as the JSON layer's refusals always were,
    so callers that caught those still do."""


class InvariantError(MetisError):
    """A message or conversation breaks invariants of spec §5; `violations` lists all of them."""

    def __init__(self, violations: Sequence[object], **kw: str | None) -> None:
        self.violations = list(violations)
        super().__init__(f"{len(self.violations)} invariant violation(s): {_listing(self.violations)}", **kw)


class MigrationError(MetisError):
    """A stored document cannot be migrated to the requested schema version."""


class NewerSchemaError(MigrationError):
    """A stored document was written by a newer metis, in a schema version this one cannot read.

    Raised for that one document only: a reader of many (a session, a store) catches it,
    keeps every other message, and reports this one by `row` and `version`.
    """

    def __init__(
        self,
        message: str,
        *,
        row: str | None = None,
        version: int | None = None,
        supported: int | None = None,
        **kw: str | None,
    ) -> None:
        self.row = row
        self.version = version
        self.supported = supported
        super().__init__(message, **kw)

    @classmethod
    def of(cls, *, row: str | None, version: int, supported: int, message_id: str | None) -> NewerSchemaError:
        """The error for one document: where it is stored, its version, and ours."""
        where = f"row {row}" if row is not None else f"message {message_id or '(no id)'}"
        return cls(
            f"{where} was written in schema v{version}; this metis reads up to v{supported}",
            row=row,
            version=version,
            supported=supported,
            path="schema_version",
            message_id=message_id,
            hint="upgrade metis to read it; nothing else in the store is affected",
        )


# --- tools, pricing, catalog, routing ----------------------------------------------------


class ToolSchemaError(MetisError):
    """A tool's input_schema uses a construct spec §5.4 disallows (path is its JSON pointer)."""


class ToolDefinitionError(ToolSchemaError, ValueError):
    """A tool definition's own fields are invalid (a missing `side_effects`, a name providers
    refuse, ...); `problems` lists every one. A ValueError too, as pydantic's own error was."""

    def __init__(self, message: str, problems: Sequence[FieldProblem] = (), **kw: str | None) -> None:
        self.problems = list(problems)
        super().__init__(message, **kw)


class ToolInputError(MetisError):
    """Tool input does not match the tool's input_schema."""


class UnknownToolError(MetisError):
    """A tool name is not registered."""


class PricingError(MetisError):
    """No price for a model in a price table, or an unknown pricing version."""


class UnknownModelError(MetisError):
    """A model id or alias is not in the catalog."""


class CapabilityError(MetisError):
    """A model cannot carry what the session needs (spec §8.4); the swap is refused."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        reasons: Sequence[str],
        capabilities: Sequence[str] = (),
        **kw: str | None,
    ) -> None:
        self.model = model
        self.reasons = list(reasons)
        self.capabilities = list(capabilities)
        """The AdapterCapabilities fields the model lacks (`supports_images`, ...)."""
        super().__init__(message, **kw)


# --- adapters -----------------------------------------------------------------------------


class AdapterError(MetisError):
    """Base of errors raised while translating to or from a provider's wire format."""


class UnknownAdapterError(AdapterError):
    """No adapter is registered under that provider name."""


class WireFormatError(AdapterError):
    """A wire body or stream chunk is malformed; `path` points into it, `raw` keeps the text."""

    def __init__(self, message: str, *, raw: str | None = None, **kw: str | None) -> None:
        self.raw = raw
        super().__init__(message, **kw)


class StreamLimitError(WireFormatError):
    """One stream event grew past the framer's bound (`limit`, in characters): a server that
    never ends a line must not make the client buffer without end."""

    def __init__(self, message: str, *, limit: int | None = None, **kw: str | None) -> None:
        self.limit = limit
        super().__init__(message, **kw)


class BodyLimitError(WireFormatError):
    """A response body read whole grew past the client's bound once inflated (`limit`, in
    bytes): a compression bomb must not make the client hold hundreds of megabytes."""

    def __init__(self, message: str, *, limit: int | None = None, **kw: str | None) -> None:
        self.limit = limit
        super().__init__(message, **kw)


class CriticalBlockError(AdapterError):
    """A block marked critical (metadata.critical_blocks) cannot be carried by the target."""


class WorkspaceError(AdapterError):
    """A file_ref image path is missing or escapes the session workspace."""


class UrlFetchError(AdapterError):
    """An image URL was refused (scheme, non-public address, size) or could not be fetched."""


class RecordingError(MetisError):
    """A recording (a VCR cassette, a HAR file, an exchange document) cannot be read; `path`
    says where in it (`interactions[3].response.body`)."""


RETRYABLE_HTTP_BELOW_500 = frozenset({408, 409, 429})
"""Statuses under 500 worth another attempt: request timeout, conflict, rate limit."""


def retryable_status(status: object) -> bool:
    """Whether an HTTP status says "try again": one rule for every adapter and the client
    (timeouts, conflicts, rate limits, and every server error including 529 overloaded)."""
    if not isinstance(status, int) or isinstance(status, bool):  # absent, or a provider's code string
        return False
    return status in RETRYABLE_HTTP_BELOW_500 or status >= 500


class ProviderError(AdapterError):
    """The provider answered with an error body; carries its own type and message."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        error_type: str,
        status_code: int | None = None,
        retryable: bool = False,
        body: object = None,
        **kw: str | None,
    ) -> None:
        self.error_type = error_type
        self.status_code = status_code
        self.retryable = retryable
        self.body = body
        status = f"HTTP {status_code} " if status_code else ""
        super().__init__(f"{status}{error_type}: {message}", provider=provider, **kw)


class NotAReplyError(ProviderError):
    """The server answered, but not with a reply: a redirect (which the client does not
    follow), or a success whose body holds no event of one (an error object, an HTML page,
    `null`, nothing). `status_code` and `body` (the server's text, bounded) say what came."""


# --- store and client ----------------------------------------------------------------------


class StoreError(MetisError):
    """A persistence operation failed; nothing was half-written."""


class SessionNotFoundError(StoreError):
    """No session with that id."""


class MessageNotFoundError(StoreError):
    """No stored message with that id (in that session, where one is named)."""


class ClientError(MetisError):
    """The HTTP client could not complete a request (transport, timeout, retries exhausted)."""


__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "RETRYABLE_HTTP_BELOW_500",
    "AdapterError",
    "BodyLimitError",
    "CapabilityError",
    "ClientError",
    "CriticalBlockError",
    "DocumentError",
    "FieldProblem",
    "InvariantError",
    "MessageNotFoundError",
    "MetisError",
    "MigrationError",
    "NewerSchemaError",
    "NotAReplyError",
    "NotJsonError",
    "PricingError",
    "ProviderError",
    "RecordingError",
    "SessionNotFoundError",
    "StoreError",
    "StreamLimitError",
    "ToolDefinitionError",
    "ToolInputError",
    "ToolSchemaError",
    "UnknownAdapterError",
    "UnknownModelError",
    "UnknownToolError",
    "UrlFetchError",
    "WireFormatError",
    "WorkspaceError",
    "redact_text",
    "retryable_status",
]
