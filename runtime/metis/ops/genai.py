"""Canonical messages as OpenTelemetry GenAI message parts (semantic conventions 1.41.0).

The GenAI conventions record a model call's content as three structured attributes:
`gen_ai.system_instructions` (a list of parts), `gen_ai.input.messages` (a list of
`{role, parts, name?}`) and `gen_ai.output.messages` (the same, with a required
`finish_reason`). Their JSON schemas are docs/gen-ai/gen-ai-*.json of
open-telemetry/semantic-conventions at tag v1.41.0 (the last release that carried the
GenAI pages in that repository). This module is the one mapping from canonical blocks to
those parts, used by the file export (`export_otel`) and the live spans (`otel`) alike.

Parts: text -> `text`, tool_use -> `tool_call` (canonical id, name, arguments),
tool_result -> `tool_call_response` (its text, or its parts when it holds media),
thinking -> `reasoning`, media (image, audio, video, document) -> `blob` / `uri` /
`file` by where the bytes are, a provider-run tool -> `server_tool_call` /
`server_tool_call_response`; blocks the conventions have no part for (search results,
compaction summaries, workspace file references) become generic parts named by their
type, and opaque payloads (redacted thinking, encrypted compaction data) are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metis_schema.v3 import (
    AudioBlock,
    CompactionBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    MessageStatus,
    Role,
    SearchResultBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    VideoBlock,
)

from ..pricing import UNPRICED
from ..usage import prompt_tokens

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
"""The semantic conventions version every attribute name and shape here follows."""

Part = dict[str, Any]

PROVIDER_NAMES = {"gemini": "gcp.gemini", "mistral": "mistral_ai"}
"""metis provider key -> `gen_ai.provider.name` where the conventions spell it differently;
other keys (anthropic, openai, ollama, openrouter) are used as they are."""

FINISH_REASONS = {
    StopReason.end_turn: "stop",
    StopReason.stop_sequence: "stop",
    StopReason.tool_use: "tool_call",
    StopReason.max_tokens: "length",
    StopReason.context_window_exceeded: "length",
    StopReason.content_filter: "content_filter",
    StopReason.refusal: "content_filter",
    StopReason.error: "error",
}
"""Canonical stop reason -> the conventions' finish reason; the others (pause_turn, other)
are passed as their own names, which the conventions allow."""


MediaBlock = ImageBlock | AudioBlock | VideoBlock | DocumentBlock
_MODALITY = {"image": "image", "audio": "audio", "video": "video", "document": "document"}
"""Block type -> part modality: the conventions name image, video and audio and allow others."""


def media_part(block: MediaBlock) -> Part:
    """A medium by where its bytes are: inline -> `blob`, a URL -> `uri`, a provider's file
    id -> `file`; a workspace path has no part of its own (a generic `file_ref`)."""
    source, head = block.source, {"modality": _MODALITY[block.type], "mime_type": block.media_type}
    if source.kind == MediaSourceKind.base64:
        return {"type": "blob", **head, "content": source.data}
    if source.kind == MediaSourceKind.url:
        return {"type": "uri", **head, "uri": source.data}
    if source.kind == MediaSourceKind.file_id:
        return {"type": "file", **head, "file_id": source.data}
    return {"type": "file_ref", **head, "path": source.data}


def response(content: Sequence[ContentBlock]) -> Any:
    """A tool result's response: its text when it is all text, else its parts."""
    if all(isinstance(item, TextBlock) for item in content):
        return "".join(item.text for item in content if isinstance(item, TextBlock))
    return [part(item) for item in content]


