"""Building canonical ASSISTANT messages, from a whole response or from stream events.

`finish_assistant` is the one place an assistant Message is put together (id, time,
model, provider, routing, usage with local cost, status, stop reason, provider_raw), so a
response parsed whole and the same response streamed and assembled give equal Messages.
`StreamAssembler` folds canonical StreamEvents into that Message: PARTIAL snapshots while
running, COMPLETE at `message_complete`, ERROR or CANCELLED when the stream stops early,
never losing what arrived.

**A cut stream never looks finished and free.** A reply is COMPLETE only when the provider
said it ended (`message_complete`); without that it is CANCELLED (or ERROR). When the end
arrived but the usage never did (a Chat Completions stream cut between the finish_reason
chunk and the usage chunk, or a server that ignores `stream_options.include_usage`), the
reply stays COMPLETE, because its content is whole and replaying it is right, but its
usage is an estimate, never zero: input tokens from the request's pre-flight estimate
(`RequestContext.estimated_input_tokens`, which the client fills), output tokens from the
text that arrived (CHARS_PER_TOKEN), cost priced from those, and
`provider_raw["usage_estimated"] = true` says so. (Schema v1 has no field for it; the
flag belongs in `Usage` in a later schema version.) CANCELLED would have hidden a whole
answer from replay and still said nothing about its cost.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import (
    BlockEvent,
    ContentBlock,
    ErrorEvent,
    Message,
    MessageCompleteEvent,
    MessageMetadata,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolUseBlock,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    UsageUpdateEvent,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

from . import _json
from .canonical import CONTENT_LIST
from .catalog import load_catalog
from .errors import MetisError, WireFormatError
from .events import EventSink, emit
from .ids import ToolIdMap, new_message_id
from .invariants import BLOCK_CLASSES, check_message
from .pricing import make_usage
from .tools import ToolRegistry
from .usage import TokenCounts, content_units, merge_event
from .validation import pydantic_problems

log = logging.getLogger("metis.assembly")

CHARS_PER_TOKEN = 4
"""Characters per token when usage must be estimated from text: the rule of thumb the
adapters' own estimators use for English prose and JSON."""


MAX_PROVIDER_RAW_DEPTH = 100
"""Deepest nesting kept in provider_raw by default. The message around it adds a few
levels, and the persistence serializer refuses past its own limit (about 250) with an
untyped error at store time; a provider's own JSON is nowhere near this deep."""

MAX_VALUE_DEPTH = 100
"""Deepest nesting of the JSON values blocks carry (tool and server-tool inputs, a server
tool result's provider_data), where a reply or an import makes them. The message around a
value adds a few levels, orjson writes at most 254 and pydantic-core's serializer refuses
past its own limit, so a deeper value would be taken in and then fail to hash, store or
estimate with an untyped error; no tool's arguments nest anywhere near this deep."""

MAX_PROVIDER_RAW_BYTES = 32 * 1024 * 1024
"""Largest provider_raw (as JSON) kept by default: it is stored and loaded with every
message, so a server that sends 100 MiB of extras must not make each load carry them.
Generous for what providers really keep there (a generated image in a foreign part)."""


