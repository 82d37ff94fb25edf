"""Anthropic adapter: golden files, round trips, streaming, malformed input, lossy drops.

Golden files live in tests/golden/anthropic/. Wire inputs there (`response_*.json`,
`stream_*.sse`, `request_recorded.json`) are hand-written in the shapes recorded traffic
has (sources: spec/provider-wire-formats.md §1 and the anthropic 2.12 SDK types), named
and compared by the one harness, tests/support/golden.py; the `*.golden.json` outputs are
regenerated with METIS_UPDATE_GOLDEN=1 and reviewed.
"""

from __future__ import annotations

import base64
import copy
import logging
import re
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import metis.adapters
import orjson
import pytest
from metis.adapters import AdapterOptions
from metis.adapters.anthropic import STOP_REASONS
from metis.assembly import RequestContext
from metis.errors import AdapterError, CriticalBlockError, ProviderError, WireFormatError, WorkspaceError
from metis.events import RecordingSink
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, MessageStatus, Role, StopReason, ToolDefinition

from tests.support import golden
from tests.support.contracts.anthropic import (
    check_request,
    check_response,
    check_stream_event,
    response_fixture,
)
from tests.support.messages import build_message
from tests.support.strategies import PNG_1PX

PROVIDER = "anthropic"
FIXED_TIME = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
MODEL = "anthropic:claude-sonnet-4-6"
SESSION = "sess_anthropic"
_TOOL_ID = re.compile(r"tu_[0-9A-HJKMNP-TV-Z]{26}")
ADAPTER = metis.adapters.get("anthropic")
PNG_BYTES = base64.b64decode(PNG_1PX)


# --- helpers -------------------------------------------------------------------------------


def wire(name: str) -> Any:
    return orjson.loads(golden.read_input(PROVIDER, name))


def sse(name: str) -> bytes:
    return golden.read_input(PROVIDER, name)


def normalized(value: Any) -> Any:
    """Canonical JSON with minted tool ids replaced by their order of appearance."""
    text = (
        value.model_dump_json(exclude_none=True)
        if isinstance(value, Message)
        else orjson.dumps(value).decode()
    )
    seen: dict[str, str] = {}
    text = _TOOL_ID.sub(lambda m: seen.setdefault(m.group(0), f"tu_#{len(seen)}"), text)
    return orjson.loads(text)


def context(ids: ToolIdMap | None = None, model: str = MODEL, **kw: Any) -> RequestContext:
    return RequestContext(
        session_id=SESSION,
        model=model,
        tool_ids=ToolIdMap(SESSION) if ids is None else ids,  # an empty map is falsy
        message_id="01HZ0000000000000000000777",
        created_at=FIXED_TIME,
        latency_ms=321,
        **kw,
    )


def options(ids: ToolIdMap | None = None, **kw: Any) -> AdapterOptions:
    kw.setdefault("model", MODEL)
    return AdapterOptions(session_id=SESSION, tool_ids=ToolIdMap(SESSION) if ids is None else ids, **kw)


def msg(role: str, content: list[dict[str, Any]], n: int, **metadata: Any) -> Message:
    return build_message(
        role,
        content,
        session_id=SESSION,
        id=f"01HZ00000000000000000000{n:02d}",
        created_at=FIXED_TIME,
        **metadata,
    )


def assistant(content: list[dict[str, Any]], n: int, provider: str = "anthropic", **metadata: Any) -> Message:
    model = {"anthropic": MODEL, "openai": "openai:gpt-5", "gemini": "gemini:gemini-2.5-pro"}[provider]
    usage = {
        "input_tokens": 1,
        "output_tokens": 1,
        "cost_usd": "0",
        "pricing_version": "2026-05-08",
        "latency_ms": 1,
    }
    routing = {"mode": "default", "chosen_model": model, "reason": "test"}
    return msg(
        "assistant", content, n, model=model, provider=provider, usage=usage, routing=routing, **metadata
    )


def link_problems(body: dict[str, Any]) -> list[str]:
    """Every tool_result answers a tool_use of the turn right before it; ids match the API rule."""
    problems: list[str] = []
    previous: set[str] = set()
    for i, turn in enumerate(body["messages"]):
        blocks = turn["content"] if isinstance(turn["content"], list) else []
        for block in blocks:
            if block.get("type") == "tool_result" and block["tool_use_id"] not in previous:
                problems.append(f"messages[{i}]: {block['tool_use_id']} answers no tool_use")
            ident = block.get("id") if block.get("type") == "tool_use" else block.get("tool_use_id")
            if ident is not None and not re.fullmatch(r"[a-zA-Z0-9_-]+", ident):
                problems.append(f"messages[{i}]: id {ident!r} breaks ^[a-zA-Z0-9_-]+$")
        previous = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    return problems


