"""Real parts for gateway tests: a scripted upstream provider and `metis serve`, both on
loopback HTTP in threads, so the official SDKs talk to the gateway exactly as they talk
to a provider.

`ScriptedUpstream` answers each POST with the next reply queued for its path (a golden
reply or stream of a provider, with a status) and records what it was sent; it is the
only "provider" the gateway reaches. `Gateway` runs uvicorn with the app from
`metis.gateway.create_app` over an AsyncClient whose providers all point at the upstream.
Both stop by themselves at the end of a test (bounded waits, daemon threads).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from metis.client import AsyncClient
from metis.gateway import create_app
from metis.store import Store, open_store

from tests.support import golden


class ScriptedUpstream:
    """A provider stand-in on 127.0.0.1 replaying queued replies per path."""

    def __init__(self) -> None:
        self.replies: dict[str, deque[tuple[int, str, bytes]]] = defaultdict(deque)
        self.dribble: dict[str, float] = {}
        """Path -> seconds between the SSE events of its streamed replies (sent one by one)."""
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []
        self.fallback: Callable[[str, dict[str, Any]], str | None] | None = None
        """Names the golden that answers a request nothing is queued for (path, body)."""
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = orjson.loads(self.rfile.read(length)) if length else {}
                upstream.received.append((self.path, body))
                upstream.headers.append({k.lower(): v for k, v in self.headers.items()})
                queue = upstream.replies.get(self.path)
                fallback = upstream.fallback(self.path, body) if upstream.fallback and not queue else None
                if fallback:
                    status, kind, payload = upstream.golden(fallback)
                elif not queue:
                    status, kind, payload = (
                        500,
                        "application/json",
                        b'{"error": {"message": "nothing scripted"}}',
                    )
                else:
                    status, kind, payload = queue.popleft()
                self.send_response(status)
                self.send_header("content-type", kind)
                pause = upstream.dribble.get(self.path)
                if pause is None:
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_header("connection", "close")  # the body ends when the connection does
                self.end_headers()
                for event in payload.split(b"\n\n"):
                    try:
                        self.wfile.write(event + b"\n\n")
                        self.wfile.flush()
                    except OSError:
                        return  # the gateway hung up
                    time.sleep(pause)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def reply(self, path: str, golden: str, status: int = 200) -> None:
        """Queue a golden file (`provider/name`) as the next answer to `path`."""
        self.replies[path].append(self.golden(golden, status))

    @staticmethod
    def golden(name: str, status: int = 200) -> tuple[int, str, bytes]:
        """A golden file (`provider/name`) as an answer: status, content type, body."""
        payload = (golden.ROOT / name).read_bytes()
        kind = "text/event-stream" if name.endswith(".sse") else "application/json"
        return status, kind, payload

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Gateway:
    """`metis serve` on 127.0.0.1 in a thread, its providers pointed at `upstream`."""

    def __init__(
        self,
        upstream: ScriptedUpstream,
        store: str,
        *,
        max_body_bytes: int | None = None,
        wrap_store: Callable[[Store], Any] | None = None,
        retries: tuple[float, ...] | None = None,
        upstream_key: str = "upstream-key",
    ) -> None:
        self.store = store
        self._wrap = wrap_store
        self._retries = retries
        self._key = upstream_key
        self.app: Any = None
        self._ready = threading.Event()
        self._server: uvicorn.Server | None = None
        self._upstream = upstream
        self._max_body = max_body_bytes
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(20):
            raise RuntimeError("the gateway did not start within 20 s")
        assert self._server is not None
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        base = self._upstream.url
        opened = open_store(self.store)
        client = AsyncClient(
            opened if self._wrap is None else self._wrap(opened),
            api_keys=dict.fromkeys(
                ("anthropic", "openai", "responses", "gemini", "openrouter", "mistral"), self._key
            ),
            base_urls={
                "anthropic": base,
                "openai": f"{base}/v1",
                "responses": f"{base}/v1",
                "gemini": base,
                "openrouter": f"{base}/api/v1",
                "mistral": f"{base}/mistral/v1",
                "ollama": f"{base}/ollama",
            },
            max_retries=0,
        )
        kw: dict[str, Any] = {} if self._max_body is None else {"max_body_bytes": self._max_body}
        if self._retries is not None:
            kw["retries"] = self._retries
        app = self.app = create_app(client, **kw)
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        serving = asyncio.ensure_future(self._server.serve())
        while not self._server.started:
            await asyncio.sleep(0.01)
        self._ready.set()
        await serving
        await client.aclose()
        opened.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        deadline = time.monotonic() + 10
        self._thread.join(max(0.0, deadline - time.monotonic()))


@contextmanager
def metis_serve(
    upstream: ScriptedUpstream, db: str, home: Path, *args: str, start_within: float, timeout: float
) -> Iterator[Any]:
    """`metis serve` as users run it: a real process on a free loopback port, the upstream's
    key and base URL from the environment, the store from `--db`, more options in `args`.
    Yields the official OpenAI SDK (no retries, `timeout`) once the gateway answers, which
    must be within `start_within` seconds; the process is stopped on exit."""
    import openai

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "upstream-key",
        "METIS_ANTHROPIC_BASE_URL": upstream.url,
        "METIS_HOME": str(home),
    }
    command = [sys.executable, "-c", "from metis.cli import main; main()", "--db", db, "serve"]
    process = subprocess.Popen([*command, "--port", str(port), *args], env=env, stderr=subprocess.PIPE)
    try:
        client = openai.OpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0, timeout=timeout
        )
        deadline = time.monotonic() + start_within
        while True:
            try:
                client.models.list()
                break
            except openai.APIConnectionError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, f"metis serve did not start in {start_within:g} s"
                time.sleep(0.2)
        yield client
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextmanager
def replaying_gateway(
    fallback: Callable[[str, dict[str, Any]], str | None], directory: Path
) -> Iterator[Gateway]:
    """A gateway (its store in `directory`) before an upstream that answers every request
    with the golden `fallback` names for its path and body; both closed on exit."""
    upstream = ScriptedUpstream()
    upstream.fallback = fallback
    gateway = Gateway(upstream, str(directory / "gateway.sqlite3"))
    try:
        yield gateway
    finally:
        gateway.close()
        upstream.close()


def openai_client(gateway: Gateway, key: str = "any") -> Any:
    """The official OpenAI SDK pointed at the gateway (no retries: a test sees every answer)."""
    import openai

    return openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0, timeout=20)


def anthropic_client(gateway: Gateway, key: str = "any") -> Any:
    """The official Anthropic SDK pointed at the gateway."""
    import anthropic

    return anthropic.Anthropic(base_url=gateway.url, api_key=key, max_retries=0, timeout=20)
