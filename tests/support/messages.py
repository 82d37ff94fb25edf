"""The one builder of canonical messages for tests: a role, blocks and metadata in, a validated
`Message` out.

Every test that needs a message goes through `build_message`, so a field the schema adds or a
default the tests share changes in one place. Blocks and metadata may be dicts (the JSON a
stored or wire document holds) or the generated models; the result is validated as the
store and the adapters would read it. The wrappers the test modules keep (`user(...)`,
`assistant(...)`) only choose their own defaults (session, id scheme, time) and call this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from metis.ids import new_message_id
from metis_schema.v3 import Message, MessageMetadata, Role

FIXED_TIME = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)  # the default `created_at`
SCHEMA_VERSION = 3


def build_message(
    role: Role | str,
    content: Sequence[Any],
    *,
    session_id: str,
    id: str | None = None,
    created_at: datetime | str | None = None,
    metadata: MessageMetadata | Mapping[str, Any] | None = None,
    **meta: Any,
) -> Message:
    """A canonical message: a fresh message id unless `id` is given, `FIXED_TIME` unless
    `created_at` is; `metadata` (a dict or a `MessageMetadata`) and the `meta` keywords
    (metadata fields) are merged, the keywords last."""
    if isinstance(metadata, MessageMetadata):
        fields: Any = metadata.model_copy(update=meta) if meta else metadata
    else:
        fields = {**(metadata or {}), **meta}
    return Message.model_validate(
        {
            "id": id or new_message_id(),
            "session_id": session_id,
            "role": role,
            "content": list(content),
            "metadata": fields,
            "created_at": created_at or FIXED_TIME,
            "schema_version": SCHEMA_VERSION,
        }
    )
