"""Tool registry: §4.4 definitions, the §5.4 schema subset (§11.1.5), §5.2.4 input checks."""

from __future__ import annotations

from typing import Any

import pytest
from metis import SideEffects, ToolDefinition, ToolInputError, ToolSchemaError, UnknownToolError
from metis.errors import FieldProblem
from metis.events import RecordingSink
from metis.tools import DISALLOWED, ToolRegistry, schema_problems


def tool(name: str = "read_file", schema: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Read a file in the workspace.",
        "input_schema": schema
        if schema is not None
        else {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Workspace-relative path.", "minLength": 1},
                "encoding": {"type": "string", "enum": ["utf-8", "latin-1"], "default": "utf-8"},
                "lines": {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 2},
                "since": {"type": ["string", "null"], "format": "date-time"},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        "side_effects": "read",
        **extra,
    }


def test_register_mapping_and_definition() -> None:
    registry = ToolRegistry()
    registered = registry.register(tool())
    assert isinstance(registered, ToolDefinition)
    assert registered.side_effects == SideEffects.read
    registry.register(
        ToolDefinition(
            name="run",
            description="Run a command.",
            input_schema={"type": "object"},
            side_effects=SideEffects.execute,
        )
    )
    assert [t.name for t in registry] == ["read_file", "run"]
    assert registry.get("run").side_effects == SideEffects.execute
    assert len(registry) == 2 and "run" in registry and "nope" not in registry


def test_side_effects_is_required() -> None:
    definition = tool()
    del definition["side_effects"]
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry().register(definition)
    assert caught.value.path == "/side_effects"
    assert "side_effects" in str(caught.value) and "read_file" in str(caught.value)


def test_invalid_definition_fields_are_tool_schema_errors() -> None:
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry().register(tool(name="read file"))  # v2 names: letters, digits, _ and -
    assert caught.value.path == "/name"
    with pytest.raises(ToolSchemaError):
        ToolRegistry().register(tool(side_effects="sometimes"))
    with pytest.raises(ToolSchemaError):
        ToolRegistry().register("read_file")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["getWeather", "Read-File", "x", "a" * 64])
def test_v2_tool_names_are_what_providers_accept_in_common(name: str) -> None:
    # Real Ollama and Gemini traffic names tools in camelCase; v1's snake_case rule refused them.
    assert ToolRegistry([tool(name=name)]).get(name).name == name


def test_duplicate_names_are_rejected() -> None:
    registry = ToolRegistry([tool()])
    with pytest.raises(ToolSchemaError, match="already registered"):
        registry.register(tool())


def test_unknown_tool() -> None:
    registry = ToolRegistry([tool()])
    with pytest.raises(UnknownToolError) as caught:
        registry.get("write_file")
    assert "write_file" in str(caught.value) and "read_file" in str(caught.value)
    with pytest.raises(UnknownToolError):
        registry.validate_input("write_file", {})


# --- §5.4 subset: each disallowed construct fails loudly with its pointer (§11.1.5) -------------------

DISALLOWED_CASES: list[tuple[dict[str, Any], str]] = [
    ({"type": "object", "properties": {"p": {"oneOf": [{"type": "string"}]}}}, "/properties/p/oneOf"),
    ({"type": "object", "allOf": [{"required": ["a"]}]}, "/allOf"),
    ({"type": "object", "properties": {"p": {"not": {"type": "null"}}}}, "/properties/p/not"),
    ({"type": "object", "properties": {"p": {"$defs": {"P": {"type": "string"}}}}}, "/properties/p/$defs"),
    ({"type": "object", "properties": {"p": {"$ref": "#/$defs/Missing"}}}, "/properties/p/$ref"),
    ({"type": "object", "properties": {"p": {"$ref": "https://example.com/p.json"}}}, "/properties/p/$ref"),
    (
        {"type": "object", "properties": {"p": {"anyOf": [{"type": "string"}, {"oneOf": []}]}}},
        "/properties/p/anyOf/1/oneOf",
    ),
    ({"type": "object", "properties": {"p": {"$ref": "#/definitions/P"}}}, "/properties/p/$ref"),
    ({"type": "object", "definitions": {"P": {"type": "string"}}}, "/definitions"),
    ({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}, "/if"),
    ({"type": "object", "else": {"required": ["b"]}}, "/else"),
    ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "/patternProperties"),
    ({"type": "object", "additionalProperties": {"type": "string"}}, "/additionalProperties"),
    (
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"anyOf": []}}}},
        "/properties/xs/items/anyOf",
    ),
    ({"type": "object", "properties": {"a/b": {"oneOf": []}}}, "/properties/a~1b/oneOf"),
]


