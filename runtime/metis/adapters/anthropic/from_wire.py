"""Anthropic replies -> canonical ASSISTANT messages (the `_process_response` of this adapter).

The body is checked once against `wire.Response` by pydantic-core; what follows only maps
declared fields. Blocks the model writes become canonical text (with its citations:
`citations`), tool_use, thinking, redacted_thinking, and the v2 server_tool_use,
server_tool_result and compaction (`server_tools`; the beta MCP connector's
mcp_tool_use and mcp_tool_result too). Blocks with no canonical type (container_upload,
later types) are kept verbatim in provider_raw with one
WARN naming them (the stream decoder and the request importer read assistant blocks
through `assistant_block` too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from metis_schema.v3 import ContentBlock, Message, RedactedThinkingBlock
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._kit.cache_points import with_cache_point
from .._kit.importing import thinking_block, tool_use_block
from .._kit.reader import read
from . import wire
from .citations import read_text
from .facts import FACTS, PROVIDER
from .provider_raw import Replay, response_raw, warn_foreign
from .server_tools import read_compaction, read_server_tool_result, read_server_tool_use


class _At(NamedTuple):
    """Where a block is read: the session's tool ids, the message's replay, the block's key."""

    tool_ids: ToolIdMap
    replay: Replay
    key: str
    path: str


def _text(block: wire.TextBlock, at: _At) -> ContentBlock:
    return read_text(block, at.replay, at.key, at.path)


def _tool_use(block: wire.ToolUseBlock, at: _At) -> ContentBlock:
    canonical = at.tool_ids.register_incoming(PROVIDER, block["id"])
    return with_cache_point(tool_use_block(canonical, block["name"], block["input"]), block)


def _thinking(block: wire.ThinkingBlock, at: _At) -> ContentBlock:
    return thinking_block(
        {"type": "thinking", "text": block["thinking"], "signature": block.get("signature") or None}
    )


def _redacted(block: wire.RedactedThinkingBlock, at: _At) -> ContentBlock:
    return RedactedThinkingBlock(type="redacted_thinking", data=block["data"])


def _server_tool_use(block: wire.ServerToolUseBlock, at: _At) -> ContentBlock:
    return read_server_tool_use(block, at.path)


def _server_tool_result(block: wire.ServerToolResultBlock, at: _At) -> ContentBlock:
    return read_server_tool_result(block, at.path)


def _compaction(block: wire.CompactionBlock, at: _At) -> ContentBlock | None:
    return read_compaction(block, at.path)


_Reader = Callable[[Any, _At], ContentBlock | None]
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error", "cache_control", "caller"})
_READERS: dict[str, tuple[_Reader, frozenset[str]]] = {
    "text": (_text, frozenset({"type", "text", "citations", "cache_control"})),
    "tool_use": (_tool_use, frozenset({"type", "id", "name", "input", "caller", "cache_control"})),
    "thinking": (_thinking, frozenset({"type", "thinking", "signature"})),
    "redacted_thinking": (_redacted, frozenset({"type", "data"})),
    "server_tool_use": (_server_tool_use, frozenset({"type", "id", "name", "input", "cache_control"})),
    # an MCP call is written back as a server_tool_use: its `type` and `server_name` are
    # extras, re-applied over it on replay to Anthropic
    "mcp_tool_use": (_server_tool_use, frozenset({"id", "name", "input", "cache_control"})),
    "compaction": (_compaction, frozenset({"type", "content", "encrypted_content", "cache_control"})),
    **dict.fromkeys(wire.SERVER_TOOL_RESULTS, (_server_tool_result, _RESULT_KEYS)),
}
"""Wire block type -> (reader, the keys it maps); any other key of the block is kept as an extra.
`caller` (who invoked a tool: the model or code execution) has no canonical field and is
not replayed on a client tool call; a server tool call keeps it as an extra, a server tool
result in its `provider_data`."""


def assistant_block(
    block: Mapping[str, Any], position: int, *, tool_ids: ToolIdMap, replay: Replay, path: str = "content"
) -> ContentBlock | None:
    """A declared assistant block (`wire.ResponseBlock`) -> canonical; None (kept in `replay`)
    when it has no canonical type."""
    kind = block.get("type")
    entry = _READERS.get(kind) if isinstance(kind, str) else None  # a hostile `type` may be a list
    key = str(position)
    where = f"{path}[{position}]"
    if entry is None:
        replay.foreign[key] = dict(block)
        return None
    reader, known = entry
    try:
        canonical = reader(block, _At(tool_ids, replay, key, where))
    except ValidationError as exc:  # a value the schema refuses, e.g. a tool name past 128 characters
        raise WireFormatError(
            f"{kind} block cannot be read: {pydantic_problems(exc)[0]}", provider=PROVIDER, path=where
        ) from None
    if canonical is None:
        replay.foreign[key] = dict(block)
    else:
        replay.keep_extras(key, block, known)
    return canonical


def read_response(body: Any, context: RequestContext) -> Message:
    """A non-streamed reply body -> one complete canonical ASSISTANT message."""
    if isinstance(body, Mapping) and body.get("type") == "error":
        raise FACTS.parse_error(body)
    reply = read(wire.Response, body, provider=PROVIDER, what="response")
    replay = Replay()
    content: list[ContentBlock] = []
    skipped: list[str] = []
    for i, block in enumerate(reply["content"]):
        canonical = assistant_block(block, i, tool_ids=context.tool_ids, replay=replay)
        if canonical is None:
            skipped.append(str(block.get("type")))
        else:
            content.append(canonical)
    if skipped or replay.lost:
        warn_foreign(context.session_id, context.message_id, skipped, "response", replay.lost)
    if not content:
        raise WireFormatError(
            f"response has no block metis can represent (only {', '.join(skipped) or 'none'})",
            provider=PROVIDER,
            path="content",
            hint="a reply needs at least one block with a canonical type",
        )
    stop = reply.get("stop_reason")
    raw = response_raw(reply.get("id"), reply.get("model"), stop, reply.get("stop_sequence"), replay)
    usage = reply.get("usage")
    return finish_assistant(
        context,
        provider=PROVIDER,
        content=content,
        counts=normalize_usage(PROVIDER, usage, read_as=wire.Usage),  # read with the reply
        stop_reason=FACTS.stop_reason(stop),
        provider_raw=raw,
    )


__all__ = ["assistant_block", "read_response"]
