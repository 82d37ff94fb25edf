"""The gateway bench's scripted upstream: an OpenAI Chat Completions stand-in on 127.0.0.1
that answers every POST after a fixed latency, whole or streamed (`"stream": true`).

Raw asyncio (HTTP/1.1 keep-alive, Content-Length or chunked request bodies), so that the
upstream costs a few tens of microseconds a request and never becomes what the bench
measures: every millisecond over `latency` that a client sees through a proxy is the
proxy's (or the load generator's, which the bench's direct row measures). Run as
`python -m bench._gateway_upstream LATENCY_MS`; it prints its port on stdout, serves
until stdin closes (so it dies with the bench), and counts what it answered.
"""

from __future__ import annotations

import asyncio
import json
import sys

REPLY_TEXT = "The bench's fixed reply: every proxy returns exactly these words."
"""The assistant text every reply carries (the load generator checks for it)."""

_CHUNKS = ("The bench's fixed reply:", " every proxy returns", " exactly these words.")


def whole_reply() -> bytes:
    """A Chat Completions reply body as OpenAI documents it."""
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1767225600,
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": REPLY_TEXT, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 19, "completion_tokens": 13, "total_tokens": 32},
            "system_fingerprint": "fp_bench",
        }
    ).encode()


def stream_reply() -> bytes:
    """The same reply as Chat Completions stream chunks (with the usage chunk and [DONE])."""

    def chunk(delta: dict[str, object], finish: str | None = None, usage: object = None) -> bytes:
        body: dict[str, object] = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": "gpt-4o-2024-08-06",
            "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            if usage is None
            else [],
        }
        if usage is not None:
            body["usage"] = usage
        return b"data: " + json.dumps(body).encode() + b"\n\n"

    frames = [chunk({"role": "assistant", "content": ""})]
    frames += [chunk({"content": text}) for text in _CHUNKS]
    frames.append(chunk({}, "stop"))
    frames.append(chunk({}, usage={"prompt_tokens": 19, "completion_tokens": 13, "total_tokens": 32}))
    frames.append(b"data: [DONE]\n\n")
    return b"".join(frames)


def _response(body: bytes, kind: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n" % (kind, len(body))
    return head + body


WHOLE = _response(whole_reply(), b"application/json")
STREAM = _response(stream_reply(), b"text/event-stream")


async def _read_body(reader: asyncio.StreamReader, head: bytes) -> bytes:
    length = 0
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if not chunked:
        return await reader.readexactly(length)
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        parts.append(await reader.readexactly(size + 2))
        if size == 0:
            return b"".join(parts)


class Upstream:
    """The server: one fixed reply after `latency` seconds, for every request."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.answered = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                body = await _read_body(reader, head)
                streamed = _wants_stream(body)
                await asyncio.sleep(self.latency)
                writer.write(STREAM if streamed else WHOLE)
                self.answered += 1
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


def _wants_stream(body: bytes) -> bool:
    try:
        return json.loads(body).get("stream") is True
    except (ValueError, AttributeError):
        return False


async def _main(latency: float) -> None:
    upstream = Upstream(latency)
    server = await asyncio.start_server(upstream.handle, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    # Serve until the bench closes our stdin (or dies): never outlive it.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()
    print(upstream.answered, flush=True)


if __name__ == "__main__":
    try:
        from uvloop import run
    except ImportError:
        from asyncio import run
    run(_main(float(sys.argv[1]) / 1000))
