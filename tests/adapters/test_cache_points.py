"""The canonical cache breakpoint (`cache_point`) through every provider (spec §7.3).

OpenRouter takes Anthropic's `cache_control` on a content part (its API reference,
https://openrouter.ai/docs/features/prompt-caching, and the contract in
tests/support/contracts/openrouter.py): the marker goes on exactly the part made from the marked
block. The APIs that cache on their own (OpenAI and Mistral Chat Completions, Responses),
Gemini (explicit caching is the separate cachedContents API) and Ollama (its own KV cache)
have no per-block marker: nothing is sent and one WARN per request says so. Imports keep
the breakpoint on the block, so a replay to Anthropic still caches at the same place.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from metis import adapters
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    CachePoint,
    CacheTtl,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

from tests.support.contracts import anthropic as anthropic_contract
from tests.support.contracts import openrouter as openrouter_contract
from tests.support.openai_chat_support import (
    SESSION,
    WEATHER_TOOL,
    assistant,
    msg,
    options,
    recorded,
    tid,
    tool_result,
)

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
HOUR = CachePoint(ttl=CacheTtl("1h"))
FIVE_FIELDS = ("session_id", "message_id", "block_type", "adapter", "reason")

AUTOMATIC = [
    ("openai", "openai:gpt-4.1"),
    ("mistral", "mistral:mistral-medium-latest"),
    ("responses", "responses:gpt-5-mini"),
    ("gemini", "gemini:gemini-3"),
    ("ollama", "ollama:gemma3-4b"),
]


def conversation(*, points: bool = True) -> list[Message]:
    """A user turn with a marked text and a marked image, a tool call, and a marked result."""
    mark, hour = (CachePoint(), HOUR) if points else (None, None)
    image = ImageBlock(source=MediaSource(kind=MediaSourceKind.base64, data=PNG), media_type="image/png")
    return [
        msg(
            1,
            Role.user,
            [
                TextBlock(text="What is the weather in Paris? Here is the sky.", cache_point=mark),
                image.model_copy(update={"cache_point": hour}),
            ],
        ),
        assistant(
            2,
            [ToolUseBlock(id=tid(1), name="get_weather", input={"city": "Paris"})],
            model="anthropic:claude-sonnet-4-6",
        ),
        tool_result(3, tid(1), [TextBlock(text="18C, clear")]).model_copy(
            update={
                "content": [
                    ToolResultBlock(
                        tool_use_id=tid(1), content=[TextBlock(text="18C, clear")], cache_point=mark
                    )
                ]
            }
        ),
    ]


def write(provider: str, model: str, messages: list[Message]) -> dict[str, Any]:
    return adapters.get(provider).to_wire(messages, [WEATHER_TOOL], options(model, ToolIdMap(SESSION)))


def cache_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "block_type", None) == "cache_point"]


def marked_parts(body: dict[str, Any]) -> list[tuple[int, int, dict[str, Any]]]:
    """(message index, part index, part) of every content part that carries cache_control."""
    return [
        (i, j, part)
        for i, message in enumerate(body["messages"])
        if isinstance(message.get("content"), list)
        for j, part in enumerate(message["content"])
        if "cache_control" in part
    ]


def test_openrouter_marks_exactly_the_parts_made_from_marked_blocks(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        body = write("openrouter", "openrouter:anthropic/claude-sonnet-4.6", conversation())
    openrouter_contract.check_request(body)
    assert [(i, j, part["type"], part["cache_control"]) for i, j, part in marked_parts(body)] == [
        (0, 0, "text", {"type": "ephemeral"}),
        (0, 1, "image_url", {"type": "ephemeral", "ttl": "1h"}),
        (2, 0, "text", {"type": "ephemeral"}),
    ]
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": body["messages"][1]["tool_calls"][0]["id"],
        "content": [{"type": "text", "text": "18C, clear", "cache_control": {"type": "ephemeral"}}],
    }
    assert "cache_control" not in json.dumps(body["tools"]) and not cache_warnings(caplog)


def test_openrouter_unmarked_conversation_keeps_string_content() -> None:
    body = write("openrouter", "openrouter:anthropic/claude-sonnet-4.6", conversation(points=False))
    assert not marked_parts(body) and body["messages"][2]["content"] == "18C, clear"


def test_openrouter_marked_assistant_text_goes_as_parts_and_a_marked_tool_call_is_warned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reply = assistant(
        2,
        [
            TextBlock(text="Checking.", cache_point=CachePoint()),
            ToolUseBlock(id=tid(1), name="get_weather", input={"city": "Paris"}, cache_point=CachePoint()),
        ],
        model="anthropic:claude-sonnet-4-6",
    )
    messages = [msg(1, Role.user, [TextBlock(text="Weather?")]), reply]
    with caplog.at_level(logging.WARNING):
        body = write("openrouter", "openrouter:anthropic/claude-sonnet-4.6", messages)
    openrouter_contract.check_request(body)
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Checking.", "cache_control": {"type": "ephemeral"}}
    ]
    (warning,) = cache_warnings(caplog)
    assert warning.message_id == reply.id and "tool_use" in warning.reason


@pytest.mark.parametrize(("provider", "model"), AUTOMATIC)
def test_no_marker_and_one_warning_per_request(
    provider: str, model: str, caplog: pytest.LogCaptureFixture
) -> None:
    messages = conversation()
    with caplog.at_level(logging.WARNING):
        body = write(provider, model, messages)
    assert "cache_control" not in json.dumps(body) and "cache_point" not in json.dumps(body)
    (warning,) = cache_warnings(caplog)
    assert all(getattr(warning, field, None) for field in FIVE_FIELDS)
    assert (warning.session_id, warning.message_id, warning.adapter) == (SESSION, messages[0].id, provider)
    assert warning.levelno == logging.WARNING


@pytest.mark.parametrize(("provider", "model"), AUTOMATIC)
def test_no_warning_without_cache_points(provider: str, model: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        write(provider, model, conversation(points=False))
    assert not cache_warnings(caplog)


def test_a_marked_tool_result_part_alone_is_warned_too(caplog: pytest.LogCaptureFixture) -> None:
    """A breakpoint nested inside a tool result (as an OpenRouter import makes) counts."""
    messages = conversation(points=False)
    messages[2] = tool_result(3, tid(1), [TextBlock(text="18C, clear", cache_point=CachePoint())])
    with caplog.at_level(logging.WARNING):
        write("openai", "openai:gpt-4.1", messages)
    (warning,) = cache_warnings(caplog)
    assert warning.message_id == messages[2].id


def test_openrouter_import_replays_to_anthropic_with_its_breakpoints() -> None:
    ids = ToolIdMap(SESSION)
    imported = adapters.get("openrouter").from_wire_request(
        recorded("openrouter", "request_followup.json"), session_id=SESSION, tool_ids=ids
    )
    body = adapters.get("anthropic").to_wire(
        imported.messages, imported.tools, options("anthropic:claude-sonnet-4-6", ids)
    )
    anthropic_contract.check_request(body)
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    results = [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert results[-1]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert json.dumps(body).count("cache_control") == 2


def test_anthropic_import_replays_to_openrouter_with_its_breakpoints() -> None:
    ids = ToolIdMap(SESSION)
    wire = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Weather in Paris?"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01A",
                        "content": "18C, clear",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ],
    }
    imported = adapters.get("anthropic").from_wire_request(wire, session_id=SESSION, tool_ids=ids)
    body = adapters.get("openrouter").to_wire(
        imported.messages, imported.tools, options("openrouter:anthropic/claude-sonnet-4.6", ids)
    )
    openrouter_contract.check_request(body)
    assert [(i, j, part["type"], part["cache_control"]) for i, j, part in marked_parts(body)] == [
        (0, 0, "text", {"type": "ephemeral"}),
        (1, 1, "image_url", {"type": "ephemeral", "ttl": "1h"}),
        (3, 0, "text", {"type": "ephemeral"}),
    ]


@pytest.mark.parametrize(
    "control",
    [{"type": "ephemeral", "ttl": "2h"}, {"type": "persistent"}, {"type": "ephemeral", "scope": "x"}, "yes"],
)
def test_openrouter_import_lists_a_marker_that_is_no_cache_point(control: Any) -> None:
    body = {
        "model": "anthropic/claude-sonnet-4.6",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": control}]}],
    }
    imported = adapters.get("openrouter").from_wire_request(
        body, session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    assert imported.messages[0].content[0].cache_point is None
    assert [d["path"] for d in imported.dropped] == ["messages[0].content[0].cache_control"]


def test_a_dropped_block_is_warned_once_not_again_for_its_breakpoint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Reasoning from another model is dropped with its own WARN, which covers its breakpoint."""
    reply = assistant(
        2,
        [ThinkingBlock(text="hmm", signature="sig", cache_point=CachePoint()), TextBlock(text="Hi.")],
        model="anthropic:claude-sonnet-4-6",
    )
    with caplog.at_level(logging.WARNING):
        body = write(
            "openrouter",
            "openrouter:anthropic/claude-sonnet-4.6",
            [msg(1, Role.user, [TextBlock(text="Hi")]), reply],
        )
    assert body["messages"][1]["content"] == "Hi."
    assert [getattr(r, "block_type", None) for r in caplog.records if r.name == "metis.adapters"] == [
        "thinking"
    ]


def test_openrouter_assistant_text_part_marker_round_trips() -> None:
    body = {
        "model": "anthropic/claude-sonnet-4.6",
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Hello."},
                    {"type": "text", "text": "How can I help?", "cache_control": {"type": "ephemeral"}},
                ],
            },
            {"role": "user", "content": "Weather?"},
        ],
    }
    ids = ToolIdMap(SESSION)
    imported = adapters.get("openrouter").from_wire_request(body, session_id=SESSION, tool_ids=ids)
    reply = imported.messages[1]
    assert [b.cache_point for b in reply.content] == [None, CachePoint()] and not imported.dropped
    again = adapters.get("openrouter").to_wire(imported.messages, imported.tools, imported.options)
    assert again["messages"] == body["messages"]
