"""What a session's requests are sent with besides their messages, as the store records it.

A session is the whole conversation: its messages, and the tool definitions and request
options each exchange was sent with (docs/architecture.md "A session is the whole conversation"). The
store keeps those as the schema's records (`SettingsRevision`: a tool set and a
`RequestOptions`, versioned when they change; `ExchangeSettings`: the revision each exchange
carried). This module is the one mapping between that record and the runtime's
`AdapterOptions`, used by every writer (the client before each send, the importer) and every
reader (resume, `metis replay`, `convert --session`, fork, show, export):

- the canonical options (`max_tokens` ... `output_schema`, and any other field the two have
  in common) are kept as they are; `OutputSchema.schema` is the record's `json_schema`;
- `provider_options` are kept under their provider's name, as the adapters' one rule has
  them (`adapters/_kit/options.py`), and the caller's `extra` (its own fields for the provider
  it called) is kept as part of that provider's entry, which is what it was: replayed to
  that provider, reported as dropped for any other.

Transport matters (the model, the stream flag, the endpoint, limits on media and events)
are not options of the conversation and are not recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from enum import Enum
from typing import Any, Protocol

from metis_schema.v3 import RequestOptions, SettingsRevision, ToolDefinition
from pydantic import ValidationError

from .adapters._kit.base import AdapterOptions
from .adapters._kit.options import OutputSchema, merge
from .errors import DocumentError
from .validation import pydantic_problems

_SPECIAL = frozenset({"output_schema", "provider_options"})
CANONICAL = tuple(
    name
    for name in RequestOptions.model_fields
    if name not in _SPECIAL and name in {f.name for f in fields(AdapterOptions)}
)
"""The canonical options the record and AdapterOptions share, copied as they are."""


def request_options(options: AdapterOptions, provider: str | None = None) -> RequestOptions:
    """The stored record of `options` sent to `provider` (see module doc); a DocumentError
    naming the field when a value is not one the schema allows (a `max_tokens` of 0)."""
    doc: dict[str, Any] = {}
    for name in CANONICAL:
        value = getattr(options, name)
        if value is not None:
            doc[name] = value
    schema = options.output_schema
    if schema is not None:
        doc["output_schema"] = {
            "json_schema": schema.schema,
            "name": schema.name,
            **({} if schema.strict is None else {"strict": schema.strict}),
            **({} if schema.description is None else {"description": schema.description}),
        }
    provider_options = {owner: dict(entry) for owner, entry in options.provider_options.items()}
    if options.extra and provider is not None:
        entry = provider_options.setdefault(provider, {})
        merge(entry, options.extra)
    if provider_options:
        doc["provider_options"] = provider_options
    try:
        return RequestOptions.model_validate(doc)
    except ValidationError as exc:
        raise DocumentError("request options", pydantic_problems(exc), path="options") from None


def adapter_fields(stored: RequestOptions) -> dict[str, Any]:
    """The AdapterOptions fields of a stored record (canonical options, provider options),
    to build the options a stored exchange is re-sent with."""
    out: dict[str, Any] = {}
    for name in CANONICAL:
        value = getattr(stored, name)
        if value is not None:
            out[name] = value.value if isinstance(value, Enum) else value
    if stored.stop is not None:
        out["stop"] = list(stored.stop)
    schema = stored.output_schema
    if schema is not None:
        out["output_schema"] = OutputSchema(
            schema=dict(schema.json_schema),
            name=schema.name,
            strict=schema.strict,
            description=schema.description,
        )
    if stored.provider_options:
        out["provider_options"] = {owner: dict(entry) for owner, entry in stored.provider_options.items()}
    return out


class SettingsReader(Protocol):
    """The store call `in_force` reads (`metis.store.Store` has it)."""

    def settings(self, session_id: str, revision: int | None = None) -> SettingsRevision | None: ...


class SettingsWriter(Protocol):
    """The store call `record_request` makes (`metis.store.Store` has it)."""

    def record_settings(
        self,
        session_id: str,
        tools: Sequence[ToolDefinition],
        options: RequestOptions | None = None,
        *,
        reply_id: str | None = None,
    ) -> int: ...


def record_request(
    store: SettingsWriter,
    session_id: str,
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
    provider: str | None,
    *,
    reply_id: str | None = None,
) -> int:
    """Record what a request to `provider` was sent with (an imported one: `WireImport.tools`
    and `.options`) as the session's settings; with `reply_id`, the exchange its reply
    answered. The revision (`Store.record_settings`)."""
    return store.record_settings(session_id, tools, request_options(options, provider), reply_id=reply_id)


def in_force(store: SettingsReader, session_id: str) -> tuple[list[ToolDefinition], dict[str, Any]]:
    """The tools and the AdapterOptions fields the session's next exchange is sent with: its
    latest settings revision ([] and {} for a session that recorded none)."""
    latest = store.settings(session_id)
    if latest is None:
        return [], {}
    return list(latest.tools), adapter_fields(latest.options)


def options_document(stored: RequestOptions) -> Mapping[str, Any]:
    """The record as the JSON `metis show --json` and exports write (unset fields left out)."""
    return stored.model_dump(mode="json", exclude_none=True)


__all__ = [
    "CANONICAL",
    "SettingsReader",
    "SettingsWriter",
    "adapter_fields",
    "in_force",
    "options_document",
    "record_request",
    "request_options",
]
