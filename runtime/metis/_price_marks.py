"""The two pricing_version values that name no price source: `unpriced` and `no-usage`.

Their one definition, in a module that imports nothing, so that the CLI's tables (loaded
by `metis --help`, which must not load the schema models) compare and print the same
values `metis.pricing` records; `metis.pricing` exports them as part of its API.
"""

from __future__ import annotations

UNPRICED = "unpriced"
"""pricing_key / pricing_version of models no price source covers."""
NO_USAGE = "no-usage"
"""pricing_version of a Usage with nothing counted: not priced, since nothing was used."""

__all__ = ["NO_USAGE", "UNPRICED"]
