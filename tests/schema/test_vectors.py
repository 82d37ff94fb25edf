"""Contract test: the language-neutral vectors of schema/vN/vectors/ against both contracts.

The JSON Schema is the source of truth for other languages; Python runs the generated
pydantic models (types, patterns, discriminators) and `metis.invariants` (spec §5, the
one executable copy of the rules the schema states as `allOf` if/then clauses). This
test holds the two to the same verdict on every vector, so they cannot drift. A vector is a
JSON-Schema-Test-Suite test (`{description, comment, data, valid}`) under a group whose
`schema` is `{"$ref": "metis.bundle.json#/$defs/<Def>"}`. Valid vectors are written in
canonical form (`model_dump(mode="json", exclude_none=True)`), so they must also
round-trip to the same JSON. Validation is offline: the only resource in the registry is
the bundle shipped inside metis_schema.
"""

from __future__ import annotations

import importlib
import json
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

import metis_schema
import metis_schema.v1 as models
import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaValidationError
from metis.invariants import check_content_block, check_message
from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as ModelValidationError
from referencing import Registry, Resource

from tests.support.paths import REPO

VECTORS = REPO / "schema" / "v1" / "vectors"
VERSIONS = metis_schema.VERSIONS
BUNDLE_REF = "metis.bundle.json"
MIN_VALID = 40
MIN_INVALID = 40


@dataclass(frozen=True)
class Vector:
    """One test of one group of one vector file."""

    version: int
    file: str
    group: str
    definition: str
    description: str
    comment: str
    data: Any
    valid: bool

    @property
    def id(self) -> str:
        prefix = "" if self.version == 1 else f"v{self.version}/"
        return f"{prefix}{self.file}:{self.description}"


def _definition(schema: dict[str, Any], where: str) -> str:
    ref = str(schema.get("$ref", ""))
    prefix = f"{BUNDLE_REF}#/$defs/"
    assert set(schema) == {"$ref"} and ref.startswith(prefix), (
        f"{where}: schema must be a $ref into the bundle"
    )
    return ref.removeprefix(prefix)


def load_vectors(version: int) -> list[Vector]:
    found = []
    for path in sorted((REPO / "schema" / f"v{version}" / "vectors").glob("*.json")):
        for g, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            where = f"{path.name} group {g}"
            assert {"description", "schema", "tests"} <= group.keys(), where
            definition = _definition(group["schema"], where)
            for test in group["tests"]:
                assert {"description", "data", "valid"} <= test.keys(), f"{where}: {test}"
                found.append(
                    Vector(
                        version=version,
                        file=path.name,
                        group=group["description"],
                        definition=definition,
                        description=test["description"],
                        comment=test.get("comment", ""),
                        data=test["data"],
                        valid=test["valid"],
                    )
                )
    return found


VECTORS_BY_VERSION = {v: load_vectors(v) for v in VERSIONS}
VECTOR_LIST = VECTORS_BY_VERSION[1]
ALL_VECTORS = [vector for v in VERSIONS for vector in VECTORS_BY_VERSION[v]]

KNOWN_DISAGREEMENTS: dict[str, str] = {
    # A vector on which jsonschema and the models disagree goes here with the reason, as a
    # strict xfail (it fails loudly the day they agree). None today: `schema_version`, once
    # defaulted by the models, is enforced as required by metis_base.SchemaModel.
}


def _param(vector: Vector) -> Any:
    reason = KNOWN_DISAGREEMENTS.get(vector.id)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(vector, id=vector.id, marks=marks)


@cache
def bundle(version: int = 1) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(metis_schema.bundle_path(version).read_text(encoding="utf-8"))
    return document


@cache
def generated(version: int = 1) -> Any:
    """The generated models of `version` (metis_schema.vN)."""
    return importlib.import_module(f"metis_schema.v{version}")


@cache
def registry(version: int = 1) -> Registry[Any]:
    # Registered under the name vectors use and under its own $id (the base URI of its
    # local refs). No `retrieve` callback: an unknown reference fails, never fetches.
    resource = Resource.from_contents(bundle(version))
    return Registry().with_resources([(BUNDLE_REF, resource), (bundle(version)["$id"], resource)])


@cache
def schema_validator(definition: str, version: int = 1) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"{BUNDLE_REF}#/$defs/{definition}"},
        registry=registry(version),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )


@cache
def adapter(definition: str, version: int = 1) -> TypeAdapter[Any]:
    """The generated pydantic type for a $def: a model class or a union alias."""
    target = getattr(generated(version), definition)
    return TypeAdapter(target)


