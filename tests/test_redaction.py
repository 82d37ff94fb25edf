"""An API key a server echoes back never reaches error texts (issue 17, item 7)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis.client import AsyncClient, Client
from metis.errors import REDACTED, MetisError, ProviderError, WireFormatError
from metis.store import Store
from test_client_support import FakeTime, ScriptedProvider, json_reply

KEY = "sk-live-0123456789abcdef"
MODELS = {
    "anthropic": "sonnet",
    "openai": "openai:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
}


def _echoing_401(provider: str) -> dict[str, Any]:
    text = f"Incorrect API key provided: {KEY}."
    if provider == "anthropic":
        return {"type": "error", "error": {"type": "authentication_error", "message": text, "key": KEY}}
    if provider == "gemini":
        return {
            "error": {"code": 401, "message": text, "status": "UNAUTHENTICATED", "details": [{"key": KEY}]}
        }
    return {"error": {"message": text, "type": "invalid_request_error", "code": KEY, "param": None}}


def _assert_clean(error: MetisError) -> None:
    assert KEY not in str(error) and KEY not in repr(error.args)
    assert all(KEY not in repr(value) for value in vars(error).values())
    assert REDACTED in str(error)


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_key_echoed_in_a_401_body_is_redacted(tmp_path: Path, provider: str) -> None:
    scripted = ScriptedProvider().add(json_reply(_echoing_401(provider), 401))
    fake = FakeTime()
    with (
        Store.open(tmp_path / "m.sqlite3") as store,
        Client(
            store,
            transport=scripted.transport(),
            sleep=fake.sleep,
            clock=fake.clock,
            api_keys={provider: KEY},
        ) as client,
        pytest.raises(ProviderError) as failed,
    ):
        client.session(MODELS[provider]).send("hi")
    _assert_clean(failed.value)


def test_a_key_echoed_in_a_plain_text_error_is_redacted_by_the_async_client(tmp_path: Path) -> None:
    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text=f"<html>bad key {KEY}</html>")

    async def run() -> ProviderError:
        fake = FakeTime()
        with Store.open(tmp_path / "m.sqlite3") as store:
            async with AsyncClient(
                store,
                transport=httpx.MockTransport(reply),
                sleep=fake.asleep,
                clock=fake.clock,
                api_keys={"openai": KEY},
            ) as client:
                try:
                    await client.session("openai:gpt-5").send("hi")
                except ProviderError as exc:
                    return exc
        raise AssertionError("no error")

    _assert_clean(asyncio.run(run()))


def test_redaction_reaches_raw_text_and_bodies_nested_past_the_recursion_limit() -> None:
    body: Any = KEY
    for _ in range(5000):
        body = [body]
    error = ProviderError(f"bad {KEY}", provider="openai", error_type="auth", body={"deep": body, "k": KEY})
    error.redact([KEY])
    redacted: Any = error.body
    node = redacted["deep"]
    while isinstance(node, list):
        node = node[0]
    assert node == REDACTED and redacted["k"] == REDACTED and KEY not in str(error)
    wire = WireFormatError("bad chunk", raw=f'{{"key": "{KEY}"}}', hint=f"check {KEY}")
    wire.redact([KEY])
    assert KEY not in str(wire) and KEY not in (wire.raw or "") and REDACTED in (wire.raw or "")


def test_short_placeholder_keys_are_left_alone() -> None:
    error = ProviderError("model ollama not found", provider="ollama", error_type="not_found")
    error.redact(["ollama"])
    assert "ollama not found" in str(error)
