"""Canonical messages -> a Chat Completions request body (the request writer).

Conventions (spec §2.2.2 puts provider knobs in adapter options):

- Canonical options go where the dialect's facts row says (`max_tokens` field, structured
  output as `response_format` json_schema); this provider's `provider_options` entry and
  then `AdapterOptions.extra` are deep-merged into the body last (`_options.own_fields`:
  other providers' entries are reported as dropped), except the reserved key `"metis"`,
  a dict of directives to this adapter that is never sent:
  - `system_role`: `"system"` (default) or `"developer"`, the role SYSTEM messages get;
  - `cache_breakpoints`: a list whose entries name a message id or `"tools"`, either as
    that string or as `{"at": <id or "tools">, "cache_control": {...}}`; the last content
    part of each named message (or the last tool definition) gets `cache_control`.
    Dialects without `cache_control` ignore them with a WARN. The importer writes them
    back, so an imported request replays with its markers (always on the last part);
  - `cache_control`: the marker for string entries (default `{"type": "ephemeral"}`);
  - `empty_content`: what an assistant turn with tool calls and no text carries as
    `content`: `None` (default; OpenAI's own replies send `null`) or `""` for compatible
    servers that refuse `null` (llama-cpp-python's server).
- Several text blocks in one ASSISTANT message are joined with a blank line: replies are
  one string, and not every compatible server accepts text parts.
- A tool call's `arguments` is the provider's own text when provider_raw kept it and it
  still means the block's input, else the canonical compact JSON.
- `ToolResultBlock.is_error` has no field on the wire: the result text carries the failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from metis_schema.v2 import (
    AdapterCapabilities,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ... import _json
from ...catalog import load_catalog
from ...errors import WireFormatError
from .._lossy import drop_block
from .._options import merge
from .._shared import (
    DIRECTIVES,
    SYSTEM_ROLES,
    data_url,
    function_tool,
    image_base64,
    own_raw,
    split_directives,
)
from ..base import AdapterOptions, WireBody
from .facts import ChatDialect
from .wire import canonical_arguments

log = logging.getLogger("metis.adapters")

DEFAULT_CACHE_CONTROL: dict[str, Any] = {"type": "ephemeral"}
_TEXT_JOIN = "\n\n"


def write_request(
    name: str,
    dialect: ChatDialect,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
) -> WireBody:
    """Canonical messages, tools and options -> the request body (see module doc)."""
    entry = load_catalog().resolve(options.model)
    directives, fields = _directives(name, options)
    writer = _Writer(name, dialect, options, entry.id, entry.capabilities, directives=directives)
    wire_messages: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}  # message id -> wire message, for cache breakpoints
    for message in messages:
        out = writer.by_role[message.role](message)
        if out is not None:
            wire_messages.append(out)
            by_id[message.id] = out
    body: dict[str, Any] = {"model": entry.wire_model, "messages": wire_messages}
    _options(name, dialect, body, tools, options)
    _cache_markers(name, dialect, body, by_id, directives)
    merge(body, fields)
    return body


def _directives(name: str, options: AdapterOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metis directives, the fields to merge): the shared checks, then Chat's own key."""
    directives, extra = split_directives(options, name)
    if directives.get("empty_content", None) not in (None, ""):
        raise WireFormatError(
            "empty_content must be None or an empty string", path="extra.metis.empty_content"
        )
    return directives, extra


def _options(
    name: str,
    dialect: ChatDialect,
    body: dict[str, Any],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
) -> None:
    facts = dialect.facts
    values = {
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
        "top_p": options.top_p,
        "stop": options.stop,
        "thinking_budget": options.thinking_budget,
    }
    facts.options_to_wire(values, body)
    facts.output_schema_to_wire(options.output_schema, body)
    if options.thinking_budget is not None and "thinking_budget" not in facts.options:
        log.warning(
            "%s: thinking_budget has no Chat Completions field; not sent; use reasoning_effort",
            name,
            extra={"adapter": name, "session_id": options.session_id},
        )
    if tools:
        body["tools"] = [function_tool(t) for t in tools]
    choice = facts.tool_choice_to_wire(options.tool_choice)
    if choice is not None:
        body["tool_choice"] = choice
    if options.stream:
        body["stream"] = True
        if dialect.stream_usage_option:
            body["stream_options"] = {"include_usage": True}


