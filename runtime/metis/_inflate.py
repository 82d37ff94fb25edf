"""Bodies inflated a bounded piece at a time: the one inflater of metis.

Two readers use it. The client: httpx inflates each network read whole, so 64 KiB of gzip
that inflates 1,000:1 arrives as one 64 MiB piece before any bound the client keeps can
see it. The client therefore asks only for the encodings it inflates itself
(`ACCEPT_ENCODING`), reads raw bytes, and turns them into pieces of at most `PIECE` bytes
with zlib's `max_length`, so every bound on a body or a stream event holds in memory too:
a compressed bomb costs what the bound allows plus one piece. An encoding that was not
asked for (br, zstd, anything else) is refused with a typed error rather than passed on
compressed. And `metis import` (`metis.recordings`): a recorded body still gzip- or
deflate-compressed is fed through whole, under the reader's own bound and error type.

"deflate" is read with the zlib wrapper or without it (raw deflate, as servers often send
it and httpx also allows): zlib's first, raw when zlib refuses the first bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable, Iterator

from .errors import WireFormatError

ACCEPT_ENCODING = "gzip, deflate"
"""What the client asks servers for: the encodings `Inflater` inflates."""
PIECE = 64 * 1024
"""Largest piece of inflated output handed on at once."""

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_ZLIB_WBITS = zlib.MAX_WBITS
_RAW_WBITS = -zlib.MAX_WBITS


class Inflater:
    """Decodes one body's Content-Encoding (none, gzip or deflate) in bounded pieces.

    `corrupt` makes the error for a body zlib cannot inflate from zlib's reason, for a reader
    whose errors are its own (a recording's names the file and exchange); by default a
    WireFormatError naming the response's coding and `provider`."""

    def __init__(
        self,
        content_encoding: str | None,
        *,
        provider: str | None = None,
        corrupt: Callable[[str], Exception] | None = None,
    ) -> None:
        self.provider = provider
        self._corrupt_error = corrupt
        codings = [c.strip().lower() for c in (content_encoding or "").split(",")]
        codings = [c for c in codings if c and c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise WireFormatError(
                f"the response's content-encoding {content_encoding!r:.80} was not asked for",
                provider=provider,
                hint=f"the client asks for {ACCEPT_ENCODING!r} only",
            )
        self.coding = codings[0] if codings else None
        self._zlib: zlib._Decompress | None = None
        if self.coding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(_GZIP_WBITS)
        elif self.coding == "deflate":
            self._zlib = zlib.decompressobj(_ZLIB_WBITS)
        self._started = False
        self._head = b""
        """A "deflate" body's first byte while it is alone (see `feed`)."""
        self._empty = True
        """No byte of the body came yet: a body of none is empty, not a stream cut short
        (a 204, or an error reply with no body, may still name its Content-Encoding)."""

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated pieces of `data` (raw bytes of the body, in order)."""
        self._empty = self._empty and not data
        if self._zlib is None:
            for at in range(0, len(data), PIECE):
                yield data[at : at + PIECE]
            return
        if self.coding == "deflate" and not self._started:
            # Which "deflate" this is (zlib-wrapped or raw) shows in its first two bytes, the
            # zlib header: zlib takes one byte alone without a word, so a body whose first
            # network read is one byte would be judged zlib before raw could be tried, and
            # refused at the next read. The first byte waits for the second.
            data, self._head = self._head + data, b""
            if len(data) < 2:
                self._head = data
                return
        yield from self._inflate(data)

    def close(self) -> Iterator[bytes]:
        """What zlib still holds once the body ended (nothing for a body of no bytes)."""
        if self._zlib is not None and not self._empty:
            head, self._head = self._head, b""
            yield from self._inflate(head)
            try:
                tail = self._zlib.flush()
            except zlib.error as exc:
                raise self._corrupt(exc) from None
            if tail:
                yield tail
            if not self._zlib.eof:  # zlib says nothing of a stream cut short: its end never came
                raise self._corrupt(zlib.error("the body ends before its compressed stream does"))

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        assert self._zlib is not None
        pending = data
        while True:
            try:
                out = self._zlib.decompress(pending, PIECE)
            except zlib.error as exc:
                if self.coding == "deflate" and not self._started:
                    # "deflate" is often sent raw, without the zlib wrapper (as httpx also allows)
                    self._zlib, self._started = zlib.decompressobj(_RAW_WBITS), True
                    yield from self._inflate(pending)
                    return
                raise self._corrupt(exc) from None
            self._started = True
            pending = self._zlib.unconsumed_tail
            if out:
                yield out
            if not pending and len(out) < PIECE:
                return

    def _corrupt(self, exc: zlib.error) -> Exception:
        if self._corrupt_error is not None:
            return self._corrupt_error(str(exc))
        return WireFormatError(f"the response's {self.coding} body is corrupt: {exc}", provider=self.provider)


def inflated(raw: Iterable[bytes], inflater: Inflater) -> Generator[bytes]:
    """A body's raw chunks inflated, in pieces of at most PIECE bytes."""
    for chunk in raw:
        yield from inflater.feed(chunk)
    yield from inflater.close()


async def ainflated(raw: AsyncIterator[bytes], inflater: Inflater) -> AsyncGenerator[bytes]:
    """`inflated` for an async body (close it with `contextlib.aclosing`)."""
    async for chunk in raw:
        for piece in inflater.feed(chunk):
            yield piece
    for piece in inflater.close():
        yield piece


__all__ = ["ACCEPT_ENCODING", "PIECE", "Inflater", "ainflated", "inflated"]
