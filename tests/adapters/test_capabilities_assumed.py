"""Issue 30 item 6: capabilities assumed right.

- An unlisted model inherits its family (catalog `families`): `gpt-audio-mini` takes audio
  like the listed audio model, `gpt-oss:120b` thinks;
- a `responses:` model the catalog does not list is its `openai:` entry (the same model on
  OpenAI's other wire: its capabilities and its price): `responses:gpt-4.1-nano` takes images;
- a model that wrote a block type in this conversation takes it back, whatever the catalog
  says (`adapters._kit.media_admission.request_capabilities`), with one WARN (the five §7.3 fields) saying
  what was assumed and which message shows it.

Each case replays a conversation to the very model that made it; on the old code each lost
a block ("does not accept audio", "does not support thinking", "does not accept images").
"""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.catalog import load_catalog
from metis.ids import ToolIdMap
from metis_schema.v3 import Message

from tests.support.contracts import openai as openai_contract
from tests.support.contracts import responses as responses_contract
from tests.support.messages import build_message

SESSION = "sess_capabilities"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
WAV = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt ").decode()
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")


def _message(role: str, content: list[dict[str, Any]], **metadata: Any) -> Message:
    return build_message(
        role, content, session_id=SESSION, created_at=datetime(2026, 11, 1, tzinfo=UTC), **metadata
    )


def _send(model: str, messages: list[Message]) -> dict[str, Any]:
    provider = model.split(":", 1)[0]
    options = AdapterOptions(model=model, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    body: dict[str, Any] = adapters.get(provider).to_wire(messages, [], options)
    return body


def _losses(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "metis.adapters" and r.levelno >= logging.WARNING]


@pytest.mark.parametrize(
    ("model", "capability", "assumed_from"),
    [
        ("openai:gpt-audio-mini", "supports_audio", "openai:gpt-audio*"),
        ("ollama:gpt-oss:120b", "supports_thinking", "ollama:gpt-oss*"),
        ("responses:gpt-4.1-nano", "supports_images", "openai:gpt-4.1-nano"),
        ("responses:gpt-4o-audio-preview", "supports_audio", "openai:gpt-4o-audio-preview"),
        ("openrouter:openai/gpt-4.1-nano", "supports_images", "openai:gpt-4.1-nano"),
    ],
)
def test_an_unlisted_model_is_what_its_family_or_its_openai_entry_is(
    model: str, capability: str, assumed_from: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.catalog"):
        entry = load_catalog().resolve(model)
    assert getattr(entry.capabilities, capability) is True
    assert (entry.assumed, entry.resolved_from) == (True, assumed_from)
    said = [r.getMessage() for r in caplog.records if r.name == "metis.catalog"]
    assert len(said) <= 1 and all(assumed_from.rstrip("*") in text for text in said)  # once per name


def test_a_responses_model_has_its_openai_entrys_price_and_an_openrouter_one_its_own() -> None:
    assert load_catalog().resolve("responses:gpt-4.1-nano").pricing_key == "openai:gpt-4.1-nano"
    assert load_catalog().resolve("openrouter:openai/gpt-4.1-nano").pricing_key == "unpriced"


def test_gpt_audio_mini_takes_its_audio_back(caplog: pytest.LogCaptureFixture) -> None:
    audio = {"type": "audio", "source": {"kind": "base64", "data": WAV}, "media_type": "audio/wav"}
    messages = [
        _message("user", [audio, {"type": "text", "text": "What did I say?"}]),
        _message("assistant", [{"type": "text", "text": "Hello."}], model="openai:gpt-audio-mini"),
        _message("user", [{"type": "text", "text": "Again?"}]),
    ]
    with caplog.at_level(logging.WARNING):
        body = _send("openai:gpt-audio-mini", messages)
    openai_contract.check_request(body)
    assert body["messages"][0]["content"][0] == {
        "type": "input_audio",
        "input_audio": {"data": WAV, "format": "wav"},
    }
    assert _losses(caplog) == []


def test_gpt_oss_takes_its_thinking_back(caplog: pytest.LogCaptureFixture) -> None:
    messages = [
        _message("user", [{"type": "text", "text": "2+2?"}]),
        _message(
            "assistant",
            [{"type": "thinking", "text": "Add them."}, {"type": "text", "text": "4"}],
            model="ollama:gpt-oss:120b",
        ),
        _message("user", [{"type": "text", "text": "And 3+3?"}]),
    ]
    with caplog.at_level(logging.WARNING):
        body = _send("ollama:gpt-oss:120b", messages)
    assert body["messages"][1] == {"role": "assistant", "content": "4", "thinking": "Add them."}
    assert _losses(caplog) == []


def test_responses_gpt_4_1_nano_takes_images(caplog: pytest.LogCaptureFixture) -> None:
    image = {"type": "image", "source": {"kind": "base64", "data": PNG}, "media_type": "image/png"}
    messages = [_message("user", [image, {"type": "text", "text": "What is it?"}])]
    with caplog.at_level(logging.WARNING):
        body = _send("responses:gpt-4.1-nano", messages)
    responses_contract.check_request(body)
    assert body["input"][0]["content"][0]["type"] == "input_image"
    assert _losses(caplog) == []


def test_a_model_that_wrote_thinking_takes_it_back_with_one_warn_saying_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unlisted model of no family (conservative defaults: no thinking) that wrote
    thinking in this conversation gets it back; the WARN names the message that shows it."""
    model = "ollama:deepseek-r1:8b"
    reply = _message(
        "assistant",
        [{"type": "thinking", "text": "Recall the capital."}, {"type": "text", "text": "Paris."}],
        model=model,
    )
    again = _message(
        "assistant",
        [{"type": "thinking", "text": "Still Paris."}, {"type": "text", "text": "Yes."}],
        model=model,
    )
    messages = [
        _message("user", [{"type": "text", "text": "Capital of France?"}]),
        reply,
        _message("user", [{"type": "text", "text": "Sure?"}]),
        again,
        _message("user", [{"type": "text", "text": "Thanks."}]),
    ]
    with caplog.at_level(logging.WARNING):
        body = _send(model, messages)
    assert [m.get("thinking") for m in body["messages"]] == [
        None,
        "Recall the capital.",
        None,
        "Still Paris.",
        None,
    ]
    [said] = _losses(caplog)
    assert all(getattr(said, name) for name in FIVE)
    assert (said.message_id, said.block_type, said.adapter) == (reply.id, "thinking", "ollama")  # type: ignore[attr-defined]
    assert said.reason == (  # type: ignore[attr-defined]
        f"assuming {model} takes thinking back: the catalog says it does not take them, "
        f"but it wrote thinking in this conversation (message {reply.id})"
    )


def test_another_models_thinking_is_no_evidence(caplog: pytest.LogCaptureFixture) -> None:
    messages = [
        _message("user", [{"type": "text", "text": "Hi"}]),
        _message(
            "assistant",
            [{"type": "thinking", "text": "Greet."}, {"type": "text", "text": "Hello."}],
            model="ollama:qwen3-8b",
        ),
        _message("user", [{"type": "text", "text": "Again"}]),
    ]
    with caplog.at_level(logging.WARNING):
        body = _send("ollama:llama-3.3-70b", messages)
    assert "thinking" not in body["messages"][1]
    assert [r.block_type for r in _losses(caplog)] == ["thinking"]  # type: ignore[attr-defined]
