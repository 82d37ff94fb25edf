"""Tool schemas between Gemini's two declaration fields and the canonical JSON Schema.

A functionDeclaration carries its schema in one of two fields:

- `parameters`: Gemini's own Schema, a subset of OpenAPI 3.0 (types named `OBJECT`, `STRING`,
  or by proto number with `enum-encoding=int`; `nullable`; `format: "enum"`; `example`;
  `propertyOrdering`; int64 bounds written as strings). On import it is converted to JSON
  Schema (`to_json_schema`), so the canonical input_schema means the same thing to every
  provider it is projected to;
- `parametersJsonSchema`: JSON Schema as it is ($defs, $ref, additionalProperties, const, type
  lists, ...). Kept as it came.

On export the canonical schema goes as `parameters` when every keyword in it is one that field
takes (`PARAMETERS`, a table read by `tool_schema.refused`), else as `parametersJsonSchema`, which
takes all of §5.4. A declaration recorded with `parametersJsonSchema` is replayed with it even
when `parameters` would take the schema: the import records the field in the tool's
`provider_data["gemini"]["schema_field"]` (`schema_field`). That fact lives on the tool, not in
the schema or the request options, because it is about how this one declaration was written,
travels with the tool wherever the tool goes, and is Gemini's alone (other adapters never read
`provider_data["gemini"]`).

A recorded `parameters` schema the canonical one would not write back as it came (`STRING`,
a proto type number, `nullable`, `format: "enum"`, `propertyOrdering`, an int64 bound as a
string, ...) is kept verbatim in `provider_data["gemini"]["parameters"]`, with the digest of
the tool's canonical name, description and input_schema it was converted to
(`["parameters_of"]`, `definition_digest`). A declaration written for that tool replays
the recorded schema while the canonical fields still hash the same (`recorded_parameters`);
a tool edited since is written from its canonical form, so an edit is never undone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, Literal

import orjson
from metis_schema.v3 import ToolDefinition

from ... import _json
from ...errors import WireFormatError
from .._kit.tool_fields import with_provider_data
from .._kit.tool_schema import Accepts, refused
from .facts import NAME, PARAMETERS_FORMATS, SCHEMA_TYPE_NUMBERS
from .wire import Schema

SchemaField = Literal["parameters", "parametersJsonSchema"]
JSON_SCHEMA_FIELD: SchemaField = "parametersJsonSchema"

_TYPES = frozenset(name.lower() for name in SCHEMA_TYPE_NUMBERS.values()) - {"type_unspecified"}
_KEPT = frozenset(
    {
        "title",
        "description",
        "enum",
        "required",
        "pattern",
        "minimum",
        "maximum",
        "default",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
    }
)
"""Keywords Gemini's Schema and JSON Schema spell and mean alike: copied as they are."""
_ANNOTATIONS = ("title", "description", "default", "examples")
"""What stays beside `anyOf` when a nullable schema becomes `anyOf: [schema, null]`."""


def _anything(value: Any) -> bool:
    return True


def _one_type(value: Any) -> bool:
    return isinstance(value, str) and value in _TYPES


def _format(value: Any) -> bool:
    return value in PARAMETERS_FORMATS


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


PARAMETERS: Accepts = MappingProxyType(
    {
        "type": _one_type,  # one type: a list of types is JSON Schema only
        "format": _format,
        "enum": _strings,  # Gemini enumerates strings only
        "properties": _anything,
        "required": _anything,
        "items": _anything,
        "anyOf": _anything,
        "title": _anything,
        "description": _anything,
        "default": _anything,
        "pattern": _anything,
        "minimum": _anything,
        "maximum": _anything,
        "minItems": _anything,
        "maxItems": _anything,
        "minProperties": _anything,
        "maxProperties": _anything,
        "minLength": _anything,
        "maxLength": _anything,
    }
)
"""What `parameters` (Gemini's OpenAPI-subset Schema, generativelanguage v1beta) takes, keyword by
keyword, in JSON Schema spelling (lower-case type names are accepted as the enum's names).
Everything else — `$defs`/`$ref`, `additionalProperties`, `const`, `examples`, `$schema`,
exclusive bounds, `multipleOf`, `uniqueItems`, type lists, other formats — is JSON Schema only."""


def schema_field(tool: ToolDefinition) -> SchemaField:
    """The declaration field `tool.input_schema` goes in (see the module docstring)."""
    recorded = (tool.provider_data or {}).get(NAME, {}).get("schema_field")
    if recorded == JSON_SCHEMA_FIELD or refused(tool.input_schema, PARAMETERS) is not None:
        return JSON_SCHEMA_FIELD
    return "parameters"