@dataclass
class RequestContext:
    """Per-request state an adapter needs to turn a response into a canonical Message.

    Passed explicitly, never kept in module globals: the session's tool id map, the
    canonical model asked for, why it was chosen, and the measured latency.
    """

    session_id: str
    model: str
    tool_ids: ToolIdMap
    routing: RoutingDecisionRecord | None = None
    latency_ms: int = 0
    message_id: str | None = None
    created_at: datetime | None = None
    pricing_version: str | None = None
    tools: ToolRegistry | None = None
    """The tools the request offered. A complete reply's tool_use inputs are checked
    against their input_schema at ingress (§5.2.4): each failure emits
    `tool_input_invalid` (the message is kept, for the agent loop to answer)."""
    events: EventSink | None = None
    max_provider_raw_depth: int = MAX_PROVIDER_RAW_DEPTH
    max_provider_raw_bytes: int = MAX_PROVIDER_RAW_BYTES
    """Bounds on the provider_raw a reply keeps (where it enters: `finish_assistant`)."""
    estimated_input_tokens: int | None = None
    """The adapter's pre-flight estimate of the request's input tokens: the input usage of
    a streamed reply whose usage never arrived (see the module docstring)."""
    endpoint: str | None = None
    """The normalized base URL the request went to (`metis.endpoints`), recorded as the
    reply's `metadata.endpoint`: its opaque reasoning goes back only there."""
    max_event_chars: int | None = None
    """Bound on one event of the reply's stream (`AdapterOptions.max_event_chars`), which
    the stream decoder gives its framer; None: the framer's default."""
    user_id: str | None = None
    team_id: str | None = None
    """The principal the request was made for (a gateway key's), recorded on the reply."""

    def __setattr__(self, name: str, value: Any) -> None:
        # The fields a Message takes as they are (its id, session and time) are checked
        # here, when they are set, against the Message model's own field types: the
        # message `finish_assistant` builds from them is not validated again.
        check = _CONTEXT_CHECKS.get(name)
        if check is not None and (value is not None or name == "session_id"):
            try:
                check(value, strict=True)
            except ValidationError as exc:
                raise WireFormatError(
                    f"RequestContext.{name}: {exc.errors()[0]['msg']} (got {value!r:.80})", path=name
                ) from None
        object.__setattr__(self, name, value)


def _field_check(name: str, model: type[BaseModel] = Message) -> Any:
    """pydantic-core's validator of `model`'s field `name` (its type and constraints)."""
    field = model.model_fields[name]
    annotation: Any = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
    return TypeAdapter(annotation).validate_python


_CONTEXT_CHECKS = {
    "session_id": _field_check("session_id"),
    "message_id": _field_check("id"),
    "created_at": _field_check("created_at"),
    "endpoint": _field_check("endpoint", MessageMetadata),
}
_check_provider = _field_check("provider", MessageMetadata)
_PROVIDERS_SEEN: set[str] = set()  # provider keys already checked (adapter names, a handful)


def parse_tool_arguments(
    raw: str, *, context: RequestContext, tool_id: str, name: str
) -> tuple[dict[str, Any], str | None]:
    """JSON arguments text -> (input object, None), or ({}, raw text) when it is not a JSON object.

    Malformed arguments are kept, never silently lost: the caller stores the raw text in
    provider_raw (so replay to the same provider is exact), a WARN is logged, and a
    `tool_input_invalid` event is emitted so the agent loop can answer with an error.
    """
    if raw.strip() == "":
        return {}, None
    try:
        value = _json.loads(raw)
    except ValueError as exc:
        problem = f"arguments are not valid JSON: {exc}"
    else:
        if isinstance(value, dict):
            return value, None
        problem = f"arguments are JSON {type(value).__name__}, not an object"
    log.warning(
        "tool call %s (%s): %s; kept raw text in provider_raw",
        tool_id,
        name,
        problem,
        extra={"session_id": context.session_id, "tool_use_id": tool_id, "tool_name": name},
    )
    emit(context.events, "tool_input_invalid", tool_use_id=tool_id, tool_name=name, reason=problem, raw=raw)
    return {}, raw


_DEFAULT_REASON = "default model"


def default_routing(chosen_model: str, reason: str) -> RoutingDecisionRecord:
    """A fresh DEFAULT-mode routing record for `chosen_model` (a catalog id) and `reason`,
    as `RoutingDecisionRecord(mode=default, chosen_model=..., reason=...)` makes it."""
    return RoutingDecisionRecord(mode=RoutingMode.default, chosen_model=chosen_model, reason=reason)


def _routing_copy(record: RoutingDecisionRecord) -> RoutingDecisionRecord:
    """A record of its own for one message, equal to `record` (one record may serve many)."""
    return record.model_copy(update={"alternatives_considered": list(record.alternatives_considered)})


