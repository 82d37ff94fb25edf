"""Canonical messages -> an Anthropic Messages request body (the request writer).

- SYSTEM messages are hoisted, in order, to the top-level `system`: a string when the
  whole prompt is one plain text block, else a list of text blocks (the only form that
  carries `cache_control`); one an import found as a `system` turn among the messages goes
  back there (`SYSTEM_TURN`, by message id in the import's `SPELLED`
  directive), and a turn imported with string content is a string again while it is one
  plain text block (`STRING_CONTENT`; on a TOOL
  message, its tool_result's content).
- TOOL messages become `tool_result` blocks of the next `user` turn: consecutive TOOL
  messages (parallel results) share one user turn, and a USER message right after them
  joins that turn behind the results, which is where Anthropic wants them. Other
  consecutive same-role turns stay separate messages; the API accepts them.
- Tool ids go out through the session's ToolIdMap (`^[a-zA-Z0-9_-]+$`), so a call keeps
  its `toolu_...` id on replay and a foreign id is replaced by a compliant one.
- Thinking is replayed byte-exact, in its original position, only from messages this
  adapter produced at the endpoint the request goes to (`provenance.replays_opaque`) and only
  when signed: Anthropic rejects unsigned or foreign thinking, and a proxy's signatures
  verify only at that proxy, so those blocks are dropped with a WARN (§7.3). Blocks kept
  in provider_raw (server tool results) go back only there too.
- Text carries its citations (`citations`: what Anthropic has no form for is dropped with
  a WARN); documents and search results go in user turns and tool results (`documents`);
  server tool calls and results and compactions go back only to the Anthropic endpoint that made them
  (`server_tools`), anyone else's are dropped with a WARN; a block's
  `cache_point` is its `cache_control` (`cache`), except on thinking, which cannot take one.
- What the target model cannot carry (catalog capabilities: images, their media types,
  thinking) is dropped with a WARN; blocks kept in provider_raw go back where they were.
- Canonical options go where the facts row says (structured output as
  `output_config.format`); `provider_options["anthropic"]`, then `extra`, are deep-merged
  last, and other providers' options are reported as dropped (`options.own_fields`).
- A thinking budget of 0 (another provider's "off") leaves thinking out.
- A function tool's `cache_control` an import kept goes back on it (`tool_fields`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from metis_schema.v3 import (
    AdapterCapabilities,
    CompactionBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    SearchResultBlock,
    ServerToolResultBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
)

from ...catalog import load_catalog
from ...errors import AdapterError
from .._kit.base import AdapterOptions, WireBody
from .._kit.cache_points import NO_CACHE_CONTROL, cache_control
from .._kit.images import image_base64
from .._kit.losses import Losses, log
from .._kit.media_admission import admit, request_capabilities
from .._kit.options import OPTION_PATHS, directive, merge, spelled, split_directives
from .._kit.provenance import produced_at, replays_opaque, sent_to
from .._kit.provider_tools import ROWS, is_provider_tool, write_tool
from .._kit.strict import write_strict
from .._kit.tool_fields import write_kept
from .citations import write_citations
from .documents import write_document, write_search_result
from .facts import FACTS, PROVIDER
from .provider_raw import NOTHING_KEPT, Replay
from .server_tools import write_compaction, write_server_tool_result, write_server_tool_use

STRING_CONTENT = "string_content"
"""`SPELLED` key: the turn's `content` was a string (one plain text block), written so again."""
SYSTEM_TURN = "system_turn"
"""`SPELLED` key: a system message that stood among the `messages` as a `system` turn (as
recorded requests through compatible gateways carry it), written there again, not hoisted."""
SHAPE_KEYS = (STRING_CONTENT, SYSTEM_TURN)
"""How an imported turn was spelled (by message id in the `SPELLED` directive of the
import's options): kept so the request replays to Anthropic as it was sent."""

DEFAULT_MAX_TOKENS = 8192
"""`max_tokens` is required; without options.max_tokens send min(model's output cap, this)."""
MIN_THINKING_BUDGET = 1024
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

_SYSTEM, _USER, _TOOL = Role.system, Role.user, Role.tool
_WIRE_ROLE = {role: role.value for role in Role}