def definition_digest(tool: ToolDefinition) -> str:
    """SHA-256 of the canonical JSON (sorted keys, `metis._json`) of what a declaration is
    written from: the tool's name, description and input_schema."""
    fields = {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    return hashlib.sha256(_json.write(fields, option=orjson.OPT_SORT_KEYS)).hexdigest()


def with_recorded_parameters(tool: ToolDefinition, recorded: Any) -> ToolDefinition:
    """`tool` keeping the `parameters` schema it was imported from, verbatim, with the digest
    of its canonical fields (see the module docstring)."""
    return with_provider_data(
        tool, NAME, {"parameters": _json.copied(recorded), "parameters_of": definition_digest(tool)}
    )


def recorded_parameters(tool: ToolDefinition) -> Any | None:
    """The `parameters` schema an import kept on `tool`, when the tool still says what it
    said then (its canonical fields hash the same); else None: write from the canonical form."""
    own = (tool.provider_data or {}).get(NAME, {})
    if "parameters" not in own or own.get("parameters_of") != definition_digest(tool):
        return None
    return _json.copied(own["parameters"])


Drop = Callable[[Any, str, str], None]
"""Records what the conversion cannot carry: (value, path, reason)."""


def to_json_schema(schema: Schema, path: str, drop: Drop) -> dict[str, Any]:
    """A validated `parameters` schema at `path` -> JSON Schema (recursively through properties,
    items and anyOf). An unknown type is a WireFormatError; a keyword JSON Schema has no word
    for is dropped through `drop`, never silently."""
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        where = f"{path}.{key}"
        if value is None and key not in ("default", "example"):
            continue  # null is absent in Google's JSON
        if key == "type":
            kind = schema.get("type")
            name = _type_name(kind, where) if kind is not None else None
            if name is not None:
                out["type"] = name
        elif key == "nullable":
            nullable = value is True
        elif key == "format":
            if value != "enum":  # JSON Schema says "an enumeration" with `enum` alone
                out["format"] = value
        elif key == "properties":
            props = schema.get("properties") or {}
            out["properties"] = {
                name: to_json_schema(sub, f"{where}.{name}", drop) for name, sub in props.items()
            }
        elif key == "items":
            items = schema.get("items")
            if items is not None:
                out["items"] = to_json_schema(items, where, drop)
        elif key == "anyOf":
            branches = schema.get("anyOf") or []
            out["anyOf"] = [to_json_schema(sub, f"{where}[{i}]", drop) for i, sub in enumerate(branches)]
        elif key == "example":
            out["examples"] = [value]
        elif key == "propertyOrdering":
            drop(value, where, "JSON Schema has no property order; the properties are written in it")
        elif key in _KEPT:
            out[key] = value
        else:
            drop(value, where, f"{key} is not a Gemini Schema field; no JSON Schema keyword carries it")
    order = schema.get("propertyOrdering")
    if order and "properties" in out:
        props = out["properties"]
        out["properties"] = {
            **{name: props[name] for name in order if name in props},
            **{name: sub for name, sub in props.items() if name not in order},
        }
    return _nullable(out) if nullable else out


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """`nullable: true` as JSON Schema: `anyOf: [<the schema>, {"type": "null"}]`, the form
    pydantic writes for Optional (and `parameters` takes back), annotations kept outside."""
    if out.get("type") == "null":
        return out
    outer = {key: out.pop(key) for key in _ANNOTATIONS if key in out}
    if set(out) == {"anyOf"}:
        branches = out["anyOf"]
        if {"type": "null"} not in branches:
            branches.append({"type": "null"})
        return {**outer, "anyOf": branches}
    return {**outer, "anyOf": [out, {"type": "null"}]}


def _type_name(value: str | int, where: str) -> str | None:
    """A Type name or proto number -> its JSON Schema name (None for TYPE_UNSPECIFIED)."""
    name = SCHEMA_TYPE_NUMBERS.get(value) if isinstance(value, int) else value.upper()
    if name is None or name not in SCHEMA_TYPE_NUMBERS.values():
        raise WireFormatError(
            f"unknown schema type {value!r} (expected one of {', '.join(SCHEMA_TYPE_NUMBERS.values())}"
            " or its number)",
            provider=NAME,
            path=where,
        )
    return None if name == "TYPE_UNSPECIFIED" else name.lower()


__all__ = [
    "JSON_SCHEMA_FIELD",
    "PARAMETERS",
    "SchemaField",
    "definition_digest",
    "recorded_parameters",
    "schema_field",
    "to_json_schema",
    "with_recorded_parameters",
]
