"""Render generated/ from schema/: the engine behind `python -m codegen`."""

from __future__ import annotations

import ast
import difflib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import version as dist_version
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from . import bundle as bundler
from . import typescript as ts

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
PACKAGE = "metis_schema"
_VERSION_DIR = re.compile(r"^v(\d+)$")


class CodegenError(Exception):
    """Generation failed; the message says which schema or step."""


@dataclass(frozen=True)
class Paths:
    """Where codegen reads and writes; tests point these at temporary directories."""

    schema: Path = REPO / "schema"
    out: Path = REPO / "generated"
    migrations: Path = REPO / "runtime" / "metis" / "migrations"
    typescript: Path | None = ts.OUT
    """The TypeScript package's generated/ folder; None leaves TypeScript out (`--python-only`)."""


def _env() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def versions(schema_root: Path) -> list[int]:
    """Schema versions present under `schema_root`, ascending."""
    found = []
    for child in schema_root.iterdir():
        match = _VERSION_DIR.match(child.name)
        if child.is_dir() and match:
            found.append(int(match.group(1)))
    if not found:
        raise CodegenError(f"no schema/vN directories under {schema_root}")
    found.sort()
    if found != list(range(found[0], found[-1] + 1)):
        raise CodegenError(f"schema versions must be contiguous, found {found}")
    return found


CURRENT_FILE = "CURRENT"
"""schema/CURRENT: the version the runtime writes, when it is not the newest one present.

A new version's schema and models land before the runtime switches to them (the runtime
imports one version's models by name); until then this file names the version new
documents are written in. Without it, the newest version is current."""


def current_version(schema_root: Path, found: list[int]) -> int:
    """The version new documents are written in (see CURRENT_FILE)."""
    marker = schema_root / CURRENT_FILE
    if not marker.exists():
        return found[-1]
    text = marker.read_text(encoding="utf-8").strip()
    if not text.isdigit() or int(text) not in found:
        raise CodegenError(f"{marker}: {text!r} is not one of the schema versions {found}")
    return int(text)


def _header(source: str, digest: str) -> str:
    return (
        _env()
        .get_template("header.py.j2")
        .render(
            source=source,
            digest=digest,
            generator_version=dist_version("datamodel-code-generator"),
        )
        .rstrip("\n")
    )


def _models(bundle_text: str, header: str) -> str:
    """Run datamodel-code-generator over one bundle; settings live in pyproject.toml."""
    with tempfile.TemporaryDirectory(prefix="metis-codegen-") as tmp:
        src = Path(tmp) / bundler.BUNDLE_NAME
        dst = Path(tmp) / "models.py"
        src.write_text(bundle_text, encoding="utf-8")
        env = dict(os.environ, RUFF_CACHE_DIR=str(Path(tmp) / "ruff-cache"))
        cmd = [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(src),
            "--output",
            str(dst),
            "--custom-file-header",
            header,
        ]
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not dst.exists():
            raise CodegenError(f"datamodel-code-generator failed:\n{proc.stderr.strip()}")
        return dst.read_text(encoding="utf-8")


