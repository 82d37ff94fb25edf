"""Every adapter accepts schema v2 messages (issue 14 item 5).

A v2 block an adapter does not carry yet is a clean drop: one §7.3 WARN with its five
fields (session_id, message_id, block_type, adapter, reason) and nothing of it in the
request body; marked critical, it is a CriticalBlockError instead. Carrying the new blocks
properly through each provider is the next step; until then nothing may pass silently or
be rendered as text.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import metis.adapters
import pytest
from metis.adapters import AdapterOptions
from metis.errors import CriticalBlockError
from metis.ids import ToolIdMap

from tests.adapters.test_adapter_contract import PROVIDERS, capable_model
from tests.support.paths import REPO
from tests.support.store_support import assistant_meta, message

VECTORS = REPO / "schema" / "v2" / "vectors" / "content_block.json"
SID = "sess_v2_blocks"
NEW_IN_V2 = (
    "document",
    "audio",
    "video",
    "search_result",
    "server_tool_use",
    "server_tool_result",
    "compaction",
)
USER_BLOCKS = frozenset({"document", "audio", "video", "search_result"})
CARRIED = frozenset(
    {
        ("responses", "document"),
        ("gemini", "document"),
        ("gemini", "audio"),
        ("gemini", "video"),
        ("gemini", "server_tool_use"),
        ("gemini", "server_tool_result"),
        # Chat Completions (tests/adapters/test_chat_v2_blocks.py): file, input_audio and video_url parts
        ("openai", "document"),
        ("openai", "audio"),
        ("openrouter", "document"),
        ("openrouter", "audio"),
        ("openrouter", "video"),
        ("anthropic", "document"),
        ("anthropic", "search_result"),
        ("anthropic", "server_tool_use"),
        ("anthropic", "server_tool_result"),
        ("anthropic", "compaction"),
    }
)
"""(provider, block type) pairs an adapter carries now, each tested in its own module
(tests/adapters/test_responses_adapter.py: documents as input_file parts; tests/adapters/test_gemini_v2_blocks.py:
media as inlineData/fileData parts, Gemini's own code execution as server tool blocks;
tests/adapters/test_chat_v2_blocks.py: file, input_audio and video_url parts; tests/adapters/test_anthropic_v2.py:
documents, search results, server tool blocks and compaction)."""
PAIRS = [(p, b) for p in PROVIDERS for b in NEW_IN_V2 if (p, b) not in CARRIED]


def _examples() -> dict[str, dict[str, Any]]:
    """One valid vector of each block type v2 adds (the first of its kind)."""
    found: dict[str, dict[str, Any]] = {}
    for group in json.loads(VECTORS.read_text()):
        for case in group["tests"]:
            data = case["data"]
            if case["valid"] and isinstance(data, dict) and data.get("type") in NEW_IN_V2:
                found.setdefault(data["type"], data)
    assert set(found) == set(NEW_IN_V2), "a v2 block type has no valid vector"
    return found


EXAMPLES = _examples()


def _conversation(block_type: str, *, critical: bool = False) -> list[Any]:
    block = EXAMPLES[block_type]
    if block_type in USER_BLOCKS:
        meta: dict[str, Any] = {"critical_blocks": [1]} if critical else {}
        turn = message(SID, "user", [{"type": "text", "text": "Read this."}, block], meta)
        return [turn]
    question = message(SID, "user", [{"type": "text", "text": "Search for ULIDs."}])
    meta = assistant_meta(model="anthropic:claude-sonnet-4-6")
    if critical:
        meta["critical_blocks"] = [1]
    answer = message(SID, "assistant", [{"type": "text", "text": "Found it."}, block], meta)
    return [question, answer, message(SID, "user", [{"type": "text", "text": "Thanks."}])]


def _options(provider: str) -> AdapterOptions:
    return AdapterOptions(model=capable_model(provider), session_id=SID, tool_ids=ToolIdMap(session_id=SID))


@pytest.mark.parametrize(("provider", "block_type"), PAIRS)
def test_a_v2_block_is_dropped_with_one_warn(
    provider: str, block_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    messages = _conversation(block_type)
    with caplog.at_level(logging.WARNING):
        body = metis.adapters.get(provider).to_wire(messages, [], _options(provider))
    drops = [r for r in caplog.records if getattr(r, "block_type", None) == block_type]
    assert len(drops) == 1, [r.getMessage() for r in caplog.records]
    record = drops[0]
    owner = messages[0] if block_type in USER_BLOCKS else messages[1]
    assert (record.session_id, record.message_id, record.adapter) == (SID, owner.id, provider)  # type: ignore[attr-defined]
    assert record.reason  # type: ignore[attr-defined]
    text = json.dumps(body)
    for key, value in EXAMPLES[block_type].items():
        if key not in ("type", "provider") and isinstance(value, str) and len(value) > 6:
            assert value not in text, f"{provider} sent part of a dropped {block_type} block"


@pytest.mark.parametrize(("provider", "block_type"), PAIRS)
def test_a_critical_v2_block_is_a_typed_error(provider: str, block_type: str) -> None:
    with pytest.raises(CriticalBlockError) as caught:
        metis.adapters.get(provider).to_wire(_conversation(block_type, critical=True), [], _options(provider))
    assert caught.value.path == "content[1]"
