"""The shared adapter contract: one parametrized suite every provider passes (spec §7, §11).

Each provider's own test module covers its quirks with golden files; this module holds
all five to the same contract, using the per-provider fixtures in tests/support/contracts/:
registry and honest capabilities, a response parses into a complete canonical message,
the equivalent stream assembles into the *same* message however it is chunked, a stream
cut short keeps what arrived, error bodies become typed errors, canonical conversations
drawn from the JSON Schema project to every provider into bodies the official SDK types
accept, foreign thinking is dropped with exactly one WARN, and a session that visits
every provider in turn keeps every tool_result attached to its tool_use.
"""

from __future__ import annotations

import importlib
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import metis.adapters
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from metis.adapters import AdapterOptions
from metis.assembly import RequestContext
from metis.catalog import load_catalog
from metis.errors import MetisError, ProviderError, UnknownAdapterError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, MessageStatus, Role, StopReason, ToolDefinition

from tests.support.messages import build_message
from tests.support.strategies import conversations

PROVIDERS = ["anthropic", "openai", "gemini", "ollama", "openrouter", "responses", "mistral"]
FIXED_TIME = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
_TOOL_ID = re.compile(r"tu_[0-9A-HJKMNP-TV-Z]{26}")


def contract(provider: str) -> ModuleType:
    return importlib.import_module(f"tests.support.contracts.{provider}")


def capable_model(provider: str) -> str:
    """The provider's catalog model with the most capabilities (images, tools, thinking)."""
    entries = load_catalog().for_provider(provider)
    best = max(
        entries,
        key=lambda e: (
            e.capabilities.supports_tools,
            e.capabilities.supports_images,
            e.capabilities.supports_thinking,
        ),
    )
    return best.id


def context(
    provider: str, tool_ids: ToolIdMap | None = None, session: str = "sess_contract"
) -> RequestContext:
    return RequestContext(
        session_id=session,
        model=capable_model(provider),
        tool_ids=ToolIdMap(session) if tool_ids is None else tool_ids,
        message_id="01HZ0000000000000000000777",
        created_at=FIXED_TIME,
        latency_ms=120,
    )


def normalized(message: Message) -> dict[str, Any]:
    """Canonical JSON with minted tool ids replaced by their order of appearance."""
    text = message.model_dump_json(exclude_none=True)
    seen: dict[str, str] = {}
    text = _TOOL_ID.sub(lambda m: seen.setdefault(m.group(0), f"tu_#{len(seen)}"), text)
    result: dict[str, Any] = orjson.loads(text)
    return result


# --- tool-link checks per wire format --------------------------------------------------


def link_problems(provider: str, body: dict[str, Any]) -> list[str]:
    """Every tool result in a built body must answer a tool call of the turn before it."""
    problems: list[str] = []
    if provider == "anthropic":
        previous: set[str] = set()
        for i, msg in enumerate(body["messages"]):
            blocks = msg["content"] if isinstance(msg["content"], list) else []
            for block in blocks:
                if block.get("type") == "tool_result" and block["tool_use_id"] not in previous:
                    problems.append(
                        f"messages[{i}] tool_result {block['tool_use_id']} has no tool_use before it"
                    )
            previous = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    elif provider in ("openai", "openrouter"):
        open_calls: set[str] = set()
        for i, msg in enumerate(body["messages"]):
            if msg["role"] == "assistant":
                open_calls = {c["id"] for c in msg.get("tool_calls") or []}
            elif msg["role"] == "tool" and msg["tool_call_id"] not in open_calls:
                problems.append(f"messages[{i}] tool_call_id {msg['tool_call_id']} answers no call")
            if any(len(c["id"]) > 40 for c in msg.get("tool_calls") or []) and provider == "openai":
                problems.append(f"messages[{i}] has a tool call id longer than 40 characters")
    elif provider == "gemini":
        contents = body["contents"]
        for i, content in enumerate(contents):
            calls = [p["functionCall"]["name"] for p in content.get("parts", []) if "functionCall" in p]
            if not calls:
                continue
            after = contents[i + 1] if i + 1 < len(contents) else None
            if after is None:
                continue
            answers = [
                p["functionResponse"]["name"] for p in after.get("parts", []) if "functionResponse" in p
            ]
            if answers != calls:
                problems.append(f"contents[{i + 1}] answers {answers}, calls were {calls}")
    elif provider == "ollama":
        names: list[str] = []
        for i, msg in enumerate(body["messages"]):
            if msg["role"] == "assistant":
                names = [c["function"]["name"] for c in msg.get("tool_calls") or []]
            elif msg["role"] == "tool" and msg.get("tool_name") not in names:
                problems.append(f"messages[{i}] tool_name {msg.get('tool_name')} answers no call")
    return problems