def model_verdict(definition: str, data: Any, version: int = 1) -> tuple[bool, Any, str]:
    """(valid, canonical JSON dump or None, error text) from the pydantic side + invariants.

    Python-mode and JSON-mode validation must agree: persistence reads JSON text, while
    code builds from dicts.
    """
    target = getattr(generated(version), definition)
    results = []
    for mode in ("python", "json"):
        try:
            if isinstance(target, type) and issubclass(target, BaseModel):
                instance: Any = (
                    target.model_validate(data)
                    if mode == "python"
                    else target.model_validate_json(json.dumps(data))
                )
                dumped = instance.model_dump(mode="json", exclude_none=True)
            else:
                ta = adapter(definition, version)
                instance = (
                    ta.validate_python(data) if mode == "python" else ta.validate_json(json.dumps(data))
                )
                dumped = ta.dump_python(instance, mode="json", exclude_none=True)
            results.append((True, dumped, ""))
        except ModelValidationError as exc:
            results.append((False, None, str(exc)))
    (py_ok, py_dump, py_err), (js_ok, _, js_err) = results
    assert py_ok == js_ok, f"pydantic python mode says {py_ok} ({py_err}), JSON mode says {js_ok} ({js_err})"
    violations = []
    if py_ok and definition == "Message":
        # The §5 rules: on the validated model, and on the document as it is (they agree).
        violations = check_message(target.model_validate(data))
        assert [str(v) for v in check_message(data)] == [str(v) for v in violations]
    elif py_ok and definition == "ContentBlock":
        violations = check_content_block(adapter(definition, version).validate_python(data), version=version)
        assert [str(v) for v in check_content_block(data, version=version)] == [str(v) for v in violations]
    if violations:
        return False, None, "; ".join(str(v) for v in violations)
    return py_ok, py_dump, py_err


def canonical_text(value: Any) -> str:
    # Sorted keys: JSON objects are unordered; everything else (types, numbers) must match.
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("vector", [_param(v) for v in ALL_VECTORS])
def test_vector(vector: Vector) -> None:
    validator = schema_validator(vector.definition, vector.version)
    schema_errors = [e.message for e in validator.iter_errors(vector.data)]
    model_ok, dumped, model_error = model_verdict(vector.definition, vector.data, vector.version)
    verdicts = (
        f"jsonschema: {schema_errors or 'valid'}; "
        f"pydantic + invariants: {'valid' if model_ok else model_error}; vector says valid={vector.valid}"
    )
    assert (not schema_errors) == vector.valid, verdicts
    assert model_ok == vector.valid, verdicts
    if vector.valid:
        assert canonical_text(dumped) == canonical_text(vector.data), "valid vectors are canonical JSON"


# --- the vector set itself ----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_vector_counts(version: int) -> None:
    counts = Counter(v.valid for v in VECTORS_BY_VERSION[version])
    assert counts[True] >= MIN_VALID, counts
    assert counts[False] >= MIN_INVALID, counts


def test_every_invalid_vector_names_its_rule() -> None:
    silent = [v.id for v in ALL_VECTORS if not v.valid and not v.comment.strip()]
    assert not silent


def test_known_disagreements_name_real_vectors() -> None:
    assert set(KNOWN_DISAGREEMENTS) <= {v.id for v in ALL_VECTORS}


def test_vector_descriptions_are_unique_per_file() -> None:
    ids = Counter(v.id for v in ALL_VECTORS)
    assert [i for i, n in ids.items() if n > 1] == []


def _tags(definition: str, version: int = 1) -> set[str]:
    return set(bundle(version)["$defs"][definition]["discriminator"]["mapping"])


def _valid_messages(version: int = 1) -> list[dict[str, Any]]:
    return [v.data for v in VECTORS_BY_VERSION[version] if v.valid and v.definition == "Message"]


def _blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for block in blocks:
        out.append(block)
        if block.get("type") == "tool_result":
            out.extend(_blocks(block["content"]))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_valid_vectors_cover_every_block_type_in_messages_and_alone(version: int) -> None:
    in_messages = {b["type"] for m in _valid_messages(version) for b in _blocks(m["content"])}
    vectors = VECTORS_BY_VERSION[version]
    alone = {v.data["type"] for v in vectors if v.valid and v.definition == "ContentBlock"}
    assert in_messages == _tags("ContentBlock", version)
    assert alone == _tags("ContentBlock", version)


