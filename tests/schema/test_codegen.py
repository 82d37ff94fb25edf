"""Guards for `python -m codegen`: generated/ is exactly what the schema produces.

The generated package is never edited by hand; these tests make that enforceable. They
run codegen as CI does (a subprocess of the current interpreter) and point its
`--schema-dir`, `--out-dir` and `--migrations-dir` at temporary copies whenever a test
changes something, so the repository is only ever read.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import metis_schema
import metis_schema.v1 as models
import pytest
from pydantic import TypeAdapter
from pydantic.fields import FieldInfo

from tests.support.node_support import missing_node_tooling, needs_node
from tests.support.paths import REPO

GENERATED = REPO / "generated"
SCHEMA = REPO / "schema"
TS_GENERATED = REPO / "typescript" / "generated"
HEADER = "# DO NOT EDIT."
PYTHON_ONLY = ("--python-only",) if missing_node_tooling() else ()
"""Without Node the Python side is still checked (the TypeScript tests skip, saying so)."""


def run_codegen(*args: str | Path, typescript: bool = False) -> subprocess.CompletedProcess[str]:
    """`python -m codegen ARGS`; `--python-only` added where Node is missing, unless the test
    is about the TypeScript side (`typescript=True`, and marked needs_node)."""
    extra = () if typescript else PYTHON_ONLY
    return subprocess.run(
        [sys.executable, "-m", "codegen", *map(str, args), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def copy_generated(tmp_path: Path) -> Path:
    out = tmp_path / "generated"
    shutil.copytree(GENERATED, out, ignore=shutil.ignore_patterns("__pycache__"))
    return out


def test_check_passes_on_the_repository() -> None:
    proc = run_codegen("--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # "generated/ matches schema/" without Node (--python-only, and it says TypeScript was
    # skipped), "generated/ and typescript/generated/ match schema/" with it.
    assert "schema/" in proc.stdout and " match" in proc.stdout, proc.stdout
    assert ("TypeScript skipped" in proc.stdout) == bool(PYTHON_ONLY), proc.stdout


def test_python_only_check_says_the_typescript_side_was_skipped() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "codegen", "--check", "--python-only"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "TypeScript skipped" in proc.stdout


def test_python_only_leaves_the_typescript_package_alone(tmp_path: Path) -> None:
    ts_out = tmp_path / "ts"
    ts_out.mkdir()
    (ts_out / "stray.js").write_text("x\n", encoding="utf-8")
    proc = run_codegen(
        "--out-dir",
        tmp_path / "gen",
        "--migrations-dir",
        tmp_path / "mig",
        "--ts-out-dir",
        ts_out,
        "--python-only",
    )
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in ts_out.iterdir()] == ["stray.js"]
    assert files_under(tmp_path / "gen") == {
        p: b for p, b in files_under(GENERATED).items() if p.startswith("metis_schema/")
    }


def test_output_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    renders = []
    for name in ("a", "b"):
        proc = run_codegen(
            "--out-dir",
            tmp_path / name / "gen",
            "--migrations-dir",
            tmp_path / name / "mig",
            "--ts-out-dir",
            tmp_path / name / "ts",
        )
        assert proc.returncode == 0, proc.stderr
        renders.append(files_under(tmp_path / name / "gen") | _prefixed(files_under(tmp_path / name / "ts")))
    assert renders[0].keys() == renders[1].keys()
    assert "metis_schema/v1/models.py" in renders[0]
    differing = [path for path in renders[0] if renders[0][path] != renders[1][path]]
    assert differing == []
    # ...and identical to what is committed.
    committed = files_under(GENERATED) | _prefixed(files_under(TS_GENERATED))
    assert {p: committed.get(p) for p in renders[0]} == renders[0]


def _prefixed(files: dict[str, bytes]) -> dict[str, bytes]:
    return {f"typescript/generated/{p}": b for p, b in files.items()}


def test_check_reports_a_hand_edit_with_a_diff(tmp_path: Path) -> None:
    out = copy_generated(tmp_path)
    models_py = out / "metis_schema" / "v1" / "models.py"
    models_py.write_text(models_py.read_text(encoding="utf-8") + "HAND_EDIT = True\n", encoding="utf-8")
    proc = run_codegen("--check", "--out-dir", out, "--migrations-dir", tmp_path / "mig")
    assert proc.returncode != 0
    assert "--- generated/metis_schema/v1/models.py (on disk)" in proc.stdout
    assert "+++ generated/metis_schema/v1/models.py (from schema)" in proc.stdout
    assert "-HAND_EDIT = True" in proc.stdout
    assert "@@" in proc.stdout


@needs_node
def test_check_reports_a_stale_typescript_declaration(tmp_path: Path) -> None:
    ts_out = tmp_path / "ts"
    shutil.copytree(TS_GENERATED, ts_out)
    declarations = ts_out / "v2.d.ts"
    stale = declarations.read_text(encoding="utf-8").replace('"5m" | "1h"', '"5m"')
    assert stale != declarations.read_text(encoding="utf-8")
    declarations.write_text(stale, encoding="utf-8")
    proc = run_codegen(
        "--check", "--ts-out-dir", ts_out, "--migrations-dir", tmp_path / "mig", typescript=True
    )
    assert proc.returncode != 0
    assert "--- typescript/generated/v2.d.ts (on disk)" in proc.stdout
    assert '+export type CacheTtl = "5m" | "1h";' in proc.stdout


def test_typescript_modules_cover_every_version_and_carry_the_header() -> None:
    for version in metis_schema.VERSIONS:
        for suffix in (".d.ts", ".js"):
            text = (TS_GENERATED / f"v{version}{suffix}").read_text(encoding="utf-8")
            assert text.startswith("// DO NOT EDIT."), (version, suffix)
        declarations = (TS_GENERATED / f"v{version}.d.ts").read_text(encoding="utf-8")
        assert "export type ContentBlock =" in declarations
        assert f"export declare const VERSION: {version};" in declarations
        module = (TS_GENERATED / f"v{version}.js").read_text(encoding="utf-8")
        assert f"export const VERSION = {version};" in module
        bundle = GENERATED / "metis_schema" / f"v{version}" / "schema" / "metis.bundle.json"
        assert bundle.read_text(encoding="utf-8").rstrip() in module
    for name in ("index.d.ts", "index.js"):
        index = (TS_GENERATED / name).read_text(encoding="utf-8")
        assert f'export * from "./v{metis_schema.CURRENT_VERSION}.js";' in index
    index_js = (TS_GENERATED / "index.js").read_text(encoding="utf-8")
    assert (
        f"export const VERSIONS = Object.freeze([{', '.join(map(str, metis_schema.VERSIONS))}]);" in index_js
    )
    assert f"export const CURRENT_VERSION = {metis_schema.CURRENT_VERSION};" in index_js


def test_check_reports_a_stray_generated_file(tmp_path: Path) -> None:
    out = copy_generated(tmp_path)
    (out / "metis_schema" / "v1" / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    proc = run_codegen("--check", "--out-dir", out, "--migrations-dir", tmp_path / "mig")
    assert proc.returncode != 0
    assert "metis_schema/v1/helpers.py" in proc.stdout


def test_check_fails_when_the_schema_changes(tmp_path: Path) -> None:
    schema = tmp_path / "schema"
    shutil.copytree(SCHEMA, schema)
    tool_json = schema / "v1" / "tool.json"
    document = json.loads(tool_json.read_text(encoding="utf-8"))
    document["$defs"]["ToolDefinition"]["description"] += " Changed."
    tool_json.write_text(json.dumps(document, indent=2), encoding="utf-8")
    proc = run_codegen("--check", "--schema-dir", schema, "--migrations-dir", tmp_path / "mig")
    assert proc.returncode != 0
    assert "Changed." in proc.stdout


def test_every_generated_python_file_has_the_provenance_header() -> None:
    py_files = sorted((GENERATED / "metis_schema").rglob("*.py"))
    assert len(py_files) >= 3
    for path in py_files:
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(HEADER), path
        assert "python -m codegen" in first, path


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for key, value in node.items() if key != "$ref" for r in _refs(value)]
    if isinstance(node, list):
        return [r for item in node for r in _refs(item)]
    return []


def test_bundle_has_only_local_refs_that_resolve() -> None:
    bundle = json.loads(metis_schema.bundle_path(1).read_text(encoding="utf-8"))
    refs = _refs(bundle)
    assert refs, "the bundle should use local refs (recursive types need them)"
    external = [r for r in refs if not r.startswith("#/")]
    assert external == []
    dangling = {r for r in refs if r.removeprefix("#/$defs/") not in bundle["$defs"]}
    assert dangling == set()


@pytest.mark.parametrize(
    ("alias", "members"),
    [
        (
            "ContentBlock",
            {
                "TextBlock",
                "ToolUseBlock",
                "ToolResultBlock",
                "ImageBlock",
                "ThinkingBlock",
                "RedactedThinkingBlock",
            },
        ),
        (
            "StreamEvent",
            {
                "TextDeltaEvent",
                "ToolUseStartEvent",
                "ToolUseInputDeltaEvent",
                "ToolUseEndEvent",
                "ThinkingDeltaEvent",
                "MessageCompleteEvent",
                "UsageUpdateEvent",
                "ErrorEvent",
            },
        ),
    ],
)
def test_unions_are_named_discriminated_aliases(alias: str, members: set[str]) -> None:
    target = getattr(models, alias)
    assert target.__name__ == alias  # a named TypeAliasType, not an anonymous union
    annotated = target.__value__
    assert typing.get_origin(annotated) is typing.Annotated
    union, *metadata = typing.get_args(annotated)
    discriminators = [m.discriminator for m in metadata if isinstance(m, FieldInfo)]
    assert discriminators == ["type"]
    # Members are classes, or forward references to classes defined later in models.py.
    names = {
        getattr(member, "__forward_arg__", getattr(member, "__name__", None))
        for member in typing.get_args(union)
    }
    assert names == members
    assert '"type": "tagged-union"' in json.dumps(TypeAdapter(target).core_schema, default=repr)


@needs_node
def test_a_new_schema_version_gets_its_typescript_module_with_nothing_to_configure(tmp_path: Path) -> None:
    schema = tmp_path / "schema"
    shutil.copytree(SCHEMA, schema, ignore=shutil.ignore_patterns("vectors"))
    newest = max(metis_schema.VERSIONS)
    shutil.copytree(schema / f"v{newest}", schema / f"v{newest + 1}")
    ts_out = tmp_path / "ts"
    proc = run_codegen(
        "--schema-dir",
        schema,
        "--out-dir",
        tmp_path / "gen",
        "--migrations-dir",
        tmp_path / "mig",
        "--ts-out-dir",
        ts_out,
        typescript=True,
    )
    assert proc.returncode == 0, proc.stderr
    versions = [*metis_schema.VERSIONS, newest + 1]
    assert sorted(p.name for p in ts_out.iterdir()) == sorted(
        ["index.d.ts", "index.js", *(f"v{v}{s}" for v in versions for s in (".d.ts", ".js"))]
    )
    index = (ts_out / "index.js").read_text(encoding="utf-8")
    assert f'import * as v{newest + 1} from "./v{newest + 1}.js";' in index
    assert f"{newest + 1}: v{newest + 1}.validate" in index


def test_a_redirected_run_writes_nothing_outside_its_out_dir(tmp_path: Path) -> None:
    before = files_under(TS_GENERATED)
    fixture = REPO / "tests" / "fixtures" / "schema_v2"  # other versions than the repository's
    proc = run_codegen(
        "--schema-dir",
        fixture,
        "--out-dir",
        tmp_path / "gen",
        "--migrations-dir",
        tmp_path / "mig",
    )
    assert proc.returncode == 0, proc.stderr
    assert files_under(TS_GENERATED) == before
    if not missing_node_tooling():
        assert (tmp_path / "gen" / "typescript" / "index.js").exists()
