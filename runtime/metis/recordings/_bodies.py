"""HTTP bodies as recorders keep them -> the text the server sent.

A recorder keeps the bytes on the wire, or near them: base64 (HAR's `encoding`, YAML's
`!!binary`, Ruby VCR's `base64_string`), still gzip- or deflate-compressed when the
recorder did not decode them, sometimes still in HTTP/1.1 chunked framing. `body_text`
undoes each of these in the order the server applied them; the result is what an HTTP
client would have handed the adapter.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from .._inflate import Inflater, inflated
from ..errors import RecordingError

MAX_BODY_BYTES = 256 * 1024 * 1024
"""Largest decompressed body read (a bound against a compression bomb in a recording)."""
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]+(?:;[^\r\n]*)?\r?\n")


def header(headers: Any, name: str) -> str:
    """One header's value(s) joined, lowercased; recorders keep headers as a dict of strings
    or of lists (vcrpy), or as a list of {name, value} (HAR)."""
    values: list[str] = []
    if isinstance(headers, Mapping):
        items = list(headers.items())
    elif isinstance(headers, list):
        items = [(h.get("name"), h.get("value")) for h in headers if isinstance(h, Mapping)]
    else:
        items = []
    for key, value in items:
        if isinstance(key, str) and key.lower() == name:
            values.extend(str(v) for v in (value if isinstance(value, list) else [value]))
    return ", ".join(values).lower()


def base64_bytes(text: str, *, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise RecordingError(f"body is not base64: {exc}", path=where) from None


def _dechunk(data: bytes, *, where: str) -> bytes:
    """HTTP/1.1 chunked framing removed; data that is not in that framing is kept whole."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        match = _CHUNK_SIZE.match(data, pos)
        if match is None:
            return data  # not chunked after all (the recorder already joined it)
        size = int(match.group().split(b";")[0].strip(), 16)
        pos = match.end()
        if size == 0:
            return b"".join(out)
        if pos + size > len(data):
            raise RecordingError("chunked body ends inside a chunk", path=where)
        out.append(data[pos : pos + size])
        pos += size
        pos += 2 if data[pos : pos + 2] == b"\r\n" else 1 if data[pos : pos + 1] == b"\n" else 0
    return b"".join(out)


def _inflate(data: bytes, coding: str, *, where: str) -> bytes:
    """`data` inflated whole by the one inflater (`metis._inflate`), its pieces gathered up to
    MAX_BODY_BYTES: a larger body is refused, having cost that bound plus one piece."""
    inflater = Inflater(
        coding, corrupt=lambda why: RecordingError(f"compressed body cannot be decoded: {why}", path=where)
    )
    out = bytearray()
    for piece in inflated([data], inflater):
        out += piece
        if len(out) > MAX_BODY_BYTES:
            raise RecordingError(f"decompressed body exceeds {MAX_BODY_BYTES} bytes", path=where)
    return bytes(out)


def decoded_bytes(data: bytes, headers: Any, *, where: str) -> bytes:
    """`data` with chunked framing and gzip/deflate removed (by the headers, or gzip's magic)."""
    if "chunked" in header(headers, "transfer-encoding"):
        data = _dechunk(data, where=where)
    encoding = header(headers, "content-encoding")
    if data[:2] == b"\x1f\x8b":  # gzip, whatever the headers say (a recorder may drop them)
        data = _inflate(data, "gzip", where=where)
    elif "deflate" in encoding and data[:1] not in (b"{", b"[", b"d", b"e", b":"):
        data = _inflate(data, "deflate", where=where)  # with the zlib wrapper or raw
    elif ("br" in encoding.split(", ") or "zstd" in encoding) and data[:1] not in (b"{", b"["):
        raise RecordingError(
            f"body is {encoding}-encoded, which metis does not decode",
            path=where,
            hint="record with decoded responses (vcrpy: decode_compressed_response=True)",
        )
    return data


def body_text(raw: str | bytes | None, headers: Any, *, where: str) -> str | None:
    """The body as text (see the module docstring); None when nothing was recorded."""
    if raw is None:
        return None
    data = raw.encode("utf-8", "surrogateescape") if isinstance(raw, str) else bytes(raw)
    if not data:
        return None
    data = decoded_bytes(data, headers, where=where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordingError(f"body is not UTF-8 text: {exc.reason}", path=where) from None


__all__ = ["MAX_BODY_BYTES", "base64_bytes", "body_text", "decoded_bytes", "header"]
