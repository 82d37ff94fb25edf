"""The base class of generated models whose schema says more than their type hints.

Why it lives here and not in generated/: it is hand-written code, and generated/ holds
only what `python -m codegen` derives from the schema. Why it is its own package and not
part of `metis`: the generated models import it, and `metis` imports the generated
models, so a base inside `metis` would make `import metis_schema.v1` on its own circular.
It imports nothing but pydantic.

What it adds to what datamodel-code-generator writes (read from the bundled schema beside
the generated module, once per class, at class creation):

- Documents carry every field the schema requires, even one the model defaults (a
  single-value `const` such as `schema_version`): `model_validate` and
  `model_validate_json` read documents (pydantic's validation context `DOCUMENT`, which a
  TypeAdapter reading documents passes too) and refuse a document without it, as any JSON
  Schema validator does. A model built in code (`Message(...)`) is of its class's version
  by construction, so the constructor fills such defaults in.
- Formatted strings are held to their JSON Schema syntax: pydantic's datetime and date
  parsers are lenient (a space for `T`, no seconds, `+0000`, a unix time as a string), so
  `date-time` strings must be RFC 3339 and `date` strings `YYYY-MM-DD`.
- Decimals are written in fixed-point notation in JSON mode: pydantic writes
  `Decimal("0.0000001")` as `"1E-7"`, which the schema's decimal pattern refuses, and
  hashing (metis.canonical) hashes that JSON form.

The schema's rules on how a message's parts fit together (spec §5: the `allOf` if/then
clauses) are not evaluated here: `metis.invariants` is their one executable copy, and
tests/schema/test_vectors.py holds it to the schema's verdict on every vector.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import (
    BaseModel,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

BUNDLE = "metis.bundle.json"
_ABSENT = object()
_FORMATS: dict[str, tuple[type, ...]] = {
    "decimal": (Decimal,),
    "date-time": (_dt.datetime,),
    "date": (_dt.date,),
}
_SYNTAX: dict[str, re.Pattern[str]] = {
    # RFC 3339 §5.6 `date-time` (the JSON Schema meaning of the format); calendar ranges
    # are left to pydantic, which refuses e.g. month 13 on its own.
    "date-time": re.compile(
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
    ),
    # RFC 3339 `full-date`.
    "date": re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}"),
}
_FIXED_POINT = r"^[0-9]+(\.[0-9]+)?$"
"""The schema's decimal pattern (Money). For a Decimal, `format(d, "f")` matches it exactly
when `d` is finite and not negative (nor -0), so `Formatted.plain` tests that instead of
formatting and matching, and only formats to word the error."""


class SchemaBaseError(Exception):
    """A generated class has no definition in the bundle beside its module."""


@cache
def _bundle(module_file: str) -> dict[str, Any]:
    path = Path(module_file).parent / "schema" / BUNDLE
    defs: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["$defs"]
    return defs


def _deref(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


@dataclass(frozen=True)
class Formatted:
    """One field whose schema has a `format` that pydantic's type does not hold exactly."""

    field: str
    fmt: str
    pattern: re.Pattern[str] | None
    kinds: tuple[type, ...] = ()
    syntax: re.Pattern[str] | None = None
    fixed_point: bool = False
    settled: tuple[type, ...] = ()
    """Exact types this check always passes (a datetime for `date-time`: only strings are
    held to a syntax), so the before-validator can skip them."""

    def settles(self, value: Any) -> bool:
        """`value` needs no closer look (`input_problems` finds nothing wrong with it): one
        call per field, whatever the value (a string is `well_formed`; a datetime is
        `settled`; a Decimal `plain`)."""
        if type(value) is str:
            return self.well_formed(value)
        return type(value) in self.settled or self.plain(value)

    def plain(self, value: Any) -> bool:
        """`value` is a Decimal this fixed-point field takes as it is (see `_FIXED_POINT`)."""
        return self.fixed_point and type(value) is Decimal and value.is_finite() and not value.is_signed()

    def well_formed(self, value: Any) -> bool:
        """`value` is a string this field takes as it is: of its format's syntax and of its
        own pattern, where it has them (exactly what `input_problems` finds nothing wrong
        with in a string). A stored `cost_usd` such as `"0.0042"` is one: every Usage a
        document holds is screened here, not by the full pass."""
        return (
            type(value) is str
            and (self.syntax is None or self.syntax.fullmatch(value) is not None)
            and (self.pattern is None or self.pattern.fullmatch(value) is not None)
        )


