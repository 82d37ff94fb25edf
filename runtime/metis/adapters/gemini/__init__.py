"""Google Gemini `generateContent` / `streamGenerateContent` (AI Studio, v1beta) <-> canonical.

Split by direction (provider-wire-formats.md §3, google-genai 3.4 `types.py`):

- `wire`: Gemini's wire objects, declared once (camelCase or snake_case keys);
- `facts`: the facts row (stop reasons by name and proto number, error envelope, retryable
  statuses, tool choice, option fields);
- `to_wire`: canonical messages -> request body (`write_request`);
- `from_wire`: response body -> canonical message (`read_response`; the part folding streams share);
- `importer`: recorded request body -> `WireImport` (`import_request`);
- `declarations`: tool schemas between `parameters` (Gemini's OpenAPI subset), `parametersJsonSchema`
  and the canonical JSON Schema;
- `stream`: `GeminiStreamDecoder`, SSE or JSON-array streams -> canonical events.
"""

from __future__ import annotations

from typing import ClassVar

from metis_schema.v3 import Message

from ...assembly import RequestContext
from ...ids import ToolIdMap
from .._kit.base import Adapter, StreamDecoder, WireBody, WireImport
from .._kit.facts import ProviderFacts
from .facts import DEFAULT_IMPORT_MODEL, ENDPOINT_KIND, FACTS, NAME, SKIP_SIGNATURE
from .from_wire import read_response
from .importer import import_request as _import_request
from .stream import GeminiStreamDecoder
from .to_wire import write_request as _write_request


class GeminiAdapter(Adapter):
    """Google Gemini through AI Studio's generateContent REST API (see the module docstring)."""

    name: ClassVar[str] = NAME
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"
    api_key_env: ClassVar[str | None] = "GEMINI_API_KEY"
    fallback_api_key_envs: ClassVar[tuple[str, ...]] = ("GOOGLE_API_KEY",)
    """Google's SDK also reads GOOGLE_API_KEY; either holds an AI Studio key."""

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """`{base}/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` (SSE)."""
        model = wire_model.removeprefix("models/")
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"{base_url.rstrip('/')}/models/{model}:{method}"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """AI Studio keys travel in `x-goog-api-key` (never in the URL, where logs keep them)."""
        return {"x-goog-api-key": api_key} if api_key else {}

    write_request = staticmethod(_write_request)

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        return read_response(body, context)

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        return GeminiStreamDecoder(context)

    def from_wire_request(
        self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap, model: str | None = None
    ) -> WireImport:
        """A recorded request body -> canonical messages, tools and options (`importer`); the
        model is in Gemini's URL, not its body: pass `model` (else DEFAULT_IMPORT_MODEL)."""
        return self._import(body, session_id=session_id, tool_ids=tool_ids, model=model)

    import_request = staticmethod(_import_request)


ADAPTER = GeminiAdapter()

__all__ = [
    "ADAPTER",
    "DEFAULT_IMPORT_MODEL",
    "ENDPOINT_KIND",
    "SKIP_SIGNATURE",
    "GeminiAdapter",
    "GeminiStreamDecoder",
]