def _public_names(models_source: str) -> list[str]:
    names = []
    for node in ast.parse(models_source).body:
        if isinstance(node, ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "TypeAliasType":
                names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
    return sorted(names)


def render(paths: Paths) -> dict[Path, str]:
    """Every file codegen owns, as a path starting with its root's label (`_roots`) -> text.

    The Python header digests only the Python files, so `--python-only` renders them alike."""
    env = _env()
    found = versions(paths.schema)
    files: dict[Path, str] = {}
    typescript: dict[Path, str] = {}
    current = current_version(paths.schema, found)
    for v in found:
        document = bundler.bundle(paths.schema / f"v{v}")
        text = bundler.dumps(document)
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        header = _header(f"schema/v{v}/*.json", digest)
        models = _models(text, header)
        base = PY_LABEL / PACKAGE / f"v{v}"
        files[base / "schema" / bundler.BUNDLE_NAME] = text
        files[base / "models.py"] = models
        files[base / "__init__.py"] = env.get_template("version_init.py.j2").render(
            header=header, version=v, names=_public_names(models)
        )
        if paths.typescript is not None:
            ts_header = ts.banner(f"schema/v{v}/*.json", digest)
            typescript[ts.LABEL / f"v{v}.d.ts"] = ts.declarations(v, text, ts_header)
            typescript[ts.LABEL / f"v{v}.js"] = ts.module(v, text, ts_header)
    migrations = [(a, a + 1, f"v{a}_to_v{a + 1}") for a in found[:-1]]
    index_header = _header(
        ", ".join(f"schema/v{v}" for v in found),
        _digest_of({k.relative_to(PY_LABEL): t for k, t in files.items()}),
    )
    files[PY_LABEL / PACKAGE / "__init__.py"] = env.get_template("package_init.py.j2").render(
        header=index_header,
        versions=found,
        current=current,
        migrations=migrations,
        bundle_name=bundler.BUNDLE_NAME,
    )
    files[PY_LABEL / PACKAGE / "py.typed"] = ""
    if paths.typescript is not None:
        ts_header = ts.banner("schema/v*", _digest_of(typescript))
        typescript[ts.LABEL / "index.js"] = ts.index_js(found, current, ts_header)
        typescript[ts.LABEL / "index.d.ts"] = ts.index_dts(found, current, ts_header)
    return files | typescript


PY_LABEL = Path("generated")
"""How diffs and reports name the Python output root (`Paths.out`)."""


def _roots(paths: Paths) -> list[tuple[Path, Path]]:
    """(label, directory) of every folder codegen owns: what `render`'s keys start with."""
    roots = [(PY_LABEL / PACKAGE, paths.out / PACKAGE)]
    if paths.typescript is not None:
        roots.append((ts.LABEL, paths.typescript))
    return roots


def _target(paths: Paths, key: Path) -> Path:
    """The file on disk a `render` key names."""
    for label, directory in _roots(paths):
        if key.is_relative_to(label):
            return directory / key.relative_to(label)
    raise CodegenError(f"{key} is under no folder codegen owns")


def _digest_of(files: dict[Path, str]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(str(path).encode())
        h.update(files[path].encode())
    return h.hexdigest()[:16]


def owned(paths: Paths) -> set[Path]:
    """Files now in the folders codegen owns (generated/metis_schema, typescript/generated), as
    `render` keys."""
    found: set[Path] = set()
    for label, root in _roots(paths):
        if root.exists():
            found |= {
                label / p.relative_to(root)
                for p in root.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            }
    return found


def write(paths: Paths) -> list[str]:
    """Regenerate; return a line per file written, removed or stub created."""
    files = render(paths)
    report = []
    for rel in sorted(owned(paths) - files.keys()):
        _target(paths, rel).unlink()
        report.append(f"removed {rel}")
    for rel, text in sorted(files.items()):
        target = _target(paths, rel)
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        report.append(f"wrote {rel}")
    report.extend(ensure_migration_stubs(paths))
    return report


def ensure_migration_stubs(paths: Paths) -> list[str]:
    """Create a stub per adjacent version pair when missing; never overwrite one."""
    created = []
    found = versions(paths.schema)
    template = _env().get_template("migration_stub.py.j2")
    for a in found[:-1]:
        stub = paths.migrations / f"v{a}_to_v{a + 1}.py"
        if stub.exists():
            continue
        stub.parent.mkdir(parents=True, exist_ok=True)
        stub.write_text(template.render(a=a, b=a + 1), encoding="utf-8")
        created.append(f"created migration stub {stub}")
    return created


def check(paths: Paths) -> list[str]:
    """Unified diffs of every difference between generated/ and a fresh render."""
    files = render(paths)
    problems = []
    for rel in sorted(owned(paths) | files.keys()):
        target = _target(paths, rel)
        want = files.get(rel)
        have = target.read_text(encoding="utf-8") if target.exists() else None
        if want == have:
            continue
        if want is None:
            problems.append(f"--- {rel}: not produced by codegen (stray or hand-added file)\n")
            continue
        if have is None:
            problems.append(f"--- {rel}: missing (run `python -m codegen`)\n")
            continue
        diff = difflib.unified_diff(
            have.splitlines(keepends=True),
            want.splitlines(keepends=True),
            fromfile=f"{rel} (on disk)",
            tofile=f"{rel} (from schema)",
        )
        problems.append("".join(diff))
    for a in versions(paths.schema)[:-1]:
        stub = paths.migrations / f"v{a}_to_v{a + 1}.py"
        if not stub.exists():
            problems.append(f"--- migration {stub.name} is missing (run `python -m codegen`)\n")
    return problems
