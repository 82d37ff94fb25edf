"""Every WARN the Ollama adapter logs carries the five §7.3 fields (issue 15 item 12).

One case per WARN site in `adapters/ollama/` (reply and stream images, a cut stream line, a
line after the end, an import image of unknown format, a dropped import field, tools, tool
choice and thinking a model cannot take, a tool result's error flag and missing tool name, a
dropped block): each logs exactly one WARN, through `adapters._kit.losses`, with session_id,
message_id ("request" where the loss belongs to the request, the wire position of a
message being made at import: `adapters._kit.losses`),
block_type, adapter and reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from metis.adapters import AdapterOptions, get
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    Role,
    SideEffects,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
)

from tests.support.messages import build_message

ADAPTER = get("ollama")
SESSION = "sess_ollama_warns"
REPLY_ID = "01JTX0000000000000000RESP0"
T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
TOOL = ToolDefinition(
    name="get_weather",
    description="",
    input_schema={"type": "object", "properties": {}},
    side_effects=SideEffects.network,
)


def _context() -> RequestContext:
    return RequestContext(
        session_id=SESSION, model="ollama:qwen3-8b", tool_ids=ToolIdMap(SESSION), message_id=REPLY_ID
    )


def _options(model: str, **kw: Any) -> AdapterOptions:
    return AdapterOptions(model=model, session_id=SESSION, tool_ids=ToolIdMap(SESSION), **kw)


def _user(*blocks: Any) -> Message:
    return build_message(
        Role.user, list(blocks), session_id=SESSION, id="01JTX000000000000000000001", created_at=T0
    )


def _tool_result(*, is_error: bool) -> Message:
    block = ToolResultBlock(
        type="tool_result",
        tool_use_id="tu_01JTX00000000000000000000A",
        content=[TextBlock(type="text", text="14 C")],
        is_error=is_error,
    )
    return build_message(
        Role.tool,
        [block],
        session_id=SESSION,
        id="01JTX000000000000000000003",
        created_at=T0,
        parent_tool_use_id=block.tool_use_id,
    )


def _line(message: dict[str, Any], **kw: Any) -> str:
    return (
        json.dumps({"model": "qwen3:8b", "created_at": "2026-05-08T12:00:00Z", "message": message, **kw})
        + "\n"
    )


def _reply_with_images() -> None:
    ADAPTER.from_wire_response(
        {
            "model": "qwen3:8b",
            "message": {"role": "assistant", "content": "Here.", "images": [PNG]},
            "done": True,
            "done_reason": "stop",
        },
        _context(),
    )


def _stream_with_images() -> None:
    list(
        ADAPTER.stream_response(
            [
                _line({"role": "assistant", "content": "Here.", "images": [PNG]}),
                _line({"role": "assistant", "content": ""}, done=True, done_reason="stop"),
            ],
            _context(),
        )
    )


def _stream_cut_inside_a_line() -> None:
    list(
        ADAPTER.stream_response(
            [_line({"role": "assistant", "content": "Hi"}), '{"model": "qwen3:8b", "mess'], _context()
        )
    )


def _stream_line_after_the_end() -> None:
    done = _line({"role": "assistant", "content": "Hi"}, done=True, done_reason="stop")
    list(ADAPTER.stream_response([done, _line({"role": "assistant", "content": "again"})], _context()))


def _import_image_of_unknown_format() -> None:
    body = {
        "model": "gemma3",
        "messages": [{"role": "user", "content": "What is it?", "images": ["AAAAAAAA"]}],
    }
    ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def _import_unknown_field() -> None:
    body = {"model": "qwen3", "messages": [{"role": "user", "content": "Hi", "name": "ada"}]}
    ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def _tools_to_a_model_without_tools() -> None:
    ADAPTER.to_wire([_user(TextBlock(type="text", text="Hi"))], [TOOL], _options("gemma3"))


def _tool_choice_ollama_cannot_say() -> None:
    ADAPTER.to_wire(
        [_user(TextBlock(type="text", text="Hi"))],
        [TOOL],
        _options("ollama:qwen3-8b", tool_choice="required"),
    )


def _thinking_to_a_model_without_thinking() -> None:
    ADAPTER.to_wire(
        [_user(TextBlock(type="text", text="Hi"))], [], _options("llama3.3", thinking_budget=1024)
    )


def _tool_result_error_flag() -> None:
    ADAPTER.to_wire([_tool_result(is_error=True)], [], _options("ollama:qwen3-8b"))


def _dropped_block() -> None:
    url_image = ImageBlock(
        type="image",
        source=MediaSource(kind=MediaSourceKind.url, data="https://example.com/a.png"),
        media_type="image/png",
    )
    ADAPTER.to_wire([_user(TextBlock(type="text", text="Hi"), url_image)], [], _options("gemma3"))


CASES: dict[str, tuple[Callable[[], None], str | None, str]] = {
    "reply images": (_reply_with_images, REPLY_ID, "image"),
    "stream images": (_stream_with_images, REPLY_ID, "image"),
    "stream cut inside a line": (_stream_cut_inside_a_line, REPLY_ID, "stream_line"),
    "stream line after the end": (_stream_line_after_the_end, REPLY_ID, "stream_line"),
    "import image of unknown format": (_import_image_of_unknown_format, "messages[0]", "image"),
    "import field with no canonical place": (_import_unknown_field, "messages[0]", "name"),
    "tools to a model without tools": (_tools_to_a_model_without_tools, "request", "tools"),
    "tool choice": (_tool_choice_ollama_cannot_say, "request", "tool_choice"),
    "thinking to a model without thinking": (
        _thinking_to_a_model_without_thinking,
        "request",
        "thinking_budget",
    ),
    "tool result error flag": (_tool_result_error_flag, "01JTX000000000000000000003", "tool_result.is_error"),
    "tool result without its call": (
        _tool_result_error_flag,
        "01JTX000000000000000000003",
        "tool_result.tool_name",
    ),
    "dropped block": (_dropped_block, "01JTX000000000000000000001", "image"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_ollama_warn_carries_the_five_fields(case: str, caplog: pytest.LogCaptureFixture) -> None:
    run, message_id, block_type = CASES[case]
    with caplog.at_level(logging.WARNING):
        run()
    # the adapter's own WARNs (the catalog's one-per-name WARN about an unlisted model is not a loss)
    records = [
        r for r in caplog.records if r.levelno >= logging.WARNING and r.name.startswith("metis.adapters")
    ]
    relevant = [r for r in records if getattr(r, "block_type", None) == block_type]
    assert len(relevant) == 1, [r.getMessage() for r in records]
    assert all(all(hasattr(r, k) for k in FIVE) for r in records), [r.getMessage() for r in records]
    record = relevant[0]
    assert (record.session_id, record.message_id, record.adapter) == (SESSION, message_id, "ollama")  # type: ignore[attr-defined]
    assert record.reason  # type: ignore[attr-defined]
