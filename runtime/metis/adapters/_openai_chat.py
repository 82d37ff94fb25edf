"""The OpenAI Chat Completions wire format, written once for every server that speaks it.

OpenAI, OpenRouter and the OpenAI-compatible servers (llama.cpp, vLLM, Ollama's `/v1`)
share one request, response and stream shape. What differs between them is a handful of
facts, kept as data in a `ChatDialect` row that each provider module declares; the mapping
below reads the row and has no per-provider branches of its own.

Conventions this module owns (spec §2.2.2 puts provider knobs in adapter options):

- `AdapterOptions.extra` is merged into the body last, except the reserved key `"metis"`,
  a dict of directives to this adapter that is never sent:
  - `system_role`: `"system"` (default) or `"developer"`, the role SYSTEM messages get;
  - `cache_breakpoints`: a list whose entries name a message id or `"tools"`, either as
    that string or as `{"at": <id or "tools">, "cache_control": {...}}`; the last content
    part of each named message (or the last tool definition) gets `cache_control`.
    Dialects without `cache_control` ignore them with a WARN. `from_wire_request` writes
    them back, so an imported request replays with its markers (always on the message's
    last part);
  - `cache_control`: the marker for string entries (default `{"type": "ephemeral"}`);
  - `empty_content`: what an assistant turn with tool calls and no text carries as
    `content`: `None` (default; OpenAI's own responses send `null`) or `""` for
    compatible servers that refuse `null` (llama-cpp-python's server). The client sets
    `""` whenever the base URL is not the provider's own.
- Tool-call `arguments`: the canonical serialization is compact JSON (orjson). When the
  provider's own string differs (whitespace, key escapes) or is blank, it is kept in
  `provider_raw["arguments"][<canonical id>]`; unparseable strings live in
  `provider_raw["unparsed_arguments"]` (as the assembler does). Either is replayed, to the
  same provider only, while it still parses to the block's input.
- Several text blocks in one ASSISTANT message are joined with a blank line: Chat
  Completions replies are one string, and not every compatible server accepts text parts.
- A refusal (`message.refusal`) becomes a TextBlock and stop reason `refusal`; it replays
  as ordinary assistant text (a request `refusal` without `content` is not valid).
- `ToolResultBlock.is_error` has no field on the wire: the result text carries the failure.
- A response's `function_call` beside `tool_calls` is a duplicate of the first call
  (llama-cpp-python sends both) and is ignored.
- The deprecated `function` role and `function_call` field have no tool call id to link a
  result to: importing them raises WireFormatError instead of guessing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

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
)
from pydantic import ValidationError

from .. import _json
from ..assembly import (
    RequestContext,
    finish_assistant,
    import_context,
    imported_assistant,
    imported_message,
    parse_tool_arguments,
)
from ..catalog import load_catalog
from ..errors import ProviderError, WireFormatError, retryable_status
from ..ids import ToolIdMap
from ..usage import normalize_usage, usage_event
from ..validation import pydantic_problems
from ._framing import SSEEvent, SSEFramer
from ._lossy import drop_block, import_drop
from ._shared import (
    data_url,
    function_tool,
    image_base64,
    import_model,
    imported_tool,
    own_raw,
    parse_data_url,
    url_image_media_type,
)
from ._shared import text_block as _text_block
from ._shared import thinking_block as _thinking_block
from ._shared import tool_use_block as _tool_use_block
from .base import Adapter, AdapterOptions, StreamDecoder, WireBody, WireImport

log = logging.getLogger("metis.adapters")

_T = TypeVar("_T")


@dataclass(frozen=True)
class ChatDialect:
    """What one Chat Completions server does differently; one row per provider module."""

    max_tokens_field: str
    """Request field for `AdapterOptions.max_tokens` (OpenAI deprecated `max_tokens`)."""
    reasoning_details: bool
    """Responses carry `reasoning_details` items that must go back unchanged (OpenRouter)."""
    reasoning_param: bool
    """`thinking_budget` is sent as `reasoning: {"max_tokens": N}` (OpenRouter)."""
    plain_reasoning_keys: tuple[str, ...]
    """Message/delta keys holding plain reasoning text, first present wins."""
    cache_control: bool
    """Anthropic-style `cache_control` markers inside content parts are understood."""
    stream_usage_option: bool
    """Streams report usage only when asked with `stream_options.include_usage` (OpenAI)."""


FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.end_turn,
    "tool_calls": StopReason.tool_use,
    "function_call": StopReason.tool_use,
    "length": StopReason.max_tokens,
    "content_filter": StopReason.content_filter,
    "error": StopReason.error,
}
"""Chat Completions `finish_reason` -> canonical stop reason; anything else is `other`."""

_SYSTEM_ROLES = ("system", "developer")
_USER, _TOOL = Role.user, Role.tool
_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_RETRYABLE_CODES = frozenset(
    {
        "rate_limit_exceeded",
        "rate_limit_error",
        "server_error",
        "overloaded_error",
        "service_unavailable",
        "timeout",
    }
)
_DIRECTIVES = "metis"
_DEFAULT_CACHE_CONTROL: dict[str, Any] = {"type": "ephemeral"}
_DETAIL_TEXT_KEYS = {"reasoning.text": "text", "reasoning.summary": "summary"}
"""reasoning_details item type -> the key holding its text."""
_TEXT_JOIN = "\n\n"
_IMAGE_TOKENS = 765  # OpenAI's price of one 1024x1024 high-detail image; a deliberate upper guess
_CHARS_PER_TOKEN = 4
_TOKENS_PER_MESSAGE = 4
_PRIMING_TOKENS = 3


_dumps = _json.dumps


def canonical_arguments(value: dict[str, Any]) -> str:
    """The arguments string metis writes for a tool input: compact JSON."""
    return _dumps(value).decode()


def raw_arguments_to_keep(raw: str) -> str | None:
    """The provider's arguments text when replay needs it verbatim (see module doc), else None.

    None for text that is exactly the canonical serialization and for text that is not a
    JSON object at all (that lives in `unparsed_arguments`).
    """
    if raw.strip() == "":
        return raw
    try:
        value = _json.loads(raw)
    except _json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    return None if canonical_arguments(value) == raw else raw


def _arguments_to_keep(raw: str, value: dict[str, Any]) -> str | None:
    """`raw_arguments_to_keep(raw)`, for text `parse_tool_arguments` read as `value`.

    The usual text is exactly the canonical serialization of its value: one `dumps` says
    so, without parsing the text a second time. Anything else takes the full check.
    """
    return None if canonical_arguments(value) == raw else raw_arguments_to_keep(raw)


def stop_reason(finish_reason: str | None, *, refused: bool) -> StopReason:
    """Canonical stop reason of a finish_reason (a refusal that ended normally is `refusal`)."""
    if refused and finish_reason in (None, "stop"):
        return StopReason.refusal
    if finish_reason is None:
        return StopReason.other
    return FINISH_REASONS.get(finish_reason, StopReason.other)


def _response_raw(adapter: str, meta: dict[str, Any]) -> dict[str, Any]:
    """provider_raw of a response: what replay or audit needs, None values left out."""
    return {"adapter": adapter, **{k: v for k, v in meta.items() if v is not None and v != {}}}


def _is_retryable(status: int | None, code: Any) -> bool:
    if isinstance(code, int) and not isinstance(code, bool):
        status = status or code
    if retryable_status(status):
        return True
    return isinstance(code, str) and code in _RETRYABLE_CODES


def error_fields(body: Any, status_code: int | None) -> tuple[str, str, bool, str | None]:
    """(error type, provider message, retryable, param) of an error body of either dialect.

    OpenAI: `{"error": {message, type, param, code: str}}`; OpenRouter:
    `{"error": {code: int, message, metadata: {provider_name, raw}}}` (metadata.raw, the
    upstream's own message, is kept in the message text).
    """
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = _json.loads(text)
        except _json.JSONDecodeError:
            return "http_error", text[:500], _is_retryable(status_code, None), None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        return "error", error, _is_retryable(status_code, None), None
    if not isinstance(error, dict):
        return "http_error", str(body)[:500], _is_retryable(status_code, None), None
    code = error.get("code")
    kind = error.get("type")
    error_type = kind if isinstance(kind, str) and kind else (str(code) if code is not None else "error")
    message = error.get("message")
    message = message if isinstance(message, str) else _json.dumps(message).decode()
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw") is not None:
        raw = metadata["raw"]
        upstream = metadata.get("provider_name") or "upstream"
        message = f"{message} [{upstream}: {raw if isinstance(raw, str) else _json.dumps(raw).decode()}]"
    retryable = _is_retryable(status_code, code) or _is_retryable(None, kind)
    param = error.get("param")
    return error_type, message, retryable, param if isinstance(param, str) else None


def _directives(options: AdapterOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metis directives, the rest of extra) from AdapterOptions.extra."""
    extra = dict(options.extra)
    directives = extra.pop(_DIRECTIVES, None) or {}
    if not isinstance(directives, dict):
        raise WireFormatError(
            "options.extra['metis'] must be a dict of adapter directives", path="extra.metis"
        )
    if directives.get("empty_content", None) not in (None, ""):
        raise WireFormatError(
            "empty_content must be None or an empty string", path="extra.metis.empty_content"
        )
    role = directives.get("system_role", "system")
    if role not in _SYSTEM_ROLES:
        raise WireFormatError(
            f"system_role must be 'system' or 'developer', not {role!r}", path="extra.metis.system_role"
        )
    return directives, extra


def _not_canonical(exc: ValidationError, *, provider: str, path: str) -> WireFormatError:
    """The WireFormatError for a canonical-model constructor's pydantic error."""
    return WireFormatError(
        f"cannot be read as canonical: {pydantic_problems(exc)[0]}", provider=provider, path=path
    )


def _checked(build: Callable[[], _T], *, provider: str, path: str) -> _T:
    """Run a canonical-model constructor, turning pydantic errors into WireFormatError."""
    try:
        return build()
    except ValidationError as exc:
        raise _not_canonical(exc, provider=provider, path=path) from None


def _want(value: Any, kind: type | tuple[type, ...], *, provider: str, path: str, what: str) -> Any:
    if not isinstance(value, kind):
        raise WireFormatError(f"{what}, got {type(value).__name__}", provider=provider, path=path)
    return value


# --- canonical -> wire ---------------------------------------------------------------------


class _Writer:
    """One `to_wire` call: the target model's capabilities and the session's id map.

    Runs once per message of the conversation, so the loop avoids repeated work: the
    per-call values (names, dialect flags, directives) are attributes set once. Tool ids
    go through `ToolIdMap.outgoing`, which answers an id it settled before in one lookup.
    """

    def __init__(
        self,
        adapter: ChatCompletionsAdapter,
        options: AdapterOptions,
        model_id: str,
        caps: AdapterCapabilities,
        *,
        system_role: str = "system",
        empty_content: str | None = None,
    ) -> None:
        self.name = adapter.name
        self.options = options
        self.model_id = model_id
        self.caps = caps
        self.system_role = system_role
        self.empty_content = empty_content
        self.reasoning_details = adapter.dialect.reasoning_details
        self._outgoing = options.tool_ids.outgoing
        # role -> writer of one message (None: nothing of it can go), built once per call;
        # Role hashes as its str value, so the lookup is a plain dict lookup.
        self.by_role: dict[str, Callable[[Message], dict[str, Any] | None]] = {
            Role.system: self.system_message,
            Role.user: self.user,
            Role.assistant: self.assistant,
            Role.tool: self.tool,
        }

    def wire_id(self, canonical: str) -> str:
        """The id `canonical` goes out as (see `ToolIdMap.outgoing`)."""
        return self._outgoing(canonical, self.name)

    def system_message(self, message: Message) -> dict[str, Any] | None:
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if not texts:
            return None  # an empty SYSTEM message is a composition placeholder (§5.1.2)
        return {"role": self.system_role, "content": _text_content(texts)}

    def user(self, message: Message) -> dict[str, Any] | None:
        content = message.content
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(content):
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
        # Without provider_raw there is nothing to replay (details, kept arguments).
        raw = own_raw(message, self.name) if message.metadata.provider_raw is not None else {}
        details = self.replayable_details(message, raw) if raw else None
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            # Exact types first: an isinstance test that fails costs an ABC check.
            if type(block) is TextBlock:
                texts.append(block.text)
            elif type(block) is ToolUseBlock:
                if raw:
                    calls.append(self.tool_call(block, raw))
                else:  # `tool_call` without kept arguments to replay, inline: every agent turn
                    function = {"name": block.name, "arguments": _dumps(block.input).decode()}
                    calls.append(
                        {"id": self._outgoing(block.id, self.name), "type": "function", "function": function}
                    )
            elif isinstance(block, TextBlock):
                texts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                calls.append(self.tool_call(block, raw))
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
        if not self.reasoning_details:
            return "Chat Completions cannot carry reasoning"
        source = message.metadata.model or message.metadata.provider or "another provider"
        return f"reasoning from {source} goes back only to the model that produced it, not {self.model_id}"

    def tool_call(self, block: ToolUseBlock, raw: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.wire_id(block.id),
            "type": "function",
            "function": {
                "name": block.name,
                # No provider_raw: no kept text to replay, the canonical serialization goes.
                "arguments": _replay_arguments(block, raw) if raw else _dumps(block.input).decode(),
            },
        }

    def tool(self, message: Message) -> dict[str, Any]:
        block = message.content[0] if message.content else None
        if not isinstance(block, ToolResultBlock):
            raise WireFormatError(
                "a TOOL message must hold one tool_result block", provider=self.name, message_id=message.id
            )
        parts = block.content
        texts: list[str] = []
        for part in parts:
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


# --- wire -> canonical ---------------------------------------------------------------------


@dataclass(slots=True)
class _AssistantRead:
    """Blocks of one wire assistant message, plus what its provider_raw must keep."""

    blocks: list[ContentBlock] = field(default_factory=list)
    arguments: dict[str, str] = field(default_factory=dict)
    unparsed: dict[str, str] = field(default_factory=dict)
    details: list[Any] | None = None
    refused: bool = False
    unsupported: list[Any] = field(default_factory=list)

    def raw(self) -> dict[str, Any]:
        """What provider_raw must keep (None: nothing), for `_response_raw`."""
        return {
            "arguments": self.arguments or None,
            "unparsed_arguments": self.unparsed or None,
            "reasoning_details": self.details,
            "unsupported_tool_calls": self.unsupported or None,
        }


class ChatCompletionsAdapter(Adapter):
    """Chat Completions (`POST {base}/chat/completions`, Bearer auth), read through `dialect`."""

    dialect: ClassVar[ChatDialect]

    # --- transport facts ------------------------------------------------------------

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/chat/completions`; the model travels in the body."""
        return base_url.rstrip("/") + "/chat/completions"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """`Authorization: Bearer <key>`; none for keyless local servers."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        """`{"error": {...}}` of either dialect -> ProviderError (429, 5xx, rate limits retryable)."""
        error_type, message, retryable, param = error_fields(body, status_code)
        return ProviderError(
            message,
            provider=self.name,
            error_type=error_type,
            status_code=status_code,
            retryable=retryable,
            body=body,
            path=param,
        )

    # --- canonical -> wire ----------------------------------------------------------

    def to_wire(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> a Chat Completions request body (see module doc for conventions)."""
        entry = load_catalog().resolve(options.model)
        directives, extra = _directives(options)
        writer = _Writer(
            self,
            options,
            entry.id,
            entry.capabilities,
            system_role=directives.get("system_role", "system"),
            empty_content=directives.get("empty_content"),
        )
        write = writer.by_role
        wire_messages: list[dict[str, Any]] = []
        # message id -> wire message, needed only to place cache breakpoints.
        by_id: dict[str, dict[str, Any]] | None = (
            {} if directives.get("cache_breakpoints") and self.dialect.cache_control else None
        )
        outgoing, name = options.tool_ids.outgoing, self.name
        for message in messages:
            # The two commonest messages are written here, as their writers would write them
            # (a USER turn of one text, a TOOL result of one text); every other goes to its writer.
            role, content = message.role, message.content
            if len(content) == 1:
                block = content[0]
                if role is _USER and type(block) is TextBlock:
                    out: dict[str, Any] | None = {"role": "user", "content": block.text}
                elif role is _TOOL and type(block) is ToolResultBlock and len(parts := block.content) == 1:
                    part = parts[0]
                    if type(part) is TextBlock:
                        out = {
                            "role": "tool",
                            "tool_call_id": outgoing(block.tool_use_id, name),
                            "content": part.text,
                        }
                    else:
                        out = write[role](message)
                else:
                    out = write[role](message)
            else:
                out = write[role](message)
            if out is not None:
                wire_messages.append(out)
                if by_id is not None:
                    by_id[message.id] = out
        body: dict[str, Any] = {"model": entry.wire_model, "messages": wire_messages}
        self._options_to_wire(body, tools, options)
        self._cache_markers(body, by_id or {}, directives)
        body.update(extra)
        return body

    def _options_to_wire(
        self, body: dict[str, Any], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> None:
        if options.max_tokens is not None:
            body[self.dialect.max_tokens_field] = options.max_tokens
        for key in ("temperature", "top_p", "stop"):
            value = getattr(options, key)
            if value is not None:
                body[key] = value
        if tools:
            body["tools"] = [function_tool(t) for t in tools]
        if options.tool_choice:
            choice = options.tool_choice
            body["tool_choice"] = (
                choice if choice in _TOOL_CHOICE_MODES else {"type": "function", "function": {"name": choice}}
            )
        if options.stream:
            body["stream"] = True
            if self.dialect.stream_usage_option:
                body["stream_options"] = {"include_usage": True}
        if options.thinking_budget is not None:
            if self.dialect.reasoning_param:
                body["reasoning"] = {"max_tokens": options.thinking_budget}
            else:
                log.warning(
                    "%s: thinking_budget has no Chat Completions field; not sent; use reasoning_effort",
                    self.name,
                    extra={"adapter": self.name, "session_id": options.session_id},
                )

    def _cache_markers(
        self, body: dict[str, Any], by_id: dict[str, dict[str, Any]], directives: dict[str, Any]
    ) -> None:
        points = directives.get("cache_breakpoints") or []
        if not points:
            return
        if not self.dialect.cache_control:
            log.warning(
                "%s: cache_breakpoints ignored; this API caches automatically",
                self.name,
                extra={"adapter": self.name},
            )
            return
        default = directives.get("cache_control") or _DEFAULT_CACHE_CONTROL
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
                    "%s: cache breakpoint %r names nothing that was sent",
                    self.name,
                    point,
                    extra={"adapter": self.name},
                )

    # --- wire response -> canonical -------------------------------------------------

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """`choices[0].message` -> one canonical ASSISTANT message (built by finish_assistant)."""
        # Shape checks are inline `isinstance` tests; `_want` is called only to raise.
        name = self.name
        if not isinstance(body, dict):
            raise WireFormatError("response body must be a JSON object", provider=name, path="")
        if body.get("error"):
            raise self.parse_error(body)
        choices = body.get("choices")
        if not isinstance(choices, list):
            _want(choices, list, provider=name, path="choices", what="choices must be a list")
        if not choices:
            raise WireFormatError("response has no choices", provider=name, path="choices")
        choice = choices[0]
        if not isinstance(choice, dict):
            _want(choice, dict, provider=name, path="choices[0]", what="a choice must be an object")
        message = choice.get("message")
        if not isinstance(message, dict):
            _want(message, dict, provider=name, path="choices[0].message", what="message must be an object")
        read = self._read_assistant(message, path="choices[0].message", context=context)
        finish = choice.get("finish_reason")
        finish = finish if isinstance(finish, str) else None
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else None
        raw = _response_raw(
            name,
            {
                "id": body.get("id"),
                "model": body.get("model"),
                "finish_reason": finish,
                "native_finish_reason": choice.get("native_finish_reason"),
                "system_fingerprint": body.get("system_fingerprint"),
                "provider": body.get("provider"),
                "reported_cost": usage.get("cost") if usage else None,
                **read.raw(),
            },
        )
        return finish_assistant(
            context,
            provider=name,
            content=read.blocks or [TextBlock(type="text", text="")],
            counts=normalize_usage(name, usage),
            stop_reason=stop_reason(finish, refused=read.refused),
            provider_raw=raw,
        )

    def _read_assistant(
        self, message: dict[str, Any], *, path: str, context: RequestContext
    ) -> _AssistantRead:
        """A wire assistant message (response or request history) -> canonical blocks."""
        read = _AssistantRead()
        calls = message.get("tool_calls")
        if message.get("function_call") and not calls:
            raise WireFormatError(
                "the deprecated function_call field has no tool call id to link its result to",
                provider=self.name,
                path=f"{path}.function_call",
                hint="use tool_calls",
            )
        self._read_reasoning(message, path, read)
        content = message.get("content")
        if isinstance(content, str):
            if content:
                read.blocks.append(_text_block(content))
        elif isinstance(content, list):
            for j, part in enumerate(content):
                self._read_assistant_part(part, f"{path}.content[{j}]", read)
        elif content is not None:
            raise WireFormatError(
                "content must be a string, a list of parts or null",
                provider=self.name,
                path=f"{path}.content",
            )
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:
            read.blocks.append(_text_block(refusal))
            read.refused = True
        if calls:
            if not isinstance(calls, list):
                _want(
                    calls,
                    list,
                    provider=self.name,
                    path=f"{path}.tool_calls",
                    what="tool_calls must be a list",
                )
            for k, call in enumerate(calls):
                self._read_tool_call(call, path, k, context, read)
        return read

    def _read_assistant_part(self, part: Any, path: str, read: _AssistantRead) -> None:
        _want(part, dict, provider=self.name, path=path, what="a content part must be an object")
        kind = part.get("type")
        key = {"text": "text", "refusal": "refusal"}.get(kind) if isinstance(kind, str) else None
        text = part.get(key) if key else None
        if not isinstance(text, str):
            log.warning(
                "%s: skipped assistant content part of type %r at %s",
                self.name,
                kind,
                path,
                extra={"adapter": self.name, "path": path},
            )
            read.unsupported.append(part)
            return
        read.blocks.append(_text_block(text))
        read.refused = read.refused or key == "refusal"

    def _read_reasoning(self, message: dict[str, Any], path: str, read: _AssistantRead) -> None:
        if self.dialect.reasoning_details:
            details = message.get("reasoning_details")
            if details:
                if not isinstance(details, list):
                    _want(
                        details,
                        list,
                        provider=self.name,
                        path=f"{path}.reasoning_details",
                        what="reasoning_details must be a list",
                    )
                for j, item in enumerate(details):
                    block = self._detail_block(item, f"{path}.reasoning_details", j)
                    if block is not None:
                        read.blocks.append(block)
                read.details = details
                return
        for key in self.dialect.plain_reasoning_keys:
            text = message.get(key)
            if isinstance(text, str) and text:
                read.blocks.append(_thinking_block({"type": "thinking", "text": text}))
                return

    def _detail_block(self, item: Any, where: str, j: int) -> ContentBlock | None:
        """reasoning_details item `j` (of the list at `where`) -> ThinkingBlock /
        RedactedThinkingBlock (None: kept raw only). Its path is built only when needed."""
        if not isinstance(item, dict):
            _want(
                item,
                dict,
                provider=self.name,
                path=f"{where}[{j}]",
                what="a reasoning_details item must be an object",
            )
        kind = item.get("type")
        if kind == "reasoning.encrypted" and isinstance(item.get("data"), str) and item["data"]:
            return RedactedThinkingBlock(type="redacted_thinking", data=item["data"])
        key = _DETAIL_TEXT_KEYS.get(kind) if isinstance(kind, str) else None
        if key is None:
            log.warning(
                "%s: reasoning_details item of type %r has no canonical block; kept in provider_raw",
                self.name,
                kind,
                extra={"adapter": self.name, "path": f"{where}[{j}]"},
            )
            return None
        text = item.get(key) or ""
        signature = item.get("signature") or None
        if not isinstance(text, str):
            _want(text, str, provider=self.name, path=f"{where}[{j}].{key}", what=f"{key} must be a string")
        if signature is not None and not isinstance(signature, str):
            _want(
                signature,
                str,
                provider=self.name,
                path=f"{where}[{j}].signature",
                what="signature must be a string",
            )
        return _thinking_block({"type": "thinking", "text": text, "signature": signature})

    def _read_tool_call(
        self, call: Any, message_path: str, k: int, context: RequestContext, read: _AssistantRead
    ) -> None:
        """Tool call `k` of the message at `message_path` (its own path is built only for errors)."""
        provider = self.name
        if not isinstance(call, dict):
            _want(
                call,
                dict,
                provider=provider,
                path=f"{message_path}.tool_calls[{k}]",
                what="a tool call must be an object",
            )
        if call.get("type", "function") != "function":
            path = f"{message_path}.tool_calls[{k}]"
            log.warning(
                "%s: tool call of type %r has no canonical form; kept in provider_raw",
                provider,
                call.get("type"),
                extra={"adapter": provider, "path": path},
            )
            read.unsupported.append(call)
            return
        function = call.get("function")
        if not isinstance(function, dict):
            _want(
                function,
                dict,
                provider=provider,
                path=f"{message_path}.tool_calls[{k}].function",
                what="function must be an object",
            )
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise WireFormatError(
                "tool call has no function name",
                provider=provider,
                path=f"{message_path}.tool_calls[{k}].function.name",
            )
        provider_id = call.get("id")
        if provider_id is not None and not isinstance(provider_id, str):
            _want(
                provider_id,
                str,
                provider=provider,
                path=f"{message_path}.tool_calls[{k}].id",
                what="id must be a string",
            )
        canonical = context.tool_ids.register_incoming(provider, provider_id or None)
        arguments = function.get("arguments", "")
        if isinstance(arguments, dict):
            value = arguments  # some compatible servers send an object
        elif isinstance(arguments, str):
            value, unparsed = parse_tool_arguments(arguments, context=context, tool_id=canonical, name=name)
            if unparsed is not None:
                read.unparsed[canonical] = unparsed
            elif (kept := _arguments_to_keep(arguments, value)) is not None:
                read.arguments[canonical] = kept
        else:
            raise WireFormatError(
                "arguments must be a JSON string",
                provider=provider,
                path=f"{message_path}.tool_calls[{k}].function.arguments",
            )
        try:
            block = _tool_use_block(canonical, name, value)
        except ValidationError as exc:
            raise _not_canonical(exc, provider=provider, path=f"{message_path}.tool_calls[{k}]") from None
        read.blocks.append(block)

    # --- streaming ------------------------------------------------------------------

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """SSE `data:` chunks (`[DONE]`-terminated) -> canonical events; see `ChatStreamDecoder`."""
        return ChatStreamDecoder(self, context)

    # --- recorded request -> canonical ----------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded Chat Completions request -> canonical messages, tools and options.

        Top-level fields with no canonical option go to `options.extra` (so they replay);
        parts and fields metis cannot hold are dropped with a WARN and listed in
        `WireImport.dropped` with their path and value.
        """
        return _RequestReader(self, session_id, tool_ids).read(body)

    # --- estimates ------------------------------------------------------------------

    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """Pre-flight estimate: ceil(characters / 4) over what would be sent, plus overheads.

        Counted: text of system, user, assistant and tool-result blocks; tool names and
        compact JSON inputs; the JSON of the tool definitions; reasoning text only where
        the dialect replays it. Each message adds 4 tokens (role and framing), the reply
        primer 3, each image 765 (OpenAI's price of a 1024x1024 high-detail image: an upper
        guess, since sizes are unknown here). The measured error against the usage of the
        recorded-shape fixtures is asserted in tests/test_openai_adapter.py.
        """
        chars = sum(len(_json.dumps(function_tool(t))) for t in tools)
        images = 0
        for message in messages:
            for block in message.content:
                inner = block.content if isinstance(block, ToolResultBlock) else [block]
                for part in inner:
                    chars += self._estimate_chars(part)
                    images += isinstance(part, ImageBlock)
        text_tokens = math.ceil(chars / _CHARS_PER_TOKEN)
        return text_tokens + images * _IMAGE_TOKENS + _TOKENS_PER_MESSAGE * len(messages) + _PRIMING_TOKENS

    def _estimate_chars(self, block: ContentBlock) -> int:
        if isinstance(block, TextBlock):
            return len(block.text)
        if isinstance(block, ToolUseBlock):
            return len(block.name) + len(canonical_arguments(block.input))
        if isinstance(block, ThinkingBlock) and self.dialect.reasoning_details:
            return len(block.text)
        return 0


# --- streaming -----------------------------------------------------------------------------


@dataclass
class _StreamTool:
    """One streamed tool call, keyed by its wire `index` (and its id, for servers that reuse 0)."""

    block: int
    provider_id: str | None = None
    name: str = ""
    canonical: str | None = None
    arguments: list[str] = field(default_factory=list)
    ended: bool = False


class ChatStreamDecoder(StreamDecoder):
    """Chat Completions SSE -> canonical StreamEvents.

    Canonical block indices are given in order of first appearance: plain or detailed
    reasoning, text (never for the empty `content: ""` servers repeat), refusal text, tool
    calls (by wire `index`; a new id at a used index is a new call). A tool call starts
    once its name is known, buffered argument fragments follow, and it ends at
    `finish_reason`. `message_complete` waits for `[DONE]` (or the end of the body) so the
    usage chunk comes first and an `error` chunk after `finish_reason` still ends the
    stream as ERROR; a second `finish_reason` is not a second finish. Unknown keys (e.g.
    `obfuscation`) are ignored; SSE comments (`: OPENROUTER PROCESSING`) never reach here.
    """

    def __init__(self, adapter: ChatCompletionsAdapter, context: RequestContext) -> None:
        self.name = adapter.name
        self.dialect = adapter.dialect
        self.context = context
        self._framer = SSEFramer()
        self._next_block = 0
        self._text: int | None = None
        self._refusal: int | None = None
        self._plain_reasoning: int | None = None
        self._details: dict[int, dict[str, Any]] = {}
        self._detail_blocks: dict[int, int] = {}
        self._tools: dict[int, _StreamTool] = {}
        self._tool_order: list[_StreamTool] = []
        self._finish: str | None = None
        self._refused = False
        self._stopped = False
        self._meta: dict[str, Any] = {}

    # --- StreamDecoder --------------------------------------------------------------

    def feed(self, data: bytes | str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for sse in self._framer.feed(data):
            events.extend(self._sse(sse))
        return events

    def close(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for sse in self._framer.close():
            events.extend(self._sse(sse))
        events.extend(self._complete())
        return events

    def provider_raw(self) -> dict[str, Any] | None:
        arguments = {}
        for tool in self._tool_order:
            if tool.canonical is not None:
                kept = raw_arguments_to_keep("".join(tool.arguments))
                if kept is not None:
                    arguments[tool.canonical] = kept
        details = [self._details[i] for i in sorted(self._details, key=self._detail_blocks.__getitem__)]
        meta = {
            **self._meta,
            "finish_reason": self._finish,
            "arguments": arguments or None,
            "reasoning_details": details or None,
        }
        return _response_raw(self.name, meta)

    # --- chunks ---------------------------------------------------------------------

    def _sse(self, sse: SSEEvent) -> list[StreamEvent]:
        if self._stopped:
            return []
        data = sse.data.strip()
        if data == "[DONE]":
            return self._complete()
        if not data:
            return []
        try:
            chunk = _json.loads(data)
        except _json.JSONDecodeError as exc:
            raise WireFormatError(
                f"stream chunk is not JSON: {exc}", provider=self.name, path="stream", raw=data[:500]
            ) from None
        if not isinstance(chunk, dict):
            raise WireFormatError(
                "stream chunk must be a JSON object", provider=self.name, path="stream", raw=data[:500]
            )
        if chunk.get("error") or sse.event == "error":
            return self._error(chunk)
        return self._chunk(chunk)

    def _error(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        self._stopped = True
        error_type, message, retryable, _ = error_fields(
            chunk if chunk.get("error") else {"error": chunk}, None
        )
        return [
            ErrorEvent(
                type="error", code=error_type, message=message, retryable=retryable, provider=self.name
            )
        ]

    def _chunk(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        for key in ("id", "model", "system_fingerprint", "provider"):
            if chunk.get(key) is not None:
                self._meta.setdefault(key, chunk[key])
        events: list[StreamEvent] = []
        choices = chunk.get("choices") or []
        _want(choices, list, provider=self.name, path="stream.choices", what="choices must be a list")
        for choice in choices:
            _want(
                choice, dict, provider=self.name, path="stream.choices[]", what="a choice must be an object"
            )
            if choice.get("index", 0) == 0:
                events.extend(self._choice(choice))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            counts = normalize_usage(self.name, usage)
            if usage.get("cost") is not None:
                self._meta["reported_cost"] = usage["cost"]
            events.append(usage_event(counts))
        return events

    def _choice(self, choice: dict[str, Any]) -> list[StreamEvent]:
        delta = choice.get("delta") or {}
        _want(delta, dict, provider=self.name, path="stream.choices[0].delta", what="delta must be an object")
        events = self._reasoning(delta)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._text = self._new_block() if self._text is None else self._text
            events.append(TextDeltaEvent(type="text_delta", index=self._text, text=content))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refusal = self._new_block() if self._refusal is None else self._refusal
            self._refused = True
            events.append(TextDeltaEvent(type="text_delta", index=self._refusal, text=refusal))
        calls = delta.get("tool_calls") or []
        _want(
            calls, list, provider=self.name, path="stream.delta.tool_calls", what="tool_calls must be a list"
        )
        for position, call in enumerate(calls):
            events.extend(self._tool_fragment(call, position))
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            if self._finish is None:
                self._finish = finish
            native = choice.get("native_finish_reason")
            if native is not None:
                self._meta.setdefault("native_finish_reason", native)
            events.extend(self._end_tools())
        return events

    def _new_block(self) -> int:
        index = self._next_block
        self._next_block += 1
        return index

    # --- reasoning ------------------------------------------------------------------

    def _reasoning(self, delta: dict[str, Any]) -> list[StreamEvent]:
        if self.dialect.reasoning_details and delta.get("reasoning_details"):
            details = _want(
                delta["reasoning_details"],
                list,
                provider=self.name,
                path="stream.delta.reasoning_details",
                what="reasoning_details must be a list",
            )
            return [e for item in details for e in self._detail_fragment(item)]
        for key in self.dialect.plain_reasoning_keys:
            text = delta.get(key)
            if isinstance(text, str) and text:
                if self._plain_reasoning is None:
                    self._plain_reasoning = self._new_block()
                return [ThinkingDeltaEvent(type="thinking_delta", index=self._plain_reasoning, text=text)]
        return []

    def _detail_fragment(self, item: Any) -> list[StreamEvent]:
        """Merge one reasoning_details fragment by its `index` (text concatenated, signature later)."""
        _want(
            item,
            dict,
            provider=self.name,
            path="stream.delta.reasoning_details[]",
            what="a reasoning_details item must be an object",
        )
        index = item.get("index", 0)
        _want(
            index,
            int,
            provider=self.name,
            path="stream.delta.reasoning_details[].index",
            what="index must be an int",
        )
        merged = self._details.get(index)
        first = merged is None
        if merged is None:
            merged = self._details[index] = dict(item)
            self._detail_blocks[index] = self._new_block()
        else:
            for key, value in item.items():
                if key in ("text", "summary", "data") and isinstance(value, str):
                    merged[key] = (merged.get(key) or "") + value
                elif value is not None:
                    merged[key] = value
        block = self._detail_blocks[index]
        kind = merged.get("type")
        if kind == "reasoning.encrypted":
            data = item.get("data")
            if isinstance(data, str) and data:
                return [ThinkingDeltaEvent(type="thinking_delta", index=block, redacted_data=data)]
            return []
        if kind not in ("reasoning.text", "reasoning.summary"):
            return []
        text = item.get("text" if kind == "reasoning.text" else "summary")
        signature = item.get("signature")
        text = text if isinstance(text, str) and text else None
        signature = signature if isinstance(signature, str) and signature else None
        if text is None and signature is None and not first:
            return []
        return [
            ThinkingDeltaEvent(
                type="thinking_delta", index=block, text=text or ("" if first else None), signature=signature
            )
        ]

    # --- tool calls -----------------------------------------------------------------

    def _tool_fragment(self, call: Any, position: int) -> list[StreamEvent]:
        _want(
            call,
            dict,
            provider=self.name,
            path="stream.delta.tool_calls[]",
            what="a tool call must be an object",
        )
        index = call.get("index", position)
        provider_id = call.get("id") or None
        function = call.get("function") or {}
        _want(
            function,
            dict,
            provider=self.name,
            path="stream.delta.tool_calls[].function",
            what="function must be an object",
        )
        tool = self._tools.get(index)
        if tool is None or (provider_id and tool.provider_id and provider_id != tool.provider_id):
            tool = self._tools[index] = _StreamTool(block=self._new_block())
            self._tool_order.append(tool)
        events: list[StreamEvent] = []
        if provider_id and tool.provider_id is None:
            tool.provider_id = provider_id
            if tool.canonical is not None:
                self.context.tool_ids.bind(tool.canonical, self.name, provider_id)
        name = function.get("name")
        if isinstance(name, str) and name and tool.canonical is None:
            tool.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = canonical_arguments(arguments)
        if isinstance(arguments, str) and arguments:
            tool.arguments.append(arguments)
            if tool.canonical is not None:
                events.append(
                    ToolUseInputDeltaEvent(
                        type="tool_use_input_delta", index=tool.block, partial_json=arguments
                    )
                )
        if tool.canonical is None and tool.name:
            events.extend(self._start(tool))
        return events

    def _start(self, tool: _StreamTool) -> list[StreamEvent]:
        tool.canonical = self.context.tool_ids.register_incoming(self.name, tool.provider_id)
        events: list[StreamEvent] = [
            ToolUseStartEvent(
                type="tool_use_start",
                index=tool.block,
                id=tool.canonical,
                name=tool.name,
                provider_id=tool.provider_id,
            )
        ]
        if tool.arguments:
            events.append(
                ToolUseInputDeltaEvent(
                    type="tool_use_input_delta", index=tool.block, partial_json="".join(tool.arguments)
                )
            )
        return events

    def _end_tools(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for tool in self._tool_order:
            if tool.ended:
                continue
            tool.ended = True
            if tool.canonical is None:
                log.warning(
                    "%s: streamed tool call without a name dropped",
                    self.name,
                    extra={"adapter": self.name, "session_id": self.context.session_id},
                )
                continue
            events.append(ToolUseEndEvent(type="tool_use_end", index=tool.block))
        return events

    def _complete(self) -> list[StreamEvent]:
        if self._stopped or self._finish is None:
            return []  # already over, or cut before finish_reason: the assembler says CANCELLED
        self._stopped = True
        events = self._end_tools()
        if self._next_block == 0:
            events.append(TextDeltaEvent(type="text_delta", index=self._new_block(), text=""))
        events.append(
            MessageCompleteEvent(
                type="message_complete",
                stop_reason=stop_reason(self._finish, refused=self._refused),
                provider_stop_reason=self._meta.get("native_finish_reason") or self._finish,
                response_id=self._meta.get("id"),
                provider_model=self._meta.get("model"),
            )
        )
        return events


# --- recorded request -> canonical ------------------------------------------------------------


class _RequestReader:
    """One `from_wire_request` call: messages in order, with what could not be kept listed."""

    def __init__(self, adapter: ChatCompletionsAdapter, session_id: str, tool_ids: ToolIdMap) -> None:
        self.adapter = adapter
        self.name = adapter.name
        self.session_id = session_id
        self.tool_ids = tool_ids
        self.dropped: list[dict[str, Any]] = []
        self.breakpoints: dict[str, Any] = {}
        self.system_roles: list[str] = []
        self.model_id = ""
        self.context: RequestContext | None = None

    def read(self, body: WireBody) -> WireImport:
        _want(body, dict, provider=self.name, path="", what="request body must be a JSON object")
        self.model_id = import_model(body, self.name)
        self.context = import_context(
            provider=self.name, session_id=self.session_id, model=self.model_id, tool_ids=self.tool_ids
        )
        wire_messages = _want(
            body.get("messages"), list, provider=self.name, path="messages", what="messages must be a list"
        )
        messages = [
            m for i, w in enumerate(wire_messages) if (m := self.message(w, f"messages[{i}]")) is not None
        ]
        tools = self.tools(body.get("tools"))
        options = self.options(body)
        return WireImport(messages=messages, tools=tools, options=options, dropped=self.dropped)

    # --- options --------------------------------------------------------------------

    def options(self, body: dict[str, Any]) -> AdapterOptions:
        dialect = self.adapter.dialect
        options = AdapterOptions(model=self.model_id, session_id=self.session_id, tool_ids=self.tool_ids)
        extra: dict[str, Any] = {}
        for key, value in body.items():
            if key in ("model", "messages", "tools"):
                continue
            if key == dialect.max_tokens_field and type(value) is int:  # not bool
                options.max_tokens = value
            elif (
                key in ("temperature", "top_p")
                and isinstance(value, int | float)
                and not isinstance(value, bool)
            ):
                setattr(options, key, value)
            elif key == "stop" and isinstance(value, list) and all(isinstance(s, str) for s in value):
                options.stop = list(value)
            elif key == "stream" and value is True:
                options.stream = True
            elif (
                key == "stream_options"
                and dialect.stream_usage_option
                and value == {"include_usage": True}
                and body.get("stream") is True
            ):
                continue
            elif key == "tool_choice" and (choice := self.tool_choice(value)) is not None:
                options.tool_choice = choice
            elif key == "reasoning" and dialect.reasoning_param and _is_budget(value):
                options.thinking_budget = value["max_tokens"]
            else:
                extra[key] = value
        directives = self.directives()
        if directives:
            extra["metis"] = directives
        options.extra = extra
        return options

    @staticmethod
    def tool_choice(value: Any) -> str | None:
        if isinstance(value, str) and value in _TOOL_CHOICE_MODES:
            return value
        if isinstance(value, dict) and value.get("type") == "function" and set(value) == {"type", "function"}:
            function = value["function"]
            if isinstance(function, dict) and set(function) == {"name"} and isinstance(function["name"], str):
                name: str = function["name"]
                return name if name not in _TOOL_CHOICE_MODES else None
        return None

    def directives(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.system_roles and self.system_roles[0] == "developer":
            out["system_role"] = "developer"
        if len(set(self.system_roles)) > 1:
            log.warning(
                "%s: request mixes system and developer roles; all replay as %s",
                self.name,
                self.system_roles[0],
                extra={"adapter": self.name},
            )
        if self.breakpoints:
            out["cache_breakpoints"] = [
                point if control == _DEFAULT_CACHE_CONTROL else {"at": point, "cache_control": control}
                for point, control in self.breakpoints.items()
            ]
        return out

    # --- tools ----------------------------------------------------------------------

    def tools(self, wire: Any) -> list[ToolDefinition]:
        if wire is None:
            return []
        _want(wire, list, provider=self.name, path="tools", what="tools must be a list")
        out: list[ToolDefinition] = []
        for i, tool in enumerate(wire):
            path = f"tools[{i}]"
            _want(tool, dict, provider=self.name, path=path, what="a tool must be an object")
            if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
                self.drop(path, tool, "only function tools have a canonical form")
                continue
            fn = tool["function"]
            out.append(
                imported_tool(
                    fn.get("name"),
                    fn.get("description"),
                    fn.get("parameters"),
                    provider=self.name,
                    path=f"{path}.function",
                )
            )
            self.note_cache(tool, "tools", path)
            for key in set(fn) - {"name", "description", "parameters"}:
                self.drop(f"{path}.function.{key}", fn[key], "no canonical place for this tool field")
        return out

    # --- messages -------------------------------------------------------------------

    def message(self, wire: Any, path: str) -> Message | None:
        _want(wire, dict, provider=self.name, path=path, what="a message must be an object")
        role = wire.get("role")
        if role == "function":
            raise WireFormatError(
                "the deprecated function role has no tool_call_id to link it to a tool call",
                provider=self.name,
                path=f"{path}.role",
                hint="use tool_calls and role tool",
            )
        reader = {
            "system": self.system,
            "developer": self.system,
            "user": self.user,
            "assistant": self.assistant,
            "tool": self.tool,
        }.get(role if isinstance(role, str) else "")
        if reader is None:
            raise WireFormatError(f"unknown role {role!r}", provider=self.name, path=f"{path}.role")
        if isinstance(wire.get("name"), str):
            self.drop(f"{path}.name", wire["name"], "participant names have no canonical place")
        return reader(wire, path)

    def new(self, role: Role, content: list[ContentBlock], path: str, **metadata: Any) -> Message:
        return imported_message(
            self.session_id,
            role,
            content,
            provider=self.name,
            path=path,
            created_at=datetime.now(UTC),
            metadata=metadata,
        )

    def system(self, wire: dict[str, Any], path: str) -> Message:
        self.system_roles.append(wire["role"])
        blocks = self.parts(wire, path, allow_images=False)
        message = self.new(Role.system, blocks, path)
        self.note_message_cache(wire, message, path)
        return message

    def user(self, wire: dict[str, Any], path: str) -> Message | None:
        blocks = self.parts(wire, path, allow_images=True)
        if not blocks:
            return None  # every part was dropped (and listed)
        message = self.new(Role.user, blocks, path)
        self.note_message_cache(wire, message, path)
        return message

    def tool(self, wire: dict[str, Any], path: str) -> Message:
        provider_id = wire.get("tool_call_id")
        if not isinstance(provider_id, str) or not provider_id:
            raise WireFormatError(
                "tool message has no tool_call_id", provider=self.name, path=f"{path}.tool_call_id"
            )
        canonical = self.tool_ids.resolve_incoming(self.name, provider_id)
        if canonical is None:
            raise WireFormatError(
                f"tool_call_id {provider_id!r} answers no earlier tool call",
                provider=self.name,
                path=f"{path}.tool_call_id",
            )
        blocks = self.parts(wire, path, allow_images=False)
        result = ToolResultBlock(type="tool_result", tool_use_id=canonical, content=blocks)
        message = self.new(Role.tool, [result], path, parent_tool_use_id=canonical)
        self.note_message_cache(wire, message, path)
        return message

    def assistant(self, wire: dict[str, Any], path: str) -> Message:
        assert self.context is not None
        dialect = self.adapter.dialect
        known = {"role", "content", "refusal", "tool_calls", "name", *dialect.plain_reasoning_keys}
        if dialect.reasoning_details:
            known.add("reasoning_details")
        for key in sorted(set(wire) - known):
            if wire[key] is not None and key != "function_call":
                self.drop(f"{path}.{key}", wire[key], "no canonical place for this assistant field")
        read = self.adapter._read_assistant(wire, path=path, context=self.context)
        for part in read.unsupported:
            self.drop(path, part, "no canonical form")
        read.unsupported = []
        raw = _response_raw(self.name, read.raw())
        message = imported_assistant(
            self.context,
            provider=self.name,
            content=read.blocks or [TextBlock(type="text", text="")],
            provider_raw=raw if len(raw) > 1 else None,
        )
        self.note_message_cache(wire, message, path)
        return message

    def parts(self, wire: dict[str, Any], path: str, *, allow_images: bool) -> list[ContentBlock]:
        """`content` as a string or parts -> text (and image) blocks; other parts dropped and listed."""
        content = wire.get("content")
        if isinstance(content, str):
            return [TextBlock(type="text", text=content)]
        if content is None:
            return []
        _want(
            content,
            list,
            provider=self.name,
            path=f"{path}.content",
            what="content must be a string or a list",
        )
        blocks: list[ContentBlock] = []
        for j, part in enumerate(content):
            part_path = f"{path}.content[{j}]"
            _want(part, dict, provider=self.name, path=part_path, what="a content part must be an object")
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(TextBlock(type="text", text=part["text"]))
            elif kind == "image_url" and allow_images:
                blocks.append(self.image(part, part_path))
            else:
                self.drop(part_path, part, f"content part of type {kind!r} has no canonical form here")
        return blocks

    def image(self, part: dict[str, Any], path: str) -> ImageBlock:
        image_url = part.get("image_url")
        url = image_url.get("url") if isinstance(image_url, dict) else image_url
        if not isinstance(url, str) or not url:
            raise WireFormatError("image_url has no url", provider=self.name, path=f"{path}.image_url.url")
        if isinstance(image_url, dict):
            for key in set(image_url) - {"url"}:
                self.drop(
                    f"{path}.image_url.{key}", image_url[key], "no canonical place for this image field"
                )
        try:
            parsed = parse_data_url(url)
        except WireFormatError as exc:
            raise WireFormatError(exc.message, provider=self.name, path=f"{path}.image_url.url") from None
        if parsed is not None:
            media_type, data = parsed
            source = ImageSource(kind=ImageSourceKind.base64, data=data)
        else:
            media_type = url_image_media_type(url)
            source = ImageSource(kind=ImageSourceKind.url, data=url)
        return _checked(
            lambda: ImageBlock(type="image", source=source, media_type=media_type),
            provider=self.name,
            path=path,
        )

    # --- cache markers and drops ----------------------------------------------------

    def note_message_cache(self, wire: dict[str, Any], message: Message, path: str) -> None:
        content = wire.get("content")
        if isinstance(content, list):
            for j, part in enumerate(content):
                if isinstance(part, dict):
                    self.note_cache(part, message.id, f"{path}.content[{j}]")

    def note_cache(self, holder: dict[str, Any], point: str, path: str) -> None:
        control = holder.get("cache_control")
        if control is None:
            return
        if not self.adapter.dialect.cache_control:
            self.drop(f"{path}.cache_control", control, "this API has no cache_control")
            return
        self.breakpoints.setdefault(point, control)

    def drop(self, path: str, value: Any, reason: str) -> None:
        import_drop(
            self.dropped, adapter=self.name, session_id=self.session_id, path=path, value=value, reason=reason
        )


def _is_budget(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"max_tokens"}
        and isinstance(value["max_tokens"], int)
        and not isinstance(value["max_tokens"], bool)
    )


__all__ = [
    "FINISH_REASONS",
    "ChatCompletionsAdapter",
    "ChatDialect",
    "ChatStreamDecoder",
    "canonical_arguments",
    "error_fields",
    "raw_arguments_to_keep",
    "stop_reason",
]
