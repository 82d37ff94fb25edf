"""`metis show` names every content block schema v2 has: none shows as "(empty)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from metis.cli._common import block_summary
from metis_schema.v3 import ContentBlock, Message
from pydantic import TypeAdapter
from test_store_support import assistant_meta

VECTORS = Path(__file__).resolve().parent.parent / "schema" / "v2" / "vectors" / "content_block.json"
BLOCK = TypeAdapter(ContentBlock)


def _valid_blocks() -> list[dict[str, object]]:
    found: dict[str, dict[str, object]] = {}
    for group in json.loads(VECTORS.read_text()):
        for case in group["tests"]:
            data = case["data"]
            if case["valid"] and isinstance(data, dict) and isinstance(data.get("type"), str):
                found.setdefault(str(data["type"]), data)
    return list(found.values())


@pytest.mark.parametrize("data", _valid_blocks(), ids=lambda d: str(d["type"]))
def test_every_block_type_has_a_summary(data: dict[str, object]) -> None:
    block = BLOCK.validate_python(data)
    message = Message.model_validate(
        {
            "schema_version": 3,
            "id": "01JD0000000000000000000001",
            "session_id": "sess_cli_blocks",
            "role": "assistant",
            "created_at": "2026-11-24T00:00:00Z",
            "content": [block.model_dump(mode="json", exclude_none=True)],
            "metadata": assistant_meta(),
        }
    )
    summary = block_summary(message)
    assert summary != "(empty)"
    if data["type"] != "text":  # text shows as its quoted excerpt
        assert str(data["type"]).split("_")[0] in summary


def test_drop_report_tells_a_dropped_block_from_a_block_sent_in_part() -> None:
    from metis.cli._common import Drop, drop_lines

    message = Message.model_validate(
        {
            "schema_version": 3,
            "id": "01JD0000000000000000000002",
            "session_id": "sess_cli_blocks",
            "role": "user",
            "created_at": "2026-11-24T00:00:00Z",
            "content": [{"type": "text", "text": "hi"}],
            "metadata": {},
        }
    )
    whole = Drop(
        "openai", "audio", message.id, "no audio here", "dropped audio block from message x for openai"
    )
    part = Drop(
        "openai", "document", message.id, "a file part has no context", "openai: document 0 goes without"
    )
    assert drop_lines([whole, part], [message]) == [
        "dropped audio block from message #0 (user) [openai]: no audio here",
        "document of message #0 (user) [openai], sent without part of it: a file part has no context",
    ]
