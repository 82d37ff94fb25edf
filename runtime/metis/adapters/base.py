"""The adapter contract (spec §7.1): pure translation between canonical and wire formats.

An adapter does no I/O: no network, no storage, no clock reads that matter. The HTTP
client sends what `to_wire` built and hands the body or the raw stream back to
`from_wire_response` / `stream_response`. Per-session state (the tool id map, the
workspace root) arrives in `AdapterOptions` / `RequestContext`, never in globals.
Subclasses implement the five abstract operations and a `StreamDecoder`; this base
derives sync and async streaming, stream assembly and capability lookup from them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from metis_schema.v3 import AdapterCapabilities, Message, StreamEvent, ToolDefinition

from .. import _json
from ..assembly import RequestContext, StreamAssembler
from ..catalog import load_catalog
from ..errors import AdapterError, ProviderError
from ..ids import ToolIdMap
from ..media import DEFAULT_MAX_MEDIA_BYTES
from ._facts import EFFORT_LEVELS, ProviderFacts
from ._options import OutputSchema

if TYPE_CHECKING:
    from ._reply import ReplyEncoder, ReplyOptions

WireBody = dict[str, Any]


@dataclass
class AdapterOptions:
    """Request options that are not messages or tools (the rule: `adapters/_options.py`).

    `model` is a canonical id or alias (resolved through the catalog to the wire name).
    Options with a canonical meaning have fields here (`max_tokens` ... `output_schema`;
    `tool_choice` by meaning: "auto", "any", "none" or a tool's name), which every adapter
    writes in its provider's spelling. Options of one provider only live in
    `provider_options[provider]`: an importer fills its own provider's entry with what the
    recorded request set beyond the canonical fields, and `to_wire` replays that entry to
    the same provider only, reporting any other provider's entry as dropped (spec §7.3).
    `extra` holds the caller's own knobs for the provider it is calling (spec §2.2.2),
    merged into the body last, e.g. `{"reasoning": {"effort": "high"}}` for OpenRouter or
    `{"keep_alive": "5m"}` for Ollama, and `extra["metis"]` directives to the adapter itself.
    `stream` is the client's choice for this request, never a carried option.
    """

    model: str
    session_id: str
    tool_ids: ToolIdMap
    workspace: Path | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    stream: bool = False
    tool_choice: str | None = None
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
    """How hard the model should reason, by meaning: a `ReasoningEffort` level ("none" ...
    "xhigh"), written as the nearest level each provider has (`ProviderFacts.efforts`).
    Separate from `thinking_budget`: neither is derived from the other (`_options`)."""
    output_schema: OutputSchema | None = None
    """Structured output: the reply must be JSON valid against this schema."""
    provider_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Provider name -> that provider's own request fields (nested as on its wire), replayed
    to it alone; see the class docstring."""
    extra: dict[str, Any] = field(default_factory=dict)
    allow_url_fetch: bool = False
    """Opt-in: fetch image URLs a provider cannot take by reference (Ollama)."""
    url_fetcher: Callable[[str], bytes] | None = None
    """The fetcher to use; None means `metis.fetch.UrlFetcher()` (public http(s) only)."""
    max_media_bytes: int = DEFAULT_MAX_MEDIA_BYTES
    """Largest file_ref read from the workspace (`metis.media`)."""
    endpoint: str | None = None
    """The base URL the request goes to (`metis.endpoints`), None for the provider's own
    default API: opaque reasoning goes back only to the endpoint that produced it
    (`_shared.replays_opaque`)."""
    max_event_chars: int | None = None
    """Largest single stream event (a line, an SSE event's data, an array element) the
    reply's stream may send; past it the stream fails with StreamLimitError. None means
    `adapters._framing.DEFAULT_MAX_EVENT_CHARS`."""

    _SENT: ClassVar[tuple[str, ...]] = (
        "model",
        "max_tokens",
        "temperature",
        "top_p",
        "stop",
        "tool_choice",
        "thinking_budget",
        "reasoning_effort",
        "provider_options",
        "extra",
    )
    """The fields whose values go into the request body as they are."""

    def __post_init__(self) -> None:
        """The values a body will carry must be JSON: a NaN or infinite temperature, a stop
        string with a lone surrogate, an option of 4,400 digits are refused here, as they
        enter (NotJsonError naming the option and the place), so a send with one fails
        before the client stores the user's message or sends anything. Let into a body,
        they failed as untyped errors wherever the body was written."""
        for name in self._SENT:
            _json.refuse_unwritable(getattr(self, name), f"request option {name}")
        if self.reasoning_effort is not None and self.reasoning_effort not in EFFORT_LEVELS:
            raise AdapterError(
                f"reasoning_effort {self.reasoning_effort!r} is not a reasoning effort level",
                path="options.reasoning_effort",
                hint=f"one of {', '.join(EFFORT_LEVELS)}",
            )
        if self.output_schema is not None:
            _json.refuse_unwritable(vars(self.output_schema), "request option output_schema")


@dataclass
class WireImport:
    """A recorded request body read back as canonical messages, tools and options.

    Nothing an import reads is lost silently: every top-level request field that is not a
    message, a tool or a canonical option is kept in `options.provider_options[provider]`
    (replayed to that provider, reported as dropped for any other), and `dropped` lists
    what the import read inside the messages and tools but could not carry
    (`_lossy.import_drop`: `{path, value, reason}` entries, each also a WARN).
    """

    messages: list[Message]
    tools: list[ToolDefinition]
    options: AdapterOptions
    dropped: list[dict[str, Any]] = field(default_factory=list)


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

    @abstractmethod
    def to_wire(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition], options: AdapterOptions
    ) -> WireBody:
        """Canonical messages -> the provider's JSON request body."""

    @abstractmethod
    def from_wire_request(self, body: WireBody, *, session_id: str, tool_ids: ToolIdMap) -> WireImport:
        """A recorded request body -> canonical messages, tools and options."""

    @abstractmethod
    def from_wire_response(self, body: WireBody, context: RequestContext) -> Message:
        """A non-streamed response body -> one COMPLETE canonical ASSISTANT message."""

    @abstractmethod
    def stream_decoder(self, context: RequestContext) -> StreamDecoder:
        """A fresh decoder for one streamed response."""

    @abstractmethod
    def estimate_input_tokens(self, messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> int:
        """Pre-flight input token estimate (each adapter documents its method and error)."""

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
        """A canonical ASSISTANT message -> this provider's whole reply body (`adapters._reply`):
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
