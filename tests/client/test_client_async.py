"""The asyncio client: the same exchanges as the sync tests, awaited over httpx.AsyncClient."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis.canonical import messages_equal
from metis.client import AsyncClient, CheckpointPolicy, RequestTimeoutError
from metis.errors import CapabilityError, ProviderError
from metis.store import Store
from metis_schema.v3 import MessageStatus, Role, RoutingMode, TextBlock, TextDeltaEvent

from tests.support.client_support import (
    KEYS,
    PROVIDERS,
    FakeTime,
    ProviderCase,
    ScriptedProvider,
    SpyStore,
    content_type,
    json_reply,
    ok_body,
    provider_params,
    stream_chunks,
    stream_reply,
)

ANTHROPIC = PROVIDERS[0]
OPENAI = PROVIDERS[1]


def make_client(store: Any, provider: ScriptedProvider, fake: FakeTime, **kw: Any) -> AsyncClient:
    kw.setdefault("api_keys", KEYS)
    return AsyncClient(store, transport=provider.transport(), sleep=fake.asleep, clock=fake.clock, **kw)


@pytest.mark.parametrize("case", provider_params())
async def test_plain_exchange(case: ProviderCase, store: Store, tmp_path: Path) -> None:
    fake = FakeTime()
    provider = ScriptedProvider().add(json_reply(ok_body(case)))
    async with make_client(store, provider, fake) as client:
        session = client.session(case.model, workspace=tmp_path)
        reply = await session.send("What's the weather?")
    case.fixtures().check_request(provider.body())
    assert reply.metadata.status == MessageStatus.complete and reply.metadata.provider == case.provider
    assert reply.metadata.usage is not None and reply.metadata.usage.latency_ms > 0
    loaded = store.load_session(session.id)
    assert [m.role for m in loaded] == [Role.user, Role.assistant]
    assert messages_equal(loaded[-1], reply)


@pytest.mark.parametrize("case", provider_params())
async def test_streamed_exchange(case: ProviderCase, store: Store, tmp_path: Path) -> None:
    fake = FakeTime()
    provider = ScriptedProvider().add(stream_reply(stream_chunks(case), content_type=content_type(case)))
    spy = SpyStore(store)
    deltas: list[str] = []
    async with make_client(spy, provider, fake, checkpoints=CheckpointPolicy(events=1, seconds=60)) as client:
        session = client.session(case.model, workspace=tmp_path)
        reply = await session.send(
            "What's the weather?",
            stream=True,
            on_event=lambda e: deltas.append(e.text) if isinstance(e, TextDeltaEvent) else None,
        )
    assert deltas and "".join(deltas) == "".join(b.text for b in reply.content if isinstance(b, TextBlock))
    assert len(spy.partials) >= 2 and {p.id for p in spy.partials} == {reply.id}
    loaded = store.load_session(session.id)
    assert loaded[-1].metadata.status == MessageStatus.complete and messages_equal(loaded[-1], reply)


async def test_retry_then_swap_then_refusal(store: Store, tmp_path: Path) -> None:
    fake = FakeTime()
    status, error = OPENAI.fixtures().error_fixture()
    provider = ScriptedProvider().add(
        json_reply(ok_body(ANTHROPIC)),
        json_reply(error, status, {"retry-after": "2"}),
        json_reply(ok_body(OPENAI)),
    )
    async with make_client(store, provider, fake) as client:
        session = client.session("sonnet", workspace=tmp_path)
        first = await session.send("Weather?")
        for block in first.content:
            if block.type == "tool_use":
                session.add_tool_result(block.id, "sunny")
        session.swap("gpt5")
        reply = await session.send()
        for block in reply.content:
            if block.type == "tool_use":
                session.add_tool_result(block.id, "sunny")
        image = {"type": "image", "source": {"kind": "base64", "data": "aGVsbG8="}, "media_type": "image/png"}
        with pytest.raises(CapabilityError):
            await session.send([image], model="llama3.3")
    assert fake.slept == [2.0] and len(provider.requests) == 3
    assert reply.metadata.routing is not None and reply.metadata.routing.mode == RoutingMode.manual


async def test_server_errors_exhaust_retries(store: Store) -> None:
    fake = FakeTime()
    body = {
        "error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}
    }
    provider = ScriptedProvider().add(*[json_reply(body, 503) for _ in range(3)])
    async with make_client(store, provider, fake, max_retries=2) as client:
        with pytest.raises(ProviderError, match="The server had an error"):
            await client.session("gpt5").send("hi")
    assert len(provider.requests) == 3 and len(fake.slept) == 2


async def test_timeout_mid_stream_persists_cancelled(store: Store) -> None:
    chunks = stream_chunks(OPENAI)
    provider = ScriptedProvider().add(stream_reply(chunks[:3], fail=httpx.ReadTimeout("timed out")))
    async with make_client(store, provider, FakeTime()) as client:
        session = client.session("gpt5")
        with pytest.raises(RequestTimeoutError) as timed_out:
            await session.send("hi", stream=True)
    saved = store.load_session(session.id)[-1]
    assert saved.metadata.status == MessageStatus.cancelled
    assert saved.content and isinstance(saved.content[0], TextBlock) and saved.content[0].text
    assert timed_out.value.partial is not None and timed_out.value.partial.id == saved.id


async def test_task_cancelled_mid_stream_saves_then_propagates(store: Store) -> None:
    """asyncio.CancelledError mid-stream: the partial reply is saved CANCELLED, then cancellation goes on."""
    gate = asyncio.Event()

    class SlowStream(httpx.AsyncByteStream):
        async def __aiter__(self) -> Any:
            for chunk in stream_chunks(OPENAI)[:3]:
                yield chunk
            gate.set()
            await asyncio.sleep(3600)
            yield b""

    provider = ScriptedProvider().add(lambda request: httpx.Response(200, stream=SlowStream()))
    async with make_client(store, provider, FakeTime()) as client:
        session = client.session("gpt5")
        task = asyncio.create_task(session.send("hi", stream=True))
        await asyncio.wait_for(gate.wait(), 5)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    saved = store.load_session(session.id)[-1]
    assert saved.role == Role.assistant and saved.metadata.status == MessageStatus.cancelled
    assert saved.content
