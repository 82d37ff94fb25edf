"""The gateway bench's load generator: an open-loop HTTP/1.1 client on 127.0.0.1.

Open loop: request i is due at `i / rate` seconds from the start whether or not earlier
ones have been answered (a closed loop — next request when the last returns — would slow
down with the proxy and hide its queue), and its latency counts from when it was due, so
time spent waiting for a free connection is the proxy's too. Raw asyncio (keep-alive
connections, Content-Length or chunked replies) costs far less CPU per request than an
HTTP library would; on a 2-core machine the client shares the CPU with what it measures.

Bounded: a step sends exactly `rate * seconds` requests, each of which fails after
`timeout` seconds, on at most `connections` connections, then stops by itself.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Step:
    """What one rate step saw: each answered request's latency, and every failure by kind."""

    rate: float
    sent: int
    latencies: list[float] = field(default_factory=list)
    """Seconds from due to the last byte, for requests answered 200 with the expected reply."""
    failures: Counter[str] = field(default_factory=Counter)
    elapsed: float = 0.0

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile of the answered latencies (seconds; inf when none)."""
        if not self.latencies:
            return float("inf")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


class _Reply:
    __slots__ = ("body", "keep", "status")

    def __init__(self, status: int, body: bytes, keep: bool) -> None:
        self.status, self.body, self.keep = status, body, keep


async def _read_reply(reader: asyncio.StreamReader) -> _Reply:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = -1
    chunked = False
    keep = True
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            keep = b"close" not in value.lower()
    if chunked:
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            data = await reader.readexactly(size + 2)
            if size == 0:
                break
            parts.append(data[:-2])
        return _Reply(status, b"".join(parts), keep)
    if length >= 0:
        return _Reply(status, await reader.readexactly(length), keep)
    return _Reply(status, await reader.read(), False)


async def run_step(
    port: int,
    path: str,
    headers: dict[str, str],
    body: Callable[[int], bytes],
    expect: bytes,
    *,
    rate: float,
    seconds: float,
    timeout: float = 10.0,
    connections: int = 512,
) -> Step:
    """Send `rate * seconds` POSTs to 127.0.0.1:`port``path` at `rate` per second.

    `body(i)` is request i's JSON body; a request succeeds when it is answered 200 with
    `expect` somewhere in the reply body."""
    clock = time.perf_counter  # uvloop's loop.time() counts whole milliseconds
    count = max(1, round(rate * seconds))
    step = Step(rate=rate, sent=count)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    open_ = asyncio.Semaphore(connections)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    prefix = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n{extra}"

    async def one(i: int, due: float) -> None:
        payload = body(i)
        request = (prefix + f"content-length: {len(payload)}\r\n\r\n").encode() + payload
        conn = None
        try:
            async with asyncio.timeout(max(0.0, due + timeout - clock())), open_:
                conn = idle.pop() if idle else await asyncio.open_connection("127.0.0.1", port)
                conn[1].write(request)
                reply = await _read_reply(conn[0])
        except TimeoutError:
            step.failures["timeout"] += 1
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            step.failures[type(exc).__name__] += 1
        else:
            if reply.keep:
                idle.append(conn)
                conn = None
            if reply.status != 200:
                step.failures[f"HTTP {reply.status}"] += 1
            elif expect not in reply.body:
                step.failures["unexpected reply"] += 1
            else:
                step.latencies.append(clock() - due)
        finally:
            if conn is not None:
                conn[1].close()

    start = clock() + 0.01
    tasks = []
    for i in range(count):
        due = start + i / rate
        delay = due - clock()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(i, due)))
    await asyncio.gather(*tasks)
    step.elapsed = clock() - start
    for _, writer in idle:
        writer.close()
    return step


__all__ = ["Step", "run_step"]
