"""Stream framers: events split anywhere still frame the same, time grows linearly with the
bytes received, and one event is bounded (issue 17, item 1)."""

from __future__ import annotations

import time

import pytest
from metis.adapters._kit.framing import JSONArrayFramer, NDJSONFramer, SSEEvent, SSEFramer
from metis.errors import StreamLimitError, WireFormatError

BIG = 2 * 1024 * 1024
Framer = type[SSEFramer] | type[NDJSONFramer] | type[JSONArrayFramer]


def _feed(framer: SSEFramer | NDJSONFramer | JSONArrayFramer, body: bytes, size: int) -> list[object]:
    out: list[object] = []
    for i in range(0, len(body), size):
        out += framer.feed(body[i : i + size])
    out += framer.close()
    return out


SSE_BODY = b'event: a\r\ndata: {"x": 1}\r\n\r\n: comment\n\ndata: one\rdata: two\r\rdata: "\xc3\xa9"\n\n'
SSE_EVENTS = [SSEEvent("a", '{"x": 1}'), SSEEvent(None, "one\ntwo"), SSEEvent(None, '"é"')]


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(SSE_BODY)])
def test_sse_events_are_the_same_however_the_body_is_split(size: int) -> None:
    assert _feed(SSEFramer(), SSE_BODY, size) == SSE_EVENTS


def test_sse_event_cut_before_its_blank_line_is_discarded() -> None:
    assert _feed(SSEFramer(), b"data: whole\n\ndata: half", 4) == [SSEEvent(None, "whole")]


@pytest.mark.parametrize("size", [1, 5, 1000])
def test_ndjson_lines_are_the_same_however_the_body_is_split(size: int) -> None:
    body = b'{"a": 1}\n\n  {"b": "\xc3\xa9"}  \n{"c": 3}'
    assert _feed(NDJSONFramer(), body, size) == ['{"a": 1}', '{"b": "é"}', '{"c": 3}']


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_json_array_elements_are_the_same_however_the_body_is_split(size: int) -> None:
    body = b'[{"a": "]}\\"["}, [1, {"b": [2]}] ,\n "s\\\\", 7 , true]trailing'
    assert _feed(JSONArrayFramer(), body, size) == [
        '{"a": "]}\\"["}',
        '[1, {"b": [2]}]',
        '"s\\\\"',
        "7",
        "true",
    ]


def test_json_array_cut_mid_element_yields_only_complete_elements() -> None:
    assert _feed(JSONArrayFramer(), b'[{"a": 1}, {"b": "cut', 2) == ['{"a": 1}']


def test_json_array_framer_refuses_a_body_that_is_not_an_array() -> None:
    with pytest.raises(WireFormatError):
        JSONArrayFramer().feed(b'{"a": 1}')


PAYLOAD = b'{"a": "' + b"x" * BIG + b'"}'


@pytest.mark.parametrize(
    ("framer", "body"),
    [
        (SSEFramer, b"data: " + PAYLOAD + b"\n\n"),
        (NDJSONFramer, PAYLOAD + b"\n"),
        (JSONArrayFramer, b"[" + PAYLOAD + b"]"),
    ],
    ids=["sse", "ndjson", "array"],
)
def test_a_2_mib_event_in_1_kib_pieces_frames_in_linear_time(framer: Framer, body: bytes) -> None:
    """Quadratic framing re-copied the whole buffer per piece: seconds for this body (the
    bound leaves a wide margin for a slow machine; linear framing takes well under 0.2 s)."""
    started = time.perf_counter()
    events = _feed(framer(), body, 1024)
    assert len(events) == 1
    assert time.perf_counter() - started < 1.0


def test_many_events_in_one_piece_frame_in_linear_time() -> None:
    """A 2.9 MB body of 150,000 small events arriving in one piece: re-slicing the buffer
    after each line made this quadratic (about a minute)."""
    body = b"".join(b'data: {"i":%d}\n\n' % i for i in range(150_000))
    started = time.perf_counter()
    assert len(_feed(SSEFramer(), body, len(body))) == 150_000
    assert time.perf_counter() - started < 10.0


@pytest.mark.parametrize(
    ("kind", "piece"),
    [
        (SSEFramer, b"data: " + b"x" * 1024),  # one data line that never ends
        (SSEFramer, b"data: " + b"x" * 1000 + b"\n"),  # data lines, no blank line
        (NDJSONFramer, b"x" * 1024),
        (JSONArrayFramer, b"[" + b'"' + b"x" * 1024),
        (JSONArrayFramer, b"[[" + b"1," * 512),
    ],
    ids=["sse-line", "sse-event", "ndjson", "array-string", "array-nested"],
)
def test_an_event_that_never_ends_stops_at_the_bound(kind: Framer, piece: bytes) -> None:
    framer = kind(max_event_chars=4096)
    with pytest.raises(StreamLimitError) as caught:
        for _ in range(10):
            framer.feed(piece)
    assert caught.value.limit == 4096


@pytest.mark.parametrize(
    ("kind", "body"),
    [(SSEFramer, b"data: %s\n\n"), (NDJSONFramer, b"%s\n"), (JSONArrayFramer, b"[%s]")],
    ids=["sse", "ndjson", "array"],
)
def test_one_oversized_event_in_one_piece_is_refused(kind: Framer, body: bytes) -> None:
    with pytest.raises(StreamLimitError):
        kind(max_event_chars=100).feed(body % (b'"' + b"y" * 200 + b'"'))


def test_events_within_the_bound_pass() -> None:
    assert _feed(SSEFramer(max_event_chars=100), b"data: " + b"z" * 90 + b"\n\n", 7) == [
        SSEEvent(None, "z" * 90)
    ]