def _depth_past(value: Any, limit: int) -> bool:
    """Whether containers inside `value` nest deeper than `limit` (iterative: the value
    may be nested far past Python's recursion limit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


_VALUE_FIELDS: dict[type, tuple[str, ...]] = {}
"""Block class -> which of its fields hold JSON values (`input`, `provider_data`), found once
per class: asked of the class, a block without the field (most blocks) would make getattr
go through pydantic's __getattr__ and an AttributeError."""


def _value_fields(kind: type) -> tuple[str, ...]:
    fields = _VALUE_FIELDS.get(kind)
    if fields is None:
        declared = getattr(kind, "model_fields", ())
        fields = tuple(name for name in ("input", "provider_data") if name in declared)
        if len(_VALUE_FIELDS) < 256:
            _VALUE_FIELDS[kind] = fields
    return fields


def bounded_values(content: Sequence[Any], provider: str, *, message_id: str | None = None) -> None:
    """The JSON values of `content`'s blocks within `MAX_VALUE_DEPTH`, else a WireFormatError
    at the block's path: checked where blocks enter from a provider, before anything
    serializes them."""
    for index, block in enumerate(content):
        for name in _value_fields(type(block)):
            value = getattr(block, name, None)
            if isinstance(value, dict | list) and _depth_past(value, MAX_VALUE_DEPTH):
                raise WireFormatError(
                    f"{block.type} {name} nests deeper than {MAX_VALUE_DEPTH} levels",
                    provider=provider,
                    path=f"content[{index}].{name}",
                    message_id=message_id,
                )


def _bounded_raw(provider: str, provider_raw: dict[str, Any], context: RequestContext) -> None:
    """provider_raw within the context's depth and size bounds, else a WireFormatError."""
    depth = context.max_provider_raw_depth
    if _depth_past(provider_raw, depth):
        raise WireFormatError(
            f"provider_raw nests deeper than {depth} levels",
            provider=provider,
            path="metadata.provider_raw",
            hint="raise RequestContext.max_provider_raw_depth if this provider's replies really nest so deep",
        )
    size = len(_json.write(provider_raw))
    if size > context.max_provider_raw_bytes:
        raise WireFormatError(
            f"provider_raw holds {size} bytes of JSON; the limit is {context.max_provider_raw_bytes}",
            provider=provider,
            path="metadata.provider_raw",
            hint="raise RequestContext.max_provider_raw_bytes if this is legitimate",
        )


def _checked_inputs(provider: str, provider_raw: Any) -> dict[str, Any] | None:
    """What finish_assistant takes from its caller unchecked elsewhere: the provider key
    (against MessageMetadata's own field type, once per key) and provider_raw (a dict with
    string keys; empty means none). WireFormatError otherwise: never a silent drop."""
    if provider not in _PROVIDERS_SEEN:
        try:
            _check_provider(provider, strict=True)
        except ValidationError as exc:
            raise WireFormatError(
                f"provider {provider!r}: {exc.errors()[0]['msg']}", path="metadata.provider"
            ) from None
        if len(_PROVIDERS_SEEN) < 64:
            _PROVIDERS_SEEN.add(provider)
    if provider_raw is None:
        return None
    if type(provider_raw) is not dict:
        if not isinstance(provider_raw, Mapping):
            raise WireFormatError(
                f"provider_raw must be an object, got {type(provider_raw).__name__}",
                provider=provider,
                path="metadata.provider_raw",
            )
        provider_raw = dict(provider_raw)
    for key in provider_raw:
        if type(key) is not str:
            raise WireFormatError(
                f"provider_raw keys must be strings, got {key!r}",
                provider=provider,
                path="metadata.provider_raw",
            )
    return provider_raw or None


def _enum(kind: Any, value: Any, provider: str, field: str) -> Any:
    """`value` as a member of `kind`; WireFormatError at `metadata.<field>` when it is none."""
    try:
        return kind(value)
    except ValueError:
        raise WireFormatError(
            f"{value!r} is not a {kind.__name__}", provider=provider, path=f"metadata.{field}"
        ) from None


