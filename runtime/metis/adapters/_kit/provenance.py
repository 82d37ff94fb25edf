"""Who made a message, and whether its opaque state may go back where a request is going.

An adapter reads only the provider_raw it wrote itself (`own_raw`, spec §6.5), and opaque
provider state (signatures, encrypted reasoning, server-tool results) goes back only to the
provider and endpoint that produced it (`replays_opaque`, spec §4.3, §7.3); the drop reasons
name both ends in one wording (`produced_at`, `sent_to`, `foreign_reasoning`)."""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import Message

from ...endpoints import normalize_endpoint
from ...errors import AdapterError
from .. import get
from .options import AdapterOptions


def own_raw(message: Message, adapter: str) -> dict[str, Any]:
    """The provider_raw `adapter` wrote on `message`, or {} (spec §6.5: only the writer reads it)."""
    raw = message.metadata.provider_raw
    if raw is not None and raw.get("adapter") == adapter and message.metadata.provider == adapter:
        return raw
    return {}


def replays_opaque(message: Message, provider: str, options: AdapterOptions) -> bool:
    """Whether `message`'s opaque state goes back in a request to `provider` at `options.endpoint`.

    Opaque state (thinking signatures, redacted thinking, encrypted reasoning, server-tool
    results, compaction data, Gemini thought signatures) verifies only where it was made.
    A proxy or compatible server at another base URL speaks the provider's wire format but
    cannot verify the provider's signatures, nor the provider its: so the test is the same
    provider AND the same endpoint (spec §4.3, §7.3). No recorded endpoint, and no target
    endpoint, both mean the provider's own default API. The one test every adapter asks.
    """
    return produced_here(message.metadata.provider, message.metadata.endpoint, provider, options)


def produced_here(producer: str | None, endpoint: str | None, provider: str, options: AdapterOptions) -> bool:
    """`replays_opaque` before the message exists: a reply streamed by `producer` at
    `endpoint` (the gateway knows both when the first event arrives)."""
    if producer != provider:
        return False
    target = options.endpoint
    return endpoint == target or _endpoint_key(provider, endpoint) == _endpoint_key(provider, target)


def _endpoint_key(provider: str, url: str | None) -> str | None:
    """A normalized endpoint, None for the provider's default API (however it is spelled)."""
    if url is None:
        return None
    try:
        key = normalize_endpoint(url)
    except AdapterError:
        return url  # not a URL: equal only to itself, never to the default API
    return None if key == normalize_endpoint(get(provider).default_base_url) else key


def produced_at(message: Message) -> str:
    """Who produced `message`, for drop reasons: `anthropic at https://proxy.example.com/v1`,
    or `anthropic (its default API)`."""
    provider = message.metadata.provider or "an unknown provider"
    endpoint = message.metadata.endpoint
    return f"{provider} at {endpoint}" if endpoint else f"{provider} (its default API)"


def sent_to(provider: str, options: AdapterOptions) -> str:
    """Where this request goes, worded like `produced_at`."""
    return f"{provider} at {options.endpoint}" if options.endpoint else f"{provider} (its default API)"


def foreign_reasoning(message: Message, target_model: str, provider: str, options: AdapterOptions) -> str:
    """The drop reason for reasoning another model or endpoint produced (one wording for
    every adapter that replays reasoning to its own model only)."""
    source = message.metadata.model or "another model"
    return (
        f"reasoning from {source} via {produced_at(message)} goes back only to the model and "
        f"endpoint that produced it, not {target_model} via {sent_to(provider, options)}"
    )
