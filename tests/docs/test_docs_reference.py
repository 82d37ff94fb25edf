"""The API reference (docs/api/*.md, mkdocstrings) covers what the README and the docs use.

Every `metis.…` name the README, the docs pages and the examples call must be rendered by
a `:::` directive: the object itself, or the module that exports it. And the session
methods the README walks through (send, add_tool_result, swap, fork, repair, compact) are
inherited from a shared base, which mkdocstrings only renders with `inherited_members`;
the Client constructor only with `merge_init_into_class`. `mkdocs build --strict` (nox -s
docs, in CI) checks that every directive renders; this checks that none is missing.
"""

from __future__ import annotations

import importlib
import re
import types
from typing import Any

import metis
import metis_schema
import pytest

from tests.support.paths import REPO

DOCS = REPO / "docs"
SOURCES = [REPO / "README.md", *sorted(DOCS.glob("*.md")), *sorted((REPO / "examples").glob("*.py"))]
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)
USED = re.compile(r"\bmetis(?:\.[A-Za-z_]\w*)+")
SESSION_METHODS = ("send", "add_tool_result", "swap", "fork", "repair", "compact")


def _directives() -> set[str]:
    return {
        name for page in (DOCS / "api").glob("*.md") for name in DIRECTIVE.findall(page.read_text("utf-8"))
    }


def _resolve(dotted: str) -> tuple[str, Any] | None:
    """The longest prefix of `dotted` that names a class or function, and that object."""
    parts = dotted.split(".")
    found: tuple[str, Any] | None = None
    value: Any = metis
    for i, part in enumerate(parts[1:], start=2):
        try:
            value = getattr(value, part)
        except AttributeError:
            try:
                value = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                break
        if isinstance(value, type | types.FunctionType):
            found = (".".join(parts[:i]), value)
    return found


def _used() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for source in SOURCES:
        for dotted in USED.findall(source.read_text("utf-8")):
            hit = _resolve(dotted)
            if hit is not None:
                names[hit[0]] = hit[1]
    return names


def _target(directive: str) -> Any:
    """What a `::: dotted.name` directive renders: a module, or an object in one."""
    try:
        return importlib.import_module(directive)
    except ImportError:
        module, _, name = directive.rpartition(".")
        return getattr(importlib.import_module(module), name, None)


def _covered(obj: Any, directives: set[str]) -> bool:
    name = obj.__name__
    for directive in directives:
        target = _target(directive)
        if target is obj:
            return True
        if isinstance(target, types.ModuleType):
            exported = getattr(target, "__all__", None) or [n for n in vars(target) if not n.startswith("_")]
            if name in exported and getattr(target, name, None) is obj:
                return True
    return False


def test_the_readme_and_docs_use_names_this_test_can_see() -> None:
    used = _used()
    for name in ("metis.Client", "metis.Store", "metis.ToolDefinition", "metis.message_hash", "metis.user"):
        assert name in used, name


@pytest.mark.parametrize("name", sorted(_used()))
def test_every_name_the_docs_use_is_in_the_reference(name: str) -> None:
    obj = _used()[name]
    assert _covered(obj, _directives()), f"{name} ({obj.__module__}) is used but no docs/api page renders it"


@pytest.mark.parametrize(
    "name",
    ["Message", "MessageMetadata", "TextBlock", "ToolUseBlock", "ToolResultBlock", "ToolDefinition", "Usage"],
)
def test_the_models_have_their_own_entries(name: str) -> None:
    assert f"metis_schema.v{metis_schema.CURRENT_VERSION}.{name}" in _directives()


def test_session_methods_and_the_client_constructor_render() -> None:
    config = (REPO / "mkdocs.yml").read_text("utf-8")
    client_page = (DOCS / "api" / "client.md").read_text("utf-8")
    assert "merge_init_into_class: true" in config and "inherited_members: true" in client_page
    for method in SESSION_METHODS:
        assert callable(getattr(metis.Session, method)), method
    assert callable(metis.Client.resume)
