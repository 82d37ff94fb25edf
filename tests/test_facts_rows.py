"""The facts row as one shape: typed template slots, error bodies read through the declared
wire shapes, and one way from a provider's error to a stream's ErrorEvent.

Each test here names what the old code did wrong where it did (NUL-string placeholders that a
constant equal to their text was taken for; error bodies read by key paths beside the
declared shapes, so a malformed stream error became an event instead of a WireFormatError).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import metis.adapters
import pytest
from metis.adapters._kit.facts import (
    SCHEMA,
    SCHEMA_NAME,
    TOOL_NAME,
    ProviderFacts,
    Slot,
    ToolChoice,
    fill,
)
from metis.adapters._kit.options import OutputSchema

PROVIDERS = ("anthropic", "openai", "openrouter", "mistral", "responses", "gemini", "ollama")
OLD_MARKERS = ("\x00tool-name\x00", "\x00schema\x00", "\x00schema-name\x00")
"""The NUL-delimited text the placeholders used to be."""


def _row(**fields: Any) -> ProviderFacts:
    """A row like Anthropic's with `fields` in place of its own."""
    return dataclasses.replace(metis.adapters.get("anthropic").facts, **fields)


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for inner in value.values() for s in _strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in _strings(inner)]
    return [value] if isinstance(value, str) else []


# --- typed slots ---------------------------------------------------------------------------------


def test_a_template_constant_spelled_like_the_old_placeholder_is_written_verbatim() -> None:
    """The old placeholders were strings: a template constant equal to `"\\x00tool-name\\x00"`
    was replaced by the tool's name. A slot is an object no string equals."""
    row = _row(tool_choice={ToolChoice.tool: {"type": "tool", "name": TOOL_NAME, "tag": "\x00tool-name\x00"}})
    assert row.tool_choice_to_wire("lookup") == {"type": "tool", "name": "lookup", "tag": "\x00tool-name\x00"}


def test_a_schema_template_constant_spelled_like_the_old_placeholder_is_kept() -> None:
    row = _row(output_schema={"format": {"schema": SCHEMA, "note": "\x00schema-name\x00"}})
    body: dict[str, Any] = {}
    row.output_schema_to_wire(OutputSchema(schema={"type": "object"}, name="answer"), body)
    assert body == {"format": {"schema": {"type": "object"}, "note": "\x00schema-name\x00"}}


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p != "ollama"])
@pytest.mark.parametrize("name", OLD_MARKERS)
def test_a_tool_named_like_a_placeholder_goes_out_and_comes_back_verbatim(provider: str, name: str) -> None:
    facts = metis.adapters.get(provider).facts
    wire = facts.tool_choice_to_wire(name)
    assert name in _strings(json.loads(json.dumps(wire)))  # plain JSON: no slot left in it
    fields = {"tool_choice": wire}
    assert facts.take_tool_choice(fields, "tool_choice") == name
    assert fields == {}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_output_schema_strings_like_a_placeholder_round_trip(provider: str) -> None:
    facts = metis.adapters.get(provider).facts
    schema = OutputSchema(schema={"type": "object", "description": "\x00schema\x00"}, name="\x00schema\x00")
    body: dict[str, Any] = {}
    facts.output_schema_to_wire(schema, body)
    assert json.loads(json.dumps(body)) == body  # plain JSON: no slot left in it
    taken = facts.take_output_schema(body)
    assert taken is not None and taken.schema == schema.schema
    assert taken.name in ("output", "\x00schema\x00")  # "output": the default, where no name is sent


def test_fill_leaves_out_unset_slots_and_copies_constants() -> None:
    template = {"a": SCHEMA, "b": SCHEMA_NAME, "c": [TOOL_NAME, "x"], "d": {"e": SCHEMA_NAME}}
    assert fill(template, {SCHEMA: {"k": 1}, TOOL_NAME: "t"}) == {"a": {"k": 1}, "c": ["t", "x"], "d": {}}
    assert Slot("tool_name", str) == TOOL_NAME
