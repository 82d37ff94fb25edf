"""Anthropic server tool blocks and compaction <-> canonical v2 blocks.

- `server_tool_use` (web search, web fetch, code execution, tool search) is a canonical
  server_tool_use of provider "anthropic": id, name and input map as they are.
- `<tool>_tool_result` is a canonical server_tool_result named `<tool>`: its readable
  `content` is what metis can show of it (a web search's results as search_result blocks
  titled and sourced by page, their text being encrypted the title stands for it; a web
  fetch's document; code execution stdout and stderr; a text editor view; the tools a
  tool search found; an error's code, with `is_error`), and `provider_data` is the wire
  block itself, what replay sends back.
- The beta MCP connector's `mcp_tool_use` is a server_tool_use named as the MCP tool
  (its wire type and `server_name` stay in provider_raw, `Replay.extras`, and are put back
  over it on replay), and `mcp_tool_result` a server_tool_result named "mcp" whose
  readable content is the tool's text.
- `compaction` (beta context management) is a canonical compaction of provider
  "anthropic": `content` is the summary, `encrypted_content` the opaque `data`; its
  `signature` and `tool_changes` stay in provider_raw (`Replay.extras`).

Out, all three go back only when their `provider` is "anthropic" (the writer checks; any
other provider's server tool or compaction is a §7.3 drop). metis's own compactions
(provider "metis", `ops.compact`) never reach an adapter: the projection turns them into a
user text turn first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metis_schema.v3 import (
    CompactionBlock,
    ContentBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
)

from .._kit.cache_points import with_cache_point
from .documents import read_document, valid_block
from .facts import PROVIDER

RESULT_SUFFIX = "_tool_result"
_CANONICAL_KEYS = frozenset({"tool_use_id", "cache_control"})
"""Keys of a wire result that have a canonical field (the rest is `provider_data`)."""


def read_server_tool_use(block: Mapping[str, Any], path: str) -> ContentBlock:
    """A declared `wire.ServerToolUseBlock` -> canonical server_tool_use (an MCP call's
    wire type and `server_name` have no canonical field: the reader keeps them as extras)."""
    fields = {
        "type": "server_tool_use",
        "id": block["id"],
        "provider": PROVIDER,
        "name": block["name"],
        "input": block["input"],
    }
    return with_cache_point(valid_block(ServerToolUseBlock, fields, path), block)


def read_server_tool_result(block: Mapping[str, Any], path: str) -> ContentBlock:
    """A declared `wire.ServerToolResultBlock` -> canonical server_tool_result."""
    kind: str = block["type"]
    content, is_error = _readable(block["content"], f"{path}.content")
    fields = {
        "type": "server_tool_result",
        "tool_use_id": block["tool_use_id"],
        "provider": PROVIDER,
        "name": kind.removesuffix(RESULT_SUFFIX),
        "content": content,
        "is_error": is_error or block.get("is_error") is True,
        "provider_data": {k: v for k, v in block.items() if k not in _CANONICAL_KEYS},
    }
    return with_cache_point(valid_block(ServerToolResultBlock, fields, path), block)


def read_compaction(block: Mapping[str, Any], path: str) -> ContentBlock | None:
    """A declared `wire.CompactionBlock` -> canonical compaction; None for a failed one
    with nothing to carry (no summary, no opaque content), which stays foreign."""
    fields: dict[str, Any] = {"type": "compaction", "provider": PROVIDER}
    if block.get("content"):
        fields["summary"] = block["content"]
    if block.get("encrypted_content"):
        fields["data"] = block["encrypted_content"]
    if len(fields) == 2:
        return None
    return with_cache_point(valid_block(CompactionBlock, fields, path), block)


def _readable(content: Any, path: str) -> tuple[list[dict[str, Any] | Any], bool]:
    """The readable canonical blocks of a result's declared content, and whether it is an error."""
    if isinstance(content, str):  # an MCP tool's text
        return [_text(content)] if content else [], False
    if isinstance(content, list):  # web search results, or an MCP tool's text blocks
        return [
            _list_item(item) for item in content if item.get("type") in ("web_search_result", "text")
        ], False
    if "error_code" in content:
        return [_text(content["error_code"])], True
    blocks: list[Any] = []
    inner = content.get("content")
    if isinstance(inner, str):  # a text editor view
        blocks.append(_text(inner))
    elif isinstance(inner, Mapping):  # a web fetch's document (the declared DocumentBlock)
        document = read_document(inner, f"{path}.content")
        if document is not None:
            blocks.append(document)
    blocks.extend(_text(content[name]) for name in ("stdout", "stderr") if content.get(name))
    names = [ref["tool_name"] for ref in content.get("tool_references", ()) if ref.get("tool_name")]
    if names:
        blocks.append(_text("\n".join(names)))
    return blocks, False


def _list_item(item: Mapping[str, Any]) -> dict[str, Any]:
    if item["type"] == "text":
        return _text(item["text"])
    return {
        "type": "search_result",
        "source": item["url"],
        "title": item.get("title") or "",
        "content": [{"type": "text", "text": item.get("title") or item["url"]}],
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def write_server_tool_use(block: ServerToolUseBlock) -> dict[str, Any]:
    """The wire form of an Anthropic server tool call."""
    return {"type": "server_tool_use", "id": block.id, "name": block.name, "input": block.input}


def write_server_tool_result(block: ServerToolResultBlock) -> dict[str, Any] | None:
    """The wire result Anthropic gave (its `provider_data`), or None when it was not kept."""
    data = block.provider_data
    if not data or not isinstance(data.get("type"), str) or not data["type"].endswith(RESULT_SUFFIX):
        return None
    return {**data, "tool_use_id": block.tool_use_id}


def write_compaction(block: CompactionBlock) -> dict[str, Any]:
    """The wire compaction block of an Anthropic compaction."""
    out: dict[str, Any] = {"type": "compaction", "content": block.summary}
    if block.data is not None:
        out["encrypted_content"] = block.data
    return out


__all__ = [
    "read_compaction",
    "read_server_tool_result",
    "read_server_tool_use",
    "write_compaction",
    "write_server_tool_result",
    "write_server_tool_use",
]
