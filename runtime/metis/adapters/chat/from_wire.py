"""A Chat Completions reply -> one canonical ASSISTANT message (and the assistant-message
reader the importer shares for request history).

- `arguments`: the canonical serialization is compact JSON. When the provider's own string
  differs (whitespace, key escapes) or is blank it is kept in
  `provider_raw["arguments"][<canonical id>]`; text that does not parse lives in
  `provider_raw["unparsed_arguments"]` (as the assembler does). Either is replayed, to the
  same provider only, while it still parses to the block's input.
- A refusal (`message.refusal`, or a `refusal` part) becomes a TextBlock and stop reason
  `refusal`; it replays as ordinary assistant text.
- A `function_call` beside `tool_calls` duplicates the first call (llama-cpp-python sends
  both) and is ignored; alone it has no tool call id to link a result to: WireFormatError.
- Assistant parts, tool calls and `reasoning_details` items with no canonical form are kept
  in provider_raw (`unsupported_tool_calls`, the details array) with a WARN.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from metis_schema.v2 import ContentBlock, Message, RedactedThinkingBlock, TextBlock
from pydantic import ValidationError

from ...assembly import RequestContext, finish_assistant, parse_tool_arguments
from ...errors import WireFormatError
from ...usage import normalize_usage
from ...validation import pydantic_problems
from .._shared import text_block, thinking_block, tool_use_block
from .._wire import read
from .facts import ChatDialect, stop_reason
from .wire import (
    AssistantFields,
    AssistantPart,
    Fields,
    ReasoningDetail,
    Response,
    ThinkingPart,
    ToolCall,
    kept_arguments,
)

log = logging.getLogger("metis.adapters")

DETAIL_TEXT_KEYS = {"reasoning.text": "text", "reasoning.summary": "summary"}
"""reasoning_details item type -> the key holding its text."""


def response_raw(adapter: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    """provider_raw of a reply: what replay or audit needs, None values left out."""
    return {"adapter": adapter, **{k: v for k, v in meta.items() if v is not None and v != {}}}


def not_canonical(exc: ValidationError, *, provider: str, path: str) -> WireFormatError:
    """The WireFormatError for a canonical model's refusal of a value read from the wire."""
    return WireFormatError(
        f"cannot be read as canonical: {pydantic_problems(exc)[0]}", provider=provider, path=path
    )


def read_response(name: str, dialect: ChatDialect, body: Any, context: RequestContext) -> Message:
    """`choices[0].message` of a reply body -> one COMPLETE canonical ASSISTANT message."""
    if isinstance(body, dict) and body.get("error"):
        raise dialect.facts.parse_error(body)
    reply = read(Response, body, provider=name, what="reply")
    choice = reply["choices"][0]
    assistant = read_assistant(name, dialect, choice["message"], path="choices[0].message", context=context)
    finish = choice.get("finish_reason")
    usage = reply.get("usage")
    raw = response_raw(
        name,
        {
            "id": reply.get("id"),
            "model": reply.get("model"),
            "finish_reason": finish,
            "native_finish_reason": choice.get("native_finish_reason"),
            "system_fingerprint": reply.get("system_fingerprint"),
            "provider": reply.get("provider"),
            "reported_cost": usage.get("cost") if usage else None,
            **assistant.raw(),
        },
    )
    return finish_assistant(
        context,
        provider=name,
        content=assistant.blocks or [TextBlock(type="text", text="")],
        counts=normalize_usage(name, usage),
        stop_reason=stop_reason(dialect.facts, finish, refused=assistant.refused),
        provider_raw=raw,
    )


@dataclass(slots=True)
class AssistantRead:
    """Blocks of one wire assistant message, plus what its provider_raw must keep."""

    blocks: list[ContentBlock] = field(default_factory=list)
    arguments: dict[str, str] = field(default_factory=dict)
    unparsed: dict[str, str] = field(default_factory=dict)
    details: list[ReasoningDetail] | None = None
    refused: bool = False
    unsupported: list[Any] = field(default_factory=list)

    def raw(self) -> dict[str, Any]:
        """What provider_raw must keep (None: nothing), for `response_raw`."""
        return {
            "arguments": self.arguments or None,
            "unparsed_arguments": self.unparsed or None,
            "reasoning_details": self.details,
            "unsupported_tool_calls": self.unsupported or None,
        }


