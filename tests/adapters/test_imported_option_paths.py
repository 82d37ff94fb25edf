"""Every importer reads its options by the one rule (`options.imported_options`), so an option
read under an alias of its row replays under that alias (the `option_paths` directive) for
Anthropic, Gemini and Ollama as for the Chat Completions dialects.

The three rows declare no alias today (no documented second name); the test gives each a
row that does (`dataclasses.replace`, the same row with one alias more), imports a request
spelling the option that way, and writes it back. Before the importers shared the rule they
built their options by hand and dropped what `take_options` reported: the option came back
under its declared path, the request no longer as sent."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from metis import adapters
from metis.ids import ToolIdMap

CASES: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    # provider: (alias of temperature, recorded body, declared path's top key, written body part)
    "anthropic": (
        "sampling.temp",
        {
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "sampling": {"temp": 0.25},
            "messages": [{"role": "user", "content": "hi"}],
        },
        "temperature",
        {"sampling": {"temp": 0.25}},
    ),
    "gemini": (
        "generationConfig.temp",
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"temp": 0.25}},
        "generationConfig.temperature",
        {"generationConfig": {"temp": 0.25}},
    ),
    "ollama": (
        "temperature",
        {"model": "llama3.2", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.25},
        "options.temperature",
        {"temperature": 0.25},
    ),
}


def _at(body: dict[str, Any], path: str) -> Any:
    value: Any = body
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


@pytest.mark.parametrize("provider", sorted(CASES))
def test_alias_read_replays_under_it(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    alias, body, declared, written = CASES[provider]
    adapter = adapters.get(provider)
    row = dataclasses.replace(adapter.facts, option_aliases={"temperature": (alias,)})
    for module in ("importer", "to_wire"):
        monkeypatch.setattr(f"metis.adapters.{provider}.{module}.FACTS", row)
    imported = adapter.from_wire_request(body, session_id="sess_alias", tool_ids=ToolIdMap("sess_alias"))
    options = imported.options
    assert options.temperature == 0.25
    assert options.provider_options[provider]["metis"]["option_paths"] == {"temperature": alias}
    sent = adapter.to_wire(imported.messages, imported.tools, options)
    for key, value in written.items():
        assert sent[key] == value
    assert _at(sent, declared) is None


@pytest.mark.parametrize("provider", sorted(CASES))
def test_declared_path_records_no_option_paths(provider: str) -> None:
    """With the rows as they are, nothing is read under an alias: no directive appears."""
    _, body, _, _ = CASES[provider]
    adapter = adapters.get(provider)
    imported = adapter.from_wire_request(body, session_id="sess_alias", tool_ids=ToolIdMap("sess_alias"))
    entry = imported.options.provider_options.get(provider, {})
    assert "option_paths" not in entry.get("metis", {})
