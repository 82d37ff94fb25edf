"""`metis serve` reads its store off the event loop, and imports a stateless request once.

Real parts as in tests/gateway/test_gateway_writes.py: the official OpenAI SDK over
loopback HTTP, the scripted upstream, a real SQLite store (wrapped only to watch, or to
slow down, the calls the gateway makes of it).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import orjson
import pytest
from metis import adapters
from metis.gateway import SESSION_HEADER
from metis.gateway.exchange import _PROBE_SESSION
from metis.gateway.keys import create_key
from metis.ids import ToolIdMap
from metis.store import Store, open_store
from metis_schema.v3 import Message, ToolUseBlock

from tests.support import golden
from tests.support.gateway_support import Gateway, ScriptedUpstream
from tests.support.gateway_support import anthropic_client as _anthropic
from tests.support.gateway_support import openai_client as _openai

SONNET = "anthropic:claude-sonnet-4-6"
TOOLS = [
    {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}},
]


def _on_loop() -> bool:
    """Whether the calling thread is running an event loop (a gateway's: its server thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopWatch:
    """A real Store (`wrap`) that notes each call made of it, and those made on an event loop."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self.calls: list[str] = []
        self.on_loop: list[str] = []

    def wrap(self, store: Store) -> LoopWatch:
        self._store = store
        return self

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if not callable(found):
            return found

        def watched(*args: Any, **kw: Any) -> Any:
            self.calls.append(name)
            if _on_loop():
                self.on_loop.append(name)
            return found(*args, **kw)

        return watched


def test_no_store_call_runs_on_the_event_loop(upstream: ScriptedUpstream, store_path: str) -> None:
    # Every route (Chat, Responses, Messages), whole and streamed, new conversations and
    # continuations (by header, by fingerprint, by previous_response_id, a failed request's
    # retry), stored replies read back, key lookups: the
    # gateway calls its store from worker threads only, never from the loop that serves
    # every client.
    with open_store(store_path) as opened:
        _, key = create_key(opened, user_id="alice")
    watch = LoopWatch()
    served = Gateway(upstream, store_path, wrap_store=watch.wrap)
    try:
        client = _openai(served, key)
        for _ in range(3):
            upstream.reply("/v1/messages", "anthropic/response_citations.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
        session = first.headers[SESSION_HEADER]
        history += [first.parse().choices[0].message.model_dump(exclude_none=True)]
        history += [{"role": "user", "content": "And then?"}]
        second = client.chat.completions.create(model=SONNET, messages=history)  # by fingerprint
        history += [second.choices[0].message.model_dump(exclude_none=True)]
        history += [{"role": "user", "content": "By header."}]
        client.chat.completions.create(
            model=SONNET, messages=history, extra_headers={SESSION_HEADER: session}
        )
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        streamed = client.chat.completions.create(
            model=SONNET, messages=[{"role": "user", "content": "Stream it."}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)

        upstream.reply("/v1/messages", "anthropic/response_thinking.json")
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        reply = client.responses.create(model=SONNET, input="Weather in Paris?", tools=TOOLS)
        call = next(item for item in reply.output if item.type == "function_call")
        after = client.responses.create(
            model=SONNET,
            previous_response_id=reply.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "14 °C"}],
        )
        assert client.responses.retrieve(after.id).id == after.id
        assert client.responses.input_items.list(after.id).data
        assert client.models.list().data
        upstream.reply("/v1/messages", "anthropic/stream_thinking.sse")
        with _anthropic(served, key).messages.stream(
            model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "Think."}]
        ) as events:
            assert events.get_final_message().content

        failing = [{"role": "user", "content": "Fails upstream, then retried."}]
        with pytest.raises(openai.InternalServerError):  # nothing scripted: the upstream answers 500
            client.chat.completions.create(model=SONNET, messages=failing)
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        client.chat.completions.create(model=SONNET, messages=failing)  # the retry, recognized
    finally:
        served.close()
    read = {"resolve_gateway_key", "find_tip", "get_session", "load_session", "load_tool_ids", "get_message"}
    assert read <= set(watch.calls), "the store was read through the watch"
    assert watch.on_loop == [], f"store calls made on the event loop: {sorted(set(watch.on_loop))}"


# --- a slow read holds up its own request only ------------------------------------------------------


class SlowReads:
    """A real Store (`wrap`) whose chosen reads (`slow`: name -> whether to, given the
    call's arguments) first take `seconds` (a large session, a far database)."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self.seconds = 0.0
        self.slow: dict[str, Callable[..., bool]] = {}

    def wrap(self, store: Store) -> SlowReads:
        self._store = store
        return self

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        when = self.slow.get(name)
        if when is None:
            return found

        def slow(*args: Any, **kw: Any) -> Any:
            if when(*args, **kw):
                time.sleep(self.seconds)
            return found(*args, **kw)

        return slow


SLOW = 2.0
"""Seconds a slowed read takes."""


def _always(*_: Any, **__: Any) -> bool:
    return True


@pytest.mark.parametrize(
    "read", ["previous_response_id", "stored_response", "stateless_continuation", "key_lookup"]
)
def test_a_slow_store_read_does_not_hold_up_other_clients(
    upstream: ScriptedUpstream, store_path: str, read: str
) -> None:
    # One client's request waits on a slow read of the store (`SLOW`: the session it
    # continues, the reply it asks for, the tips its history is looked up among, its key);
    # meanwhile another client is answered at once, again and again: the read does not run
    # on the event loop.
    with open_store(store_path) as opened:
        _, slow_key = create_key(opened, user_id="slow")
        _, other_key = create_key(opened, user_id="other")
    slowed = SlowReads()
    served = Gateway(upstream, store_path, wrap_store=slowed.wrap)
    waits: list[float] = []
    try:
        client = _openai(served, slow_key)
        # the conversation the slow request continues, made at full speed (this also warms
        # the gateway up: what it imports on first use is not what is measured)
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        chat = client.chat.completions.create(model=SONNET, messages=history)
        history += [
            chat.choices[0].message.model_dump(exclude_none=True),
            {"role": "user", "content": "More?"},
        ]
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        created = client.responses.create(model=SONNET, input="What happened?")

        requests: dict[str, Callable[[], Any]] = {
            "previous_response_id": lambda: client.responses.create(
                model=SONNET, previous_response_id=created.id, input="More?"
            ),
            "stored_response": lambda: client.responses.retrieve(created.id),
            "stateless_continuation": lambda: client.chat.completions.create(model=SONNET, messages=history),
            "key_lookup": client.models.list,
        }
        slowed.slow = {
            "previous_response_id": {"load_session": _always},
            "stored_response": {"get_message": _always},
            "stateless_continuation": {"find_tip": _always},
            "key_lookup": {"resolve_gateway_key": lambda key: key == slow_key},
        }[read]
        slowed.seconds = SLOW
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        answered: list[Any] = []
        started = time.monotonic()
        request = threading.Thread(target=lambda: answered.append(requests[read]()))
        request.start()
        headers = {"authorization": f"Bearer {other_key}"}
        with httpx.Client(timeout=20) as other:
            while request.is_alive():
                began = time.monotonic()
                assert other.get(f"{served.url}/v1/models", headers=headers).status_code == 200
                waits.append(time.monotonic() - began)
        request.join()
        took = time.monotonic() - started
    finally:
        served.close()
    assert answered, "the slow request was answered"
    assert took >= SLOW, f"the read was slow ({took:.2f}s)"
    # on a loop blocked by the read, one of them would wait for it (about SLOW seconds)
    assert len(waits) > 3 and max(waits) < SLOW / 2, f"another client waited on a store read: {waits}"


# --- a stateless request is imported once -----------------------------------------------------------


def test_a_stateless_request_is_imported_once(
    upstream: ScriptedUpstream, store_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Chat request without a session header is imported once, under the probe session it
    # is fingerprinted in, then re-keyed to the session it continues: a new conversation, a
    # recognized continuation, and one that branches off because another continuation of
    # the same conversation is streaming (its fork).
    chat = adapters.get("openai")
    from_wire_request: Callable[..., Any] = chat.from_wire_request
    imports: list[int] = []

    def counted(body: Any, **kw: Any) -> Any:
        messages = body.get("messages") or []
        if messages and messages[-1].get("role") == "user":  # a request's, not a reply's (tips)
            imports.append(len(messages))
        return from_wire_request(body, **kw)

    monkeypatch.setattr(chat, "from_wire_request", counted)
    watch = LoopWatch()
    served = Gateway(upstream, store_path, wrap_store=watch.wrap)
    try:
        client = _openai(served)
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
        opened = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
        session = opened.headers[SESSION_HEADER]
        assert imports == [1]
        history.append(opened.parse().choices[0].message.model_dump(exclude_none=True))

        upstream.dribble["/v1/messages"] = 0.2
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        streamed = client.chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "streamed turn"}], stream=True
        )
        chunks = iter(streamed.parse())
        next(chunks)
        other = client.chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, {"role": "user", "content": "other turn"}]
        )
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finally:
        served.close()
    assert imports == [1, 3, 3], "each request imported once"
    assert watch.on_loop == [], "the branch read its store off the loop too"
    assert streamed.headers[SESSION_HEADER] == session
    fork = other.headers[SESSION_HEADER]
    with open_store(store_path) as store:
        assert store.get_session(fork).parent_session_id == session
        for sid in (session, fork):
            stored = store.load_session(sid)
            assert all(m.session_id == sid for m in stored)
            assert [m.role.value for m in stored] == ["user", "assistant", "user", "assistant"]