def _formatted_fields(definition: dict[str, Any], defs: dict[str, Any]) -> tuple[Formatted, ...]:
    found = []
    for name, prop in definition.get("properties", {}).items():
        for option in [prop, *prop.get("oneOf", []), *prop.get("anyOf", [])]:
            target = _deref(option, defs)
            fmt = target.get("format")
            if fmt in _FORMATS:
                pattern = re.compile(target["pattern"]) if "pattern" in target else None
                fixed = fmt == "decimal" and pattern is not None and pattern.pattern == _FIXED_POINT
                settled = () if fmt == "decimal" else _FORMATS[fmt]
                found.append(Formatted(name, fmt, pattern, _FORMATS[fmt], _SYNTAX.get(fmt), fixed, settled))
                break
    return tuple(found)


def input_problems(cls: type[SchemaModel], data: dict[str, Any], *, document: bool = False) -> list[str]:
    """What the before-validator refuses in one input dict (see the module doc); `document`:
    the dict is read as a document (its required fields must be there)."""
    problems = (
        [f"{name} is required" for name in cls.__schema_required__ if name not in data]
        if cls.__schema_required__ and document
        else []
    )
    for spec in cls.__schema_formatted__:
        value = data.get(spec.field, _ABSENT)
        if value is _ABSENT or value is None:
            continue
        if isinstance(value, spec.kinds):
            if spec.plain(value):
                continue
            text = format(value, "f") if isinstance(value, Decimal) else None
        elif isinstance(value, str):
            text = value
        else:
            problems.append(f"{spec.field} must be a {spec.fmt} string, got {type(value).__name__}")
            continue
        if spec.pattern is not None and text is not None and not spec.pattern.fullmatch(text):
            problems.append(f"{spec.field} {text!r:.60} does not match {spec.pattern.pattern}")
        if spec.syntax is not None and isinstance(value, str) and not spec.syntax.fullmatch(value):
            problems.append(f"{spec.field} {value!r:.60} is not an RFC 3339 {spec.fmt}")
    return problems


DOCUMENT_KEY = "metis_document"
DOCUMENT: dict[str, Any] = {DOCUMENT_KEY: True}
"""The validation context of a document read (`model_validate`, `model_validate_json`, or a
TypeAdapter called with `context=DOCUMENT`): the schema's required fields must be there.
pydantic hands the context to every nested model's validator, so one read of a Message
holds its Usage to the same rule. A model built in code (`Message(...)`) has no context."""


def document_context(context: Any = None) -> dict[str, Any]:
    """`context` (none, or a caller's own mapping) marked as a document read (`DOCUMENT`).

    The mark is a key of a dict, so a caller's context must be a mapping (copied, never
    changed): any other context would carry no mark, and the document's required fields
    would go unchecked without a word, so it is refused."""
    if context is None:
        return DOCUMENT
    if isinstance(context, Mapping):
        return {**context, DOCUMENT_KEY: True}
    raise TypeError(
        f"the validation context of a document read must be a mapping, got {type(context).__name__}"
    )


def _is_document(context: Any) -> bool:
    return type(context) is dict and context.get(DOCUMENT_KEY) is True


