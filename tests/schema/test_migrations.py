"""Schema migrations end to end (spec §11.1.4), and the chain engine and helpers alone.

End to end: codegen runs over tests/fixtures/schema_v2 (v1 plus an `audio` block and
`team_id` renamed to `org_id`) into a temporary tree, creates the v1 -> v2 stub, which a
hand-written step then replaces; a stored v1 message migrated through
`metis.migrations.migrate_document` must validate as a v2 Message of the generated v2
models. The generated fixture package is loaded from its files under unique module names
so it never clashes with the installed `metis_schema`.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import metis_schema
import pytest
from jsonschema import Draft202012Validator
from metis.errors import MetisError
from metis.migrations import MigrationError, migrate_document
from metis.migrations.steps import (
    drop_metadata_field,
    map_blocks,
    rename_metadata_field,
    set_metadata_default,
)
from pydantic import TypeAdapter, ValidationError
from referencing import Registry, Resource

from tests.support.paths import REPO

FIXTURE = REPO / "tests" / "fixtures" / "schema_v2"

HAND_WRITTEN_STEP = '''\
"""v1 -> v2 for the test fixture: metadata.team_id is now metadata.org_id."""

from __future__ import annotations

from typing import Any

from metis.migrations.steps import rename_metadata_field

FROM_VERSION = 1
TO_VERSION = 2


def migrate(document: dict[str, Any]) -> dict[str, Any]:
    return rename_metadata_field(document, "team_id", "org_id")
'''


def stored_v1_message() -> dict[str, Any]:
    """A canonical v1 USER message with a team, as the store would hold it."""
    return {
        "id": "01HZ0000000000000000000001",
        "session_id": "sess_42",
        "role": "user",
        "content": [{"type": "text", "text": "What's a ULID?"}],
        "metadata": {"status": "complete", "user_id": "usr_7f3a", "team_id": "team_19c2"},
        "created_at": "2026-05-08T12:00:00.000001Z",
        "schema_version": 1,
    }


AUDIO = {"type": "audio", "source": {"kind": "base64", "data": "UklGRgAAAABXQVZF"}, "media_type": "audio/wav"}


def run_codegen(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """`python -m codegen` over a fixture tree: its Python models only (`--python-only`: the
    fixture's migrations need no TypeScript, and the suite runs without Node)."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", "--python-only", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def load_models(gen: Path, version: int, tag: str) -> ModuleType:
    """Import gen/metis_schema/v{version}/models.py as `metis_schema_fixture_{tag}.v{version}.models`."""
    name = f"metis_schema_fixture_{tag}.v{version}.models"
    spec = importlib.util.spec_from_file_location(name, gen / "metis_schema" / f"v{version}" / "models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before running: SchemaModel finds its bundle through sys.modules[...].__file__.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class FixtureTree:
    gen: Path
    package: str
    stub_path: Path
    first_run: subprocess.CompletedProcess[str]
    second_run: subprocess.CompletedProcess[str]
    stub_as_created: str
    v1: ModuleType
    v2: ModuleType


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureTree]:
    root = tmp_path_factory.mktemp("schema_v2")
    tag = uuid.uuid4().hex[:12]
    package = f"metis_fixture_migrations_{tag}"
    gen, mig = root / "gen", root / package
    first = run_codegen("--schema-dir", FIXTURE, "--out-dir", gen, "--migrations-dir", mig)
    stub_path = mig / "v1_to_v2.py"
    stub_as_created = stub_path.read_text(encoding="utf-8") if stub_path.exists() else ""
    if stub_path.exists():
        stub_path.write_text(HAND_WRITTEN_STEP, encoding="utf-8")
    second = run_codegen("--schema-dir", FIXTURE, "--out-dir", gen, "--migrations-dir", mig)
    names = [f"metis_schema_fixture_{tag}.v1.models", f"metis_schema_fixture_{tag}.v2.models"]
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield FixtureTree(
            gen=gen,
            package=package,
            stub_path=stub_path,
            first_run=first,
            second_run=second,
            stub_as_created=stub_as_created,
            v1=load_models(gen, 1, tag),
            v2=load_models(gen, 2, tag),
        )
    finally:
        sys.path.remove(str(root))
        for name in [*names, package, f"{package}.v1_to_v2"]:
            sys.modules.pop(name, None)


# --- codegen over a two-version tree ----------------------------------------------------


def test_codegen_generates_both_versions_and_the_stub(tree: FixtureTree) -> None:
    assert tree.first_run.returncode == 0, tree.first_run.stderr
    assert (tree.gen / "metis_schema" / "v2" / "models.py").is_file()
    assert f"created migration stub {tree.stub_path}" in tree.first_run.stdout
    assert "def migrate(document" in tree.stub_as_created
    assert "raise NotImplementedError" in tree.stub_as_created
    index = (tree.gen / "metis_schema" / "__init__.py").read_text(encoding="utf-8")
    assert "CURRENT_VERSION: int = 2" in index
    assert '(1, 2, "v1_to_v2")' in index


def test_codegen_never_overwrites_a_filled_in_stub(tree: FixtureTree) -> None:
    assert tree.second_run.returncode == 0, tree.second_run.stderr
    assert "created migration stub" not in tree.second_run.stdout
    assert tree.stub_path.read_text(encoding="utf-8") == HAND_WRITTEN_STEP


def test_fixture_models_read_the_bundle_beside_them(tree: FixtureTree) -> None:
    # metis_base.SchemaModel reads each class's definition from the bundle beside its
    # module: the v2 Message requires its own schema_version (2) in a document.
    assert tree.v2.Message.__schema_required__ == ("schema_version",)
    document = {**stored_v1_message(), "metadata": {"status": "complete"}, "schema_version": 2}
    assert tree.v2.Message.model_validate(document).schema_version == 2
    with pytest.raises(ValidationError, match="schema_version is required"):
        tree.v2.Message.model_validate({k: v for k, v in document.items() if k != "schema_version"})


def test_the_stub_as_created_fails_with_a_migration_error(
    tree: FixtureTree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = f"metis_fixture_stub_{uuid.uuid4().hex[:12]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "v1_to_v2.py").write_text(tree.stub_as_created, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(MigrationError) as caught:
        migrate_document(stored_v1_message(), 2, package=package)
    text = str(caught.value)
    assert "v1 -> v2" in text
    assert f"{package}.v1_to_v2" in text
    assert "has not been written yet" in text  # the stub's own NotImplementedError message
    assert isinstance(caught.value.__cause__, NotImplementedError)


# --- a stored v1 message read at v2 -------------------------------------------------------


def test_stored_v1_message_migrates_to_a_valid_v2_message(tree: FixtureTree) -> None:
    stored = stored_v1_message()
    before = copy.deepcopy(stored)
    tree.v1.Message.model_validate(stored)  # it really is a v1 document

    migrated = migrate_document(stored, 2, package=tree.package)

    assert stored == before, "the stored document must not be modified"
    message = tree.v2.Message.model_validate(migrated)
    assert message.schema_version == 2
    assert message.metadata.org_id == "team_19c2"
    assert message.metadata.user_id == "usr_7f3a"
    assert "team_id" not in migrated["metadata"]
    assert message.model_dump(mode="json", exclude_none=True) == migrated

    bundle = json.loads((tree.gen / "metis_schema/v2/schema/metis.bundle.json").read_text(encoding="utf-8"))
    validator = Draft202012Validator(
        {"$ref": "metis.bundle.json#/$defs/Message"},
        registry=Registry().with_resources(
            [(uri, Resource.from_contents(bundle)) for uri in ("metis.bundle.json", bundle["$id"])]
        ),
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    assert [e.message for e in validator.iter_errors(migrated)] == []


def test_unmigrated_v1_document_is_not_a_v2_message(tree: FixtureTree) -> None:
    with pytest.raises(ValidationError) as caught:
        tree.v2.Message.model_validate(stored_v1_message())
    locs = {e["loc"] for e in caught.value.errors()}
    assert ("schema_version",) in locs
    assert ("metadata", "team_id") in locs


def test_audio_block_is_v2_only(tree: FixtureTree) -> None:
    assert TypeAdapter(tree.v2.ContentBlock).validate_python(AUDIO).type == "audio"
    user = {**stored_v1_message(), "content": [AUDIO], "metadata": {"status": "complete"}}
    tree.v2.Message.model_validate({**user, "schema_version": 2})

    with pytest.raises(ValidationError) as caught:
        TypeAdapter(tree.v1.ContentBlock).validate_python(AUDIO)
    assert [e["type"] for e in caught.value.errors()] == ["union_tag_invalid"]
    with pytest.raises(ValidationError) as in_message:
        tree.v1.Message.model_validate(user)
    assert [e["type"] for e in in_message.value.errors()] == ["union_tag_invalid"]


def test_v2_role_rules_still_keep_audio_out_of_assistant_messages(tree: FixtureTree) -> None:
    assistant = {
        **stored_v1_message(),
        "role": "assistant",
        "content": [AUDIO],
        "metadata": {"status": "partial"},
        "schema_version": 2,
    }
    # The role rules are the schema's to state (for every language) and metis.invariants'
    # to run; the fixture's v2 schema still keeps audio out of assistant messages.
    tree.v2.Message.model_validate(assistant)  # the fields are fine
    bundle = json.loads((tree.gen / "metis_schema" / "v2" / "schema" / "metis.bundle.json").read_text())
    validator = Draft202012Validator(
        {"$ref": "#/$defs/Message", "$defs": bundle["$defs"]},
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )
    (error,) = validator.iter_errors(assistant)
    assert error.json_path == "$.content[0].type"


# --- the chain engine ------------------------------------------------------------------


def step_source(a: int, body: str) -> str:
    return textwrap.dedent(
        f"""\
        from typing import Any

        FROM_VERSION = {a}
        TO_VERSION = {a + 1}


        def migrate(document: dict[str, Any]) -> Any:
        """
    ) + textwrap.indent(textwrap.dedent(body), "    ")


@pytest.fixture
def steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Factory: write step modules {from_version: source} into a fresh package; return its name."""

    def make(modules: dict[int, str]) -> str:
        package = f"metis_test_steps_{uuid.uuid4().hex[:12]}"
        (tmp_path / package).mkdir()
        for a, source in modules.items():
            (tmp_path / package / f"v{a}_to_v{a + 1}.py").write_text(source, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        return package

    return make


def recording_step(a: int) -> str:
    return step_source(
        a,
        f"""\
        assert document["schema_version"] == {a}, document["schema_version"]
        return {{**document, "trail": [*document.get("trail", []), {a}]}}
        """,
    )


def test_chain_runs_every_step_in_order_and_sets_schema_version(steps: Any) -> None:
    package = steps({1: recording_step(1), 2: recording_step(2), 3: recording_step(3)})
    doc = {"schema_version": 1, "metadata": {}}
    result = migrate_document(doc, 4, package=package)
    assert result["trail"] == [1, 2, 3]
    assert result["schema_version"] == 4
    assert doc == {"schema_version": 1, "metadata": {}}


def test_chain_starts_at_the_documents_version(steps: Any) -> None:
    package = steps({2: recording_step(2)})  # no v1 step: a v2 document must not need it
    assert migrate_document({"schema_version": 2}, 3, package=package)["trail"] == [2]


def test_steps_get_a_copy_even_when_they_mutate(steps: Any) -> None:
    package = steps({1: step_source(1, 'document["metadata"]["x"] = 1\nreturn document\n')})
    doc = {"schema_version": 1, "metadata": {}}
    assert migrate_document(doc, 2, package=package)["metadata"] == {"x": 1}
    assert doc == {"schema_version": 1, "metadata": {}}


def test_missing_step_is_named(steps: Any) -> None:
    package = steps({1: recording_step(1)})
    with pytest.raises(
        MigrationError, match=rf"missing migration step v2 -> v3: no module {package}\.v2_to_v3"
    ):
        migrate_document({"schema_version": 1}, 3, package=package)


def test_missing_package_is_a_missing_step() -> None:
    with pytest.raises(MigrationError, match="missing migration step v1 -> v2"):
        migrate_document({"schema_version": 1}, 2, package="metis_no_such_package_anywhere")


def test_a_steps_own_broken_import_is_not_reported_as_missing(steps: Any) -> None:
    package = steps({1: "import metis_no_such_dependency\n\ndef migrate(d):\n    return d\n"})
    with pytest.raises(MigrationError, match="failed to import") as caught:
        migrate_document({"schema_version": 1}, 2, package=package)
    assert "missing migration step" not in str(caught.value)


def test_stub_not_implemented_is_a_migration_error(steps: Any) -> None:
    package = steps({1: step_source(1, 'raise NotImplementedError("the v1 -> v2 migration is a stub")\n')})
    with pytest.raises(MigrationError) as caught:
        migrate_document({"schema_version": 1}, 2, package=package)
    assert "v1 -> v2" in str(caught.value)
    assert "the v1 -> v2 migration is a stub" in str(caught.value)
    assert isinstance(caught.value, MetisError)


def test_step_declaring_other_versions_is_refused(steps: Any) -> None:
    package = steps({1: step_source(2, "return document\n")})
    with pytest.raises(MigrationError, match=r"declares v2 -> v3, expected v1 -> v2"):
        migrate_document({"schema_version": 1}, 2, package=package)


def test_step_must_return_a_document(steps: Any) -> None:
    package = steps({1: step_source(1, "return None\n")})
    with pytest.raises(MigrationError, match="returned NoneType"):
        migrate_document({"schema_version": 1}, 2, package=package)


def test_step_without_migrate_function(steps: Any) -> None:
    package = steps({1: "FROM_VERSION = 1\n"})
    with pytest.raises(MigrationError, match="no migrate"):
        migrate_document({"schema_version": 1}, 2, package=package)


def test_no_downgrade(steps: Any) -> None:
    package = steps({1: recording_step(1)})
    with pytest.raises(MigrationError, match="refusing to downgrade a v3 document to v2"):
        migrate_document({"schema_version": 3}, 2, package=package)


def test_newer_than_current_is_refused_by_default() -> None:
    with pytest.raises(MigrationError, match="downgrade"):
        migrate_document({"schema_version": metis_schema.CURRENT_VERSION + 1})


def test_no_op_at_the_current_version() -> None:
    doc = stored_v1_message() | {"schema_version": metis_schema.CURRENT_VERSION}
    assert migrate_document(doc) is doc
    assert migrate_document(doc, metis_schema.CURRENT_VERSION, package="metis_no_such_package") is doc


@pytest.mark.parametrize("version", [None, "1", 0, True, 1.0])
def test_document_without_a_valid_version_is_refused(version: Any) -> None:
    doc: dict[str, Any] = {"metadata": {}}
    if version is not None:
        doc["schema_version"] = version
    with pytest.raises(MigrationError, match="no valid schema_version"):
        migrate_document(doc, 2)


# --- ops -----------------------------------------------------------------------------


def test_rename_metadata_field_moves_the_value_and_keeps_the_input() -> None:
    doc = stored_v1_message()
    before = copy.deepcopy(doc)
    out = rename_metadata_field(doc, "team_id", "org_id")
    assert out["metadata"] == {"status": "complete", "user_id": "usr_7f3a", "org_id": "team_19c2"}
    assert doc == before


def test_rename_metadata_field_without_the_field_is_unchanged() -> None:
    doc = {"metadata": {"status": "complete"}}
    assert rename_metadata_field(doc, "team_id", "org_id") == {"metadata": {"status": "complete"}}


def test_rename_metadata_field_refuses_to_lose_a_value() -> None:
    with pytest.raises(MigrationError, match="both are present"):
        rename_metadata_field({"metadata": {"team_id": "a", "org_id": "b"}}, "team_id", "org_id")


def test_drop_and_default_metadata_fields() -> None:
    doc = {"metadata": {"status": "complete", "team_id": "t"}}
    assert drop_metadata_field(doc, "team_id") == {"metadata": {"status": "complete"}}
    assert set_metadata_default(doc, "org_id", None)["metadata"]["org_id"] is None
    assert set_metadata_default(doc, "team_id", "x")["metadata"]["team_id"] == "t"
    assert doc == {"metadata": {"status": "complete", "team_id": "t"}}


def test_map_blocks_reaches_blocks_inside_tool_results() -> None:
    doc = {
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "tu_01HZ0000000000000000000100",
                "content": [{"type": "text", "text": "a"}, {"type": "image_v0", "url": "x"}],
                "is_error": False,
            },
            {"type": "text", "text": "b"},
        ]
    }
    before = copy.deepcopy(doc)
    seen: list[str] = []

    def fn(block: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(block["type"])
        if block["type"] == "image_v0":
            return None
        if block["type"] == "text":
            return {**block, "text": block["text"].upper()}
        return block

    out = map_blocks(doc, fn)
    assert seen == ["text", "image_v0", "tool_result", "text"]  # children before their tool_result
    assert out["content"][0]["content"] == [{"type": "text", "text": "A"}]
    assert out["content"][1] == {"type": "text", "text": "B"}
    assert doc == before


def test_map_blocks_rejects_a_malformed_content_list() -> None:
    with pytest.raises(MigrationError) as caught:
        map_blocks({"content": [{"type": "tool_result", "content": ["oops"]}]}, lambda b: b)
    assert caught.value.path == "content[0].content[0]"


# --- the real v1 -> v2 step -------------------------------------------------------------


def _v1_message_vectors() -> list[dict[str, Any]]:
    found = []
    for group in json.loads(
        (REPO / "schema" / "v1" / "vectors" / "message.json").read_text(encoding="utf-8")
    ):
        found.extend(t["data"] for t in group["tests"] if t["valid"])
    return found


def test_every_valid_v1_message_reads_back_as_v2_with_the_same_hash() -> None:
    import metis_schema.v1 as v1
    import metis_schema.v2 as v2
    from metis.canonical import message_hash
    from metis.invariants import check_message

    documents = _v1_message_vectors()
    assert len(documents) >= 20
    for document in documents:
        migrated = migrate_document(document, to_version=2)
        assert migrated["schema_version"] == 2
        assert {k: v for k, v in migrated.items() if k != "schema_version"} == {
            k: v for k, v in document.items() if k != "schema_version"
        }
        as_v2 = v2.Message.model_validate(migrated)
        assert check_message(as_v2) == []
        assert message_hash(as_v2) == message_hash(v1.Message.model_validate(document))  # type: ignore[arg-type]
    assert document["schema_version"] == 1  # the input is never modified


def test_a_v1_document_validates_against_the_schema_it_declares() -> None:
    from metis.validation import validate_document

    document = _v1_message_vectors()[0]
    assert validate_document(document) == []
    assert validate_document(migrate_document(document, to_version=2)) == []
    assert validate_document(document, version=2) != []  # v2 wants schema_version 2
