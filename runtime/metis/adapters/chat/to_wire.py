"""Canonical messages -> a Chat Completions request body (the request writer).

Conventions (spec §2.2.2 puts provider knobs in adapter options):

- Canonical options go where the dialect's facts row says (`max_tokens` field, structured
  output as `response_format` json_schema); this provider's `provider_options` entry and
  then `AdapterOptions.extra` are deep-merged into the body last (`options.own_fields`:
  other providers' entries are reported as dropped), except the reserved key `"metis"`,
  a dict of directives to this adapter that is never sent:
  - `system_role`: `"system"` (default) or `"developer"`, the role SYSTEM messages get;
  - `cache_breakpoints`: a list whose entries name a message id or `"tools"`, either as
    that string or as `{"at": <id or "tools">, "cache_control": {...}}`; the last content
    part of each named message (or the last tool definition) gets `cache_control`.
    Dialects without `cache_control` ignore them with a WARN. The importer writes the
    `"tools"` entry back (tool definitions have no canonical `cache_point`);
  - `cache_control`: the marker for string entries (default `{"type": "ephemeral"}`);
  - `empty_content`: what an assistant turn with tool calls and no text carries as
    `content`: `None` (default; OpenAI's own replies send `null`) or `""` for compatible
    servers that refuse `null` (llama-cpp-python's server);
  - `tool_names`: true: each tool message names the function its call called (`name`,
    as Mistral's `ToolMessage` has it), set by an import whose tool messages all did;
  - `stream_usage`: false: a streamed request goes without `stream_options.include_usage`
    (set by an import of a stream that did not ask for usage);
  - `stream_sent`: true: a request that does not stream says `stream: false` (set by an
    import of one that did).
- A block's `cache_point` (the canonical breakpoint) becomes `cache_control` on the content
  part made from that block, spelt as Anthropic spells it (`anthropic.cache`), where the
  row has `cache_control` (OpenRouter); a string content becomes parts to carry it. A tool
  result's own breakpoint goes on the last part of its tool message; a block with no part
  of its own (a tool call, reasoning) loses its breakpoint with a WARN. Dialects that
  cache automatically (OpenAI, Mistral) send no marker: one WARN per request. The
  directive above places its markers through the same part marking (`_marked`).
- Several text blocks in one ASSISTANT message are joined with a blank line: replies are
  one string, and not every compatible server accepts text parts.
- A tool call's `arguments` is the provider's own text when provider_raw kept it and it
  still means the block's input, else the canonical compact JSON.
- `ToolResultBlock.is_error` has no field on the wire: the result text carries the failure.
- What a dialect row says it takes goes out (the parts: `media`); the rest is dropped
  with the §7.3 WARN: documents as `file` parts (`file_media_types`, `file_urls`; this provider's own
  `file_id`), audio as `input_audio` (`audio_formats`), video as `video_url` parts
  (`video_parts`), images inside tool results (`tool_result_images`). A document's
  `context` and `citations_enabled` have no place in a `file` part: said in one WARN, the
  document still goes.
- Reasoning goes back only to the provider that produced it: OpenRouter's
  `reasoning_details` and Mistral's thinking parts to the same model; plain reasoning text
  (`replays_plain_reasoning`) under the key it came in.
- Citations on assistant text are not sent: no dialect's request assistant message
  declares `annotations` (openai-python `ChatCompletionAssistantMessageParam`, OpenRouter's
  `ChatAssistantMessage`). The provider's own replies go back without them by design (it
  makes them again); another provider's cited text loses them with one WARN per message
  (`Losses.citations`), so a projection never drops a source silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    AudioBlock,
    CachePoint,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    VideoBlock,
)

from ...catalog import load_catalog
from ...errors import WireFormatError
from .._kit.arguments import replay_arguments
from .._kit.base import AdapterOptions, WireBody
from .._kit.cache_points import cache_control
from .._kit.facts import ProviderFacts
from .._kit.importing import function_tool
from .._kit.losses import Losses, block_at
from .._kit.media_admission import request_capabilities
from .._kit.options import DIRECTIVES, SYSTEM_ROLES, merge, split_directives
from .._kit.provenance import foreign_reasoning, own_raw, replays_opaque
from .._kit.provider_tools import OPTIONS, PLUGINS, is_provider_tool, row_of, warn_deferred, write_tool
from .._kit.strict import write_strict
from .._kit.tool_fields import warn_kept
from .media_parts import MediaWriter

DEFAULT_CACHE_CONTROL: dict[str, Any] = {"type": "ephemeral"}
_TEXT_JOIN = "\n\n"


def write_request(
    name: str,
    facts: ProviderFacts,
    messages: Sequence[Message],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
) -> WireBody:
    """Canonical messages, tools and options -> the request body (see module doc)."""
    entry = load_catalog().resolve(options.model)
    directives, fields = _directives(name, options)
    caps = request_capabilities(entry, messages, adapter=name)
    writer = _Writer(name, facts, options, entry.id, caps, directives=directives)
    if not facts.cache_control:
        writer.losses.cache_points(messages, "this API caches automatically")
    writer.losses.citations(messages, "a request message has no citations (annotations are reply-only)")
    wire_messages: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}  # message id -> wire message, for cache breakpoints
    for message in messages:
        out = writer.by_role[message.role](message)
        if out is not None:
            wire_messages.append(out)
            by_id[message.id] = out
    if facts.prefix_marker and wire_messages and _prefill(wire_messages[-1]):
        wire_messages[-1]["prefix"] = True
    body: dict[str, Any] = {"model": entry.wire_model, "messages": wire_messages}
    _options(name, facts, body, tools, options, directives=directives)
    _cache_markers(name, facts, body, by_id, directives, session_id=options.session_id)
    merge(body, fields)
    _plugins(name, body, tools, options.session_id)
    return body


def _prefill(message: dict[str, Any]) -> bool:
    """Whether a conversation's last wire message is a prefill the reply continues: an
    assistant message without tool calls (one with calls awaits their results)."""
    return message["role"] == "assistant" and not message.get("tool_calls")


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
    facts: ProviderFacts,
    body: dict[str, Any],
    tools: Sequence[ToolDefinition],
    options: AdapterOptions,
    *,
    directives: dict[str, Any],
) -> None:
    values = {
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
        "top_p": options.top_p,
        "stop": options.stop,
        "thinking_budget": options.thinking_budget,  # OpenAI and Mistral have none: WARN
        "reasoning_effort": options.reasoning_effort,
    }
    facts.options_to_wire(values, body, session_id=options.session_id, spelled=directives.get("option_paths"))
    facts.output_schema_to_wire(options.output_schema, body)
    facts.tools_to_wire(body, _tools(name, body, tools, session_id=options.session_id), options.tool_choice)
    if not options.stream and directives.get("stream_sent") is True:
        body["stream"] = False
    if options.stream:
        body["stream"] = True
        if facts.stream_usage_option and directives.get("stream_usage", True):
            body["stream_options"] = {"include_usage": True}


def _tools(
    name: str, body: dict[str, Any], tools: Sequence[ToolDefinition], *, session_id: str
) -> list[dict[str, Any]]:
    """The function tools (with `strict`) and provider tools to offer, in order; a provider
    tool this API asks for with a request field (`web_search_options`) goes there, and an
    OpenRouter plugin back into `plugins` (`plugins`, after the options are merged)."""
    warn_deferred(row_of(name), tools, session_id=session_id)
    warn_kept(name, tools, session_id=session_id)
    wire_tools: list[dict[str, Any]] = []
    option = OPTIONS.get(name)
    for tool in tools:
        if not is_provider_tool(tool):
            wire = function_tool(tool)
            write_strict(tool, wire["function"], name, always=False)
            wire_tools.append(wire)
            continue
        if _plugin_of(name, tool) is not None:
            continue
        row = option if option is not None and tool.kind and option.by_kind(tool.kind) else row_of(name)
        written = write_tool(row, tool, session_id=session_id, wire_model=str(body.get("model")))
        if written is None:
            continue
        if row is option:
            body.update(written)
        else:
            wire_tools.append(written)
    return wire_tools


def _plugin_of(name: str, tool: ToolDefinition) -> int | None:
    """The `plugins` position of a tool an import read from `name`'s plugins, else None."""
    at_ = (tool.provider_data or {}).get(name, {}).get("plugin")
    return at_ if name in PLUGINS and isinstance(at_, int) else None


