"""Anthropic Messages API (`POST /v1/messages`) <-> canonical messages.

Shapes (checked against the anthropic 2.12 SDK types):

- SYSTEM messages are hoisted, in order, to the top-level `system`: a string when the
  whole prompt is one plain text block, else a list of text blocks (the only form that
  carries `cache_control`).
- TOOL messages become `tool_result` blocks of the next `user` turn: consecutive TOOL
  messages (parallel results) share one user turn, and a USER message right after them
  joins that turn behind the results, which is where Anthropic wants them. Other
  consecutive same-role turns stay separate messages; the API accepts them.
- Tool ids go out through the session's ToolIdMap (`^[a-zA-Z0-9_-]+$`), so a call keeps
  its `toolu_...` id on replay and a foreign id is replaced by a compliant one.
- Thinking is replayed byte-exact, in its original position, only from messages this
  adapter produced (`metadata.provider == "anthropic"`) and only when signed: Anthropic
  rejects unsigned or foreign thinking, so those blocks are dropped with a WARN (§7.3).

Blocks with no canonical type (document, search_result, server_tool_use,
web_search_tool_result, file-sourced images, ...) are *dropped with a WARN naming them*
on import, never turned into an error, and kept verbatim in the message's provider_raw
(`foreign`, keyed by their position); block keys with no canonical field (`cache_control`,
`citations`) are kept the same way (`extras`). An export of that message back to
Anthropic puts both where they were, so a recorded request or response replays as sent.
A turn made only of such blocks cannot become a valid canonical message and fails with
a WireFormatError. provider_raw is written only on messages whose provider is
"anthropic" and read only by this adapter (spec §6.5).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

from metis_schema.v1 import (
    AdapterCapabilities,
    ContentBlock,
    ErrorEvent,
    ImageBlock,
    ImageSource,
    ImageSourceKind,
    Message,
    MessageCompleteEvent,
    RedactedThinkingBlock,
    Role,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UsageUpdateEvent,
)

from .. import _json
from ..assembly import RequestContext, finish_assistant, import_context, imported_assistant, imported_message
from ..catalog import load_catalog
from ..errors import AdapterError, ProviderError, WireFormatError, retryable_status
from ..ids import ToolIdMap
from ..usage import normalize_usage
from ._framing import SSEFramer
from ._lossy import drop_block, import_drop, log, warn_loss
from ._shared import (
    image_base64,
    import_model,
    imported_tool,
    own_raw,
    url_image_media_type,
)
from ._shared import text_block as _text_block
from ._shared import thinking_block as _thinking_block
from ._shared import tool_use_block as _tool_use_block
from .base import Adapter, AdapterOptions, StreamDecoder, WireBody, WireImport

PROVIDER = "anthropic"
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
"""`max_tokens` is required; without options.max_tokens send min(model's output cap, this)."""
MIN_THINKING_BUDGET = 1024
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.end_turn,
    "tool_use": StopReason.tool_use,
    "max_tokens": StopReason.max_tokens,
    "stop_sequence": StopReason.stop_sequence,
    "pause_turn": StopReason.pause_turn,
    "refusal": StopReason.refusal,
    "model_context_window_exceeded": StopReason.context_window_exceeded,
}
"""Anthropic `stop_reason` -> canonical; anything else is `other` (the raw value stays in provider_raw)."""

RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})

TOOL_CHOICES: dict[str, dict[str, Any]] = {
    "auto": {"type": "auto"},
    "any": {"type": "any"},
    "required": {"type": "any"},
    "none": {"type": "none"},
}
"""options.tool_choice -> wire; any other value names the one tool to call ({type: tool, name})."""

_REQUEST_FIELDS = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "max_tokens",
        "temperature",
        "top_p",
        "stop_sequences",
        "stream",
        "thinking",
    }
)
"""Top-level request fields with a canonical home; the rest go to WireImport.unmapped."""


# Roles as module constants: `Role.x` is a slow enum class lookup inside per-message loops.
_SYSTEM, _USER, _TOOL = Role.system, Role.user, Role.tool
_WIRE_ROLES = {role: role.value for role in Role}


# --- provider_raw: what replay needs beyond the canonical blocks --------------------------


def _path(prefix: str, position: int) -> str:
    """provider_raw key of wire block `position` in the list at `prefix` ("" or "0/")."""
    return f"{prefix}{position}"


@dataclass
class _Replay:
    """Foreign blocks and extra block keys of one message, keyed by wire position path.

    Paths are "3" (fourth block of the message's wire list) or "0/2" (third item of the
    content of the message's first block, i.e. inside a tool_result).
    """

    foreign: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, message: Message) -> _Replay:
        """What `message` kept for replay; read-only (the usual empty one is shared)."""
        if message.metadata.provider_raw is None:
            return _NOTHING_KEPT  # the usual message: no own_raw lookups, no new object
        raw = own_raw(message, PROVIDER)
        foreign, extras = raw.get("foreign"), raw.get("extras")
        return cls(
            foreign=dict(foreign) if isinstance(foreign, dict) else {},
            extras=dict(extras) if isinstance(extras, dict) else {},
        )

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.foreign:
            out["foreign"] = self.foreign
        if self.extras:
            out["extras"] = self.extras
        return out

    def splice(self, prefix: str, converted: Sequence[dict[str, Any] | None]) -> list[dict[str, Any]]:
        """Wire blocks at `prefix`: converted canonical blocks (None = dropped) with the
        foreign blocks put back at their recorded positions and extras re-applied."""
        if not self.foreign and not self.extras:
            return [block for block in converted if block is not None]  # the usual case: nothing kept
        foreign = {
            int(key[len(prefix) :]): block
            for key, block in self.foreign.items()
            if key.startswith(prefix) and key[len(prefix) :].isdigit()
        }
        out: list[dict[str, Any]] = []
        pending = iter(converted)
        position = 0
        while True:
            if position in foreign:
                out.append(foreign.pop(position))
            else:
                block = next(pending, _END)
                if block is _END:
                    break
                if block is not None:
                    extra = self.extras.get(_path(prefix, position))
                    out.append({**block, **extra} if extra else block)
            position += 1
        out.extend(foreign[k] for k in sorted(foreign))
        return out