def write_request(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
) -> WireBody:
    """The `POST /v1/messages` body for a conversation (see the module docstring)."""
    entry = load_catalog().resolve(options.model)
    caps = request_capabilities(entry, messages, adapter=PROVIDER)
    shapes = spelled(options, PROVIDER)
    convert = _Writer(options, entry.id, caps, shapes).blocks
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    tool_turn: dict[str, Any] | None = None  # the user turn holding the latest tool results
    last_assistant: Message | None = None
    for message in messages:
        replay = _replay(message, options)
        role = message.role
        if role is Role.assistant:
            last_assistant = message
        shape = shapes.get(message.id) or {}
        if role is _SYSTEM and not shape.get(SYSTEM_TURN):
            system.extend(_system_blocks(message, replay))
            continue
        if role is _SYSTEM:  # a system turn among the messages, as the request was recorded
            turns.append({"role": "system", "content": _spelled(_system_blocks(message, replay), shape)})
            tool_turn = None
            continue
        blocks = convert(message, message.content, replay)
        if role is _TOOL:
            if tool_turn is None:
                tool_turn = {"role": "user", "content": []}
                turns.append(tool_turn)
            tool_turn["content"].extend(blocks)
            continue
        if role is _USER and tool_turn is not None:
            tool_turn["content"].extend(blocks)  # user text after parallel results: same turn
            tool_turn = None
            continue
        tool_turn = None
        if blocks:
            turns.append({"role": _WIRE_ROLE[role], "content": _spelled(blocks, shape)})
        else:
            log.info("message %s has nothing Anthropic can carry; omitted", message.id)
    body: WireBody = {"model": entry.wire_model}
    if system:
        plain = len(system) == 1 and set(system[0]) == {"type", "text"}
        body["system"] = system[0]["text"] if plain else system
    body["messages"] = turns
    FACTS.tools_to_wire(body, _tools(tools, options.session_id), options.tool_choice)
    FACTS.options_to_wire(
        {
            "max_tokens": _max_tokens(options, caps.max_output_tokens),
            "temperature": options.temperature,
            "top_p": options.top_p,
            "stop": list(options.stop) if options.stop else None,
            "reasoning_effort": options.reasoning_effort,
        },
        body,
        session_id=options.session_id,
        spelled=directive(options, PROVIDER, OPTION_PATHS),
    )
    # 0 means off (another provider's "off"): no thinking block
    if options.thinking_budget and _thinking_fits(turns, last_assistant, options):
        body["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
    FACTS.output_schema_to_wire(options.output_schema, body)
    if options.stream:
        body["stream"] = True
    merge(body, split_directives(options, PROVIDER)[1])
    return body


def _max_tokens(options: AdapterOptions, cap: int) -> int:
    budget = options.thinking_budget or None  # 0: thinking off
    if budget is not None and budget < MIN_THINKING_BUDGET:
        raise AdapterError(
            f"thinking_budget {budget} is below Anthropic's minimum of {MIN_THINKING_BUDGET}",
            provider=PROVIDER,
            path="options.thinking_budget",
        )
    if options.max_tokens is not None:
        if budget is not None and options.max_tokens <= budget:
            raise AdapterError(
                f"max_tokens {options.max_tokens} must exceed thinking_budget {budget}",
                provider=PROVIDER,
                path="options.max_tokens",
                hint="raise max_tokens or lower thinking_budget",
            )
        return options.max_tokens
    chosen = min(cap, DEFAULT_MAX_TOKENS)
    if budget is not None and chosen <= budget:
        chosen = min(cap, budget + DEFAULT_MAX_TOKENS)
        if chosen <= budget:
            raise AdapterError(
                f"thinking_budget {budget} leaves no room under the model's output cap {cap}",
                provider=PROVIDER,
                path="options.thinking_budget",
            )
    return chosen


def _thinking_fits(turns: list[dict[str, Any]], last: Message | None, options: AdapterOptions) -> bool:
    """Whether thinking can be on: not when the request continues a tool loop whose assistant
    turn goes without its thinking (dropped: another endpoint's, unsigned, or never there).

    Anthropic rejects that request ("expected thinking or redacted_thinking"), so thinking is
    left off for it, with the WARN of a lossy projection; the turn after the loop has it again.
    """
    if len(turns) < 2 or turns[-1]["role"] != "user" or turns[-2]["role"] != "assistant":
        return True
    results = any(block.get("type") == "tool_result" for block in turns[-1]["content"])
    assistant = turns[-2]["content"]
    if not results or assistant[0].get("type") in ("thinking", "redacted_thinking"):
        return True
    reason = "the open tool turn goes without its thinking, which Anthropic requires while thinking is on"
    Losses(PROVIDER, options.session_id).lost(
        last.id if last is not None else None,
        "thinking",
        reason,
        at=f"this request of {options.model} (thinking left off)",
    )
    return False


def _replay(message: Message, options: AdapterOptions) -> Replay:
    """What `message` kept for replay; the blocks a reply kept verbatim (server tool calls and
    their encrypted results) only for the endpoint that produced them, else dropped with a WARN."""
    replay = Replay.of(message)
    if not replay.foreign or message.role is not Role.assistant or replays_opaque(message, PROVIDER, options):
        return replay
    types = ", ".join(sorted({str(block.get("type")) for block in replay.foreign.values()}))
    reason = f"kept from {produced_at(message)}, replayable only there, not to {sent_to(PROVIDER, options)}"
    Losses(PROVIDER, options.session_id).lost(message, types, reason, whole=True)
    return Replay(extras=replay.extras) if replay.extras else NOTHING_KEPT


def _spelled(blocks: list[dict[str, Any]], shape: dict[str, Any]) -> str | list[dict[str, Any]]:
    """A turn's content as the import found it: a string when it was one and is still one
    plain text block (`STRING_CONTENT`), else the blocks."""
    if not shape.get(STRING_CONTENT):  # most turns: nothing spelled, no need to look at the blocks
        return blocks
    plain = len(blocks) == 1 and blocks[0].keys() == {"type", "text"} and blocks[0]["type"] == "text"
    return str(blocks[0]["text"]) if plain else blocks


def _system_blocks(message: Message, replay: Replay) -> list[dict[str, Any]]:
    converted: list[dict[str, Any] | None] = []
    for b in message.content:
        wire: dict[str, Any] | None = None
        if isinstance(b, TextBlock) and b.text:
            wire = {"type": "text", "text": b.text}
            if b.cache_point is not None:
                wire["cache_control"] = cache_control(b.cache_point)
        converted.append(wire)
    return replay.splice(converted)


def _tools(tools: Sequence[ToolDefinition], session_id: str) -> list[dict[str, Any]]:
    """Function tools and provider tools (`provider_tools`), in their order."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if not is_provider_tool(tool):
            out.append(_tool(tool))
            continue
        wire = write_tool(ROWS[PROVIDER], tool, session_id=session_id)
        if wire is not None:
            out.append(wire)
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.input_schema
    write_strict(tool, out, PROVIDER, always=False)
    if tool.defer_loading:
        out["defer_loading"] = True
    write_kept(tool, out, PROVIDER)
    return out


class _Writer:
    """Canonical blocks -> wire blocks for one request: what the target model can carry
    (catalog capabilities of options.model) travels, the rest is dropped with a WARN."""

    def __init__(
        self, options: AdapterOptions, model_id: str, caps: AdapterCapabilities, shapes: dict[str, Any]
    ) -> None:
        self.options = options
        self.model_id = model_id
        self.caps = caps
        self.losses = Losses(PROVIDER, options.session_id)
        self.outgoing = options.tool_ids.outgoing
        """The id a canonical tool id goes out as (`ToolIdMap.outgoing`: kept, or made compliant)."""
        self.spelled = shapes
        """Message id -> how an import found it spelled (`SPELLED`)."""
        self.cites_warned: set[str] = set()
        """Messages whose dropped citations were already said (one WARN per message)."""

    def blocks(
        self, message: Message, items: Sequence[ContentBlock], replay: Replay, inside: int | None = None
    ) -> list[dict[str, Any]]:
        """The wire blocks of `message`'s content, or of the content of its tool_result block
        `inside` (where only text, images, documents and search results go): each block
        converted once, dropped ones logged, then what the message kept for replay spliced
        back in."""
        converted: list[dict[str, Any] | None] = []
        keys = replay.wire_keys(len(items), inside) if replay.cites else None  # only citations need them
        for position, block in enumerate(items):
            index = position if inside is None else inside  # the message's block, for the drop log
            wire: dict[str, Any] | None
            if block.type == "text":  # the usual blocks first, inline: this loop runs for every block
                if block.text:
                    wire = {"type": "text", "text": block.text}
                    if block.citations:
                        kept = replay.cites.get(keys[position], ()) if keys else ()
                        cites = write_citations(message, index, block.citations, kept, self.cites_warned)
                        if cites:
                            wire["citations"] = cites
                else:
                    self.drop(message, index, block, inside, "Anthropic rejects empty text blocks")
                    wire = None
            elif block.type == "tool_use" and inside is None:
                wire = {
                    "type": "tool_use",
                    "id": self.outgoing(block.id, PROVIDER),
                    "name": block.name,
                    "input": block.input,
                }
            elif block.type == "tool_result" and inside is None:
                wire = self.tool_result(message, index, block, replay)
            else:
                wire = self.other(message, index, block, inside)
            if wire is not None and block.cache_point is not None:
                if wire["type"] in NO_CACHE_CONTROL:
                    self.lose_cache_point(message, block)
                else:
                    wire["cache_control"] = cache_control(block.cache_point)
            converted.append(wire)
        return replay.splice(converted, inside)

    def other(
        self, message: Message, index: int, block: ContentBlock, inside: int | None
    ) -> dict[str, Any] | None:
        """A block that is not text, a tool call or a tool result -> its wire block, or None
        (dropped, logged)."""
        if isinstance(block, ImageBlock):
            return self.image(message, index, block, inside)
        if isinstance(block, DocumentBlock):
            refused = admit(block, self.caps, self.model_id, FACTS)
            if refused is not None:
                self.drop(message, index, block, inside, refused)
                return None
            return write_document(block, self.options, partial(self.drop, message, index, block, inside))
        if isinstance(block, SearchResultBlock):
            return write_search_result(block)
        if inside is not None:
            self.drop(message, index, block, inside, "not allowed inside tool_result")
            return None
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            return self.thinking(message, index, block)
        if isinstance(block, ServerToolUseBlock | ServerToolResultBlock | CompactionBlock):
            return self.server_block(message, block, partial(self.drop, message, index, block, None))
        # A schema v2 block Anthropic has no form for (audio, video): dropped, never sent as text.
        self.drop(message, index, block, None, f"Anthropic has no {block.type} block")
        return None

    def server_block(
        self,
        message: Message,
        block: ServerToolUseBlock | ServerToolResultBlock | CompactionBlock,
        drop: Callable[[str], None],
    ) -> dict[str, Any] | None:
        """An Anthropic server tool call, result or compaction back as it came, to the
        endpoint that made it (their encrypted content verifies only there); another
        provider's or endpoint's is opaque here (dropped, logged)."""
        if block.provider != PROVIDER:
            drop(f"a {block.type} of {block.provider} replays only to {block.provider}")
            return None
        if not replays_opaque(message, PROVIDER, self.options):
            drop(
                f"a {block.type} made via {produced_at(message)} replays only there, "
                f"not via {sent_to(PROVIDER, self.options)}"
            )
            return None
        if isinstance(block, ServerToolUseBlock):
            return write_server_tool_use(block)
        if isinstance(block, CompactionBlock):
            return write_compaction(block)
        wire = write_server_tool_result(block)
        if wire is None:
            drop("the result's wire form (provider_data) was not kept")
        return wire

    def lose_cache_point(self, message: Message, block: ContentBlock) -> None:
        """A breakpoint on a block Anthropic takes none on: the block goes, its breakpoint not."""
        self.losses.lost(
            message,
            f"{block.type}/cache_point",
            f"Anthropic takes no cache_control on {block.type} blocks",
            whole=True,
        )

    def thinking(
        self, message: Message, index: int, block: ThinkingBlock | RedactedThinkingBlock
    ) -> dict[str, Any] | None:
        """Thinking replayed byte-exact, or None when Anthropic would reject it (dropped, logged)."""
        reason: str | None = None
        if not replays_opaque(message, PROVIDER, self.options):
            reason = (
                f"{block.type} from {produced_at(message)} cannot be verified by "
                f"{sent_to(PROVIDER, self.options)}"
            )
        elif not self.caps.supports_thinking:
            reason = f"model {self.options.model} does not support thinking"
        elif block.type == "redacted_thinking":
            return {"type": "redacted_thinking", "data": block.data}
        elif block.signature:
            return {"type": "thinking", "thinking": block.text, "signature": block.signature}
        else:
            reason = "Anthropic rejects thinking without its signature"
        self.drop(message, index, block, None, reason)
        return None

    def tool_result(
        self, message: Message, index: int, block: ToolResultBlock, replay: Replay
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.outgoing(block.tool_use_id, PROVIDER),
        }
        inner = self.blocks(message, block.content, replay, inside=index)
        if inner:
            out["content"] = _spelled(inner, self.spelled.get(message.id) or {})
        if block.is_error:
            out["is_error"] = True
        return out

    def image(
        self, message: Message, index: int, block: ImageBlock, inside: int | None
    ) -> dict[str, Any] | None:
        """An image by URL or inline (a file_ref read from the workspace), or None when the
        model or Anthropic cannot take it (dropped, logged)."""
        reason = admit(block, self.caps, self.model_id, FACTS, image_types=IMAGE_MEDIA_TYPES)
        if reason is None and block.source.kind == MediaSourceKind.file_id:
            # The declared image sources are base64 and url (wire.ImageSource): even an
            # Anthropic upload is not written as an image here.
            reason = "an image source here is base64 or a URL"
        if reason is not None:
            self.drop(message, index, block, inside, reason)
            return None
        if block.source.kind == MediaSourceKind.url:
            return {"type": "image", "source": {"type": "url", "url": block.source.data}}
        data = image_base64(block, self.options)
        return {"type": "image", "source": {"type": "base64", "media_type": block.media_type, "data": data}}

    def drop(
        self, message: Message, index: int, block: ContentBlock, inside: int | None, reason: str
    ) -> None:
        """Drop `block` (block `index` of `message`, or an item inside it) with one WARN, or fail
        if it is critical; the WARN names an item as `tool_result/<type>`."""
        label = block.type if inside is None else f"tool_result/{block.type}"
        self.losses.block(message, index, label, reason)


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "IMAGE_MEDIA_TYPES",
    "MIN_THINKING_BUDGET",
    "SHAPE_KEYS",
    "STRING_CONTENT",
    "SYSTEM_TURN",
    "write_request",
]
