"""The adapter contract (spec §7.1): pure translation between canonical and wire formats.

An adapter does no I/O: no network, no storage, no clock reads that matter. The HTTP
client sends what `to_wire` built and hands the body or the raw stream back to
`from_wire_response` / `stream_response`. Per-session state (the tool id map, the
workspace root) arrives in `AdapterOptions` / `RequestContext`, never in globals.
Subclasses implement the abstract operations and a `StreamDecoder`; this base derives
sync and async streaming, stream assembly and capability lookup from them, and wraps the
two bulk directions once: `to_wire` runs the subclass's `write_request` and
`from_wire_request` its `import_request` with the cyclic collector paused (`_gc.bulk`),
the import inside `ToolIdMap.importing()` (a history imported again keeps its ids).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from metis_schema.v3 import AdapterCapabilities, Message, StreamEvent, ToolDefinition

from ..._gc import bulk
from ...assembly import RequestContext, StreamAssembler
from ...catalog import load_catalog
from ...errors import AdapterError, ProviderError
from ...ids import ToolIdMap
from .estimate import estimate
from .facts import ProviderFacts
from .options import AdapterOptions, OutputSchema

if TYPE_CHECKING:
    from .reply import ReplyEncoder, ReplyOptions

WireBody = dict[str, Any]


@dataclass
class WireImport:
    """A recorded request body read back as canonical messages, tools and options.

    Nothing an import reads is lost silently: every top-level request field that is not a
    message, a tool or a canonical option is kept in `options.provider_options[provider]`
    (replayed to that provider, reported as dropped for any other), and `dropped` lists
    what the import read inside the messages and tools but could not carry
    (`Losses.imported`: `{path, value, reason}` entries, each also a WARN).

    `paths`, in step with `messages`, says where in the body each message was read from
    (`messages[2]`, `system`, `input[3]`; a message several items make: its first), for a
    caller that wrote part of the body itself and must tell its part from the rest (the
    gateway's `previous_response_id` continuation writes the stored history in front of
    the client's input). Every importer fills it; a WireImport not read from a body (`metis
    convert` of a stored session) has none.
    """

    messages: list[Message]
    tools: list[ToolDefinition]
    options: AdapterOptions
    dropped: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


class StreamDecoder(ABC):
    """Raw stream pieces -> canonical StreamEvents for one response."""

    @abstractmethod
    def feed(self, data: bytes | str) -> list[StreamEvent]:
        """Consume one piece of the body (split anywhere) and return the events it completes."""

    @abstractmethod
    def close(self) -> list[StreamEvent]:
        """The body ended: flush what is pending."""

    def provider_raw(self) -> dict[str, Any] | None:
        """Adapter-private replay data gathered from the stream (see `Adapter.from_wire_response`)."""
        return None


FrameT = TypeVar("FrameT")


class Framer(Protocol[FrameT]):
    """What `FramedDecoder` needs of a `framing` framer: frames a piece completes, and the rest."""

    def feed(self, data: bytes | str) -> list[FrameT]: ...

    def close(self) -> list[FrameT]: ...


class FramedDecoder(StreamDecoder, Generic[FrameT]):
    """A decoder over one framer (SSE events, NDJSON lines): `feed` and `close` are the same
    loop for every such provider, so a subclass says only what one frame means (`_frame`),
    what a frame the end of the body completes means where a cut one is read otherwise
    (`_last_frame`), and what the end itself adds (`_at_end`)."""

    _framer: Framer[FrameT]

    @abstractmethod
    def _frame(self, frame: FrameT) -> list[StreamEvent]:
        """The events one complete frame makes."""

    def _last_frame(self, frame: FrameT) -> list[StreamEvent]:
        """A frame completed by the end of the body (`close`); the same as any by default."""
        return self._frame(frame)

    def _at_end(self) -> list[StreamEvent]:
        """Events the end of the body adds after its last frames; none by default."""
        return []

    def feed(self, data: bytes | str) -> list[StreamEvent]:
        return [event for frame in self._framer.feed(data) for event in self._frame(frame)]

    def close(self) -> list[StreamEvent]:
        events = [event for frame in self._framer.close() for event in self._last_frame(frame)]
        events.extend(self._at_end())
        return events


class Adapter(ABC):
    """One provider's wire format. Subclasses set `name` and implement the abstract methods."""

    name: ClassVar[str]
    facts: ClassVar[ProviderFacts]
    """This provider's facts row: stop reasons, error envelope, retryability, tool choice, options."""
    default_base_url: ClassVar[str]
    api_key_env: ClassVar[str | None]
    """The variable the provider's own SDK reads the key from (None: no key needed)."""
    fallback_api_key_envs: ClassVar[tuple[str, ...]] = ()
    """Further variables some SDKs read, in the order they read them."""
    optional_api_key_env: ClassVar[str | None] = None
    """A key used when set but never required (a hosted variant of a keyless server)."""
    custom_server_extra: ClassVar[dict[str, Any]] = {}
    """`AdapterOptions.extra` defaults for a server at a base URL other than the provider's
    own (an OpenAI-compatible llama.cpp server, say); the caller's own `extra` wins."""

    def capabilities(self, model: str) -> AdapterCapabilities:
        """Honest capabilities of `model` through this adapter, from the catalog (spec §7.2)."""
        return load_catalog().resolve(model).capabilities

    def wire_model(self, model: str) -> str:
        """The model name to send on the wire for a canonical id or alias."""
        return load_catalog().resolve(model).wire_model

    @bulk
    def to_wire(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> the provider's JSON request body (`write_request`, bulk work)."""
        return self.write_request(messages, tools, options)

    def from_wire_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded request body -> canonical messages, tools and options (`import_request`)."""
        return self._import(body, session_id=session_id, tool_ids=tool_ids)

    @bulk
    def _import(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap, **more: Any) -> WireImport:
        """`import_request` as bulk work, inside `tool_ids.importing()`: calls the session
        knows keep their ids. `more`: what a provider's import takes besides the body (Gemini:
        the model, which is in its URL)."""
        with tool_ids.importing():
            return self.import_request(body, session_id=session_id, tool_ids=tool_ids, **more)

    @abstractmethod
    def write_request(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> the provider's JSON request body (called by `to_wire`)."""

    @abstractmethod
    def import_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded request body -> canonical messages, tools and options (called by
        `from_wire_request`, inside `tool_ids.importing()`)."""

    @abstractmethod
    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """A non-streamed response body -> one COMPLETE canonical ASSISTANT message."""

    @abstractmethod
    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """A fresh decoder for one streamed response."""

    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """Pre-flight input token estimate: the one estimator (`estimate.estimate`) with this
        provider's numbers (`facts.tokens`, which also states the error measured for them)."""
        row = self.facts.tokens
        if row is None:
            raise AdapterError(
                f"{self.name} has no token estimate row (ProviderFacts.tokens)", provider=self.name
            )
        return estimate(row, self.name, messages, tools)

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        """A provider error body -> a typed error carrying the provider's type and message."""
        return self.facts.parse_error(body, status_code)

    @abstractmethod
    def endpoint(self, base_url: str, wire_model: str, *, stream: bool) -> str:
        """The URL to POST the request body to."""

    @abstractmethod
    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        """Headers that carry the API key (never stored)."""

    def request_headers(self, body: WireBody) -> dict[str, str]:
        """Headers this request body needs besides auth (Anthropic: the beta features the
        body uses); none by default."""
        return {}

    # --- replies (the gateway's direction) ---------------------------------------------

    def to_wire_reply(self, message: Message, reply: ReplyOptions) -> WireBody:
        """A canonical ASSISTANT message -> this provider's whole reply body (`adapters._kit.reply`):
        what `metis serve` answers a client of this wire format with."""
        raise AdapterError(
            f"{self.name} does not write replies",
            provider=self.name,
            hint="metis serve answers in the anthropic, openai (Chat Completions) and responses formats",
        )

    def reply_encoder(self, reply: ReplyOptions) -> ReplyEncoder:
        """A fresh encoder of one streamed reply in this provider's stream format."""
        raise AdapterError(
            f"{self.name} does not write reply streams",
            provider=self.name,
            hint="metis serve answers in the anthropic, openai (Chat Completions) and responses formats",
        )

    # --- derived ----------------------------------------------------------------------

    def stream_response(
        self, chunks: Iterable[bytes | str], context: RequestContext
    ) -> Iterator[StreamEvent]:
        """Raw stream pieces -> canonical StreamEvents (spec §7.4)."""
        decoder = self.stream_decoder(context)
        for chunk in chunks:
            yield from decoder.feed(chunk)
        yield from decoder.close()

    async def astream_response(
        self, chunks: AsyncIterable[bytes | str], context: RequestContext
    ) -> AsyncIterator[StreamEvent]:
        """Async form of `stream_response`, for httpx's async byte streams."""
        decoder = self.stream_decoder(context)
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    def assemble_stream(self, chunks: Iterable[bytes | str], context: RequestContext) -> Message:
        """Decode and assemble a whole stream into the Message `from_wire_response` would give."""
        decoder = self.stream_decoder(context)
        assembler = StreamAssembler(context, self.name)
        for chunk in chunks:
            assembler.feed_all(decoder.feed(chunk))
        assembler.feed_all(decoder.close())
        return assembler.finish(decoder.provider_raw())


__all__ = ["Adapter", "AdapterOptions", "OutputSchema", "StreamDecoder", "WireBody", "WireImport"]