_END: Any = object()
_NOTHING_KEPT = _Replay()
"""The replay of a message without provider_raw, shared: `_Replay.of` results are only read."""


def _block_extras(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    """Keys of a wire block that have no canonical field and must survive replay."""
    return {
        k: v
        for k, v in block.items()
        if k not in known and v is not None and not (k == "citations" and not v)
    }


_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})
_TOOL_USE_KEYS = frozenset({"type", "id", "name", "input", "caller"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS = frozenset({"type", "data"})


# --- canonical -> wire ------------------------------------------------------------------------


class AnthropicAdapter(Adapter):
    """The Anthropic Messages API (see module docstring for the mapping decisions)."""

    name: ClassVar[str] = PROVIDER
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    api_key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        base = base_url.rstrip("/")
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def to_wire(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        entry = load_catalog().resolve(options.model)
        caps = entry.capabilities
        body: WireBody = {
            "model": entry.wire_model,
            "max_tokens": _max_tokens(options, caps.max_output_tokens),
        }
        convert = _Out(options, caps).blocks
        system: list[dict[str, Any]] = []
        turns: list[dict[str, Any]] = []
        tool_turn: dict[str, Any] | None = None  # the user turn holding the latest tool results
        for message in messages:
            replay = _Replay.of(message)
            role = message.role
            if role == _SYSTEM:
                system.extend(_system_blocks(message, replay))
                continue
            blocks = convert(message, replay)
            if role == _TOOL:
                if tool_turn is None:
                    tool_turn = {"role": "user", "content": []}
                    turns.append(tool_turn)
                tool_turn["content"].extend(blocks)
                continue
            if role == _USER and tool_turn is not None:
                tool_turn["content"].extend(blocks)  # user text after parallel results: same turn
                tool_turn = None
                continue
            tool_turn = None
            if blocks:
                turns.append({"role": _WIRE_ROLES[role], "content": blocks})
            else:
                log.info("message %s has nothing Anthropic can carry; omitted", message.id)
        if system:
            plain = len(system) == 1 and set(system[0]) == {"type", "text"}
            body["system"] = system[0]["text"] if plain else system
        body["messages"] = turns
        if tools:
            body["tools"] = [_tool_to_wire(t) for t in tools]
        if options.tool_choice is not None:
            body["tool_choice"] = TOOL_CHOICES.get(options.tool_choice) or {
                "type": "tool",
                "name": options.tool_choice,
            }
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.top_p is not None:
            body["top_p"] = options.top_p
        if options.stop:
            body["stop_sequences"] = list(options.stop)
        if options.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": options.thinking_budget}
        if options.stream:
            body["stream"] = True
        body.update(options.extra)
        return body

    # --- wire -> canonical: recorded requests ---------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        if not isinstance(body, Mapping):
            raise WireFormatError("request body must be a JSON object", provider=PROVIDER)
        model = import_model(body, PROVIDER)
        reader = _RequestReader(session_id, tool_ids, model)
        out: list[Message] = []
        system = body.get("system")
        if system is not None:
            out.append(reader.system(system, "system"))
        raw_messages = body.get("messages")
        if not isinstance(raw_messages, list):
            raise WireFormatError("messages must be a list", provider=PROVIDER, path="messages")
        for i, turn in enumerate(raw_messages):
            out.extend(reader.turn(turn, f"messages[{i}]"))
        tools: list[ToolDefinition] = []
        unmapped = {k: v for k, v in body.items() if k not in _REQUEST_FIELDS}
        dropped: list[dict[str, Any]] = []
        for i, tool in enumerate(_list(body.get("tools"), "tools")):
            if not isinstance(tool, Mapping):
                raise WireFormatError("tool must be an object", provider=PROVIDER, path=f"tools[{i}]")
            if tool.get("type") not in (None, "custom"):  # a server tool (web_search_..., bash_...)
                import_drop(
                    dropped,
                    adapter=PROVIDER,
                    session_id=session_id,
                    path=f"tools[{i}]",
                    value=tool,
                    reason=f"server tool {tool.get('type')!r} has no canonical form",
                )
                continue
            tools.append(
                imported_tool(
                    tool.get("name"),
                    tool.get("description"),
                    tool.get("input_schema"),
                    provider=PROVIDER,
                    path=f"tools[{i}]",
                )
            )
        stop = body.get("stop_sequences")
        if stop is not None and (not isinstance(stop, list) or not all(isinstance(s, str) for s in stop)):
            raise WireFormatError(
                "stop_sequences must be a list of strings", provider=PROVIDER, path="stop_sequences"
            )
        thinking, budget = body.get("thinking"), None
        if (
            isinstance(thinking, Mapping)
            and set(thinking) == {"type", "budget_tokens"}
            and thinking["type"] == "enabled"
        ):
            budget = _opt_int(thinking, "budget_tokens", "thinking.budget_tokens")
        elif thinking is not None:
            unmapped["thinking"] = thinking  # adaptive/disabled/display: no canonical option
        options = AdapterOptions(
            model=model,
            session_id=session_id,
            tool_ids=tool_ids,
            max_tokens=_opt_int(body, "max_tokens"),
            temperature=_opt_number(body, "temperature"),
            top_p=_opt_number(body, "top_p"),
            stop=list(stop) if stop is not None else None,
            stream=body.get("stream") is True,
            tool_choice=_import_tool_choice(body.get("tool_choice"), unmapped),
            thinking_budget=budget,
        )
        return WireImport(messages=out, tools=tools, options=options, unmapped=unmapped, dropped=dropped)

    # --- wire -> canonical: responses ----------------------------------------------------

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        # `type(...) is dict` first: parsed JSON is a dict, and an ABC isinstance is slower.
        mapping = type(body) is dict or isinstance(body, Mapping)
        if mapping and body.get("type") == "error":
            raise self.parse_error(body)
        wire_content = body.get("content") if mapping else None
        if not isinstance(wire_content, list):
            raise WireFormatError(
                "response is not an Anthropic message", provider=PROVIDER, path="content", raw=_excerpt(body)
            )
        replay = _Replay()
        tool_ids = context.tool_ids
        content: list[ContentBlock] = []
        skipped: list[str] = []
        for i, block in enumerate(wire_content):
            canonical = _assistant_block(block, i, tool_ids=tool_ids, replay=replay, where="content")
            if canonical is None:
                skipped.append(str(replay.foreign[str(i)].get("type")))
            else:
                content.append(canonical)
        if skipped:
            _warn_foreign(context.session_id, context.message_id, skipped, "response")
        if not content:
            raise WireFormatError(
                f"response has no block metis can represent (only {', '.join(skipped) or 'none'})",
                provider=PROVIDER,
                path="content",
                hint="server tools are not part of the canonical format",
            )
        stop = body.get("stop_reason")
        raw = _response_raw(body.get("id"), body.get("model"), stop, body.get("stop_sequence"), replay)
        usage = body.get("usage")
        if usage is not None and type(usage) is not dict and not isinstance(usage, Mapping):
            raise WireFormatError("usage must be an object", provider=PROVIDER, path="usage")
        return finish_assistant(
            context,
            provider=PROVIDER,
            content=content,
            counts=normalize_usage(PROVIDER, usage),
            stop_reason=_stop_reason(stop),
            provider_raw=raw,
        )

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        return _StreamDecoder(context)

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        parsed = body
        if isinstance(body, bytes | str):
            try:
                parsed = _json.loads(body)
            except _json.JSONDecodeError:
                parsed = None
        error_type, message = _error_fields(parsed)
        if error_type is None:
            error_type = f"http_{status_code}" if status_code else "unknown_error"
            message = _excerpt(body)
        request_id = parsed.get("request_id") if isinstance(parsed, Mapping) else None
        if request_id:
            message = f"{message} (request_id {request_id})"
        return ProviderError(
            message,
            provider=PROVIDER,
            error_type=error_type,
            status_code=status_code,
            retryable=_retryable(error_type, status_code),
            body=parsed if parsed is not None else body,
        )

    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """Characters / 3.5 over what the request would carry, plus fixed overheads.

        Method: text, thinking and tool-result text count by characters; tool inputs and
        tool definitions by the characters of their compact JSON; each message adds 4
        tokens of framing, each tool 40 (the tool-use system preamble is ~300 once), each
        image 1,600 (Anthropic's cap for a downscaled image, an upper bound). Measured
        error and the samples it was measured on: tests/test_anthropic_estimate.py.
        """
        chars = 0
        fixed = 8
        for message in messages:
            fixed += 4
            for block in _walk(message.content):
                if isinstance(block, TextBlock | ThinkingBlock):
                    chars += len(block.text)
                elif isinstance(block, ToolUseBlock):
                    chars += len(block.name) + len(_json.dumps(block.input))
                    fixed += 10
                elif isinstance(block, ToolResultBlock):
                    fixed += 10
                elif isinstance(block, ImageBlock):
                    fixed += 1600
                elif isinstance(block, RedactedThinkingBlock):
                    chars += len(block.data) // 4
        if tools:
            fixed += 300
            for tool in tools:
                fixed += 40
                chars += len(tool.name) + len(tool.description) + len(_json.dumps(tool.input_schema))
        return fixed + round(chars / 3.5)


# --- to_wire helpers ----------------------------------------------------------------------------


def _max_tokens(options: AdapterOptions, cap: int) -> int:
    budget = options.thinking_budget
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


def _system_blocks(message: Message, replay: _Replay) -> list[dict[str, Any]]:
    converted: list[dict[str, Any] | None] = [
        {"type": "text", "text": b.text} if isinstance(b, TextBlock) and b.text else None
        for b in message.content
    ]
    return replay.splice("", converted)


@dataclass
class _Out:
    """Canonical blocks -> wire blocks for one request: what the target model can carry
    (catalog capabilities of options.model) travels, the rest is dropped with a WARN.

    Runs for every block of the conversation: text and tool calls, the usual blocks, are
    written inline (exact-type tests); tool ids go through `ToolIdMap.outgoing`, which
    answers an id it settled before in one lookup.
    """

    options: AdapterOptions
    caps: AdapterCapabilities
    accepted: frozenset[str] = field(init=False)
    """The image media types both Anthropic and the model accept (set once per request)."""

    def __post_init__(self) -> None:
        self.accepted = IMAGE_MEDIA_TYPES.intersection(self.caps.accepted_image_media_types)

    def wire_id(self, canonical: str) -> str:
        """The id `canonical` goes out as (see `ToolIdMap.outgoing`)."""
        return self.options.tool_ids.outgoing(canonical, PROVIDER)

    def blocks(self, message: Message, replay: _Replay) -> list[dict[str, Any]]:
        """The wire blocks of a USER, ASSISTANT or TOOL message (dropped ones logged)."""
        if replay.foreign or replay.extras:
            return replay.splice(
                "", [self.block(message, i, b, replay) for i, b in enumerate(message.content)]
            )
        # Nothing kept in provider_raw: `splice` would return the converted blocks in order,
        # minus the dropped ones; the same, without the intermediate list.
        wire: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            if type(block) is TextBlock and block.text:
                wire.append({"type": "text", "text": block.text})
            elif type(block) is ToolUseBlock:
                wire.append(
                    {
                        "type": "tool_use",
                        "id": self.wire_id(block.id),
                        "name": block.name,
                        "input": block.input,
                    }
                )
            elif type(block) is ToolResultBlock:
                wire.append(self.tool_result(message, index, block, replay))
            else:
                converted = self.block(message, index, block, replay)
                if converted is not None:
                    wire.append(converted)
        return wire

    def block(
        self, message: Message, index: int, block: ContentBlock, replay: _Replay
    ) -> dict[str, Any] | None:
        """One canonical block of `message` -> one wire block, or None when dropped (logged)."""
        if isinstance(block, TextBlock | ImageBlock):
            return self.leaf(message, index, block, block.type)
        if isinstance(block, ToolUseBlock):
            return {
                "type": "tool_use",
                "id": self.wire_id(block.id),
                "name": block.name,
                "input": block.input,
            }
        if isinstance(block, ToolResultBlock):
            return self.tool_result(message, index, block, replay)
        reason = self.thinking_refusal(message, block)
        if reason is not None:
            drop_block(adapter=PROVIDER, message=message, index=index, block_type=block.type, reason=reason)
            return None
        if isinstance(block, RedactedThinkingBlock):
            return {"type": "redacted_thinking", "data": block.data}
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}

    def thinking_refusal(self, message: Message, block: ThinkingBlock | RedactedThinkingBlock) -> str | None:
        """Why this thinking block cannot be replayed here, or None when it can (byte-exact)."""
        if message.metadata.provider != PROVIDER:
            return f"{block.type} from provider {message.metadata.provider!r} cannot be verified by Anthropic"
        if not self.caps.supports_thinking:
            return f"model {self.options.model} does not support thinking"
        if isinstance(block, ThinkingBlock) and not block.signature:
            return "Anthropic rejects thinking without its signature"
        return None

    def tool_result(
        self, message: Message, index: int, block: ToolResultBlock, replay: _Replay
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.wire_id(block.tool_use_id)}
        inner: list[dict[str, Any]]
        if replay.foreign or replay.extras:
            inner = replay.splice(
                f"{index}/",
                [self.leaf(message, index, item, f"tool_result/{item.type}") for item in block.content],
            )
        else:  # as `blocks` does: non-empty text inline, the rest through `leaf`
            inner = []
            for item in block.content:
                if type(item) is TextBlock and item.text:
                    inner.append({"type": "text", "text": item.text})
                else:
                    converted = self.leaf(message, index, item, f"tool_result/{item.type}")
                    if converted is not None:
                        inner.append(converted)
        if inner:
            out["content"] = inner
        if block.is_error:
            out["is_error"] = True
        return out

    def leaf(self, message: Message, index: int, block: ContentBlock, kind: str) -> dict[str, Any] | None:
        """Text or image (in a turn or inside a tool_result); anything else is dropped."""
        reason = "not allowed inside tool_result"
        if isinstance(block, TextBlock):
            if block.text:
                return {"type": "text", "text": block.text}
            reason = "Anthropic rejects empty text blocks"
        elif isinstance(block, ImageBlock):
            accepted = self.accepted
            if not self.caps.supports_images:
                reason = f"model {self.options.model} does not accept images"
            elif block.source.kind == ImageSourceKind.url:
                return {"type": "image", "source": {"type": "url", "url": block.source.data}}
            elif block.media_type not in accepted:
                reason = f"media type {block.media_type} is not one of {', '.join(sorted(accepted))}"
            else:
                data = image_base64(block, self.options)
                return {
                    "type": "image",
                    "source": {"type": "base64", "media_type": block.media_type, "data": data},
                }
        drop_block(adapter=PROVIDER, message=message, index=index, block_type=kind, reason=reason)
        return None


def _tool_to_wire(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.input_schema
    return out


# --- wire -> canonical helpers -------------------------------------------------------------


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireFormatError("must be a list", provider=PROVIDER, path=path)
    return value


def _opt_int(body: Mapping[str, Any], key: str, path: str | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireFormatError(f"{key} must be an integer", provider=PROVIDER, path=path or key)
    return value


def _opt_number(body: Mapping[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WireFormatError(f"{key} must be a number", provider=PROVIDER, path=key)
    return float(value)


def _import_tool_choice(choice: Any, unmapped: dict[str, Any]) -> str | None:
    if choice is None:
        return None
    if not isinstance(choice, Mapping) or not isinstance(choice.get("type"), str):
        raise WireFormatError(
            "tool_choice must be an object with a type", provider=PROVIDER, path="tool_choice"
        )
    kind = choice["type"]
    if set(choice) - {"type", "name"}:
        unmapped["tool_choice"] = choice  # e.g. disable_parallel_tool_use: kept, not lost
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str) or not name:
            raise WireFormatError(
                "tool_choice of type tool needs a name", provider=PROVIDER, path="tool_choice.name"
            )
        return name
    if kind in ("auto", "any", "none"):
        return str(kind)
    raise WireFormatError(f"unknown tool_choice type {kind!r}", provider=PROVIDER, path="tool_choice.type")


def _text(block: Mapping[str, Any], key: str, path: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise _not_text(block, key, path)
    return value


def _not_text(block: Mapping[str, Any], key: str, path: str) -> WireFormatError:
    """The error for a block whose `key` is not a string (see `_text`)."""
    return WireFormatError(
        f"{block.get('type')} block needs a string {key}", provider=PROVIDER, path=f"{path}.{key}"
    )


def _image_from_wire(block: Mapping[str, Any], path: str) -> ImageBlock | None:
    """A wire image -> canonical, or None for a source with no canonical kind (Files API)."""
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise WireFormatError("image block needs a source object", provider=PROVIDER, path=f"{path}.source")
    kind = source.get("type")
    if kind == "base64":
        media, data = _text(source, "media_type", f"{path}.source"), _text(source, "data", f"{path}.source")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise WireFormatError(
                f"image data is not base64: {exc}", provider=PROVIDER, path=f"{path}.source.data"
            ) from exc
        return _image(ImageSourceKind.base64, data, media, path)
    if kind == "url":
        url = _text(source, "url", f"{path}.source")
        return _image(ImageSourceKind.url, url, url_image_media_type(url), path)
    return None


def _image(kind: ImageSourceKind, data: str, media: str, path: str) -> ImageBlock:
    try:
        return ImageBlock(type="image", source=ImageSource(kind=kind, data=data), media_type=media)
    except ValueError as exc:
        raise WireFormatError(f"image cannot be imported: {exc}", provider=PROVIDER, path=path) from exc


def _warn_foreign(session_id: str, message_id: str | None, types: Sequence[str], where: str) -> None:
    """One WARN per message naming the wire block types metis has no type for (kept in provider_raw)."""
    names = ", ".join(types)
    warn_loss(
        adapter=PROVIDER,
        session_id=session_id,
        message_id=message_id,
        block_type=names,
        reason="no canonical block type; kept in provider_raw",
        text=f"dropped {names} block(s) from {where} {message_id}: no canonical type; "
        "kept in provider_raw for replay to anthropic",
    )


def _assistant_block(
    block: Any, position: int, *, tool_ids: ToolIdMap, replay: _Replay, where: str
) -> ContentBlock | None:
    """An assistant wire block -> canonical; None (recorded in `replay`) when it has no canonical type.

    The block's path, `where[position]`, is only built for an error message: every reply
    runs this for each of its blocks.
    """
    # `type(...) is dict` first: parsed JSON is a dict, and an ABC isinstance is slower.
    if type(block) is not dict and not isinstance(block, Mapping):
        raise WireFormatError(
            "content block must be an object", provider=PROVIDER, path=f"{where}[{position}]"
        )
    kind = block.get("type")
    result: ContentBlock
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str):
            raise _not_text(block, "text", f"{where}[{position}]")
        result, known = _text_block(text), _TEXT_KEYS
    elif kind == "tool_use":
        provider_id, name, value = block.get("id"), block.get("name"), block.get("input")
        if not isinstance(provider_id, str):
            raise _not_text(block, "id", f"{where}[{position}]")
        if not isinstance(name, str):
            raise _not_text(block, "name", f"{where}[{position}]")
        if not isinstance(value, dict):
            raise WireFormatError(
                "tool_use input must be a JSON object", provider=PROVIDER, path=f"{where}[{position}].input"
            )
        if not name:
            raise WireFormatError(
                "tool_use name is empty", provider=PROVIDER, path=f"{where}[{position}].name"
            )
        canonical = tool_ids.register_incoming(PROVIDER, provider_id)
        result, known = _tool_use_block(canonical, name, value), _TOOL_USE_KEYS
    elif kind == "thinking":
        path = f"{where}[{position}]"
        signature = block.get("signature")
        if signature is not None and not isinstance(signature, str):
            raise WireFormatError(
                "thinking signature must be a string", provider=PROVIDER, path=f"{path}.signature"
            )
        text = _text(block, "thinking", path)
        result = _thinking_block({"type": "thinking", "text": text, "signature": signature or None})
        known = _THINKING_KEYS
    elif kind == "redacted_thinking":
        path = f"{where}[{position}]"
        data = _text(block, "data", path)
        if not data:
            raise WireFormatError("redacted_thinking data is empty", provider=PROVIDER, path=f"{path}.data")
        result, known = RedactedThinkingBlock(type="redacted_thinking", data=data), _REDACTED_KEYS
    else:
        replay.foreign[str(position)] = dict(block)
        return None
    # Keys beyond the canonical ones are rare: the subset test skips the scan without them.
    if not known.issuperset(block):
        extra = _block_extras(block, known)
        if extra:
            replay.extras[str(position)] = extra
    return result


def _response_raw(rid: Any, model: Any, stop: Any, stop_sequence: Any, replay: _Replay) -> dict[str, Any]:
    return {
        "adapter": PROVIDER,
        "id": rid,
        "model": model,
        "stop_reason": stop,
        "stop_sequence": stop_sequence,
        **replay.dump(),
    }


def _error_fields(body: Any) -> tuple[str | None, str]:
    """(type, message) of an error envelope `{"type": "error", "error": {type, message}}`."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return None, ""
    return str(error.get("type") or "error"), str(error.get("message") or "")


def _retryable(error_type: str, status_code: int | None) -> bool:
    return error_type in RETRYABLE_ERRORS or retryable_status(status_code)


def _stop_reason(value: Any) -> StopReason:
    return STOP_REASONS.get(value, StopReason.other) if isinstance(value, str) else StopReason.other


def _walk(blocks: Sequence[ContentBlock]) -> Iterator[ContentBlock]:
    for block in blocks:
        yield block
        if isinstance(block, ToolResultBlock):
            yield from _walk(block.content)


def _excerpt(value: Any, limit: int = 300) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    text = value if isinstance(value, str) else repr(value)
    return text[:limit]


def _user_block(
    block: Mapping[str, Any],
    position: int,
    *,
    into: list[ContentBlock],
    replay: _Replay,
    path: str,
    prefix: str = "",
) -> None:
    """A user-side wire block (turn or tool_result content): text and images become canonical,
    anything else is kept in `replay` at its position."""
    kind = block.get("type")
    canonical: ContentBlock | None = None
    known = _TEXT_KEYS
    if kind == "text":
        canonical = TextBlock(type="text", text=_text(block, "text", path))
    elif kind == "image":
        canonical, known = _image_from_wire(block, path), _IMAGE_KEYS
    key = _path(prefix, position)
    if canonical is None:
        replay.foreign[key] = dict(block)
        return
    into.append(canonical)
    extra = _block_extras(block, known)
    if extra:
        replay.extras[key] = extra


class _RequestReader:
    """Turns the messages of one recorded request into canonical messages."""

    def __init__(self, session_id: str, tool_ids: ToolIdMap, model: str) -> None:
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.created_at = datetime.now(UTC)
        self.context = import_context(
            provider=PROVIDER,
            session_id=session_id,
            model=model,
            tool_ids=tool_ids,
            created_at=self.created_at,
        )

    def _message(
        self, role: Role, content: list[ContentBlock], replay: _Replay, path: str, **metadata: Any
    ) -> Message:
        raw = replay.dump()
        provider_raw = {"adapter": PROVIDER, **raw} if raw else None
        if role == Role.assistant:
            return imported_assistant(
                self.context, provider=PROVIDER, content=content, provider_raw=provider_raw
            )
        if provider_raw is not None:
            metadata.update(provider=PROVIDER, provider_raw=provider_raw)
        return imported_message(
            self.session_id,
            role,
            content,
            provider=PROVIDER,
            path=path,
            created_at=self.created_at,
            metadata=metadata,
        )

    def system(self, value: Any, path: str) -> Message:
        replay = _Replay()
        content: list[ContentBlock] = []
        if isinstance(value, str):
            content.append(TextBlock(type="text", text=value))
        elif isinstance(value, list):
            for i, block in enumerate(value):
                if not isinstance(block, Mapping) or block.get("type") != "text":
                    raise WireFormatError(
                        "system blocks must be text blocks", provider=PROVIDER, path=f"{path}[{i}]"
                    )
                content.append(TextBlock(type="text", text=_text(block, "text", f"{path}[{i}]")))
                extra = _block_extras(block, _TEXT_KEYS)
                if extra:
                    replay.extras[str(i)] = extra
        else:
            raise WireFormatError(
                "system must be a string or a list of text blocks", provider=PROVIDER, path=path
            )
        return self._message(Role.system, content, replay, path)

    def turn(self, turn: Any, path: str) -> list[Message]:
        if not isinstance(turn, Mapping):
            raise WireFormatError("message must be an object", provider=PROVIDER, path=path)
        role, content = turn.get("role"), turn.get("content")
        if role == "system":
            return [self.system(content, f"{path}.content")]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise WireFormatError(
                "content must be a string or a list of blocks", provider=PROVIDER, path=f"{path}.content"
            )
        if role == "assistant":
            return [self._assistant(content, path)]
        if role == "user":
            return self._user(content, path)
        raise WireFormatError(f"unknown role {role!r}", provider=PROVIDER, path=f"{path}.role")

    def _assistant(self, content: list[Any], path: str) -> Message:
        replay = _Replay()
        blocks: list[ContentBlock] = []
        for j, block in enumerate(content):
            canonical = _assistant_block(
                block, j, tool_ids=self.tool_ids, replay=replay, where=f"{path}.content"
            )
            if canonical is not None:
                blocks.append(canonical)
        return self._finish(Role.assistant, blocks, replay, path)

    def _finish(self, role: Role, blocks: list[ContentBlock], replay: _Replay, path: str) -> Message:
        if not blocks:
            what = ", ".join(str(b.get("type")) for b in replay.foreign.values()) or "no blocks"
            raise WireFormatError(
                f"{role.value} turn has nothing metis can represent ({what})",
                provider=PROVIDER,
                path=f"{path}.content",
                hint="a canonical message needs at least one block",
            )
        message = self._message(role, blocks, replay, path)
        if replay.foreign:
            _warn_foreign(
                self.session_id,
                message.id,
                [str(b.get("type")) for b in replay.foreign.values()],
                f"imported {role.value} turn",
            )
        return message

    def _user(self, content: list[Any], path: str) -> list[Message]:
        """A user turn: one TOOL message per tool_result, in order, then a USER message of the rest."""
        results: list[tuple[Mapping[str, Any], str]] = []
        replay = _Replay()
        blocks: list[ContentBlock] = []
        for j, block in enumerate(content):
            where = f"{path}.content[{j}]"
            if not isinstance(block, Mapping):
                raise WireFormatError("content block must be an object", provider=PROVIDER, path=where)
            if block.get("type") == "tool_result":
                results.append((block, where))
            else:  # positions count in the USER message's own wire list, results excluded
                _user_block(block, j - len(results), into=blocks, replay=replay, path=where)
        if not results:
            return [self._finish(Role.user, blocks, replay, path)]
        # Foreign blocks with no text or image beside them ride on the last TOOL message,
        # right after its tool_result: where an export puts them back.
        trailing = {} if blocks else replay.foreign
        out = [
            self._tool_result(b, where, trailing if n == len(results) - 1 else {})
            for n, (b, where) in enumerate(results)
        ]
        if blocks:
            out.append(self._finish(Role.user, blocks, replay, path))
        return out

    def _tool_result(self, block: Mapping[str, Any], path: str, trailing: Mapping[str, Any]) -> Message:
        provider_id = _text(block, "tool_use_id", path)
        canonical_id = self.tool_ids.resolve_incoming(PROVIDER, provider_id)
        if canonical_id is None:
            raise WireFormatError(
                f"tool_result answers unknown tool_use id {provider_id!r}",
                provider=PROVIDER,
                path=f"{path}.tool_use_id",
                hint="each tool_result must answer a tool_use of an earlier assistant turn",
            )
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool):
            raise WireFormatError("is_error must be a boolean", provider=PROVIDER, path=f"{path}.is_error")
        replay = _Replay()
        extra = _block_extras(block, _TOOL_RESULT_KEYS)
        if extra:
            replay.extras["0"] = extra
        for key, foreign in trailing.items():
            replay.foreign[str(int(key) + 1)] = foreign
        inner: list[ContentBlock] = []
        raw_content = block.get("content")
        if isinstance(raw_content, str):
            raw_content = [{"type": "text", "text": raw_content}] if raw_content else []
        for k, item in enumerate(_list(raw_content, f"{path}.content")):
            where = f"{path}.content[{k}]"
            if not isinstance(item, Mapping):
                raise WireFormatError("content block must be an object", provider=PROVIDER, path=where)
            _user_block(item, k, into=inner, replay=replay, path=where, prefix="0/")
        result = ToolResultBlock(
            type="tool_result", tool_use_id=canonical_id, content=inner, is_error=is_error
        )
        message = self._message(Role.tool, [result], replay, path, parent_tool_use_id=canonical_id)
        if replay.foreign:
            _warn_foreign(
                self.session_id,
                message.id,
                [str(b.get("type")) for b in replay.foreign.values()],
                "imported tool_result",
            )
        return message


# --- streaming ------------------------------------------------------------------------------------


class _StreamDecoder(StreamDecoder):
    """Anthropic SSE -> canonical StreamEvents; block index = Anthropic's content index."""

    def __init__(self, context: RequestContext) -> None:
        self._context = context
        self._framer = SSEFramer()
        self._kinds: dict[int, str] = {}
        self._foreign_json: dict[int, list[str]] = {}
        self._replay = _Replay()
        self._meta: dict[str, Any] = {"id": None, "model": None, "stop_reason": None, "stop_sequence": None}
        self._started = False
        self._ended = False

    def feed(self, data: bytes | str) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for sse in self._framer.feed(data):
            out.extend(self._event(sse.event, sse.data))
        return out

    def close(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for sse in self._framer.close():  # complete events only: a cut one is discarded there
            out.extend(self._event(sse.event, sse.data))
        return out

    def provider_raw(self) -> dict[str, Any] | None:
        if not self._started:
            return None
        self._finish_foreign()
        return _response_raw(
            self._meta["id"],
            self._meta["model"],
            self._meta["stop_reason"],
            self._meta["stop_sequence"],
            self._replay,
        )

    def _event(self, name: str | None, data: str) -> list[StreamEvent]:
        if self._ended:
            return []
        try:
            payload = _json.loads(data)
        except _json.JSONDecodeError as exc:
            raise WireFormatError(
                f"stream event {name!r} is not JSON: {exc}", provider=PROVIDER, raw=data[:300]
            ) from exc
        if not isinstance(payload, dict):
            raise WireFormatError(
                f"stream event {name!r} is not a JSON object", provider=PROVIDER, raw=data[:300]
            )
        kind = payload.get("type", name)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            log.debug("ignored anthropic stream event %r", kind)
            return []
        try:
            return handler(self, payload)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(
                f"malformed {kind} event: {exc!r}", provider=PROVIDER, raw=data[:300]
            ) from exc

    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        message = payload["message"]
        self._started = True
        self._meta["id"], self._meta["model"] = message.get("id"), message.get("model")
        return _usage_event(message.get("usage"))

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index, block = int(payload["index"]), payload["content_block"]
        kind = block.get("type")
        self._kinds[index] = kind
        path = f"content_block_start[{index}]"
        if kind == "tool_use":
            canonical = self._context.tool_ids.register_incoming(PROVIDER, _text(block, "id", path))
            events: list[StreamEvent] = [
                ToolUseStartEvent(
                    index=index, id=canonical, name=_text(block, "name", path), provider_id=block["id"]
                )
            ]
            if block.get("input"):
                events.append(
                    ToolUseInputDeltaEvent(index=index, partial_json=_json.dumps(block["input"]).decode())
                )
            return events
        canonical_block = _assistant_block(
            block, index, tool_ids=self._context.tool_ids, replay=self._replay, where="content_block_start"
        )
        if canonical_block is None:  # kept whole in provider_raw; server tools stream their input too
            self._foreign_json[index] = []
            _warn_foreign(
                self._context.session_id, self._context.message_id, [str(kind)], "streamed response"
            )
            return []
        if isinstance(canonical_block, TextBlock):
            return [TextDeltaEvent(index=index, text=canonical_block.text)]
        if isinstance(canonical_block, ThinkingBlock):
            return [
                ThinkingDeltaEvent(
                    index=index, text=canonical_block.text, signature=canonical_block.signature
                )
            ]
        if isinstance(canonical_block, RedactedThinkingBlock):
            return [ThinkingDeltaEvent(index=index, redacted_data=canonical_block.data)]
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index, delta = int(payload["index"]), payload["delta"]
        kind = delta.get("type")
        if kind == "text_delta":
            return [TextDeltaEvent(index=index, text=delta["text"])]
        if kind == "input_json_delta":
            if index in self._foreign_json:
                self._foreign_json[index].append(delta["partial_json"])
                return []
            return [ToolUseInputDeltaEvent(index=index, partial_json=delta["partial_json"])]
        if kind == "thinking_delta":
            return [ThinkingDeltaEvent(index=index, text=delta["thinking"])]
        if kind == "signature_delta":
            return [ThinkingDeltaEvent(index=index, signature=delta["signature"])]
        if kind == "citations_delta":
            extras = self._replay.extras.setdefault(str(index), {})
            extras.setdefault("citations", []).append(delta["citation"])
            return []
        log.debug("ignored anthropic delta type %r", kind)
        return []

    def _block_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = int(payload["index"])
        if self._kinds.get(index) == "tool_use":
            return [ToolUseEndEvent(index=index)]
        return []

    def _message_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        delta = payload.get("delta") or {}
        for key in ("stop_reason", "stop_sequence"):
            if key in delta:
                self._meta[key] = delta[key]
        return _usage_event(payload.get("usage"))

    def _message_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        self._ended = True
        stop = self._meta["stop_reason"]
        return [
            MessageCompleteEvent(
                stop_reason=_stop_reason(stop),
                provider_stop_reason=stop if isinstance(stop, str) else None,
                response_id=self._meta["id"] if isinstance(self._meta["id"], str) else None,
                provider_model=self._meta["model"] if isinstance(self._meta["model"], str) else None,
            )
        ]

    def _error(self, payload: dict[str, Any]) -> list[StreamEvent]:
        self._ended = True
        error_type, message = _error_fields(payload)
        code = error_type or "error"
        return [ErrorEvent(code=code, message=message, retryable=_retryable(code, None), provider=PROVIDER)]

    def _finish_foreign(self) -> None:
        """Server-tool blocks stream their input as JSON deltas: fold it into the kept block."""
        for index, parts in self._foreign_json.items():
            text = "".join(parts)
            block = self._replay.foreign.get(str(index))
            if text.strip() and block is not None:
                try:
                    block["input"] = _json.loads(text)
                except _json.JSONDecodeError:
                    log.warning("streamed %s input at %d is not JSON; kept as sent", block.get("type"), index)
        self._foreign_json.clear()


def _usage_event(usage: Any) -> list[StreamEvent]:
    """A usage object -> a usage_update with only the counts it reports (the rest stay as they were)."""
    if not isinstance(usage, Mapping):
        return []
    counts = normalize_usage(PROVIDER, usage)
    present = {
        "input_tokens": ("input_tokens", counts.input_tokens),
        "output_tokens": ("output_tokens", counts.output_tokens),
        "cache_read_input_tokens": ("cached_input_tokens", counts.cached_input_tokens),
        "cache_creation_input_tokens": ("cache_creation_input_tokens", counts.cache_creation_input_tokens),
    }
    fields = {name: value for wire, (name, value) in present.items() if usage.get(wire) is not None}
    return [UsageUpdateEvent(**fields)] if fields else []


_HANDLERS = {
    "message_start": _StreamDecoder._message_start,
    "content_block_start": _StreamDecoder._block_start,
    "content_block_delta": _StreamDecoder._block_delta,
    "content_block_stop": _StreamDecoder._block_stop,
    "message_delta": _StreamDecoder._message_delta,
    "message_stop": _StreamDecoder._message_stop,
    "error": _StreamDecoder._error,
}
"""Stream event type -> handler; `ping` and unknown types are ignored."""


ADAPTER = AnthropicAdapter()

__all__ = ["ADAPTER", "API_VERSION", "STOP_REASONS", "AnthropicAdapter"]
