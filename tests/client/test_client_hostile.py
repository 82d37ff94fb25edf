"""The sync and async clients against a hostile server on loopback (issue 29, items 2-6).

Every test talks to `hostile_server.HostileServer` over real sockets: retry headers that
are not numbers, servers that dribble, redirects, compressed bombs, bodies that are not a
provider's reply. Each exchange is bounded (`BOUND` seconds, async ones by `wait_for`), so a
client that would hang fails instead.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from metis.client import AsyncClient, Client
from metis.errors import MetisError
from metis.store import Store
from metis_schema.v3 import Message, MessageStatus, Role

from tests.support.client_support import (
    KEYS,
    PROVIDERS,
    ProviderCase,
    chat_chunk,
    content_type,
    ok_body,
    stream_chunks,
)
from tests.support.hostile_server import HostileServer, chunked, hostile, respond, respond_json

__all__ = ["hostile"]  # the fixture, imported for pytest

BOUND = 20.0
"""No exchange of these tests may take longer (seconds); the async ones are cut there."""
MODES = ["sync", "async"]


@dataclass
class Outcome:
    """What one send did: the reply, or the error, and how long it took."""

    session_id: str
    reply: Message | None
    error: BaseException | None
    seconds: float


def exchange(
    mode: str,
    store: Any,
    server: HostileServer,
    case: ProviderCase,
    *,
    stream: bool,
    client: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    on_event: Callable[[Any], None] | None = None,
) -> Outcome:
    """One send of "hi" to `case`'s model at the hostile server, by the `mode` client."""
    kw: dict[str, Any] = {"api_keys": KEYS, "base_urls": {case.provider: server.url}, **(client or {})}
    started = time.monotonic()
    if mode == "sync":
        with Client(store, **kw) as sync_client:
            session = sync_client.session(case.model)
            try:
                reply = session.send("hi", stream=stream, on_event=on_event, **(options or {}))
            except Exception as exc:
                return Outcome(session.id, None, exc, time.monotonic() - started)
            return Outcome(session.id, reply, None, time.monotonic() - started)

    async def run() -> Outcome:
        async with AsyncClient(store, **kw) as async_client:
            session = async_client.session(case.model)
            try:
                reply = await asyncio.wait_for(
                    session.send("hi", stream=stream, on_event=on_event, **(options or {})), BOUND
                )
            except Exception as exc:
                return Outcome(session.id, None, exc, time.monotonic() - started)
            return Outcome(session.id, reply, None, time.monotonic() - started)

    return asyncio.run(run())


def assistant_rows(store: Store, session_id: str) -> list[Message]:
    return [m for m in store.load_session(session_id) if m.role == Role.assistant]


# --- item 5: answers that are not replies -----------------------------------------------------

NOT_A_REPLY = "the server's own words: go elsewhere"


def _not_a_reply(kind: str, case: ProviderCase) -> tuple[bool, Any, int]:
    """(stream?, the reply, the status the error must carry) for one kind of non-reply."""
    sse = {"content-type": content_type(case)}
    location = {"location": "https://elsewhere.invalid/v1"}
    if kind == "307-valid-reply":
        body = {"_note": NOT_A_REPLY, **ok_body(case)}
        return False, respond_json(307, body, location), 307
    if kind == "302-stream":
        pieces = [NOT_A_REPLY.encode() + b"\n", *stream_chunks(case)]
        return True, chunked(302, pieces, {**sse, **location}), 302
    error = {"error": {"message": NOT_A_REPLY, "type": "overloaded_error", "code": 529}}
    bodies = {
        "error-object": json.dumps(error).encode(),
        "html": f"<html><head><title>502</title></head><body>{NOT_A_REPLY}</body></html>".encode(),
        "null": b"null",
        "empty-array": b"[]",
        "nothing": b"",
    }
    return True, chunked(200, [bodies[kind]] if bodies[kind] else [], sse), 200


