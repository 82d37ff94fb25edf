"""Canonical reply -> an OpenAI Chat Completions reply, whole (`write_reply`) or as SSE
chunks (`ChatReplyEncoder`): what `metis serve` answers an OpenAI SDK with.

`choices[0].message` is what `to_wire.write_request` makes of the message as an assistant
message (`adapters._kit.reply` says why); a reply's content is one string, as the API sends
it. A refusal goes in `refusal`, as OpenAI sends one. Usage counts every prompt token in
`prompt_tokens`, the cached ones again in `prompt_tokens_details.cached_tokens`, as
OpenAI does. The stream sends `chat.completion.chunk`s: the role, content and tool-call
deltas (each call by its position among the reply's calls), a last chunk with the finish
reason, a usage chunk when the request asked for one (`stream_options.include_usage`),
then `[DONE]`.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import (
    BlockEvent,
    Message,
    RedactedThinkingBlock,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDeltaEvent,
    ThinkingBlock,
    ToolUseInputDeltaEvent,
    ToolUseStartEvent,
    Usage,
)

from .._kit.base import WireBody
from .._kit.facts import ProviderFacts
from .._kit.losses import Losses
from .._kit.reply import ReplyEncoder, ReplyOptions, StreamBlocks, probe, sse
from .to_wire import write_request

_NO_REASONING = "a Chat Completions reply carries no reasoning (the stored message keeps it)"
_NOT_SENT = "this stream sent nothing for it (the stored message keeps it)"


def finish_reason(facts: ProviderFacts, reason: StopReason | None) -> str:
    """A canonical stop reason as a Chat Completions `finish_reason` (the dialect's row)."""
    return facts.stop_reason_to_wire(reason)


def usage(facts: ProviderFacts, counts: Usage | None) -> dict[str, Any]:
    """Canonical usage -> Chat's `usage` (the prompt count as the dialect's usage rule
    reads it: including the cached tokens)."""
    prompt = facts.reported_prompt(counts)
    completion = counts.output_tokens if counts else 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": counts.cached_input_tokens if counts else 0},
    }


def assistant(name: str, facts: ProviderFacts, message: Message, reply: ReplyOptions) -> dict[str, Any]:
    """The message as a Chat reply's assistant message: tool calls as the request writer
    writes them (ids the client sends back, arguments), and the content as one string, the
    text blocks joined as they streamed (the request writer's paragraph breaks between
    blocks are for history; a reply's text is one answer, often split only by citations)."""
    written = write_request(name, facts, [message], [], reply.options)["messages"]
    wire = written[0] if written else {}
    text = "".join(block.text for block in message.content if isinstance(block, TextBlock)) or None
    out: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if wire.get("tool_calls"):
        out["tool_calls"] = wire["tool_calls"]
    if message.metadata.stop_reason is StopReason.refusal and text:
        out["refusal"], out["content"] = text, None
    return out


def write_reply(name: str, facts: ProviderFacts, message: Message, reply: ReplyOptions) -> WireBody:
    """A whole `POST /v1/chat/completions` reply body for `message`."""
    return {
        "id": reply.reply_id,
        "object": "chat.completion",
        "created": reply.created,
        "model": reply.model_name,
        "choices": [
            {
                "index": 0,
                "message": assistant(name, facts, message, reply),
                "finish_reason": finish_reason(facts, message.metadata.stop_reason),
                "logprobs": None,
            }
        ],
        "usage": usage(facts, message.metadata.usage),
    }


class ChatReplyEncoder(ReplyEncoder):
    """Canonical stream events -> `chat.completion.chunk` SSE."""

    def __init__(self, name: str, facts: ProviderFacts, reply: ReplyOptions) -> None:
        self._name = name
        self._facts = facts
        self._reply = reply
        self._calls: dict[int, int] = {}
        """Canonical block index -> the call's position among this reply's tool calls."""
        self._texts: set[int] = set()
        """Indexes whose text streamed as deltas (a whole text block there adds nothing)."""
        self._whole: set[int] = set()
        """Indexes of blocks that arrived whole (rendered, and any drop said, as they came)."""
        self._blocks = StreamBlocks()

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return self._frame([choice])

    def _frame(self, choices: list[dict[str, Any]], **fields: Any) -> bytes:
        """One `chat.completion.chunk`: the reply's id, time and model, and `choices`."""
        return sse(
            {
                "id": self._reply.reply_id,
                "object": "chat.completion.chunk",
                "created": self._reply.created,
                "model": self._reply.model_name,
                "choices": choices,
                **fields,
            }
        )

    def start(self) -> bytes:
        return self._chunk({"role": "assistant"})  # content comes with the first text, if any

    def feed(self, event: StreamEvent) -> bytes:
        self._blocks.note(event)
        if isinstance(event, TextDeltaEvent):
            self._texts.add(event.index)
            return self._chunk({"content": event.text}) if event.text else b""
        if isinstance(event, ToolUseStartEvent):
            position = self._calls.setdefault(event.index, len(self._calls))
            call_id = self._reply.options.tool_ids.outgoing(event.id, self._name)
            call = {
                "index": position,
                "id": call_id,
                "type": "function",
                "function": {"name": event.name, "arguments": ""},
            }
            return self._chunk({"tool_calls": [call]})
        if isinstance(event, ToolUseInputDeltaEvent) and event.index in self._calls:
            call = {"index": self._calls[event.index], "function": {"arguments": event.partial_json}}
            return self._chunk({"tool_calls": [call]}) if event.partial_json else b""
        if isinstance(event, BlockEvent):
            # rendered as it comes, its drop or its citations' said by the writer; a text
            # whole again where it streamed (with its citations) adds no text
            with probe(event.block, event.index, self._reply) as message:
                text = assistant(self._name, self._facts, message, self._reply).get("content")
            if event.index in self._texts:
                return b""
            self._whole.add(event.index)
            return self._chunk({"content": text}) if text else b""
        return b""  # reasoning has no Chat reply field: `finish` says its drop

    def finish(self, message: Message) -> bytes:
        losses = Losses(self._name, self._reply.options.session_id)
        for index, block in self._blocks.unsaid(message, {*self._texts, *self._calls, *self._whole}):
            reasoning = isinstance(block, ThinkingBlock | RedactedThinkingBlock)
            losses.block(message, index, block.type, _NO_REASONING if reasoning else _NOT_SENT)
        out = self._chunk({}, finish_reason(self._facts, message.metadata.stop_reason))
        if self._reply.include_usage:
            out += self._frame([], usage=usage(self._facts, message.metadata.usage))
        return out + b"data: [DONE]\n\n"

    def fail(self, code: str, message: str) -> bytes:
        return sse({"error": {"message": message, "type": code or "api_error", "param": None, "code": code}})
