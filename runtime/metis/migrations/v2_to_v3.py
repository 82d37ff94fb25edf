"""Migration of stored documents from schema v2 to v3: nothing to change but the version.

v3 is additive over v2 (spec §4.1.3): its additions are new types (request options, and
what later v3 work adds: provider-run tool definitions, usage in billing units, stored
tool sets) and new optional fields, each marked `x-metis-added-in: 3`. Every valid v2
message document is, field for field, a valid v3 document; the chain sets
`schema_version` to 3.

Usage's v3 fields (`units`, `billed_cost_usd`, `unpriced_reason`) are optional and need no
data change: a v2 Usage has none of them, and its cost stays as stored, under the
pricing_version of its time (`metis price` reprices beside it, never over it).

Hashes do not change: `metis.canonical` hashes every message with the schema version
written as 1 (`HASHED_SCHEMA_VERSION`), so a v2 message read back as v3 keeps its hash.
"""

from __future__ import annotations

from typing import Any

FROM_VERSION = 2
TO_VERSION = 3


def migrate(document: dict[str, Any]) -> dict[str, Any]:
    """Return the v3 form of a v2 message document: the same document (see module doc)."""
    return document