def read_assistant(
    name: str, dialect: ChatDialect, message: AssistantFields, *, path: str, context: RequestContext
) -> AssistantRead:
    """A checked wire assistant message (reply or request history) -> canonical blocks."""
    out = AssistantRead()
    calls = message.get("tool_calls")
    if message.get("function_call") and not calls:
        raise WireFormatError(
            "the deprecated function_call field has no tool call id to link its result to",
            provider=name,
            path=f"{path}.function_call",
            hint="use tool_calls",
        )
    _reasoning(name, dialect, message, path, out)
    content = message.get("content")
    if isinstance(content, str):
        if content:
            out.blocks.append(text_block(content))
    elif content is not None:
        for j, part in enumerate(content):
            _part(name, dialect, part, f"{path}.content[{j}]", out)
    refusal = message.get("refusal")
    if refusal:
        out.blocks.append(text_block(refusal))
        out.refused = True
    for k, call in enumerate(calls or ()):
        _tool_call(name, call, f"{path}.tool_calls[{k}]", context, out)
    return out


def thinking_text(name: str, part: AssistantPart, path: str) -> str:
    """The text of a Mistral `thinking` part (read as `ThinkingPart`): its text chunks, joined."""
    checked = read(ThinkingPart, part, provider=name, path=path, what="thinking part")
    return "".join(c.get("text", "") for c in checked["thinking"] if c.get("type", "text") == "text")


def _part(name: str, dialect: ChatDialect, part: AssistantPart, path: str, out: AssistantRead) -> None:
    kind = part.get("type")
    if kind == "thinking" and dialect.thinking_parts:
        out.blocks.append(thinking_block({"type": "thinking", "text": thinking_text(name, part, path)}))
        return
    text = part.get("text") if kind == "text" else part.get("refusal") if kind == "refusal" else None
    if text is None:
        log.warning(
            "%s: skipped assistant content part of type %r at %s",
            name,
            kind,
            path,
            extra={"adapter": name, "path": path},
        )
        out.unsupported.append(part)
        return
    out.blocks.append(text_block(text))
    out.refused = out.refused or kind == "refusal"


def _reasoning(
    name: str, dialect: ChatDialect, message: AssistantFields, path: str, out: AssistantRead
) -> None:
    details = message.get("reasoning_details") if dialect.reasoning_details else None
    if details:
        for j, item in enumerate(details):
            block = detail_block(name, item, f"{path}.reasoning_details[{j}]")
            if block is not None:
                out.blocks.append(block)
        out.details = details
        return
    fields = cast(Fields, message)
    for key in dialect.plain_reasoning_keys:
        text = fields.get(key)
        if text:
            out.blocks.append(thinking_block({"type": "thinking", "text": text}))
            return


def detail_block(name: str, item: ReasoningDetail, path: str) -> ContentBlock | None:
    """A reasoning_details item -> ThinkingBlock / RedactedThinkingBlock (None: kept raw only)."""
    kind = item.get("type")
    data = item.get("data")
    if kind == "reasoning.encrypted" and data:
        return RedactedThinkingBlock(type="redacted_thinking", data=data)
    key = DETAIL_TEXT_KEYS.get(kind) if kind is not None else None
    if key is None:
        log.warning(
            "%s: reasoning_details item of type %r has no canonical block; kept in provider_raw",
            name,
            kind,
            extra={"adapter": name, "path": path},
        )
        return None
    fields = cast(Fields, item)
    return thinking_block(
        {"type": "thinking", "text": fields.get(key) or "", "signature": item.get("signature") or None}
    )


def _tool_call(name: str, call: ToolCall, path: str, context: RequestContext, out: AssistantRead) -> None:
    if call.get("type", "function") != "function":
        log.warning(
            "%s: tool call of type %r has no canonical form; kept in provider_raw",
            name,
            call.get("type"),
            extra={"adapter": name, "path": path},
        )
        out.unsupported.append(call)
        return
    function = call.get("function")
    if function is None:
        raise WireFormatError("a function tool call has no function", provider=name, path=f"{path}.function")
    tool_name = function["name"]
    canonical = context.tool_ids.register_incoming(name, call.get("id") or None)
    arguments = function.get("arguments", "")
    if isinstance(arguments, dict):
        value = arguments  # some compatible servers send an object
    else:
        value, unparsed = parse_tool_arguments(arguments, context=context, tool_id=canonical, name=tool_name)
        if unparsed is not None:
            out.unparsed[canonical] = unparsed
        elif (kept := kept_arguments(arguments, value)) is not None:
            out.arguments[canonical] = kept
    try:
        block = tool_use_block(canonical, tool_name, value)
    except ValidationError as exc:
        raise not_canonical(exc, provider=name, path=path) from None
    out.blocks.append(block)


__all__ = [
    "AssistantRead",
    "detail_block",
    "not_canonical",
    "read_assistant",
    "read_response",
    "response_raw",
    "thinking_text",
]
