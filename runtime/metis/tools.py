"""The tool registry: tool definitions checked at registration, inputs checked at use.

Spec §5.4 limits a tool's `input_schema` to the part of JSON Schema that every provider
accepts reliably, and says a tool outside it fails *at registration*, loudly, not at the
first request a provider rejects. The subset enforced here:

- Structure: `type` (string, number, integer, boolean, null, object, array, or a list of
  those), `properties`, `required`, `items` (one schema), `enum`,
  `additionalProperties` as a boolean.
- Annotations and simple bounds every provider tolerates: `description`, `title`,
  `default`, `examples`, `format` (basic formats only, see `ALLOWED_FORMATS`), `const`,
  `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
  `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`, `uniqueItems`,
  `$comment`, and `$schema` at the root only.
- Since schema v2, what Anthropic, OpenAI and Gemini all take today and pydantic writes
  for every ordinary model: `anyOf` (each branch a schema of this subset; an `Optional`
  field is `anyOf: [X, {"type": "null"}]`), `$defs` at the root, and `$ref` to one of them
  (`#/$defs/Name`, the form nested pydantic models use). An adapter whose provider cannot
  take references lowers them (`adapters._kit.tool_schema.inline_refs`; Gemini's
  `parametersJsonSchema`).
- Disallowed (named in the error with its JSON pointer): any other `$ref`, `definitions`,
  `oneOf`, `allOf`, `not`, `if`/`then`/`else`, `patternProperties`,
  `additionalProperties` as a schema. Any other keyword is refused too: it is outside the
  subset, and a keyword one provider ignores and another rejects is the failure the
  subset exists to prevent.

The root must be `"type": "object"`. Inputs are validated with jsonschema (Draft 2020-12)
at ingress and dispatch (§5.2.4); an invalid input emits a `tool_input_invalid` event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from metis_schema import v3 as _models
from pydantic import ValidationError

from ._json import non_finite
from .errors import FieldProblem, ToolDefinitionError, ToolInputError, ToolSchemaError, UnknownToolError
from .events import EventSink, emit
from .validation import field_path

ALLOWED_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "object", "array"})
ALLOWED_FORMATS = frozenset(
    {"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uuid"}
)
DISALLOWED = frozenset(
    {
        "definitions",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "patternProperties",
        "dependentSchemas",
        "prefixItems",
    }
)
_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "$comment",
    }
)
_STRUCTURE = frozenset(
    {"type", "properties", "required", "items", "enum", "format", "additionalProperties", "anyOf", "$ref"}
)
_LOCAL_REF = "#/$defs/"


def _pointer(parts: tuple[str, ...]) -> str:
    """RFC 6901 JSON pointer ("" is the root)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def schema_problems(schema: Any) -> list[tuple[str, str]]:
    """(JSON pointer, problem) for every way `schema` leaves the §5.4 subset."""
    if not isinstance(schema, Mapping):
        return [("", f"input_schema must be a JSON object, got {type(schema).__name__}")]
    problems: list[tuple[str, str]] = []
    where = non_finite(dict(schema))
    if where is not None:  # no JSON can carry it: orjson would send null in its place
        problems.append((_pointer(tuple(map(str, where))), "NaN and Infinity are not JSON"))
    if schema.get("type") != "object":
        problems.append(("/type", f'the root must be "type": "object", got {schema.get("type")!r}'))
    defs = schema.get("$defs", {})
    _walk(schema, (), problems, root=True, defs=defs if isinstance(defs, Mapping) else {})
    if not problems:
        try:
            Draft202012Validator.check_schema(dict(schema))
        except SchemaError as exc:
            problems.append(
                (_pointer(tuple(str(p) for p in exc.path)), f"not a valid JSON Schema: {exc.message}")
            )
    return problems


def _walk(
    schema: Mapping[str, Any],
    where: tuple[str, ...],
    problems: list[tuple[str, str]],
    *,
    root: bool,
    defs: Mapping[str, Any],
) -> None:
    for key, value in schema.items():
        at = (*where, key)
        if key in DISALLOWED:
            problems.append((_pointer(at), f"{key} is not allowed in a tool input_schema (spec §5.4)"))
        elif key == "$schema" and root:
            continue
        elif key == "$defs":
            if not root:
                problems.append((_pointer(at), "$defs belongs at the root of the input_schema"))
            elif not isinstance(value, Mapping):
                problems.append((_pointer(at), "$defs must be an object of schemas"))
            else:
                _each_schema(value.items(), at, problems, defs)
        elif key not in _STRUCTURE and key not in _ANNOTATIONS:
            problems.append((_pointer(at), f"{key} is outside the JSON Schema subset of spec §5.4"))
        else:
            _check_keyword(key, value, at, problems, defs)


