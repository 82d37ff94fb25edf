"""Stream framing: one 2 MiB event in 1 KiB pieces, the same body in one piece, and a
2.9 MB body of 150,000 small events in one piece, for each framer.

The first and last were quadratic before the framers kept unfinished events as pieces
(issue 17, item 1); run as `python -m bench.bench_framing`.
"""

from __future__ import annotations

import time

from metis.adapters._framing import JSONArrayFramer, NDJSONFramer, SSEFramer

BIG = 2 * 1024 * 1024
PAYLOAD = b'{"a": "' + b"x" * BIG + b'"}'
Framer = type[SSEFramer] | type[NDJSONFramer] | type[JSONArrayFramer]
BODIES: dict[str, tuple[Framer, bytes]] = {
    "sse": (SSEFramer, b"data: " + PAYLOAD + b"\n\n"),
    "ndjson": (NDJSONFramer, PAYLOAD + b"\n"),
    "json-array": (JSONArrayFramer, b"[" + PAYLOAD + b"]"),
}


def _seconds(framer: SSEFramer | NDJSONFramer | JSONArrayFramer, body: bytes, piece: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(body), piece):
        framer.feed(body[i : i + piece])
    framer.close()
    return time.perf_counter() - started


def main() -> None:
    for name, (kind, body) in BODIES.items():
        chunked = _seconds(kind(), body, 1024)
        whole = _seconds(kind(), body, len(body))
        print(f"{name:11s} 2 MiB event in 1 KiB pieces {chunked:7.3f} s   in one piece {whole:7.3f} s")
    small = b"".join(b'data: {"i":%d}\n\n' % i for i in range(150_000))
    print(f"sse         150,000 events in one piece     {_seconds(SSEFramer(), small, len(small)):7.3f} s")


if __name__ == "__main__":
    main()
