"""Canonical documents with hostile values get typed errors (issue 17, item 5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from metis.canonical import read_message
from metis.errors import DocumentError


def _message(block_type: Any) -> bytes:
    return json.dumps(
        {
            "id": "01HZ0000000000000000000001",
            "session_id": "s",
            "role": "user",
            "content": [{"type": block_type, "text": "hi"}],
            "metadata": {},
            "created_at": "2026-01-01T00:00:00Z",
            "schema_version": 1,
        }
    ).encode()


@pytest.mark.parametrize("block_type", [{}, {"a": 1}, [], ["text"], 5, None])
def test_a_block_type_of_any_json_type_is_a_document_error(block_type: Any) -> None:
    with pytest.raises(DocumentError) as caught:
        read_message(_message(block_type))
    assert "content[0]" in str(caught.value)


@pytest.mark.parametrize("digits", [309, 400, 4000])
def test_integers_of_any_length_json_allows_are_read_exactly(digits: int) -> None:
    from metis import _json

    number = int("9" * digits)
    assert _json.loads(f'{{"n": {number}}}'.encode()) == {"n": number}


def test_text_that_is_not_json_is_still_refused_with_a_long_digit_run() -> None:
    from metis import _json

    with pytest.raises(_json.JSONDecodeError):
        _json.loads(b'{"n": ' + b"9" * 400 + b", }")
    with pytest.raises(_json.JSONDecodeError):
        _json.loads(b'{"n": NaN, "m": ' + b"9" * 400 + b"}")


def test_a_deep_document_holding_a_long_number_is_read() -> None:
    from metis import _json

    text = b"[" * 600 + b"1234567890123456789012" + b"]" * 600
    value = _json.loads(text)
    for _ in range(600):
        value = value[0]
    assert value == 1234567890123456789012
