"""Gemini tool schemas (issue 15 items 3 and 4) and empty text turns (item 2) on import and export.

Schemas: a recorded `parameters` schema (Gemini's OpenAPI subset: `OBJECT`, proto numbers,
`nullable`, `format: "enum"`, int64 bounds as strings, `propertyOrdering`) becomes JSON Schema
in the canonical input_schema; export picks `parameters` or `parametersJsonSchema` from the
schema's keywords, and a recorded `parametersJsonSchema` replays as such. The Type numbers are
google.ai.generativelanguage.v1beta's `Type` enum (TYPE_UNSPECIFIED 0 ... NULL 7).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from google.genai import types
from metis.adapters.gemini.declarations import PARAMETERS
from metis.adapters.gemini.facts import SCHEMA_TYPE_NUMBERS
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis.tools import schema_problems
from metis_schema.v3 import SideEffects, ToolDefinition

from tests.support.gemini_support import ADAPTER, SESSION, options, to_wire


def _import(declarations: list[dict[str, Any]], contents: list[dict[str, Any]] | None = None) -> Any:
    body = {
        "contents": contents or [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": declarations}],
    }
    return ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))


def _schema(parameters: dict[str, Any]) -> dict[str, Any]:
    (tool,) = _import([{"name": "f", "parameters": parameters}]).tools
    return tool.input_schema


# --- item 3: parameters -> JSON Schema ----------------------------------------------------------


def test_gemini_types_become_json_schema_types_at_every_depth() -> None:
    recorded = {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "description": "City name."},
            "days": {"type": "INTEGER", "format": "int32", "minimum": 1, "maximum": 7},
            "hourly": {"type": "BOOLEAN"},
            "points": {
                "type": "ARRAY",
                "maxItems": "10",  # proto int64, as Google's JSON writes it
                "items": {"type": "OBJECT", "properties": {"lat": {"type": "NUMBER"}}},
            },
            "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
        },
        "required": ["city"],
    }
    assert _schema(recorded) == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "days": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 7},
            "hourly": {"type": "boolean"},
            "points": {
                "type": "array",
                "maxItems": 10,
                "items": {"type": "object", "properties": {"lat": {"type": "number"}}},
            },
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["city"],
    }


@pytest.mark.parametrize(("number", "name"), sorted(SCHEMA_TYPE_NUMBERS.items()))
def test_proto_type_numbers_are_named_as_the_sdk_names_them(number: int, name: str) -> None:
    """The table against google-genai's Type enum, and the conversion of each number."""
    assert name in {t.value for t in types.Type}
    schema = _schema({"type": "OBJECT", "properties": {"x": {"type": number}}})
    expected = {} if name == "TYPE_UNSPECIFIED" else {"type": name.lower()}
    assert schema["properties"]["x"] == expected
    assert _schema({"type": 6, "properties": {"x": {"type": 1}}})["type"] == "object"


def test_nullable_becomes_anyof_with_null_and_enum_format_goes() -> None:
    schema = _schema(
        {
            "type": "OBJECT",
            "properties": {
                "unit": {"type": "STRING", "format": "enum", "enum": ["C", "F"], "nullable": True},
                "note": {"type": "STRING", "nullable": True, "description": "Free text."},
                "either": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}], "nullable": True},
                "plain": {"type": "STRING", "nullable": False},
            },
        }
    )
    assert schema["properties"] == {
        "unit": {"anyOf": [{"type": "string", "enum": ["C", "F"]}, {"type": "null"}]},
        "note": {"description": "Free text.", "anyOf": [{"type": "string"}, {"type": "null"}]},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        "plain": {"type": "string"},
    }
    assert schema_problems(schema) == [], "the converted schema is inside §5.4"


def test_property_ordering_orders_the_properties_and_is_recorded_as_dropped() -> None:
    imported = _import(
        [
            {
                "name": "f",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"b": {"type": "STRING"}, "a": {"type": "STRING"}},
                    "propertyOrdering": ["a", "b"],
                },
            }
        ]
    )
    assert list(imported.tools[0].input_schema["properties"]) == ["a", "b"]
    assert [(d["path"], d["value"]) for d in imported.dropped] == [
        ("tools[0].functionDeclarations[0].parameters.propertyOrdering", ["a", "b"])
    ]


def test_snake_case_fields_and_example_are_read() -> None:
    schema = _schema(
        {
            "type": "OBJECT",
            "properties": {"tags": {"type": "ARRAY", "items": {"type": "STRING"}, "min_items": 1}},
            "example": {"tags": ["a"]},
        }
    )
    assert schema == {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "examples": [{"tags": ["a"]}],
    }


