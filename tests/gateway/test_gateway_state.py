"""`metis serve`'s state: sessions recognized without a header, keys and attribution,
`store: false`, input items, replies kept when the store fails, a client that hangs up.

As in tests/gateway/test_gateway.py: the official SDKs over real HTTP on loopback, a scripted
upstream replaying the providers' documented replies, and the store read back after.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from metis.errors import SessionNotFoundError, StoreError
from metis.gateway import SESSION_HEADER
from metis.gateway.exchange import RECORD_HEADER
from metis.gateway.keys import admit, create_key
from metis.store import Store, open_store
from metis_schema.v3 import Message, MessageStatus, Role

from tests.support.gateway_support import Gateway, ScriptedUpstream
from tests.support.gateway_support import anthropic_client as _anthropic
from tests.support.gateway_support import openai_client as _openai

SONNET = "anthropic:claude-sonnet-4-6"
TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


def _messages(store: str, session_id: str) -> list[Message]:
    with open_store(store) as opened:
        return opened.load_session(session_id)


def _stored(store: str, session_id: str) -> list[Message]:
    """The session's messages; none while the exchange that makes it is not recorded."""
    try:
        return _messages(store, session_id)
    except SessionNotFoundError:
        return []


def _shape(store: str, session_id: str) -> list[str]:
    return [f"{m.role.value}:{m.metadata.provider or ''}" for m in _messages(store, session_id)]


def _sessions(store: str) -> int:
    with open_store(store) as opened:
        return len(opened.list_sessions())


# --- sessions without duplication ------------------------------------------------------------------


def test_a_stateless_chat_tool_loop_continues_its_session(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    # No session header: the client re-sends the whole history, as Chat clients do; the
    # gateway recognizes it (thinking dropped and content joined as the client saw it) and
    # stores only the new turns.
    for golden in ("response_thinking.json", "response_citations.json", "response_citations.json"):
        upstream.reply("/v1/messages", f"anthropic/{golden}")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history, tools=TOOLS)
    session = first.headers[SESSION_HEADER]
    message = first.parse().choices[0].message
    call = message.tool_calls[0]  # type: ignore[index]
    history += [
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "14 °C, light rain"},
    ]
    second = client.chat.completions.with_raw_response.create(model=SONNET, messages=history, tools=TOOLS)
    assert second.headers[SESSION_HEADER] == session
    _, sent = upstream.received[-1]
    assert sent["messages"][2]["content"][0]["tool_use_id"] == sent["messages"][1]["content"][-1]["id"]
    history += [
        second.parse().choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "Thanks"},
    ]
    third = client.chat.completions.with_raw_response.create(model=SONNET, messages=history, tools=TOOLS)
    assert third.headers[SESSION_HEADER] == session
    assert _shape(gateway.store, session) == [
        "user:",
        "assistant:anthropic",
        "tool:",
        "assistant:anthropic",
        "user:",
        "assistant:anthropic",
    ]
    assert _sessions(gateway.store) == 1


def test_a_stateless_messages_conversation_keeps_its_thinking_and_its_session(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    upstream.reply("/v1/messages", "anthropic/response_thinking.json")
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _anthropic(gateway)
    tools = [{"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}]
    turns: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=100, messages=turns, tools=tools
    )  # type: ignore[arg-type]
    reply = first.parse()
    assert any(block.type == "thinking" for block in reply.content), "same provider: the client sees thinking"
    call = next(block for block in reply.content if block.type == "tool_use")
    turns += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "14 °C"}]},
    ]
    second = client.messages.with_raw_response.create(
        model="claude-sonnet-4-6", max_tokens=100, messages=turns, tools=tools
    )  # type: ignore[arg-type]
    session = first.headers[SESSION_HEADER]
    assert second.headers[SESSION_HEADER] == session
    assert _shape(gateway.store, session) == ["user:", "assistant:anthropic", "tool:", "assistant:anthropic"]


