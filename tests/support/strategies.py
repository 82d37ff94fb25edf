"""Hypothesis strategies derived from the bundled JSON Schema, composed into conversations.

`schema_strategy(name)` walks the schema definition of `name` (the subset metis uses:
$ref, oneOf, const, enum, type lists, string pattern/length/format, integer and number
bounds, arrays, objects with properties/required) and produces JSON documents that the
schema accepts. `conversations()` composes schema-derived blocks into conversations that
also satisfy the cross-message invariants (every tool_result answers an earlier tool_use,
TOOL messages carry parent_tool_use_id), so adapters can be fuzzed with valid input.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from functools import cache
from typing import Any

import metis_schema
from hypothesis import strategies as st
from metis.catalog import load_catalog
from metis.ids import new_message_id, new_tool_id
from metis_schema.v3 import Message, ToolDefinition

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
JSON_SCALARS = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=12)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@cache
def _defs() -> dict[str, Any]:
    with open(metis_schema.bundle_path(1), encoding="utf-8") as fh:
        defs: dict[str, Any] = json.load(fh)["$defs"]
    return defs


def _string(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    fmt = schema.get("format")
    if fmt == "date-time":
        return st.datetimes(
            min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1), timezones=st.just(dt.UTC)
        ).map(lambda d: d.isoformat().replace("+00:00", "Z"))
    if fmt == "decimal":
        return st.decimals(min_value=Decimal(0), max_value=Decimal(1000), places=6).map(
            lambda d: format(d, "f")
        )
    if fmt == "date":
        return st.dates().map(lambda d: d.isoformat())
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(
            lambda s: schema.get("minLength", 0) <= len(s) <= schema.get("maxLength", 10**9)
        )
    return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 40), 40))


def from_schema(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """A strategy for documents valid against `schema` (metis's subset of JSON Schema)."""
    if "$ref" in schema:
        return schema_strategy(schema["$ref"].rsplit("/", 1)[-1], depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema:
        return st.one_of([from_schema(s, depth) for s in schema["oneOf"]])
    types = schema.get("type")
    if isinstance(types, list):
        return st.one_of([from_schema({**schema, "type": t}, depth) for t in types])
    match types:
        case "string":
            return _string(schema)
        case "integer":
            return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
        case "number":
            return st.floats(schema.get("minimum", -1e6), schema.get("maximum", 1e6), allow_nan=False)
        case "boolean":
            return st.booleans()
        case "null":
            return st.none()
        case "array":
            return st.lists(
                from_schema(schema.get("items", {}), depth + 1),
                min_size=schema.get("minItems", 0),
                max_size=min(schema.get("maxItems", 3), 3),
            )
        case "object":
            return _object(schema, depth)
    return JSON_VALUES


def _object(schema: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return st.dictionaries(st.text(min_size=1, max_size=8), JSON_VALUES, max_size=3)
    required = set(schema.get("required", []))
    fixed = {k: from_schema(v, depth + 1) for k, v in props.items() if k in required}
    optional = {k: from_schema(v, depth + 1) for k, v in props.items() if k not in required}
    return st.fixed_dictionaries(fixed, optional=optional)


def schema_strategy(name: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """Documents valid against `$defs/<name>`; ContentBlock recursion is cut at depth 2."""
    if name == "ContentBlock" and depth > 1:
        return st.one_of(schema_strategy("TextBlock"), schema_strategy("ImageBlock"))
    definition = _defs()[name]
    return from_schema({k: v for k, v in definition.items() if k != "allOf"}, depth)


# --- conversations ------------------------------------------------------------------------

MEDIA = ["image/png", "image/jpeg", "image/webp", "image/gif"]


@st.composite
def image_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """Image blocks of every source kind; file_refs name `img.png` in the test workspace."""
    kind = draw(st.sampled_from(["base64", "url", "file_ref"]))
    data = {"base64": PNG_1PX, "url": "https://example.test/cat.png", "file_ref": "img.png"}[kind]
    return {
        "type": "image",
        "source": {"kind": kind, "data": data},
        "media_type": draw(st.sampled_from(MEDIA)),
    }


def _text() -> st.SearchStrategy[dict[str, Any]]:
    return schema_strategy("TextBlock").filter(lambda b: b["text"].strip() != "")


def _metadata(draw: st.DrawFn, provider: str) -> dict[str, Any]:
    entries = load_catalog().for_provider(provider)
    entry = draw(st.sampled_from(entries))
    usage = draw(schema_strategy("Usage"))
    routing = draw(schema_strategy("RoutingDecisionRecord"))
    routing["chosen_model"] = entry.id
    raw = {"adapter": provider} if draw(st.booleans()) else None
    meta: dict[str, Any] = {"model": entry.id, "provider": provider, "routing": routing, "usage": usage}
    if raw:
        meta["provider_raw"] = raw
    return meta


@st.composite
def conversations(draw: st.DrawFn, max_turns: int = 4) -> tuple[list[Message], list[ToolDefinition]]:
    """A valid canonical conversation with the tools it uses."""
    session = "sess_" + draw(st.from_regex(r"[a-z0-9]{6}", fullmatch=True))
    created = dt.datetime(2026, 5, 8, 12, 0, tzinfo=dt.UTC)
    messages: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}

    def add(role: str, content: list[dict[str, Any]], metadata: dict[str, Any] | None = None) -> None:
        messages.append(
            {
                "id": new_message_id(),
                "session_id": session,
                "role": role,
                "content": content,
                "metadata": metadata or {},
                "created_at": (created + dt.timedelta(seconds=len(messages))).isoformat(),
                "schema_version": 3,
            }
        )

    if draw(st.booleans()):
        add("system", draw(st.lists(_text(), min_size=1, max_size=2)))
    for _ in range(draw(st.integers(1, max_turns))):
        add("user", draw(st.lists(st.one_of(_text(), image_blocks()), min_size=1, max_size=3)))
        provider = draw(st.sampled_from(["anthropic", "openai", "gemini", "ollama", "openrouter"]))
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            thinking = draw(schema_strategy("ThinkingBlock"))
            blocks.append(thinking)
            if provider == "anthropic" and draw(st.booleans()):
                blocks.append(draw(schema_strategy("RedactedThinkingBlock")))
        if draw(st.booleans()):
            blocks.append(draw(_text()))
        calls = []
        for _ in range(draw(st.integers(0 if blocks else 1, 2))):
            tool = draw(schema_strategy("ToolDefinition"))
            tool["input_schema"] = {"type": "object", "properties": {"q": {"type": "string"}}}
            tools.setdefault(tool["name"], tool)
            call = {
                "type": "tool_use",
                "id": new_tool_id(),
                "name": tool["name"],
                "input": draw(st.dictionaries(st.sampled_from(["q", "n"]), JSON_SCALARS, max_size=2)),
            }
            blocks.append(call)
            calls.append(call)
        add("assistant", blocks, _metadata(draw, provider))
        for call in calls:
            content = draw(st.lists(st.one_of(_text(), image_blocks()), min_size=1, max_size=2))
            result = {
                "type": "tool_result",
                "tool_use_id": call["id"],
                "content": content,
                "is_error": draw(st.booleans()),
            }
            add("tool", [result], {"parent_tool_use_id": call["id"]})
    models = [Message.model_validate(m) for m in messages]
    return models, [ToolDefinition.model_validate(t) for t in tools.values()]


__all__ = ["PNG_1PX", "conversations", "from_schema", "image_blocks", "schema_strategy"]
