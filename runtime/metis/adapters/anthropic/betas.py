"""The `anthropic-beta` header a request body needs, read from the body itself.

Anthropic refuses a beta feature's fields and blocks unless the request names the beta in
its `anthropic-beta` header. A replayed history holding a native compaction block, or a
request whose provider options ask for context management or the MCP connector, needs the
header whoever built the body, so the header is derived from what the body holds: a table
of the blocks, block sources, context-management edits and top-level fields each beta
governs, and the beta-only tool types (names from
Anthropic's beta-headers list, as the anthropic SDK's `AnthropicBetaParam` spells them).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

COMPACTION = "compact-2026-01-12"
CONTEXT_MANAGEMENT = "context-management-2025-06-27"
MCP_CLIENT = "mcp-client-2025-11-20"
FILES_API = "files-api-2025-04-14"

BLOCKS = MappingProxyType(
    {"compaction": COMPACTION, "mcp_tool_use": MCP_CLIENT, "mcp_tool_result": MCP_CLIENT}
)
"""Content block type -> the beta a request carrying it needs."""

EDITS = MappingProxyType(
    {
        "compact_20260112": COMPACTION,
        "clear_tool_uses_20250919": CONTEXT_MANAGEMENT,
        "clear_thinking_20251015": CONTEXT_MANAGEMENT,
    }
)
"""`context_management.edits[].type` -> its beta."""

FIELDS = MappingProxyType({"mcp_servers": MCP_CLIENT})
"""Top-level request field -> its beta."""

TOOLS = MappingProxyType(
    {
        "mcp_toolset": MCP_CLIENT,
        "computer_20241022": "computer-use-2024-10-22",
        "computer_20250124": "computer-use-2025-01-24",
        "computer_20251124": "computer-use-2025-11-24",
        "advisor_20260301": "advisor-tool-2026-03-01",
    }
)
"""`tools[].type` of a beta-only tool -> its beta (a replayed provider tool, `provider_tools`)."""

SOURCES = MappingProxyType({"file": FILES_API})
"""A block's `source.type` -> its beta (a document or image by Files API id)."""


def betas(body: Mapping[str, Any]) -> list[str]:
    """The betas `body` uses, sorted (a body `to_wire` wrote: its shapes are known)."""
    found = {beta for field, beta in FIELDS.items() if field in body}
    for tool in body.get("tools") or ():
        beta = TOOLS.get(str(tool.get("type"))) if isinstance(tool, Mapping) else None
        if beta is not None:
            found.add(beta)
    management = body.get("context_management")
    if isinstance(management, Mapping):
        for edit in management.get("edits") or ():
            beta = EDITS.get(str(edit.get("type"))) if isinstance(edit, Mapping) else None
            if beta is not None:
                found.add(beta)
    for turn in body.get("messages") or ():
        _blocks(turn.get("content"), found)
    return sorted(found)


def _blocks(content: Any, found: set[str]) -> None:
    """The betas of a content list's blocks, and of the blocks inside its tool results."""
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, Mapping):
            continue
        beta = BLOCKS.get(str(block.get("type")))
        if beta is not None:
            found.add(beta)
        source = block.get("source")
        if isinstance(source, Mapping) and str(source.get("type")) in SOURCES:
            found.add(SOURCES[str(source.get("type"))])
        if block.get("type") == "tool_result":
            _blocks(block.get("content"), found)


def beta_headers(body: Mapping[str, Any]) -> dict[str, str]:
    """`{"anthropic-beta": "a,b"}` for the betas `body` uses, or {}."""
    names = betas(body)
    return {"anthropic-beta": ",".join(names)} if names else {}


__all__ = [
    "BLOCKS",
    "COMPACTION",
    "CONTEXT_MANAGEMENT",
    "EDITS",
    "FIELDS",
    "FILES_API",
    "MCP_CLIENT",
    "SOURCES",
    "beta_headers",
    "betas",
]
