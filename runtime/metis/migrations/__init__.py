"""Upgrade stored documents from the schema version they were written in to a newer one.

Why this lives in the runtime and not in generated/: a schema bump is a data change that
no generator can infer (a renamed field, a split block), so `python -m codegen` only
creates one stub module per adjacent version pair, `v{n}_to_v{n+1}.py`, in this package
and never overwrites it; a person fills in its `migrate(document) -> document`. This
module is the small engine that chains those steps (spec §10, §11.1.4): a message stored
as v1 and read by code at v3 goes through `v1_to_v2` then `v2_to_v3`, and `schema_version`
is set after each step so a step never has to remember to do it.

The engine works on JSON-compatible dicts, not on models: a v1 document cannot be loaded
into v3 models, and each step's input is exactly what was stored at its version. It
refuses to downgrade (old code must not rewrite newer data) and fails loudly, naming the
step, when a step is missing or is still the codegen stub, instead of handing an
unmigrated document to code that expects the new shape.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

from metis_schema import CURRENT_VERSION

from metis import _json
from metis.errors import MigrationError

Document = dict[str, Any]
"""A stored message as JSON-compatible data (what `model_dump(mode="json")` produces)."""

DEFAULT_PACKAGE = "metis.migrations"
"""The package holding the `v{n}_to_v{n+1}` step modules codegen creates."""


def step_module_name(from_version: int, package: str = DEFAULT_PACKAGE) -> str:
    """Dotted name of the module migrating `from_version` to the next version."""
    return f"{package}.v{from_version}_to_v{from_version + 1}"


def document_version(doc: Document) -> int:
    """The `schema_version` a stored document declares; a MigrationError if it has none."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise MigrationError(
            f"document has no valid schema_version (got {version!r})",
            path="schema_version",
            hint="stored messages always record the schema version they were written in (spec §10.1)",
        )
    return version


def _load_step(from_version: int, package: str) -> Callable[[Document], Any]:
    name = step_module_name(from_version, package)
    step = f"v{from_version} -> v{from_version + 1}"
    try:
        module: ModuleType = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name not in {name, package} and not (exc.name and package.startswith(exc.name + ".")):
            raise MigrationError(f"migration step {step} ({name}) failed to import: {exc}") from exc
        raise MigrationError(
            f"missing migration step {step}: no module {name}",
            hint="run `python -m codegen` to create the stub, then fill in its migrate()",
        ) from exc
    declared = (
        getattr(module, "FROM_VERSION", from_version),
        getattr(module, "TO_VERSION", from_version + 1),
    )
    if declared != (from_version, from_version + 1):
        raise MigrationError(
            f"migration module {name} declares v{declared[0]} -> v{declared[1]}, expected {step}"
        )
    migrate = getattr(module, "migrate", None)
    if not callable(migrate):
        raise MigrationError(f"migration step {step}: {name} has no migrate(document) function")
    return cast(Callable[[Document], Any], migrate)


def migrate_document(
    doc: Document, to_version: int | None = None, *, package: str = DEFAULT_PACKAGE
) -> Document:
    """Return `doc` upgraded to `to_version` (default: the current schema version).

    Steps `package.v{n}_to_v{n+1}.migrate` run in order from the document's
    `schema_version`; `schema_version` is set after each. The input is never modified: a
    document already at the target is returned as is, any other gets a migrated copy.
    `package` exists so tests and tools can point the chain at other step modules.

    Raises MigrationError when the document has no valid `schema_version`, when the target
    is older than the document (no downgrades), and when a step is missing, is still the
    codegen stub (raises NotImplementedError), or does not return a document.
    """
    target = CURRENT_VERSION if to_version is None else to_version
    version = document_version(doc)
    if version > target:
        raise MigrationError(
            f"refusing to downgrade a v{version} document to v{target}",
            path="schema_version",
            hint=f"documents are only migrated forward; read it with code that knows v{version}",
        )
    if version == target:
        return doc
    current: Document = _copied(doc)
    while version < target:
        migrate = _load_step(version, package)
        step = f"v{version} -> v{version + 1}"
        try:
            result = migrate(current)
        except NotImplementedError as exc:
            raise MigrationError(
                f"migration step {step} ({step_module_name(version, package)}) is not written yet: {exc}",
                hint="fill in migrate() in the stub codegen created",
            ) from exc
        if not isinstance(result, dict):
            raise MigrationError(
                f"migration step {step} returned {type(result).__name__}, expected a document dict"
            )
        version += 1
        result["schema_version"] = version
        current = result
    return current


def _copied(doc: Document) -> Document:
    """A copy of a JSON document's containers (`_json.copied`, iterative: metadata nested
    about a thousand deep, which the JSON reader allows, must reach validation to be
    refused or kept as it is)."""
    return cast(Document, _json.copied(doc))


__all__ = [
    "DEFAULT_PACKAGE",
    "Document",
    "MigrationError",
    "document_version",
    "migrate_document",
    "step_module_name",
]