class SchemaModel(BaseModel):
    """Base of generated models whose schema has formats or defaulted required fields."""

    __schema_formatted__: ClassVar[tuple[Formatted, ...]] = ()
    __schema_decimals__: ClassVar[tuple[str, ...]] = ()
    """Fields of `__schema_formatted__` that are decimals (what JSON serialization rewrites)."""
    __schema_required__: ClassVar[tuple[str, ...]] = ()
    """Fields the schema requires but the model defaults: a document must still carry them."""
    __schema_required_keys__: ClassVar[frozenset[str]] = frozenset()
    """`__schema_required__` as a set (one comparison with an input's keys)."""

    @classmethod
    def model_validate(cls, *args: Any, **kwargs: Any) -> Self:
        kwargs["context"] = document_context(kwargs.get("context"))
        return super().model_validate(*args, **kwargs)

    @classmethod
    def model_validate_json(cls, *args: Any, **kwargs: Any) -> Self:
        kwargs["context"] = document_context(kwargs.get("context"))
        return super().model_validate_json(*args, **kwargs)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if module_file is None:
            return
        defs = _bundle(module_file)
        definition = defs.get(cls.__name__)
        if definition is None:
            raise SchemaBaseError(f"{cls.__module__}.{cls.__name__}: no $defs/{cls.__name__} in {BUNDLE}")
        cls.__schema_formatted__ = _formatted_fields(definition, defs)
        cls.__schema_decimals__ = tuple(s.field for s in cls.__schema_formatted__ if s.fmt == "decimal")
        cls.__schema_required__ = tuple(
            name
            for name in definition.get("required", ())
            if name in cls.model_fields and not cls.model_fields[name].is_required()
        )
        cls.__schema_required_keys__ = frozenset(cls.__schema_required__)

    @model_validator(mode="before")
    @classmethod
    def _schema_formats(cls, data: Any, info: ValidationInfo) -> Any:
        required = cls.__schema_required__
        if not (cls.__schema_formatted__ or required) or not isinstance(data, dict):
            return data
        # Values that need no check (a datetime, a plain non-negative Decimal) are the norm
        # for models built in code, and a well-formed date-time string for documents (every
        # stored row's created_at); only the rest takes the full pass, which words the problems.
        for spec in cls.__schema_formatted__:
            value = data.get(spec.field)
            if value is None or spec.settles(value):
                continue
            break
        else:
            if not required or data.keys() >= cls.__schema_required_keys__ or not _is_document(info.context):
                return data
        problems = input_problems(cls, data, document=_is_document(info.context))
        if problems:
            raise PydanticCustomError("schema_rule", "{problems}", {"problems": "; ".join(problems)})
        return data

    @model_serializer(mode="wrap")
    def _schema_serialize(  # type: ignore[no-untyped-def]
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ):
        # No return annotation on purpose: pydantic then keeps the model's own
        # serialization JSON schema, where `-> Any` would erase it to `{}`.
        data = handler(self)
        decimals = type(self).__schema_decimals__
        if decimals and isinstance(data, dict) and info.mode_is_json():
            for name in decimals:
                value = getattr(self, name, None)
                if isinstance(value, Decimal) and name in data:
                    data[name] = format(value, "f")
        return data


_EXPLAINERS: dict[str, tuple[str, str]] = {"ToolDefinition": ("metis.tools", "definition_error")}
"""Class name -> (module, function) of the runtime code that explains its constructor's errors."""


class ExplainedModel(BaseModel):
    """Base of generated models that people build by hand (`ToolDefinition(...)`): a
    constructor that fails raises metis's typed error, which says what each bad field is
    for and what it takes, in place of pydantic's ValidationError.

    The explaining lives in the runtime (`_EXPLAINERS`), imported only when a constructor
    fails: the runtime imports these models, so this package imports nothing of it up front.
    `model_validate` (reading documents) is left as it is: its callers explain on their own.
    """

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            where = _EXPLAINERS.get(type(self).__name__)
            if where is None:
                raise
            import importlib  # the runtime, loaded by now in any process that has metis

            explain = getattr(importlib.import_module(where[0]), where[1])
            raise explain(data, exc) from None

    # Marked as pydantic's own constructor (as pydantic's RootModel marks its __init__), so
    # validation (model_validate, a ToolDefinition inside another model) keeps pydantic's
    # path and errors; only a direct call, `ToolDefinition(...)`, goes through the above.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


__all__ = [
    "DOCUMENT",
    "ExplainedModel",
    "Formatted",
    "SchemaBaseError",
    "SchemaModel",
    "document_context",
    "input_problems",
]
