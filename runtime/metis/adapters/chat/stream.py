"""Chat Completions SSE -> canonical StreamEvents (`ChatStreamDecoder`).

Each `data:` object is read once through the declared `Chunk` shape. Canonical block
indices are given in order of first appearance: plain or detailed reasoning, text (never
for the empty `content: ""` servers repeat), refusal text, tool calls (by wire `index`; a
new id at a used index is a new call). A tool call starts once its name is known, buffered
argument fragments follow, and it ends at `finish_reason`. `message_complete` waits for
`[DONE]` (or the end of the body) so the usage chunk comes first and an `error` chunk after
`finish_reason` still ends the stream as ERROR; a second `finish_reason` is not a second
finish. Unknown keys (e.g. `obfuscation`) are ignored; SSE comments (`: OPENROUTER
PROCESSING`) never reach here.

`annotations` (url citations) arrive whole in a delta, with or after the text they cite:
they are collected, and before `message_complete` the text block is sent again whole, with
its citations, as a `block` event at its index (the assembler replaces the streamed text
with it), so the assembled stream equals the whole reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from metis_schema.v3 import (
    BlockEvent,
    MessageCompleteEvent,
    StreamEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
)

from ...assembly import RequestContext
from ...usage import normalize_usage, usage_event
from .._kit.base import FramedDecoder
from .._kit.facts import ProviderFacts
from .._kit.framing import SSEEvent, SSEFramer
from .._kit.losses import Losses
from .._kit.provider_errors import error_event
from .._kit.reader import read_json
from .facts import stop_reason
from .from_wire import DETAIL_TEXT_KEYS, cited_text_block, response_raw, thinking_text, url_citations
from .wire import (
    Annotation,
    AssistantPart,
    Chunk,
    ChunkChoice,
    Delta,
    ErrorDetail,
    Fields,
    ReasoningDetail,
    ToolCallDelta,
    canonical_arguments,
    raw_arguments_to_keep,
)

_CONCATENATED = ("text", "summary", "data")
"""reasoning_details fragment fields that arrive in pieces (the rest: the latest value wins)."""


@dataclass
class _StreamDetail:
    """One streamed reasoning_details item, keyed by its wire `index`: the fields its
    fragments set (the latest value wins) and the pieces of the ones that arrive in pieces
    (`_CONCATENATED`), collected and joined once, when the reply is assembled (`whole`):
    adding each piece to the text so far copied it all again, for every fragment."""

    block: int
    fields: dict[str, Any] = field(default_factory=dict)
    pieces: dict[str, list[str]] = field(default_factory=dict)

    def add(self, fragment: ReasoningDetail, *, first: bool) -> None:
        """One fragment's fields: a piece of a concatenated one collected, a null ignored but
        in the `first` (the item as its first fragment gave it), any other value the latest."""
        for key, value in fragment.items():
            if key in _CONCATENATED and isinstance(value, str):
                self.fields.setdefault(key, None)  # its place among the fields
                self.pieces.setdefault(key, []).append(value)
            elif value is not None or first:
                self.fields[key] = value

    def whole(self) -> dict[str, Any]:
        """The item its fragments make, each concatenated field joined."""
        return {
            key: "".join(self.pieces[key]) if key in self.pieces else value
            for key, value in self.fields.items()
        }


@dataclass
class _StreamTool:
    """One streamed tool call, keyed by its wire `index` (and its id, for servers that reuse 0)."""

    block: int
    provider_id: str | None = None
    name: str = ""
    canonical: str | None = None
    arguments: list[str] = field(default_factory=list)
    ended: bool = False


class ChatStreamDecoder(FramedDecoder[SSEEvent]):
    """One streamed reply of one dialect (see the module doc)."""

    def __init__(self, name: str, facts: ProviderFacts, context: RequestContext) -> None:
        self.name = name
        self.facts = facts
        self.context = context
        self._framer = SSEFramer(max_event_chars=context.max_event_chars)
        self._next_block = 0
        self._text: int | None = None
        self._text_parts: list[str] = []
        self._citations: list[dict[str, Any]] = []
        self._other_annotations: list[Annotation] = []
        self._reasoning_key: str | None = None
        self._refusal: int | None = None
        self._plain_reasoning: int | None = None
        self._details: dict[int, _StreamDetail] = {}
        self._tools: dict[int, _StreamTool] = {}
        self._tool_order: list[_StreamTool] = []
        self._finish: str | None = None
        self._refused = False
        self._stopped = False
        self._meta: dict[str, Any] = {}

    # --- StreamDecoder --------------------------------------------------------------

    def _frame(self, frame: SSEEvent) -> list[StreamEvent]:
        return self._sse(frame)

    def _at_end(self) -> list[StreamEvent]:
        return self._complete()

    def provider_raw(self) -> dict[str, Any] | None:
        arguments = {}
        for tool in self._tool_order:
            if tool.canonical is not None:
                kept = raw_arguments_to_keep("".join(tool.arguments))
                if kept is not None:
                    arguments[tool.canonical] = kept
        details = [detail.whole() for detail in sorted(self._details.values(), key=lambda d: d.block)]
        meta = {
            **self._meta,
            "finish_reason": self._finish,
            "arguments": arguments or None,
            "reasoning_details": details or None,
            "reasoning_key": self._reasoning_key,
            "annotations": self._other_annotations or None,
        }
        return response_raw(self.name, meta)

    # --- chunks ---------------------------------------------------------------------

    def _sse(self, sse: SSEEvent) -> list[StreamEvent]:
        if self._stopped:
            return []
        data = sse.data.strip()
        if data == "[DONE]":
            return self._complete()
        if not data:
            return []
        if sse.event == "error":  # the data is the error object itself
            return self._error(
                read_json(ErrorDetail, data, provider=self.name, path="stream", what="stream error")
            )
        chunk = read_json(Chunk, data, provider=self.name, path="stream", what="stream chunk")
        error = chunk.get("error")
        if error:
            return self._error(error)
        return self._chunk(chunk)

    def _error(self, detail: ErrorDetail | str) -> list[StreamEvent]:
        self._stopped = True
        return [error_event(self.facts, {"error": detail}, path="stream")]

    def _chunk(self, chunk: Chunk) -> list[StreamEvent]:
        for key in ("id", "model", "system_fingerprint", "provider"):
            value = cast(Fields, chunk).get(key)
            if value is not None:
                self._meta.setdefault(key, value)
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) == 0:
                events.extend(self._choice(choice))
        usage = chunk.get("usage")
        if usage is not None:
            events.append(usage_event(normalize_usage(self.name, usage)))
        return events

    def _choice(self, choice: ChunkChoice) -> list[StreamEvent]:
        delta: Delta = choice.get("delta") or {}
        events = self._reasoning(delta)
        content = delta.get("content")
        if isinstance(content, list):
            for part in content:
                events.extend(self._part(part))
        elif content:
            events.extend(self._text_delta(content))
        annotations = delta.get("annotations")
        if annotations:
            self._citations += url_citations(
                self.name, annotations, "stream.delta.annotations", self.context, self._other_annotations
            )
        refusal = delta.get("refusal")
        if refusal:
            self._refusal = self._new_block() if self._refusal is None else self._refusal
            self._refused = True
            events.append(TextDeltaEvent(type="text_delta", index=self._refusal, text=refusal))
        for position, call in enumerate(delta.get("tool_calls") or ()):
            events.extend(self._tool_fragment(call, position))
        finish = choice.get("finish_reason")
        if finish:
            if self._finish is None:
                self._finish = finish
            native = choice.get("native_finish_reason")
            if native is not None:
                self._meta.setdefault("native_finish_reason", native)
            events.extend(self._end_tools())
        return events

    def _text_delta(self, text: str) -> list[StreamEvent]:
        self._text = self._new_block() if self._text is None else self._text
        self._text_parts.append(text)
        return [TextDeltaEvent(type="text_delta", index=self._text, text=text)]

    def _part(self, part: AssistantPart) -> list[StreamEvent]:
        """A typed content chunk (Mistral): text, or thinking where the dialect has it."""
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            return self._text_delta(part["text"])
        if kind == "thinking" and self.facts.thinking_parts:
            if self._plain_reasoning is None:
                self._plain_reasoning = self._new_block()
            text, signature = thinking_text(self.name, part, "stream.delta.content")
            return [
                ThinkingDeltaEvent(
                    type="thinking_delta", index=self._plain_reasoning, text=text, signature=signature
                )
            ]
        return []

    def _new_block(self) -> int:
        index = self._next_block
        self._next_block += 1
        return index

    # --- reasoning ------------------------------------------------------------------

    def _reasoning(self, delta: Delta) -> list[StreamEvent]:
        details = delta.get("reasoning_details") if self.facts.reasoning_details else None
        if details:
            return [e for item in details for e in self._detail_fragment(item)]
        fields = cast(Fields, delta)
        for key in self.facts.plain_reasoning_keys:
            text = fields.get(key)
            if text:
                if self._plain_reasoning is None:
                    self._plain_reasoning = self._new_block()
                self._reasoning_key = key
                return [ThinkingDeltaEvent(type="thinking_delta", index=self._plain_reasoning, text=text)]
        return []

    def _detail_fragment(self, item: ReasoningDetail) -> list[StreamEvent]:
        """Merge one reasoning_details fragment by its `index` (text collected, signature later)."""
        index = item.get("index", 0)
        detail = self._details.get(index)
        first = detail is None
        if detail is None:
            detail = self._details[index] = _StreamDetail(self._new_block())
        detail.add(item, first=first)
        block = detail.block
        kind = detail.fields.get("type")
        if kind == "reasoning.encrypted":
            data = item.get("data")
            return (
                [ThinkingDeltaEvent(type="thinking_delta", index=block, redacted_data=data)] if data else []
            )
        text_key = DETAIL_TEXT_KEYS.get(kind) if isinstance(kind, str) else None
        if text_key is None:
            return []
        text = cast(Fields, item).get(text_key) or None
        signature = item.get("signature") or None
        if text is None and signature is None and not first:
            return []
        return [
            ThinkingDeltaEvent(
                type="thinking_delta", index=block, text=text or ("" if first else None), signature=signature
            )
        ]

    # --- tool calls -----------------------------------------------------------------

    def _tool_fragment(self, call: ToolCallDelta, position: int) -> list[StreamEvent]:
        index = call.get("index", position)
        provider_id = call.get("id") or None
        function = call.get("function") or {}
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
        if name and tool.canonical is None:
            tool.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            arguments = canonical_arguments(arguments)
        if arguments:
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
                Losses(self.name, self.context.session_id).lost(
                    self.context.message_id,
                    "tool_use",
                    "streamed tool call without a name dropped",
                    at=f"stream.tool_calls[{tool.block}]",
                )
                continue
            events.append(ToolUseEndEvent(type="tool_use_end", index=tool.block))
        return events

    def _complete(self) -> list[StreamEvent]:
        if self._stopped or self._finish is None:
            return []  # already over, or cut before finish_reason: the assembler says CANCELLED
        self._stopped = True
        events = self._end_tools()
        events.extend(self._cited_text())
        if self._next_block == 0:
            events.append(TextDeltaEvent(type="text_delta", index=self._new_block(), text=""))
        events.append(
            MessageCompleteEvent(
                type="message_complete",
                stop_reason=stop_reason(self.facts, self._finish, refused=self._refused),
                provider_stop_reason=_text(self._meta.get("native_finish_reason")) or self._finish,
                response_id=_text(self._meta.get("id")),
                provider_model=_text(self._meta.get("model")),
            )
        )
        return events

    def _cited_text(self) -> list[StreamEvent]:
        """The text block again, whole with its citations (see the module doc)."""
        if not self._citations:
            return []
        index = self._new_block() if self._text is None else self._text
        block = cited_text_block(
            "".join(self._text_parts), self._citations, provider=self.name, path="stream.delta.annotations"
        )
        return [BlockEvent(type="block", index=index, block=block)]


def _text(value: Any) -> str | None:
    """A chunk's id/model/native finish reason when it is a string; a proxy that sends
    another type there has sent nothing usable (the event fields are strings)."""
    return value if isinstance(value, str) else None


__all__ = ["ChatStreamDecoder"]
