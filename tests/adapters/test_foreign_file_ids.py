"""A file id goes only to a provider that reads its uploads (spec §7.3, `media_admission.file_id_refusal`).

A `file_id` MediaSource names an upload to one provider's Files API. Every adapter, for
every media block kind (image, document, audio, video) at the top level of a user turn and
(image, document: what a tool result may hold) inside a tool result, must drop another
provider's file id with one WARN naming that provider; never send it with its data emptied,
as `null`, or under another provider's name. Which uploads a provider reads is one facts-row
field, `ProviderFacts.file_ids_from` (OpenAI's Chat Completions and Responses share one).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import metis.adapters
import pytest
from metis.adapters import AdapterOptions
from metis.catalog import load_catalog
from metis.errors import CriticalBlockError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message

from tests.adapters.test_adapter_contract import PROVIDERS, capable_model
from tests.support.store_support import assistant_meta, message

SID = "sess_file_ids"
FILE_ID = "file-upload-0123456789abcdef"
MEDIA_TYPES = {
    "image": "image/png",
    "document": "application/pdf",
    "audio": "audio/wav",
    "video": "video/mp4",
}
TOP_LEVEL = tuple(MEDIA_TYPES)
IN_TOOL_RESULT = ("image", "document")
"""The media a tool result may hold (schema v2 ToolResultContent)."""
OWNERS = ("anthropic", "gemini", "openai", "responses", "openrouter", "mistral", "ollama")
"""Every provider a file id may name (`MediaSource.provider`)."""

NOT_CARRIED = frozenset(
    {
        ("anthropic", "audio", "user"),
        ("anthropic", "video", "user"),
        ("responses", "audio", "user"),
        ("responses", "video", "user"),
        ("openai", "video", "user"),
        ("openai", "image", "tool_result"),
        ("openai", "document", "tool_result"),
        ("openrouter", "document", "tool_result"),
        ("mistral", "document", "user"),
        ("mistral", "audio", "user"),
        ("mistral", "video", "user"),
        ("mistral", "image", "tool_result"),
        ("mistral", "document", "tool_result"),
        ("ollama", "document", "user"),
        ("ollama", "audio", "user"),
        ("ollama", "video", "user"),
        ("ollama", "document", "tool_result"),
    }
)
"""(adapter, kind, place) an adapter carries in no form: dropped for that, whatever the source."""

SENT = frozenset(
    {
        ("anthropic", "document", "user"),
        ("anthropic", "document", "tool_result"),
        ("gemini", "image", "user"),
        ("gemini", "document", "user"),
        ("gemini", "audio", "user"),
        ("gemini", "video", "user"),
        ("gemini", "image", "tool_result"),
        ("gemini", "document", "tool_result"),
        ("responses", "image", "user"),
        ("responses", "document", "user"),
        ("responses", "image", "tool_result"),
        ("responses", "document", "tool_result"),
        ("openai", "document", "user"),
        ("openrouter", "document", "user"),
    }
)
"""(adapter, kind, place) where a file id the adapter reads is sent as such; everywhere else
its wire part takes no file ids and it is dropped too (with the part's own reason)."""

CASES = [
    (provider, kind, place)
    for provider in PROVIDERS
    for place, kinds in (("user", TOP_LEVEL), ("tool_result", IN_TOOL_RESULT))
    for kind in kinds
]


def _block(kind: str, owner: str) -> dict[str, Any]:
    source = {"kind": "file_id", "data": FILE_ID, "provider": owner}
    return {"type": kind, "source": source, "media_type": MEDIA_TYPES[kind]}


def _conversation(
    kind: str, owner: str, place: str, *, critical: bool = False
) -> tuple[list[Message], Message]:
    """The messages, and the one holding the file id."""
    meta: dict[str, Any] = {"critical_blocks": [1 if place == "user" else 0]} if critical else {}
    if place == "user":
        turn = message(SID, "user", [{"type": "text", "text": "Look at this."}, _block(kind, owner)], meta)
        return [turn], turn
    call = {"type": "tool_use", "id": "tu_01J00000000000000000000FAD", "name": "fetch", "input": {}}
    result = {
        "type": "tool_result",
        "tool_use_id": call["id"],
        "content": [{"type": "text", "text": "fetched"}, _block(kind, owner)],
    }
    held = message(SID, "tool", [result], meta)
    return [
        message(SID, "user", [{"type": "text", "text": "Fetch it."}]),
        message(SID, "assistant", [call], assistant_meta(model="anthropic:claude-sonnet-4-6")),
        held,
    ], held


def _options(provider: str, kind: str) -> AdapterOptions:
    """To a model that takes `kind` where the catalog lists one (the media question is then
    the source alone)."""
    flag = {"image": "supports_images", "document": "supports_documents"}.get(kind, f"supports_{kind}")
    takes = [e for e in load_catalog().for_provider(provider) if getattr(e.capabilities, flag)]
    model = takes[0].id if takes else capable_model(provider)
    return AdapterOptions(model=model, session_id=SID, tool_ids=ToolIdMap(session_id=SID))


def _nulls(value: Any, path: str = "") -> list[str]:
    """Paths of every null in a request body (a file id sent with its data emptied), but the
    `content: null` of a Chat Completions turn of tool calls (the wire's own spelling)."""
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [
            p
            for key, item in value.items()
            if not (key == "content" and item is None and "tool_calls" in value)
            for p in _nulls(item, f"{path}.{key}")
        ]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _nulls(item, f"{path}[{i}]")]
    return []