TU = [f"tu_01HZ00000000000000000000T{i}" for i in range(1, 6)]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    side_effects="network",
)
LOOKUP = ToolDefinition(
    name="lookup_city", description="", input_schema={"type": "object", "properties": {}}, side_effects="read"
)
SIGNATURE = "EqQBCkgIARABGAIiQL1dJ5mVYMkyWhu7Qc4tE0RjPDyFp3UXA5hh6YCkx+eIvNu2kcDKDn2QpRxKiJ0sbyBqC7XKKO1f"


def conversation() -> tuple[list[Message], ToolIdMap]:
    """Every canonical shape the adapter must place: hoisted systems, all image sources, own
    thinking (signed, redacted, unsigned), foreign thinking, parallel tool calls with their
    results merged into one user turn, a tool error, consecutive assistant turns, and tool
    ids the map knows from Anthropic, from OpenAI, and one Anthropic would reject."""
    ids = ToolIdMap(SESSION)
    ids.bind(TU[0], "anthropic", "toolu_01Paris00000000000000000")
    ids.bind(TU[1], "anthropic", "toolu_01Rome000000000000000000")
    ids.bind(TU[2], "openai", "call_Xn5Lg0Jq1pQ8wXyZaBcDeFgH")
    ids.bind(TU[3], "anthropic", "functions.lookup_city:0")  # breaks the rule: replaced
    text = lambda t: {"type": "text", "text": t}  # noqa: E731
    png = {"type": "image", "source": {"kind": "base64", "data": PNG_1PX}, "media_type": "image/png"}
    messages = [
        msg("system", [text("You are a weather assistant.")], 1),
        msg("system", [text("Use Celsius."), text("Be brief.")], 2),
        msg(
            "user",
            [
                text("Weather in Paris and Rome? Photos attached."),
                png,
                {
                    "type": "image",
                    "source": {"kind": "url", "data": "https://example.test/rome.jpg"},
                    "media_type": "image/jpeg",
                },
                {
                    "type": "image",
                    "source": {"kind": "file_ref", "data": "img.png"},
                    "media_type": "image/png",
                },
                {"type": "image", "source": {"kind": "base64", "data": PNG_1PX}, "media_type": "image/bmp"},
            ],
            3,
        ),
        assistant(
            [
                {"type": "thinking", "text": "Two cities, two calls.", "signature": SIGNATURE},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
                text("Checking both."),
                {"type": "tool_use", "id": TU[0], "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": TU[1], "name": "get_weather", "input": {"city": "Rome"}},
            ],
            4,
            provider_raw={"adapter": "anthropic", "id": "msg_01A", "stop_reason": "tool_use"},
        ),
        msg(
            "tool",
            [{"type": "tool_result", "tool_use_id": TU[0], "content": [text("18°C, sunny"), png]}],
            5,
            parent_tool_use_id=TU[0],
        ),
        msg(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": TU[1],
                    "content": [text("upstream timeout")],
                    "is_error": True,
                }
            ],
            6,
            parent_tool_use_id=TU[1],
        ),
        msg("user", [text("Rome failed; try again?")], 7),
        assistant(
            [
                {"type": "thinking", "text": "private openai reasoning", "signature": "b3BlbmFp"},
                text("Retrying Rome."),
                {"type": "tool_use", "id": TU[2], "name": "get_weather", "input": {"city": "Rome"}},
            ],
            8,
            provider="openai",
        ),
        msg(
            "tool",
            [{"type": "tool_result", "tool_use_id": TU[2], "content": [text("21°C")]}],
            9,
            parent_tool_use_id=TU[2],
        ),
        assistant([text("Rome is 21°C.")], 10),
        assistant(
            [
                {"type": "thinking", "text": "unsigned, e.g. from a cut stream"},
                {"type": "tool_use", "id": TU[3], "name": "lookup_city", "input": {}},
            ],
            11,
        ),
        msg(
            "tool",
            [{"type": "tool_result", "tool_use_id": TU[3], "content": []}],
            12,
            parent_tool_use_id=TU[3],
        ),
        msg("user", [text("Thanks!")], 13),
    ]
    return messages, ids


# --- canonical -> wire -------------------------------------------------------------------------


