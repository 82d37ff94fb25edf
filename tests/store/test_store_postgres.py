"""The PostgreSQL store against a real server the tests start: choosing it by URL, its
layout and migrations, many processes writing at once, a writer killed mid-batch, the
server restarted under a writer. (The Store API itself runs on both backends in
test_store.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psycopg
import pytest
from metis.errors import StoreError
from metis.store import DB_SCHEMA_VERSION, DuplicateMessageError, RetryPolicy, Store, open_store
from metis.store import _pg_ddl as pg_schema
from metis.store._sqlite_ddl import LayoutStep

from tests.support.paths import REPO
from tests.support.store_support import conversation, postgres, raw_rows, tool_ids_of, user


@pytest.fixture
def url() -> str:
    return postgres().fresh()


# --- choosing a backend -------------------------------------------------------------------------


def test_a_url_or_a_path_chooses_the_backend(tmp_path: Path, url: str) -> None:
    with open_store(url) as pg:
        assert pg.path is None
        pg.create_session("/w", session_id="sess_pg")
        assert [s.id for s in pg.list_sessions()] == ["sess_pg"]
    for target, path in (
        (str(tmp_path / "a.sqlite3"), tmp_path / "a.sqlite3"),
        (tmp_path / "b.sqlite3", tmp_path / "b.sqlite3"),
        (f"sqlite:///{tmp_path}/c.sqlite3", tmp_path / "c.sqlite3"),
    ):
        with open_store(target) as s:
            assert s.path == path
            assert s.list_sessions() == []
    with open_store("sqlite:///:memory:") as s:
        assert s.path is None and s.list_sessions() == []
    with pytest.raises(StoreError, match="unknown store URL scheme: 'mysql'"):
        open_store("mysql://localhost/db")


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as caught:
        open_store("postgresql://me:s3cret@127.0.0.1:1/nowhere", timeout=1)
    assert "s3cret" not in str(caught.value)
    assert time.monotonic() - started < 15


def test_the_client_and_the_cli_take_a_url(url: str) -> None:
    from click.testing import CliRunner
    from metis.cli import cli
    from metis.client import Client

    client = Client(store=url)
    try:
        assert isinstance(client.store, Store)
        client.store.create_session("/w", session_id="sess_client")
    finally:
        client.close()
    result = CliRunner().invoke(cli, ["--db", url, "sessions"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "sess_client" in result.output
    result = CliRunner().invoke(cli, ["sessions"], env={"METIS_DB": url, "COLUMNS": "200"})
    assert result.exit_code == 0 and "sess_client" in result.output


# --- layout and migrations ------------------------------------------------------------------------


def test_the_layout_is_the_spec_tables_in_postgresql_types(url: str) -> None:
    open_store(url).close()
    columns = raw_rows(
        url,
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
    )
    types = {(t, c): d for t, c, d in columns}
    assert {t for t, _ in types} == {
        "metis_meta",
        "sessions",
        "messages",
        "tool_calls",
        "tool_id_map",
        "session_settings",
        "exchange_settings",
        "session_tips",
        "gateway_keys",
        "withheld_replies",
    }
    assert types["session_settings", "tools_json"] == types["session_settings", "options_json"] == "jsonb"
    assert types["messages", "content_json"] == types["messages", "metadata_json"] == "jsonb"
    assert types["sessions", "routing_policy_json"] == "jsonb"
    for table, column in (
        ("messages", "created_at"),
        ("sessions", "updated_at"),
        ("tool_calls", "completed_at"),
    ):
        assert types[table, column] == "bigint"
    indexes = {
        row[0]
        for row in raw_rows(url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
    }
    assert {
        "idx_messages_session_created",
        "idx_tool_calls_session_status",
        "idx_tool_id_map_canonical",
    } <= indexes
    assert raw_rows(url, "SELECT value FROM metis_meta") == [(str(DB_SCHEMA_VERSION),)]


def test_a_newer_layout_or_foreign_tables_are_refused(url: str) -> None:
    open_store(url).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE metis_meta SET value = '99'")
    with pytest.raises(StoreError, match="v99 is newer"):
        open_store(url)
    assert raw_rows(url, "SELECT value FROM metis_meta") == [("99",)], "never rewritten"
    other = postgres().fresh()
    with psycopg.connect(other, autocommit=True) as conn:
        conn.execute("CREATE TABLE sessions (id int)")
    with pytest.raises(StoreError, match="not made by metis"):
        open_store(other)


def test_a_failed_migration_leaves_the_database_as_it_was(url: str) -> None:
    from metis.store.postgres import PostgresBackend

    open_store(url).close()
    backend = PostgresBackend.open(url)
    broken = (
        *pg_schema.MIGRATIONS,
        LayoutStep(DB_SCHEMA_VERSION, "CREATE TABLE extra (x int); SELECT no_such_function()", "bad"),
    )
    with pytest.raises(StoreError, match="no_such_function"):
        backend.write(lambda db: pg_schema.upgrade(db, steps=broken, target=DB_SCHEMA_VERSION + 1))
    backend.close()
    tables = raw_rows(
        url, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    )
    assert "extra" not in {t for (t,) in tables}
    assert raw_rows(url, "SELECT value FROM metis_meta") == [(str(DB_SCHEMA_VERSION),)]


def test_processes_opening_a_fresh_database_at_once_create_it_once(url: str) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(url).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert raw_rows(url, "SELECT value FROM metis_meta") == [(str(DB_SCHEMA_VERSION),)]


# --- concurrency ----------------------------------------------------------------------------------


def test_a_message_id_raced_into_two_sessions_is_stored_once(url: str) -> None:
    with open_store(url) as s:
        s.create_session("/w", session_id="sess_a")
        s.create_session("/w", session_id="sess_b")
    same = user("sess_a")
    twins = [same, same.model_copy(update={"session_id": "sess_b"})]
    outcomes: list[object] = []
    barrier = threading.Barrier(2)

    def write(message: object) -> None:
        with open_store(url) as s:
            barrier.wait()
            try:
                s.append(message)  # type: ignore[arg-type]
                outcomes.append("stored")
            except DuplicateMessageError as exc:
                outcomes.append(exc)

    threads = [threading.Thread(target=write, args=(m,)) for m in twins]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(map(str, outcomes))[-1] == "stored"
    assert sum(o == "stored" for o in outcomes) == 1, outcomes
    assert raw_rows(url, "SELECT COUNT(*) FROM messages") == [(1,)]


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from metis.store import open_store
    from tests.support.store_support import conversation, user

    url, worker, appends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = open_store(url, max_size=2)
    own = f"sess_w{{worker}}"
    store.create_session("/w", session_id=own)
    done = 0
    while done < appends:  # half to the shared session, half turns of its own, one append each
        shared = user("sess_shared", f"worker {{worker}} line {{done}}")
        store.append(shared)
        print(shared.id, flush=True)
        done += 1
        if done % 8 == 1:
            for m in conversation(own, 1):
                store.append(m)
                print(m.id, flush=True)
                done += 1
    store.close()
    """
)


