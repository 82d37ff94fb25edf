"""The default URL fetcher for image URLs a provider cannot take by reference (Ollama).

URLs in a conversation are data, not trusted instructions: a model, an imported history
or a user may name `http://169.254.169.254/...` (cloud instance credentials),
`http://localhost:6379/`, `file:///etc/passwd` or `gopher://...`. Fetching is opt-in
(`AdapterOptions.allow_url_fetch`), and even then this fetcher goes only to public
http(s) addresses unless the caller allows private ones:

- the scheme must be http or https;
- the host is resolved once, every address it resolves to must be public (not loopback,
  link-local, private, shared, reserved, multicast or unspecified), and the connection
  goes to that checked address (the Host header and TLS server name stay the host's), so
  a second DNS answer cannot swap in an internal address (DNS rebinding);
- redirects are followed by hand, each hop checked the same way;
- the body is capped (`max_bytes`), read as it streams.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from .errors import UrlFetchError
from .workspace import DEFAULT_MAX_MEDIA_BYTES

Resolver = Callable[[str, int], Sequence[str]]
"""host, port -> the IP addresses it resolves to (injectable for tests)."""


def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, through the system resolver."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UrlFetchError(f"cannot resolve {host!r}: {exc}") from exc
    return [str(info[4][0]) for info in infos]


def is_public(address: str) -> bool:
    """Whether an IP address is a public unicast address (IPv4-mapped IPv6 judged as IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class UrlFetcher:
    """`fetcher(url) -> bytes` with the rules above; `allow_private=True` lifts the address
    rule (a trusted intranet), never the scheme rule."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        max_bytes: int = DEFAULT_MAX_MEDIA_BYTES,
        timeout: float = 10.0,
        max_redirects: int = 3,
        resolver: Resolver = system_resolver,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.timeout = timeout
        self._resolve = resolver
        self._transport = transport

    def __call__(self, url: str) -> bytes:
        current = self._checked(url)
        with httpx.Client(transport=self._transport, timeout=self.timeout, follow_redirects=False) as client:
            for _ in range(self.max_redirects + 1):
                target, extensions, host_header = self._pinned(current)
                request = client.build_request(
                    "GET", target, headers={"Host": host_header}, extensions=extensions
                )
                try:
                    response = client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    raise UrlFetchError(f"fetching {url!r} failed: {exc}") from exc
                try:
                    if response.is_redirect and "location" in response.headers:
                        current = self._checked(str(current.join(response.headers["location"])))
                        continue
                    if response.status_code >= 400:
                        raise UrlFetchError(f"fetching {url!r} answered HTTP {response.status_code}")
                    return self._body(url, response)
                finally:
                    response.close()
        raise UrlFetchError(f"fetching {url!r} took more than {self.max_redirects} redirects")

    def _checked(self, url: str) -> httpx.URL:
        try:
            parsed = httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            raise UrlFetchError(f"{url[:200]!r} is not a valid URL: {exc}") from exc
        if parsed.scheme not in ("http", "https"):
            raise UrlFetchError(f"{url[:200]!r}: only http and https URLs are fetched, not {parsed.scheme!r}")
        if not parsed.host:
            raise UrlFetchError(f"{url[:200]!r} names no host")
        return parsed

    def _pinned(self, url: httpx.URL) -> tuple[httpx.URL, dict[str, Any], str]:
        """The URL rewritten to a checked address of its host, the TLS server name to
        verify against, and the Host header: one resolution, used for the connection."""
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = list(self._resolve(url.host, port))
        if not addresses:
            raise UrlFetchError(f"{url.host!r} resolves to no address")
        if not self.allow_private:
            refused = [address for address in addresses if not is_public(address)]
            if refused:
                raise UrlFetchError(
                    f"{url.host!r} resolves to a non-public address ({refused[0]}); refused",
                    hint="pass UrlFetcher(allow_private=True) as url_fetcher to fetch from private networks",
                )
        address = addresses[0].split("%", 1)[0]
        host_header = url.netloc.decode("ascii")
        extensions: dict[str, Any] = {"sni_hostname": url.host} if url.scheme == "https" else {}
        return url.copy_with(host=address), extensions, host_header

    def _body(self, url: str, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_bytes:
                    raise UrlFetchError(f"{url!r} holds more than {self.max_bytes} bytes; refused")
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise UrlFetchError(f"reading {url!r} failed: {exc}") from exc
        return b"".join(chunks)


__all__ = ["Resolver", "UrlFetcher", "is_public", "system_resolver"]