def test_conversation_to_wire_matches_golden(workspace: Path, caplog: pytest.LogCaptureFixture) -> None:
    messages, ids = conversation()
    opts = options(
        ids,
        workspace=workspace,
        thinking_budget=2048,
        temperature=1.0,
        stop=["END"],
        tool_choice="auto",
        extra={"metadata": {"user_id": "u-42"}},
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(messages, [WEATHER, LOOKUP], opts)
    golden.check(PROVIDER, "conversation.request.golden.json", body)
    check_request(body)
    assert link_problems(body) == []
    drops = sorted((r.message_id, r.block_type) for r in caplog.records)  # type: ignore[attr-defined]
    assert drops == [
        (messages[2].id, "image"),  # image/bmp
        (messages[7].id, "thinking"),  # from openai
        (messages[10].id, "thinking"),  # unsigned
        (messages[10].id, "thinking"),  # so thinking is left off: the open tool turn lost its thinking
    ]
    assert "thinking" not in body, "Anthropic rejects thinking on when the open tool turn has none"
    roles = [turn["role"] for turn in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "assistant", "user"]
    # parallel results then the user's text: one user turn, results first
    assert [b["type"] for b in body["messages"][2]["content"]] == ["tool_result", "tool_result", "text"]
    # own thinking replays first and byte-exact; the replaced id is compliant and consistent
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Two cities, two calls.",
        "signature": SIGNATURE,
    }
    replaced = body["messages"][6]["content"][0]["id"]  # "functions.lookup_city:0" broke the rule
    assert replaced == TU[3] and body["messages"][7]["content"][0]["tool_use_id"] == replaced
    assert (
        body["messages"][3]["content"][1]["id"] == TU[2]
    )  # an OpenAI-only id: the canonical id fits the rule


def test_system_is_a_string_when_one_plain_text() -> None:
    body = ADAPTER.to_wire(
        [
            msg("system", [{"type": "text", "text": "Be kind."}], 1),
            msg("user", [{"type": "text", "text": "hi"}], 2),
        ],
        [],
        options(),
    )
    assert body["system"] == "Be kind."
    empty = ADAPTER.to_wire(
        [msg("system", [], 1), msg("user", [{"type": "text", "text": "hi"}], 2)], [], options()
    )
    assert "system" not in empty


