"""The JSON reader's two bounds hold on every path, and what is written can be read back
(issue 17, item 5): integers of up to 4,300 digits, nesting up to 1,024 levels, whether or
not the text holds a long digit run; past either, a typed error, at write and at read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from metis import _json
from metis.canonical import read_message
from metis.errors import DocumentError, StoreError
from metis.store import open_store

from tests.support.store_support import BACKENDS, message, new_target

LONGEST = 10**_json.MAX_INT_DIGITS - 1  # 4,300 nines
TOO_LONG = 10**_json.MAX_INT_DIGITS  # 4,301 digits


@pytest.mark.parametrize(
    "number", [LONGEST, -LONGEST, 2**64, -(2**64) - 1, 10**400], ids=["4300", "-4300", "2^64", "-2^64", "401"]
)
def test_the_longest_integers_are_read_and_written_exactly(number: int) -> None:
    text = _json.dumps({"n": [number]})
    assert _json.loads(text) == {"n": [number]}


@pytest.mark.parametrize("number", [TOO_LONG, -TOO_LONG, TOO_LONG * 10**100], ids=["4301", "-4301", "4401"])
def test_a_longer_integer_is_refused_by_the_writer(number: int) -> None:
    with pytest.raises(ValueError, match=r"a\[0\]: an integer of more than 4,300 digits"):
        _json.dumps({"a": [number]})


@pytest.mark.parametrize("digits", [b"9" * 4301, b"-" + b"9" * 4301, b"1" * 10_000])
def test_a_longer_integer_is_refused_by_the_reader(digits: bytes) -> None:
    with pytest.raises(_json.JSONDecodeError, match="metis reads integers of at most 4,300 digits"):
        _json.loads(b'{"a": [' + digits + b"]}")


def test_a_document_with_a_too_long_integer_is_a_document_error() -> None:
    doc = (
        b'{"id": "01HZ0000000000000000000001", "session_id": "s", "role": "user", '
        b'"content": [{"type": "text", "text": "hi"}], "metadata": {"provider_raw": {"n": '
        + b"7" * 4301
        + b'}}, "created_at": "2026-01-01T00:00:00Z", "schema_version": 3}'
    )
    with pytest.raises(DocumentError, match="4,300 digits"):
        read_message(doc)


@pytest.mark.parametrize("number", [b"1", b"12345678901234567890"])
def test_nesting_is_read_to_1024_levels_with_or_without_a_long_number(number: bytes) -> None:
    limit = sys.getrecursionlimit()
    depth = _json.MAX_DEPTH
    value = _json.loads(b"[" * depth + number + b"]" * depth)
    for _ in range(depth):
        value = value[0]
    assert value == int(number)
    with pytest.raises(_json.JSONDecodeError):
        _json.loads(b"[" * (depth + 1) + number + b"]" * (depth + 1))
    assert sys.getrecursionlimit() == limit  # the exact parser's room is given back


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_store_reads_back_every_integer_it_accepts(backend: str, tmp_path: Path) -> None:
    with open_store(new_target(backend, tmp_path)) as store:
        sid = store.create_session("/w").id
        kept = message(
            sid, "user", [{"type": "text", "text": "x"}], {"provider_raw": {"n": [LONGEST, -LONGEST]}}
        )
        store.append(kept)
        refused = message(
            sid, "user", [{"type": "text", "text": "y"}], {"provider_raw": {"n": [1, TOO_LONG]}}
        )
        with pytest.raises(StoreError, match=r"provider_raw\.n\[1\]: an integer of more than 4,300 digits"):
            store.append(refused)
        # Before, the longer integer was stored and then every read of the session failed.
        assert store.load_session(sid) == [kept]