def _plugins(name: str, body: dict[str, Any], tools: Sequence[ToolDefinition], session_id: str) -> None:
    """Recorded plugins back at their positions in `plugins` (after the merged options)."""
    for tool in tools:
        position = _plugin_of(name, tool) if is_provider_tool(tool) else None
        if position is None:
            continue
        wire = write_tool(PLUGINS[name], tool, session_id=session_id)
        if wire is not None:
            plugins = body.setdefault("plugins", [])
            plugins.insert(min(position, len(plugins)), wire)


def _cache_markers(
    name: str,
    facts: ProviderFacts,
    body: dict[str, Any],
    by_id: dict[str, dict[str, Any]],
    directives: dict[str, Any],
    *,
    session_id: str,
) -> None:
    points = directives.get("cache_breakpoints") or []
    if not points:
        return
    if not facts.cache_control:
        reason = "cache_breakpoints ignored; this API caches automatically"
        Losses(name, session_id).request("cache_breakpoint", reason)
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
            reason = f"cache breakpoint {point!r} names nothing that was sent"
            named = point if isinstance(point, str) and point != "tools" else None
            Losses(name, session_id).lost(named, "cache_breakpoint", reason)


def _mark_cache(wire: dict[str, Any], control: dict[str, Any]) -> bool:
    """Put `cache_control` on the last content part of a wire message (string -> one text part)."""
    content = wire.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        return False
    wire["content"] = [*content[:-1], _marked(content[-1], control)]
    return True


