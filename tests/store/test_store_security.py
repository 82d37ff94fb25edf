"""Nothing a message carries becomes SQL, and no credential reaches the database file."""

from __future__ import annotations

import inspect
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from metis.ids import ToolIdMap
from metis.store import Store
from metis.store import _store as store_core

from tests.support.store_support import assistant_meta, files_bytes, message, tool_ids_of, tool_result

EVIL = "x'); DROP TABLE messages;--"
EVIL_TOO = 'x"); DELETE FROM sessions; SELECT ("'


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_sql_in_every_field_round_trips_harmlessly(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    sid = f"sess_{EVIL}"
    with Store.open(path) as store:
        info = store.create_session(
            EVIL_TOO, session_id=sid, active_model=f"anthropic:{EVIL}", routing_policy={EVIL: EVIL_TOO}
        )
        assert store.get_session(sid) == info
        ids = ToolIdMap(sid)
        canonical = ids.register_incoming("anthropic", EVIL)
        call = message(
            sid,
            "assistant",
            [
                {"type": "text", "text": EVIL},
                {"type": "tool_use", "id": canonical, "name": EVIL, "input": {EVIL: [EVIL_TOO, {"q": EVIL}]}},
            ],
            assistant_meta(
                provider_raw={"adapter": "anthropic", EVIL: EVIL_TOO}, user_id=EVIL, team_id=EVIL_TOO
            ),
        )
        answer = tool_result(sid, tool_ids_of(call)[0], EVIL_TOO, is_error=True)
        first = message(sid, "user", [{"type": "text", "text": EVIL}])
        store.append(first)
        store.append(call, tool_ids=ids)
        store.append(answer)
        store.set_active_model(sid, f"openai:{EVIL_TOO}")

        assert store.load_session(sid) == [first, call, answer]
        (record,) = store.tool_calls(sid)
        assert (record.name, record.provider_id, record.status) == (EVIL, EVIL, "failed")
        assert store.failed_tool_calls() == {sid: 1}
        assert store.load_tool_ids(sid).to_dict() == ids.to_dict()
        assert [s.id for s in store.list_sessions()] == [sid]
        assert store.get_session(sid).routing_policy == {EVIL: EVIL_TOO}
        assert tables(path) >= {"sessions", "messages", "tool_calls", "tool_id_map", "metis_meta"}
        store.delete_session(sid)
        assert store.list_sessions() == []
    assert tables(path) >= {"sessions", "messages", "tool_calls", "tool_id_map", "metis_meta"}


def test_sql_text_is_never_built_from_values() -> None:
    # Every f-string SQL in the store interpolates module constants, a dialect's fixed
    # fragments or a table name from a fixed tuple; values always travel as parameters.
    # Lists of ids are one bound parameter (a JSON array read as a table): no SQL text
    # grows with them.
    from metis.store import _checks, _sql, postgres, sqlite

    source = inspect.getsource(_checks.by_ids)
    assert (
        "conn.execute(sql.format(ids=conn.dialect.ids), (orjson.dumps(list(ids)).decode(), *params))"
        in source
    )
    for module in (store_core, _checks, _sql, sqlite, postgres):
        for line in inspect.getsource(module).splitlines():
            for forbidden in ("% (", '"?" *', "IN ({", "%s"):
                assert forbidden not in line or 'placeholder="%s"' in line, (module.__name__, line)
            if ".format(" in line:  # only a dialect's own fragments are formatted into SQL
                assert "dialect" in line or "json_out" in line or "j.format(" in line, (module.__name__, line)


KEY = "sk-ant-api03-NEVER-STORE-ME-0123456789abcdefghijklmnop"


def anthropic_reply(text: str, tool: bool) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool:
        content.append(
            {"type": "tool_use", "id": "toolu_01A", "name": "read_file", "input": {"path": "a.md"}}
        )
    return {
        "id": "msg_01XYZ",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def test_api_keys_and_headers_never_reach_the_file(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    client_module = pytest.importorskip("metis.client")
    seen: list[Any] = []
    replies = [anthropic_reply("Reading.", True), anthropic_reply("Done.", False)]

    def handler(request: Any) -> Any:
        seen.append(request)
        return httpx.Response(200, json=replies.pop(0))

    path = tmp_path / "m.sqlite3"
    store = Store.open(path)
    client = client_module.Client(
        store, transport=httpx.MockTransport(handler), api_keys={"anthropic": KEY}, max_retries=0
    )
    from metis_schema.v3 import ToolDefinition

    tool = ToolDefinition(
        name="read_file",
        description="Read a file",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        side_effects="read",
    )
    session = client.session("anthropic:claude-sonnet-4-6", workspace=tmp_path, tools=[tool])
    reply = session.send("Read a.md")
    (call,) = [b for b in reply.content if b.type == "tool_use"]
    session.add_tool_result(call.id, "contents of a.md")
    session.send()
    client.close()

    assert seen and all(KEY in str(r.headers) for r in seen), "the key did travel in the headers"
    sent_headers = {k.lower(): v for r in seen for k, v in r.headers.items()}
    assert store.load_session(session.id), "the session was stored"
    store.close()
    blob = files_bytes(path)
    assert KEY.encode() not in blob
    assert KEY[-20:].encode() not in blob
    for name in ("x-api-key", "authorization"):
        if name in sent_headers:
            assert sent_headers[name].encode() not in blob
    assert b"anthropic-version" not in blob