@pytest.mark.parametrize(
    ("choice", "wire_choice"),
    [
        ("auto", {"type": "auto"}),
        ("any", {"type": "any"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice(choice: str, wire_choice: dict[str, Any]) -> None:
    body = ADAPTER.to_wire(
        [msg("user", [{"type": "text", "text": "hi"}], 1)], [WEATHER], options(tool_choice=choice)
    )
    assert body["tool_choice"] == wire_choice
    check_request(body)


def test_max_tokens_and_thinking_budget() -> None:
    user = [msg("user", [{"type": "text", "text": "hi"}], 1)]
    assert ADAPTER.to_wire(user, [], options())["max_tokens"] == 8192  # min(64000, 8192)
    assert ADAPTER.to_wire(user, [], options(max_tokens=100))["max_tokens"] == 100
    big = ADAPTER.to_wire(user, [], options(thinking_budget=16000))
    assert big["max_tokens"] == 16000 + 8192 and big["thinking"] == {
        "type": "enabled",
        "budget_tokens": 16000,
    }
    with pytest.raises(AdapterError, match="must exceed thinking_budget") as err:
        ADAPTER.to_wire(user, [], options(max_tokens=2000, thinking_budget=2000))
    assert err.value.path == "options.max_tokens"
    with pytest.raises(AdapterError, match="below Anthropic's minimum"):
        ADAPTER.to_wire(user, [], options(thinking_budget=512))


def test_extra_is_merged_last() -> None:
    body = ADAPTER.to_wire(
        [msg("user", [{"type": "text", "text": "hi"}], 1)],
        [],
        options(temperature=0.2, extra={"temperature": 0.9, "top_k": 3}),
    )
    assert body["temperature"] == 0.9 and body["top_k"] == 3


def test_file_ref_outside_the_workspace_is_refused(workspace: Path) -> None:
    (workspace.parent / "secret.png").write_bytes(PNG_BYTES)
    image = {
        "type": "image",
        "source": {"kind": "file_ref", "data": "../secret.png"},
        "media_type": "image/png",
    }
    with pytest.raises(WorkspaceError, match="escapes the workspace"):
        ADAPTER.to_wire([msg("user", [image], 1)], [], options(workspace=workspace))


def test_images_dropped_for_a_model_without_images(caplog: pytest.LogCaptureFixture) -> None:
    image = {
        "type": "image",
        "source": {"kind": "url", "data": "https://example.test/a.png"},
        "media_type": "image/png",
    }
    user = msg("user", [{"type": "text", "text": "look"}, image], 1)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire([user], [], options(model="anthropic:text-only-model"))
    assert body["messages"][0]["content"] == [{"type": "text", "text": "look"}]
    assert [r.reason for r in caplog.records if r.name == "metis.adapters"] == [  # type: ignore[attr-defined]
        "anthropic:text-only-model does not accept images"
    ]


def test_foreign_thinking_warns_once_with_all_fields(caplog: pytest.LogCaptureFixture) -> None:
    sink = RecordingSink()
    thinking = assistant(
        [
            {"type": "thinking", "text": "secret plan", "signature": "Z2VtaW5p"},
            {"type": "text", "text": "ok"},
        ],
        2,
        provider="gemini",
    )
    with caplog.at_level(logging.DEBUG, logger="metis"):
        body = ADAPTER.to_wire([msg("user", [{"type": "text", "text": "hi"}], 1), thinking], [], options())
    warns = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warns) == 1
    record = warns[0]
    fields = ("session_id", "message_id", "block_type", "adapter", "reason")
    assert {f: getattr(record, f) for f in fields[:4]} == {
        "session_id": SESSION,
        "message_id": thinking.id,
        "block_type": "thinking",
        "adapter": "anthropic",
    }
    assert "gemini" in record.reason  # type: ignore[attr-defined]
    assert "secret plan" not in orjson.dumps(body).decode()
    assert sink.events == []


def test_critical_thinking_fails_instead_of_dropping() -> None:
    thinking = assistant(
        [{"type": "thinking", "text": "must keep"}, {"type": "text", "text": "ok"}], 2, critical_blocks=[0]
    )
    with pytest.raises(CriticalBlockError) as err:
        ADAPTER.to_wire([msg("user", [{"type": "text", "text": "hi"}], 1), thinking], [], options())
    assert err.value.path == "content[0]" and err.value.message_id == thinking.id


def test_mid_session_swap_from_openai_resolves_every_tool_id() -> None:
    """History made on OpenAI (ids up to 50 characters with dots) continues on Anthropic."""
    ids = ToolIdMap(SESSION)
    long_ids = ["call_" + "x" * 45, "fc.weather|0:call"]
    history = [msg("user", [{"type": "text", "text": "weather?"}], 1)]
    calls = []
    for k, provider_id in enumerate(long_ids):
        canonical = ids.register_incoming("openai", provider_id)
        calls.append({"type": "tool_use", "id": canonical, "name": "get_weather", "input": {"city": f"c{k}"}})
    history.append(assistant(calls, 2, provider="openai"))
    for k, call in enumerate(calls):
        history.append(
            msg(
                "tool",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": [{"type": "text", "text": "ok"}],
                    }
                ],
                3 + k,
                parent_tool_use_id=call["id"],
            )
        )
    body = ADAPTER.to_wire(history, [WEATHER], options(ids))
    check_request(body)
    assert link_problems(body) == []
    sent = [b["id"] for b in body["messages"][1]["content"]]
    assert sent == [c["id"] for c in calls]  # canonical tu_ ids already satisfy Anthropic's rule
    assert [b["tool_use_id"] for b in body["messages"][2]["content"]] == sent


# --- responses -----------------------------------------------------------------------------


RESPONSES = golden.inputs(PROVIDER, "response")
STREAMS = golden.inputs(PROVIDER, "stream")


@pytest.mark.parametrize("name", RESPONSES)
def test_response_matches_golden(name: str, caplog: pytest.LogCaptureFixture) -> None:
    body = wire(name)
    check_response(body)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        message = ADAPTER.from_wire_response(body, context())
    golden.check(PROVIDER, golden.expected_name(name), normalized(message))
    # server tool blocks and citations are canonical (v2): nothing is dropped from any golden reply
    assert not [r for r in caplog.records if hasattr(r, "block_type")]


@pytest.mark.parametrize("name", RESPONSES)
def test_response_replays_to_anthropic_exactly(name: str) -> None:
    """§2.1.1: response -> canonical -> stored JSON -> back to Anthropic gives the same content."""
    body = wire(name)
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(body, context(ids))
    stored = Message.model_validate_json(message.model_dump_json(exclude_none=True))
    request = ADAPTER.to_wire(
        [msg("user", [{"type": "text", "text": "hi"}], 1), stored], [WEATHER], options(ids)
    )
    check_request(request)
    expected = [{k: v for k, v in b.items() if k != "caller"} for b in body["content"]]  # `caller` is ignored
    assert request["messages"][1]["content"] == expected


def test_response_fixture_parses() -> None:
    message = ADAPTER.from_wire_response(response_fixture(), context())
    assert message.metadata.stop_reason == StopReason.tool_use
    assert message.metadata.usage is not None and message.metadata.usage.cached_input_tokens == 1024
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]


@pytest.mark.parametrize(
    ("wire_reason", "canonical"),
    [*STOP_REASONS.items(), ("brand_new_reason", StopReason.other), (None, StopReason.other)],
)
def test_every_stop_reason(wire_reason: str | None, canonical: StopReason) -> None:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "x"}],
        "stop_reason": wire_reason,
        "stop_sequence": "END" if wire_reason == "stop_sequence" else None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    message = ADAPTER.from_wire_response(body, context())
    assert message.metadata.stop_reason == canonical
    assert message.metadata.provider_raw is not None
    assert message.metadata.provider_raw["stop_reason"] == wire_reason
    assert message.metadata.provider_raw["stop_sequence"] == body["stop_sequence"]
    assert set(STOP_REASONS) == {
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
        "compaction",  # beta `pause_after_compaction`: read as a paused turn
    }


