"""`metis serve`'s store work does not hold up other requests, nor grow with the history.

Real parts as in tests/test_gateway_state.py: the official OpenAI SDK over loopback HTTP,
the scripted upstream, a real SQLite store (wrapped only to slow its writes down).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from metis import adapters, fingerprint
from metis.errors import InvariantError
from metis.gateway import SESSION_HEADER
from metis.store import Store, open_store
from metis_schema.v3 import Message, MessageStatus

from tests.support.gateway_support import Gateway, ScriptedUpstream
from tests.support.gateway_support import openai_client as _openai

SONNET = "anthropic:claude-sonnet-4-6"

_WRITES = frozenset(
    {
        "atomically",
        "create_session",
        "append",
        "append_many",
        "append_planned",
        "upsert_partial",
        "finalize",
        "record_settings",
        "save_tool_ids",
        "put_settings",
        "put_tip",
        "withhold_reply",
    }
)
"""Every Store method that writes (a gateway that writes through any of them is slowed)."""


class SlowStore:
    """A real Store whose every write first takes `seconds` (a slow disk, a far database)."""

    def __init__(self, store: Store, seconds: float) -> None:
        self._store = store
        self.seconds = seconds

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if name not in _WRITES:
            return found

        def slow(*args: Any, **kw: Any) -> Any:
            time.sleep(self.seconds)
            return found(*args, **kw)

        return slow


def test_a_slow_store_write_does_not_hold_up_other_requests(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    # Each write takes a second. While an exchange's writes are under way, the event loop
    # still answers other requests at once: no write runs on it. (A first exchange, with
    # writes at full speed, warms the gateway up: what it imports on first use is not
    # what is measured.)
    slow: list[SlowStore] = []
    served = Gateway(
        upstream, store_path, wrap_store=lambda store: slow.append(SlowStore(store, 0)) or slow[0]
    )
    waits: list[float] = []
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        _openai(served).chat.completions.create(model=SONNET, messages=[{"role": "user", "content": "Hi"}])
        slow[0].seconds = 1.0
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        answered: list[Any] = []
        exchange = threading.Thread(
            target=lambda: answered.append(
                _openai(served).chat.completions.create(
                    model=SONNET, messages=[{"role": "user", "content": "What happened?"}]
                )
            )
        )
        exchange.start()
        with httpx.Client(timeout=20) as client:
            while exchange.is_alive():
                started = time.monotonic()
                assert client.get(f"{served.url}/v1/models").status_code == 200
                waits.append(time.monotonic() - started)
        exchange.join()
    finally:
        served.close()
    assert answered and answered[0].choices[0].message.content
    assert len(waits) > 3 and max(waits) < 0.5, f"a request waited {max(waits):.2f}s on a store write"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[int]]]:
    """Messages fingerprinted, and messages the Chat adapter writes as a request, per call."""
    calls: dict[str, list[int]] = {"fingerprinted": [], "written": []}
    fingerprinted = fingerprint._fingerprint

    def fingerprint_counted(message: Message, ordinals: Any) -> str:
        calls["fingerprinted"].append(1)
        return fingerprinted(message, ordinals)

    chat = adapters.get("openai")
    to_wire: Callable[..., Any] = chat.to_wire

    def written(messages: Any, *args: Any, **kw: Any) -> Any:
        calls["written"].append(len(messages))
        return to_wire(messages, *args, **kw)

    monkeypatch.setattr(fingerprint, "_fingerprint", fingerprint_counted)
    monkeypatch.setattr(chat, "to_wire", written)
    yield calls


def test_keying_a_reply_does_not_grow_with_the_history(
    upstream: ScriptedUpstream, store_path: str, counted: dict[str, list[int]]
) -> None:
    # Chat in, Anthropic upstream: after each reply the conversation's tip is keyed from the
    # request's own keys extended by the reply, so each exchange fingerprints the request
    # it was sent (to recognize it) and one message more, and writes one message in the
    # client's format (the reply), however long the conversation grows.
    served = Gateway(upstream, store_path)
    extra: list[int] = []
    written: list[int] = []
    sessions: set[str] = set()
    try:
        client = _openai(served)
        history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
        for turn in range(5):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
            history.append({"role": "user", "content": f"Question {turn}?"})
            counted["fingerprinted"].clear()
            counted["written"].clear()
            raw = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
            sessions.add(raw.headers[SESSION_HEADER])
            extra.append(len(counted["fingerprinted"]) - len(history))
            written.append(sum(counted["written"]))
            history.append(raw.parse().choices[0].message.model_dump(exclude_none=True))
    finally:
        served.close()
    assert len(sessions) == 1, "each request was recognized as the conversation's continuation"
    assert extra == [1] * 5
    assert written == [1] * 5
    with open_store(store_path) as opened:
        assert len(opened.load_session(sessions.pop())) == 11


def test_a_stream_continued_meanwhile_by_another_process_is_stored_in_a_fork(
    upstream: ScriptedUpstream, target: str
) -> None:
    # A stream continues a stored conversation through one gateway; while it streams,
    # another gateway (another process's loop and connection) continues the same
    # conversation with another turn and records first. The stream's commit finds the
    # session continued, under its lock, and stores the stream's exchange in a fork at
    # the point both continued from: nothing mixes, nothing is lost, and the stream's
    # conversation goes on in the fork.
    first = Gateway(upstream, target)
    second = Gateway(upstream, target)
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        opened = _openai(first).chat.completions.with_raw_response.create(model=SONNET, messages=history)
        session = opened.headers[SESSION_HEADER]
        history.append(opened.parse().choices[0].message.model_dump(exclude_none=True))

        upstream.dribble["/v1/messages"] = 0.2
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        streamed = _openai(first).chat.completions.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "streamed turn"}], stream=True
        )
        chunks = iter(streamed)
        text = ""
        while not text:  # the stream is under way
            chunk = next(chunks)
            text = chunk.choices[0].delta.content or "" if chunk.choices else ""
        other = _openai(second).chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "other turn"}]
        )
        assert other.headers[SESSION_HEADER] == session, "recorded first: it continues the session"
        text += "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        upstream.dribble.clear()

        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        after = _openai(first).chat.completions.with_raw_response.create(
            model=SONNET,
            messages=[
                *history,
                {"role": "user", "content": "streamed turn"},
                {"role": "assistant", "content": text},
                {"role": "user", "content": "and then?"},
            ],
        )
    finally:
        second.close()
        first.close()
    fork = after.headers[SESSION_HEADER]
    assert fork != session
    with open_store(target) as store:
        assert store.get_session(fork).parent_session_id == session
        kept = store.load_session(session)
        forked = store.load_session(fork)
        assert len(store.list_sessions()) == 2
    assert [m.role.value for m in kept] == ["user", "assistant", "user", "assistant"]
    assert kept[2].content[0].text == "other turn"  # type: ignore[union-attr]
    assert [m.role.value for m in forked] == ["user", "assistant"] * 3
    assert [forked[i].content[0].text for i in (2, 4)] == ["streamed turn", "and then?"]  # type: ignore[union-attr]


def test_a_continuation_under_way_in_this_process_makes_the_next_one_branch_at_once(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    # Two continuations of one conversation in one gateway: the second, sent while the
    # first streams (not yet recorded), branches into a fork before it is sent, so each
    # one's session header names the session it is stored in.
    served = Gateway(upstream, store_path)
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        opened = _openai(served).chat.completions.with_raw_response.create(model=SONNET, messages=history)
        session = opened.headers[SESSION_HEADER]
        history.append(opened.parse().choices[0].message.model_dump(exclude_none=True))
        upstream.dribble["/v1/messages"] = 0.2
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        streamed = _openai(served).chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "streamed turn"}], stream=True
        )
        chunks = iter(streamed.parse())
        next(chunks)
        other = _openai(served).chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "other turn"}]
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finally:
        served.close()
    assert streamed.headers[SESSION_HEADER] == session
    fork = other.headers[SESSION_HEADER]
    with open_store(store_path) as store:
        assert store.get_session(fork).parent_session_id == session
        texts = {
            sid: [m.content[0].text for m in store.load_session(sid) if m.role.value == "user"]  # type: ignore[union-attr]
            for sid in (session, fork)
        }
    assert texts == {session: ["What happened?", "streamed turn"], fork: ["What happened?", "other turn"]}


def test_exchange_writes_read_through_and_commit_once(store_path: str) -> None:
    # The exchange's view: a stored session with a stream's PARTIAL checkpoint (its
    # process died), settled as CANCELLED, a new turn and a reply, all read back before the
    # commit as if stored, and a turn that answers no call refused before anything is queued.
    from metis.gateway.writes import ExchangeWrites
    from metis.ops.repair import settle_partials

    from tests.support.store_support import assistant, tool_call, tool_result, user

    with open_store(store_path) as store:
        store.create_session("/w", session_id="sess_w")
        store.append(user("sess_w"))
        store.upsert_partial(tool_call("sess_w", status="partial"))
        writes = ExchangeWrites(store)
        settled = settle_partials(writes, writes.load_session("sess_w"))
        assert [m.metadata.status for m in settled] == [MessageStatus.cancelled]
        with pytest.raises(InvariantError):
            writes.append(tool_result("sess_w", "tu_01ARZ3NDEKTSV4RRFFQ69G5FAV"))
        writes.append(user("sess_w", "Go on."))
        writes.append(assistant("sess_w"))
        seen = writes.load_session("sess_w")
        assert [m.metadata.status.value for m in seen] == ["complete", "cancelled", "complete", "complete"]
        assert writes.load_session("sess_w", after=seen[1].id) == seen[2:]
        assert store.load_session("sess_w")[1].metadata.status is MessageStatus.partial, "nothing written yet"
        assert writes.commit(store) is None
        assert [m.id for m in store.load_session("sess_w")] == [m.id for m in seen]
        assert store.load_session("sess_w")[1].metadata.status is MessageStatus.cancelled


def test_a_tool_loop_continued_meanwhile_by_another_writer_is_stored_in_a_fork(target: str) -> None:
    # Two writers continue the same stored tool call (a gateway exchange and another
    # process), each with its own result for it; the other commits first. The exchange's
    # result answers a call the session has answered already, which the store refuses:
    # the gate's case all the same (the session was continued meanwhile), so the exchange
    # is stored in a fork at the call, its result naming the fork's copy of the call, and
    # nothing is lost (the refusal made it be dropped as unrecordable).
    from metis.gateway.writes import ExchangeWrites

    from tests.support.store_support import assistant, tool_call, tool_result, user

    with open_store(target) as store:
        store.create_session("/w", session_id="sess_b")
        store.append(user("sess_b"))
        call = tool_call("sess_b")
        store.append(call)
        call_id = call.content[1].id  # type: ignore[union-attr]
        writes = ExchangeWrites(store)
        writes.gate = ("sess_b", call.id)
        writes.append(tool_result("sess_b", call_id, "mine"))
        writes.append(assistant("sess_b", "mine, done"))
        store.append(tool_result("sess_b", call_id, "theirs"))
        store.append(assistant("sess_b", "theirs, done"))
        fork = writes.commit(store)
        assert fork is not None
        kept, forked = store.load_session("sess_b"), store.load_session(fork)
    assert [m.role.value for m in kept] == ["user", "assistant", "tool", "assistant"]
    assert kept[2].content[0].content[0].text == "theirs"  # type: ignore[union-attr]
    assert kept[3].content[0].text == "theirs, done"  # type: ignore[union-attr]
    assert [m.role.value for m in forked] == ["user", "assistant", "tool", "assistant"]
    copy_id = forked[1].content[1].id  # type: ignore[union-attr]
    assert copy_id != call_id
    assert forked[2].content[0].tool_use_id == copy_id  # type: ignore[union-attr]
    assert forked[2].content[0].content[0].text == "mine"  # type: ignore[union-attr]
    assert forked[3].content[0].text == "mine, done"  # type: ignore[union-attr]


def test_a_stateless_responses_tool_loop_continues_its_session(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    # A Responses client that keeps its own state re-sends the output items it was given
    # (reasoning, message, function call) with the tool's output, no previous_response_id:
    # the tip keyed from the reply alone, in the Responses format, recognizes it.
    served = Gateway(upstream, store_path)
    try:
        upstream.reply("/v1/messages", "anthropic/response_thinking.json")
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client = _openai(served)
        tools = [
            {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
        ]
        items: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.responses.with_raw_response.create(model=SONNET, input=items, tools=tools)  # type: ignore[arg-type]
        reply = first.parse()
        call = next(item for item in reply.output if item.type == "function_call")
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        items.append({"type": "function_call_output", "call_id": call.call_id, "output": "14 °C"})
        second = client.responses.with_raw_response.create(model=SONNET, input=items, tools=tools)  # type: ignore[arg-type]
    finally:
        served.close()
    session = first.headers[SESSION_HEADER]
    assert second.headers[SESSION_HEADER] == session
    with open_store(store_path) as store:
        assert [m.role.value for m in store.load_session(session)] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
        assert len(store.list_sessions()) == 1


def test_a_stream_whose_body_is_never_read_is_recorded(upstream: ScriptedUpstream, store_path: str) -> None:
    # The client goes away between the response's headers and its body (the server never
    # iterates the body): the exchange is recorded all the same, its reply whole, and it
    # keeps no other request of the conversation from continuing it.
    import asyncio

    from metis.client import AsyncClient
    from metis.gateway.exchange import Exchanges

    upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
    body = {"model": SONNET, "messages": [{"role": "user", "content": "What happened?"}], "stream": True}

    async def unread() -> tuple[str, Exchanges]:
        with open_store(store_path) as store:
            client = AsyncClient(store, api_keys={"anthropic": "k"}, base_urls={"anthropic": upstream.url})
            exchanges = Exchanges(client)
            prepared = await exchanges.prepare("openai", body, {})
            frames = await exchanges.stream(prepared)
            while exchanges.pending:
                await asyncio.wait(list(exchanges.pending), timeout=10)
            await frames.aclose()
            await client.aclose()
            return prepared.session_id, exchanges

    session, exchanges = asyncio.run(unread())
    assert exchanges.continuing == {} and exchanges.lost == 0
    with open_store(store_path) as store:
        stored = store.load_session(session)
    assert [(m.role.value, m.metadata.status.value) for m in stored] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]


class ReadCounter:
    """A real Store that counts the session reads each exchange makes."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.reads: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def load_session(self, session_id: str, **kw: Any) -> Any:
        self.reads.append(session_id)
        return self._store.load_session(session_id, **kw)