NOT_A_REPLY_KINDS = [
    "307-valid-reply",
    "302-stream",
    "error-object",
    "html",
    "null",
    "empty-array",
    "nothing",
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", NOT_A_REPLY_KINDS)
@pytest.mark.parametrize("case", PROVIDERS, ids=[c.provider for c in PROVIDERS])
def test_an_answer_that_is_not_a_reply_is_a_typed_error_with_the_servers_text(
    mode: str, kind: str, case: ProviderCase, store: Store, hostile: HostileServer
) -> None:
    """A 3xx (even with a valid reply body), a streamed 3xx, or a 200 stream of an error
    object, HTML, `null`, `[]` or nothing: a typed error carrying the status and the
    server's text, never a COMPLETE reply or an empty CANCELLED one that lost the text."""
    stream, reply, status = _not_a_reply(kind, case)
    hostile.add(reply)
    outcome = exchange(mode, store, hostile, case, stream=stream)
    assert outcome.reply is None, f"returned a {outcome.reply.metadata.status} reply"
    assert isinstance(outcome.error, MetisError), repr(outcome.error)
    error = outcome.error
    assert getattr(error, "status_code", None) == status, repr(error)
    if kind not in ("null", "empty-array", "nothing"):
        assert NOT_A_REPLY in str(error) or NOT_A_REPLY in str(getattr(error, "body", ""))
    rows = assistant_rows(store, outcome.session_id)
    if status == 200:  # the exchange failed: an ERROR row that keeps the server's words
        assert [m.metadata.status for m in rows] == [MessageStatus.error]
        if kind not in ("null", "empty-array", "nothing"):
            assert NOT_A_REPLY in json.dumps(rows[0].metadata.provider_raw)
    else:  # a redirect is refused before any reply is read
        assert rows == []
    assert len(hostile.requests) == 1  # never retried, never followed


# --- item 2: retry hints that are not finite numbers --------------------------------------------

ANTHROPIC, OPENAI = PROVIDERS[0], PROVIDERS[1]
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
HINTS = [
    ("retry-after", "nan"),
    ("retry-after", "NaN"),
    ("retry-after-ms", "nan"),
    ("retry-after", "inf"),
    ("retry-after", "-inf"),
    ("retry-after-ms", "inf"),
    ("retry-after", "-5"),
    ("retry-after-ms", "-1e30"),
    ("retry-after", "1e400"),
    ("retry-after", "1e30"),
    ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
]


@pytest.mark.parametrize(("header", "value"), HINTS, ids=[f"{h}={v}" for h, v in HINTS])
def test_retry_hints_are_finite_and_bounded(header: str, value: str) -> None:
    from metis.client import RetryPolicy, parse_retry_after

    hint = parse_retry_after({header: value})
    assert hint is None or 0.0 <= hint < float("inf")
    delay = RetryPolicy(max_delay=30.0).delay(0, retry_after=hint)
    assert delay is not None and 0.0 <= delay <= 30.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("header", "value"), HINTS, ids=[f"{h}={v}" for h, v in HINTS])
def test_a_retry_after_that_is_no_finite_number_neither_breaks_nor_hangs_a_send(
    mode: str, header: str, value: str, store: Store, hostile: HostileServer
) -> None:
    """`Retry-After: nan` used to raise ValueError from time.sleep (sync) and hang forever in
    asyncio.sleep (async); any hint is now a bounded wait and the retry goes through."""
    hostile.add(respond_json(529, OVERLOADED, {header: value}), respond_json(200, ok_body(ANTHROPIC)))
    outcome = exchange(mode, store, hostile, ANTHROPIC, stream=False, client={"max_retry_delay": 0.05})
    assert outcome.error is None, repr(outcome.error)
    assert outcome.reply is not None and outcome.reply.metadata.status == MessageStatus.complete
    assert len(hostile.requests) == 2 and outcome.seconds < 5


# --- item 3: total deadlines ----------------------------------------------------------------------


HELLO = [chat_chunk({"role": "assistant", "content": "Hello"}), chat_chunk({"content": " world"})]
SSE = {"content-type": "text/event-stream"}


def silent(exchange: Any) -> None:
    """Read the request, then say nothing until the server closes."""
    exchange.pause(60)


def headers_then_silence(exchange: Any) -> None:
    exchange.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    for piece in HELLO:
        exchange.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    exchange.pause(60)


def assert_deadline(outcome: Outcome, which: str, seconds: float) -> Any:
    from metis.client import DeadlineExceededError

    assert isinstance(outcome.error, DeadlineExceededError), repr(outcome.error)
    assert outcome.error.which == which and f"{which} deadline" in str(outcome.error)
    assert outcome.seconds < seconds + 1.5, outcome.seconds
    return outcome.error


