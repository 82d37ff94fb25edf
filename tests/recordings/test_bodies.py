"""Recorded bodies still compressed: `metis import` inflates them whole through the one
inflater the client streams with (`metis._inflate`), under its own bound and error type."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator

import pytest
from metis._inflate import PIECE, Inflater, inflated
from metis.errors import RecordingError, WireFormatError
from metis.recordings import _bodies
from metis.recordings._bodies import body_text

TEXT = '{"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "Hello!"}}]}' * 50
WHERE = "interactions[0].response.body"


def _deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (gzip.compress(TEXT.encode()), {"Content-Encoding": "gzip"}),
        (gzip.compress(TEXT.encode()), {}),  # gzip's magic, the header dropped by the recorder
        (gzip.compress(TEXT.encode()), [{"name": "content-encoding", "value": "deflate"}]),  # the magic wins
        (_deflate(TEXT.encode(), zlib.MAX_WBITS), {"content-encoding": ["deflate"]}),  # zlib-wrapped
        (_deflate(TEXT.encode(), -zlib.MAX_WBITS), {"content-encoding": "deflate"}),  # raw deflate
        (TEXT.encode(), {"content-encoding": "deflate"}),  # the recorder decoded it, kept the header
    ],
    ids=["gzip", "gzip-sniffed", "gzip-named-deflate", "deflate-zlib", "deflate-raw", "deflate-decoded"],
)
def test_a_compressed_recorded_body_is_inflated_whole(body: bytes, headers: object) -> None:
    assert body_text(body, headers, where=WHERE) == TEXT


def test_deflate_with_a_small_window_zlib_header_is_read_too() -> None:
    """A zlib stream with a 1 KiB window starts 0x28, not 0x78: the old reader took any other
    first byte for raw deflate and refused it; the one inflater tries zlib's wrapper first."""
    body = _deflate(TEXT.encode(), 10)
    assert body[:1] == b"\x28"
    assert body_text(body, {"content-encoding": "deflate"}, where=WHERE) == TEXT


@pytest.mark.parametrize(
    ("body", "encoding"),
    [(b"\x1f\x8b\x08\x00garbage-garbage", "gzip"), (b"\x78\x9cgarbage-garbage", "deflate")],
)
def test_a_corrupt_recorded_body_is_a_recording_error_naming_where(body: bytes, encoding: str) -> None:
    with pytest.raises(RecordingError, match="compressed body cannot be decoded: ") as caught:
        body_text(body, {"content-encoding": encoding}, where=WHERE)
    assert caught.value.path == WHERE and not isinstance(caught.value, WireFormatError)


def test_a_recorded_bomb_is_refused_at_the_bound_having_inflated_at_most_a_piece_past_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bound = 4 * PIECE
    monkeypatch.setattr(_bodies, "MAX_BODY_BYTES", bound)
    assert body_text(gzip.compress(b"x" * bound), {}, where=WHERE) == "x" * bound  # the bound itself is read
    sizes: list[int] = []

    def counted(raw: Iterable[bytes], inflater: Inflater) -> Iterator[bytes]:
        for piece in inflated(raw, inflater):
            sizes.append(len(piece))
            yield piece

    monkeypatch.setattr(_bodies, "inflated", counted)
    with pytest.raises(RecordingError, match=f"decompressed body exceeds {bound} bytes") as caught:
        body_text(gzip.compress(bytes(1000 * PIECE)), {"content-encoding": "gzip"}, where=WHERE)
    assert caught.value.path == WHERE
    assert max(sizes) <= PIECE and sum(sizes) <= bound + PIECE


def test_the_client_inflater_keeps_its_own_errors_beside_the_recordings() -> None:
    with pytest.raises(WireFormatError, match="the response's gzip body is corrupt") as caught:
        list(Inflater("gzip", provider="openai").feed(b"\x1f\x8b\x08\x00garbage-garbage"))
    assert caught.value.provider == "openai" and not isinstance(caught.value, RecordingError)
    with pytest.raises(WireFormatError, match="not asked for"):
        Inflater("br", corrupt=RecordingError)