def _cache_markers(
    name: str,
    dialect: ChatDialect,
    body: dict[str, Any],
    by_id: dict[str, dict[str, Any]],
    directives: dict[str, Any],
) -> None:
    points = directives.get("cache_breakpoints") or []
    if not points:
        return
    if not dialect.cache_control:
        log.warning(
            "%s: cache_breakpoints ignored; this API caches automatically", name, extra={"adapter": name}
        )
        return
    default = directives.get("cache_control") or DEFAULT_CACHE_CONTROL
    for entry in points:
        point, control = (
            (entry.get("at"), entry.get("cache_control")) if isinstance(entry, dict) else (entry, None)
        )
        control = control or default
        if point == "tools" and body.get("tools"):
            body["tools"][-1] = {**body["tools"][-1], "cache_control": dict(control)}
        elif point in by_id and _mark_cache(by_id[point], control):
            continue
        else:
            log.warning(
                "%s: cache breakpoint %r names nothing that was sent", name, point, extra={"adapter": name}
            )


def _mark_cache(wire: dict[str, Any], control: dict[str, Any]) -> bool:
    """Put `cache_control` on the last content part of a wire message (string -> one text part)."""
    content = wire.get("content")
    if isinstance(content, str):
        wire["content"] = [{"type": "text", "text": content, "cache_control": dict(control)}]
        return True
    if isinstance(content, list) and content:
        content[-1] = {**content[-1], "cache_control": dict(control)}
        return True
    return False


