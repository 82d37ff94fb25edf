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

from collections.abc import Sequence
from typing import ClassVar

from metis_schema.v3 import Message, ToolDefinition

from ...assembly import RequestContext
from ...ids import ToolIdMap
from .._kit.base import Adapter, AdapterOptions, StreamDecoder, WireBody, WireImport
from .._kit.facts import ProviderFacts
from .._kit.reply import ReplyEncoder, ReplyOptions
from .facts import FINISH_REASONS, chat_facts, stop_reason
from .from_wire import read_response
from .importer import import_request
from .reply import ChatReplyEncoder, write_reply
from .stream import ChatStreamDecoder
from .to_wire import write_request
from .wire import canonical_arguments, kept_arguments, raw_arguments_to_keep


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
