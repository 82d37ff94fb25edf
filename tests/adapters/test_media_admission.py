"""One media admission for every adapter (`adapters/_kit/media_admission.py`): the same question gets the
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
from metis_schema.v3 import AdapterCapabilities, Message

from tests.adapters.test_adapter_contract import PROVIDERS
from tests.support.store_support import message

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


WAV = "UklGRgAAAABXQVZF"
MEDIA = {
    "document": _document({"kind": "base64", "data": PDF}),
    "audio": {"type": "audio", "source": {"kind": "base64", "data": WAV}, "media_type": "audio/wav"},
    "video": {
        "type": "video",
        "source": {"kind": "url", "data": "https://example.com/a.mp4"},
        "media_type": "video/mp4",
    },
}
CAPABILITY_CASES = [
    # (provider, kind, a model the catalog says does not take it, one that does)
    ("openai", "audio", "openai:gpt-4.1", "openai:gpt-4o-audio-preview"),
    ("openai", "document", "openai:gpt-4o-audio-preview", "openai:gpt-4.1"),
    ("openrouter", "audio", "openrouter:anthropic/claude-sonnet-4.6", "openrouter:google/gemini-2.5-flash"),
    ("openrouter", "video", "openrouter:openai/gpt-4o", "openrouter:google/gemini-2.5-flash"),
    ("openai", "document", "openai:my-local-llama", "openai:gpt-4o"),  # unlisted: assumed text and tools only
]


@pytest.mark.parametrize(("provider", "kind", "refusing", "taking"), CAPABILITY_CASES)
def test_documents_audio_and_video_go_only_to_a_model_that_takes_them(
    provider: str, kind: str, refusing: str, taking: str, caplog: pytest.LogCaptureFixture
) -> None:
    noun = {"document": "documents"}.get(kind, kind)
    _, warns = _send(provider, refusing, MEDIA[kind], caplog)
    assert [(w.block_type, w.reason) for w in warns] == [(kind, f"{refusing} does not accept {noun}")]
    caplog.clear()
    _, warns = _send(provider, taking, MEDIA[kind], caplog)
    assert warns == []


def test_the_catalog_says_which_models_take_documents_audio_and_video() -> None:
    """From the providers' documentation: Claude reads PDFs and text, not audio or video;
    OpenAI's GPT-4o-class models read PDFs, audio only its audio models; Gemini 2.x reads all
    three; the Ollama models listed none."""
    catalog = load_catalog()

    def says(model: str) -> tuple[bool, bool, bool]:
        caps = catalog.resolve(model).capabilities
        return caps.supports_documents, caps.supports_audio, caps.supports_video

    assert says("anthropic:claude-sonnet-4-6") == (True, False, False)
    assert says("openai:gpt-4o") == says("responses:gpt-5") == (True, False, False)
    assert says("openai:gpt-4o-audio-preview") == (False, True, False)
    assert says("gemini:gemini-2.5-flash") == says("gemini:gemini-2.0-flash") == (True, True, True)
    for entry in catalog.for_provider("ollama"):
        assert says(entry.id) == (False, False, False), entry.id


def test_capabilities_written_before_the_media_flags_keep_sending_media() -> None:
    """The flags are additive (schema v2): a capability record without them means what it
    meant before, every medium sent."""
    listed = load_catalog().resolve("anthropic:claude-sonnet-4-6").capabilities.model_dump()
    for flag in ("supports_documents", "supports_audio", "supports_video"):
        del listed[flag]
    older = AdapterCapabilities.model_validate(listed)
    assert (older.supports_documents, older.supports_audio, older.supports_video) == (True, True, True)