def test_usage_is_normalized_and_priced_locally() -> None:
    message = ADAPTER.from_wire_response(wire("response_thinking.json"), context())
    usage = message.metadata.usage
    assert usage is not None
    assert (
        usage.input_tokens,
        usage.cached_input_tokens,
        usage.cache_creation_input_tokens,
        usage.output_tokens,
    ) == (4, 8845, 6, 143)
    assert usage.pricing_version == f"genai-prices@{version('genai-prices')}" and usage.latency_ms == 321


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"content": "nope"}, "content"),
        ({"content": [{"type": "text"}]}, "content[0].text"),
        (
            {"content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": '{"a": 1}'}]},
            "content[0].input",
        ),
        ({"content": [{"type": "tool_use", "name": "f", "input": {}}]}, "content[0].id"),
        ({"content": ["text"]}, "content[0]"),
        ({"content": [{"type": "thinking", "thinking": "x", "signature": 5}]}, "content[0].signature"),
        ({"content": [{"type": "thinking", "signature": "s"}]}, "content[0].thinking"),
        ({"content": [{"type": "redacted_thinking", "data": ""}]}, "content[0].data"),
        ({"content": [{"type": "tool_use", "id": "toolu_1", "name": 5, "input": {}}]}, "content[0].name"),
        ({"content": [{"type": "tool_use", "id": "toolu_1", "name": "", "input": {}}]}, "content[0].name"),
        ({"content": [{"type": "text", "text": "x"}, {"type": "text", "text": None}]}, "content[1].text"),
        (
            {"content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": "many"}},
            "usage.input_tokens",
        ),
        ({"content": [{"type": "text", "text": "x"}], "usage": [1]}, "usage"),
        (
            {"content": [{"type": "text", "text": "x"}], "usage": {"output_tokens": True}},
            "usage.output_tokens",
        ),
        ({"content": [{"type": "text", "text": "x"}], "stop_reason": 3}, "stop_reason"),
        (
            {"content": [{"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}]},
            "content",
        ),
    ],
)
def test_malformed_response_is_a_typed_error(body: dict[str, Any], path: str) -> None:
    with pytest.raises(WireFormatError) as err:
        ADAPTER.from_wire_response(
            {"id": "msg_1", "model": "claude-sonnet-4-6", "stop_reason": "end_turn", **body}, context()
        )
    assert err.value.path == path and err.value.provider == "anthropic"


def test_error_envelope_in_place_of_a_response_raises_provider_error() -> None:
    with pytest.raises(ProviderError, match="overloaded_error"):
        ADAPTER.from_wire_response(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, context()
        )


ERRORS = golden.inputs(PROVIDER, "error")
"""Error bodies named `error_<HTTP status>[_<case>].json`, in the API's envelope."""


@pytest.mark.parametrize("name", ERRORS)
def test_error_golden(name: str) -> None:
    error = golden.check_error(PROVIDER, name)
    body = orjson.loads(golden.read_input(PROVIDER, name))
    assert error.provider == "anthropic" and error.error_type == body["error"]["type"]
    assert body["error"]["message"] in error.message
    assert body.get("request_id", "") in error.message
    assert (
        ADAPTER.parse_error(body, golden.error_status(name)).message == error.message
    )  # parsed or bytes alike


@pytest.mark.parametrize(
    ("body", "status", "error_type", "retryable"),
    [
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            400,
            "overloaded_error",
            True,
        ),
        (
            {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}},
            503,
            "invalid_request_error",
            True,
        ),
        ("<html>Bad gateway</html>", 502, "http_502", True),
        (b"upstream connect error", 400, "http_400", False),
        (None, None, "unknown_error", False),
    ],
)
def test_parse_error(body: Any, status: int | None, error_type: str, retryable: bool) -> None:
    """Retryable by error type whatever the status (the facts row's types), else by status."""
    error = ADAPTER.parse_error(body, status)
    assert isinstance(error, ProviderError)
    assert (error.provider, error.error_type, error.status_code, error.retryable) == (
        "anthropic",
        error_type,
        status,
        retryable,
    )


def test_endpoint_and_headers() -> None:
    assert (
        ADAPTER.endpoint("https://api.anthropic.com", "claude-sonnet-4-6", stream=True)
        == "https://api.anthropic.com/v1/messages"
    )
    assert (
        ADAPTER.endpoint("http://127.0.0.1:8080/v1/", "m", stream=False)
        == "http://127.0.0.1:8080/v1/messages"
    )
    assert ADAPTER.auth_headers("sk-ant-x") == {"x-api-key": "sk-ant-x", "anthropic-version": "2023-06-01"}
    assert ADAPTER.auth_headers(None) == {"anthropic-version": "2023-06-01"}
    assert (ADAPTER.name, ADAPTER.default_base_url, ADAPTER.api_key_env) == (
        "anthropic",
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
    )


