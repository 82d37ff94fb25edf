"""Canonical reply -> an OpenAI Responses (Open Responses) reply, whole (`write_reply`)
or as SSE (`ResponsesReplyEncoder`): what `metis serve` answers a Responses client with.

`output` holds what `to_wire.write_request` makes of the message as assistant input items
(`adapters._kit.reply` says why), turned into their output form: a text becomes a `message`
item holding one `output_text` part, and every item gets the id and status a reply's
items carry. Ids are `<kind>_<reply id>_<position>`, so the stream and the whole reply
name the same items. Usage counts every input token, the cached ones again in
`input_tokens_details`. The stream is Responses' event sequence, each event numbered:
`response.created`, `response.in_progress`, per item `output_item.added`, its part and
text or argument deltas and their `.done` events, `output_item.done`, then
`response.completed` (or `response.incomplete`) holding the reply with the items streamed.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import (
    BlockEvent,
    Message,
    StopReason,
    StreamEvent,
    TextDeltaEvent,
    ToolUseEndEvent,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    Usage,
)

from .._kit.base import WireBody
from .._kit.losses import Losses
from .._kit.reply import ReplyEncoder, ReplyOptions, StreamBlocks, left_out_of_stream, probe, sse
from .facts import FACTS, PROVIDER
from .to_wire import write_request

_INCOMPLETE = {
    StopReason.max_tokens: "max_output_tokens",
    StopReason.context_window_exceeded: "max_output_tokens",
    StopReason.content_filter: "content_filter",
}
"""Canonical stop reasons that make a Responses reply `incomplete`, with the reason it names."""


_NO_ITEM = "a streamed Responses reply writes no item for it (the stored message keeps it)"
"""Why a block this stream never wrote is dropped from it: reasoning, whose item a whole reply
replays from what the message kept (never another provider's), which a stream does not have."""

_ERROR_CODES = frozenset({"server_error", "rate_limit_exceeded", "invalid_prompt"})
"""Codes a failed response's `error` may name (the API's list); anything else from upstream
is a server error there, and keeps its own code in the `error` event before it."""


def usage(counts: Usage | None) -> dict[str, Any]:
    """Canonical usage -> Responses `usage` (input tokens as the usage rule reads them:
    including the cached ones)."""
    prompt = FACTS.reported_prompt(counts)
    output = counts.output_tokens if counts else 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": counts.cached_input_tokens if counts else 0,
            "cache_write_tokens": counts.cache_creation_input_tokens if counts else 0,
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }


def _item_id(kind: str, reply: ReplyOptions, position: int) -> str:
    return f"{kind}_{reply.reply_id.removeprefix('resp_')}_{position}"


def output_item(item: dict[str, Any], reply: ReplyOptions, position: int) -> dict[str, Any]:
    """An assistant input item as the reply's output item (ids, status, output parts)."""
    kind = item.get("type")
    if kind == "message":
        text = item.get("content")
        parts = text if isinstance(text, list) else [{"type": "output_text", "text": text or ""}]
        out: dict[str, Any] = {
            "type": "message",
            "id": item.get("id") or _item_id("msg", reply, position),
            "role": "assistant",
            "status": "completed",
            "content": [{"annotations": [], **part} for part in parts],
        }
        if "phase" in item:
            out["phase"] = item["phase"]
        return out
    if kind == "function_call":
        return {"id": _item_id("fc", reply, position), "status": "completed", **item}
    return item  # this provider's own items, kept whole for replay, go back as they came


def output(message: Message, reply: ReplyOptions) -> list[dict[str, Any]]:
    """The message as a reply's `output` items."""
    items = write_request([message], [], reply.options)["input"]
    return [output_item(item, reply, position) for position, item in enumerate(items)]


