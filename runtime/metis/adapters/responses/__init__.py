"""The OpenAI Responses API and Open Responses servers (`POST {base}/responses`).

One wire format, two dialect rows (`facts`): OpenAI's endpoint and any other Open
Responses server, picked by base URL (the client merges `custom_server_extra` for a base
URL other than OpenAI's). Stateless: every request carries the whole history as input
items, reasoning goes back as encrypted_content to the model that produced it, so
`store: false` works.

By direction, as the other adapter packages:

- `wire`: the declared wire objects, read through `reader.read`;
- `facts`: the two `ProviderFacts` rows (`DIALECTS`);
- `to_wire`: canonical -> request body (`write_request`);
- `from_wire`: response object -> canonical message (`read_response`);
- `importer`: recorded request -> `WireImport` (`import_request`);
- `stream`: semantic SSE events -> StreamEvents (`ResponsesStreamDecoder`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from metis_schema.v3 import Message

from ...assembly import RequestContext
from ...ids import ToolIdMap
from .._kit.base import Adapter, StreamDecoder, WireBody, WireImport
from .._kit.facts import ProviderFacts
from .._kit.reply import ReplyEncoder, ReplyOptions
from .facts import DIALECTS, OPEN_RESPONSES, OPENAI, PROVIDER
from .from_wire import read_response
from .importer import import_request
from .reply import ResponsesReplyEncoder, write_reply
from .stream import ResponsesStreamDecoder
from .to_wire import DIRECTIVES, write_request


class ResponsesAdapter(Adapter):
    """The Responses API (see the package doc)."""

    name: ClassVar[str] = PROVIDER
    facts: ClassVar[ProviderFacts] = OPENAI
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    custom_server_extra: ClassVar[dict[str, Any]] = {DIRECTIVES: {"dialect": OPEN_RESPONSES.dialect}}

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/responses`; the model travels in the body."""
        return base_url.rstrip("/") + "/responses"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """`Authorization: Bearer <key>`; none for keyless local servers."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    write_request = staticmethod(write_request)
    """Canonical messages -> a request body (conventions: `responses.to_wire`)."""

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """A response object -> one canonical ASSISTANT message (conventions: `responses.from_wire`)."""
        return read_response(OPENAI, body, context)

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """Semantic SSE events -> canonical events; see `ResponsesStreamDecoder`."""
        return ResponsesStreamDecoder(OPENAI, context)

    def to_wire_reply(self, message: Message, reply: ReplyOptions) -> WireBody:
        """A whole `response` object (`reply.write_reply`)."""
        return write_reply(message, reply)

    def reply_encoder(self, reply: ReplyOptions) -> ReplyEncoder:
        """Responses SSE from canonical events (`reply.ResponsesReplyEncoder`)."""
        return ResponsesReplyEncoder(reply)

    def import_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded request -> canonical messages, tools and options (conventions: `responses.importer`)."""
        return import_request(OPENAI, body, session_id=session_id, tool_ids=tool_ids)


ADAPTER = ResponsesAdapter()

__all__ = [
    "ADAPTER",
    "DIALECTS",
    "OPENAI",
    "OPEN_RESPONSES",
    "ResponsesAdapter",
    "ResponsesStreamDecoder",
]
