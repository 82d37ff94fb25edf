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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hostile_server import HostileServer, chunked, hostile, respond, respond_json
from metis.client import AsyncClient, Client
from metis.errors import MetisError
from metis.store import Store
from metis_schema.v2 import Message, MessageStatus, Role
from test_client_support import KEYS, PROVIDERS, ProviderCase, content_type, ok_body, stream_chunks

__all__ = ["hostile"]  # the fixture, imported for pytest

BOUND = 20.0
"""No exchange of these tests may take longer (seconds); the async ones are cut there."""
MODES = ["sync", "async"]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "metis.sqlite3") as opened:
        yield opened


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
            except Exception as exc:  # noqa: BLE001 - the outcome is what the test inspects
                return Outcome(session.id, None, exc, time.monotonic() - started)
            return Outcome(session.id, reply, None, time.monotonic() - started)

    async def run() -> Outcome:
        async with AsyncClient(store, **kw) as async_client:
            session = async_client.session(case.model)
            try:
                reply = await asyncio.wait_for(
                    session.send("hi", stream=stream, on_event=on_event, **(options or {})), BOUND
                )
            except Exception as exc:  # noqa: BLE001
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


NOT_A_REPLY_KINDS = ["307-valid-reply", "302-stream", "error-object", "html", "null", "empty-array", "nothing"]


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