@pytest.mark.parametrize("version", VERSIONS)
def test_valid_vectors_cover_every_role_and_status(version: int) -> None:
    defs = bundle(version)["$defs"]
    assert {m["role"] for m in _valid_messages(version)} == set(defs["Role"]["enum"])
    assert {m["metadata"]["status"] for m in _valid_messages(version)} == set(defs["MessageStatus"]["enum"])


@pytest.mark.parametrize("version", VERSIONS)
def test_valid_vectors_cover_every_stream_event_type(version: int) -> None:
    vectors = VECTORS_BY_VERSION[version]
    seen = {v.data["type"] for v in vectors if v.valid and v.definition == "StreamEvent"}
    assert seen == _tags("StreamEvent", version)


UNTAGGED_NEEDLES = {
    "MediaSource": '"kind": "file_id"',
    "CachePoint": '"cache_point"',
    "MessagePhase": '"phase"',
    "Citation": '"citations"',
    "ServerToolResultContent": '"server_tool_result"',
    "ModelFamily": '"families"',
    "RequestOptions": '"max_tokens"',
    "ReasoningEffort": '"reasoning_effort"',
    "OutputSchema": '"output_schema"',
    "UsageUnits": '"units"',
    "SettingsRevision": '"tools": [',
    "ExchangeSettings": '"message_id"',
    "ToolKind": '"kind": "web_search"',
    "ProviderToolConfig": '"config": {',
    "UserLocation": '"user_location": {"',
    "Continuation": '"continues": {"',
}
"""For an added definition without a `type` tag: the text that shows a vector uses it."""


@pytest.mark.parametrize("version", [v for v in VERSIONS if v > 1])
def test_every_definition_added_in_a_version_has_valid_and_invalid_vectors(version: int) -> None:
    # A definition marked `x-metis-added-in: N` is exercised by version N's vectors both
    # ways: inside a valid document, and inside an invalid one.
    defs = bundle(version)["$defs"]
    added = sorted(name for name, d in defs.items() if d.get("x-metis-added-in") == version)
    assert added, "a new version adds definitions"
    texts = {True: "", False: ""}
    for v in VECTORS_BY_VERSION[version]:
        texts[v.valid] += json.dumps(v.data, ensure_ascii=False)
    for name in added:
        tag = defs[name].get("properties", {}).get("type", {}).get("const")
        needle = f'"type": "{tag}"' if tag else UNTAGGED_NEEDLES[name]
        assert needle in texts[True], (name, "no valid vector")
        assert needle in texts[False], (name, "no invalid vector")


def test_every_worked_example_of_spec_section_8_is_a_vector() -> None:
    counts = Counter(v.description.split()[0] for v in VECTOR_LIST if v.valid and v.definition == "Message")
    assert counts["§8.1"] == 2
    assert counts["§8.2"] == 4
    assert counts["§8.3"] >= 2
    assert counts["§8.4"] >= 1


# --- the validators themselves ------------------------------------------------------


def test_format_checker_really_checks_date_time() -> None:
    # jsonschema silently skips `date-time` unless rfc3339-validator is installed.
    checker = Draft202012Validator.FORMAT_CHECKER
    assert "date-time" in checker.checkers
    assert checker.conforms("2026-05-08T12:00:00.000001Z", "date-time")
    assert not checker.conforms("2026-05-08T12:00:00", "date-time")
    assert not checker.conforms("2026-05-08 12:00:00Z", "date-time")


def _vector(description: str) -> dict[str, Any]:
    (found,) = [v.data for v in VECTOR_LIST if v.description == description]
    data: dict[str, Any] = json.loads(json.dumps(found))
    return data


def _assistant_with_image() -> dict[str, Any]:
    message = _vector("§8.1 simple exchange: assistant answer with model, provider, routing and usage")
    message["content"][0] = {
        "type": "image",
        "source": {"kind": "url", "data": "https://example.com/a.png"},
        "media_type": "image/png",
    }
    return message


def test_role_rule_error_names_path_and_rule_in_invariants() -> None:
    document = _assistant_with_image()
    models.Message.model_validate(document)  # the fields are fine: the rule is §5's
    (violation,) = check_message(models.Message.model_validate(document))
    assert violation.path == "content[0].type"
    assert violation.rule == "§5.1.3"


def test_role_rule_error_names_path_and_rule_in_jsonschema() -> None:
    errors: list[SchemaValidationError] = list(
        schema_validator("Message").iter_errors(_assistant_with_image())
    )
    assert len(errors) == 1
    (error,) = errors
    assert error.json_path == "$.content[0].type"
    schema_path = list(error.absolute_schema_path)
    clause = bundle()["$defs"]["Message"]["allOf"][schema_path[schema_path.index("allOf") + 1]]
    assert "§5.1.3" in clause["description"]


