"""`metis serve`'s store work does not hold up other requests, nor grow with the history.

Real parts as in tests/test_gateway_state.py: the official OpenAI SDK over loopback HTTP,
the scripted upstream, a real SQLite store (wrapped only to slow its writes down).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gateway_support import Gateway, ScriptedUpstream
from gateway_support import openai_client as _openai
from metis import adapters, fingerprint
from metis.gateway import SESSION_HEADER
from metis.store import Store, open_store
from metis_schema.v3 import Message

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


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    return str(tmp_path / "gateway.sqlite3")


def test_a_slow_store_write_does_not_hold_up_other_requests(
    upstream: ScriptedUpstream, store_path: str
) -> None:
    # Each write takes a second. While an exchange's writes are under way, the event loop
    # still answers other requests at once: no write runs on it.
    served = Gateway(upstream, store_path, wrap_store=lambda store: SlowStore(store, 1.0))
    waits: list[float] = []
    try:
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
