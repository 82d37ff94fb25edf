"""Validate JSON documents against the bundled JSON Schema, offline (`metis validate`).

The generated pydantic models and the JSON Schema accept the same documents, but the
schema gives the better report for a person: every failure with its field path, and, when
a failure comes from a role rule (`allOf` if/then), the rule's own description, which
names its spec section (e.g. "§5.1.3 USER messages carry text and image blocks only.").
Validation is Draft 2020-12 with format checking, against the bundle shipped inside
`metis_schema`, resolved through a `referencing.Registry` holding only that bundle: no
network, no files outside the package. Validators are built once per kind and cached.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any, TypeVar

import metis_schema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from referencing import Registry, Resource

from .errors import DocumentError, FieldProblem, MetisError

MESSAGE_LIST = "MessageList"
"""Kind name of a JSON array of Messages (a conversation export)."""

KINDS: tuple[str, ...] = ("Message", MESSAGE_LIST, "PriceTable", "ModelCatalog", "ToolDefinition")
"""Document kinds `detect_kind` recognizes; `validate_document` also takes any `$defs` name."""

_MAX_PROBLEM = 200


def field_path(parts: Iterable[str | int]) -> str:
    """`("content", 0, "type")` -> `"content[0].type"`; the empty path is `""` (the root)."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@cache
def _bundle(version: int) -> dict[str, Any]:
    bundle: dict[str, Any] = json.loads(metis_schema.bundle_path(version).read_text(encoding="utf-8"))
    return bundle


@cache
def _validator(kind: str, version: int) -> Draft202012Validator:
    bundle = _bundle(version)
    if kind not in bundle["$defs"]:
        known = ", ".join((*KINDS, *sorted(bundle["$defs"])))
        raise DocumentError(f"unknown document kind {kind!r}", [], hint=f"known kinds: {known}")
    base = bundle["$id"]
    registry: Registry[Any] = Registry().with_resource(base, Resource.from_contents(bundle))
    return Draft202012Validator(
        {"$ref": f"{base}#/$defs/{kind}"},
        registry=registry,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


def detect_kind(doc: Any) -> str:
    """Which kind of metis document `doc` is, from its shape (for `metis validate`)."""
    if isinstance(doc, list):
        return MESSAGE_LIST
    if isinstance(doc, Mapping):
        if "catalog_version" in doc:
            return "ModelCatalog"
        if "pricing_version" in doc and "models" in doc:
            return "PriceTable"
        if "input_schema" in doc or "side_effects" in doc:
            return "ToolDefinition"
        if {"role", "content", "session_id"} & set(doc):
            return "Message"
    raise DocumentError(
        "document",
        [FieldProblem("", f"cannot tell what kind of metis document this {type(doc).__name__} is")],
        hint=f"pass the kind explicitly; one of {', '.join(KINDS)}",
    )


def validate_document(doc: Any, kind: str = "Message", *, version: int | None = None) -> list[FieldProblem]:
    """Every way `doc` fails the schema of `kind`, sorted by path; empty when it is valid.

    `version` defaults to the version a message document declares (a stored v1 message is
    checked against v1, the schema it was written in; reading migrates it from there), and
    otherwise to CURRENT_VERSION.

    A document handed in as Python values may hold what no JSON document can (a lone
    surrogate, a NaN, an integer past 4,300 digits, nesting past what `loads` reads): that
    is its one problem, reported at its place before the schema is asked (whose error
    messages repr the value, which raised ValueError for such an integer).
    """
    from ._json import MAX_DEPTH, printable, unwritable  # lazy: _json imports field_path from here

    bad = unwritable(doc, MAX_DEPTH)
    if bad is not None:
        return [FieldProblem(printable(field_path(bad[0])), bad[1])]
    if version is None:
        in_messages = kind in ("Message", MESSAGE_LIST)
        version = _declared_version(doc) if in_messages else metis_schema.CURRENT_VERSION
    if kind == MESSAGE_LIST and not isinstance(doc, list):
        return [FieldProblem("", f"expected a JSON array of messages, got {type(doc).__name__}")]
    try:
        if kind == MESSAGE_LIST:
            found: list[tuple[tuple[Any, ...], FieldProblem]] = []
            for i, item in enumerate(doc):
                found.extend(_problems("Message", item, version, prefix=(i,)))
            return _sorted(found)
        return _sorted(_problems(kind, doc, version, prefix=()))
    except RecursionError:  # the schema validator recurses per level, and reprs what fails
        return [FieldProblem("", "nested too deeply to check against the schema")]


def _declared_version(doc: Any) -> int:
    """The schema version a message (or the first of a list) declares, when this metis knows it."""
    first = doc[0] if isinstance(doc, list) and doc else doc
    declared = first.get("schema_version") if isinstance(first, Mapping) else None
    if isinstance(declared, int) and not isinstance(declared, bool) and declared in metis_schema.VERSIONS:
        return declared
    return metis_schema.CURRENT_VERSION


def _sorted(found: Iterable[tuple[tuple[Any, ...], FieldProblem]]) -> list[FieldProblem]:
    unique = {(_sort_key(parts), problem) for parts, problem in found}
    return [problem for _, problem in sorted(unique, key=lambda item: (item[0], item[1].problem))]


def _sort_key(parts: Sequence[Any]) -> tuple[tuple[int, int, str], ...]:
    # Indices sort numerically (content[2] before content[10]) and before names.
    return tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in parts)


