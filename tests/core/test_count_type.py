"""A token count is declared once (`metis.usage.Count`): every wire shape's counts use it,
and the servers that may write one as text read it through `TextCount`, made from it.

Anthropic's, Gemini's and Ollama's wire modules each declared a `Count` of their own beside
`usage.Count` (which read text too); the declarations agreed only by care. The strict one is
now the one declaration, so those three stay as strict as they were (no text) and the Chat
Completions and Responses shapes keep reading "12"."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from metis import usage
from metis.errors import WireFormatError
from metis.usage import Count, TextCount, normalize_usage
from pydantic import TypeAdapter, ValidationError

STRICT_WIRES = ("anthropic", "gemini", "ollama")
"""The wire modules whose counts never took text."""


@pytest.mark.parametrize("provider", STRICT_WIRES)
def test_each_wire_module_counts_with_the_one_declaration(provider: str) -> None:
    wire = importlib.import_module(f"metis.adapters.{provider}.wire")
    assert wire.Count is usage.Count


@pytest.mark.parametrize("value", [0, 1, 2**70])
def test_a_count_is_a_non_negative_json_integer(value: int) -> None:
    assert TypeAdapter(Count).validate_python(value) == value
    assert TypeAdapter(TextCount).validate_python(value) == value


@pytest.mark.parametrize("value", [-1, 1.5, 1.0, True, None, "12", "many"])
def test_a_count_refuses_anything_else(value: Any) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Count).validate_python(value)


@pytest.mark.parametrize(("value", "read"), [("12", 12), (" 7", 7)])
def test_a_text_count_reads_an_integer_written_as_text(value: str, read: int) -> None:
    assert TypeAdapter(TextCount).validate_python(value) == read


@pytest.mark.parametrize("value", [-1, 1.5, True, "12k", "-3"])
def test_a_text_count_refuses_what_a_count_refuses(value: Any) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(TextCount).validate_python(value)


@pytest.mark.parametrize(
    ("provider", "wire"),
    [
        ("anthropic", {"input_tokens": "12"}),
        ("ollama", {"prompt_eval_count": "12"}),
        (
            "gemini",
            {"promptTokenCount": 12, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": "12"}]},
        ),
    ],
)
def test_strict_wires_still_refuse_a_count_written_as_text(provider: str, wire: dict[str, Any]) -> None:
    with pytest.raises(WireFormatError):
        normalize_usage(provider, wire)


@pytest.mark.parametrize(
    ("provider", "wire"),
    [
        ("openai", {"prompt_tokens": "12"}),
        ("openrouter", {"prompt_tokens": "12"}),
        ("mistral", {"prompt_tokens": "12"}),
        ("responses", {"input_tokens": "12"}),
    ],
)
def test_chat_and_responses_wires_still_read_a_count_written_as_text(
    provider: str, wire: dict[str, Any]
) -> None:
    assert normalize_usage(provider, wire).input_tokens == 12
