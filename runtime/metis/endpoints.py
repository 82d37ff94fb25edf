"""Endpoint identity: which server produced a reply, as one comparable string (spec §4.3, §7.3).

Opaque reasoning (Anthropic signatures, OpenAI encrypted reasoning, Gemini thought
signatures) verifies only at the server that signed it. A proxy or compatible server at
another base URL speaks the same wire format as the provider, so the provider key alone
cannot tell them apart: the endpoint can. It is the base URL reduced to what names the
server: lowercased scheme and host, the port unless it is the scheme's default, and the
path prefix without a trailing slash. A query (where some gateways put keys), a fragment
and credentials are never part of it, so a recorded endpoint never leaks a secret.

The same URL also says which wire format a recorded exchange speaks: `ROUTES` is that
table (host, path, the adapter that reads it, where the URL names the model), read by
`route` when `metis import` meets a cassette or HAR file. A URL no row matches is not an
LLM call (a model list, an embedding, a token count) and is skipped, not guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .errors import AdapterError

_DEFAULT_PORTS = {"http": 80, "https": 443}
_ENDPOINT = re.compile(r"^[a-z][a-z0-9+.-]*://[^/?#@\s]+(/[^?#\s]*)?$")
"""The form `MessageMetadata.endpoint` takes (the schema's pattern)."""


def normalize_endpoint(url: str) -> str:
    """`scheme://host[:port][/path prefix]` of a base URL; AdapterError when it names no server."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:  # a port that is not a number, an unbalanced IPv6 bracket
        raise AdapterError(f"endpoint {url[:200]!r} is not a URL: {exc}", path="endpoint") from None
    host = parts.hostname
    scheme = parts.scheme.lower()
    if not scheme or not host:
        raise AdapterError(
            f"endpoint {url[:200]!r} names no server",
            path="endpoint",
            hint="give scheme://host[:port][/path]",
        )
    if ":" in host:  # IPv6 literal: bracketed again, as in the URL
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = quote(parts.path.rstrip("/"), safe="/%:@!$&'()*+,;=-._~")
    endpoint = f"{scheme}://{netloc}{path}"
    if _ENDPOINT.fullmatch(endpoint) is None or len(endpoint) > 2048:
        raise AdapterError(f"endpoint {url[:200]!r} is not a server URL", path="endpoint")
    return endpoint


@dataclass(frozen=True)
class Route:
    """One row of `ROUTES`: requests to `path` on `host` are `adapter`'s wire format."""

    adapter: str
    """The adapter whose request and reply shapes the exchange has (`metis.adapters.get`)."""
    path: re.Pattern[str]
    """The URL path (matched whole); a `model` group names the model (Gemini's URL does)."""
    host: re.Pattern[str] | None = None
    """The host (matched whole, lowercased); None: any host (a proxy, a local server)."""


def _row(adapter: str, path: str, host: str | None = None) -> Route:
    return Route(adapter, re.compile(path), re.compile(host) if host is not None else None)


_GEMINI_METHOD = r"/models/(?P<model>[^/:]+):(?:generateContent|streamGenerateContent)"
ROUTES: tuple[Route, ...] = (
    _row("anthropic", r"(?:/v1)?/messages", r"api\.anthropic\.com"),
    _row("openrouter", r"/api/v1/chat/completions", r"(?:[\w-]+\.)*openrouter\.ai"),
    _row("mistral", r"/v1/chat/completions", r"(?:[\w-]+\.)*mistral\.ai"),
    _row("gemini", r"/v1(?:alpha|beta)?\d*" + _GEMINI_METHOD, r"generativelanguage\.googleapis\.com"),
    _row(
        "gemini",
        r"/v1(?:beta)?\d*/projects/[^/]+/locations/[^/]+/publishers/google" + _GEMINI_METHOD,
        r"(?:[\w-]+-)?aiplatform\.googleapis\.com",
    ),
    _row("responses", r"(?:/api)?(?:/v1)?/responses"),
    _row("ollama", r"/api/chat"),
    # the OpenAI Chat wire format, also where a compatible server speaks it (Ollama's /v1, vLLM)
    _row("openai", r"(?:/api)?(?:/v1)?/chat/completions"),
    _row("anthropic", r"/v1/messages"),
)
"""Endpoint -> wire format, first match wins: the provider's own hosts, then paths any
compatible server uses. Provider facts as data (see `metis.adapters._kit.facts`)."""


@dataclass(frozen=True)
class Routed:
    """What a request URL says: the adapter that reads the exchange and the model it names."""

    adapter: str
    model: str | None
    """The model the URL names (Gemini), else None: the body names it."""


def route(url: str) -> Routed | None:
    """The `ROUTES` row a request URL matches, or None when it is no LLM call metis reads."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return None
    path = parts.path.rstrip("/")
    for row in ROUTES:
        if row.host is not None and row.host.fullmatch(host) is None:
            continue
        match = row.path.fullmatch(path)
        if match is not None:
            return Routed(row.adapter, match.groupdict().get("model"))
    return None


__all__ = ["ROUTES", "Route", "Routed", "normalize_endpoint", "route"]