def _each_schema(
    named: Iterable[tuple[str, Any]],
    at: tuple[str, ...],
    problems: list[tuple[str, str]],
    defs: Mapping[str, Any],
) -> None:
    for name, sub in named:
        if isinstance(sub, Mapping):
            _walk(sub, (*at, name), problems, root=False, defs=defs)
        else:
            problems.append((_pointer((*at, name)), "a schema must be an object"))


def _check_keyword(
    key: str, value: Any, at: tuple[str, ...], problems: list[tuple[str, str]], defs: Mapping[str, Any]
) -> None:
    here = _pointer(at)
    match key:
        case "$ref":
            name = (
                value[len(_LOCAL_REF) :] if isinstance(value, str) and value.startswith(_LOCAL_REF) else None
            )
            if name is None or "/" in name:
                problems.append(
                    (here, f"$ref must name one of the root's $defs (#/$defs/Name), got {value!r}")
                )
            elif name not in defs:
                problems.append((here, f"$ref {value!r} names no entry of $defs"))
        case "anyOf":
            if not isinstance(value, list) or not value:
                problems.append((here, "anyOf must be a non-empty list of schemas"))
                return
            _each_schema(((str(i), sub) for i, sub in enumerate(value)), at, problems, defs)
        case "type":
            names = value if isinstance(value, list) else [value]
            bad = [n for n in names if n not in ALLOWED_TYPES]
            if bad or not names:
                problems.append(
                    (here, f"type must be one of {sorted(ALLOWED_TYPES)} (or a list of them), got {value!r}")
                )
        case "properties":
            if not isinstance(value, Mapping):
                problems.append((here, "properties must be an object of schemas"))
                return
            _each_schema(value.items(), at, problems, defs)
        case "items":
            if isinstance(value, Mapping):
                _walk(value, at, problems, root=False, defs=defs)
            else:
                problems.append((here, "items must be one schema object (tuple forms are not allowed)"))
        case "additionalProperties":
            if not isinstance(value, bool):
                problems.append(
                    (here, "additionalProperties must be true or false, not a schema (spec §5.4)")
                )
        case "format":
            if value not in ALLOWED_FORMATS:
                problems.append(
                    (here, f"format {value!r} is not a basic format; use one of {sorted(ALLOWED_FORMATS)}")
                )
        case "required":
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                problems.append((here, "required must be a list of property names"))
        case "enum":
            if not isinstance(value, list) or not value:
                problems.append((here, "enum must be a non-empty list"))


SIDE_EFFECTS_HELP = (
    "side_effects says what running the tool can change: none (a pure computation), read "
    "(reads files or the network), write (writes files), execute (runs a shell or code) or "
    "network (changes something over the network). It drives confirmation prompts, routing "
    "constraints and trace classification, so it has no default: spec §4.4 has every tool "
    "declare it honestly"
)
"""Why `side_effects` is asked for: the hint of every error about it."""

_PROBLEM_TEXT = {
    (
        "name",
        "string_pattern_mismatch",
    ): "must be 1 to 64 letters, digits, '_' or '-' (what every provider takes)",
    ("side_effects", "missing"): "is required (none, read, write, execute or network)",
}


def definition_error(data: Mapping[str, Any], exc: ValidationError) -> ToolDefinitionError:
    """The typed, explained error for a tool definition pydantic refused: at registration,
    and from the constructor (`ToolDefinition(...)`, whose base `metis_base.ExplainedModel`
    raises this in place of pydantic's ValidationError)."""
    name = data.get("name", "(unnamed)")
    problems = []
    for error in exc.errors():
        where = field_path(error["loc"])
        problems.append(FieldProblem(where, _PROBLEM_TEXT.get((where, error["type"]), error["msg"])))
    paths = {p.path for p in problems}
    if "side_effects" in paths and "side_effects" not in data:
        message = f"tool {name!r} does not declare side_effects"
        rest = [p for p in problems if p.path != "side_effects"]
        if rest:
            message += f", and {'; '.join(map(str, rest))}"
    else:
        message = f"tool {name!r} is not a valid ToolDefinition: {'; '.join(map(str, problems))}"
    first = _pointer(tuple(str(part) for part in exc.errors()[0]["loc"]))
    hint = SIDE_EFFECTS_HELP if "side_effects" in paths else None
    return ToolDefinitionError(message, problems, path=first, hint=hint)