def test_a_retried_request_is_stored_once(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    # An SDK retries a request the upstream refused (429): the same history again. Its
    # turns were stored the first time; the retry answers them in the same session.
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    upstream.reply("/v1/messages", "anthropic/error_429.json", status=429)
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
    history += [
        first.parse().choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "More?"},
    ]
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model=SONNET, messages=history)
    retried = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
    session = first.headers[SESSION_HEADER]
    assert retried.headers[SESSION_HEADER] == session
    assert [m.role for m in _messages(gateway.store, session)] == [Role.user, Role.assistant] * 2
    assert [t["role"] for t in upstream.received[-1][1]["messages"]] == ["user", "assistant", "user"]


def test_a_retried_stream_the_upstream_refused_is_stored_once(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    # The streamed refusal comes back as the SDK's status error (429, before any event);
    # the SDK's retry, streamed too, is answered in the same session, its turn stored once.
    upstream.reply("/v1/messages", "anthropic/error_429.json", status=429)
    upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    with pytest.raises(openai.RateLimitError) as refused:
        client.chat.completions.create(model=SONNET, messages=history, stream=True)
    assert refused.value.status_code == 429
    retried = client.chat.completions.with_raw_response.create(model=SONNET, messages=history, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in retried.parse() if c.choices)
    session = retried.headers[SESSION_HEADER]
    assert _sessions(gateway.store) == 1, "the retry continued the refused request's session"
    assert [m.role for m in _messages(gateway.store, session)] == [Role.user, Role.assistant]


def test_continuation_is_recognized_by_another_process(
    upstream: ScriptedUpstream, gateway: Gateway, store_path: str
) -> None:
    # The tips are in the store: a second gateway (its own client and connection, as a
    # second worker has) recognizes what the first one answered.
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    first = _openai(gateway).chat.completions.with_raw_response.create(model=SONNET, messages=history)
    other = Gateway(upstream, store_path)
    try:
        history += [
            first.parse().choices[0].message.model_dump(exclude_none=True),
            {"role": "user", "content": "More?"},
        ]
        second = _openai(other).chat.completions.with_raw_response.create(model=SONNET, messages=history)
    finally:
        other.close()
    assert second.headers[SESSION_HEADER] == first.headers[SESSION_HEADER]
    assert len(_messages(store_path, first.headers[SESSION_HEADER])) == 4


def test_an_edited_turn_branches_into_a_fork(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    for _ in range(3):
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
    history.append(first.parse().choices[0].message.model_dump(exclude_none=True))
    client.chat.completions.create(
        model=SONNET, messages=[*history, {"role": "user", "content": "Tell me more."}]
    )
    edited = client.chat.completions.with_raw_response.create(
        model=SONNET, messages=[*history, {"role": "user", "content": "Summarize it."}]
    )
    session, fork = first.headers[SESSION_HEADER], edited.headers[SESSION_HEADER]
    assert fork != session
    with open_store(gateway.store) as opened:
        assert opened.get_session(fork).parent_session_id == session
    assert len(_messages(gateway.store, session)) == 4
    assert [m.role for m in _messages(gateway.store, fork)] == [
        Role.user,
        Role.assistant,
        Role.user,
        Role.assistant,
    ]


def test_concurrent_continuations_of_one_conversation_branch_apart(
    gateway: Gateway, upstream: ScriptedUpstream, store_path: str
) -> None:
    # Several requests continue the same stored conversation at once, each with its own
    # next turn, through two gateways (two event loops, two connections: as two workers):
    # one continues the session, the others branch into forks; none mixes in.
    for _ in range(5):
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
    history.append(first.parse().choices[0].message.model_dump(exclude_none=True))

    other = Gateway(upstream, store_path)
    clients = [client, _openai(other)]

    def ask(n: int) -> str:
        turn = {"role": "user", "content": f"variant {n}"}
        raw = clients[n % 2].chat.completions.with_raw_response.create(
            model=SONNET, messages=[*history, turn]
        )
        return raw.headers[SESSION_HEADER]

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            sessions = list(pool.map(ask, range(4)))
    finally:
        other.close()
    assert len(set(sessions)) == 4 and first.headers[SESSION_HEADER] in sessions
    for n, session in enumerate(sessions):
        messages = _messages(gateway.store, session)
        assert [m.role for m in messages] == [Role.user, Role.assistant, Role.user, Role.assistant]
        assert messages[2].content[0].text == f"variant {n}"  # type: ignore[union-attr]


def test_a_model_swap_mid_conversation_anthropic_then_gemini(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    # OpenAI SDK in; the first turn answered by Anthropic, the next by Gemini (the `model`
    # changed, nothing else): one session, the whole history sent to Gemini.
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    upstream.reply("/models/gemini-2.5-flash:generateContent", "gemini/response_text_signature.json")
    client = _openai(gateway)
    history: list[dict[str, Any]] = [{"role": "user", "content": "What happened?"}]
    first = client.chat.completions.with_raw_response.create(model=SONNET, messages=history)
    history += [
        first.parse().choices[0].message.model_dump(exclude_none=True),
        {"role": "user", "content": "And the weather?"},
    ]
    second = client.chat.completions.with_raw_response.create(
        model="gemini:gemini-2.5-flash", messages=history
    )
    assert second.parse().choices[0].message.content
    path, sent = upstream.received[-1]
    assert path == "/models/gemini-2.5-flash:generateContent"
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    session = first.headers[SESSION_HEADER]
    assert second.headers[SESSION_HEADER] == session
    assert _shape(gateway.store, session) == ["user:", "assistant:anthropic", "user:", "assistant:gemini"]


def test_store_false_records_but_does_not_serve_back(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    created = client.responses.with_raw_response.create(model=SONNET, input="What happened?", store=False)
    reply = created.parse()
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(reply.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list(reply.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=SONNET, previous_response_id=reply.id, input="More?")
    assert _shape(gateway.store, created.headers[SESSION_HEADER]) == ["user:", "assistant:anthropic"]


def test_input_items_list_the_conversation_a_response_answered(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    upstream.reply("/v1/messages", "anthropic/response_thinking.json")
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}]
    first = client.responses.create(model=SONNET, input="Weather in Paris?", tools=tools)  # type: ignore[arg-type]
    call = next(item for item in first.output if item.type == "function_call")
    second = client.responses.create(
        model=SONNET,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "14 °C"}],
    )
    items = client.responses.input_items.list(second.id, order="asc")
    types = [item.type for item in items.data]
    assert types[0] == "message" and "function_call" in types and types[-1] == "function_call_output"
    assert items.data[0].content[0].text == "Weather in Paris?"  # type: ignore[union-attr]
    newest = client.responses.input_items.list(second.id, limit=1)
    assert newest.has_more and newest.data[0].type == "function_call_output"
    assert [i.type for i in client.responses.input_items.list(first.id).data] == ["message"]


# --- keys and attribution --------------------------------------------------------------------------


def test_keys_admit_attribute_and_revoke(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    with open_store(gateway.store) as opened:
        row, key = create_key(opened, name="ci", user_id="alice", team_id="red")
        stored = opened.gateway_keys()
    assert stored[0].prefix == key[:8] and key not in repr(stored)
    with pytest.raises(openai.AuthenticationError):
        _openai(gateway, "mk_wrong").chat.completions.create(
            model=SONNET, messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(anthropic.AuthenticationError):
        _anthropic(gateway, "mk_wrong").messages.create(
            model="claude-sonnet-4-6", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(openai.AuthenticationError):
        _openai(gateway, "mk_wrong").models.list()
    assert upstream.received == []
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
    whole = _openai(gateway, key).chat.completions.with_raw_response.create(
        model=SONNET, messages=[{"role": "user", "content": "What happened?"}]
    )
    with _anthropic(gateway, key).messages.stream(
        model=SONNET, max_tokens=100, messages=[{"role": "user", "content": "What happened?"}]
    ) as stream:
        assert stream.get_final_text()
    with open_store(gateway.store) as opened:
        every = [m for s in opened.list_sessions() for m in opened.load_session(s.id)]
        assert len(every) == 4
        assert {(m.metadata.user_id, m.metadata.team_id) for m in every} == {("alice", "red")}
        assert whole.headers[SESSION_HEADER] in {s.id for s in opened.list_sessions()}
        assert opened.revoke_gateway_key(row.id)
    with pytest.raises(openai.AuthenticationError):
        _openai(gateway, key).chat.completions.create(
            model=SONNET, messages=[{"role": "user", "content": "hi"}]
        )


def test_without_keys_only_loopback_clients_are_served(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "k.sqlite3")) as store:
        assert admit(store, {}, "127.0.0.1").refused is None
        assert admit(store, {"authorization": "Bearer x"}, "::1").refused is None
        assert admit(store, {}, "10.1.2.3").refused is not None
        _, key = create_key(store, user_id="bob")
        assert admit(store, {}, "127.0.0.1").refused is not None
        assert admit(store, {"x-api-key": key}, "10.1.2.3").user_id == "bob"
        assert admit(store, {"authorization": f"Bearer {key}"}, "10.1.2.3").user_id == "bob"


def test_the_upstream_key_is_never_stored_or_logged(
    upstream: ScriptedUpstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-ant-UPSTREAM-SECRET-8f3a9c"
    served = Gateway(upstream, str(tmp_path / "s.sqlite3"), upstream_key=secret)
    caplog.set_level(logging.DEBUG)
    try:
        upstream.reply("/v1/messages", "anthropic/error_401.json", status=401)
        with pytest.raises(openai.AuthenticationError):
            _openai(served).chat.completions.create(
                model=SONNET, messages=[{"role": "user", "content": "hi"}]
            )
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        _openai(served).chat.completions.create(model=SONNET, messages=[{"role": "user", "content": "hi"}])
    finally:
        served.close()
    assert upstream.headers[-1]["x-api-key"] == secret, "the key was used"
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("s.sqlite3"))
    assert secret.encode() not in data
    assert secret not in caplog.text


class CommitCounter:
    """Counts the write transactions SQLite commits on a real Store's connection (its
    statement trace: each BEGIN IMMEDIATE ... COMMIT; reads commit BEGIN ... COMMIT)."""

    def __init__(self) -> None:
        self.commits = 0
        self._writing = False

    def wrap(self, store: Store) -> Store:
        store._conn.set_trace_callback(self._trace)
        return store

    def _trace(self, statement: str) -> None:
        if statement == "BEGIN IMMEDIATE":
            self._writing = True
        elif statement == "COMMIT" and self._writing:
            self._writing = False
            self.commits += 1


def test_each_exchange_is_one_commit(upstream: ScriptedUpstream, store_path: str) -> None:
    # The session, the new turns, the settings revision, the reply, its tool ids and the
    # tip: one transaction per exchange, whole or streamed, new or continued, answered or
    # refused upstream (then the turn and the request's key, for its retry).
    counter = CommitCounter()
    served = Gateway(upstream, store_path, wrap_store=counter.wrap)
    done: list[int] = []
    try:
        client = _openai(served)
        upstream.reply("/v1/messages", "anthropic/response_thinking.json")
        history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]
        first = client.chat.completions.create(model=SONNET, messages=history, tools=TOOLS)
        done.append(counter.commits)
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        history += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "14 °C, light rain"},
        ]
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        streamed = client.chat.completions.create(model=SONNET, messages=history, tools=TOOLS, stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
        done.append(counter.commits)
        history += [{"role": "assistant", "content": text}, {"role": "user", "content": "Thanks"}]
        upstream.reply("/v1/messages", "anthropic/error_429.json", status=429)
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model=SONNET, messages=history, tools=TOOLS)
        done.append(counter.commits)
    finally:
        served.close()
    assert done == [1, 2, 3]
    assert _sessions(store_path) == 1


# --- the reply is never lost when the store fails ---------------------------------------------------


class FlakyStore:
    """A real Store whose write transactions fail the first `failures` times."""

    def __init__(self, store: Store, failures: int) -> None:
        self._store = store
        self.failures = failures

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def atomically(self, work: Callable[[Store], Any]) -> Any:
        if self.failures > 0:
            self.failures -= 1
            raise StoreError("disk I/O error (injected)")
        return self._store.atomically(work)


def _flaky(failures: int) -> Callable[[Store], FlakyStore]:
    return lambda store: FlakyStore(store, failures)


def _wait(check: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_reply_the_store_failed_to_record_is_answered_and_recorded_on_retry(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    served = Gateway(upstream, store_path, wrap_store=_flaky(2), retries=(0.05, 0.05, 0.05))
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
        raw = _openai(served).chat.completions.with_raw_response.create(
            model=SONNET, messages=[{"role": "user", "content": "What happened?"}]
        )
        assert raw.parse().choices[0].message.content
        assert raw.headers[RECORD_HEADER] == "retrying"
        session = raw.headers[SESSION_HEADER]
        _wait(lambda: len(_stored(store_path, session)) == 2)
        # streamed: the stream's end fails to record (its one failure left), then is retried
        streamed = _openai(served).chat.completions.create(
            model=SONNET, messages=[{"role": "user", "content": "What happened?"}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
        _wait(lambda: _sessions(store_path) == 2)
        with open_store(store_path) as opened:
            last = opened.list_sessions()[0].id
        _wait(lambda: [m.metadata.status for m in _messages(store_path, last)][-1] == MessageStatus.complete)
        assert served.app.state.exchanges.lost == 0
    finally:
        served.close()


def test_a_reply_the_store_never_records_is_still_answered_and_reported(
    upstream: ScriptedUpstream, store_path: str, caplog: pytest.LogCaptureFixture
) -> None:
    served = Gateway(upstream, store_path, wrap_store=_flaky(100), retries=(0.01, 0.01))
    try:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        raw = _openai(served).chat.completions.with_raw_response.create(
            model=SONNET, messages=[{"role": "user", "content": "What happened?"}]
        )
        assert raw.parse().choices[0].message.content and raw.headers[RECORD_HEADER] == "retrying"
        _wait(lambda: served.app.state.exchanges.lost == 1)
    finally:
        served.close()
    assert "LOST from the record" in caplog.text
    assert _sessions(store_path) == 0, "nothing half-written: the exchange is one transaction"


class ReadFailStore(FlakyStore):
    """A real Store whose reads of conversation tips (made before a send) always fail."""

    def find_tip(self, *args: Any, **kw: Any) -> Any:
        raise StoreError("disk I/O error (injected)")


def test_a_stream_the_store_fails_before_sending_answers_503(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    # The store fails before the send: nothing went upstream, nothing streamed; the stream
    # request answers 503 in the inbound format, not 200 and an error event.
    served = Gateway(upstream, store_path, wrap_store=lambda store: ReadFailStore(store, 0))
    try:
        with pytest.raises(anthropic.InternalServerError) as failed:
            _anthropic(served).messages.create(
                model=SONNET, max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True
            )
        assert failed.value.status_code == 503
    finally:
        served.close()
    assert upstream.received == []


# --- faults -------------------------------------------------------------------------------------------


def test_a_client_that_hangs_up_mid_stream_leaves_the_reply_cancelled(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    upstream.dribble["/v1/messages"] = 0.3
    upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
    body = {"model": SONNET, "messages": [{"role": "user", "content": "What happened?"}], "stream": True}
    with (
        httpx.Client(timeout=20) as client,
        client.stream("POST", f"{gateway.url}/v1/chat/completions", json=body) as response,
    ):
        session = response.headers[SESSION_HEADER]
        for line in response.iter_lines():
            if '"content":"' in line:
                break  # some of the reply has arrived; then the client goes away
    _wait(lambda: len(_stored(gateway.store, session)) == 2)  # recorded once the hang-up is seen
    _wait(lambda: _messages(gateway.store, session)[-1].metadata.status == MessageStatus.cancelled)
    reply = _messages(gateway.store, session)[-1]
    assert reply.role is Role.assistant and reply.content, "what arrived is kept"
    assert len(upstream.received) == 1


def test_a_request_with_nothing_to_answer_stores_nothing(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    with pytest.raises(openai.BadRequestError, match="adds nothing"):
        _openai(gateway).chat.completions.create(
            model=SONNET,
            messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        )
    assert _sessions(gateway.store) == 0 and upstream.received == []
