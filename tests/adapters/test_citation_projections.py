"""Cited text sent to another provider never loses its citations silently (issue 30 item 5).

Every golden reply whose text carries citations (Anthropic web search and document
citations, Gemini grounding, OpenAI Chat and OpenRouter url annotations, Responses url
annotations and its file citations) is projected, as the middle turn of a conversation, to every other
provider's request writer. Where the target has a field for a citation (Anthropic text
`citations`, for its own kinds) it is carried; every projection that carries fewer than
the message has says so in exactly one WARN for that message, with the five §7.3 fields.
The request formats were checked against the SDK types: Chat Completions'
`ChatCompletionAssistantMessageParam` and Ollama's messages have no annotations; a
Responses input message carries text (annotations only on an output message item, which
needs the stored item's id); a Gemini `Part` has no citation field.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.catalog import load_catalog
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, Role, TextBlock

from tests.support import golden
from tests.support.messages import build_message

TARGETS = ("anthropic", "openai", "openrouter", "mistral", "gemini", "ollama", "responses")
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")


def _cited_replies() -> list[Path]:
    found = []
    for path in sorted(golden.ROOT.glob("*/response_*.canonical.golden.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        if any(
            block.get("citations") for block in document.get("content", []) if block.get("type") == "text"
        ):
            found.append(path)
    return found


REPLIES = _cited_replies()
PROJECTIONS = [
    (reply, target)
    for reply in REPLIES
    for target in TARGETS
    if json.loads(reply.read_text(encoding="utf-8"))["metadata"]["provider"] != target
]


def _turn(session_id: str, role: Role, text: str) -> Message:
    return build_message(
        role, [TextBlock(type="text", text=text)], session_id=session_id, created_at=datetime.now(UTC)
    )


def _carried(target: str, body: dict[str, object]) -> int:
    """Citations the written request carries (Anthropic text blocks' `citations`)."""
    if target != "anthropic":
        return 0
    count = 0
    for turn in body["messages"]:  # type: ignore[attr-defined]
        for block in turn["content"] if isinstance(turn["content"], list) else []:
            count += len(block.get("citations") or ()) if block.get("type") == "text" else 0
    return count


def test_the_cited_replies_are_the_ones_the_issue_measured() -> None:
    providers = sorted(json.loads(p.read_text(encoding="utf-8"))["metadata"]["provider"] for p in REPLIES)
    assert providers == [
        "anthropic",
        "anthropic",
        "gemini",
        "gemini",
        "openai",
        "openrouter",
        "responses",
        "responses",
    ]
    assert len(PROJECTIONS) == 48


@pytest.mark.parametrize(
    ("reply", "target"),
    PROJECTIONS,
    ids=[f"{r.parent.name}/{r.name.split('.')[0]}->{t}" for r, t in PROJECTIONS],
)
def test_a_projection_that_drops_citations_says_so_once_with_the_five_fields(
    reply: Path, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    message = Message.model_validate_json(reply.read_text(encoding="utf-8"))
    session = message.session_id
    history = [
        _turn(session, Role.user, "What do the sources say?"),
        message,
        _turn(session, Role.user, "Thanks."),
    ]
    cited = sum(len(b.citations or ()) for b in message.content if isinstance(b, TextBlock))
    model = load_catalog().for_provider(target)[0].id
    options = AdapterOptions(model=model, session_id=session, tool_ids=ToolIdMap(session))
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = adapters.get(target).to_wire(history, [], options)
    said = [r for r in caplog.records if str(getattr(r, "block_type", "")).startswith("text/citation")]
    carried = _carried(target, body)
    if carried == cited:
        assert said == []
        return
    assert len(said) == 1, [r.getMessage() for r in said]  # one per message, not per citation
    record = said[0]
    assert {name: getattr(record, name, None) for name in FIVE} == {
        "session_id": session,
        "message_id": message.id,
        "block_type": record.block_type,  # type: ignore[attr-defined]
        "adapter": target,
        "reason": record.reason,  # type: ignore[attr-defined]
    }
    assert record.reason  # type: ignore[attr-defined]
