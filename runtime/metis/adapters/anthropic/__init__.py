"""Anthropic Messages API (`POST /v1/messages`) <-> canonical messages.

Split by direction, as vercel/ai's provider packages are: `wire` declares the API's JSON
objects once, `facts` is the provider's facts row, `to_wire` writes requests, `from_wire`
reads replies, `importer` reads recorded requests, `stream` decodes SSE, `reply` writes
replies (whole and streamed) for Anthropic clients, `betas` derives the `anthropic-beta`
header from a body, and `provider_raw` keeps in provider_raw what an exact replay needs
beyond the canonical blocks. The schema v2 blocks each have their module, read and written
in one place for every direction: `citations` (text citations), `documents` (documents and
search results) and `server_tools` (server tool calls and results, compaction);
cache_control <-> cache_point is the shared `_kit.cache_points`.
This module only assembles the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from metis_schema.v3 import Message, StopReason

from ...assembly import RequestContext
from .._kit.base import Adapter, StreamDecoder, WireBody
from .._kit.facts import ProviderFacts
from .._kit.reply import ReplyEncoder, ReplyOptions
from .betas import beta_headers
from .facts import FACTS, PROVIDER
from .from_wire import read_response
from .importer import import_request as _import_request
from .reply import AnthropicReplyEncoder, write_reply
from .stream import AnthropicStreamDecoder
from .to_wire import write_request as _write_request

API_VERSION = "2023-06-01"
"""The `anthropic-version` header every request carries."""

STOP_REASONS: Mapping[str, StopReason] = FACTS.stop_reasons
"""Anthropic `stop_reason` -> canonical (the facts row's table)."""


class AnthropicAdapter(Adapter):
    """The Anthropic Messages API (see the package modules for the mapping decisions)."""

    name: ClassVar[str] = PROVIDER
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    api_key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"

    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        base = base_url.rstrip("/")
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def request_headers(self, body: WireBody) -> dict[str, str]:
        return beta_headers(body)

    write_request = staticmethod(_write_request)
    import_request = staticmethod(_import_request)

    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        return read_response(body, context)

    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        return AnthropicStreamDecoder(context)

    def to_wire_reply(self, message: Message, reply: ReplyOptions) -> WireBody:
        """A whole Messages reply (`reply.write_reply`)."""
        return write_reply(message, reply)

    def reply_encoder(self, reply: ReplyOptions) -> ReplyEncoder:
        """Messages SSE from canonical events (`reply.AnthropicReplyEncoder`)."""
        return AnthropicReplyEncoder(reply)


ADAPTER = AnthropicAdapter()

__all__ = ["ADAPTER", "API_VERSION", "FACTS", "STOP_REASONS", "AnthropicAdapter", "AnthropicStreamDecoder"]