def _checked_content(content: Any, provider: str) -> list[ContentBlock]:
    """Content given as anything but block models (dicts, say): validated into blocks."""
    try:
        blocks: list[ContentBlock] = CONTENT_LIST.validate_python(content)
    except ValidationError as exc:
        first = pydantic_problems(exc)[0]
        where = "content" + (first.path if first.path.startswith("[") else f".{first.path}")
        raise WireFormatError(f"{where}: {first.problem}", provider=provider, path=where) from None
    return blocks


def finish_assistant(
    context: RequestContext,
    *,
    provider: str,
    content: list[ContentBlock],
    counts: TokenCounts | None,
    stop_reason: StopReason | None,
    provider_raw: dict[str, Any] | None,
    status: MessageStatus = MessageStatus.complete,
) -> Message:
    """The canonical ASSISTANT message for a finished (or stopped) generation.

    The parts are valid by construction — blocks the adapter validated, the catalog's model
    id, normalized counts, minted ids, the context's checked fields — so the records are
    validated as they are put together, and the §5 rules (`metis.invariants`) run on the
    Message, so a reply that breaks them (a COMPLETE reply with no content) is a typed error.
    A COMPLETE reply without usage gets an estimate (`reported_or_estimated`).
    """
    bounded_values(content, provider, message_id=context.message_id)
    if status == MessageStatus.complete:
        counts, provider_raw = reported_or_estimated(counts, content, context, provider_raw)
    return _assistant_message(
        context,
        provider=provider,
        content=content,
        counts=_with_content_units(provider, counts, content),
        stop_reason=stop_reason,
        provider_raw=provider_raw,
        status=status,
    )