def _marked(part: dict[str, Any], control: dict[str, Any]) -> dict[str, Any]:
    """`part` carrying `control`: the one place a Chat content part gets its cache marker."""
    return {**part, "cache_control": dict(control)}


class _Writer:
    """One request: the target model's capabilities, the session's id map, the directives."""

    def __init__(
        self,
        name: str,
        facts: ProviderFacts,
        options: AdapterOptions,
        model_id: str,
        caps: AdapterCapabilities,
        *,
        directives: dict[str, Any],
    ) -> None:
        self.name = name
        self.options = options
        self.losses = Losses(name, options.session_id)
        self.model_id = model_id
        self.caps = caps
        self.system_role: str = directives.get("system_role", "system")
        self.empty_content: str | None = directives.get("empty_content")
        self.tool_names: bool = directives.get("tool_names") is True
        self.call_names: dict[str, str] = {}
        """Canonical call id -> its function, of the calls written so far (`tool_names`)."""
        self.facts = facts
        self.media = MediaWriter(name, facts, options, model_id, caps, drop=self.losses.block)
        self.by_role: dict[Role, Callable[[Message], dict[str, Any] | None]] = {
            Role.system: self.system_message,
            Role.user: self.user,
            Role.assistant: self.assistant,
            Role.tool: self.tool,
        }

    def wire_id(self, canonical: str) -> str:
        """The id `canonical` goes out as (see `ToolIdMap.outgoing`)."""
        return self.options.tool_ids.outgoing(canonical, self.name)

    def cached(self, part: dict[str, Any], point: CachePoint | None) -> dict[str, Any]:
        """`part` with the breakpoint of the block it was made from, where the row takes
        markers (elsewhere `write_request` said once that they are not sent)."""
        if point is None or not self.facts.cache_control:
            return part
        return _marked(part, cache_control(point))

    def partless(self, message: Message, index: int, block_type: str, point: CachePoint | None) -> None:
        """A breakpoint on a block that is sent but makes no content part (a tool call,
        reasoning): said once (a dropped block's own WARN already covers its breakpoint)."""
        if point is None or not self.facts.cache_control:
            return
        reason = f"a {block_type} block has no content part to carry cache_control"
        self.losses.lost(message, "cache_point", reason, at=block_at(message, index))

    def system_message(self, message: Message) -> dict[str, Any] | None:
        parts = [
            self.cached({"type": "text", "text": b.text}, b.cache_point)
            for b in message.content
            if isinstance(b, TextBlock)
        ]
        if not parts:
            return None  # an empty SYSTEM message is a composition placeholder (§5.1.2)
        return {"role": self.system_role, "content": _one_string(parts)}

    def user(self, message: Message) -> dict[str, Any] | None:
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            part: dict[str, Any] | None = None
            if isinstance(block, TextBlock):
                part = {"type": "text", "text": block.text}
            elif isinstance(block, ImageBlock):
                part = self.media.image(block, message, index)
            elif isinstance(block, DocumentBlock):
                part = self.media.document(block, message, index)
            elif isinstance(block, AudioBlock):
                part = self.media.audio(block, message, index)
            elif isinstance(block, VideoBlock):
                part = self.media.video(block, message, index)
            else:
                self.losses.block(
                    message,
                    index,
                    block.type,
                    "USER messages carry text, images, documents, audio and video only",
                )
            if part is not None:
                parts.append(self.cached(part, block.cache_point))
        if not parts:
            return None
        return {"role": "user", "content": _one_string(parts)}

    def assistant(self, message: Message) -> dict[str, Any] | None:
        raw = own_raw(message, self.name)
        details = self.replayable_details(message, raw)
        reasoning_key = self.reasoning_key(message, raw) if details is None else None
        texts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        thoughts: list[dict[str, Any]] = []
        reasoning: list[str] = []
        own_thinking = self.facts.thinking_parts and message.metadata.model == self.model_id
        for index, block in enumerate(message.content):
            if isinstance(block, TextBlock):
                texts.append(self.cached({"type": "text", "text": block.text}, block.cache_point))
            elif isinstance(block, ToolUseBlock):
                calls.append(self.tool_call(block, raw))
                self.partless(message, index, block.type, block.cache_point)
            elif isinstance(block, ThinkingBlock) and own_thinking:
                thought: dict[str, Any] = {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": block.text}],
                }
                if block.signature:
                    thought["signature"] = block.signature
                thoughts.append(thought)
                self.partless(message, index, block.type, block.cache_point)
            elif isinstance(block, ThinkingBlock) and reasoning_key is not None:
                reasoning.append(block.text)
                self.partless(message, index, block.type, block.cache_point)
            elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
                if details is None:
                    self.losses.block(message, index, block.type, self.reasoning_drop_reason(message))
                else:
                    self.partless(message, index, block.type, block.cache_point)
            else:
                self.losses.block(
                    message, index, block.type, "ASSISTANT messages carry text, tool calls and reasoning only"
                )
        out: dict[str, Any] = {"role": "assistant", "content": _assistant_text(texts)}
        if calls:
            out["tool_calls"] = calls
        if details is not None:
            out["reasoning_details"] = details
            if out["content"] is None and not calls:
                out["content"] = ""
        if reasoning_key is not None and reasoning:
            out[reasoning_key] = "".join(reasoning)
            if out["content"] is None and not calls:
                out["content"] = ""
        if thoughts:  # thinking parts first, then the text as one text part
            joined = _TEXT_JOIN.join(t["text"] for t in texts)
            out["content"] = [*thoughts, *([{"type": "text", "text": joined}] if texts else [])]
        if out["content"] is None:
            if not calls:
                return None  # everything was dropped (and logged)
            out["content"] = self.empty_content
        return out

    def replayable_details(self, message: Message, raw: dict[str, Any]) -> list[Any] | None:
        """This provider's own reasoning_details, when the same model is asked again."""
        details = raw.get("reasoning_details")
        if not self.facts.reasoning_details or not isinstance(details, list):
            return None
        same = message.metadata.model == self.model_id and replays_opaque(message, self.name, self.options)
        return details if same else None

    def reasoning_key(self, message: Message, raw: dict[str, Any]) -> str | None:
        """The key this provider's own plain reasoning text goes back under (see the row's
        `replays_plain_reasoning`), when the same model is asked again; else None.

        The same model, not only the same provider: one row serves every compatible server,
        and OpenAI's own API refuses keys its messages do not declare.
        """
        key = raw.get("reasoning_key")
        if (
            self.facts.replays_plain_reasoning
            and key in self.facts.plain_reasoning_keys
            and message.metadata.model == self.model_id
        ):
            return str(key)
        return None

    def reasoning_drop_reason(self, message: Message) -> str:
        facts = self.facts
        if not facts.reasoning_details and not facts.thinking_parts and not facts.replays_plain_reasoning:
            return "Chat Completions cannot carry reasoning"
        return foreign_reasoning(message, self.model_id, self.name, self.options)

    def tool_call(self, block: ToolUseBlock, raw: dict[str, Any]) -> dict[str, Any]:
        self.call_names[block.id] = block.name
        return {
            "id": self.wire_id(block.id),
            "type": "function",
            "function": {"name": block.name, "arguments": replay_arguments(block, raw)},
        }

    def tool(self, message: Message) -> dict[str, Any]:
        block = message.content[0] if message.content else None
        if not isinstance(block, ToolResultBlock):
            raise WireFormatError(
                "a TOOL message must hold one tool_result block", provider=self.name, message_id=message.id
            )
        parts: list[dict[str, Any]] = []
        for part in block.content:
            if isinstance(part, TextBlock):
                parts.append(self.cached({"type": "text", "text": part.text}, part.cache_point))
            elif isinstance(part, ImageBlock) and self.facts.tool_result_images:
                image = self.media.image(part, message, 0)
                if image is not None:
                    parts.append(self.cached(image, part.cache_point))
            else:
                carried = "text and images" if self.facts.tool_result_images else "text only"
                self.losses.block(message, 0, part.type, f"{self.name} tool messages carry {carried}")
        if block.cache_point is not None and self.facts.cache_control:
            last = parts.pop() if parts else {"type": "text", "text": ""}
            parts.append(self.cached(last, block.cache_point))
        out: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": self.wire_id(block.tool_use_id),
            "content": _one_string(parts) if parts else "",
        }
        if self.tool_names and block.tool_use_id in self.call_names:
            out["name"] = self.call_names[block.tool_use_id]
        return out


def _one_string(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Content: a lone unmarked text part as a string (what every server takes), else the
    parts (block boundaries kept; a string cannot carry `cache_control`)."""
    if len(parts) == 1 and parts[0]["type"] == "text" and "cache_control" not in parts[0]:
        return str(parts[0]["text"])
    return parts


def _assistant_text(texts: list[dict[str, Any]]) -> str | list[dict[str, Any]] | None:
    """An assistant turn's text: joined into one string (replies are one string, and not
    every compatible server takes text parts), unless a part carries a cache marker, which
    only a part can hold: then the parts, one per block."""
    if not texts:
        return None
    if any("cache_control" in t for t in texts):
        return texts
    return _TEXT_JOIN.join(t["text"] for t in texts)


__all__ = ["DEFAULT_CACHE_CONTROL", "DIRECTIVES", "SYSTEM_ROLES", "write_request"]