# --- the suite ----------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_registry_and_capabilities(provider: str) -> None:
    adapter = metis.adapters.get(provider)
    assert adapter.name == provider
    assert metis.adapters.get(provider) is adapter
    for entry in load_catalog().for_provider(provider):
        assert adapter.capabilities(entry.id) == entry.capabilities
        assert adapter.wire_model(entry.id) == entry.wire_model


def test_unknown_adapter_is_a_typed_error() -> None:
    with pytest.raises(UnknownAdapterError, match="no adapter named 'mistralai'"):
        metis.adapters.get("mistralai")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_response_parses_into_a_complete_message(provider: str) -> None:
    message = metis.adapters.get(provider).from_wire_response(
        contract(provider).response_fixture(), context(provider)
    )
    assert message.role == Role.assistant
    assert message.metadata.status == MessageStatus.complete
    meta = message.metadata
    assert meta.provider == provider and meta.model == capable_model(provider)
    assert meta.routing is not None and meta.usage is not None
    assert meta.usage.latency_ms == 120
    assert meta.stop_reason == StopReason.tool_use
    tool_uses = [b for b in message.content if b.type == "tool_use"]
    assert len(tool_uses) == 2 and all(_TOOL_ID.fullmatch(b.id) for b in tool_uses)
    from metis.invariants import check_message

    assert check_message(message) == []


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("chunking", ["as-recorded", "one-byte", "one-piece"])
def test_stream_assembles_to_the_non_streamed_message(provider: str, chunking: str) -> None:
    adapter = metis.adapters.get(provider)
    chunks: list[bytes] = contract(provider).stream_fixture()
    whole = b"".join(chunks)
    pieces = {
        "as-recorded": chunks,
        "one-byte": [whole[i : i + 1] for i in range(len(whole))],
        "one-piece": [whole],
    }
    streamed = adapter.assemble_stream(pieces[chunking], context(provider))
    direct = adapter.from_wire_response(contract(provider).response_fixture(), context(provider))
    assert normalized(streamed) == normalized(direct)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stream_cut_short_keeps_what_arrived(provider: str) -> None:
    adapter = metis.adapters.get(provider)
    chunks: list[bytes] = contract(provider).stream_fixture()
    cut = chunks[: max(2, len(chunks) // 2)]
    message = adapter.assemble_stream(cut, context(provider))
    assert message.metadata.status in (MessageStatus.cancelled, MessageStatus.error)
    full = adapter.assemble_stream(chunks, context(provider))
    assert len(message.content) <= len(full.content)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_error_body_becomes_a_typed_error(provider: str) -> None:
    status, body = contract(provider).error_fixture()
    error = metis.adapters.get(provider).parse_error(body, status)
    assert isinstance(error, ProviderError)
    assert error.provider == provider and error.status_code == status
    assert error.message and error.error_type


@pytest.mark.parametrize("provider", PROVIDERS)
def test_stored_response_replays_to_its_own_provider(provider: str) -> None:
    adapter = metis.adapters.get(provider)
    ids = ToolIdMap("sess_contract")
    message = adapter.from_wire_response(contract(provider).response_fixture(), context(provider, ids))
    stored = Message.model_validate_json(message.model_dump_json(exclude_none=True))
    user = build_message(
        Role.user, [{"type": "text", "text": "hi"}], session_id="sess_contract", created_at=FIXED_TIME
    )
    body = adapter.to_wire(
        [user, stored],
        [],
        AdapterOptions(model=capable_model(provider), session_id="sess_contract", tool_ids=ids),
    )
    contract(provider).check_request(body)


@pytest.mark.parametrize("provider", PROVIDERS)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=conversations())
def test_any_valid_conversation_projects_to_a_valid_body(
    provider: str, case: tuple[list[Message], list[ToolDefinition]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    import base64

    from tests.support.strategies import PNG_1PX

    workspace = tmp_path_factory.mktemp("ws")
    (workspace / "img.png").write_bytes(base64.b64decode(PNG_1PX))
    messages, tools = case
    options = AdapterOptions(
        model=capable_model(provider),
        session_id=messages[0].session_id,
        tool_ids=ToolIdMap(messages[0].session_id),
        workspace=workspace,
    )
    try:
        body = metis.adapters.get(provider).to_wire(messages, tools, options)
    except MetisError:
        return  # a typed refusal is allowed; an untyped exception fails the test
    contract(provider).check_request(body)
    assert link_problems(provider, body) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_foreign_thinking_is_dropped_with_one_warn(provider: str, caplog: pytest.LogCaptureFixture) -> None:
    foreign = "gemini" if provider == "anthropic" else "anthropic"
    thinking = build_message(
        "assistant",
        [
            {"type": "thinking", "text": "hmm", "signature": "c2lnbmF0dXJl"},
            {"type": "text", "text": "ok"},
        ],
        session_id="sess_lossy",
        created_at="2026-05-08T12:00:00Z",
        model=capable_model(foreign),
        provider=foreign,
        usage={
            "input_tokens": 1,
            "output_tokens": 1,
            "cost_usd": "0",
            "pricing_version": "2026-05-08",
            "latency_ms": 1,
        },
        routing={"mode": "default", "chosen_model": capable_model(foreign), "reason": "test"},
    )
    user = build_message(
        Role.user, [{"type": "text", "text": "hi"}], session_id="sess_lossy", created_at=FIXED_TIME
    )
    options = AdapterOptions(
        model=capable_model(provider), session_id="sess_lossy", tool_ids=ToolIdMap("sess_lossy")
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = metis.adapters.get(provider).to_wire([user, thinking], [], options)
    drops = [r for r in caplog.records if getattr(r, "block_type", None) == "thinking"]
    assert len(drops) == 1, [r.getMessage() for r in caplog.records]
    record = drops[0]
    assert record.levelno == logging.WARNING
    assert (record.session_id, record.message_id, record.adapter) == ("sess_lossy", thinking.id, provider)  # type: ignore[attr-defined]
    assert record.reason  # type: ignore[attr-defined]
    assert "hmm" not in orjson.dumps(body).decode()  # never rendered as text
    contract(provider).check_request(body)


def test_a_session_visiting_every_provider_keeps_tool_ids_resolving() -> None:
    session = "sess_tour"
    ids = ToolIdMap(session)
    history: list[Message] = []

    def add(role: str, content: list[dict[str, Any]], metadata: dict[str, Any] | None = None) -> None:
        history.append(
            build_message(role, content, session_id=session, created_at=FIXED_TIME, metadata=metadata or {})
        )

    tools = [
        ToolDefinition(
            name="lookup",
            description="look something up",
            side_effects="read",
            input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
        )
    ]
    add("user", [{"type": "text", "text": "start the tour"}])
    for provider in PROVIDERS * 2:
        adapter = metis.adapters.get(provider)
        options = AdapterOptions(model=capable_model(provider), session_id=session, tool_ids=ids)
        body = adapter.to_wire(history, tools, options)
        contract(provider).check_request(body)
        assert link_problems(provider, body) == [], provider
        reply = adapter.from_wire_response(
            contract(provider).response_fixture(),
            RequestContext(session_id=session, model=options.model, tool_ids=ids),
        )
        history.append(reply)
        for block in reply.content:
            if block.type == "tool_use":
                add(
                    "tool",
                    [
                        {
                            "type": "tool_result",
                            "tool_use_id": block.id,
                            "content": [{"type": "text", "text": f"result for {block.name}"}],
                        }
                    ],
                    {"parent_tool_use_id": block.id},
                )
        add("user", [{"type": "text", "text": f"now after {provider}"}])
    from metis.invariants import check_conversation

    assert check_conversation(history) == []
    for provider in PROVIDERS:
        options = AdapterOptions(model=capable_model(provider), session_id=session, tool_ids=ids)
        body = metis.adapters.get(provider).to_wire(history, tools, options)
        contract(provider).check_request(body)
        assert link_problems(provider, body) == [], provider


def test_workspace_fixture_is_real(workspace: Path) -> None:
    assert (workspace / "img.png").stat().st_size > 0
