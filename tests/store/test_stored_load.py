"""Reading stored rows back, on both backends (issue 25's stored-load path): the store
hands the reader each row's `created_at` as the aware UTC datetime its microseconds are
(`metis.store._codec.document`), and what comes back is the stored message exactly: the
same instant to the microsecond, in UTC, hashing as it did; a row that fails is reported
as before, by the schema's view of the document, without a word about its time.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from metis.canonical import message_hash, message_to_json, read_message
from metis.errors import DocumentError
from metis.store import open_store

from tests.support.store_support import message, raw_rows

SID = "sess_stored_load"
MOMENTS = [
    datetime(2026, 5, 8, 12, 0, 0, 123456, tzinfo=UTC),
    datetime(2026, 5, 8, 12, 0, 0, tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 999995, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
]


def test_a_loaded_message_is_the_stored_instant_in_utc_to_the_microsecond(target: str) -> None:
    written = [
        message(SID, "user", [{"type": "text", "text": f"t{i}"}], created_at=m) for i, m in enumerate(MOMENTS)
    ]
    with open_store(target) as store:
        store.create_session("/w", session_id=SID)
        store.append_many(written)
        loaded = store.load_session(SID)
    assert loaded == written
    for before, after in zip(written, loaded, strict=True):
        assert after.created_at == before.created_at
        assert after.created_at.tzinfo is UTC  # UTC itself, as messages built in code hold it
        assert after.created_at.microsecond == before.created_at.microsecond
        assert message_hash(after) == message_hash(before)
        assert after == read_message(message_to_json(before))  # the JSON text reads the same


def test_a_stored_row_that_fails_is_reported_by_its_bad_part_only(target: str) -> None:
    kept = message(SID, "user", [{"type": "text", "text": "hi"}])
    with open_store(target) as store:
        store.create_session("/w", session_id=SID)
        store.append(kept)
    param = "?::jsonb" if target.startswith("postgresql://") else "?"
    damage = f"UPDATE messages SET content_json = {param} WHERE id = ? RETURNING id"
    assert raw_rows(target, damage, '[{"type": "text"}]', kept.id)
    with open_store(target) as store, pytest.raises(DocumentError) as caught:
        store.load_session(SID)
    assert [p.path for p in caught.value.problems] == ["content[0].text"]
    assert caught.value.message_id == kept.id
