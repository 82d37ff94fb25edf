"""Migration of stored documents from schema v1 to v2: nothing to change but the version.

v2 is additive over v1 (spec §4.1.3): every v2 addition is a new block type, a new
optional field or a wider pattern (the tool-name rule, the media source kinds), and the
image source keeps its shape under its v2 name, `MediaSource`. So every valid v1 message
document is, field for field, a valid v2 document; the chain sets `schema_version` to 2.

Hashes do not change either: `metis.canonical` hashes every message with the schema
version written as 1 (see `HASHED_SCHEMA_VERSION` there), so a v1 message read back as
v2 keeps the hash it was stored with.
"""

from __future__ import annotations

from typing import Any

FROM_VERSION = 1
TO_VERSION = 2


def migrate(document: dict[str, Any]) -> dict[str, Any]:
    """Return the v2 form of a v1 message document: the same document (see module doc)."""
    return document
