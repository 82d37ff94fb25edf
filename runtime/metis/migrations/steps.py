"""Small pure helpers for writing `v{n}_to_v{n+1}.migrate` steps.

Most schema changes are one of a few shapes (a metadata field renamed, dropped or given a
value; a block rewritten wherever it occurs), and the easy mistake is the walk, not the
change: forgetting blocks nested inside a tool_result's content, or mutating the
caller's document. Each helper takes a document and returns a new one, never modifying
its argument (parts it does not change may be shared with it), so steps compose as
`doc = rename_metadata_field(doc, ...); doc = map_blocks(doc, ...)`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metis.errors import MigrationError
from metis.migrations import Document

Block = dict[str, Any]
"""One content block as JSON-compatible data."""


def _metadata(doc: Document) -> dict[str, Any]:
    metadata = doc.get("metadata", {})
    if not isinstance(metadata, dict):
        raise MigrationError("metadata is not an object", path="metadata")
    return metadata


def rename_metadata_field(doc: Document, old: str, new: str) -> Document:
    """Move `metadata[old]` to `metadata[new]`; a document without `old` is returned unchanged.

    Raises MigrationError when both names are present, since one value would be lost.
    """
    metadata = _metadata(doc)
    if old not in metadata:
        return doc
    if new in metadata:
        raise MigrationError(
            f"cannot rename metadata.{old} to metadata.{new}: both are present", path=f"metadata.{new}"
        )
    renamed = {(new if key == old else key): value for key, value in metadata.items()}
    return {**doc, "metadata": renamed}


def drop_metadata_field(doc: Document, name: str) -> Document:
    """Remove `metadata[name]` if present (a field the new version no longer has)."""
    metadata = _metadata(doc)
    if name not in metadata:
        return doc
    return {**doc, "metadata": {key: value for key, value in metadata.items() if key != name}}


def set_metadata_default(doc: Document, name: str, value: Any) -> Document:
    """Set `metadata[name] = value` unless the document already has that field."""
    metadata = _metadata(doc)
    if name in metadata:
        return doc
    return {**doc, "metadata": {**metadata, name: value}}


def _map(blocks: Any, fn: Callable[[Block], Block | None], path: str) -> list[Block]:
    if not isinstance(blocks, list):
        raise MigrationError("content is not a list of blocks", path=path)
    out: list[Block] = []
    for i, block in enumerate(blocks):
        where = f"{path}[{i}]"
        if not isinstance(block, dict):
            raise MigrationError("content block is not an object", path=where)
        if block.get("type") == "tool_result" and "content" in block:
            mapped = fn({**block, "content": _map(block["content"], fn, f"{where}.content")})
        else:
            mapped = fn(block)
        if mapped is not None:
            out.append(mapped)
    return out


def map_blocks(doc: Document, fn: Callable[[Block], Block | None]) -> Document:
    """Apply `fn` to every content block, including blocks nested in tool_result content.

    Nested blocks are mapped before the tool_result that holds them, so `fn` sees a
    tool_result whose content is already migrated. `fn` returns the new block, the same
    block to keep it, or None to drop it; it must not modify its argument.
    """
    return {**doc, "content": _map(doc.get("content", []), fn, "content")}


__all__ = [
    "Block",
    "Document",
    "drop_metadata_field",
    "map_blocks",
    "rename_metadata_field",
    "set_metadata_default",
]
