"""Whether the TypeScript tooling is here, for the tests that need Node.

The TypeScript package (typescript/) is generated and tested with Node 20+ and the tooling
its lockfile pins (`npm ci --prefix typescript`). A machine without them still runs the
whole Python suite: those tests skip, each saying what is missing and how to get it, and
CI (.ci/run), which installs both, runs them.
"""

from __future__ import annotations

import shutil

import pytest

from tests.support.paths import REPO

TOOLING = REPO / "typescript"


def missing_node_tooling() -> str | None:
    """Why the TypeScript parts cannot run here, or None when they can."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return (
            "TypeScript part skipped: node/npm not on PATH (Node 20+ runs it; "
            "`python -m codegen --check --python-only` checks the Python side)"
        )
    if not (TOOLING / "node_modules" / "json-schema-to-typescript").is_dir():
        return "TypeScript part skipped: typescript/node_modules missing (run `npm ci --prefix typescript`)"
    return None


needs_node = pytest.mark.skipif(missing_node_tooling() is not None, reason=missing_node_tooling() or "")
"""Mark a test that runs Node or the TypeScript tooling."""
