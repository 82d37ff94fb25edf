"""Shared pieces of the client and CLI tests: a scripted provider, fake time, the provider table.

The scripted provider is an httpx.MockTransport handler that answers each request with the
next scripted response (provider-shaped bodies and streams from the adapters' contract
fixtures) and remembers every request, so a test can assert what was sent and that
nothing was sent when it must not be. Streams are delivered chunk by chunk to sync and
async clients alike, and can fail after N chunks (a timeout mid-stream).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType
from typing import Any

import httpx
import pytest
from metis.client import Client
from metis.store import Store


@dataclass(frozen=True)
class ProviderCase:
    """One provider as the client tests exercise it."""

    provider: str
    model: str
    contract: str
    stream_path_hint: str

    def fixtures(self) -> ModuleType:
        try:
            return import_module(f"tests.support.contracts.{self.contract}")
        except ModuleNotFoundError:
            # OpenRouter speaks OpenAI's wire shape; without a contract module of its own,
            # OpenAI's fixtures (built by the openai SDK's models) stand in.
            if self.contract != "openrouter":
                raise
            return import_module("tests.support.contracts.openai")


PROVIDERS = [
    ProviderCase("anthropic", "anthropic:claude-sonnet-4-6", "anthropic", "/v1/messages"),
    ProviderCase("openai", "openai:gpt-5", "openai", "/chat/completions"),
    ProviderCase("gemini", "gemini:gemini-2.5-flash", "gemini", ":streamGenerateContent"),
    ProviderCase("ollama", "ollama:qwen3-8b", "ollama", "/api/chat"),
    ProviderCase("openrouter", "openrouter:anthropic/claude-sonnet-4.6", "openrouter", "/chat/completions"),
    ProviderCase("responses", "responses:gpt-5", "responses", "/v1/responses"),
    ProviderCase("mistral", "mistral:magistral-medium-latest", "mistral", "/v1/chat/completions"),
]
KEYS = {
    "anthropic": "sk-ant-test",
    "openai": "sk-test",
    "gemini": "g-test",
    "openrouter": "sk-or-test",
    "responses": "sk-test",
    "mistral": "mistral-test",
}


def provider_params() -> list[Any]:
    return [pytest.param(case, id=case.provider) for case in PROVIDERS]


class ChunkStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body delivered piece by piece; raises `fail` (e.g. httpx.ReadTimeout) after the pieces."""

    def __init__(self, chunks: Sequence[bytes], fail: BaseException | None = None) -> None:
        self.chunks = list(chunks)
        self.fail = fail

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.fail is not None:
            raise self.fail

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk
        if self.fail is not None:
            raise self.fail


Reply = Callable[[httpx.Request], httpx.Response]


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body, headers=headers)

    return reply


def stream_reply(
    chunks: Sequence[bytes], *, fail: BaseException | None = None, content_type: str = "text/event-stream"
) -> Reply:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, stream=ChunkStream(chunks, fail))

    return reply


def raise_reply(exc: Exception) -> Reply:
    def reply(request: httpx.Request) -> httpx.Response:
        raise exc

    return reply


@dataclass
class ScriptedProvider:
    """Answers requests with scripted replies in order; `requests` holds what was sent."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def add(self, *replies: Reply) -> ScriptedProvider:
        self.replies.extend(replies)
        return self

    def handle(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        if not self.replies:
            raise AssertionError(f"unexpected request: {request.method} {request.url}")
        return self.replies.pop(0)(request)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def body(self, index: int = -1) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.requests[index].content)
        return value


@dataclass
class FakeTime:
    """A clock that advances 10 ms per reading, and sleeps that only record their delays."""

    now: float = 1000.0
    slept: list[float] = field(default_factory=list)

    def clock(self) -> float:
        self.now += 0.01
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.slept.append(seconds)


class SpyStore:
    """A real Store that also counts the partial checkpoints written through it."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.partials: list[Any] = []

    def upsert_partial(self, message: Any) -> None:
        self.partials.append(message)
        self._store.upsert_partial(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def scripted_client(
    store: Any, provider: ScriptedProvider, fake: FakeTime | None = None, **kw: Any
) -> Client:
    """A Client whose requests `provider` answers, on fake time (`fake`, else a new one),
    with the test keys (`KEYS`) unless `api_keys` says otherwise."""
    fake = fake or FakeTime()
    kw.setdefault("api_keys", KEYS)
    return Client(store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, **kw)


def ok_body(case: ProviderCase) -> dict[str, Any]:
    value: dict[str, Any] = case.fixtures().response_fixture()
    return value


def stream_chunks(case: ProviderCase) -> list[bytes]:
    return list(case.fixtures().stream_fixture())


def chat_chunk(delta: dict[str, Any], finish: str | None = None, *, model: str = "gpt-5") -> bytes:
    """One OpenAI Chat stream chunk as an SSE event: `delta` as its one choice's delta."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def content_type(case: ProviderCase) -> str:
    return "application/x-ndjson" if case.provider == "ollama" else "text/event-stream"
