"""`metis show` names every content block schema v2 has: none shows as "(empty)"."""

from __future__ import annotations

import json
from typing import Any

import pytest
from metis.cli._common import block_summary
from metis_schema.v3 import ContentBlock, Message
from pydantic import TypeAdapter

from tests.support.messages import build_message
from tests.support.paths import REPO
from tests.support.store_support import assistant_meta

VECTORS = REPO / "schema" / "v2" / "vectors" / "content_block.json"
BLOCK = TypeAdapter(ContentBlock)


def _valid_blocks() -> list[dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for group in json.loads(VECTORS.read_text()):
        for case in group["tests"]:
            data = case["data"]
            if case["valid"] and isinstance(data, dict) and isinstance(data.get("type"), str):
                found.setdefault(str(data["type"]), data)
    return list(found.values())


def _message(role: str, block: dict[str, Any], n: int, metadata: dict[str, Any] | None = None) -> Message:
    return build_message(
        role,
        [block],
        session_id="sess_cli_blocks",
        id=f"01JD000000000000000000000{n}",
        created_at="2026-11-24T00:00:00Z",
        metadata=metadata,
    )


@pytest.mark.parametrize("data", _valid_blocks(), ids=lambda d: str(d["type"]))
def test_every_block_type_has_a_summary(data: dict[str, object]) -> None:
    block = BLOCK.validate_python(data)
    message = _message("assistant", block.model_dump(mode="json", exclude_none=True), 1, assistant_meta())
    summary = block_summary(message)
    assert summary != "(empty)"
    if data["type"] != "text":  # text shows as its quoted excerpt
        assert str(data["type"]).split("_")[0] in summary


def test_drop_report_tells_a_dropped_block_from_a_block_sent_in_part() -> None:
    from metis.cli._common import Drop, drop_lines

    message = _message("user", {"type": "text", "text": "hi"}, 2)
    whole = Drop(
        "openai", "audio", message.id, "no audio here", "dropped audio block from message x for openai"
    )
    part = Drop(
        "openai", "document", message.id, "a file part has no context", "openai: document 0 goes without"
    )
    assert drop_lines([whole, part], [message]) == [
        "dropped audio block from message #0 (user) [openai]: no audio here",
        "trimmed document block of message #0 (user) [openai]: a file part has no context",
    ]


def test_a_part_that_is_no_block_is_not_called_a_block() -> None:
    from metis.cli._common import Drop, drop_lines

    message = _message("user", {"type": "text", "text": "hi"}, 3)
    point = Drop("gemini", "cache_point", message.id, "no per-block marker", "gemini: cache_point not sent")
    assert drop_lines([point], [message]) == [
        "cache_point of message #0 (user) [gemini] not sent: no per-block marker"
    ]


def test_other_providers_options_and_metis_directives_are_worded_apart(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from metis.adapters._kit.base import AdapterOptions
    from metis.adapters._kit.options import own_fields
    from metis.cli._common import Drop, drop_lines
    from metis.ids import ToolIdMap

    options = AdapterOptions(
        model="anthropic:claude-sonnet-4-6",
        session_id="s",
        tool_ids=ToolIdMap("s"),
        provider_options={
            "openrouter": {"transforms": ["middle-out"], "metis": {"cache_breakpoints": ["tools"]}}
        },
    )
    caplog.set_level("WARNING", logger="metis.adapters")
    own_fields(options, "anthropic")
    drops = [Drop("anthropic", "option", None, r.reason, r.getMessage()) for r in caplog.records]  # type: ignore[attr-defined]
    lines = sorted(drop_lines(drops, []))
    assert lines == [
        "not sent to anthropic: metis.cache_breakpoints (the cache_breakpoints of the openrouter request, "
        "which no canonical field holds: kept by metis to replay it) goes back to openrouter only",
        "not sent to anthropic: transforms (openrouter's own option) goes to openrouter only",
    ]
    assert not any("a openrouter" in line or "-only option" in line for line in lines)


def test_report_lines_wrap_at_spaces_for_a_terminal_and_never_inside_a_word() -> None:
    from metis.cli._common import report_lines

    line = (
        "not sent to gemini: metis.cache_breakpoints (the cache_breakpoints of the openrouter request) " * 2
    )
    long_word = "x" * 100
    wrapped = report_lines([line.strip(), long_word], 40)
    assert all(len(row) <= 40 for row in wrapped if long_word not in row)
    assert " ".join(row.strip() for row in wrapped[:-1]) == line.strip()
    assert wrapped[-1] == f"  {long_word}"
    assert wrapped[0].startswith("  not sent") and all(row.startswith("      ") for row in wrapped[1:-1])
    assert report_lines([line], None) == [f"  {line}"]