def test_a_continuation_reads_its_session_once(upstream: ScriptedUpstream, store_path: str) -> None:
    # Recognizing the conversation, checking the new turns and building the upstream
    # request all read the session as the exchange first read it: one read, however
    # many of them look at it.
    counter: list[ReadCounter] = []
    served = Gateway(
        upstream, store_path, wrap_store=lambda store: counter.append(ReadCounter(store)) or counter[0]
    )
    try:
        client = _openai(served)
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        for turn in range(3):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
            counter[0].reads.clear()
            reply = client.chat.completions.create(model=SONNET, messages=history)
            assert len(counter[0].reads) == (0 if turn == 0 else 1), counter[0].reads
            history += [
                reply.choices[0].message.model_dump(exclude_none=True),
                {"role": "user", "content": "More?"},
            ]
    finally:
        served.close()


class FailOnce:
    """A real Store whose first write transaction fails."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def atomically(self, work: Callable[[Store], Any]) -> Any:
        if not self.failed:
            self.failed = True
            from metis.errors import StoreError

            raise StoreError("disk I/O error (injected)")
        return self._store.atomically(work)


def test_a_stopping_gateway_waits_for_its_retries(upstream: ScriptedUpstream, store_path: str) -> None:
    # The store failed the exchange's commit; its retry is due after the server was told
    # to stop: the app's shutdown waits for it, so the exchange is recorded all the same.
    from fastapi.testclient import TestClient
    from metis.client import AsyncClient
    from metis.gateway import create_app
    from metis.gateway.exchange import RECORD_HEADER
    from metis.gateway.keys import create_key

    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    with open_store(store_path) as store:
        _, key = create_key(store, user_id="alice")  # the test client is no loopback client
        client = AsyncClient(
            FailOnce(store), api_keys={"anthropic": "k"}, base_urls={"anthropic": upstream.url}
        )
        app = create_app(client, retries=(0.5,))
        with TestClient(app) as http:
            reply = http.post(
                "/v1/chat/completions",
                json={"model": SONNET, "messages": [{"role": "user", "content": "What happened?"}]},
                headers={"authorization": f"Bearer {key}"},
            )
            assert reply.status_code == 200 and reply.headers[RECORD_HEADER] == "retrying"
            session = reply.headers[SESSION_HEADER]
        assert app.state.exchanges.lost == 0
        assert [m.role.value for m in store.load_session(session)] == ["user", "assistant"]