@pytest.mark.parametrize("mode", MODES)
def test_a_stream_dribbling_keep_alives_ends_at_the_stream_deadline(
    mode: str, store: Store, hostile: HostileServer
) -> None:
    """With a 2 s read timeout, a keep-alive comment every 0.2 s used to hold the stream as
    long as the server liked; the stream deadline ends it, keeping what arrived."""
    hostile.add(chunked(200, [*HELLO, b": keep-alive\n\n"], SSE, then=0.2))
    client = {"timeout": 2.0, "stream_deadline": 1.0}
    outcome = exchange(mode, store, hostile, OPENAI, stream=True, client=client)
    error = assert_deadline(outcome, "stream", 1.0)
    (row,) = assistant_rows(store, outcome.session_id)
    assert row.metadata.status == MessageStatus.cancelled and error.partial.id == row.id
    assert row.content[0].text == "Hello world"


@pytest.mark.parametrize("mode", MODES)
def test_a_body_dribbling_one_byte_at_a_time_ends_at_the_send_deadline(
    mode: str, store: Store, hostile: HostileServer
) -> None:
    hostile.add(chunked(200, [b" "], {"content-type": "application/json"}, then=0.5))
    outcome = exchange(
        mode, store, hostile, OPENAI, stream=False, client={"timeout": 2.0, "send_deadline": 1.5}
    )
    assert_deadline(outcome, "send", 1.5)
    assert assistant_rows(store, outcome.session_id) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_silent_stream_ends_at_the_stream_deadline_not_the_read_timeout(
    mode: str, store: Store, hostile: HostileServer
) -> None:
    hostile.add(headers_then_silence)
    client = {"timeout": 10.0, "stream_deadline": 1.0}
    outcome = exchange(mode, store, hostile, OPENAI, stream=True, client=client)
    assert_deadline(outcome, "stream", 1.0)
    (row,) = assistant_rows(store, outcome.session_id)
    assert row.metadata.status == MessageStatus.cancelled and row.content[0].text == "Hello world"


