"""The OpenAI Chat Completions wire format, written once for every server that speaks it.

OpenAI, OpenRouter and the OpenAI-compatible servers (llama.cpp, vLLM, Ollama's `/v1`)
share one request, reply and stream shape. What differs between them is data: a
`ProviderFacts` row (with its Chat fields) that each provider module declares; the
mapping reads the row and has no per-provider branches of its own.

By direction, as vercel/ai's provider packages are split:

- `wire`: the declared wire objects, read through `reader.read`;
- `facts`: `chat_facts` (what every dialect row shares), the finish reasons and tool-choice table;
- `to_wire`: canonical -> request body (`write_request`);
- `media`: image, document, audio and video blocks <-> content parts, both directions;
- `from_wire`: reply body -> canonical message (`read_response`);
- `importer`: recorded request -> `WireImport` (`import_request`);
- `stream`: SSE -> StreamEvents (`ChatStreamDecoder`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from metis_schema.v3 import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
)

from ... import _json
from ...assembly import RequestContext
from ...ids import ToolIdMap
from .._kit.base import Adapter, AdapterOptions, StreamDecoder, WireBody, WireImport
from .._kit.facts import ProviderFacts
from .._kit.importing import function_tool
from .._kit.reply import ReplyEncoder, ReplyOptions
from .facts import FINISH_REASONS, chat_facts, stop_reason
from .from_wire import read_response
from .importer import import_request
from .reply import ChatReplyEncoder, write_reply
from .stream import ChatStreamDecoder
from .to_wire import write_request
from .wire import canonical_arguments, kept_arguments, raw_arguments_to_keep

_IMAGE_TOKENS = 765  # OpenAI's price of one 1024x1024 high-detail image; a deliberate upper guess
_CHARS_PER_TOKEN = 4
_TOKENS_PER_MESSAGE = 4
_PRIMING_TOKENS = 3


class ChatCompletionsAdapter(Adapter):
    """Chat Completions (`POST {base}/chat/completions`, Bearer auth), read through `facts`.

    A provider module subclasses it with its `name` and its dialect's row, `facts` (which
    the base adapter reads for errors too).
    """

    facts: ClassVar[ProviderFacts]

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/chat/completions`; the model travels in the body."""
        return base_url.rstrip("/") + "/chat/completions"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """`Authorization: Bearer <key>`; none for keyless local servers."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def write_request(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> a request body (conventions: `chat.to_wire`)."""
        return write_request(self.name, self.facts, messages, tools, options)

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """`choices[0].message` -> one canonical ASSISTANT message (conventions: `chat.from_wire`)."""
        return read_response(self.name, self.facts, body, context)

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """SSE `data:` chunks (`[DONE]`-terminated) -> canonical events; see `ChatStreamDecoder`."""
        return ChatStreamDecoder(self.name, self.facts, context)

    def to_wire_reply(self, message: Message, reply: ReplyOptions) -> WireBody:
        """A whole `chat.completion` (`reply.write_reply`)."""
        return write_reply(self.name, self.facts, message, reply)

    def reply_encoder(self, reply: ReplyOptions) -> ReplyEncoder:
        """`chat.completion.chunk` SSE from canonical events (`reply.ChatReplyEncoder`)."""
        return ChatReplyEncoder(self.name, self.facts, reply)

    def import_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded request -> canonical messages, tools and options (conventions: `chat.importer`)."""
        return import_request(self.name, self.facts, body, session_id=session_id, tool_ids=tool_ids)

    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """Pre-flight estimate: ceil(characters / 4) over what would be sent, plus overheads.

        Counted: text of system, user, assistant and tool-result blocks; tool names and
        compact JSON inputs; the JSON of the tool definitions; the reasoning text of this
        provider's own replies where the dialect replays reasoning (an upper guess: it goes
        only to the model that wrote it).
        Each message adds 4 tokens (role and framing), the reply primer 3, each image 765
        (OpenAI's price of a 1024x1024 high-detail image: an upper guess, since sizes are
        unknown here). The measured error against the usage of the
        recorded-shape fixtures is asserted in tests/adapters/test_openai_adapter.py.
        """
        chars = sum(len(_json.dumps(function_tool(t))) for t in tools)
        images = 0
        for message in messages:
            replayable = self._replays_reasoning(message)
            for block in message.content:
                inner = block.content if isinstance(block, ToolResultBlock) else [block]
                for part in inner:
                    chars += self._estimate_chars(part, replayable)
                    images += isinstance(part, ImageBlock)
        text_tokens = math.ceil(chars / _CHARS_PER_TOKEN)
        return text_tokens + images * _IMAGE_TOKENS + _TOKENS_PER_MESSAGE * len(messages) + _PRIMING_TOKENS

    def _replays_reasoning(self, message: Message) -> bool:
        """Whether this dialect could send `message`'s reasoning back: its own reply's, where
        the row replays reasoning at all (the model is not known here: an upper guess)."""
        facts = self.facts
        replays = facts.reasoning_details or facts.replays_plain_reasoning or facts.thinking_parts
        return replays and message.metadata.provider == self.name

    def _estimate_chars(self, block: ContentBlock, replayable: bool) -> int:
        if isinstance(block, TextBlock):
            return len(block.text)
        if isinstance(block, ToolUseBlock):
            return len(block.name) + len(canonical_arguments(block.input))
        if isinstance(block, ThinkingBlock) and replayable:
            return len(block.text)
        return 0


__all__ = [
    "FINISH_REASONS",
    "ChatCompletionsAdapter",
    "ChatStreamDecoder",
    "canonical_arguments",
    "chat_facts",
    "kept_arguments",
    "raw_arguments_to_keep",
    "stop_reason",
]