@pytest.mark.parametrize(("schema", "pointer"), DISALLOWED_CASES, ids=[p for _, p in DISALLOWED_CASES])
def test_disallowed_constructs_fail_registration_with_their_pointer(
    schema: dict[str, Any], pointer: str
) -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolSchemaError) as caught:
        registry.register(tool(schema=schema))
    assert caught.value.path == pointer
    construct = pointer.rsplit("/", 1)[-1]
    assert construct in str(caught.value)
    assert "read_file" not in registry  # nothing half-registered


def test_every_problem_is_listed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": []},
            "b": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    pointers = [p for p, _ in schema_problems(schema)]
    assert pointers == ["/properties/a/anyOf", "/properties/b/additionalProperties"]


def test_disallowed_set_covers_the_spec() -> None:
    assert {"oneOf", "allOf", "not", "if", "then", "else", "patternProperties"} <= DISALLOWED


def test_pydantic_models_register_as_they_are() -> None:
    """v2 widens §5.4 to what pydantic writes for ordinary models: an Optional field is
    anyOf [X, null], a nested model is a $ref into the root's $defs."""
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int
        y: int | None = None

    class Route(BaseModel):
        name: str
        stops: list[Point]
        via: Point | None = None

    schema = Route.model_json_schema()
    assert "$defs" in schema and "anyOf" in str(schema)
    registered = ToolRegistry([tool(input_schema=schema)])
    registered.validate_input("read_file", {"name": "r", "stops": [{"x": 1, "y": None}]})
    with pytest.raises(ToolInputError):
        registered.require_valid_input("read_file", {"name": "r", "stops": [{"x": "one"}]})


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"type": "array"}, "/type"),
        ({"properties": {}}, "/type"),
        ({"type": "object", "properties": {"p": {"type": "date"}}}, "/properties/p/type"),
        (
            {"type": "object", "properties": {"p": {"type": "string", "format": "credit-card"}}},
            "/properties/p/format",
        ),
        (
            {"type": "object", "properties": {"p": {"type": "array", "prefixItems": [{"type": "string"}]}}},
            "/properties/p/prefixItems",
        ),
        (
            {"type": "object", "properties": {"p": {"type": "array", "items": [{"type": "string"}]}}},
            "/properties/p/items",
        ),
        ({"type": "object", "nullable": True}, "/nullable"),
        ({"type": "object", "required": "path"}, "/required"),
        ({"type": "object", "properties": {"p": {"enum": []}}}, "/properties/p/enum"),
        (
            {"type": "object", "properties": {"p": {"type": "string", "minLength": "one"}}},
            "/properties/p/minLength",
        ),
        (  # no JSON can carry it: sent, it would have become null
            {"type": "object", "properties": {"p": {"type": "number", "maximum": float("nan")}}},
            "/properties/p/maximum",
        ),
        ({"type": "object", "examples": [{"p": float("inf")}]}, "/examples/0/p"),
    ],
)
def test_outside_the_subset_or_malformed(schema: dict[str, Any], pointer: str) -> None:
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry().register(tool(schema=schema))
    assert caught.value.path == pointer


def test_allowed_keywords_register() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Args",
        "description": "Arguments.",
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 10, "examples": ["abc"]},
            "count": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 1},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "flag": {"type": "boolean", "const": True},
            "nothing": {"type": "null"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 0, "uniqueItems": True},
            "nested": {
                "type": "object",
                "properties": {"anyOf": {"type": "string"}},  # a property *named* anyOf is fine
                "additionalProperties": True,
            },
            "when": {"type": "string", "format": "date"},
        },
        "required": ["name"],
        "additionalProperties": False,
        "$comment": "ok",
    }
    assert schema_problems(schema) == []
    ToolRegistry().register(tool(schema=schema))


# --- §5.2.4 input validation -----------------------------------------------------------------------


def test_valid_input_has_no_problems_and_no_event() -> None:
    sink = RecordingSink()
    registry = ToolRegistry([tool()])
    assert registry.validate_input("read_file", {"path": "README.md", "lines": [1, 2]}, events=sink) == []
    assert sink.events == []