def envelope(reply: ReplyOptions, status: str) -> dict[str, Any]:
    """A `response` object with no output yet: what a stream opens with, and what a whole
    reply fills in. It holds every field Open Responses' `ResponseResource` requires; the
    sampling settings are the API's documented defaults (the writer is not given the
    request, so it echoes none of it: `tools` empty, `instructions` null)."""
    return {
        "id": reply.reply_id,
        "object": "response",
        "created_at": reply.created,
        "completed_at": None,
        "status": status,
        "incomplete_details": None,
        "model": reply.model_name,
        "previous_response_id": None,
        "instructions": None,
        "output": [],
        "error": None,
        "tools": [],
        "tool_choice": "auto",
        "truncation": "disabled",
        "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}},
        "top_p": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "top_logprobs": 0,
        "temperature": 1.0,
        "reasoning": None,
        "usage": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "store": True,
        "background": False,
        "service_tier": "default",
        "metadata": {},
        "safety_identifier": None,
        "prompt_cache_key": None,
    }


def write_reply(message: Message, reply: ReplyOptions) -> WireBody:
    """A whole `POST /v1/responses` reply body for `message`."""
    return closed(message, reply, output(message, reply))


def closed(message: Message, reply: ReplyOptions, items: list[dict[str, Any]]) -> WireBody:
    """The reply to `message` holding `items` as its output: status, usage, completion time
    (completed when the message was: its `created_at`, the time the reply was stored)."""
    reason = message.metadata.stop_reason
    incomplete = _INCOMPLETE.get(reason) if reason is not None else None
    body = envelope(reply, "incomplete" if incomplete else "completed")
    body["output"] = items
    body["incomplete_details"] = {"reason": incomplete} if incomplete else None
    if not incomplete:
        body["completed_at"] = int(message.created_at.timestamp())
    body["usage"] = usage(message.metadata.usage)
    return body


