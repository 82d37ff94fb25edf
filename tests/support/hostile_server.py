"""A hostile HTTP server on 127.0.0.1 for the client tests: real sockets, scripted misbehaviour.

Each request is answered by the next scripted `Reply`, a function that writes raw bytes to
the connection: any status line and headers, bodies compressed into bombs, bodies that
dribble one piece at a time, redirects, bodies that are not a provider's reply at all.
What the client sent is kept in `requests`. The server is bounded in time: every reply
stops writing when the server closes (`stopping`), and the fixture closes it after each
test, so a client that hangs fails its test instead of holding the suite.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

Reply = Callable[["Exchange"], None]
DRIBBLE_FOR = 30.0
"""Longest a dribbling reply goes on (seconds), so a client that never gives up still ends."""


@dataclass
class Request:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Exchange:
    """What a scripted reply writes to, and the event that says the server is closing."""

    sock: socket.socket
    request: Request
    stopping: threading.Event

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def pause(self, seconds: float) -> bool:
        """Wait `seconds`; False when the server is closing (the reply should stop)."""
        return not self.stopping.wait(seconds)


def head(status: int, headers: dict[str, str] | None = None, reason: str = "X") -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def respond(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> Reply:
    """A whole response with a content-length."""

    def reply(exchange: Exchange) -> None:
        exchange.write(head(status, {"content-length": str(len(body)), **(headers or {})}) + body)

    return reply


def respond_json(status: int, value: Any, headers: dict[str, str] | None = None) -> Reply:
    import json

    return respond(
        status, json.dumps(value).encode(), {"content-type": "application/json", **(headers or {})}
    )


def chunked(
    status: int,
    pieces: Iterable[bytes],
    headers: dict[str, str] | None = None,
    *,
    interval: float = 0.0,
    then: float | None = None,
) -> Reply:
    """A chunked response sending `pieces` `interval` seconds apart; with `then`, it keeps
    sending the last piece every `then` seconds until the server closes, or DRIBBLE_FOR
    seconds have passed (a dribbling server)."""
    pieces = list(pieces)

    def frame(piece: bytes) -> bytes:
        return f"{len(piece):x}\r\n".encode() + piece + b"\r\n"

    def reply(exchange: Exchange) -> None:
        exchange.write(head(status, {"transfer-encoding": "chunked", **(headers or {})}))
        for piece in pieces:
            if interval and not exchange.pause(interval):
                return
            exchange.write(frame(piece))
        if then is not None:
            ends = time.monotonic() + DRIBBLE_FOR
            while time.monotonic() < ends and exchange.pause(then):
                exchange.write(frame(pieces[-1] if pieces else b" "))
            return
        exchange.write(b"0\r\n\r\n")

    return reply


def bomb(inflated: int, encoding: str = "gzip") -> bytes:
    """`inflated` zero bytes compressed with `encoding` (gzip or deflate): about 1,000:1."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
    step = 1024 * 1024
    parts = [compressor.compress(bytes(min(step, inflated - at))) for at in range(0, inflated, step)]
    return b"".join([*parts, compressor.flush()])


@dataclass
class HostileServer:
    """Answers each request with the next scripted reply (see module docstring)."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    _server: socketserver.ThreadingTCPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *replies: Reply) -> HostileServer:
        with self._lock:
            self.replies.extend(replies)
        return self

    def start(self) -> HostileServer:
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            block_on_close = False

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def close(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(10)
        reader = sock.makefile("rb")
        try:
            while not self.stopping.is_set():
                request = _read_request(reader)
                if request is None:
                    return
                with self._lock:
                    self.requests.append(request)
                    reply = self.replies.pop(0) if self.replies else respond(599, b"unscripted request")
                reply(Exchange(sock, request, self.stopping))
        except OSError:
            return  # the client went away (it gave up, as it should)
        finally:
            reader.close()


def _read_request(reader: Any) -> Request | None:
    line = reader.readline(65536)
    if not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = reader.readline(65536)
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length", "0")))
    return Request(method, path, headers, body)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer().start()
    try:
        yield server
    finally:
        server.close()


__all__ = [
    "Exchange",
    "HostileServer",
    "Reply",
    "Request",
    "bomb",
    "chunked",
    "head",
    "hostile",
    "respond",
    "respond_json",
]
