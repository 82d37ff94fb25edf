"""Read rows the store itself wrote without repeating the checks made when they were written.

Why: a stored message passed `Message` validation and the §5 invariants on its way in.
Reading it back through `Message.model_validate` runs, per message, the models' Python
hooks again (`metis_base.SchemaModel`: RFC 3339 and decimal syntax checks), which make up
much of the cost of loading a long session. So for rows at the current schema version,
content and metadata are validated by pydantic-core validators compiled from the models'
own core schemas with exactly those hooks removed: every type, pattern, discriminator and
`extra="forbid"` check still runs (in Rust), and the instances are the real generated
classes. The Message itself is then built from the row's columns, each already typed.

What a row must not get past is still refused: an unknown block type or metadata field,
a wrong type, a missing field raise pydantic's ValidationError, and the caller falls back
to the full forward-compatible reader (`metis.canonical.read_message`), which migrates,
drops what it does not know with a WARN, and validates everything.

If pydantic ever lays out its core schema differently, `_without_rule_hooks` simply
finds nothing to remove and these validators become full ones: slower, never wrong.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from metis_base import SchemaModel
from metis_schema.v1 import Message, MessageMetadata, Role
from pydantic_core import SchemaValidator

from ..canonical import CONTENT_LIST

TRUSTED_VERSION = 1
"""The schema version of the models built here (metis_schema.v1)."""

_HOOKS = frozenset({"function-before", "function-after"})
_HOOK_NAMES = frozenset(f"{SchemaModel.__name__}.{name}" for name in ("_schema_formats",))
_MESSAGE_FIELDS = frozenset(Message.model_fields)


def _is_hook(node: dict[str, Any]) -> bool:
    function = node.get("function")
    if isinstance(function, dict):  # {"type": "no-info", "function": <callable>}
        function = function.get("function")
    return getattr(function, "__qualname__", None) in _HOOK_NAMES


def _without_rule_hooks(node: Any) -> Any:
    """A copy of a core schema with SchemaModel's rule validators unwrapped."""
    if isinstance(node, dict):
        kind = node.get("type")
        if isinstance(kind, str) and kind in _HOOKS and _is_hook(node):
            return _without_rule_hooks(node["schema"])
        return {key: _without_rule_hooks(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_without_rule_hooks(item) for item in node]
    return node


def _validator(schema: Any) -> SchemaValidator:
    return SchemaValidator(_without_rule_hooks(schema))


content_from_json = _validator(CONTENT_LIST.core_schema).validate_json
"""Stored `content_json` -> list of content blocks (rule hooks skipped, see module doc)."""
metadata_from_json = _validator(MessageMetadata.__pydantic_core_schema__).validate_json
"""Stored `metadata_json` -> MessageMetadata (rule hooks skipped, see module doc)."""
_ROLES = {role.value: role for role in Role}


if {"id", "session_id", "role", "content", "metadata", "created_at", "schema_version"} != _MESSAGE_FIELDS:
    raise RuntimeError("metis.store._trusted: Message fields changed; update build_message")


def build_message(  # noqa: PLR0917  (one positional per column: it runs once per row)
    message_id: str, session_id: str, role: str, content_json: str, metadata_json: str, created_at: datetime
) -> Message:
    """A Message from a current-version row (raises pydantic's ValidationError or KeyError)."""
    values = {
        "id": message_id,
        "session_id": session_id,
        "role": _ROLES[role],
        "content": content_from_json(content_json),
        "metadata": metadata_from_json(metadata_json),
        "created_at": created_at,
        "schema_version": TRUSTED_VERSION,
    }
    return Message(**values)


__all__ = ["TRUSTED_VERSION", "build_message", "content_from_json", "metadata_from_json"]