def _send(
    provider: str, kind: str, messages: list[Message], caplog: pytest.LogCaptureFixture
) -> tuple[str, list[Any]]:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = metis.adapters.get(provider).to_wire(messages, [], _options(provider, kind))
    warns = [r for r in caplog.records if getattr(r, "adapter", None) == provider and hasattr(r, "reason")]
    assert _nulls(body) == [], f"{provider} sent a null: {_nulls(body)}"
    return json.dumps(body), warns


@pytest.mark.parametrize(("provider", "kind", "place"), CASES)
def test_a_foreign_file_id_is_dropped_naming_its_provider(
    provider: str, kind: str, place: str, caplog: pytest.LogCaptureFixture
) -> None:
    facts = metis.adapters.get(provider).facts
    foreign = [owner for owner in OWNERS if not facts.reads_file_id(owner)]
    assert foreign, f"{provider} reads every provider's file ids"
    for owner in foreign:
        caplog.clear()
        messages, held = _conversation(kind, owner, place)
        text, warns = _send(provider, kind, messages, caplog)
        assert FILE_ID not in text, f"{provider} sent {owner}'s file id"
        drops = [r for r in warns if getattr(r, "message_id", None) == held.id and kind in r.block_type]
        assert len(drops) == 1, [r.getMessage() for r in warns]
        (drop,) = drops
        assert drop.session_id == SID
        if (provider, kind, place) not in NOT_CARRIED:
            assert f"a file id of {owner} means nothing to {provider}" == drop.reason


@pytest.mark.parametrize(
    ("provider", "kind", "place"), [c for c in CASES if metis.adapters.get(c[0]).facts.file_ids_from]
)
def test_a_file_id_the_provider_reads_is_sent_where_its_part_takes_one(
    provider: str, kind: str, place: str, caplog: pytest.LogCaptureFixture
) -> None:
    facts = metis.adapters.get(provider).facts
    for owner in sorted(facts.file_ids_from):
        caplog.clear()
        messages, held = _conversation(kind, owner, place)
        text, warns = _send(provider, kind, messages, caplog)
        drops = [r for r in warns if getattr(r, "message_id", None) == held.id and kind in r.block_type]
        if (provider, kind, place) in SENT:
            assert FILE_ID in text and drops == [], [r.getMessage() for r in drops]
        else:
            assert FILE_ID not in text and len(drops) == 1
            assert "means nothing" not in drops[0].reason, "its own upload, refused for the part"


@pytest.mark.parametrize(("provider", "kind", "place"), CASES[:: len(PROVIDERS) - 1])
def test_a_critical_foreign_file_id_is_a_typed_error(provider: str, kind: str, place: str) -> None:
    owner = next(o for o in OWNERS if not metis.adapters.get(provider).facts.reads_file_id(o))
    messages, _ = _conversation(kind, owner, place, critical=True)
    with pytest.raises(CriticalBlockError):
        metis.adapters.get(provider).to_wire(messages, [], _options(provider, kind))


def test_openai_chat_and_responses_read_one_files_api() -> None:
    chat, responses = metis.adapters.get("openai").facts, metis.adapters.get("responses").facts
    assert chat.file_ids_from == responses.file_ids_from == frozenset({"openai", "responses"})
    assert not metis.adapters.get("openrouter").facts.reads_file_id("openai"), (
        "a proxy reads no OpenAI upload"
    )
    assert not metis.adapters.get("ollama").facts.file_ids_from, "Ollama has no Files API"
