"""The default URL fetcher reaches public http(s) addresses only (issue 17, item 8).

No test touches the network: DNS answers come from a fake resolver, HTTP from a
MockTransport that records where each request was sent."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest
from metis import adapters
from metis.adapters._kit.base import AdapterOptions
from metis.errors import MetisError, UrlFetchError
from metis.fetch import UrlFetcher
from metis.ids import ToolIdMap
from metis_schema.v3 import Message

from tests.support.messages import build_message

PUBLIC = "93.184.216.34"
DNS = {"images.example": [PUBLIC], "rebind.example": [PUBLIC, "10.0.0.7"], "localhost": ["127.0.0.1"]}


def resolver(host: str, port: int) -> Sequence[str]:
    return DNS.get(host, [host])  # an IP literal resolves to itself


class Recorder:
    def __init__(self, routes: dict[str, httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.routes = routes or {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.routes.get(request.url.path, httpx.Response(200, content=b"PNGDATA"))


def fetcher(recorder: Recorder, **kw: object) -> UrlFetcher:
    return UrlFetcher(resolver=resolver, transport=httpx.MockTransport(recorder), **kw)  # type: ignore[arg-type]


def test_a_public_https_url_is_fetched_from_the_address_that_was_checked() -> None:
    recorder = Recorder()
    assert fetcher(recorder)("https://images.example/cat.png") == b"PNGDATA"
    [sent] = recorder.requests
    assert sent.url.host == PUBLIC and sent.headers["host"] == "images.example"
    assert sent.extensions["sni_hostname"] == "images.example"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://images.example:70/_x",
        "ftp://images.example/a.png",
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:6379/",
        "http://localhost/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://rebind.example/a.png",
        "not a url",
    ],
)
def test_non_http_schemes_and_non_public_addresses_are_refused(url: str) -> None:
    recorder = Recorder()
    with pytest.raises(UrlFetchError):
        fetcher(recorder)(url)
    assert recorder.requests == []


def test_a_redirect_to_an_internal_address_is_refused() -> None:
    recorder = Recorder({"/a.png": httpx.Response(302, headers={"location": "http://169.254.169.254/creds"})})
    with pytest.raises(UrlFetchError, match="non-public"):
        fetcher(recorder)("http://images.example/a.png")
    assert [r.url.path for r in recorder.requests] == ["/a.png"]


def test_private_addresses_are_fetched_when_the_caller_allows_them() -> None:
    recorder = Recorder()
    assert fetcher(recorder, allow_private=True)("http://localhost:8080/a.png") == b"PNGDATA"
    with pytest.raises(UrlFetchError, match="only http and https"):
        fetcher(recorder, allow_private=True)("file:///etc/passwd")


def test_a_body_over_the_cap_is_refused() -> None:
    recorder = Recorder({"/big.png": httpx.Response(200, content=b"x" * 101)})
    with pytest.raises(UrlFetchError, match="more than 100 bytes"):
        fetcher(recorder, max_bytes=100)("https://images.example/big.png")


def _url_image(url: str) -> Message:
    image = {"type": "image", "source": {"kind": "url", "data": url}, "media_type": "image/png"}
    return build_message(
        "user", [image], session_id="s", id="01HZ0000000000000000000001", created_at="2026-01-01T00:00:00Z"
    )


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"])
def test_opting_in_without_a_fetcher_uses_the_guarded_default(url: str) -> None:
    """Opted in with no fetcher of its own, the adapter fetches through the guarded default,
    which refuses these before any connection (both are decided without DNS)."""
    options = AdapterOptions(
        model="ollama:gemma3-4b", session_id="s", tool_ids=ToolIdMap("s"), allow_url_fetch=True
    )
    with pytest.raises(MetisError, match=r"only http and https|non-public"):
        adapters.get("ollama").to_wire([_url_image(url)], [], options)
