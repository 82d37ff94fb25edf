"""An API key a server echoes back never reaches error texts (issue 17, item 7)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from metis.client import AsyncClient, Client
from metis.errors import REDACTED, MetisError, ProviderError, WireFormatError
from metis.store import Store

from tests.support.client_support import FakeTime, ScriptedProvider, json_reply, stream_reply

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


# --- log records ------------------------------------------------------------------------------------


def _anthropic_stream_error() -> list[bytes]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 0},
        },
    }
    error = {"type": "error", "error": {"type": "authentication_error", "message": f"revoked key {KEY}"}}
    return [
        f"event: message_start\ndata: {json.dumps(start)}\n\n".encode(),
        f"event: error\ndata: {json.dumps(error)}\n\n".encode(),
    ]


def _all_text(record: logging.LogRecord) -> str:
    """What a handler writes of the record: its formatted text (traceback included) and its
    fields (the exception object itself aside: handlers write the formatted traceback)."""
    formatter = logging.Formatter("%(message)s")
    fields = {k: v for k, v in vars(record).items() if k != "exc_info"}
    return " ".join([formatter.format(record), repr(fields)])


def test_log_records_made_while_a_key_is_in_use_never_carry_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    scripted = ScriptedProvider().add(
        json_reply(_echoing_401("anthropic"), 401),
        stream_reply(_anthropic_stream_error()),
    )
    fake = FakeTime()
    with (
        Store.open(tmp_path / "m.sqlite3") as store,
        Client(
            store,
            transport=scripted.transport(),
            sleep=fake.sleep,
            clock=fake.clock,
            api_keys={"anthropic": KEY},
        ) as client,
    ):
        session = client.session("sonnet")
        for stream in (False, True):
            with pytest.raises(ProviderError) as failed:
                session.send("hi", stream=stream)
            _assert_clean(failed.value)
        # What an adapter or the transport may log about such a reply: the value in the
        # message, its arguments, an `extra` field, and the traceback of an unredacted error.
        log = logging.getLogger("metis.adapters")
        log.warning("odd event %s", {"echo": KEY}, extra={"raw": f"data: {KEY}"})
        try:
            raise ValueError(f"server said {KEY}")
        except ValueError:
            log.exception("decoding failed")
        logging.getLogger("httpx").info("HTTP Request: %s", f"https://x/?k={KEY}")
        logging.getLogger("myapp").info("not ours: %s", KEY)
    ours = [r for r in caplog.records if r.name != "myapp"]
    assert len(ours) >= 3
    for record in ours:
        assert KEY not in _all_text(record), record.name
    assert sum(REDACTED in _all_text(r) for r in ours) >= 3
    (theirs,) = [r for r in caplog.records if r.name == "myapp"]
    assert KEY in theirs.getMessage()  # another application's records are its own business
