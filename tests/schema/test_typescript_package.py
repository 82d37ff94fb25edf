"""The TypeScript package as a user gets it: `npm pack`, `npm install` of the tarball into a
fresh project, and a TypeScript program compiled against the installed declarations.

The program validates and hashes a message Python wrote, and writes a message of its own
with its hash; Python reads that one back and must compute the same hash. So a message
crosses the language boundary both ways with one identity (spec §6.5), through the package
exactly as published (the tarball carries ajv, so installing it needs no registry).
Skipped, saying why, where Node or the package's tooling is missing (tests/support/node_support.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import metis
import metis_schema
from metis.canonical import canonical_json, message_to_json, read_message

from codegen import hash_vectors
from tests.support.node_support import REPO, TOOLING, needs_node

PROGRAM = """\
import { isValid, messageHash, canonicalJson, validate, v1, VERSIONS, type Message } from "@metis/schema";
import * as v1ByPath from "@metis/schema/v1";

const fromPython: string = FROM_PYTHON;
const parsed: unknown = JSON.parse(fromPython);
if (!isValid(parsed)) throw new Error(JSON.stringify(validate(parsed)));
const message: Message = parsed;

const ours: Message = {
  id: "01HZ0000000000000000000009",
  session_id: message.session_id,
  role: "user",
  content: [{ type: "text", text: "Écrit en TypeScript: 0.5 + 1e-7 😀" }],
  metadata: { status: "complete" },
  created_at: "2026-05-08T12:00:09.5Z",
  schema_version: 3,
};
const oursText = JSON.stringify(ours);
console.log(JSON.stringify({
  role: message.role,
  python_hash: messageHash(fromPython),
  python_canonical: canonicalJson(fromPython),
  ours: oursText,
  ours_hash: messageHash(ours),
  v1_has_no_documents: !v1.isValid({ type: "document" }, "ContentBlock"),
  v1_by_path: v1ByPath.VERSION,
  versions: VERSIONS,
}));
"""

TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "target": "es2022",
        "module": "nodenext",
        "moduleResolution": "nodenext",
        "types": [],
        "outDir": "out",
        "skipLibCheck": False,
    },
    "files": ["main.ts", "hash.ts"],
}


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"{' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@needs_node
def test_packed_package_installs_and_agrees_with_python_both_ways(tmp_path: Path) -> None:
    npm = shutil.which("npm")
    node = shutil.which("node")
    assert npm and node
    packed = _run([npm, "pack", str(TOOLING), "--pack-destination", str(tmp_path), "--json"], tmp_path)
    tarball = tmp_path / json.loads(packed)[0]["filename"]
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text('{"name": "consumer", "private": true, "type": "module"}\n')
    _run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tarball)], project)

    message = metis.user("Zürich, 1.0 and 😀", session_id="sess_ts")
    text = message_to_json(message).decode("utf-8")
    program = PROGRAM.replace("FROM_PYTHON", json.dumps(text))
    (project / "main.ts").write_text(program, encoding="utf-8")
    (project / "tsconfig.json").write_text(json.dumps(TSCONFIG), encoding="utf-8")
    shutil.copy(TOOLING / "examples" / "hash.ts", project / "hash.ts")  # the docs' example
    _run([str(TOOLING / "node_modules" / ".bin" / "tsc"), "-p", "tsconfig.json"], project)
    out = json.loads(_run([node, "out/main.js"], project))
    docs_example = _run([node, "out/hash.js"], project).splitlines()
    assert docs_example[0] == "user 1"
    assert docs_example[2] == metis.message_hash(read_message(json.dumps(hash_vectors.USER)))

    assert out["role"] == "user"
    assert out["python_hash"] == metis.message_hash(message)
    assert out["python_canonical"] == canonical_json(message).decode("utf-8")
    assert metis.message_hash(read_message(out["ours"])) == out["ours_hash"]
    assert out["v1_has_no_documents"] is True
    assert out["v1_by_path"] == 1
    assert out["versions"] == list(metis_schema.VERSIONS)


@needs_node
def test_tarball_holds_the_package_and_nothing_of_the_repository(tmp_path: Path) -> None:
    npm = shutil.which("npm")
    assert npm
    listing = json.loads(_run([npm, "pack", str(TOOLING), "--dry-run", "--json"], REPO))[0]
    paths = {f["path"] for f in listing["files"]}
    assert {
        "package.json",
        "README.md",
        "generated/index.js",
        "generated/index.d.ts",
        "lib/canonical.js",
    } <= paths
    assert not any(p.startswith(("test/", "scripts/", "examples/")) for p in paths)
    assert any(p.startswith("node_modules/ajv/") for p in paths)