@pytest.mark.parametrize("mode", MODES)
def test_a_server_that_never_answers_ends_at_the_send_deadline(
    mode: str, store: Store, hostile: HostileServer
) -> None:
    hostile.add(silent)
    outcome = exchange(
        mode, store, hostile, OPENAI, stream=True, client={"timeout": 10.0, "send_deadline": 1.0}
    )
    assert_deadline(outcome, "send", 1.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_retry_wait_past_the_send_deadline_is_not_waited(
    mode: str, store: Store, hostile: HostileServer
) -> None:
    """The server asks for 20 s; the send deadline is 1 s: its error is raised at once."""
    from metis.errors import ProviderError

    hostile.add(respond_json(529, OVERLOADED, {"retry-after": "20"}))
    client = {"send_deadline": 1.0, "max_retry_delay": 60.0}
    outcome = exchange(mode, store, hostile, ANTHROPIC, stream=False, client=client)
    assert isinstance(outcome.error, ProviderError) and outcome.error.status_code == 529
    assert outcome.seconds < 1.0 and len(hostile.requests) == 1


@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf"), "60", True])
def test_a_deadline_must_be_a_positive_number_of_seconds(value: Any, store: Store) -> None:
    from metis.errors import ClientError

    with pytest.raises(ClientError, match="send_deadline"):
        Client(store, send_deadline=value)
    with pytest.raises(ClientError, match="stream_deadline"):
        AsyncClient(store, stream_deadline=value)


# --- item 4: compressed bombs ---------------------------------------------------------------------


def peak_bytes(run: Callable[[], Outcome]) -> tuple[Outcome, int]:
    import tracemalloc

    tracemalloc.start()
    try:
        outcome = run()
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


MIB = 1024 * 1024


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_an_error_body_bomb_is_cut_not_inflated(
    mode: str, encoding: str, store: Store, hostile: HostileServer
) -> None:
    """A 500 whose gzip body inflates to 256 MiB: the error is the provider's, its text cut
    at ERROR_BODY_LIMIT; memory stays far below the bomb (it grew by 1 GiB before)."""
    from metis.errors import ProviderError

    from tests.support.hostile_server import bomb

    body = bomb(256 * MIB, encoding)
    hostile.add(respond(500, body, {"content-encoding": encoding, "content-type": "text/plain"}))
    outcome, peak = peak_bytes(
        lambda: exchange(mode, store, hostile, ANTHROPIC, stream=False, client={"max_retries": 0})
    )
    assert isinstance(outcome.error, ProviderError) and outcome.error.status_code == 500, repr(outcome.error)
    assert peak < 96 * MIB, peak


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_an_error_with_no_body_that_names_an_encoding_is_the_providers_error(
    mode: str, encoding: str, store: Store, hostile: HostileServer
) -> None:
    """A 503 of no bytes whose headers still say gzip (a proxy's): no compressed stream
    began, so the body is empty and the error is the 503, not a corrupt body."""
    from metis.errors import ProviderError

    hostile.add(respond(503, b"", {"content-encoding": encoding, "content-type": "text/plain"}))
    outcome = exchange(mode, store, hostile, ANTHROPIC, stream=False, client={"max_retries": 0})
    assert isinstance(outcome.error, ProviderError) and outcome.error.status_code == 503, repr(outcome.error)


@pytest.mark.parametrize("mode", MODES)
def test_a_reply_body_bomb_is_a_typed_error(mode: str, store: Store, hostile: HostileServer) -> None:
    from metis.errors import BodyLimitError

    from tests.support.hostile_server import bomb

    body = bomb(64 * MIB)
    hostile.add(respond(200, body, {"content-encoding": "gzip", "content-type": "application/json"}))
    outcome, peak = peak_bytes(
        lambda: exchange(mode, store, hostile, ANTHROPIC, stream=False, options={"max_event_chars": 4 * MIB})
    )
    assert isinstance(outcome.error, BodyLimitError), repr(outcome.error)
    assert outcome.error.limit == 4 * MIB and "4194304 bytes" in str(outcome.error)
    assert peak < 96 * MIB, peak
    assert assistant_rows(store, outcome.session_id) == []


# --- item 6: the store fails mid-stream -------------------------------------------------------------

LONG_REPLY = [
    *HELLO,
    chat_chunk({"content": ", and"}),
    chat_chunk({"content": " more"}),
    chat_chunk({}, "stop"),
    b"data: [DONE]\n\n",
]


def stream_into_a_failing_store(
    mode: str, store: Any, server: HostileServer, fail: Callable[[], None]
) -> tuple[str, BaseException | None]:
    """Stream LONG_REPLY with a checkpoint per event; `fail` breaks the store after the
    second event. The session id and what the send raised."""
    from metis.client import CheckpointPolicy

    server.add(chunked(200, LONG_REPLY, SSE, interval=0.05))
    seen: list[Any] = []

    def on_event(event: Any) -> None:
        seen.append(event)
        if len(seen) == 2:
            fail()

    kw: dict[str, Any] = {
        "api_keys": KEYS,
        "base_urls": {"openai": server.url},
        "checkpoints": CheckpointPolicy(events=1, seconds=0.0),
    }
    if mode == "sync":
        client = Client(store, **kw)
        session = client.session(OPENAI.model)
        try:
            session.send("hi", stream=True, on_event=on_event)
        except Exception as exc:
            return session.id, exc
        finally:
            client.close()
        return session.id, None

    async def run() -> tuple[str, BaseException | None]:
        async with AsyncClient(store, **kw) as async_client:
            session = async_client.session(OPENAI.model)
            try:
                await asyncio.wait_for(session.send("hi", stream=True, on_event=on_event), BOUND)
            except Exception as exc:
                return session.id, exc
            return session.id, None

    return asyncio.run(run())


def assert_not_saved(error: BaseException | None) -> None:
    """The error says the text that arrived was not saved, and carries it."""
    from metis.client import ReplyNotSavedError

    assert isinstance(error, ReplyNotSavedError), repr(error)
    assert "NOT saved" in str(error) and "PARTIAL checkpoint" in str(error)
    assert error.reply.content[0].text == "Hello world, and more"


def assert_settled(row: Message) -> None:
    """A PARTIAL checkpoint finalized as CANCELLED with what had arrived."""
    assert row.metadata.status == MessageStatus.cancelled
    assert row.content[0].text.startswith("Hello")
    assert "interrupted" in (row.metadata.provider_raw or {})


def locked_sqlite(tmp_path: Path) -> tuple[Store, Callable[[], None], Callable[[], None]]:
    """A real SQLite store, and how to make its writes fail (another writer holds the lock
    past the store's retry budget) and work again."""
    import sqlite3

    from metis.store import RetryPolicy as StoreRetry

    path = tmp_path / "m.sqlite3"
    store = Store.open(path, retry=StoreRetry(busy_timeout_ms=5, budget_s=0.2))
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    return store, lambda: holder.execute("BEGIN IMMEDIATE"), lambda: holder.execute("ROLLBACK")


@pytest.mark.parametrize("mode", MODES)
def test_sqlite_failing_mid_stream_says_the_reply_was_not_saved_and_the_next_send_settles_it(
    mode: str, tmp_path: Path, hostile: HostileServer
) -> None:
    store, fail, recover = locked_sqlite(tmp_path)
    with store:
        session_id, error = stream_into_a_failing_store(mode, store, hostile, fail)
        assert_not_saved(error)
        recover()
        (row,) = assistant_rows(store, session_id)
        assert row.metadata.status == MessageStatus.partial  # what the checkpoint kept
        hostile.add(respond_json(200, ok_body(OPENAI)))
        with Client(store, api_keys=KEYS, base_urls={"openai": hostile.url}) as client:
            client.resume(session_id).send("again")
        settled, answer = assistant_rows(store, session_id)
        assert_settled(settled)
        assert answer.metadata.status == MessageStatus.complete
        sent = json.loads(hostile.requests[-1].body)["messages"]
        assert [m["role"] for m in sent] == ["user", "user"]  # the cut turn is not replayed


@pytest.mark.parametrize("mode", MODES)
def test_repair_settles_the_partial_checkpoint_a_failing_store_left(
    mode: str, tmp_path: Path, hostile: HostileServer
) -> None:
    from metis.ops import repair_session

    store, fail, recover = locked_sqlite(tmp_path)
    with store:
        session_id, error = stream_into_a_failing_store(mode, store, hostile, fail)
        assert_not_saved(error)
        recover()
        (settled,) = repair_session(store, session_id)
        (row,) = assistant_rows(store, session_id)
        assert_settled(row)
        assert row == settled
        assert repair_session(store, session_id) == []


def _until_reachable(store: Any, seconds: float = 60.0) -> None:
    """Wait until a restarted server answers the store: this test gives the store a 1 s
    retry budget (so the stop fails fast), which a loaded machine's restart can outlast."""
    import time

    from metis.errors import StoreError

    deadline = time.monotonic() + seconds
    while True:
        try:
            store.list_sessions()
            return
        except StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_postgresql_stopped_mid_stream(tmp_path: Path, hostile: HostileServer) -> None:
    """A PostgreSQL server of its own, stopped after the first checkpoints and started again."""
    from metis.store import RetryPolicy as StoreRetry
    from metis.store import open_store

    from tests.support.store_support import PgServer, pg_bindir

    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL server binaries")
    server = PgServer(bindir)
    try:
        url = server.fresh()
        with open_store(url, timeout=1.0, retry=StoreRetry(budget_s=1.0)) as store:
            session_id, error = stream_into_a_failing_store("sync", store, hostile, server.stop)
            assert_not_saved(error)
            server.start()
            _until_reachable(store)  # the pool reconnects within its (short, for this test) budget
            (row,) = assistant_rows(store, session_id)
            assert row.metadata.status == MessageStatus.partial
            hostile.add(respond_json(200, ok_body(OPENAI)))
            with Client(store, api_keys=KEYS, base_urls={"openai": hostile.url}) as client:
                client.resume(session_id).send("again")
            settled, answer = assistant_rows(store, session_id)
            assert_settled(settled)
            assert answer.metadata.status == MessageStatus.complete
    finally:
        server.close()


def test_metis_repair_settles_the_partial_checkpoint(tmp_path: Path, hostile: HostileServer) -> None:
    from click.testing import CliRunner

    from tests.cli.test_cli import run

    store, fail, recover = locked_sqlite(tmp_path)
    with store:
        session_id, error = stream_into_a_failing_store("sync", store, hostile, fail)
        assert_not_saved(error)
        recover()
    runner = CliRunner()
    first = run(runner, "--db", tmp_path / "m.sqlite3", "repair", session_id)
    assert first.exit_code == 0, first.output
    assert "a PARTIAL reply -> cancelled" in first.stdout
    second = run(runner, "--db", tmp_path / "m.sqlite3", "repair", session_id)
    assert second.stdout.startswith("nothing to repair")
    with Store.open(tmp_path / "m.sqlite3") as reopened:
        (row,) = assistant_rows(reopened, session_id)
        assert_settled(row)


# --- the client's own inflation: real replies still arrive ------------------------------------------


def gzip_bytes(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data)


def raw_deflate(data: bytes) -> bytes:
    import zlib

    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("encoding", ["gzip", "deflate-raw", "deflate-zlib", "identity"])
def test_compressed_replies_and_streams_still_arrive_whole(
    mode: str, encoding: str, store: Store, hostile: HostileServer
) -> None:
    import zlib

    pack = {
        "gzip": gzip_bytes,
        "deflate-raw": raw_deflate,
        "deflate-zlib": zlib.compress,
        "identity": lambda data: data,
    }[encoding]
    header = {"content-encoding": encoding.split("-", maxsplit=1)[0]}
    hostile.add(respond(200, pack(json.dumps(ok_body(OPENAI)).encode()), {**header, **SSE}))
    whole = exchange(mode, store, hostile, OPENAI, stream=False)
    assert whole.reply is not None and whole.reply.metadata.status == MessageStatus.complete, whole.error
    stream = pack(b"".join(stream_chunks(OPENAI)))
    pieces = [stream[at : at + 7] for at in range(0, len(stream), 7)]  # cut anywhere
    hostile.add(chunked(200, pieces, {**header, **SSE}))
    streamed = exchange(mode, store, hostile, OPENAI, stream=True)
    assert streamed.reply is not None, streamed.error

    def blocks(message: Message) -> list[dict[str, Any]]:  # tool ids are minted per reply
        return [block.model_dump(exclude={"id"}) for block in message.content]

    assert blocks(streamed.reply) == blocks(whole.reply)
    assert hostile.requests[0].headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("mode", MODES)
def test_a_stream_bomb_is_bounded_in_memory(mode: str, store: Store, hostile: HostileServer) -> None:
    """A streamed gzip body of 64 MiB without a line break: the event bound ends it, and no
    more than about the bound is ever inflated (httpx inflated 64 KiB reads into 64 MiB pieces)."""
    from metis.errors import StreamLimitError

    from tests.support.hostile_server import bomb

    body = bomb(64 * MIB)
    hostile.add(chunked(200, [body], {"content-encoding": "gzip", **SSE}))
    outcome, peak = peak_bytes(
        lambda: exchange(mode, store, hostile, OPENAI, stream=True, options={"max_event_chars": MIB})
    )
    assert isinstance(outcome.error, StreamLimitError), repr(outcome.error)
    assert peak < 24 * MIB, peak


def test_an_encoding_not_asked_for_or_corrupt_is_a_typed_error() -> None:
    from metis._inflate import PIECE, Inflater
    from metis.errors import WireFormatError

    for encoding in ("br", "zstd", "gzip, gzip", "compress"):
        with pytest.raises(WireFormatError, match="not asked for"):
            Inflater(encoding)
    with pytest.raises(WireFormatError, match="corrupt"):
        list(Inflater("gzip").feed(b"\x1f\x8b\x08\x00garbage-garbage"))
    bomb_piece = Inflater("gzip")
    pieces = list(bomb_piece.feed(gzip_bytes(bytes(10 * PIECE + 3))))
    pieces += list(bomb_piece.close())
    assert max(map(len, pieces)) <= PIECE and sum(map(len, pieces)) == 10 * PIECE + 3


@pytest.mark.parametrize("mode", MODES)
def test_a_whole_reply_the_store_cannot_save_is_carried_by_the_error(
    mode: str, tmp_path: Path, hostile: HostileServer
) -> None:
    """The store starts failing while the server answers: the reply is not lost silently."""
    from metis.client import ReplyNotSavedError

    store, fail, recover = locked_sqlite(tmp_path)
    answer = respond_json(200, ok_body(OPENAI))

    def locked_then_answer(exchange_: Any) -> None:
        fail()
        answer(exchange_)

    hostile.add(locked_then_answer)
    with store:
        outcome = exchange(mode, store, hostile, OPENAI, stream=False)
        recover()
        assert isinstance(outcome.error, ReplyNotSavedError), repr(outcome.error)
        assert "NOT saved" in str(outcome.error) and "PARTIAL" not in str(outcome.error)
        assert outcome.error.reply.metadata.status == MessageStatus.complete
        assert assistant_rows(store, outcome.session_id) == []