class _Registered:
    """A definition and its compiled input validator (built on first use)."""

    def __init__(self, tool: _models.ToolDefinition) -> None:
        self.tool = tool

    @cached_property
    def validator(self) -> Draft202012Validator:
        return Draft202012Validator(
            self.tool.input_schema, format_checker=Draft202012Validator.FORMAT_CHECKER
        )


class ToolRegistry:
    """Tools by canonical name; registration enforces §4.4 and §5.4, use enforces §5.2.4."""

    def __init__(self, tools: Iterable[_models.ToolDefinition | Mapping[str, Any]] = ()) -> None:
        self._tools: dict[str, _Registered] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: _models.ToolDefinition | Mapping[str, Any]) -> _models.ToolDefinition:
        """Add a tool; ToolSchemaError when it is malformed, outside §5.4, or already registered."""
        definition = _definition(tool)
        problems = schema_problems(definition.input_schema)
        if problems:
            listing = "; ".join(f"{p or '(root)'}: {what}" for p, what in problems)
            raise ToolSchemaError(
                f"tool {definition.name!r}: input_schema is outside the supported subset: {listing}",
                path=problems[0][0] or "(input_schema root)",
                hint="see metis.tools for the allowed keywords",
            )
        if definition.name in self._tools:
            raise ToolSchemaError(f"tool {definition.name!r} is already registered", path="/name")
        self._tools[definition.name] = _Registered(definition)
        return definition

    def get(self, name: str) -> _models.ToolDefinition:
        """The definition registered as `name`; UnknownToolError otherwise."""
        return self._entry(name).tool

    def _entry(self, name: str) -> _Registered:
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(sorted(self._tools)) or "none"
            raise UnknownToolError(
                f"no tool named {name!r} is registered", hint=f"registered: {known}"
            ) from None

    def __iter__(self) -> Iterator[_models.ToolDefinition]:
        return iter([entry.tool for entry in self._tools.values()])

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def validate_input(
        self,
        name: str,
        input: Any,
        *,
        tool_use_id: str | None = None,
        events: EventSink | None = None,
    ) -> list[FieldProblem]:
        """Problems of `input` against the tool's input_schema (empty when valid), each with
        its path inside the tool_use block (`input.lines[0]`) and what is wrong there.

        Any problem also emits `tool_input_invalid` with the tool name, tool_use_id and
        the problems (as `path: problem` text), so the agent loop can answer the model with
        an error result.
        """
        entry = self._entry(name)
        if not isinstance(input, Mapping):
            problems = [FieldProblem("input", f"must be a JSON object, got {type(input).__name__}")]
        else:
            errors = sorted(
                entry.validator.iter_errors(input), key=lambda e: [str(p) for p in e.absolute_path]
            )
            problems = [FieldProblem(field_path(("input", *e.absolute_path)), e.message) for e in errors]
        if problems:
            texts = [str(p) for p in problems]
            emit(
                events,
                "tool_input_invalid",
                tool_name=name,
                tool_use_id=tool_use_id,
                problems=texts,
                reason="; ".join(texts),
            )
        return problems

    def require_valid_input(
        self, name: str, input: Any, *, tool_use_id: str | None = None, events: EventSink | None = None
    ) -> None:
        """`validate_input`, raising ToolInputError (at dispatch, where running it is not an option)."""
        problems = self.validate_input(name, input, tool_use_id=tool_use_id, events=events)
        if problems:
            raise ToolInputError(
                f"input for tool {name!r} is invalid: {'; '.join(map(str, problems))}", path=tool_use_id
            )


def _definition(tool: _models.ToolDefinition | Mapping[str, Any]) -> _models.ToolDefinition:
    if isinstance(tool, _models.ToolDefinition):
        return tool
    if not isinstance(tool, Mapping):
        raise ToolSchemaError(
            f"a tool definition must be a ToolDefinition or a mapping, got {type(tool).__name__}"
        )
    try:
        return _models.ToolDefinition.model_validate(dict(tool))
    except ValidationError as exc:
        raise definition_error(tool, exc) from None


__all__ = [
    "ALLOWED_FORMATS",
    "ALLOWED_TYPES",
    "DISALLOWED",
    "SIDE_EFFECTS_HELP",
    "ToolRegistry",
    "definition_error",
    "schema_problems",
]
