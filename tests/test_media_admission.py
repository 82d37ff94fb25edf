"""One media admission for every adapter (`adapters/_media.py`): the same question gets the
same answer and the same §7.3 reason whichever provider the request goes to, and a document
that goes without fields its part has no place for says so once, only when it is sent."""

from __future__ import annotations

import logging
from typing import Any

import metis.adapters
import pytest
from metis.adapters import AdapterOptions
from metis.catalog import load_catalog
from metis.ids import ToolIdMap
from metis_schema.v2 import Message
from test_adapter_contract import PROVIDERS
from test_store_support import message

SID = "sess_media_admission"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKJcfsj6IK"


def _seeing(provider: str) -> str:
    return next(e.id for e in load_catalog().for_provider(provider) if e.capabilities.supports_images)


def _blind(provider: str) -> str | None:
    return next(
        (e.id for e in load_catalog().for_provider(provider) if not e.capabilities.supports_images), None
    )


def _send(
    provider: str, model: str, block: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> tuple[Message, list[Any]]:
    turn = message(SID, "user", [{"type": "text", "text": "Look."}, block])
    options = AdapterOptions(model=model, session_id=SID, tool_ids=ToolIdMap(session_id=SID))
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        metis.adapters.get(provider).to_wire([turn], [], options)
    return turn, [r for r in caplog.records if getattr(r, "message_id", None) == turn.id]


def _image(media_type: str) -> dict[str, Any]:
    return {"type": "image", "source": {"kind": "base64", "data": PNG}, "media_type": media_type}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_image_type_the_model_does_not_list_has_one_reason_everywhere(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = _seeing(provider)
    _, warns = _send(provider, model, _image("image/bmp"), caplog)
    assert [(w.block_type, w.reason) for w in warns] == [("image", f"{model} does not accept image/bmp")]
    caplog.clear()
    _, warns = _send(provider, model, _image("image/png"), caplog)
    assert warns == [], "a listed type goes"


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if _blind(p)])
def test_an_image_to_a_model_without_images_has_one_reason_everywhere(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = _blind(provider)
    _, warns = _send(provider, str(model), _image("image/png"), caplog)
    assert [(w.block_type, w.reason) for w in warns] == [("image", f"{model} does not accept images")]


def _document(source: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"type": "document", "source": source, "media_type": "application/pdf", **fields}


LOSSES = {
    "openai": "a file part has no context or citations_enabled",
    "openrouter": "a file part has no context or citations_enabled",
    "responses": "input_file has no context or citations_enabled",
    "gemini": "a gemini part has no title or context or citations_enabled",
}
"""What a sent document with a title, context and citations on loses, where it loses any
(Anthropic carries all three; Mistral and Ollama take no documents)."""


@pytest.mark.parametrize("provider", sorted(LOSSES))
def test_a_sent_document_says_once_what_it_goes_without(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    block = _document(
        {"kind": "base64", "data": PDF}, title="Q3", context="the board pack", citations_enabled=True
    )
    _, warns = _send(provider, _seeing(provider), block, caplog)
    assert [(w.block_type, w.reason) for w in warns] == [("document", LOSSES[provider])]


def test_anthropic_sends_a_documents_title_context_and_citations(caplog: pytest.LogCaptureFixture) -> None:
    block = _document(
        {"kind": "base64", "data": PDF}, title="Q3", context="the board pack", citations_enabled=True
    )
    _, warns = _send("anthropic", _seeing("anthropic"), block, caplog)
    assert warns == []


@pytest.mark.parametrize("provider", [*sorted(LOSSES), "anthropic"])
def test_a_dropped_document_has_only_its_drop_warn(provider: str, caplog: pytest.LogCaptureFixture) -> None:
    owner = "ollama"  # no one reads an Ollama file id: the document is dropped everywhere
    block = _document(
        {"kind": "file_id", "data": "file-9", "provider": owner}, context="c", citations_enabled=True
    )
    _, warns = _send(provider, _seeing(provider), block, caplog)
    assert [w.reason for w in warns] == [f"a file id of {owner} means nothing to {provider}"]
