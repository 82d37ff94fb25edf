"""Ollama's native chat API (`POST {base}/api/chat`) <-> canonical messages.

One module per direction, as vercel/ai's provider packages are split:

- `wire`: the wire objects, declared once (every read of Ollama JSON is checked by them);
- `facts`: the facts row (stop reasons, error kinds and retryability, options);
- `to_wire`: canonical messages -> request body (its module docstring has the wire rules);
- `from_wire`: a response body -> canonical message;
- `importer`: a recorded request body -> canonical messages, tools, options;
- `stream`: NDJSON stream -> canonical events (`OllamaStreamDecoder`).

Errors are `{"error": "<string>"}`, also as a line mid-stream; the base adapter reads them
through `FACTS`.
"""

from __future__ import annotations

from typing import ClassVar

from metis_schema.v3 import Message

from ...assembly import RequestContext
from .._kit.base import Adapter, StreamDecoder, WireBody
from .._kit.facts import ProviderFacts
from .facts import FACTS, NAME
from .from_wire import read_response
from .importer import import_request as _import_request
from .stream import OllamaStreamDecoder
from .to_wire import TEXT_JOIN
from .to_wire import write_request as _write_request


class OllamaAdapter(Adapter):
    """Ollama native `/api/chat` (see the `to_wire` module docstring for the wire rules)."""

    name: ClassVar[str] = NAME
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "http://localhost:11434"
    api_key_env: ClassVar[str | None] = None
    optional_api_key_env: ClassVar[str | None] = "OLLAMA_API_KEY"
    """A local server needs no key; ollama.com takes this one as a Bearer token when it is set."""

    write_request = staticmethod(_write_request)
    """`{model, messages, tools?, stream, options?, format?, think?}`, then Ollama's own
    options and `options.extra` deep-merged on top."""
    import_request = staticmethod(_import_request)
    """A recorded /api/chat body -> canonical messages, tools and options (see `importer`)."""

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """A `stream: false` response -> one assistant message (thinking, text, tool calls)."""
        return read_response(body, context)

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """A decoder for one NDJSON response body."""
        return OllamaStreamDecoder(context)

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/api/chat`; a base that already ends in `/api` (https://ollama.com/api) is kept."""
        base = base_url.rstrip("/")
        return f"{base}/chat" if base.endswith("/api") else f"{base}/api/chat"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """None for a local server; a Bearer token for ollama.com."""
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}


ADAPTER = OllamaAdapter()

__all__ = ["ADAPTER", "FACTS", "TEXT_JOIN", "OllamaAdapter", "OllamaStreamDecoder"]