def test_a_bad_block_is_one_pydantic_error_at_its_own_path() -> None:
    message = _vector("§8.1 simple exchange: user question")
    message["content"] = [{"type": "text", "text": "fine"}, {"type": "text"}]
    with pytest.raises(ModelValidationError) as caught:
        models.Message.model_validate(message)
    errors = caught.value.errors()
    assert len(errors) == 1, errors
    assert errors[0]["type"] == "missing"
    assert errors[0]["loc"] == ("content", 1, "text", "text")


def test_an_unknown_block_type_is_union_tag_invalid() -> None:
    message = _vector("§8.1 simple exchange: user question")
    message["content"] = [{"type": "audio", "data": "AAAA"}]
    with pytest.raises(ModelValidationError) as caught:
        models.Message.model_validate(message)
    errors = caught.value.errors()
    assert [e["type"] for e in errors] == ["union_tag_invalid"]
    assert errors[0]["loc"] == ("content", 0)
    with pytest.raises(ModelValidationError) as alone:
        adapter("ContentBlock").validate_python({"type": "audio"})
    assert [e["type"] for e in alone.value.errors()] == ["union_tag_invalid"]


def test_vectors_live_outside_the_bundled_schema_files() -> None:
    # codegen bundles every top-level schema/v1/*.json: each must be a schema document
    # (an object with $defs), never a vector file (a list of groups).
    for path in (REPO / "schema" / "v1").glob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(document, dict) and "$defs" in document, path
    assert len(list(VECTORS.glob("*.json"))) >= 8


# --- the two statements of §5 agree beyond the vectors ----------------------------------------


def _variants(document: dict[str, Any]) -> list[dict[str, Any]]:
    """`document` with role, status, content and metadata swapped about (as documents)."""
    tool_id = "tu_01HZ0000000000000000000001"
    text = {"type": "text", "text": "t"}
    contents: list[list[Any]] = [
        [],
        document["content"],
        [text, {"type": "text", "text": "u"}],
        [{"type": "tool_result", "tool_use_id": tool_id, "content": [text]}],
        [{"type": "tool_use", "id": tool_id, "name": "x", "input": {}}, text],
        [{"type": "thinking", "text": "hm"}],
        [
            {
                "type": "image",
                "source": {"kind": "url", "data": "https://example.com/a.png"},
                "media_type": "image/png",
            }
        ],
    ]
    full = _vector("§8.1 simple exchange: assistant answer with model, provider, routing and usage")[
        "metadata"
    ]
    metas = [{}, {"parent_tool_use_id": tool_id}, dict(full), {**full, "parent_tool_use_id": tool_id}]
    out = []
    for role in bundle()["$defs"]["Role"]["enum"]:
        for status in bundle()["$defs"]["MessageStatus"]["enum"]:
            for content in contents:
                for meta in metas:
                    out.append(
                        {**document, "role": role, "content": content, "metadata": {**meta, "status": status}}
                    )
    return out


def test_schema_rules_and_invariants_agree_on_every_variant() -> None:
    disagreements, invalid = [], 0
    for document in _valid_messages()[:4]:
        for variant in _variants(document):
            schema_ok = not list(schema_validator("Message").iter_errors(variant))
            runtime_ok, _, why = model_verdict("Message", variant)
            invalid += not schema_ok
            if schema_ok != runtime_ok:
                disagreements.append((variant["role"], variant["metadata"], variant["content"], why))
    assert disagreements == []
    assert invalid > 300


@pytest.mark.parametrize(
    "text",
    ["0", "0.000", "1E-7", "1E+5", "-0", "-1.5", "NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "12.50"],
)
def test_fixed_point_screen_is_the_decimal_pattern(text: str) -> None:
    from decimal import Decimal

    from metis_base import input_problems

    (spec,) = [s for s in models.Usage.__schema_formatted__ if s.field == "cost_usd"]
    assert spec.fixed_point and spec.pattern is not None
    value = Decimal(text)
    screened = value.is_finite() and not value.is_signed()
    assert screened == (spec.pattern.fullmatch(format(value, "f")) is not None)
    data = {
        "input_tokens": 1,
        "output_tokens": 1,
        "cost_usd": value,
        "pricing_version": "v",
        "latency_ms": 0,
    }
    assert (input_problems(models.Usage, data) == []) == screened
    if screened:
        assert models.Usage(**data).cost_usd == value
    else:
        with pytest.raises(ModelValidationError, match="does not match"):
            models.Usage(**data)