def test_unknown_type_is_a_typed_error_at_its_path() -> None:
    for bad in ("DICTIONARY", 42):
        with pytest.raises(WireFormatError) as caught:
            _schema({"type": "OBJECT", "properties": {"x": {"type": bad}}})
        assert caught.value.path == "tools[0].functionDeclarations[0].parameters.properties.x.type"
        assert caught.value.provider == "gemini"
    with pytest.raises(WireFormatError) as caught:
        _schema({"type": "OBJECT", "properties": {"x": {"type": True}}})
    assert caught.value.path is not None and "properties" in caught.value.path


def test_an_unknown_schema_field_is_a_recorded_drop(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="metis"):
        imported = _import(
            [
                {
                    "name": "f",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"x": {"type": "STRING", "x-widget": "textarea"}},
                    },
                }
            ]
        )
    assert imported.tools[0].input_schema == {"type": "object", "properties": {"x": {"type": "string"}}}
    assert [(d["path"], d["value"]) for d in imported.dropped] == [
        ("tools[0].functionDeclarations[0].parameters.properties.x.x-widget", "textarea")
    ]
    assert any("x-widget" in r.getMessage() for r in caplog.records)


# --- item 4: parameters or parametersJsonSchema on export -------------------------------------------


def _declaration(schema: dict[str, Any], **fields: Any) -> dict[str, Any]:
    tool = ToolDefinition(
        name="f", description="d", input_schema=schema, side_effects=SideEffects.none, **fields
    )
    ids = ToolIdMap(SESSION)
    (declaration,) = to_wire([], [tool], options(ids))["tools"][0]["functionDeclarations"]
    return declaration


_OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.mark.parametrize(
    "schema",
    [
        {**_OBJECT, "additionalProperties": False},
        {**_OBJECT, "$defs": {"Q": {"type": "string"}}, "properties": {"q": {"$ref": "#/$defs/Q"}}},
        {**_OBJECT, "properties": {"q": {"type": ["string", "null"]}}},
        {**_OBJECT, "properties": {"q": {"const": "x"}}},
        {**_OBJECT, "properties": {"q": {"type": "integer", "enum": [1, 2]}}},
        {**_OBJECT, "properties": {"q": {"type": "string", "format": "email"}}},
        {**_OBJECT, "properties": {"q": {"type": "number", "exclusiveMinimum": 0}}},
        {**_OBJECT, "$schema": "https://json-schema.org/draft/2020-12/schema"},
    ],
    ids=["additionalProperties", "ref", "type-list", "const", "int-enum", "email", "exclusive", "$schema"],
)
def test_json_schema_only_keywords_go_as_parametersJsonSchema(schema: dict[str, Any]) -> None:
    declaration = _declaration(schema)
    assert declaration["parametersJsonSchema"] == schema and "parameters" not in declaration


def test_the_openapi_subset_goes_as_parameters() -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {
            "q": {"type": "string", "enum": ["a", "b"], "format": "enum", "minLength": 1},
            "n": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "null"}], "default": None},
            "xs": {"type": "array", "items": {"type": "number"}, "maxItems": 3},
        },
        "required": ["q"],
    }
    declaration = _declaration(schema)
    assert declaration["parameters"] == schema and "parametersJsonSchema" not in declaration
    types.FunctionDeclaration.model_validate(declaration)  # the SDK's Schema takes it


def test_every_keyword_of_the_table_is_a_gemini_schema_field() -> None:
    """The table names nothing Gemini's Schema lacks (the SDK's Schema fields, camelCased)."""
    fields = {
        "".join(w if i == 0 else w.title() for i, w in enumerate(name.split("_")))
        for name in types.Schema.model_fields
    }
    assert set(PARAMETERS) <= fields, set(PARAMETERS) - fields


def test_a_recorded_parametersJsonSchema_replays_as_such() -> None:
    recorded = [
        {"name": "g", "description": "d", "parametersJsonSchema": _OBJECT},
        {
            "name": "h",
            "description": "d",
            "parameters": {"type": "OBJECT", "properties": {"q": {"type": "STRING"}}},
        },
    ]
    imported = _import(recorded)
    g, h = imported.tools
    assert g.provider_data == {"gemini": {"schema_field": "parametersJsonSchema"}}
    assert (
        h.provider_data is not None and h.provider_data["gemini"]["parameters"] == recorded[1]["parameters"]
    )
    body = to_wire(imported.messages, imported.tools, imported.options)
    assert body["tools"][0]["functionDeclarations"] == recorded  # `OBJECT` too: as it was sent
    edited = h.model_copy(update={"description": "e"})  # written from the canonical schema
    body = to_wire(imported.messages, [g, edited], imported.options)
    assert body["tools"][0]["functionDeclarations"] == [
        {"name": "g", "description": "d", "parametersJsonSchema": _OBJECT},
        {"name": "h", "description": "e", "parameters": _OBJECT},
    ]


