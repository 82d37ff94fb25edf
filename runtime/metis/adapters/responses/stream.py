"""Responses API SSE -> canonical StreamEvents (`ResponsesStreamDecoder`).

Each `data:` object is one semantic event, read once through the declared `Event` shape;
its `sequence_number` must be one more than the last one seen (a gap or a repeat means a
lost or replayed event: WireFormatError). Canonical block indices are given in order of
first appearance, keyed by (output_index, content_index) for text and refusal parts and
by output_index for reasoning and function calls:

- `response.output_text.delta` / `response.refusal.delta` -> text deltas;
- `response.reasoning_summary_text.delta` (and `response.reasoning_text.delta` from
  servers that show raw reasoning) -> thinking deltas, summary parts joined by a blank
  line; at `response.output_item.done` the item's `encrypted_content` arrives as the
  block's signature, or as redacted data when there was no text;
- `response.output_item.added` with a function_call starts a tool call (its `call_id`
  bound in the ToolIdMap), `response.function_call_arguments.delta` feeds it, the item's
  `done` ends it;
- the provider's own tool calls (`web_search_call`, ...) and `compaction` items arrive
  complete: their indexes are taken at `response.output_item.added` (output order; two for
  a tool call, whose done item may carry its result), and at `response.output_item.done`
  the item becomes `block` events holding the same blocks a whole reply makes of it
  (`from_wire.whole_item_blocks`: the call, then its result when the item has one; an
  unused second index is given back when nothing was numbered after it);
- a text part whose done item carries url citations (collected from
  `response.output_text.annotation.added` when the done part has no `annotations`) is sent
  again whole, with its citations, as a `block` event at its index: the assembler replaces
  the deltas that streamed its text (`from_wire.message_part` makes the block);
- `response.completed` / `response.incomplete` carry usage and the stop reason;
  `response.failed` and `error` end the stream as ERROR (an `error` event's fields at its
  top, as OpenAI sends them, or under `error`, as the Open Responses specification does).

What the reply reader keeps in provider_raw (reasoning items, phase, server items,
compaction ids, annotations with no citation, items with no block) is gathered from the
`output_item.done` items with the same functions, so a streamed reply and the same reply
read whole are the same message. An index that got no block (a whole item announced but
never done because the stream ended in error, or a result index an interleaving server
kept from being given back) leaves no hole in the assembled content, so provider_raw's
index-keyed entries are renumbered past it (`ItemRead.close_gaps`): they always name
the block at that position of the message's content.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

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
from ...errors import WireFormatError
from ...usage import normalize_usage, usage_event
from .._kit.arguments import raw_arguments_to_keep
from .._kit.base import FramedDecoder
from .._kit.facts import ProviderFacts
from .._kit.framing import SSEEvent, SSEFramer
from .._kit.provider_errors import error_event
from .._kit.reader import read_json
from .facts import PROVIDER
from .from_wire import (
    SUMMARY_JOIN,
    WHOLE_ITEMS,
    ItemRead,
    keep_other,
    message_part,
    message_parts,
    reasoning_text,
    replay_item,
    response_meta,
    stop_reason,
    whole_item_blocks,
)
from .wire import (
    CompactionItem,
    ErrorDetail,
    Event,
    FunctionCallItem,
    Item,
    MessageItem,
    Part,
    ReasoningItem,
    Response,
    ServerCallItem,
)

log = logging.getLogger("metis.adapters")

_TEXT_DELTAS = frozenset({"response.output_text.delta", "response.refusal.delta"})
_THINKING_DELTAS = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})
_FINISHED = frozenset({"response.completed", "response.incomplete"})


@dataclass
class _Call:
    block: int
    canonical: str
    arguments: list[str] = field(default_factory=list)


class ResponsesStreamDecoder(FramedDecoder[SSEEvent]):
    """One streamed response of one dialect (see the module doc)."""

    def __init__(self, facts: ProviderFacts, context: RequestContext) -> None:
        self.facts = facts
        self.context = context
        self._framer = SSEFramer(max_event_chars=context.max_event_chars)
        self._sequence: int | None = None
        self._next_block = 0
        self._parts: dict[tuple[int, int], int] = {}
        self._thinking: dict[int, int] = {}
        self._summary: dict[int, int] = {}  # output_index -> last summary_index seen
        self._calls: dict[int, _Call] = {}
        self._whole: dict[int, int] = {}  # output_index -> first block index of an item that arrives complete
        self._filled: set[int] = set()  # block indexes an event has been sent for
        self._annotations: dict[tuple[int, int], list[dict[str, Any]]] = {}
        self._read = ItemRead(session_id=context.session_id, message_id=context.message_id or "")
        self._meta: dict[str, Any] = {}
        self._stopped = False

    # --- StreamDecoder --------------------------------------------------------------

    def _frame(self, frame: SSEEvent) -> list[StreamEvent]:
        return self._noted(self._sse(frame))

    def _noted(self, events: list[StreamEvent]) -> list[StreamEvent]:
        """`events`, the block indexes they fill noted (for `provider_raw`'s gap check)."""
        for event in events:
            index = getattr(event, "index", None)
            if index is not None:
                self._filled.add(index)
        return events

    def provider_raw(self) -> dict[str, Any] | None:
        arguments = dict(self._read.arguments)
        for call in self._calls.values():
            kept = raw_arguments_to_keep("".join(call.arguments))
            if kept is not None:
                arguments[call.canonical] = kept
        read = replace(self._read, arguments=arguments)
        read.close_gaps(sorted(set(range(self._next_block)) - self._filled))  # new maps, not the decoder's
        return {"adapter": PROVIDER, **self._meta, **read.raw()}

    # --- events ---------------------------------------------------------------------

    def _sse(self, sse: SSEEvent) -> list[StreamEvent]:
        data = sse.data.strip()
        if self._stopped or not data or data == "[DONE]":
            return []
        event = read_json(Event, data, provider=PROVIDER, path="stream", what="stream event")
        self._check_sequence(event)
        kind = event["type"]
        if kind in _TEXT_DELTAS:
            return self._text(event, refusal=kind == "response.refusal.delta")
        if kind in _THINKING_DELTAS:
            return self._thinking_delta(event)
        if kind == "response.function_call_arguments.delta":
            return self._arguments(event)
        if kind == "response.output_item.added":
            return self._added(event)
        if kind == "response.output_item.done":
            return self._done(event)
        if kind == "response.output_text.annotation.added":
            return self._annotation(event)
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._meta.update(response_meta(self._response(event)))
            return []
        if kind in _FINISHED:
            return self._finished(self._response(event))
        if kind == "response.failed":
            error = self._response(event).get("error") or {}
            return self._error(error)
        if kind == "error":
            nested = event.get("error")
            if nested is not None:
                return self._error(nested)
            return self._error(
                {"message": event.get("message"), "code": event.get("code"), "param": event.get("param")}
            )
        return []  # part markers, built-in tool progress (its item arrives whole at done)

    def _check_sequence(self, event: Event) -> None:
        number = event.get("sequence_number")
        if number is None:
            return
        if self._sequence is not None and number != self._sequence + 1:
            raise WireFormatError(
                f"stream event {event['type']!r} has sequence_number {number}, expected {self._sequence + 1}"
                " (an event was lost or repeated)",
                provider=PROVIDER,
                path="stream.sequence_number",
            )
        self._sequence = number

    def _response(self, event: Event) -> Response:
        response = event.get("response")
        if response is None:
            raise WireFormatError(
                f"stream event {event['type']!r} carries no response",
                provider=PROVIDER,
                path="stream.response",
            )
        return response

    def _new_block(self) -> int:
        index = self._next_block
        self._next_block += 1
        return index

    def _part_block(self, output: int, part: int) -> int:
        block = self._parts.get((output, part))
        if block is None:
            block = self._parts[(output, part)] = self._new_block()
        return block

    def _text(self, event: Event, *, refusal: bool) -> list[StreamEvent]:
        block = self._part_block(event.get("output_index", 0), event.get("content_index", 0))
        self._read.refused = self._read.refused or refusal
        return [TextDeltaEvent(type="text_delta", index=block, text=event.get("delta", ""))]

    def _thinking_delta(self, event: Event) -> list[StreamEvent]:
        output = event.get("output_index", 0)
        summary = event.get("summary_index", event.get("content_index", 0))
        text = event.get("delta", "")
        block = self._thinking.get(output)
        if block is None:
            block = self._thinking[output] = self._new_block()
        elif summary != self._summary.get(output):
            text = SUMMARY_JOIN + text  # a new summary part
        self._summary[output] = summary
        return [ThinkingDeltaEvent(type="thinking_delta", index=block, text=text)]

    def _arguments(self, event: Event) -> list[StreamEvent]:
        call = self._calls.get(event.get("output_index", 0))
        delta = event.get("delta", "")
        if call is None or not delta:
            return []
        call.arguments.append(delta)
        return [ToolUseInputDeltaEvent(type="tool_use_input_delta", index=call.block, partial_json=delta)]

    def _annotation(self, event: Event) -> list[StreamEvent]:
        annotation = event.get("annotation")
        if annotation is not None:
            key = (event.get("output_index", 0), event.get("content_index", 0))
            self._annotations.setdefault(key, []).append(annotation)
        return []

    def _added(self, event: Event) -> list[StreamEvent]:
        item = event.get("item")
        if item is None:
            return []
        if item.get("type") in WHOLE_ITEMS:  # its place, in output order; its blocks come at done
            self._whole[event.get("output_index", 0)] = self._new_block()
            if item.get("type") != "compaction":
                self._new_block()  # the call's result, if its done item carries one
            return []
        if item.get("type") != "function_call":
            return []
        call_item: FunctionCallItem = item  # type: ignore[assignment]
        canonical = self.context.tool_ids.register_incoming(PROVIDER, call_item["call_id"])
        call = self._calls[event.get("output_index", 0)] = _Call(self._new_block(), canonical)
        self._read.calls += 1
        events: list[StreamEvent] = [
            ToolUseStartEvent(
                type="tool_use_start",
                index=call.block,
                id=canonical,
                name=call_item["name"],
                provider_id=call_item["call_id"],
            )
        ]
        if call_item["arguments"]:  # a server that sends the call whole
            call.arguments.append(call_item["arguments"])
            events.append(
                ToolUseInputDeltaEvent(
                    type="tool_use_input_delta", index=call.block, partial_json=call_item["arguments"]
                )
            )
        return events

    def _done(self, event: Event) -> list[StreamEvent]:
        item: Item | None = event.get("item")
        output = event.get("output_index", 0)
        if item is None:
            return []
        kind = item.get("type", "message")
        if kind == "function_call":
            return self._call_done(output, item)  # type: ignore[arg-type]
        if kind == "reasoning":
            return self._reasoning_done(output, item)  # type: ignore[arg-type]
        if kind == "message":
            return self._message_done(output, item)  # type: ignore[arg-type]
        if kind in WHOLE_ITEMS:
            return self._whole_done(output, item)  # type: ignore[arg-type]
        keep_other(dict(item), f"stream.output[{output}]", self._read, at=self._next_block)
        return []

    def _whole_done(self, output: int, item: CompactionItem | ServerCallItem) -> list[StreamEvent]:
        index = self._whole.pop(output, None)
        reserved = 1 if index is None or item["type"] == "compaction" else 2
        if index is None:  # never announced: numbered now
            index = self._new_block()
        blocks = whole_item_blocks(item, index, f"stream.output[{output}]", self._read)
        if len(blocks) > reserved:
            self._new_block()  # numbered now, right after the call (nothing came between)
        elif (
            len(blocks) < reserved and self._next_block == index + reserved and not self._placed_after(index)
        ):
            self._next_block -= 1  # the result index no one used, given back
        return [BlockEvent(type="block", index=index + i, block=b) for i, b in enumerate(blocks)]

    def _placed_after(self, index: int) -> bool:
        """Whether an item with no block was kept at a position past `index` + 1 (the
        result index cannot be given back then: that position counts it)."""
        return any(o["at"] > index + 1 for o in self._read.other_items)

    def _call_done(self, output: int, item: FunctionCallItem) -> list[StreamEvent]:
        call = self._calls.get(output)
        if call is None:  # never announced: start it now, whole
            events = self._added({"type": "response.output_item.added", "output_index": output, "item": item})
            return [*events, ToolUseEndEvent(type="tool_use_end", index=self._calls[output].block)]
        if not call.arguments and item["arguments"]:
            call.arguments.append(item["arguments"])
            return [
                ToolUseInputDeltaEvent(
                    type="tool_use_input_delta", index=call.block, partial_json=item["arguments"]
                ),
                ToolUseEndEvent(type="tool_use_end", index=call.block),
            ]
        return [ToolUseEndEvent(type="tool_use_end", index=call.block)]

    def _reasoning_done(self, output: int, item: ReasoningItem) -> list[StreamEvent]:
        block = self._thinking.get(output)
        encrypted = item.get("encrypted_content") or None
        events: list[StreamEvent] = []
        if block is None:
            text = reasoning_text(item)
            if not text and not encrypted:
                self._read.other_items.append({"at": self._next_block, "item": dict(item)})
                return []
            block = self._thinking[output] = self._new_block()
            if text:
                events.append(ThinkingDeltaEvent(type="thinking_delta", index=block, text=text))
            else:
                events.append(ThinkingDeltaEvent(type="thinking_delta", index=block, redacted_data=encrypted))
                encrypted = None
        if encrypted:
            events.append(ThinkingDeltaEvent(type="thinking_delta", index=block, signature=encrypted))
        self._read.reasoning[str(block)] = replay_item(item)
        return events

    def _message_done(self, output: int, item: MessageItem) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for j, sent in enumerate(message_parts(item)):
            collected = self._annotations.pop((output, j), None)
            # The done part's annotations, else those a server sent as events only.
            part: Part = (
                {**sent, "annotations": collected} if collected and "annotations" not in sent else sent
            )
            known = (output, j) in self._parts
            index = self._parts.get((output, j), self._next_block)
            block = message_part(
                part, index, f"stream.output[{output}].content[{j}]", self._read, phase=item.get("phase")
            )
            if block is None:
                continue
            self._part_block(output, j)
            if block.citations or not known:
                # What the deltas could not say (citations), or a part that streamed none
                # (an empty text, a server that sends items whole): the whole block.
                events.append(BlockEvent(type="block", index=index, block=block))
        return events

    def _finished(self, response: Response) -> list[StreamEvent]:
        self._stopped = True
        self._meta.update(response_meta(response))
        events: list[StreamEvent] = []
        if self._next_block == 0:
            events.append(TextDeltaEvent(type="text_delta", index=self._new_block(), text=""))
        usage = response.get("usage")
        if usage:
            events.append(usage_event(normalize_usage(PROVIDER, usage)))
        details = response.get("incomplete_details") or {}
        events.append(
            MessageCompleteEvent(
                type="message_complete",
                stop_reason=stop_reason(
                    self.facts, response, calls=self._read.calls, refused=self._read.refused
                ),
                provider_stop_reason=details.get("reason") or response.get("status"),
                # an id or model that is not text (the wire declares neither) is not named
                response_id=_text(self._meta.get("id")),
                provider_model=_text(self._meta.get("model")),
            )
        )
        return events

    def _error(self, detail: ErrorDetail) -> list[StreamEvent]:
        self._stopped = True
        # OpenAI `error` events carry no `type`: the row's error hook reads their `code` as the kind.
        return [error_event(self.facts, {"error": detail}, path="stream")]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["ResponsesStreamDecoder"]