# --- recorded requests --------------------------------------------------------------------------


def _equivalent(body: dict[str, Any]) -> dict[str, Any]:
    """A request body in one spelling: string content as a text block list, role:system
    messages hoisted into the top-level system list, `is_error: false` omitted."""
    body = copy.deepcopy(body)
    system = body.pop("system", [])
    system = [{"type": "text", "text": system}] if isinstance(system, str) else system
    turns = []
    for turn in body.pop("messages"):
        content = turn["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if turn["role"] == "system":
            system.extend(content)
            continue
        for block in content:
            if block.get("type") == "tool_result":
                if isinstance(block.get("content"), str):
                    block["content"] = [{"type": "text", "text": block["content"]}]
                if block.get("is_error") is False:
                    del block["is_error"]
        turns.append({"role": turn["role"], "content": content})
    return {**body, "system": system, "messages": turns}


def by_index(view: dict[str, Any], imported: Any) -> Any:
    """`view` with each imported message's id (fresh each import) written `#i` everywhere (the
    `spelled` directive names messages by id)."""
    text = orjson.dumps(view).decode()
    for i, message in enumerate(imported.messages):
        text = text.replace(message.id, f"#{i}")
    return orjson.loads(text)


def test_recorded_request_imports_to_golden(caplog: pytest.LogCaptureFixture) -> None:
    ids = ToolIdMap(SESSION)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        imported = ADAPTER.from_wire_request(wire("request_recorded.json"), session_id=SESSION, tool_ids=ids)
    view = {
        "messages": [
            {**m.model_dump(mode="json", exclude_none=True), "id": f"#{i}", "created_at": "<import time>"}
            for i, m in enumerate(imported.messages)
        ],
        "tools": [t.model_dump(mode="json") for t in imported.tools],
        "options": {
            k: getattr(imported.options, k)
            for k in (
                "model",
                "max_tokens",
                "temperature",
                "top_p",
                "stop",
                "stream",
                "tool_choice",
                "thinking_budget",
                "reasoning_effort",
            )
        },
        "provider_options": imported.options.provider_options,
        "dropped": imported.dropped,
    }
    golden.check(
        PROVIDER, golden.expected_name("request_recorded.json"), normalized(by_index(view, imported))
    )
    assert [m.role for m in imported.messages] == [
        Role.system,
        Role.user,
        Role.user,
        Role.assistant,
        Role.tool,
        Role.tool,
        Role.user,
        Role.system,
        Role.assistant,
        Role.assistant,
        Role.tool,
        Role.user,  # the document after the last tool_result: a USER message, rejoined on export
    ]
    # documents and search results are canonical (v2): no block is kept aside with a WARN
    assert (
        not [  # (import_drop's WARNs carry a `path`, and are listed in `dropped`)
            r
            for r in caplog.records
            if r.levelno == logging.WARNING and hasattr(r, "block_type") and not hasattr(r, "path")
        ]
    )


def test_recorded_request_round_trips() -> None:
    """Import, then export to Anthropic: the same turns and blocks, the provider's own
    tool ids and signatures, foreign blocks and cache_control back in place."""
    original = wire("request_recorded.json")
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(original, session_id=SESSION, tool_ids=ids)
    own = imported.options.provider_options["anthropic"]
    assert not imported.dropped and "tools" not in own  # the server tool is a canonical tool
    body = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    assert body["tools"] == original["tools"]
    check_request(body)
    assert _equivalent(body) == _equivalent(original)


def test_import_then_export_with_other_tool_ids_reuses_provider_ids() -> None:
    original = wire("request_recorded.json")
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(original, session_id=SESSION, tool_ids=ids)
    provider_ids = {e.provider_id for e in ids}
    assert provider_ids == {
        "toolu_01A09q90qw90lq917835lq9",
        "toolu_01B7c2Yd3XnHdJkLmN0pQrSt",
        "toolu_01C4nVYx8bJqzTkY5d6Wm2Hs",
    }
    for message in imported.messages:
        for block in message.content:
            if block.type == "tool_use":
                assert _TOOL_ID.fullmatch(block.id)


@pytest.mark.parametrize(
    ("wire_choice", "canonical"),
    [
        ({"type": "auto"}, "auto"),
        ({"type": "any"}, "any"),
        ({"type": "none"}, "none"),
        ({"type": "tool", "name": "get_weather"}, "get_weather"),
    ],
)
def test_tool_choice_imports_by_meaning_and_round_trips(wire_choice: dict[str, Any], canonical: str) -> None:
    """{"type": "any"} means "call some tool" (OpenAI's "required"), never a tool named "any"."""
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],  # no spelling kept
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        "tool_choice": wire_choice,
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.tool_choice == canonical
    assert imported.options.provider_options == {}  # nothing beside the meaning
    assert ADAPTER.to_wire(imported.messages, imported.tools, imported.options)["tool_choice"] == wire_choice


