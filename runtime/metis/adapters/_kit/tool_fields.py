"""A function tool's provider-only fields: kept for replay to their provider, a loss elsewhere.

Some fields of a function tool declaration have no canonical meaning and mean something to
one provider alone: Anthropic's `cache_control` on a tool (a prompt-cache breakpoint after
the tool list's prefix up to that tool). An import keeps such a field in the tool's
`provider_data[<provider>][<field>]` (`read_kept`), the writer of that provider, and only
it, writes it back as it came (`write_kept`), and every other writer says it is not sent
with one §7.3 WARN carrying the five fields for the request (`warn_kept`), as the import
said before the field was kept. The table `KEPT` is the one place these fields are listed;
the same mechanism `strict` uses for `strict_literal`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from metis_schema.v3 import ToolDefinition

from ... import _json
from .losses import Losses

KEPT: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "anthropic": MappingProxyType({"cache_control": "a prompt-cache breakpoint on the tool list"}),
    }
)
"""provider -> {function tool field it alone takes -> what the field is (for the WARN)}."""


def read_kept(tool: ToolDefinition, wire: Mapping[str, Any], provider: str) -> ToolDefinition:
    """`tool` with `provider`'s kept fields of the wire tool `wire` in its provider_data."""
    found = {key: _json.copied(wire[key]) for key in KEPT.get(provider, {}) if key in wire}
    return with_provider_data(tool, provider, found) if found else tool


def with_provider_data(tool: ToolDefinition, provider: str, fields: Mapping[str, Any]) -> ToolDefinition:
    """A copy of `tool` with `fields` added to its `provider_data[provider]` (the entries
    copied, so `tool`'s own are never changed): how an import keeps what a wire tool said
    for its provider alone."""
    data = {key: dict(entry) for key, entry in (tool.provider_data or {}).items()}
    data.setdefault(provider, {}).update(fields)
    return tool.model_copy(update={"provider_data": data})


def write_kept(tool: ToolDefinition, out: dict[str, Any], provider: str) -> None:
    """Put the fields an import of `provider` kept on `tool` back into its wire tool `out`."""
    own = (tool.provider_data or {}).get(provider, {})
    for key in KEPT.get(provider, {}):
        if key in own:
            out[key] = _json.copied(own[key])


def warn_kept(provider: str, tools: Sequence[ToolDefinition], *, session_id: str) -> None:
    """One WARN per other provider's kept field that the tools of a request to `provider`
    hold (naming the tools): `provider` has no place for it, so it is not sent."""
    for origin, fields in KEPT.items():
        if origin == provider:
            continue
        for key, meaning in fields.items():
            names = [t.name for t in tools if key in (t.provider_data or {}).get(origin, {})]
            if not names:
                continue
            reason = f"{origin} tool field {key} ({meaning}) has no {provider} place; not sent"
            Losses(provider, session_id).request(key, reason, at=f"tools {', '.join(names)}")


__all__ = ["KEPT", "read_kept", "warn_kept", "with_provider_data", "write_kept"]