def test_other_providers_ignore_gemini_provider_data() -> None:
    import metis.adapters

    (tool,) = _import([{"name": "g", "parametersJsonSchema": _OBJECT}]).tools
    ids = ToolIdMap(SESSION)
    for provider, model in (("anthropic", "anthropic:claude-sonnet-4-6"), ("openai", "openai:gpt-5")):
        text = str(metis.adapters.get(provider).to_wire([], [tool], options(ids, model=model)))
        assert "schema_field" not in text and "parametersJsonSchema" not in text


# --- item 2: empty text turns ---------------------------------------------------------------------


def test_an_empty_text_turn_survives_import_and_replay() -> None:
    """A recorded conversation whose first user turn is one empty text part (a client sending a
    blank prompt before an image-less retry): the turn is kept, so the replay still starts with
    a user turn and keeps every turn."""
    recorded = {
        "contents": [
            {"role": "user", "parts": [{"text": ""}]},
            {"role": "model", "parts": [{"text": "Hello! How can I help?"}]},
            {"role": "user", "parts": [{"text": "Weather in Paris?"}, {"text": ""}]},
            {"role": "model", "parts": [{"text": "", "thoughtSignature": "c2lnbmF0dXJl"}]},
            {"role": "model", "parts": [{"text": ""}]},
            {"role": "user", "parts": [{"text": "And Oslo?"}]},
        ]
    }
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ids)
    assert [m.role.value for m in imported.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
        "user",
    ]
    assert [(d["path"], d["value"]) for d in imported.dropped] == [("contents[2].parts[1]", {"text": ""})]
    body = to_wire(imported.messages, imported.tools, imported.options)
    expected = [dict(c) for c in recorded["contents"]]
    expected[2] = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}  # the recorded drop
    assert body["contents"] == expected


def test_an_empty_text_block_is_written_only_when_it_stands_for_the_turn() -> None:
    from tests.support.gemini_support import message, user

    ids = ToolIdMap(SESSION)
    blank = message("user", [{"type": "text", "text": ""}])
    mixed = user("look", {"type": "text", "text": ""})
    body = to_wire([blank, mixed], [], options(ids))
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": ""}]},
        {"role": "user", "parts": [{"text": "look"}]},
    ]


def test_sdk_serialized_declarations_import_to_golden_and_replay() -> None:
    """Declarations as google-genai writes them (tests/golden/gemini/SOURCES.md) -> canonical
    tools (golden), and back as recorded; once edited, the JSON-Schema-only schema and the
    recorded parametersJsonSchema go in that field, the OpenAPI-subset one as lower-case
    `parameters`."""
    from tests.support import golden
    from tests.support.gemini_support import PROVIDER, wire

    recorded = wire("request_tool_schemas.json")
    imported = ADAPTER.from_wire_request(recorded, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    view = {
        "tools": [t.model_dump(mode="json", exclude_none=True) for t in imported.tools],
        "dropped": imported.dropped,
    }
    golden.check(PROVIDER, golden.expected_name("request_tool_schemas.json"), view)
    problems = {t.name: [at for at, _ in schema_problems(t.input_schema)] for t in imported.tools}
    assert problems == {
        "book_table": ["/properties/party_size/format"],  # OpenAPI's int32: valid JSON Schema, not §5.4
        "search_menu": [],
        "get_time": [],
    }
    # as recorded, proto type numbers too (the REST API reads them; google-genai's Type enum
    # does not, so this body is not put through the SDK check)
    replayed = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)["tools"]
    assert replayed == recorded["tools"]
    edited = [t.model_copy(update={"description": t.description + " Edited."}) for t in imported.tools]
    book, search, clock = to_wire(imported.messages, edited, imported.options)["tools"][0][
        "functionDeclarations"
    ]
    assert set(book) == {"name", "description", "parametersJsonSchema"}  # `examples`, `email`
    assert search == {
        **recorded["tools"][0]["functionDeclarations"][1],
        "description": "Search a menu. Edited.",
    }
    assert clock["parameters"] == {
        "type": "object",
        "properties": {"zone": {"type": "string", "maxLength": 64}},
        "required": ["zone"],
    }
