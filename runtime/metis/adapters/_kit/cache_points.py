"""`cache_control` <-> the canonical cache breakpoint (`cache_point`): Anthropic's, also OpenRouter's.

`{"type": "ephemeral", "ttl"?}` on a block is `CachePoint(ttl?)` on the canonical block,
both directions. Anthropic takes it on every block kind the writer sends except thinking
and redacted thinking (SDK `thinking_block_param.py`, `redacted_thinking_block_param.py`
have no `cache_control`); there the breakpoint is a §7.3 loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from metis_schema.v3 import CachePoint, CacheTtl
from pydantic import BaseModel

NO_CACHE_CONTROL = frozenset({"thinking", "redacted_thinking"})
"""Wire block types Anthropic refuses `cache_control` on."""

_Block = TypeVar("_Block", bound=BaseModel)


def with_cache_point(canonical: _Block, block: Mapping[str, Any]) -> _Block:
    """`canonical` with the breakpoint of wire `block`'s `cache_control` (the same object
    when it has none)."""
    control = block.get("cache_control")
    if not control:
        return canonical
    ttl = control.get("ttl")
    point = CachePoint(ttl=CacheTtl(ttl)) if ttl else CachePoint()
    return canonical.model_copy(update={"cache_point": point})


def cache_control(point: CachePoint) -> dict[str, Any]:
    """The wire `cache_control` of a canonical breakpoint."""
    if point.ttl is None:
        return {"type": "ephemeral"}
    return {"type": "ephemeral", "ttl": point.ttl.value}


__all__ = ["NO_CACHE_CONTROL", "cache_control", "with_cache_point"]
