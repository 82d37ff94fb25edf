"""Endpoint identity: which server produced a reply, as one comparable string (spec §4.3, §7.3).

Opaque reasoning (Anthropic signatures, OpenAI encrypted reasoning, Gemini thought
signatures) verifies only at the server that signed it. A proxy or compatible server at
another base URL speaks the same wire format as the provider, so the provider key alone
cannot tell them apart: the endpoint can. It is the base URL reduced to what names the
server: lowercased scheme and host, the port unless it is the scheme's default, and the
path prefix without a trailing slash. A query (where some gateways put keys), a fragment
and credentials are never part of it, so a recorded endpoint never leaks a secret.
"""

from __future__ import annotations

import re
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


__all__ = ["normalize_endpoint"]