def part(block: ContentBlock) -> Part:
    """The GenAI part of one canonical block (see module doc)."""
    if isinstance(block, TextBlock):
        return {"type": "text", "content": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_call_response", "id": block.tool_use_id, "response": response(block.content)}
    if isinstance(block, ThinkingBlock):
        return {"type": "reasoning", "content": block.text}
    if isinstance(block, ImageBlock | AudioBlock | VideoBlock | DocumentBlock):
        return media_part(block)
    if isinstance(block, ServerToolUseBlock):
        call = {"type": block.name, **block.input}
        return {"type": "server_tool_call", "id": block.id, "name": block.name, "server_tool_call": call}
    if isinstance(block, ServerToolResultBlock):
        answer = {"type": block.name, "content": response(block.content)}
        return {
            "type": "server_tool_call_response",
            "id": block.tool_use_id,
            "server_tool_call_response": answer,
        }
    if isinstance(block, SearchResultBlock):
        return {
            "type": "search_result",
            "source": block.source,
            "title": block.title,
            "content": response(block.content),
        }
    if isinstance(block, CompactionBlock) and block.summary is not None:
        return {"type": "compaction", "content": block.summary}
    return {"type": block.type}


def finish_reason(message: Message) -> str:
    """The finish reason of an assistant turn: its stop reason mapped, else what its
    status and content say (an ERROR turn -> error, one that calls tools -> tool_call)."""
    metadata = message.metadata
    if metadata.status == MessageStatus.error:
        return "error"
    if metadata.stop_reason is not None:
        return FINISH_REASONS.get(metadata.stop_reason, metadata.stop_reason.value)
    if metadata.status == MessageStatus.cancelled:
        return "cancelled"
    return "tool_call" if any(isinstance(b, ToolUseBlock) for b in message.content) else "stop"


def chat_message(message: Message) -> dict[str, Any]:
    return {"role": message.role.value, "parts": [part(block) for block in message.content]}


def system_instructions(messages: Sequence[Message]) -> list[Part]:
    """`gen_ai.system_instructions`: the parts of every SYSTEM message, in order."""
    return [part(block) for m in messages if m.role == Role.system for block in m.content]


def input_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """`gen_ai.input.messages`: every message but the SYSTEM ones (those are instructions)."""
    return [chat_message(m) for m in messages if m.role != Role.system]


def output_messages(reply: Message) -> list[dict[str, Any]]:
    """`gen_ai.output.messages` of one assistant turn."""
    return [{**chat_message(reply), "finish_reason": finish_reason(reply)}]


def provider_name(provider: str) -> str:
    return PROVIDER_NAMES.get(provider, provider)


def request_attributes(session_id: str, model: str) -> dict[str, Any]:
    """What is known of a chat call before it is sent: operation, provider, model, conversation."""
    provider, _, name = model.partition(":")
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_name(provider),
        "gen_ai.request.model": name or model,
        "gen_ai.conversation.id": session_id,
    }


def response_attributes(reply: Message) -> dict[str, Any]:
    """What the reply adds: finish reason, token usage (input is the whole prompt, cached
    tokens included, as the conventions ask and as every metis command counts it:
    `usage.prompt_tokens`), metis's own cost (none when unpriced: the reason instead), the
    provider's billed cost where known, pricing version, model id and message id."""
    attributes: dict[str, Any] = {
        "gen_ai.response.finish_reasons": [finish_reason(reply)],
        "metis.message.id": reply.id,
    }
    if reply.metadata.model is not None:
        attributes["metis.model"] = reply.metadata.model
    usage = reply.metadata.usage
    if usage is not None:
        attributes.update(
            {
                "gen_ai.usage.input_tokens": prompt_tokens(usage),
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens,
                "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_input_tokens,
                "metis.usage.pricing_version": usage.pricing_version,
            }
        )
        if usage.pricing_version == UNPRICED:  # no cost is known: none is recorded, the reason is
            attributes["metis.usage.unpriced_reason"] = usage.unpriced_reason or UNPRICED
        else:
            attributes["metis.usage.cost_usd"] = str(usage.cost_usd)
        if usage.billed_cost_usd is not None:
            attributes["metis.usage.billed_cost_usd"] = str(usage.billed_cost_usd)
    return attributes


__all__ = [
    "FINISH_REASONS",
    "PROVIDER_NAMES",
    "SCHEMA_URL",
    "SEMCONV_VERSION",
    "MediaBlock",
    "Part",
    "chat_message",
    "finish_reason",
    "input_messages",
    "media_part",
    "output_messages",
    "part",
    "provider_name",
    "request_attributes",
    "response_attributes",
    "system_instructions",
]