def reported_or_estimated(
    counts: TokenCounts | None,
    content: Sequence[ContentBlock],
    context: RequestContext,
    provider_raw: dict[str, Any] | None,
) -> tuple[TokenCounts, dict[str, Any] | None]:
    """The usage of a COMPLETE reply: the provider's, or an estimate when it reported none.

    No usage, or all-zero usage beside generated content (no reply that says something
    costs nothing), means the usage never arrived: input tokens from the request's
    pre-flight estimate, output tokens from the content at CHARS_PER_TOKEN, and
    `provider_raw["usage_estimated"] = true` (see the module docstring)."""
    if counts is not None and counts != _NO_COUNTS:
        return counts, provider_raw
    chars = 0
    for block in content:
        if isinstance(block, TextBlock | ThinkingBlock):
            chars += len(block.text)
        elif isinstance(block, ToolUseBlock):
            chars += len(block.name) + len(_json.dumps(block.input))
    if chars == 0:  # nothing generated: zero is the honest count
        return counts or _NO_COUNTS, provider_raw
    estimated = TokenCounts(
        input_tokens=context.estimated_input_tokens or 0, output_tokens=-(-chars // CHARS_PER_TOKEN)
    )
    return estimated, {**(provider_raw or {}), "usage_estimated": True}


_NO_COUNTS = TokenCounts()


def _with_content_units(
    provider: str, counts: TokenCounts | None, content: Sequence[ContentBlock]
) -> TokenCounts | None:
    """A reply's counts with the server-tool calls its own blocks show (`usage.content_units`).
    Only a reply's: an imported turn's blocks were paid for elsewhere (`imported_assistant`)."""
    return None if counts is None else content_units(provider, counts, content)


def _assistant_message(
    context: RequestContext,
    message_id: str | None = None,
    created_at: datetime | None = None,
    *,
    provider: str,
    content: list[ContentBlock],
    counts: TokenCounts | None,
    stop_reason: StopReason | None,
    provider_raw: dict[str, Any] | None,
    status: MessageStatus,
) -> Message:
    """What `finish_assistant` and `imported_assistant` build, the message's id and time
    given or else the context's (checked when set) or minted: a StreamAssembler fixes them
    once for all its snapshots instead of copying and re-checking the context for each."""
    message_id = message_id or context.message_id or new_message_id()
    created_at = created_at or context.created_at or datetime.now(UTC)
    entry = load_catalog().resolve(context.model)
    usage = None
    if counts is not None:
        usage = make_usage(
            counts,
            pricing_key=entry.pricing_key,
            latency_ms=context.latency_ms,
            version=context.pricing_version,
            model=entry.id,
            at=created_at,
        )
    if context.routing is not None:
        routing = _routing_copy(context.routing)
    else:  # a fresh record per message: no two messages share one
        routing = default_routing(entry.id, _DEFAULT_REASON)
    provider_raw = _checked_inputs(provider, provider_raw)
    if provider_raw is not None:
        _bounded_raw(provider, provider_raw, context)
    if any(type(block) not in BLOCK_CLASSES for block in content):
        content = _checked_content(content, provider)
    metadata = MessageMetadata(
        model=entry.id,
        provider=provider,
        routing=routing,
        usage=usage,
        status=status if type(status) is MessageStatus else _enum(MessageStatus, status, provider, "status"),
        stop_reason=stop_reason
        if stop_reason is None or type(stop_reason) is StopReason
        else _enum(StopReason, stop_reason, provider, "stop_reason"),
        provider_raw=provider_raw,
        endpoint=context.endpoint,
        user_id=context.user_id,
        team_id=context.team_id,
    )
    message = Message(
        id=message_id,
        session_id=context.session_id,
        role=Role.assistant,
        content=list(content),
        metadata=metadata,
        created_at=created_at,
    )
    problems = check_message(message)
    if problems:
        # e.g. a COMPLETE reply with no content: say so as a typed error.
        raise WireFormatError(
            f"the {provider} response does not make a valid assistant message: "
            + "; ".join(str(p) for p in problems),
            provider=provider,
            message_id=message.id,
        )
    if context.tools is not None and metadata.status == MessageStatus.complete:
        _check_tool_inputs(message.content, context.tools, context.events)
    return message


def _check_tool_inputs(
    content: Sequence[ContentBlock], tools: ToolRegistry, events: EventSink | None
) -> None:
    """§5.2.4 at ingress: each tool_use input against the offered tool's input_schema.

    `ToolRegistry.validate_input` emits `tool_input_invalid` for an input that fails; a
    call to a tool the request did not offer is reported the same way. Nothing is
    raised: the reply is what the model said, and the agent loop answers it.
    """
    for block in content:
        if type(block) is not ToolUseBlock:
            continue
        if block.name in tools:
            tools.validate_input(block.name, block.input, tool_use_id=block.id, events=events)
        else:
            reason = f"no tool named {block.name!r} was offered"
            emit(
                events,
                "tool_input_invalid",
                tool_name=block.name,
                tool_use_id=block.id,
                problems=[reason],
                reason=reason,
            )


def import_context(
    *, provider: str, session_id: str, model: str, tool_ids: ToolIdMap, created_at: datetime | None = None
) -> RequestContext:
    """The context every importer builds its ASSISTANT turns with (through finish_assistant).

    A recorded request says nothing of who wrote its history or what it cost: each turn
    records the requested model (`model`, a catalog id: `importing.import_model` resolves
    it), zero usage priced as such, no stop reason, and a routing record that says where
    the turn came from.
    """
    return RequestContext(
        session_id=session_id,
        model=model,
        tool_ids=tool_ids,
        routing=default_routing(model, f"imported from a recorded {provider} request"),
        created_at=created_at,
    )


def imported_assistant(
    context: RequestContext,
    *,
    provider: str,
    content: list[ContentBlock],
    provider_raw: dict[str, Any] | None,
) -> Message:
    """An ASSISTANT turn of a recorded request (see `import_context`): zero usage, not an
    estimate, because what it cost was paid elsewhere and is not this session's."""
    bounded_values(content, provider)
    return _assistant_message(
        context,
        provider=provider,
        content=content,
        counts=TokenCounts(),
        stop_reason=None,
        provider_raw=provider_raw,
        status=MessageStatus.complete,
    )


def imported_message(
    session_id: str,
    role: Role,
    content: list[ContentBlock],
    *,
    provider: str,
    path: str,
    created_at: datetime | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Message:
    """A USER, SYSTEM or TOOL turn of a recorded request (ASSISTANT turns: `imported_assistant`),
    made now unless `created_at` says when.

    Validated as any Message is; what cannot be one is a WireFormatError at `path` of the
    request, naming the first problem.
    """
    try:
        return Message(
            id=new_message_id(),
            session_id=session_id,
            role=role,
            content=content,
            metadata=MessageMetadata(**(metadata or {})),
            created_at=created_at or datetime.now(UTC),
            schema_version=CURRENT_VERSION,
        )
    except ValidationError as exc:
        raise WireFormatError(
            f"cannot import as a {role.value} message: {pydantic_problems(exc)[0]}",
            provider=provider,
            path=path,
        ) from None


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_id: str = ""
    name: str = ""
    whole: ContentBlock | None = None
    """The block a `block` event delivered complete; text deltas after it append to it."""


class StreamAssembler:
    """Fold canonical StreamEvents into one Message (see module docstring)."""

    def __init__(self, context: RequestContext, provider: str) -> None:
        self.context = context
        self.provider = provider
        self.message_id = context.message_id or new_message_id()
        self.created_at = context.created_at or datetime.now(UTC)
        self._blocks: dict[int, _Block] = {}
        self._counts: TokenCounts | None = None
        self._complete: MessageCompleteEvent | None = None
        self._error: ErrorEvent | None = None
        self.unparsed_arguments: dict[str, str] = {}

    @property
    def error(self) -> ErrorEvent | None:
        """The error event that ended the stream, if any."""
        return self._error

    def feed(self, event: StreamEvent) -> None:
        """Apply one event."""
        match event:
            case TextDeltaEvent():
                self._block(event.index, "text").text.append(event.text)
            case ThinkingDeltaEvent():
                if event.redacted_data is not None:
                    block = self._block(event.index, "redacted_thinking")
                    block.text.append(event.redacted_data)
                else:
                    block = self._block(event.index, "thinking")
                    if event.text:
                        block.text.append(event.text)
                    if event.signature is not None:
                        block.signature = event.signature
            case ToolUseStartEvent():
                block = self._block(event.index, "tool_use")
                block.tool_id, block.name = event.id, event.name
            case ToolUseInputDeltaEvent():
                self._block(event.index, "tool_use").text.append(event.partial_json)
            case ToolUseEndEvent():
                self._block(event.index, "tool_use")  # arguments are parsed once, at finish
            case BlockEvent():
                # The whole block is authoritative: deltas that came before it at this index
                # were its text arriving piecewise (a Responses output_text streamed, then
                # its item done with citations), so it replaces them.
                self._blocks[event.index] = _Block("block", whole=event.block)
            case UsageUpdateEvent():
                self._counts = merge_event(self._counts, event)
            case MessageCompleteEvent():
                self._complete = event
            case ErrorEvent():
                self._error = event

    def feed_all(self, events: Iterable[StreamEvent]) -> None:
        """Apply events in order."""
        for event in events:
            self.feed(event)

    def _block(self, index: int, kind: str) -> _Block:
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = _Block(kind)
        return block

    def content(self, *, final: bool) -> list[ContentBlock]:
        """The blocks so far, in index order; tool inputs parsed (best effort unless final)."""
        out: list[ContentBlock] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            text = "".join(block.text)
            if block.whole is not None:
                whole = block.whole
                if text and isinstance(whole, TextBlock):
                    whole = whole.model_copy(update={"text": whole.text + text})
                out.append(whole)
            elif block.kind == "text":
                out.append(TextBlock(type="text", text=text))
            elif block.kind == "thinking":
                out.append(ThinkingBlock(type="thinking", text=text, signature=block.signature))
            elif block.kind == "redacted_thinking":
                out.append(RedactedThinkingBlock(type="redacted_thinking", data=text))
            elif block.tool_id:
                if final:
                    value, raw = parse_tool_arguments(
                        text, context=self.context, tool_id=block.tool_id, name=block.name
                    )
                    if raw is not None:
                        self.unparsed_arguments[block.tool_id] = raw
                else:  # best effort: arguments still arriving are usually cut short, and
                    # their text is kept whole anyway
                    try:
                        parsed = _json.loads(text) if text.strip() else {}
                    except ValueError:
                        parsed = {}
                    value = parsed if isinstance(parsed, dict) else {}
                try:
                    out.append(ToolUseBlock(type="tool_use", id=block.tool_id, name=block.name, input=value))
                except ValidationError as exc:  # e.g. a name past the schema's 128 characters
                    raise WireFormatError(
                        f"streamed tool call {block.name[:80]!r}: {pydantic_problems(exc)[0]}",
                        provider=self.provider,
                        path=f"content[{index}]",
                        message_id=self.message_id,
                    ) from None
        return out

    def snapshot(self) -> Message:
        """A PARTIAL message of what has arrived (for checkpoints while streaming)."""
        return self._message(MessageStatus.partial, self.content(final=False), None, self._counts)

    def finish(self, provider_raw: dict[str, Any] | None = None, *, cancelled: bool = False) -> Message:
        """The final message: COMPLETE, or ERROR/CANCELLED when the stream did not finish."""
        if cancelled:
            status = MessageStatus.cancelled
        elif self._error is not None:
            status = MessageStatus.error
        elif self._complete is None:
            status = MessageStatus.cancelled  # the stream stopped without finishing
        else:
            status = MessageStatus.complete
        content = self.content(final=True)  # fills unparsed_arguments
        bounded_values(content, self.provider, message_id=self.message_id)
        raw = dict(provider_raw or {})
        if self.unparsed_arguments:
            raw.setdefault("unparsed_arguments", {}).update(self.unparsed_arguments)
        if self._error is not None:
            raw["error"] = {"code": self._error.code, "message": self._error.message}
        counts: TokenCounts | None = self._counts
        provider_raw = raw or None
        if status == MessageStatus.complete:  # the end arrived; did the usage?
            counts, provider_raw = reported_or_estimated(counts, content, self.context, provider_raw)
        return self._message(status, content, provider_raw, counts)

    def fail(self, failure: Exception, provider_raw: dict[str, Any] | None = None) -> Message:
        """The final message of an exchange a failure ended (a malformed event, a reply
        that cannot be assembled): ERROR, holding what can still be built and the failure
        under provider_raw["error"]. When the blocks or provider_raw themselves are what
        failed, the message keeps neither, so a failed exchange always ends in a row."""
        error = {"code": type(failure).__name__, "message": str(failure)[:2000]}
        try:
            content = self.content(final=True)
            bounded_values(content, self.provider, message_id=self.message_id)
        except MetisError:
            content = []
        for raw in (dict(provider_raw or {}), {}):
            try:
                return self._message(MessageStatus.error, content, {**raw, "error": error}, self._counts)
            except MetisError:
                content = []
        raise failure

    def _message(
        self,
        status: MessageStatus,
        content: list[ContentBlock],
        provider_raw: dict[str, Any] | None,
        counts: TokenCounts | None = None,
    ) -> Message:
        stop = self._complete.stop_reason if self._complete else (StopReason.error if self._error else None)
        return _assistant_message(
            self.context,
            self.message_id,
            self.created_at,
            provider=self.provider,
            content=content,
            counts=_with_content_units(self.provider, counts, content),
            stop_reason=stop,
            provider_raw=provider_raw,
            status=status,
        )


__all__ = [
    "RequestContext",
    "StreamAssembler",
    "bounded_values",
    "finish_assistant",
    "import_context",
    "imported_assistant",
    "imported_message",
    "parse_tool_arguments",
    "reported_or_estimated",
]
