"""Serve recorded provider exchanges instead of the network: a testing and demo aid.

The client's real path (adapter -> httpx -> adapter -> store) runs unchanged; only the
transport is swapped for an `httpx.MockTransport` that answers each request with the
next recorded response, in order. Each recording may state what the request must look
like (method, path suffix, strings its body must contain, e.g. the provider's tool id
after a swap), so a replay also checks that the client sent the right thing.

File shape (JSON): a list of exchanges, or `{"exchanges": [...]}`; each exchange is
`{"request": {"method", "path", "body_contains": [...]}, "response": {"status",
"headers", "json" | "text" | "chunks": [str, ...]}}`. `chunks` are sent as separate
pieces, so streamed responses arrive incrementally. `metis chat` reads such a file when
`METIS_REPLAY_FILE` is set.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .. import _json
from ._errors import ReplayError


class _Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body delivered in recorded pieces, for sync and async clients alike."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = list(chunks)

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


@dataclass
class Exchange:
    """One recorded request expectation and its response."""

    method: str
    path: str | None
    body_contains: list[str]
    status: int
    headers: dict[str, str]
    chunks: list[bytes]

    @classmethod
    def from_json(cls, data: Any, where: str) -> Exchange:
        if not isinstance(data, dict) or not isinstance(data.get("response"), dict):
            raise ReplayError(f"{where}: an exchange needs a 'response' object")
        request = data.get("request") or {}
        response = data["response"]
        if "json" in response:
            chunks = [_json.dumps(response["json"])]
            headers = {"content-type": "application/json"}
        elif "chunks" in response:
            chunks = [str(c).encode() for c in response["chunks"]]
            headers = {"content-type": "text/event-stream"}
        else:
            chunks = [str(response.get("text", "")).encode()]
            headers = {"content-type": "text/plain"}
        headers.update({str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()})
        return cls(
            method=str(request.get("method", "POST")).upper(),
            path=request.get("path"),
            body_contains=[str(s) for s in request.get("body_contains", [])],
            status=int(response.get("status", 200)),
            headers=headers,
            chunks=chunks,
        )


@dataclass
class ReplayTransport:
    """Answers requests with recorded exchanges in order; `requests` keeps what was sent."""

    exchanges: list[Exchange]
    requests: list[httpx.Request] = field(default_factory=list)

    @classmethod
    def from_data(cls, data: Any, *, source: str = "replay") -> ReplayTransport:
        items = data.get("exchanges") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ReplayError(f"{source}: expected a list of exchanges")
        return cls([Exchange.from_json(item, f"{source}[{i}]") for i, item in enumerate(items)])

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ReplayTransport:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path} is not JSON: {exc.msg}", path=f"line {exc.lineno}") from exc
        return cls.from_data(data, source=str(path))

    @property
    def remaining(self) -> int:
        """Recorded exchanges not served yet."""
        return len(self.exchanges) - len(self.requests)

    def handle(self, request: httpx.Request) -> httpx.Response:
        index = len(self.requests)
        if index >= len(self.exchanges):
            raise ReplayError(
                f"no recorded exchange left for request #{index + 1} ({request.method} {request.url})"
            )
        self.requests.append(request)
        exchange = self.exchanges[index]
        body = request.read().decode("utf-8", errors="replace")
        if request.method != exchange.method or (
            exchange.path and not request.url.path.endswith(exchange.path)
        ):
            raise ReplayError(
                f"request #{index + 1} is {request.method} {request.url.path}, "
                f"the recording expects {exchange.method} {exchange.path}"
            )
        missing = [s for s in exchange.body_contains if s not in body]
        if missing:
            raise ReplayError(f"request #{index + 1} body lacks {missing}")
        return httpx.Response(exchange.status, headers=exchange.headers, stream=_Chunks(exchange.chunks))

    def transport(self) -> httpx.MockTransport:
        """An httpx transport serving these exchanges (works for Client and AsyncClient)."""
        return httpx.MockTransport(self.handle)


__all__ = ["Exchange", "ReplayTransport"]
