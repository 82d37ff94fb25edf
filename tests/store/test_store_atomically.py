"""`Store.atomically`: several of the Store's writes in one transaction, on both backends
(a SQLite file, a real PostgreSQL server): all of them commit, or none does, and the
work's reads see its own writes."""

from __future__ import annotations

import pytest
from metis.errors import InvariantError, SessionNotFoundError
from metis.store import Store, open_store

from tests.support.store_support import (
    assistant,
    tool_call,
    tool_ids_of,
    tool_result,
    user,
)


def test_every_write_of_the_work_commits_together(target: str) -> None:
    with open_store(target) as store:

        def work(joined: Store) -> int:
            joined.create_session("/w", session_id="sess_one")
            call = tool_call("sess_one")
            joined.append_many([user("sess_one"), call])
            joined.append(tool_result("sess_one", tool_ids_of(call)[0]))
            revision = joined.record_settings("sess_one", [])
            joined.put_tip("key", "sess_one", call.id)
            assert len(joined.load_session("sess_one")) == 3, "the work reads its own writes"
            return revision

        assert store.atomically(work) == 1
        assert [m.role.value for m in store.load_session("sess_one")] == ["user", "assistant", "tool"]
        assert store.find_tip(["key"]) == (0, "sess_one", store.load_session("sess_one")[1].id)
        assert [c.status.value for c in store.tool_calls("sess_one")] == ["succeeded"]


def test_a_write_that_fails_leaves_nothing_of_the_work(target: str) -> None:
    with open_store(target) as store:
        store.create_session("/w", session_id="sess_kept")

        def work(joined: Store) -> None:
            joined.create_session("/w", session_id="sess_new")
            joined.append(user("sess_new"))
            joined.put_tip("key", "sess_new", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
            joined.append(tool_result("sess_new", "tu_01ARZ3NDEKTSV4RRFFQ69G5FAV"))  # answers no call

        with pytest.raises(InvariantError):
            store.atomically(work)
        assert [s.id for s in store.list_sessions()] == ["sess_kept"]
        assert store.find_tip(["key"]) is None
        with pytest.raises(SessionNotFoundError):
            store.load_session("sess_new")
        store.append(assistant("sess_kept"))  # the store writes on as before
        assert len(store.load_session("sess_kept")) == 1
