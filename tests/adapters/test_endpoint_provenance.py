"""Opaque reasoning goes back only to the endpoint that produced it (issue 15 item 10, spec §4.3,
§7.3): a reply records the endpoint it came from, and `provenance.replays_opaque` (the one test
every adapter asks) replays signatures, encrypted reasoning and thought signatures to the same
provider at the same endpoint only; a message with no endpoint recorded is the provider's own
default API."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.adapters._kit.provenance import replays_opaque
from metis.assembly import RequestContext
from metis.canonical import message_hash, read_message
from metis.endpoints import normalize_endpoint
from metis.errors import AdapterError, WireFormatError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, Role, TextBlock

from tests.support import golden
from tests.support.messages import build_message

SESSION = "sess_provenance"
PROXY = "https://llm-proxy.example.com:8443/anthropic"
"""A compatible server at another base URL: it speaks the provider's wire format and signs
its own reasoning."""


def _user(text: str) -> Message:
    return build_message(
        Role.user, [TextBlock(type="text", text=text)], session_id=SESSION, created_at=datetime.now(UTC)
    )


def _anthropic_thinking(body: dict[str, Any]) -> bool:
    content = body["messages"][1]["content"]
    return any(b["type"] == "thinking" and b.get("signature") for b in content)


def _responses_reasoning(body: dict[str, Any]) -> bool:
    return any(item.get("type") == "reasoning" and item.get("encrypted_content") for item in body["input"])


def _gemini_thought(body: dict[str, Any]) -> bool:
    return any(part.get("thought") for part in body["contents"][1]["parts"])


def _openrouter_details(body: dict[str, Any]) -> bool:
    return bool(body["messages"][1].get("reasoning_details"))


CASES: dict[str, tuple[str, str, Callable[[dict[str, Any]], bool]]] = {
    "anthropic": ("anthropic:claude-sonnet-4-6", "response_thinking.json", _anthropic_thinking),
    "responses": ("responses:gpt-5", "response_tools.json", _responses_reasoning),
    "gemini": ("gemini:gemini-2.5-flash", "response_thinking_tools.json", _gemini_thought),
    "openrouter": ("openrouter:anthropic/claude-sonnet-4.6", "response_anthropic.json", _openrouter_details),
}
"""provider -> (model, a golden reply holding opaque reasoning, whether a body replays it)."""


def _reply(provider: str, ids: ToolIdMap, endpoint: str | None) -> Message:
    model, name, _ = CASES[provider]
    body = json.loads(golden.read_input(provider, name))
    context = RequestContext(session_id=SESSION, model=model, tool_ids=ids, endpoint=endpoint)
    return adapters.get(provider).from_wire_response(body, context)


def _replayed(provider: str, reply: Message, ids: ToolIdMap, endpoint: str | None) -> bool:
    model, _, carries = CASES[provider]
    options = AdapterOptions(model=model, session_id=SESSION, tool_ids=ids, endpoint=endpoint)
    return carries(adapters.get(provider).to_wire([_user("hi"), reply], [], options))


def _drops(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    # Gemini's note that the current turn's calls go with the documented skip signature (once
    # their own is dropped) is no drop of its own
    return [
        r
        for r in caplog.records
        if getattr(r, "block_type", None)
        and r.levelno == logging.WARNING
        and "skip_thought_signature_validator" not in str(getattr(r, "reason", ""))
    ]


@pytest.mark.parametrize("provider", CASES)
def test_reasoning_signed_by_a_proxy_is_not_replayed_to_the_providers_own_api(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    ids = ToolIdMap(SESSION)
    reply = _reply(provider, ids, normalize_endpoint(PROXY))
    assert reply.metadata.endpoint == PROXY
    with caplog.at_level(logging.WARNING, logger="metis"):
        assert not _replayed(provider, reply, ids, None)
    reasons = [str(getattr(r, "reason", "")) for r in _drops(caplog)]
    assert reasons and all(PROXY in reason for reason in reasons), reasons
    assert all(getattr(r, "message_id", None) == reply.id for r in _drops(caplog))


@pytest.mark.parametrize("provider", CASES)
def test_the_same_endpoint_gets_its_reasoning_back(provider: str) -> None:
    ids = ToolIdMap(SESSION)
    reply = _reply(provider, ids, PROXY)
    assert _replayed(provider, reply, ids, PROXY)
    assert _replayed(provider, reply, ids, PROXY + "/"), "the same endpoint, spelled with a trailing slash"


@pytest.mark.parametrize("provider", CASES)
def test_no_endpoint_recorded_is_the_providers_default_api(provider: str) -> None:
    ids = ToolIdMap(SESSION)
    reply = _reply(provider, ids, None)
    assert reply.metadata.endpoint is None
    assert _replayed(provider, reply, ids, None)
    default = adapters.get(provider).default_base_url
    assert _replayed(provider, reply, ids, default), "the default API named explicitly is the default API"
    scheme, rest = default.split("://")
    host, _, path = rest.partition("/")
    spelled = f"{scheme.upper()}://{host.upper()}{':443' if scheme == 'https' else ''}/{path}/"
    assert _replayed(provider, reply, ids, spelled), (
        "scheme and host are case-blind, the default port implied"
    )
    assert not _replayed(provider, reply, ids, PROXY), "the provider's reasoning is not sent to a proxy"


def test_replays_opaque_is_same_provider_and_same_endpoint() -> None:
    ids = ToolIdMap(SESSION)
    reply = _reply("anthropic", ids, "https://api.anthropic.com")
    options = AdapterOptions(model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ids)
    assert replays_opaque(reply, "anthropic", options), "the default API, recorded explicitly"
    assert not replays_opaque(reply, "openrouter", options), "another provider, whatever the endpoint"
    options.endpoint = "https://api.anthropic.com:443/"
    assert replays_opaque(reply, "anthropic", options)
    options.endpoint = "http://api.anthropic.com"
    assert not replays_opaque(reply, "anthropic", options), "another scheme is another endpoint"


@pytest.mark.parametrize(
    ("url", "normalized"),
    [
        ("https://API.Example.com/", "https://api.example.com"),
        ("https://user:secret@proxy.example.com:443/v1/?key=secret#frag", "https://proxy.example.com/v1"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://localhost:80", "http://localhost"),
        ("http://[::1]:11434", "http://[::1]:11434"),
    ],
)
def test_endpoints_are_normalized_without_query_or_credentials(url: str, normalized: str) -> None:
    assert normalize_endpoint(url) == normalized


@pytest.mark.parametrize("url", ["api.anthropic.com", "http://h:port/", "http://a b/", ""])
def test_a_base_url_that_names_no_server_is_a_typed_error(url: str) -> None:
    with pytest.raises(AdapterError) as caught:
        normalize_endpoint(url)
    assert caught.value.path == "endpoint"


def test_a_context_endpoint_that_is_not_normalized_is_refused_where_it_is_set() -> None:
    with pytest.raises(WireFormatError) as caught:
        RequestContext(
            session_id=SESSION,
            model="anthropic:claude-sonnet-4-6",
            tool_ids=ToolIdMap(SESSION),
            endpoint="x?k=1",
        )
    assert caught.value.path == "endpoint"


def test_the_endpoint_is_provenance_and_part_of_the_hash_like_the_provider() -> None:
    """`provider` is hashed (only provider_raw is not, §6.5), so `endpoint` is too; a message
    without one hashes as it did before the field existed (absent fields are not encoded)."""
    ids = ToolIdMap(SESSION)
    reply = _reply("anthropic", ids, None)
    doc = json.loads(reply.model_dump_json(exclude_none=True))
    assert "endpoint" not in doc["metadata"]
    moved = reply.model_copy(update={"metadata": reply.metadata.model_copy(update={"endpoint": PROXY})})
    assert message_hash(moved) != message_hash(reply)
    provider_changed = reply.model_copy(
        update={"metadata": reply.metadata.model_copy(update={"provider": "openrouter"})}
    )
    assert message_hash(provider_changed) != message_hash(reply)
    assert read_message(moved.model_dump_json()).metadata.endpoint == PROXY


def test_the_client_records_the_endpoint_it_sent_to_and_replays_only_there(tmp_path: Path) -> None:
    from metis.client import Client
    from metis.store import Store

    from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body

    case = PROVIDERS[0]
    assert case.provider == "anthropic"
    custom = "https://user:pw@LLM-proxy.example.com:8443/anthropic/?token=abc"
    fake = FakeTime()
    provider = ScriptedProvider().add(json_reply(ok_body(case))).add(json_reply(ok_body(case)))
    with (
        Store.open(tmp_path / "metis.sqlite3") as store,
        Client(
            store,
            transport=provider.transport(),
            sleep=fake.sleep,
            clock=fake.clock,
            api_keys=KEYS,
            base_urls={"anthropic": custom},
        ) as client,
    ):
        session = client.session(case.model, workspace=tmp_path)
        reply = session.send("hi", max_tokens=512)
        assert reply.metadata.endpoint == PROXY
        stored = store.load_session(session.id)[-1]
        assert stored.metadata.endpoint == PROXY, "the stored row records it too"
    assert str(provider.requests[0].url).startswith("https://user:pw@llm-proxy.example.com:8443/anthropic/")


def test_a_client_at_the_default_api_records_it(tmp_path: Path) -> None:
    from metis.client import Client
    from metis.store import Store

    from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body

    for case in PROVIDERS:
        fake = FakeTime()
        provider = ScriptedProvider().add(json_reply(ok_body(case)))
        with (
            Store.open(tmp_path / f"{case.provider}.sqlite3") as store,
            Client(
                store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
            ) as c,
        ):
            reply = c.session(case.model, workspace=tmp_path).send("hi", max_tokens=512)
        expected = normalize_endpoint(adapters.get(case.provider).default_base_url)
        assert reply.metadata.endpoint == expected, case.provider


def test_a_streamed_reply_and_its_checkpoints_record_the_endpoint(tmp_path: Path) -> None:
    from metis.client import CheckpointPolicy, Client
    from metis.store import Store

    from tests.support.client_support import (
        KEYS,
        PROVIDERS,
        FakeTime,
        ScriptedProvider,
        SpyStore,
        content_type,
        stream_chunks,
        stream_reply,
    )

    case = PROVIDERS[0]
    fake = FakeTime()
    provider = ScriptedProvider().add(stream_reply(stream_chunks(case), content_type=content_type(case)))
    with Store.open(tmp_path / "metis.sqlite3") as store:
        spy = SpyStore(store)
        with Client(
            spy,
            transport=provider.transport(),
            sleep=fake.sleep,
            clock=fake.clock,
            api_keys=KEYS,
            base_urls={case.provider: PROXY},
            checkpoints=CheckpointPolicy(events=1, seconds=60),
        ) as client:
            reply = client.session(case.model, workspace=tmp_path).send("hi", stream=True)
        assert spy.partials and all(p.metadata.endpoint == PROXY for p in spy.partials)
        assert reply.metadata.endpoint == PROXY
        assert store.load_session(reply.session_id)[-1].metadata.endpoint == PROXY