def test_invalid_input_lists_problems_and_emits_tool_input_invalid() -> None:
    sink = RecordingSink()
    registry = ToolRegistry([tool()])
    problems = registry.validate_input(
        "read_file",
        {"path": 3, "lines": [0], "color": "red"},
        tool_use_id="tu_01HZ0000000000000000000001",
        events=sink,
    )
    assert problems == [
        FieldProblem("input", "Additional properties are not allowed ('color' was unexpected)"),
        FieldProblem("input.lines[0]", "0 is less than the minimum of 1"),
        FieldProblem("input.path", "3 is not of type 'string'"),
    ]
    [event] = sink.of_type("tool_input_invalid")
    assert event.payload["tool_name"] == "read_file"
    assert event.payload["tool_use_id"] == "tu_01HZ0000000000000000000001"
    assert event.payload["problems"] == [str(p) for p in problems]
    assert event.payload["problems"][1] == "input.lines[0]: 0 is less than the minimum of 1"


def test_problem_paths_survive_property_names_with_colons() -> None:
    """A path and its problem travel apart: a property named 'a: b' cannot blur them."""
    registry = ToolRegistry(
        [
            ToolDefinition(
                name="odd",
                description="odd names",
                side_effects="none",
                input_schema={"type": "object", "properties": {"a: b": {"type": "integer"}}},
            )
        ]
    )
    [problem] = registry.validate_input("odd", {"a: b": "x"})
    assert problem.path == "input.a: b"
    assert problem.problem == "'x' is not of type 'integer'"


def test_missing_required_and_non_object_input() -> None:
    registry = ToolRegistry([tool()])
    assert registry.validate_input("read_file", {}) == [
        FieldProblem("input", "'path' is a required property")
    ]
    assert registry.validate_input("read_file", ["README.md"]) == [
        FieldProblem("input", "must be a JSON object, got list")
    ]


def test_format_is_checked() -> None:
    registry = ToolRegistry([tool()])
    assert registry.validate_input("read_file", {"path": "a", "since": "2026-05-08T12:00:00Z"}) == []
    assert registry.validate_input("read_file", {"path": "a", "since": "last tuesday"}) != []


def test_require_valid_input_raises_at_dispatch() -> None:
    registry = ToolRegistry([tool()])
    registry.require_valid_input("read_file", {"path": "x"})
    with pytest.raises(ToolInputError) as caught:
        registry.require_valid_input("read_file", {"path": 1}, tool_use_id="tu_01HZ0000000000000000000001")
    assert "read_file" in str(caught.value) and "tu_01HZ0000000000000000000001" in str(caught.value)


def test_the_public_constructor_raises_a_typed_explained_error() -> None:
    import metis

    with pytest.raises(metis.ToolDefinitionError) as caught:
        metis.ToolDefinition(name="read_file", description="Read a file", input_schema={"type": "object"})
    error = caught.value
    assert isinstance(error, ToolSchemaError) and isinstance(error, ValueError)
    assert error.path == "/side_effects"
    assert "tool 'read_file' does not declare side_effects" in str(error)
    for word in ("none", "read", "write", "execute", "network", "confirmation prompts", "§4.4"):
        assert word in str(error)
    assert [p.path for p in error.problems] == ["side_effects"]


def test_the_constructor_names_every_bad_field_and_what_it_takes() -> None:
    import metis

    with pytest.raises(metis.ToolDefinitionError) as caught:
        metis.ToolDefinition(
            name="read file", description="x", input_schema={"type": "object"}, side_effects="often"
        )
    text = str(caught.value)
    assert "name: must be 1 to 64 letters, digits, '_' or '-'" in text
    assert "side_effects: Input should be 'none', 'read', 'write', 'execute' or 'network'" in text
    assert {p.path for p in caught.value.problems} == {"name", "side_effects"}


def test_a_constructed_definition_is_the_schema_model_and_registers() -> None:
    import metis
    from metis_schema.v3 import ToolDefinition as SchemaToolDefinition

    made = metis.ToolDefinition(
        name="read_file", description="x", input_schema={"type": "object"}, side_effects="read"
    )
    assert isinstance(made, SchemaToolDefinition)
    assert made.requires_workspace is True and made.strict is False
    assert ToolRegistry([made]).get("read_file") is made


def test_reading_a_definition_keeps_pydantics_validation_path() -> None:
    from metis_schema.v3 import ToolDefinition as SchemaToolDefinition
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as caught:
        SchemaToolDefinition.model_validate(
            {"name": "a", "description": "x", "input_schema": {"type": "object"}}
        )
    assert caught.value.errors()[0]["type"] == "missing"
