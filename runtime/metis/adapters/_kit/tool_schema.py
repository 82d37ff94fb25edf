"""Lowering a tool's input_schema for a provider that cannot take all of §5.4 (schema v2).

§5.4 since v2 admits `$defs` at the root and local `$ref`s into it, because Anthropic,
OpenAI and Gemini's `parametersJsonSchema` take them and pydantic writes them for every
nested model. Ollama's server decodes `parameters` into a fixed Go struct that has no
reference resolution, so a reference would reach the model as a dangling name: for such a
provider the references are inlined here. A recursive model cannot be inlined, and that is
said with a typed error naming the tool and the pointer, not sent half-resolved.

A provider whose schema field takes only part of JSON Schema (Gemini's `parameters`) states
what it takes as a table (`Accepts`), and `refused` says whether a schema fits it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...errors import ToolSchemaError

_LOCAL_REF = "#/$defs/"


def uses_refs(schema: Mapping[str, Any]) -> bool:
    """Whether `schema` has `$defs` or a `$ref` anywhere."""
    return "$defs" in schema or _has_ref(schema)


def _has_ref(node: Any) -> bool:
    if isinstance(node, Mapping):
        return "$ref" in node or any(_has_ref(value) for value in node.values())
    if isinstance(node, list):
        return any(_has_ref(value) for value in node)
    return False


def inline_refs(schema: Mapping[str, Any], *, tool: str, provider: str) -> dict[str, Any]:
    """`schema` with every `#/$defs/Name` replaced by its definition and `$defs` removed."""
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, Mapping) else {}
    body = {key: value for key, value in schema.items() if key != "$defs"}
    lowered: dict[str, Any] = _inline(body, defs, (), tool=tool, provider=provider, pointer="")
    return lowered


def _inline(
    node: Any, defs: Mapping[str, Any], seen: tuple[str, ...], *, tool: str, provider: str, pointer: str
) -> Any:
    if isinstance(node, list):
        return [
            _inline(v, defs, seen, tool=tool, provider=provider, pointer=f"{pointer}/{i}")
            for i, v in enumerate(node)
        ]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_LOCAL_REF):
        name = ref[len(_LOCAL_REF) :]
        if name in seen or name not in defs:
            why = "is recursive" if name in seen else "names no entry of $defs"
            raise ToolSchemaError(
                f"tool {tool!r}: $ref {ref!r} {why}; {provider} takes no references, so it cannot be inlined",
                path=f"{pointer}/$ref",
                provider=provider,
            )
        target = _inline(defs[name], defs, (*seen, name), tool=tool, provider=provider, pointer=pointer)
        siblings = {k: v for k, v in node.items() if k != "$ref"}  # e.g. a description beside the ref
        return {**target, **_inline(siblings, defs, seen, tool=tool, provider=provider, pointer=pointer)}
    return {
        key: _inline(value, defs, seen, tool=tool, provider=provider, pointer=f"{pointer}/{key}")
        for key, value in node.items()
    }


Accepts = Mapping[str, Callable[[Any], bool]]
"""What a provider's schema field takes: keyword -> whether it takes that keyword's value.
A keyword missing from the table is refused."""

_SUBSCHEMAS = {"properties": "map", "$defs": "map", "items": "one", "anyOf": "list"}
"""The keywords whose values hold schemas (§5.4): a name -> schema map, one schema, a list."""


def keywords(schema: Mapping[str, Any], pointer: str = "") -> Iterator[tuple[str, str, Any]]:
    """(JSON pointer of the keyword, keyword, value) for every keyword of `schema` and of every
    schema inside it (through properties, $defs, items and anyOf), depth first, in order."""
    for key, value in schema.items():
        at = f"{pointer}/{key}"
        yield at, key, value
        shape = _SUBSCHEMAS.get(key)
        if shape == "map" and isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping):
                    yield from keywords(sub, f"{at}/{name}")
        elif shape == "one" and isinstance(value, Mapping):
            yield from keywords(value, at)
        elif shape == "list" and isinstance(value, list):
            for i, sub in enumerate(value):
                if isinstance(sub, Mapping):
                    yield from keywords(sub, f"{at}/{i}")


def refused(schema: Mapping[str, Any], accepts: Accepts) -> str | None:
    """The pointer of the first keyword `accepts` refuses in `schema` (None: it takes it all)."""
    for at, key, value in keywords(schema):
        check = accepts.get(key)
        if check is None or not check(value):
            return at
    return None


__all__ = ["Accepts", "inline_refs", "keywords", "refused", "uses_refs"]