@pytest.mark.slow
def test_eight_processes_append_a_thousand_messages_each_and_lose_none(url: str) -> None:
    with open_store(url) as s:
        s.create_session("/w", session_id="sess_shared")
    workers, appends = 8, 1_000
    script = WRITER.format(repo=str(REPO))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, url, str(w), str(appends)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
    acknowledged = [line for out, _ in outputs for line in out.split()]
    assert len(acknowledged) == len(set(acknowledged)) >= workers * appends

    with open_store(url) as s:
        shared = s.load_session("sess_shared")
        stored = [m.id for m in shared]
        for w in range(workers):
            own = s.load_session(f"sess_w{w}")
            stored += [m.id for m in own]
            calls = s.tool_calls(f"sess_w{w}")
            assert len(calls) == len(own) // 4
            assert all(c.status == "succeeded" and c.result_message_id for c in calls)
            # Each writer's lines keep their order in the shared session.
            lines = [m.content[0].text for m in shared if m.content[0].text.startswith(f"worker {w} ")]  # type: ignore[union-attr]
            assert lines == sorted(lines, key=lambda t: int(t.rsplit(" ", 1)[1]))
        assert sorted(stored) == sorted(acknowledged), "0 lost, 0 duplicated"
        # Incremental reads agree with whole ones at every point.
        middle = shared[len(shared) // 2].id
        assert s.load_session("sess_shared", after=middle) == shared[len(shared) // 2 + 1 :]


BATCHER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from metis.store import open_store
    from tests.support.store_support import conversation

    store = open_store(sys.argv[1])
    store.create_session("/w", session_id="sess_kill")
    while True:
        batch = conversation("sess_kill", 25)  # 100 messages, 25 tool calls and their answers
        store.append_many(batch)
        print(batch[-1].id, flush=True)
    """
)


@pytest.mark.slow
def test_kill_9_of_a_writer_mid_batch_leaves_whole_batches(url: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCHER.format(repo=str(REPO)), url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    committed: list[str] = []
    while len(committed) < 5:
        line = proc.stdout.readline()
        if not line:
            break
        committed.append(line.strip())
    time.sleep(0.05)  # well inside the next batch
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert len(committed) == 5, proc.stderr.read() if proc.stderr else ""
    with open_store(url) as s:
        stored = s.load_session("sess_kill")
        assert len(stored) % 100 == 0 and len(stored) >= 500, "whole batches only"
        ids = [m.id for m in stored]
        assert all(ids[i * 100 + 99] == last for i, last in enumerate(committed))
        calls = s.tool_calls("sess_kill")
        assert len(calls) == len(stored) // 4
        assert s.unanswered_tool_calls("sess_kill") == []


def test_a_server_restart_under_a_writer_is_survived_or_a_typed_error(url: str) -> None:
    server = postgres()
    store = open_store(url, timeout=20, retry=RetryPolicy(budget_s=30))
    store.create_session("/w", session_id="sess_restart")
    acknowledged: list[list[str]] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            batch = conversation("sess_restart", 5)
            try:
                store.append_many(batch)
            except StoreError as exc:
                failures.append(exc)
                continue
            except BaseException as exc:  # anything untyped fails the test below
                failures.append(exc)
                return
            acknowledged.append([m.id for m in batch])

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(acknowledged) < 3:
            time.sleep(0.01)
        server.stop("fast")
        time.sleep(0.5)
        server.start()
        before = len(acknowledged)
        deadline = time.monotonic() + 30
        while len(acknowledged) < before + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert len(acknowledged) >= before + 3, f"the writer did not reconnect: {failures}"
    assert all(isinstance(f, StoreError) for f in failures), failures
    stored = [m.id for m in store.load_session("sess_restart")]
    store.close()
    assert len(stored) % 20 == 0, "nothing half-written"
    written = {i for batch in acknowledged for i in batch}
    assert written <= set(stored), "every acknowledged batch is stored"
    # A batch whose COMMIT was in flight when the server went away may be stored though
    # its writer got a StoreError saying so: at most one per failure.
    assert len(stored) - len(written) <= 20 * len(failures)


def test_tool_ids_and_calls_survive_a_round_trip(url: str) -> None:
    from metis.ids import ToolIdMap

    with open_store(url) as s:
        s.create_session("/w", session_id="sess_ids")
        turn = conversation("sess_ids", 1)
        ids = ToolIdMap("sess_ids")
        ids.bind(tool_ids_of(turn[1])[0], "anthropic", "toolu_1")
        s.append_many(turn, tool_ids=ids)
        assert s.load_tool_ids("sess_ids").to_dict() == ids.to_dict()
        (call,) = s.tool_calls("sess_ids")
        assert call.provider_id == "toolu_1" and call.status == "succeeded"
        assert s.failed_tool_calls() == {} and s.failed_tool_calls("sess_ids") == {"sess_ids": 0}


# --- passwords in store URLs (issue 29, item 1) ---------------------------------------------------

_UNREACHABLE = "127.0.0.1:1"
"""A loopback port nothing listens on: every connection attempt is refused at once."""


def test_no_password_of_a_url_reaches_an_error_or_the_pool_log() -> None:
    """The userinfo password (even one with an unencoded `%`, which libpq quotes back in its
    message) and libpq's `?password=` parameter appear neither in the "cannot connect" error
    nor in psycopg-pool's warnings, which Python prints on stderr while the server is down."""
    urls = [
        f"postgresql://me@{_UNREACHABLE}/db?password=hunter2secret",
        f"postgresql://me:pa%ss%word@{_UNREACHABLE}/db",
        f"postgresql://me:pa%s@{_UNREACHABLE}/db",  # short: libpq quotes it whole
        f"postgresql://me:s3cr3t-long@{_UNREACHABLE}/db?sslmode=disable&password=p%41ss%2",
    ]
    script = textwrap.dedent(
        """
        import sys
        from metis.errors import StoreError
        from metis.store import open_store
        for url in sys.argv[1:]:
            try:
                open_store(url, timeout=1)
            except StoreError as exc:
                print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *urls], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.count("cannot connect to PostgreSQL") == len(urls), done.stdout
    assert "error connecting" in done.stderr  # the pool did log its attempts
    assert "invalid percent-encoded token" in done.stderr
    for secret in ("hunter2secret", "pa%ss%word", '"pa%s"', "s3cr3t-long", "p%41ss%2", "pAss%2"):
        assert secret not in done.stdout + done.stderr, secret
    assert f"postgresql://me@{_UNREACHABLE}/db?password=[REDACTED]" in done.stdout


def test_store_copy_does_not_show_the_password_of_a_url(tmp_path: Path, url: str) -> None:
    from click.testing import CliRunner
    from metis.cli import cli

    with open_store(tmp_path / "src.sqlite3") as src:
        sid = src.create_session("/w").id
        src.append_many(conversation(sid, 1))
    target = url.replace("postgres@", "postgres:userinfo%25pw@") + "&password=hunter2secret"
    result = CliRunner().invoke(cli, ["store", "copy", str(tmp_path / "src.sqlite3"), target])
    assert result.exit_code == 0, result.output
    assert "verified by hash" in result.output
    assert "hunter2secret" not in result.output and "userinfo%" not in result.output
    assert "password=[REDACTED]" in result.output


def test_redacted_finds_a_password_however_it_is_written() -> None:
    from metis.store._urls import redacted, url_passwords

    url = "postgresql://me:pa/ss#w@rd%@db.test:5432/app?sslmode=require&pass%77ord=x%20y&user=me"
    assert redacted(url) == "postgresql://me@db.test:5432/app?sslmode=require&password=[REDACTED]&user=me"
    assert url_passwords(url) == ["pa/ss#w@rd%", "x%20y", "x y"]
    assert redacted("postgresql://me@db.test/app") == "postgresql://me@db.test/app"
    assert redacted("/home/me/metis.sqlite3") == "/home/me/metis.sqlite3"
    assert url_passwords("postgresql://db.test/app") == []