def _problems(
    kind: str, doc: Any, version: int, *, prefix: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], FieldProblem]]:
    validator = _validator(kind, version)
    defs = _bundle(version)["$defs"]
    for error in validator.iter_errors(doc):
        for leaf in _leaves(error):
            yield from _describe(leaf, _rule(leaf, defs[kind], defs), prefix)


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors worth reporting: inside a failed `oneOf`, only the branch that was meant."""
    if error.validator != "oneOf" or not error.context:
        yield error
        return
    branch = _intended_branch(error)
    if branch is None:
        yield error
        return
    for sub in error.context:
        if sub.relative_schema_path and sub.relative_schema_path[0] == branch:
            yield from _leaves(sub)


def _intended_branch(error: ValidationError) -> int | None:
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance
    discriminator = schema.get("discriminator")
    if isinstance(discriminator, Mapping) and isinstance(instance, Mapping):
        tag = instance.get(discriminator.get("propertyName"))
        if not isinstance(tag, str):  # a `type` that is an object or a list names no branch
            return None
        target = discriminator.get("mapping", {}).get(tag)
        for i, option in enumerate(schema.get("oneOf", [])):
            if isinstance(option, Mapping) and option.get("$ref") == target:
                return i
        return None  # unknown tag: the oneOf error itself says so
    # A nullable reference (`oneOf: [X, null]`): the one branch whose root type matched.
    branches: set[int] = set()
    wrong_type: set[int] = set()
    for sub in error.context or []:
        path = list(sub.relative_schema_path)
        if not path or not isinstance(path[0], int):
            continue
        branches.add(path[0])
        if sub.validator == "type" and len(path) == 2:
            wrong_type.add(path[0])
    candidates = branches - wrong_type
    return candidates.pop() if len(candidates) == 1 else None


def _describe(
    error: ValidationError, rule: str | None, prefix: tuple[Any, ...]
) -> Iterator[tuple[tuple[Any, ...], FieldProblem]]:
    parts = (*prefix, *error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, Mapping):
        names = error.validator_value if isinstance(error.validator_value, list) else []
        for name in names:
            if name not in instance:
                yield (*parts, name), FieldProblem(field_path((*parts, name)), "is required", rule)
        return
    if error.validator == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {}) if isinstance(error.schema, Mapping) else {}
        for name in instance:
            if name not in known:
                yield (
                    (*parts, name),
                    FieldProblem(field_path((*parts, name)), "is not an allowed field", rule),
                )
        return
    discriminator = error.schema.get("discriminator") if isinstance(error.schema, Mapping) else None
    if error.validator == "oneOf" and isinstance(discriminator, Mapping) and isinstance(instance, Mapping):
        tag = discriminator.get("propertyName", "type")
        known = ", ".join(discriminator.get("mapping", {}))
        where = (*parts, tag)
        problem = f"unknown {tag} {instance.get(tag)!r}; expected one of {known}"
        yield where, FieldProblem(field_path(where), problem, rule)
        return
    message = error.message
    if len(message) > _MAX_PROBLEM:
        message = message[: _MAX_PROBLEM - 3] + "..."
    yield parts, FieldProblem(field_path(parts), message, rule)


def _rule(error: ValidationError, start: Mapping[str, Any], defs: Mapping[str, Any]) -> str | None:
    """The description of the innermost `allOf` if/then clause the failure sits in, if any.

    `absolute_schema_path` skips `$ref` hops, so the walk follows a `$ref` whenever the
    next key is not in the current node.
    """
    path = list(error.absolute_schema_path)
    node: Any = start
    found: str | None = None
    for i, key in enumerate(path):
        node = _through_refs(node, key, defs)
        if key == "allOf" and i + 2 < len(path) and path[i + 2] == "then" and isinstance(node, Mapping):
            clause = node.get("allOf", [])[path[i + 1]]
            if isinstance(clause, Mapping) and isinstance(clause.get("description"), str):
                found = clause["description"]
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            break
    return found


def _through_refs(node: Any, key: Any, defs: Mapping[str, Any]) -> Any:
    while isinstance(node, Mapping) and key not in node and isinstance(node.get("$ref"), str):
        node = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
    return node


def explain(doc: Any, kind: str, error: PydanticValidationError) -> list[FieldProblem]:
    """Why the pydantic model of `kind` refused `doc` (JSON text or data), path by path.

    The schema's report is preferred (exact paths, rule descriptions); pydantic's own
    errors are the fallback for the rare failure only pydantic sees.
    """
    if isinstance(doc, str | bytes):
        try:
            doc = json.loads(doc)
        except ValueError:
            doc = None
    problems = validate_document(doc, kind) if doc is not None else []
    return problems or pydantic_problems(error)


_Model = TypeVar("_Model", bound=BaseModel)


def parse_document(model: type[_Model], text: str, *, source: str, error: type[MetisError]) -> _Model:
    """`model` read from the JSON document `text` (a data file metis ships or a user gives:
    the catalog, a price table), or `error` saying every problem the schema finds, each at
    its path, and naming `source`."""
    try:
        return model.model_validate_json(text)
    except PydanticValidationError as exc:
        problems = explain(text, model.__name__, exc)
        listing = "; ".join(str(p) for p in problems)
        raise error(f"{source} is invalid: {listing}", path=problems[0].path) from exc


def pydantic_problems(error: PydanticValidationError) -> list[FieldProblem]:
    """pydantic's own errors as FieldProblems, each located by `field_path`."""
    return [FieldProblem(field_path(e["loc"]), e["msg"]) for e in error.errors()]


def require_valid(doc: Any, kind: str = "Message", *, what: str | None = None) -> None:
    """Raise DocumentError listing every problem when `doc` is not a valid `kind`."""
    problems = validate_document(doc, kind)
    if problems:
        raise DocumentError(what or kind, problems)


__all__ = [
    "KINDS",
    "MESSAGE_LIST",
    "detect_kind",
    "explain",
    "field_path",
    "parse_document",
    "pydantic_problems",
    "require_valid",
    "validate_document",
]
