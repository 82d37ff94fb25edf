"""The gateway's rows on both databases (layout 5), `metis keys` and `metis usage`, and
`metis serve --workers 2` on one PostgreSQL store under concurrent SDK requests.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from metis.cli import cli
from metis.gateway import SESSION_HEADER
from metis.gateway.keys import create_key
from metis.store import DB_SCHEMA_VERSION, copy_store, open_store

from tests.support.gateway_support import ScriptedUpstream, metis_serve
from tests.support.store_support import BACKENDS, assistant, new_target, postgres, raw_rows, user

GATEWAY_TABLES = ("session_tips", "gateway_keys", "withheld_replies")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_layout4_store_is_upgraded_with_the_gateway_tables(backend: str, tmp_path: Path) -> None:
    target = new_target(backend, tmp_path)
    with open_store(target) as store:
        info = store.create_session("/w")
        store.append_many([user(info.id), assistant(info.id)])
    drops = [f"DROP TABLE {t}" for t in GATEWAY_TABLES]
    _execute(target, [*drops, "UPDATE metis_meta SET value = '4' WHERE key = 'db_schema_version'"])
    with open_store(target) as store:
        assert store.find_tip(["nothing"]) is None
        store.put_tip("k", info.id, "m")
        assert store.find_tip(["a", "k"]) == (1, info.id, "m")
        assert len(store.load_session(info.id)) == 2
    assert raw_rows(target, "SELECT value FROM metis_meta") == [(str(DB_SCHEMA_VERSION),)]


def _execute(target: str, statements: list[str]) -> None:
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[call-overload]
        return
    import sqlite3

    conn = sqlite3.connect(target)
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_tips_keys_and_usage_on_both_databases(backend: str, tmp_path: Path) -> None:
    target = new_target(backend, tmp_path)
    with open_store(target) as store:
        a, b = store.create_session("/w"), store.create_session("/w")
        store.append_many([user(a.id), assistant(a.id, user_id="alice", team_id="red")])
        store.append_many(
            [
                user(b.id),
                assistant(b.id, user_id="bob", team_id="red"),
                user(b.id),
                assistant(b.id, user_id="bob", team_id="red", model="openai:gpt-4.1"),
            ]
        )
        # the newest session ending at a key is the one it names
        store.put_tip("same", a.id, "m1")
        store.put_tip("same", b.id, "m2")
        assert store.find_tip(["x", "same", "y"]) == (1, b.id, "m2")
        store.delete_session(b.id)
        assert store.find_tip(["same"]) is None, "a deleted session's tips are gone"
        store.append_many([user(a.id), assistant(a.id, user_id="bob", team_id="red")])
        by_user = {r.group: r for r in store.usage("user")}
        assert set(by_user) == {"alice", "bob"}
        assert by_user["alice"].replies == 1 and by_user["alice"].input_tokens == 12
        assert by_user["alice"].output_tokens == 34 and by_user["alice"].cost_usd == Decimal("0.000546")
        (team,) = store.usage("team")
        assert (team.group, team.replies, team.cost_usd) == ("red", 2, Decimal("0.001092"))
        assert store.usage("model", since=time.time_ns() // 1000 + 10**9) == []
    runner = CliRunner()
    created = runner.invoke(cli, ["--db", target, "keys", "create", "--user", "carol", "--team", "blue"])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[0]
    assert key.startswith("mk_") and len(key) > 40
    listed = runner.invoke(cli, ["--db", target, "keys", "list"])
    assert "carol" in listed.output and key[:8] in listed.output and key not in listed.output
    stored = raw_rows(target, "SELECT key_hash, prefix FROM gateway_keys")
    assert key not in repr(stored) and len(stored[0][0]) == 64
    with open_store(target) as store:
        assert store.resolve_gateway_key(key) is not None
        key_id = store.gateway_keys()[0].id
    assert runner.invoke(cli, ["--db", target, "keys", "revoke", key_id]).exit_code == 0
    assert runner.invoke(cli, ["--db", target, "keys", "revoke", key_id]).exit_code != 0
    with open_store(target) as store:
        assert store.resolve_gateway_key(key) is None and store.has_gateway_keys()
    usage = runner.invoke(cli, ["--db", target, "usage", "--by", "user", "--since", "2000-01-01"])
    assert usage.exit_code == 0 and "bob" in usage.output and "alice" in usage.output


def test_store_copy_carries_the_gateway_rows(tmp_path: Path) -> None:
    # SQLite to PostgreSQL, the way to more workers: keys still admit, tips still match.
    source, target = new_target("sqlite", tmp_path), new_target("postgresql", tmp_path)
    with open_store(source) as src:
        info = src.create_session("/w")
        src.append_many([user(info.id), reply := assistant(info.id)])
        _, key = create_key(src, user_id="alice")
        _, gone = create_key(src, user_id="bob")
        src.revoke_gateway_key(src.gateway_keys()[1].id)
        src.put_tip("tip", info.id, reply.id)
        src.withhold_reply(reply.id, info.id)
        with open_store(target) as dst:
            assert copy_store(src, dst).gateway_rows == 4
            assert copy_store(src, dst).gateway_rows == 0, "a second copy adds nothing"
            found = dst.resolve_gateway_key(key)
            assert found is not None and found.user_id == "alice"
            assert dst.resolve_gateway_key(gone) is None
            assert dst.find_tip(["tip"]) == (0, info.id, reply.id)
            assert dst.is_withheld(reply.id)


def test_two_workers_on_postgresql_store_every_request_once(tmp_path: Path) -> None:
    # `metis serve --workers 2 --db postgresql://…`: two processes, one store; concurrent
    # requests from the SDK; each stored exactly once, none lost or doubled.
    url = postgres().fresh()
    upstream = ScriptedUpstream()
    requests = 12
    for _ in range(requests):
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
    try:
        with metis_serve(upstream, url, tmp_path, "--workers", "2", start_within=60, timeout=30) as client:

            def ask(n: int) -> str:
                raw = client.chat.completions.with_raw_response.create(
                    model="anthropic:claude-sonnet-4-6",
                    messages=[{"role": "user", "content": f"question {n}"}],
                )
                assert raw.parse().choices[0].message.content
                return raw.headers[SESSION_HEADER]

            with ThreadPoolExecutor(max_workers=6) as pool:
                sessions = list(pool.map(ask, range(requests)))
    finally:
        upstream.close()
    assert len(set(sessions)) == requests
    rows = raw_rows(url, "SELECT session_id, role FROM messages ORDER BY session_id, seq")
    assert len(rows) == 2 * requests
    for session in sessions:
        assert [role for sid, role in rows if sid == session] == ["user", "assistant"]
    texts = raw_rows(url, "SELECT content_json->0->>'text' FROM messages WHERE role = 'user'")
    assert sorted(t for (t,) in texts) == sorted(f"question {n}" for n in range(requests))
