"""Ollama replies -> canonical: a `stream: false` response body, and the pieces the stream
decoder and the importer share with it (an assistant `message` as blocks, provider_raw).

An assistant message is thinking, then text, then the whole tool calls, in that order,
which is also the order a stream delivers them. Ollama ends a tool call with
`done_reason: "stop"`, so the stop reason is derived from the content.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from metis_schema.v3 import ContentBlock, Message, StopReason, TextBlock, ToolUseBlock
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant, parse_tool_arguments
from ...errors import WireFormatError
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._kit.importing import text_block, thinking_block, tool_use_block
from .._kit.losses import Losses
from .._kit.reader import read
from .facts import FACTS, NAME
from .wire import ChatResponse, Final, ReplyMessage, ToolCall, Turn

_DURATIONS: tuple[str, ...] = ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")
"""Timing fields of a final response, in nanoseconds: kept in provider_raw, never taken as latency."""


def stop_reason(done_reason: str | None, has_tool_calls: bool) -> StopReason:
    """Canonical stop reason: Ollama ends a tool call with "stop", so tool calls decide it."""
    reason = StopReason.end_turn if done_reason is None else FACTS.stop_reason(done_reason)
    if has_tool_calls and reason == StopReason.end_turn:
        return StopReason.tool_use
    return reason


def arguments_text(arguments: dict[str, Any] | str | None) -> str:
    """A call's arguments as JSON text (a lax client's string is already that)."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments or {}, ensure_ascii=False)


@dataclass
class Raw:
    """provider_raw of an assistant message: only what exact replay or diagnosis needs."""

    model: str | None = None
    done_reason: str | None = None
    durations_ns: dict[str, int] = field(default_factory=dict)
    tool_call_index: dict[str, int] = field(default_factory=dict)
    string_arguments: list[str] = field(default_factory=list)
    unparsed_arguments: dict[str, str] = field(default_factory=dict)

    def record_call(self, canonical: str, call: ToolCall) -> None:
        function = call["function"]
        index = function.get("index")
        if index is not None:
            self.tool_call_index[canonical] = index
        if isinstance(function.get("arguments"), str):
            self.string_arguments.append(canonical)

    def record_final(self, final: Final) -> None:
        self.model = final.get("model") or self.model
        self.done_reason = final.get("done_reason")
        fields: Mapping[str, Any] = final
        for key in _DURATIONS:
            value = fields.get(key)
            if value is not None:
                self.durations_ns[key] = value

    def as_dict(self) -> dict[str, Any]:
        """`{"adapter": "ollama", ...}` with the fields that hold something."""
        fields = {
            "model": self.model,
            "done_reason": self.done_reason,
            "durations_ns": self.durations_ns,
            "tool_call_index": self.tool_call_index,
            "string_arguments": self.string_arguments,
            "unparsed_arguments": self.unparsed_arguments,
        }
        return {"adapter": NAME, **{key: value for key, value in fields.items() if value}}


def call_block(call: ToolCall, context: RequestContext, raw: Raw) -> ToolUseBlock:
    """A ToolUseBlock with a new canonical id; string arguments parsed, bad ones kept raw."""
    canonical = context.tool_ids.register_incoming(NAME, call.get("id") or None)
    raw.record_call(canonical, call)
    function = call["function"]
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        arguments, unparsed = parse_tool_arguments(
            arguments, context=context, tool_id=canonical, name=function["name"]
        )
        if unparsed is not None:
            raw.unparsed_arguments[canonical] = unparsed
    try:
        return tool_use_block(canonical, function["name"], arguments or {})
    except ValidationError as exc:  # a value the schema refuses, e.g. a name past 128 characters
        raise WireFormatError(
            f"tool call cannot be read: {pydantic_problems(exc)[0]}", provider=NAME, path="message.tool_calls"
        ) from None


def reply_content(message: Turn, context: RequestContext, raw: Raw) -> list[ContentBlock]:
    """An assistant `message` (a response's or an imported turn's) as blocks: thinking, text,
    then the tool calls; one empty text block when it holds none of them."""
    content: list[ContentBlock] = []
    thinking = message.get("thinking")
    if thinking:
        content.append(thinking_block({"type": "thinking", "text": thinking}))
    text = message.get("content")
    if text:
        content.append(text_block(text))
    for call in message.get("tool_calls") or ():
        content.append(call_block(call, context, raw))
    return content or [TextBlock(type="text", text="")]


def drop_reply_images(message: ReplyMessage, context: RequestContext) -> None:
    """The §7.3 WARN for `images` in a reply's message (a whole one or a stream line's):
    images are input only (§2.2), so they are left out."""
    images = message.get("images")
    if images:
        reason = f"{len(images)} image(s) in an assistant reply dropped: images are input only (§2.2)"
        Losses(NAME, context.session_id).lost(context.message_id, "image", reason)


def read_response(body: Any, context: RequestContext) -> Message:
    """A `stream: false` response -> one assistant message; an error body raises its ProviderError."""
    if isinstance(body, dict) and "error" in body:
        raise FACTS.parse_error(body)
    response = read(ChatResponse, body, provider=NAME, what="response")
    message = response["message"]
    raw = Raw()
    content = reply_content(message, context, raw)
    raw.record_final(response)
    drop_reply_images(message, context)
    return finish_assistant(
        context,
        provider=NAME,
        content=content,
        counts=normalize_usage(NAME, response, read_as=ChatResponse),
        stop_reason=stop_reason(raw.done_reason, bool(message.get("tool_calls"))),
        provider_raw=raw.as_dict(),
    )


__all__ = [
    "Raw",
    "arguments_text",
    "call_block",
    "drop_reply_images",
    "read_response",
    "reply_content",
    "stop_reason",
]
