"""The sync client against provider-shaped responses served by httpx.MockTransport.

Every provider's contract fixtures (tests/support/contracts/<provider>.py: a response with text and
two tool calls, the same response streamed, an error body) go through the real path:
adapter.to_wire -> httpx -> adapter.from_wire_response / stream decoder -> SQLite store.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis.canonical import messages_equal
from metis.client import (
    CheckpointPolicy,
    Client,
    RequestCancelledError,
    RequestTimeoutError,
    RetryPolicy,
    TransportError,
    parse_retry_after,
)
from metis.errors import CapabilityError, ClientError, ProviderError, StoreError
from metis.events import RecordingSink
from metis.store import Store
from metis_schema.v3 import (
    ImageBlock,
    MessageStatus,
    Role,
    RoutingMode,
    TextBlock,
    TextDeltaEvent,
    ToolUseBlock,
)

from tests.support.client_support import (
    PROVIDERS,
    FakeTime,
    ProviderCase,
    ScriptedProvider,
    SpyStore,
    content_type,
    json_reply,
    ok_body,
    provider_params,
    raise_reply,
    scripted_client,
    stream_chunks,
    stream_reply,
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
ANTHROPIC = PROVIDERS[0]
OPENAI = PROVIDERS[1]


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime()


def tool_uses(message: Any) -> list[ToolUseBlock]:
    return [b for b in message.content if isinstance(b, ToolUseBlock)]


# --- plain and streamed exchanges, every provider -----------------------------------------------


@pytest.mark.parametrize("case", provider_params())
def test_plain_exchange_is_persisted_and_reloads_equal(
    case: ProviderCase, store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(case)))
    with scripted_client(store, provider, fake) as client:
        session = client.session(case.model, workspace=tmp_path)
        reply = session.send("What's the weather in Paris and Rome?", max_tokens=512)

    assert reply.metadata.status == MessageStatus.complete
    assert reply.metadata.provider == case.provider and reply.metadata.model == case.model
    assert reply.metadata.routing is not None and reply.metadata.routing.mode == RoutingMode.default
    usage = reply.metadata.usage
    assert (
        usage is not None and usage.input_tokens + usage.cached_input_tokens > 0 and usage.output_tokens > 0
    )
    assert usage.latency_ms > 0 and usage.pricing_version
    assert len(tool_uses(reply)) == 2
    assert all(b.id.startswith("tu_") for b in tool_uses(reply))

    # What was sent: the provider's endpoint, a body its own SDK accepts, the user's text.
    assert len(provider.requests) == 1
    sent = provider.requests[0]
    assert case.stream_path_hint.replace(":streamGenerateContent", ":generateContent") in str(sent.url)
    case.fixtures().check_request(provider.body())
    assert "What's the weather in Paris and Rome?" in sent.content.decode()

    # Reopen the file: the user message then the reply, equal to what send() returned.
    with Store.open(store.path) as again:
        loaded = again.load_session(session.id)
        assert [m.role for m in loaded] == [Role.user, Role.assistant]
        assert messages_equal(loaded[-1], reply)
        tool_ids = again.load_tool_ids(session.id)
        for block in tool_uses(reply):
            assert tool_ids.provider_id(block.id, case.provider) is not None or case.provider in (
                "gemini",
                "ollama",
            )


@pytest.mark.parametrize("case", provider_params())
def test_streamed_exchange_checkpoints_partial_then_complete(
    case: ProviderCase, store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(stream_reply(stream_chunks(case), content_type=content_type(case)))
    spy = SpyStore(store)
    seen_status: list[str] = []
    events: list[Any] = []

    def on_event(event: Any) -> None:
        events.append(event)
        last = store.load_session(session.id)[-1]
        seen_status.append(f"{last.role.value}:{last.metadata.status.value}")

    with scripted_client(spy, provider, fake, checkpoints=CheckpointPolicy(events=1, seconds=60)) as client:
        session = client.session(case.model, workspace=tmp_path)
        reply = session.send("Weather in two cities?", stream=True, on_event=on_event)

    assert provider.body().get("stream") is True or case.stream_path_hint in str(provider.requests[0].url)
    assert any(isinstance(e, TextDeltaEvent) for e in events)
    # While streaming, the store held a PARTIAL assistant message (the checkpoints) ...
    assert "assistant:partial" in seen_status
    assert len(spy.partials) >= 2 and all(p.metadata.status == MessageStatus.partial for p in spy.partials)
    assert {p.id for p in spy.partials} == {reply.id}
    # ... replaced at the end by the COMPLETE message, with usage and both tool calls.
    loaded = store.load_session(session.id)
    assert [m.metadata.status for m in loaded] == [MessageStatus.complete, MessageStatus.complete]
    assert messages_equal(loaded[-1], reply)
    assert reply.metadata.usage is not None and reply.metadata.usage.output_tokens > 0
    assert len(tool_uses(reply)) == 2


@pytest.mark.parametrize("case", provider_params())
def test_streamed_and_plain_replies_agree(
    case: ProviderCase, store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(
        json_reply(ok_body(case)), stream_reply(stream_chunks(case), content_type=content_type(case))
    )
    with scripted_client(store, provider, fake) as client:
        plain = client.session(case.model, workspace=tmp_path).send("hi")
        streamed = client.session(case.model, workspace=tmp_path).send("hi", stream=True)

    def shape(message: Any) -> list[Any]:
        return [
            (b.type, getattr(b, "text", None), getattr(b, "name", None), getattr(b, "input", None))
            for b in message.content
        ]

    assert shape(plain) == shape(streamed)
    assert plain.metadata.usage is not None and streamed.metadata.usage is not None
    assert plain.metadata.usage.cost_usd == streamed.metadata.usage.cost_usd


# --- tool loop -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", provider_params())
def test_tool_loop_sends_results_with_the_providers_ids(
    case: ProviderCase, store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(case)), json_reply(ok_body(case)))
    with scripted_client(store, provider, fake) as client:
        session = client.session(case.model, workspace=tmp_path)
        first = session.send("Weather in two cities?")
        calls = tool_uses(first)
        for n, call in enumerate(calls):
            session.add_tool_result(call.id, f"result-{n}: sunny, 21C")
        session.send()

    second = provider.requests[1].content.decode()
    case.fixtures().check_request(provider.body(1))
    for n, call in enumerate(calls):
        assert f"result-{n}: sunny, 21C" in second
        wire_id = session.tool_ids.provider_id(call.id, case.provider)
        if wire_id is not None:  # providers that issue ids get them back on the result
            assert wire_id in second
        assert call.id not in second or case.provider in ("gemini", "ollama", "openai", "openrouter")
    loaded = store.load_session(session.id)
    assert [m.role for m in loaded] == [Role.user, Role.assistant, Role.tool, Role.tool, Role.assistant]
    assert {r.status.value for r in store.tool_calls(session.id)} >= {"succeeded"}
    assert len(store.unanswered_tool_calls(session.id)) == 2  # the second reply's calls


def test_unanswered_tool_calls_are_refused_before_sending(store: Store, fake: FakeTime) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet")
        session.send("Weather?")
        with pytest.raises(ClientError, match="unanswered tool calls"):
            session.send("never mind")
    assert len(provider.requests) == 1
    assert len(store.load_session(session.id)) == 2  # the refused text was not stored


# --- swaps ------------------------------------------------------------------------------------------


def test_swap_anthropic_to_openai_resolves_every_tool_id(
    store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    from tests.support.contracts import openai as openai_contract

    events = RecordingSink()
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(OPENAI)))
    with scripted_client(store, provider, fake, events=events) as client:
        session = client.session("sonnet", workspace=tmp_path)
        first = session.send("Weather in Paris and Rome?")
        for call in tool_uses(first):
            session.add_tool_result(call.id, f"{call.input['city']}: sunny")
        assert session.swap("openai:gpt-5") == "openai:gpt-5"
        reply = session.send()

    body = provider.body(1)
    openai_contract.check_request(body)
    assert str(provider.requests[1].url) == "https://api.openai.com/v1/chat/completions"
    assert provider.requests[1].headers["authorization"] == "Bearer sk-test"
    calls = [c for m in body["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert len(calls) == 2 and [c["id"] for c in calls] == results
    assert all(len(i) <= 40 for i in results)
    for call, wire in zip(tool_uses(first), calls, strict=True):
        assert session.tool_ids.outgoing(call.id, "openai") == wire["id"]
    assert reply.metadata.provider == "openai"
    assert reply.metadata.routing is not None and reply.metadata.routing.mode == RoutingMode.manual
    assert store.get_session(session.id).active_model == "openai:gpt-5"
    assert [e.payload["mode"] for e in events.of_type("route.decided")] == ["default", "manual"]


def test_long_provider_ids_are_replaced_on_replay(store: Store, fake: FakeTime, tmp_path: Path) -> None:
    """An OpenAI-compatible server (llama.cpp) issues 44-char ids; OpenAI's 40-char rule holds on replay."""
    long_id = "call_" + "x" * 39
    body = ok_body(OPENAI)
    body["choices"][0]["message"]["tool_calls"] = body["choices"][0]["message"]["tool_calls"][:1]
    body["choices"][0]["message"]["tool_calls"][0]["id"] = long_id
    provider = ScriptedProvider().add(json_reply(body), json_reply(ok_body(OPENAI)))
    with scripted_client(store, provider, fake, base_urls={"openai": "http://127.0.0.1:8080/v1"}) as client:
        session = client.session("openai:gpt-5", workspace=tmp_path)
        call = tool_uses(session.send("go"))[0]
        session.add_tool_result(call.id, "done")
        session.send()
    assert str(provider.requests[0].url) == "http://127.0.0.1:8080/v1/chat/completions"
    sent = provider.body(1)
    wire_call = next(m for m in sent["messages"] if m.get("tool_calls"))["tool_calls"][0]["id"]
    wire_result = next(m for m in sent["messages"] if m["role"] == "tool")["tool_call_id"]
    assert wire_call == wire_result and len(wire_call) <= 40 and wire_call != long_id