def test_tool_choice_keys_without_a_canonical_option_stay_anthropic_only() -> None:
    choice = {"type": "auto", "disable_parallel_tool_use": True}
    body = {
        "model": "claude-sonnet-4-6",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],  # no spelling kept
        "tool_choice": choice,
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.tool_choice == "auto"
    assert imported.options.provider_options == {
        "anthropic": {"tool_choice": {"disable_parallel_tool_use": True}}
    }
    assert ADAPTER.to_wire(imported.messages, [], imported.options)["tool_choice"] == choice


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda b: b["messages"][3]["content"][0].update(tool_use_id="toolu_unknown"),
            "messages[3].content[0].tool_use_id",
        ),
        (lambda b: b["messages"][0].update(role="bot"), "messages[0].role"),
        (lambda b: b["messages"][0].update(content=5), "messages[0].content"),
        (lambda b: b["messages"][2]["content"][2].update(input="{}"), "messages[2].content[2].input"),
        (
            lambda b: b["messages"][1]["content"][0]["source"].update(data="not base64!"),
            "messages[1].content[0].source.data",
        ),
        (lambda b: b.update(system=[{"type": "image"}]), "system[0].type"),
        (lambda b: b.update(system=7), "system"),
        (lambda b: b.update(messages={}), "messages"),
        (lambda b: b.pop("model"), "model"),
        (lambda b: b.update(max_tokens="4096"), "max_tokens"),
        (lambda b: b.update(stop_sequences="END"), "stop_sequences"),
        (lambda b: b.update(tool_choice={"type": "sometimes"}), "tool_choice.type"),
        (lambda b: b.update(tool_choice={"type": "tool"}), "tool_choice"),
        (lambda b: b.update(temperature=True), "temperature"),
        (lambda b: b["messages"][3]["content"][1].update(is_error="yes"), "messages[3].content[1].is_error"),
        (
            lambda b: b["messages"].insert(
                0, {"role": "user", "content": [{"type": "document", "source": {}}]}
            ),
            "messages[0].content",
        ),
        (lambda b: b["tools"][0].update(name=""), "tools[0].name"),
    ],
)
def test_malformed_request_is_a_typed_error(mutate: Any, path: str) -> None:
    body = wire("request_recorded.json")
    mutate(body)
    with pytest.raises(WireFormatError) as err:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert err.value.path == path


# --- streaming -----------------------------------------------------------------------------------


def _chunkings(data: bytes) -> dict[str, list[bytes]]:
    return {
        "one-piece": [data],
        "one-byte": [data[i : i + 1] for i in range(len(data))],
        "seven-bytes": [data[i : i + 7] for i in range(0, len(data), 7)],
        "per-line": data.splitlines(keepends=True),
    }


@pytest.mark.parametrize("name", STREAMS)
@pytest.mark.parametrize("chunking", ["one-piece", "one-byte", "seven-bytes", "per-line"])
def test_stream_assembles_to_the_non_streamed_message(name: str, chunking: str) -> None:
    """Each stream_<case>.sse carries the same reply as response_<case>.json."""
    data = sse(name)
    streamed = ADAPTER.assemble_stream(_chunkings(data)[chunking], context())
    direct = ADAPTER.from_wire_response(
        wire(name.replace("stream_", "response_").replace(".sse", ".json")), context()
    )
    assert normalized(streamed) == normalized(direct)
    assert streamed.metadata.status == MessageStatus.complete


@pytest.mark.parametrize("name", STREAMS)
def test_stream_events_match_golden(name: str) -> None:
    data = sse(name)
    for block in data.decode().split("\n\n"):
        if block.strip():
            check_stream_event(orjson.loads(block.split("data: ", 1)[1]))
    events = list(ADAPTER.stream_response(_chunkings(data)["seven-bytes"], context()))
    golden.check(
        PROVIDER,
        golden.expected_name(name),
        [normalized(e.model_dump(mode="json", exclude_none=True)) for e in events],
    )
    assert events[-1].type == "message_complete"


async def test_async_stream_gives_the_same_events() -> None:
    data = sse("stream_thinking.sse")

    async def chunks() -> Any:
        for piece in _chunkings(data)["seven-bytes"]:
            yield piece

    events = [e async for e in ADAPTER.astream_response(chunks(), context())]
    sync = list(ADAPTER.stream_response([data], context()))
    assert [normalized(e.model_dump(mode="json")) for e in events] == [
        normalized(e.model_dump(mode="json")) for e in sync
    ]