def _normalized(messages: list[Message], *, fresh_calls: bool) -> Any:
    """The messages as JSON, their message ids numbered in order (minted at random), and
    their calls' ids too when they are `fresh_calls` (minted at random as well); without
    the time each was made."""
    dumped = [m.model_dump(mode="json", exclude_none=True, exclude={"created_at"}) for m in messages]
    text = orjson.dumps(dumped).decode()
    minted = [m.id for m in messages]
    if fresh_calls:
        minted += [b.id for m in messages for b in m.content if isinstance(b, ToolUseBlock)]
    for n, value in enumerate(minted):
        text = text.replace(value, f"<id {n}>")
    return orjson.loads(text)


REQUESTS = [
    ("openai", "openai/request_every_shape.json"),
    ("openai", "openai/request_followup.json"),
    ("anthropic", "anthropic/request_recorded.json"),
    ("anthropic", "anthropic/request_v2_blocks.json"),
    ("responses", "responses/request_every_shape.json"),
]
"""Request bodies of the gateway's inbound APIs that make tool calls and answer them."""


@pytest.mark.parametrize(("inbound", "name"), REQUESTS)
@pytest.mark.parametrize("known", [False, True])
def test_a_request_imported_under_the_probe_and_rekeyed_is_the_request_imported_into_the_session(
    inbound: str, name: str, known: bool
) -> None:
    # Providers' own request bodies (with tool calls and their results), into a new
    # session, and into one that knows every call already (the client re-sends the
    # history): imported under the probe and re-keyed, they are what importing them into
    # the session gives, the same calls keeping the same ids, and the session's map ends
    # the same.
    from metis.gateway.exchange import _rekeyed

    adapter = adapters.get(inbound)
    body = orjson.loads((golden.ROOT / name).read_bytes())
    session = ToolIdMap("sess_x")
    if known:
        adapter.from_wire_request(body, session_id="sess_x", tool_ids=session)
    direct_map = ToolIdMap("sess_x", list(session))
    direct = adapter.from_wire_request(body, session_id="sess_x", tool_ids=direct_map).messages
    probe_map = ToolIdMap(_PROBE_SESSION)
    probe = adapter.from_wire_request(body, session_id=_PROBE_SESSION, tool_ids=probe_map).messages
    rekeyed_map = ToolIdMap("sess_x", list(session))
    rekeyed = _rekeyed(probe, probe_map, "sess_x", rekeyed_map)
    assert any(isinstance(b, ToolUseBlock) for m in direct for b in m.content), "the body makes calls"
    assert _normalized(rekeyed, fresh_calls=not known) == _normalized(direct, fresh_calls=not known)
    assert all(m.session_id == "sess_x" for m in rekeyed)
    if known:
        assert list(rekeyed_map) == list(session) == list(direct_map), "nothing new bound"
    else:
        bound = [(e.provider, e.provider_id, e.origin) for e in rekeyed_map]
        assert bound == [(e.provider, e.provider_id, e.origin) for e in direct_map]
