"""Anthropic replies -> canonical ASSISTANT messages (the `_process_response` of this adapter).

The body is checked once against `wire.Response` by pydantic-core; what follows only maps
declared fields. Blocks the model writes become canonical text, tool_use, thinking and
redacted_thinking; server tool blocks (server_tool_use, web_search_tool_result, ...) have no
canonical type and are kept verbatim in provider_raw with one WARN naming them (the stream
decoder and the request importer read assistant blocks through `assistant_block` too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from metis_schema.v2 import ContentBlock, Message, RedactedThinkingBlock
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant
from ...errors import WireFormatError
from ...ids import ToolIdMap
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._shared import text_block, thinking_block, tool_use_block
from .._wire import read
from . import wire
from .facts import FACTS, PROVIDER
from .replay import Replay, response_raw, warn_foreign


def _text(block: wire.TextBlock, tool_ids: ToolIdMap) -> ContentBlock:
    return text_block(block["text"])


def _tool_use(block: wire.ToolUseBlock, tool_ids: ToolIdMap) -> ContentBlock:
    canonical = tool_ids.register_incoming(PROVIDER, block["id"])
    return tool_use_block(canonical, block["name"], block["input"])


def _thinking(block: wire.ThinkingBlock, tool_ids: ToolIdMap) -> ContentBlock:
    return thinking_block(
        {"type": "thinking", "text": block["thinking"], "signature": block.get("signature") or None}
    )


def _redacted(block: wire.RedactedThinkingBlock, tool_ids: ToolIdMap) -> ContentBlock:
    return RedactedThinkingBlock(type="redacted_thinking", data=block["data"])


_READERS: dict[str, tuple[Callable[[Any, ToolIdMap], ContentBlock], frozenset[str]]] = {
    "text": (_text, frozenset({"type", "text"})),
    "tool_use": (_tool_use, frozenset({"type", "id", "name", "input", "caller"})),
    "thinking": (_thinking, frozenset({"type", "thinking", "signature"})),
    "redacted_thinking": (_redacted, frozenset({"type", "data"})),
}
"""Wire block type -> (reader, the keys it maps); any other key of the block is kept as an extra.
`caller` (who invoked a tool: the model or code execution) has no canonical field and is
not replayed."""


def assistant_block(
    block: Mapping[str, Any], position: int, *, tool_ids: ToolIdMap, replay: Replay
) -> ContentBlock | None:
    """A declared assistant block (`wire.ResponseBlock`) -> canonical; None (kept in `replay`)
    when it has no canonical type."""
    kind = block.get("type")
    entry = _READERS.get(kind) if isinstance(kind, str) else None  # a hostile `type` may be a list
    if entry is None:
        replay.foreign[str(position)] = dict(block)
        return None
    reader, known = entry
    replay.keep_extras(str(position), block, known)
    try:
        return reader(block, tool_ids)
    except ValidationError as exc:  # a value the schema refuses, e.g. a tool name past 128 characters
        raise WireFormatError(
            f"{kind} block cannot be read: {pydantic_problems(exc)[0]}",
            provider=PROVIDER,
            path=f"content[{position}]",
        ) from None


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
    if skipped:
        warn_foreign(context.session_id, context.message_id, skipped, "response")
    if not content:
        raise WireFormatError(
            f"response has no block metis can represent (only {', '.join(skipped) or 'none'})",
            provider=PROVIDER,
            path="content",
            hint="server tools are not part of the canonical format",
        )
    stop = reply.get("stop_reason")
    raw = response_raw(reply.get("id"), reply.get("model"), stop, reply.get("stop_sequence"), replay)
    usage = reply.get("usage")
    return finish_assistant(
        context,
        provider=PROVIDER,
        content=content,
        counts=normalize_usage(PROVIDER, usage),
        stop_reason=FACTS.stop_reason(stop),
        provider_raw=raw,
    )


__all__ = ["assistant_block", "read_response"]
