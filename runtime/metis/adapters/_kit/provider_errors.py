"""Provider error bodies, read through each provider's declared wire shape: one route.

A provider's facts row says how its errors look (`ErrorEnvelope`): the declared shape of
its error body (`wire.ErrorBody`, checked by `reader.read`) and a hook reading the checked
body's type, message and notes (`ErrorFields`). Everything after that is shared: the
message as text, the type a text-only provider's message names (`kinds`), retryability by
the row's error types, else by HTTP status.

Two ways out, one reading:

- `provider_error` (a facts row's `parse_error`) for a body that came instead of a reply,
  an HTTP error among them. It never raises: a body that is not JSON, holds what JSON
  cannot carry, or is not of the declared shape (a proxy's page, another server's JSON)
  is reported by its text excerpt.
- `error_event` for an error that came inside a stream, as the stream's `ErrorEvent`
  (every stream decoder builds its events through it). The stream was read through its
  declared shapes; an error of the wrong shape there is a `WireFormatError` at its path,
  as any other malformed chunk is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metis_schema.v3 import ErrorEvent

from ... import _json
from ...errors import ProviderError, WireFormatError, retryable_status
from ...validation import field_path
from .reader import read

if TYPE_CHECKING:
    from .facts import ProviderFacts

_EXCERPT = 500


@dataclass(frozen=True)
class ErrorFields:
    """What an error body says, as its row's hook reads it from the checked body."""

    message: Any = None
    """The provider's own message (text; any other JSON value is written as JSON text).
    None: the body says none, and its excerpt stands for it."""
    kind: Any = None
    """The provider's error type or code. None: the row's `kinds`, else the HTTP status,
    name it."""
    notes: tuple[tuple[str, Any], ...] = ()
    """(name, value) appended to the message as `(name value)`: a request id, the field at
    fault, an upstream's name and text. A None value is left out."""


@dataclass(frozen=True)
class ErrorEnvelope:
    """How one provider's errors look: the declared shape, the hook reading it, and for a
    provider that sends only text (Ollama) the patterns that classify the message."""

    shape: Any
    """The declared wire shape of an error body (`wire.ErrorBody`), read with `reader.read`."""
    fields: Callable[[Any], ErrorFields]
    """The body checked against `shape` -> what it says."""
    kinds: tuple[tuple[str, str, bool], ...] = ()
    """(regex, error type, retryable) tried in order against the message when the body
    names no type."""


def provider_error(facts: ProviderFacts, body: Any, status_code: int | None = None) -> ProviderError:
    """A provider error body (bytes, text or parsed) -> ProviderError with its own type and message.

    Never raises: whatever the body holds, the error it reports is built. A body that is
    not JSON, or holds what JSON cannot carry (a lone surrogate, NaN, an integer past
    4,300 digits, nesting past the writer's bound; `_parsed`), or is not of the provider's
    declared error shape, is reported by its text excerpt, which names what is wrong with
    it and is safe to print, log and store."""
    parsed = _parsed(body)
    if parsed is None and not isinstance(body, bytes):
        body = _json.printable(body) if isinstance(body, str) else _excerpt(body)
    fields = None
    if parsed is not None:
        try:
            fields = _read(facts, parsed, path="", what="error body")
        except WireFormatError:
            fields = None  # not this provider's error envelope: its excerpt says what came
    error, _ = _built(facts, fields, body, parsed if parsed is not None else body, status_code)
    return error


def error_event(
    facts: ProviderFacts, body: Any, *, path: str = "", status_code: int | None = None
) -> ErrorEvent:
    """An error that arrived inside a stream (`body`, in the provider's error shape, at
    `path` of the stream) -> the stream's ErrorEvent: the type and retryability
    `provider_error` gives it, the provider's own message (with its notes). A body of the
    wrong shape is a WireFormatError at its path."""
    fields = _read(facts, body, path=path, what="stream error")
    error, text = _built(facts, fields, body, body, status_code)
    return ErrorEvent(
        type="error", code=error.error_type, message=text, retryable=error.retryable, provider=facts.provider
    )


def _read(facts: ProviderFacts, body: Any, *, path: str, what: str) -> ErrorFields:
    checked = read(facts.error.shape, body, provider=facts.provider, path=path, what=what)
    return facts.error.fields(checked)


def _built(
    facts: ProviderFacts, fields: ErrorFields | None, body: Any, kept: Any, status_code: int | None
) -> tuple[ProviderError, str]:
    """The ProviderError of what a body says (`fields`; None: nothing readable, the excerpt
    of `body` as it came), keeping `kept` (the parsed body, else what came), and the
    provider's text as the error carries it."""
    text = _text(fields.message) if fields is not None and fields.message is not None else _excerpt(body)
    kind = fields.kind if fields is not None else None
    retryable: bool | None = None
    if kind is None:
        for pattern, named, retry in facts.error.kinds:
            if re.search(pattern, text, re.IGNORECASE):
                kind, retryable = named, retry
                break
    kind_text = _text(kind) if kind is not None else None
    if not kind_text:
        kind_text = f"http_{status_code}" if status_code else "unknown_error"
    for name, value in fields.notes if fields is not None else ():
        if value is not None:
            text = f"{text} ({name} {_text(value)})"
    if retryable is None:
        retryable = kind_text not in facts.never_retry_types and (
            kind_text in facts.retryable_types or retryable_status(status_code)
        )
    error = ProviderError(
        text,
        provider=facts.provider,
        error_type=kind_text,
        status_code=status_code,
        retryable=retryable,
        body=kept,
    )
    return error, text


def _parsed(body: Any) -> Any:
    """The body's JSON values, or None when it has none metis can carry: text that is not
    JSON, or values (parsed, or handed in as Python objects) JSON cannot carry — kept, they
    would fail every later writer of the error (a log, a stored failed exchange)."""
    if isinstance(body, bytes | str):
        try:
            body = _json.loads(body)
        except (_json.JSONDecodeError, RecursionError):
            return None
    return None if _json.unwritable(body) is not None else body


def _text(value: Any) -> str:
    """A part of a parsed body as text (`_parsed` has held it to what JSON carries)."""
    if isinstance(value, str):
        return value
    try:
        return _json.dumps(value).decode()[:_EXCERPT]
    except (ValueError, TypeError):  # a value of a type JSON has no form for
        return f"({type(value).__name__})"


def _excerpt(body: Any) -> str:
    """The start of a body `_parsed` could not read, safe to print: text with any lone
    surrogate escaped, or for Python values what JSON cannot carry in them, and where."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        return _json.printable(body[:_EXCERPT])
    found = _json.unwritable(body)
    if found is None:
        return _text(body)
    where, why = found
    at = _json.printable(field_path(where)) or "(the body itself)"
    return f"an error body metis cannot carry: {at} holds {why}"


__all__ = ["ErrorEnvelope", "ErrorFields", "error_event", "provider_error"]