def test_refused_swap_makes_no_request_and_keeps_the_model(
    store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    events = RecordingSink()
    answer = ok_body(ANTHROPIC)
    answer["content"] = answer["content"][:1]
    answer["stop_reason"] = "end_turn"
    provider = ScriptedProvider().add(json_reply(answer))
    with scripted_client(store, provider, fake, events=events) as client:
        session = client.session("sonnet", workspace=tmp_path)
        image = ImageBlock(type="image", source={"kind": "base64", "data": PNG}, media_type="image/png")
        session.send([image, TextBlock(type="text", text="What is this?")])
        before = len(provider.requests)

        with pytest.raises(CapabilityError) as refused:
            session.swap("ollama:llama-3.3-70b")
        with pytest.raises(CapabilityError):
            session.send("and now?", model="llama3.3")  # a per-message override is checked too

    assert "session contains images that this model can't process" in refused.value.message
    assert refused.value.message.startswith("Cannot swap to")
    assert len(provider.requests) == before  # the MockTransport saw nothing more
    assert session.active_model == "anthropic:claude-sonnet-4-6"
    assert store.get_session(session.id).active_model == "anthropic:claude-sonnet-4-6"
    assert len(store.load_session(session.id)) == 2  # the refused override stored nothing
    assert events.of_type("routing_constraint_failure")


def test_per_message_override_is_recorded_and_not_sticky(store: Store, fake: FakeTime) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(OPENAI)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet")
        reply = session.send("quick question", model="openai:gpt-5")
    assert reply.metadata.model == "openai:gpt-5"
    assert reply.metadata.routing is not None and reply.metadata.routing.mode == RoutingMode.override
    assert session.active_model == "anthropic:claude-sonnet-4-6"
    assert "/chat/completions" in str(provider.requests[0].url)


def test_resume_reads_model_and_tool_ids_back(store: Store, fake: FakeTime, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(OPENAI)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        calls = tool_uses(session.send("Weather?"))
        session.swap("gpt5")
    with scripted_client(store, provider, fake) as client:
        again = client.resume(session.id)
        assert again.active_model == "openai:gpt-5"
        for call in calls:
            again.add_tool_result(call.id, "sunny")
        reply = again.send()
    assert reply.metadata.routing is not None and reply.metadata.routing.mode == RoutingMode.manual
    assert again.tool_ids.provider_id(calls[0].id, "anthropic") == "toolu_01A09q90qw90lq917835lq9"


# --- retries and errors -------------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_that_delay(store: Store, fake: FakeTime) -> None:
    status, error = OPENAI.fixtures().error_fixture()
    assert status == 429
    provider = ScriptedProvider().add(
        json_reply(error, 429, {"retry-after": "7"}),
        json_reply(
            error,
            429,
            {"retry-after": format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)},
        ),
        json_reply(ok_body(OPENAI)),
    )
    with scripted_client(store, provider, fake) as client:
        reply = client.session("gpt5").send("hi")
    assert reply.metadata.status == MessageStatus.complete
    assert len(provider.requests) == 3
    assert fake.slept[0] == 7.0
    assert 1.0 <= fake.slept[1] <= 3.0


def test_server_errors_exhaust_retries_into_the_providers_error(store: Store, fake: FakeTime) -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    provider = ScriptedProvider().add(*[json_reply(body, 500) for _ in range(4)])
    with scripted_client(store, provider, fake, max_retries=3) as client:
        session = client.session("sonnet")
        with pytest.raises(ProviderError) as failed:
            session.send("hi")
    assert len(provider.requests) == 4  # the first try and three retries
    assert len(fake.slept) == 3 and fake.slept == sorted(fake.slept)  # backoff grows
    assert failed.value.status_code == 500 and "Internal server error" in str(failed.value)
    assert failed.value.provider == "anthropic"
    assert [m.role for m in store.load_session(session.id)] == [Role.user]


def test_overloaded_anthropic_error_is_retried(store: Store, fake: FakeTime) -> None:
    status, body = ANTHROPIC.fixtures().error_fixture()
    provider = ScriptedProvider().add(json_reply(body, status), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider, fake) as client:
        client.session("sonnet").send("hi")
    assert len(provider.requests) == 2 and len(fake.slept) == 1


def test_client_errors_are_not_retried_and_carry_the_providers_message(store: Store, fake: FakeTime) -> None:
    body = {
        "error": {
            "message": "Invalid 'messages[2].tool_calls[0].id': string too long.",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    provider = ScriptedProvider().add(json_reply(body, 400))
    with (
        scripted_client(store, provider, fake) as client,
        pytest.raises(ProviderError, match="string too long"),
    ):
        client.session("gpt5").send("hi")
    assert fake.slept == [] and len(provider.requests) == 1


def test_connect_errors_are_retried_then_reported(store: Store, fake: FakeTime) -> None:
    provider = ScriptedProvider().add(
        raise_reply(httpx.ConnectError("refused")), json_reply(ok_body(ANTHROPIC))
    )
    with scripted_client(store, provider, fake) as client:
        client.session("sonnet").send("hi")
    assert len(fake.slept) == 1

    provider = ScriptedProvider().add(*[raise_reply(httpx.ConnectError("refused")) for _ in range(2)])
    with (
        scripted_client(store, provider, fake, max_retries=1) as client,
        pytest.raises(TransportError, match="cannot reach"),
    ):
        client.session("sonnet").send("hi")


def test_timeout_mid_stream_persists_cancelled_with_partial_text(store: Store, fake: FakeTime) -> None:
    chunks = stream_chunks(ANTHROPIC)
    cut = next(i for i, c in enumerate(chunks) if b"both cities" in c) + 1
    provider = ScriptedProvider().add(stream_reply(chunks[:cut], fail=httpx.ReadTimeout("read timed out")))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet")
        with pytest.raises(RequestTimeoutError) as timed_out:
            session.send("Weather?", stream=True)
    saved = store.load_session(session.id)[-1]
    assert saved.role == Role.assistant and saved.metadata.status == MessageStatus.cancelled
    text = "".join(b.text for b in saved.content if isinstance(b, TextBlock))
    assert text.startswith("I'll check") and "both cities" in text
    assert timed_out.value.partial is not None and timed_out.value.partial.id == saved.id
    assert isinstance(timed_out.value, ClientError)


def test_ctrl_c_mid_stream_persists_cancelled(store: Store, fake: FakeTime) -> None:
    provider = ScriptedProvider().add(stream_reply(stream_chunks(OPENAI)))

    def interrupt(event: Any) -> None:
        if isinstance(event, TextDeltaEvent):
            raise KeyboardInterrupt

    with scripted_client(store, provider, fake) as client:
        session = client.session("gpt5")
        with pytest.raises(RequestCancelledError):
            session.send("hi", stream=True, on_event=interrupt)
        saved = store.load_session(session.id)[-1]
        assert saved.metadata.status == MessageStatus.cancelled and saved.content
        # A cancelled reply stays on record but is not replayed: the next request has no prefill.
        provider.add(json_reply(ok_body(OPENAI)))
        session.send("again")
    assert [m["role"] for m in provider.body()["messages"]] == ["user", "user"]


def test_error_event_mid_stream_persists_error_and_raises(store: Store, fake: FakeTime) -> None:
    chunks = stream_chunks(ANTHROPIC)
    cut = next(i for i, c in enumerate(chunks) if b"both cities" in c) + 1
    error = (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    provider = ScriptedProvider().add(stream_reply([*chunks[:cut], error]))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet")
        with pytest.raises(ProviderError, match="Overloaded"):
            session.send("hi", stream=True)
    saved = store.load_session(session.id)[-1]
    assert saved.metadata.status == MessageStatus.error
    assert any(isinstance(b, TextBlock) and "I'll check" in b.text for b in saved.content)


# --- configuration -------------------------------------------------------------------------------------


def test_a_missing_key_fails_before_any_request(
    store: Store, fake: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    provider = ScriptedProvider()
    with (
        scripted_client(store, provider, fake, api_keys={}) as client,
        pytest.raises(ClientError, match="ANTHROPIC_API_KEY"),
    ):
        client.session("sonnet").send("hi")
    assert provider.requests == []


def test_keys_and_base_urls_come_from_the_environment(
    store: Store, fake: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "g-from-env")
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("METIS_OLLAMA_BASE_URL", "http://gpu-box:11434")
    gemini, ollama = PROVIDERS[2], PROVIDERS[3]
    provider = ScriptedProvider().add(json_reply(ok_body(gemini)), json_reply(ok_body(ollama)))
    with scripted_client(store, provider, fake, api_keys={}) as client:
        client.session(gemini.model).send("hi")
        client.session(ollama.model).send("hi")
    assert "g-from-env" in str(provider.requests[0].headers) + str(provider.requests[0].url)
    assert str(provider.requests[1].url) == "http://gpu-box:11434/api/chat"
    assert "authorization" not in provider.requests[1].headers


def test_default_store_and_optional_ollama_key(fake: FakeTime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_API_KEY", "ollama-cloud-key")
    monkeypatch.setenv("METIS_OLLAMA_BASE_URL", "https://ollama.com/api")
    ollama = PROVIDERS[3]
    provider = ScriptedProvider().add(json_reply(ok_body(ollama)))
    with Client(transport=provider.transport(), sleep=fake.sleep, clock=fake.clock) as client:
        session = client.session(ollama.model)
        session.send("hi")
        path = client.store.path  # type: ignore[attr-defined]
    assert str(provider.requests[0].url) == "https://ollama.com/api/chat"
    assert provider.requests[0].headers["authorization"] == "Bearer ollama-cloud-key"
    assert path == Path(os.environ["METIS_HOME"]) / "metis.sqlite3"
    with Store.open(path) as again:
        assert len(again.load_session(session.id)) == 2


def test_unknown_options_are_refused(store: Store, fake: FakeTime) -> None:
    with (
        scripted_client(store, ScriptedProvider(), fake) as client,
        pytest.raises(ClientError, match="temprature"),
    ):
        client.session("sonnet").send("hi", temprature=0.2)


# --- the retry policy alone ------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    now = datetime(2026, 5, 8, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"retry-after": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "Fri, 08 May 2026 12:00:30 GMT"}, now=now) == 30.0
    assert parse_retry_after({"retry-after": "Fri, 08 May 2026 11:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_is_bounded_and_jittered() -> None:
    low = RetryPolicy(max_retries=10, base_delay=1.0, max_delay=8.0, rng=lambda: 0.0)
    high = RetryPolicy(max_retries=10, base_delay=1.0, max_delay=8.0, rng=lambda: 1.0)
    assert [low.delay(a) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert [high.delay(a) for a in range(5)] == [1.0, 2.0, 4.0, 8.0, 8.0]
    assert high.delay(3, retry_after=120.0) == 8.0  # a server's hint is capped too
    assert high.delay(10) is None


def test_a_tool_outside_the_schema_subset_is_refused_before_any_request(
    store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    from metis.errors import ToolSchemaError
    from metis_schema.v3 import ToolDefinition

    bad = ToolDefinition(
        name="lookup",
        description="d",
        side_effects="read",
        input_schema={
            "type": "object",
            "properties": {"q": {"oneOf": [{"type": "string"}, {"type": "null"}]}},
        },
    )
    provider = ScriptedProvider()
    with scripted_client(store, provider, fake) as client:
        with pytest.raises(ToolSchemaError, match="oneOf"):
            client.session("sonnet", workspace=tmp_path, tools=[bad])
        session = client.session("sonnet", workspace=tmp_path)
        with pytest.raises(ToolSchemaError, match="/properties/q/oneOf"):
            session.send("hi", tools=[bad])
    assert provider.requests == []
    assert store.load_session(session.id) == []  # nothing stored either


@pytest.mark.parametrize("case", PROVIDERS, ids=lambda c: c.provider)
def test_reply_tool_inputs_are_checked_against_the_offered_tools(
    case: ProviderCase, store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    """§5.2.4 at ingress: an input outside its tool's input_schema (or a call to a tool not
    offered) emits tool_input_invalid; the reply is stored as the model gave it."""
    from metis_schema.v3 import ToolDefinition

    def weather(city_type: str) -> ToolDefinition:
        return ToolDefinition(
            name="get_weather",
            description="d",
            side_effects="read",
            input_schema={"type": "object", "properties": {"city": {"type": city_type}}},
        )

    other = ToolDefinition(
        name="lookup", description="d", side_effects="read", input_schema={"type": "object", "properties": {}}
    )
    for tools, expected in (([weather("string")], 0), ([weather("integer")], 2), ([other], 2)):
        events = RecordingSink()
        provider = ScriptedProvider().add(json_reply(ok_body(case)))
        with scripted_client(store, provider, fake, events=events) as client:
            session = client.session(case.model, workspace=tmp_path, tools=tools)
            reply = session.send("Weather in Paris and Rome?")
        invalid = events.of_type("tool_input_invalid")
        assert len(invalid) == expected, (tools[0].name, [e.payload for e in invalid])
        assert [e.payload["tool_use_id"] for e in invalid] == [c.id for c in tool_uses(reply)][:expected]
        assert store.load_session(session.id)[-1] == reply


# --- incremental history ---------------------------------------------------------------------------


def answered_turn(session: Any, text: str) -> Any:
    """Send `text` and answer every tool call of the reply with "sunny"; the reply."""
    reply = session.send(text)
    for call in tool_uses(reply):
        session.add_tool_result(call.id, "sunny")
    return reply


class ReadSpy(SpyStore):
    """A real Store that records each history read: (after, ids returned)."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.reads: list[tuple[str | None, list[str]]] = []

    def load_session(self, session_id: str, *, after: str | None = None) -> list[Any]:
        loaded = self._store.load_session(session_id, after=after)
        self.reads.append((after, [m.id for m in loaded]))
        return loaded


def test_history_reads_only_new_rows_and_sees_other_writers(
    store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(*(json_reply(ok_body(ANTHROPIC)) for _ in range(3)))
    spy = ReadSpy(store)
    with scripted_client(spy, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        answered_turn(session, "Weather?")
        second = session.send()
        # Another writer on the same file answers the second reply's calls.
        with Store.open(store.path) as other_store, scripted_client(other_store, provider, fake) as other:
            elsewhere = other.resume(session.id)
            for n, call in enumerate(tool_uses(second)):
                elsewhere.add_tool_result(call.id, f"answered elsewhere {n}")
        session.send()

    stored = [m.id for m in store.load_session(session.id)]
    # send 1 reads the empty session, send 2 reads it whole (user, reply, two results), and
    # send 3 only what came after: the second reply and the two results stored elsewhere.
    assert spy.reads == [(None, []), (None, stored[:4]), (stored[3], stored[4:7])]
    assert stored[4] == second.id
    assert "answered elsewhere 1" in provider.requests[2].content.decode()
    assert [m.id for m in session.messages()] == [m.id for m in store.load_session(session.id)]


def test_history_reads_a_partial_checkpoint_again_until_it_is_final(
    store: Store, fake: FakeTime, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        first = answered_turn(session, "Weather?")
        user = session.core.user_message("and tomorrow?")
        store.append(user)
        partial = first.model_copy(
            update={
                "id": "01JZ0000000000000000000001",
                "content": [TextBlock(text="Tomorrow")],
                "metadata": first.metadata.model_copy(update={"status": MessageStatus.partial}),
            }
        )
        store.upsert_partial(partial)
        assert session.core.history()[-1].metadata.status == MessageStatus.partial
        final = partial.model_copy(
            update={
                "content": [TextBlock(text="Tomorrow: rain.")],
                "metadata": first.metadata.model_copy(update={"status": MessageStatus.complete}),
            }
        )
        store.finalize(final)
        history = session.core.history()
    assert history[-1].metadata.status == MessageStatus.complete
    assert history[-1].content == [TextBlock(text="Tomorrow: rain.")]
    assert [m.id for m in history] == [m.id for m in store.load_session(session.id)]


def test_history_reads_a_recreated_session_whole(store: Store, fake: FakeTime, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        answered_turn(session, "Weather?")
        assert len(session.core.history()) == 4
        store.delete_session(session.id)
        store.create_session(str(tmp_path), session_id=session.id)
        fresh = session.core.user_message("a new start")
        store.append(fresh)
        assert [m.id for m in session.core.history()] == [fresh.id]
        again = session.core.user_message("and again")
        store.append(again)
        assert [m.id for m in session.core.history()] == [fresh.id, again.id]


def test_messages_are_copies_that_change_nothing_sent(store: Store, fake: FakeTime, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        answered_turn(session, "the secret question")
        history = session.messages()
        history[0].content[0].text = "edited by the caller"  # type: ignore[union-attr]
        session.send()
    sent = provider.requests[1].content.decode()
    assert "the secret question" in sent and "edited by the caller" not in sent


class WholeSessionStore(SpyStore):
    """A caller's SessionStore that reads whole sessions only (no `after=`)."""

    def load_session(self, session_id: str) -> list[Any]:  # type: ignore[override]
        return self._store.load_session(session_id)


def test_a_store_without_incremental_reads_still_works(store: Store, fake: FakeTime, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(WholeSessionStore(store), provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        answered_turn(session, "Weather?")
        session.send()
        assert [m.id for m in session.messages()] == [m.id for m in store.load_session(session.id)]


class FailingIncrementalStore(SpyStore):
    """A caller's SessionStore whose incremental reads fail with `failure`."""

    def __init__(self, store: Store, failure: Exception) -> None:
        super().__init__(store)
        self.failure = failure

    def load_session(self, session_id: str, *, after: str | None = None, **kw: Any) -> list[Any]:
        if after is not None:
            raise self.failure
        return self._store.load_session(session_id, **kw)


@pytest.mark.parametrize(
    "failure",
    [
        TypeError("a bug inside the store"),  # not taken for a store without `after=`
        StoreError("sqlite: database is locked"),  # not taken for a recreated session
    ],
)
def test_a_failing_incremental_read_is_raised_not_taken_for_something_else(
    store: Store, fake: FakeTime, tmp_path: Path, failure: Exception
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(FailingIncrementalStore(store, failure), provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        answered_turn(session, "Weather?")
        session.core.history()  # the first read is whole; later ones read what follows
        with pytest.raises(type(failure), match=str(failure)):
            session.core.history()