class _Writer:
    """One request: the target model's capabilities, the session's id map, the directives."""

    def __init__(
        self,
        name: str,
        dialect: ChatDialect,
        options: AdapterOptions,
        model_id: str,
        caps: AdapterCapabilities,
        *,
        directives: dict[str, Any],
    ) -> None:
        self.name = name
        self.options = options
        self.model_id = model_id
        self.caps = caps
        self.system_role: str = directives.get("system_role", "system")
        self.empty_content: str | None = directives.get("empty_content")
        self.reasoning_details = dialect.reasoning_details
        self.thinking_parts = dialect.thinking_parts
        self.by_role: dict[Role, Callable[[Message], dict[str, Any] | None]] = {
            Role.system: self.system_message,
            Role.user: self.user,
            Role.assistant: self.assistant,
            Role.tool: self.tool,
        }

    def wire_id(self, canonical: str) -> str:
        """The id `canonical` goes out as (see `ToolIdMap.outgoing`)."""
        return self.options.tool_ids.outgoing(canonical, self.name)

    def system_message(self, message: Message) -> dict[str, Any] | None:
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if not texts:
            return None  # an empty SYSTEM message is a composition placeholder (§5.1.2)
        return {"role": self.system_role, "content": _text_content(texts)}

    def user(self, message: Message) -> dict[str, Any] | None:
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock):
                parts.append({"type": "text", "text": block.text})
            elif isinstance(block, ImageBlock):
                part = self.image(block, message, index)
                if part is not None:
                    parts.append(part)
            else:
                self.drop(message, index, block.type, "USER messages carry text and images only")
        if not parts:
            return None
        if len(parts) == 1 and parts[0]["type"] == "text":
            return {"role": "user", "content": parts[0]["text"]}
        return {"role": "user", "content": parts}

    def image(self, block: ImageBlock, message: Message, index: int) -> dict[str, Any] | None:
        if not self.caps.supports_images:
            self.drop(message, index, "image", f"{self.model_id} does not accept images")
            return None
        accepted = self.caps.accepted_image_media_types
        if accepted and block.media_type not in accepted:
            self.drop(message, index, "image", f"{self.model_id} does not accept {block.media_type}")
            return None
        b64 = image_base64(block, self.options)
        url = block.source.data if b64 is None else data_url(block.media_type, b64)
        return {"type": "image_url", "image_url": {"url": url}}

    def assistant(self, message: Message) -> dict[str, Any] | None:
        raw = own_raw(message, self.name)
        details = self.replayable_details(message, raw)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        thoughts: list[dict[str, Any]] = []
        own_thinking = self.thinking_parts and message.metadata.model == self.model_id
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock):
                texts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                calls.append(self.tool_call(block, raw))
            elif isinstance(block, ThinkingBlock) and own_thinking:
                thoughts.append({"type": "thinking", "thinking": [{"type": "text", "text": block.text}]})
            elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
                if details is None:
                    self.drop(message, index, block.type, self.reasoning_drop_reason(message))
            else:
                self.drop(
                    message, index, block.type, "ASSISTANT messages carry text, tool calls and reasoning only"
                )
        out: dict[str, Any] = {"role": "assistant", "content": _TEXT_JOIN.join(texts) if texts else None}
        if calls:
            out["tool_calls"] = calls
        if details is not None:
            out["reasoning_details"] = details
            if out["content"] is None and not calls:
                out["content"] = ""
        if thoughts:  # thinking parts first, then the text as one text part
            out["content"] = [*thoughts, *([{"type": "text", "text": out["content"]}] if texts else [])]
        if out["content"] is None:
            if not calls:
                return None  # everything was dropped (and logged)
            out["content"] = self.empty_content
        return out

    def replayable_details(self, message: Message, raw: dict[str, Any]) -> list[Any] | None:
        """This provider's own reasoning_details, when the same model is asked again."""
        details = raw.get("reasoning_details")
        if not self.reasoning_details or not isinstance(details, list):
            return None
        return details if message.metadata.model == self.model_id else None

    def reasoning_drop_reason(self, message: Message) -> str:
        if not self.reasoning_details and not self.thinking_parts:
            return "Chat Completions cannot carry reasoning"
        source = message.metadata.model or message.metadata.provider or "another provider"
        return f"reasoning from {source} goes back only to the model that produced it, not {self.model_id}"

    def tool_call(self, block: ToolUseBlock, raw: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.wire_id(block.id),
            "type": "function",
            "function": {"name": block.name, "arguments": _replay_arguments(block, raw)},
        }

    def tool(self, message: Message) -> dict[str, Any]:
        block = message.content[0] if message.content else None
        if not isinstance(block, ToolResultBlock):
            raise WireFormatError(
                "a TOOL message must hold one tool_result block", provider=self.name, message_id=message.id
            )
        texts: list[str] = []
        for part in block.content:
            if isinstance(part, TextBlock):
                texts.append(part.text)
            else:
                self.drop(message, 0, part.type, "Chat Completions tool messages carry text only")
        content = _text_content(texts) if texts else ""
        return {"role": "tool", "tool_call_id": self.wire_id(block.tool_use_id), "content": content}

    def drop(self, message: Message, index: int, block_type: str, reason: str) -> None:
        drop_block(adapter=self.name, message=message, index=index, block_type=block_type, reason=reason)


def _text_content(texts: list[str]) -> str | list[dict[str, Any]]:
    """One text as a string, several as text parts (block boundaries kept)."""
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def _replay_arguments(block: ToolUseBlock, raw: dict[str, Any]) -> str:
    """The provider's own arguments text while it still means the block's input, else canonical JSON."""
    for key in ("arguments", "unparsed_arguments"):
        kept = raw.get(key)
        text = kept.get(block.id) if isinstance(kept, dict) else None
        if isinstance(text, str) and _means(text, block.input):
            return text
    return canonical_arguments(block.input)


def _means(text: str, value: dict[str, Any]) -> bool:
    try:
        parsed = _json.loads(text) if text.strip() else {}
    except _json.JSONDecodeError:
        return value == {}  # kept unparseable text stands for an empty input
    return bool(parsed == value) if isinstance(parsed, dict) else value == {}


__all__ = ["DEFAULT_CACHE_CONTROL", "DIRECTIVES", "SYSTEM_ROLES", "write_request"]