class ResponsesReplyEncoder(ReplyEncoder):
    """Canonical stream events -> Responses SSE, one output item open at a time."""

    def __init__(self, reply: ReplyOptions) -> None:
        self._reply = reply
        self._sequence = 0
        self._position = 0
        self._open: tuple[int, dict[str, Any], list[str]] | None = None
        """The open item: its canonical index, the item, and its text or arguments so far."""
        self._seen: set[int] = set()
        """Canonical indexes an item was opened for, or whose drop was said."""
        self._blocks = StreamBlocks()
        self._done: list[dict[str, Any]] = []
        """Every item sent whole (`output_item.done`), in order: the closing event's output."""

    def _event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        return sse(data, kind)

    def start(self) -> bytes:
        return self._event("response.created", response=envelope(self._reply, "in_progress")) + self._event(
            "response.in_progress", response=envelope(self._reply, "in_progress")
        )

    def feed(self, event: StreamEvent) -> bytes:
        self._blocks.note(event)
        if isinstance(event, TextDeltaEvent):
            out = b"" if self._is_open(event.index) else self._open_text(event.index)
            return out + self._text(event.text) if self._is_open(event.index) else out
        if isinstance(event, ToolUseStartEvent):
            call_id = self._reply.options.tool_ids.outgoing(event.id, PROVIDER)
            item = {
                "type": "function_call",
                "id": _item_id("fc", self._reply, self._position),
                "call_id": call_id,
                "name": event.name,
                "arguments": "",
                "status": "in_progress",
            }
            return self._begin(event.index, item)
        if isinstance(event, ToolUseInputDeltaEvent) and self._is_open(event.index) and event.partial_json:
            assert self._open is not None
            self._open[2].append(event.partial_json)
            item_id = self._open[1]["id"]
            return self._event(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=self._position - 1,
                delta=event.partial_json,
            )
        if isinstance(event, ToolUseEndEvent):
            return self._close()
        if isinstance(event, BlockEvent):
            return (
                self._whole(event.index, event.block) if event.index not in self._seen else self._again(event)
            )
        return b""  # reasoning has no item in this stream: `finish` says its drop

    def finish(self, message: Message) -> bytes:
        """The closing event holds the reply with the items this stream sent (a client that
        reads only the last event and one that gathers the items agree); each block the
        stream never wrote nor said the drop of (reasoning) is said dropped, once."""
        closing = self._close()
        losses = Losses(PROVIDER, self._reply.options.session_id)
        for index, block in self._blocks.unsaid(message, self._seen):
            losses.block(message, index, block.type, _NO_ITEM)
        body = closed(message, self._reply, list(self._done))
        kind = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
        return closing + self._event(kind, response=body)

    def fail(self, code: str, message: str) -> bytes:
        failed = envelope(self._reply, "failed")
        failed["error"] = {"code": code if code in _ERROR_CODES else "server_error", "message": message}
        return (
            self._close()
            + self._event("error", code=code, message=message, param=None)
            + self._event("response.failed", response=failed)
        )

    # --- items, in index order ---------------------------------------------------------------

    def _is_open(self, index: int) -> bool:
        return self._open is not None and self._open[0] == index

    def _begin(self, index: int, item: dict[str, Any], *, fresh: bool = False) -> bytes:
        """Open `item` for canonical block `index` (`fresh`: one more item of a block that
        arrived whole, which may make several)."""
        if index in self._seen and not fresh:
            return b""  # a late event of an item already closed
        out = self._close()
        self._seen.add(index)
        self._open = (index, item, [])
        out += self._event("response.output_item.added", output_index=self._position, item=item)
        self._position += 1
        return out

    def _open_text(self, index: int, *, fresh: bool = False) -> bytes:
        item = {
            "type": "message",
            "id": _item_id("msg", self._reply, self._position),
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        out = self._begin(index, item, fresh=fresh)
        if not self._is_open(index):
            return out
        part = {"type": "output_text", "text": "", "annotations": []}
        return out + self._event(
            "response.content_part.added",
            item_id=item["id"],
            output_index=self._position - 1,
            content_index=0,
            part=part,
        )

    def _text(self, text: str) -> bytes:
        assert self._open is not None
        self._open[2].append(text)
        return self._event(
            "response.output_text.delta",
            item_id=self._open[1]["id"],
            output_index=self._position - 1,
            content_index=0,
            delta=text,
            logprobs=[],
        )

    def _close(self) -> bytes:
        if self._open is None:
            return b""
        _, item, pieces = self._open
        self._open = None
        position = self._position - 1
        joined = "".join(pieces)
        out = b""
        if item["type"] == "message":
            part = {"type": "output_text", "text": joined, "annotations": []}
            out += self._event(
                "response.output_text.done",
                item_id=item["id"],
                output_index=position,
                content_index=0,
                text=joined,
                logprobs=[],
            )
            out += self._event(
                "response.content_part.done",
                item_id=item["id"],
                output_index=position,
                content_index=0,
                part=part,
            )
            item = {**item, "status": "completed", "content": [part]}
        elif item["type"] == "function_call":
            out += self._event(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=position,
                arguments=joined,
            )
            item = {**item, "status": "completed", "arguments": joined}
        self._done.append(item)
        return out + self._event("response.output_item.done", output_index=position, item=item)

    def _again(self, event: BlockEvent) -> bytes:
        """A block sent again whole where its text streamed (with its citations): nothing
        more to write, as the whole reply's items carry no annotations; its writer says what
        of the block this reply loses."""
        with probe(event.block, event.index, self._reply) as message:
            write_request([message], [], self._reply.options)
        return b""

    def _whole(self, index: int, block: Any) -> bytes:
        """A block delivered whole: its items as the whole reply writes them (none when this
        client cannot take it: the writer drops it with its WARN)."""
        out = b""
        self._seen.add(index)  # written below, or its drop said
        if left_out_of_stream(block, index, self._reply, PROVIDER):
            return out
        with probe(block, index, self._reply) as message:
            items = write_request([message], [], self._reply.options)["input"]
        for item in items:
            wire = output_item(item, self._reply, self._position)
            if wire.get("type") == "message":
                out += self._open_text(index, fresh=True)
                text = "".join(part.get("text", "") for part in wire["content"])
                if text and self._is_open(index):
                    out += self._text(text)
                out += self._close()
            else:
                out += self._begin(index, wire, fresh=True) + self._close()
        return out
