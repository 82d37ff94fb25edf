"""The one inflater reads a "deflate" body however the network splits it.

Which deflate a body is (zlib-wrapped or raw) shows in its first two bytes; a server's body
whose first read is a single byte must still be read, raw or wrapped.
"""

from __future__ import annotations

import gzip
import zlib

import pytest
from metis._inflate import Inflater, inflated
from metis.errors import WireFormatError

BODY = b'{"id":"msg_01","content":[{"type":"text","text":"' + b"hello " * 2000 + b'"}]}'


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _splits(data: bytes) -> list[list[bytes]]:
    """The body read whole, its first byte alone, byte by byte for a while, in 7-byte reads."""
    return [
        [data],
        [data[:1], data[1:]],
        [data[i : i + 1] for i in range(40)] + [data[40:]],
        [data[i : i + 7] for i in range(0, len(data), 7)],
    ]


@pytest.mark.parametrize("encoded", [zlib.compress(BODY), _raw_deflate(BODY)], ids=["zlib", "raw"])
def test_a_deflate_body_is_read_however_its_reads_split_it(encoded: bytes) -> None:
    for reads in _splits(encoded):
        assert b"".join(inflated(reads, Inflater("deflate"))) == BODY


@pytest.mark.parametrize("coding", ["deflate", "gzip"])
def test_a_body_cut_short_is_refused_at_its_end(coding: str) -> None:
    whole = zlib.compress(BODY) if coding == "deflate" else gzip.compress(BODY)
    for cut in (whole[:1], whole[: len(whole) // 2], whole[:-3]):
        with pytest.raises(WireFormatError, match=f"{coding} body is corrupt: the body ends before"):
            list(inflated([cut], Inflater(coding, provider="openai")))


@pytest.mark.parametrize("coding", ["deflate", "gzip"])
def test_a_body_of_no_bytes_is_empty_not_cut_short(coding: str) -> None:
    # A 204, or a proxy's error reply with no body, may still name its Content-Encoding;
    # httpx reads such a body as b"", and so does the one inflater (no stream began).
    for reads in ([], [b""], [b"", b""]):
        assert b"".join(inflated(reads, Inflater(coding, provider="openai"))) == b""