def test_stream_cut_early_is_cancelled_and_keeps_what_arrived() -> None:
    data = sse("stream_thinking.sse")
    cut = data[: data.index(b'"partial_json":"\\"Paris')]
    message = ADAPTER.assemble_stream([cut], context())
    assert message.metadata.status == MessageStatus.cancelled
    assert [b.type for b in message.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert message.content[2].text == "Let me look that up."  # type: ignore[union-attr]
    assert message.content[0].signature is not None  # type: ignore[union-attr]


def test_stream_error_event_ends_in_error_and_keeps_partial_content() -> None:
    data = sse("stream_thinking.sse")
    head = data[: data.index(b'event: content_block_stop\ndata: {"type":"content_block_stop","index":2')]
    error = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    tail = b'event: content_block_stop\ndata: {"type":"content_block_stop","index":2}\n\n'
    events = list(ADAPTER.stream_response([head, error, tail], context()))
    assert events[-1].type == "error"
    assert (events[-1].code, events[-1].retryable, events[-1].provider) == (
        "overloaded_error",
        True,
        "anthropic",
    )  # type: ignore[union-attr]
    message = ADAPTER.assemble_stream([head, error, tail], context())
    assert message.metadata.status == MessageStatus.error
    assert message.metadata.stop_reason == StopReason.error
    assert [b.type for b in message.content] == ["thinking", "redacted_thinking", "text"]
    assert message.metadata.provider_raw is not None
    assert message.metadata.provider_raw["error"] == {"code": "overloaded_error", "message": "Overloaded"}


def test_streamed_tool_arguments_that_are_not_json_are_kept() -> None:
    sink = RecordingSink()
    data = sse("stream_thinking.sse").replace(b'"\\"Paris\\"}"', b'"\\"Par"')
    message = ADAPTER.assemble_stream([data], context(events=sink))
    tool_use = message.content[3]
    assert tool_use.type == "tool_use" and tool_use.input == {}
    raw = message.metadata.provider_raw
    assert raw is not None and raw["unparsed_arguments"] == {tool_use.id: '{"city": "Par'}
    assert [e.type for e in sink.events] == ["tool_input_invalid"]


def test_tool_without_parameters_streams_only_an_empty_fragment() -> None:
    events = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant",'
        b'"model":"claude-haiku-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_X","name":"now","input":{}}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    message = ADAPTER.assemble_stream([events], context(model="anthropic:claude-haiku-4-5"))
    assert message.content[0].type == "tool_use" and message.content[0].input == {}
    assert message.metadata.usage is not None
    assert (message.metadata.usage.input_tokens, message.metadata.usage.output_tokens) == (9, 12)
    assert message.metadata.stop_reason == StopReason.tool_use


@pytest.mark.parametrize(
    "bad",
    [
        b"event: message_start\ndata: {not json\n\n",
        b'event: message_start\ndata: ["a list"]\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0}\n\n',
        b'event: content_block_start\ndata: {"type":"content_block_start","index":"zero","content_block":{"type":"text","text":""}}\n\n',
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}\n\n',
    ],
)
def test_malformed_stream_is_a_typed_error(bad: bytes) -> None:
    with pytest.raises(WireFormatError) as err:
        list(ADAPTER.stream_response([bad], context()))
    assert err.value.provider == "anthropic" and err.value.raw


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        (b'data: {"type":"content_block_delta","index":0}\n\n', "delta"),
        (
            b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}\n\n',
            "delta.text",
        ),
        (
            b'data: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"tool_use","id":"toolu_1","name":"","input":{}}}\n\n',
            "content_block.name",
        ),
        (b'data: {"type":"message_delta","delta":{"stop_reason":7}}\n\n', "delta.stop_reason"),
    ],
)
def test_malformed_stream_event_names_the_field(bad: bytes, path: str) -> None:
    with pytest.raises(WireFormatError) as err:
        list(ADAPTER.stream_response([bad], context()))
    assert err.value.path == path


def test_unknown_stream_events_and_deltas_are_ignored() -> None:
    data = sse("stream_thinking.sse")
    extra = (
        b'event: future_event\ndata: {"type":"future_event","x":1}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":2,"delta":{"type":"future_delta"}}\n\n'
    )
    cut = data.index(b'event: content_block_stop\ndata: {"type":"content_block_stop","index":2')
    streamed = ADAPTER.assemble_stream([data[:cut], extra, data[cut:]], context())
    direct = ADAPTER.from_wire_response(wire("response_thinking.json"), context())
    assert normalized(streamed) == normalized(direct)


def test_empty_stream_is_cancelled_with_no_content() -> None:
    events = list(ADAPTER.stream_response([b"", b": keep-alive\n\n"], context()))
    assert events == []
