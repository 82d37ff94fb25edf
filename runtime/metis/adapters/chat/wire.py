"""The Chat Completions wire objects, declared once (OpenAI's API reference and OpenRouter's).

Every body, stream chunk and recorded request is read through `reader.read` with these
shapes: pydantic-core checks the types, and a failure is one WireFormatError at the JSON
path. The shapes are as loose as the servers are: unknown keys are accepted everywhere (kept
where metis keeps or lists the object whole, `_LOOSE`; not copied where it only reads
fields, `_READ`), and every field a server may leave out is `NotRequired`. They are
`strict` because the input is parsed JSON: a number is never read as a string, a `true`
never as a count.

Values that may be one of several JSON types (`content`: a string, a list of parts or
null) are told apart by their JSON type (`_by_json_type`), so an error names the field
itself (`messages[0].content`) and not a union member inside pydantic.

The tool-call `arguments` string convention (`canonical_arguments`, `raw_arguments_to_keep`)
is `_kit.arguments`, shared with the Responses API; re-exported here for the Chat modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Discriminator, Field, Tag, with_config
from typing_extensions import TypedDict

from ...usage import Amount, TextCount
from .._kit.arguments import canonical_arguments, kept_arguments, raw_arguments_to_keep

_LOOSE = ConfigDict(extra="allow", strict=True)
"""For objects metis keeps or lists whole (replayed reasoning details, dropped parts, extra
request fields): unknown keys stay."""
_READ = ConfigDict(extra="ignore", strict=True)
"""For objects metis only reads fields of (a reply's envelope, stream deltas): unknown keys
are accepted and not copied."""

Fields = Mapping[str, Any]
"""A checked wire object read by a key chosen at run time (a dialect's reasoning key)."""


def _json_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return None


def _by_json_type(expected: str) -> Discriminator:
    """A union whose member is chosen by the value's JSON type; any other type is one error."""
    return Discriminator(
        _json_type, custom_error_type="wire_json_type", custom_error_message=f"must be {expected}"
    )


NonEmpty = Annotated[str, Field(min_length=1)]
Number = Annotated[
    Annotated[int, Tag("integer")] | Annotated[float, Tag("number")], _by_json_type("a number")
]
Arguments = Annotated[
    Annotated[str, Tag("string")] | Annotated[dict[str, Any], Tag("object")],
    _by_json_type("a JSON string (or an object, as some compatible servers send)"),
]


# --- the assistant message (a reply's `choices[].message`, and history in a request) -------


@with_config(_LOOSE)
class ReasoningDetail(TypedDict):
    """An OpenRouter `reasoning_details` item (`reasoning.text`, `.summary`, `.encrypted`)."""

    type: NotRequired[str]
    text: NotRequired[str | None]
    summary: NotRequired[str | None]
    data: NotRequired[str | None]
    signature: NotRequired[str | None]
    index: NotRequired[int]


@with_config(_LOOSE)
class ThinkingChunk(TypedDict):
    """One piece of a Mistral `thinking` part (`{"type": "text", "text": ...}`)."""

    type: NotRequired[str]
    text: NotRequired[str]


@with_config(_LOOSE)
class AssistantPart(TypedDict):
    """A content part of an assistant message (`text`, `refusal`, Mistral `thinking`; others are kept raw)."""

    type: NotRequired[str]
    text: NotRequired[str]
    refusal: NotRequired[str]
    thinking: NotRequired[Any]
    """Mistral's reasoning chunks (Anthropic-shaped bodies put a string here): read as
    `ThinkingPart` only by dialects with `thinking_parts`."""


@with_config(_LOOSE)
class ThinkingPart(TypedDict):
    """A Mistral `thinking` content part (mistralai `ThinkChunk`)."""

    type: Literal["thinking"]
    thinking: list[ThinkingChunk]
    signature: NotRequired[str | None]
    """Replays "some reasoning blocks across turns" (mistralai `ThinkChunk.signature`)."""


@with_config(_LOOSE)
class UrlCitationDetail(TypedDict):
    """`url_citation` of an annotation: the cited page and the span of the message text it
    supports (OpenAI: `url`, `title`, `start_index`, `end_index`; OpenRouter adds the cited
    `content`)."""

    url: NotRequired[str]
    title: NotRequired[str | None]
    content: NotRequired[str | None]
    start_index: NotRequired[int | None]
    end_index: NotRequired[int | None]


@with_config(_LOOSE)
class Annotation(TypedDict):
    """An item of `message.annotations` (`url_citation`; other types are kept raw)."""

    type: NotRequired[str]
    url_citation: NotRequired[UrlCitationDetail]


AssistantContent = Annotated[
    Annotated[str, Tag("string")]
    | Annotated[list[AssistantPart], Tag("array")]
    | Annotated[None, Tag("null")],
    _by_json_type("a string, a list of parts or null"),
]


@with_config(_READ)
class FunctionCall(TypedDict):
    """`tool_calls[].function` of a complete tool call."""

    name: NonEmpty
    arguments: NotRequired[Arguments]


@with_config(_LOOSE)
class ToolCall(TypedDict):
    """A complete tool call; `type` other than "function" (custom tools) is kept raw."""

    id: NotRequired[str | None]
    type: NotRequired[str]
    function: NotRequired[FunctionCall]


@with_config(_LOOSE)
class AssistantFields(TypedDict):
    """What a reply's message and a request's assistant turn share (the reader reads these)."""

    content: NotRequired[AssistantContent]
    refusal: NotRequired[str | None]
    tool_calls: NotRequired[list[ToolCall] | None]
    function_call: NotRequired[Any]
    """Deprecated; read only to refuse it (no tool call id to link a result to)."""
    reasoning_details: NotRequired[list[ReasoningDetail] | None]
    reasoning: NotRequired[str | None]
    """Plain reasoning text (OpenRouter, Ollama `/v1`)."""
    reasoning_content: NotRequired[str | None]
    """Plain reasoning text (llama.cpp, vLLM)."""
    annotations: NotRequired[list[Annotation] | None]
    """Citations of the message text (web search): `url_citation` items."""


@with_config(_READ)
class AssistantMessage(AssistantFields):
    """`choices[].message` of a reply."""

    role: NotRequired[str]


# --- the reply --------------------------------------------------------------------------------


@with_config(_READ)
class Choice(TypedDict):
    index: NotRequired[int]
    message: AssistantMessage
    finish_reason: NotRequired[str | None]
    native_finish_reason: NotRequired[Any]
    """OpenRouter: the upstream's own stop value."""


@with_config(_READ)
class PromptTokensDetails(TypedDict, total=False):
    cached_tokens: TextCount | None
    cache_write_tokens: TextCount | None
    """OpenRouter: tokens written to the cache (within prompt_tokens)."""
    audio_tokens: TextCount | None
    image_tokens: TextCount | None


@with_config(_READ)
class CompletionTokensDetails(TypedDict, total=False):
    reasoning_tokens: TextCount | None
    audio_tokens: TextCount | None
    image_tokens: TextCount | None


@with_config(_READ)
class ServerToolUsage(TypedDict, total=False):
    """OpenRouter: server-tool calls it ran (`usage.server_tool_use`)."""

    web_search_requests: TextCount | None


@with_config(_READ)
class Usage(TypedDict, total=False):
    """A reply's `usage` (openai-python types/completion_usage.py), with what OpenRouter adds
    (cache writes, server tools, the billed `cost`): read through by the dialect's counter
    rule (`metis.usage`), which reads only what is declared here."""

    prompt_tokens: TextCount | None
    completion_tokens: TextCount | None
    prompt_tokens_details: PromptTokensDetails | None
    completion_tokens_details: CompletionTokensDetails | None
    server_tool_use: ServerToolUsage | None
    cost: Amount | None


@with_config(_READ)
class Response(TypedDict):
    """A non-streamed reply (`chat.completion`)."""

    id: NotRequired[Any]
    model: NotRequired[Any]
    choices: Annotated[list[Choice], Field(min_length=1)]
    usage: NotRequired[dict[str, Any] | None]
    system_fingerprint: NotRequired[Any]
    provider: NotRequired[Any]
    """OpenRouter: the upstream that served the request."""


# --- the error envelope -----------------------------------------------------------------------


@with_config(_LOOSE)
class ErrorDetail(TypedDict):
    """`error` of an error body or stream chunk, both dialects.

    OpenAI: `{message, type, param, code: str}`; OpenRouter: `{code: int, message,
    metadata: {provider_name, raw}}`. Read by each dialect row's error hook (`ErrorBody`);
    kept whole, as the error's body.
    """

    message: NotRequired[Any]
    type: NotRequired[Any]
    param: NotRequired[Any]
    code: NotRequired[Any]
    metadata: NotRequired[Any]


Error = Annotated[
    Annotated[ErrorDetail, Tag("object")] | Annotated[str, Tag("string")] | Annotated[None, Tag("null")],
    _by_json_type("an object, a string or null"),
]


@with_config(_LOOSE)
class ErrorBody(TypedDict):
    """`{"error": <ErrorDetail, or a server's plain text>}`: an HTTP error body of OpenAI and
    OpenRouter (and of compatible servers), or a stream chunk holding an error."""

    error: Error


@with_config(_LOOSE)
class FlatErrorBody(TypedDict):
    """Mistral's error body, without the `error` wrapper: `{"object": "error", "message",
    "type", "param", "code"}` (a 422's `message` is the validation detail object)."""

    object: NotRequired[Any]
    message: NotRequired[Any]
    type: NotRequired[Any]
    param: NotRequired[Any]
    code: NotRequired[Any]
    error: NotRequired[str]
    """A gateway's plain `{"error": "<text>"}` in front of Mistral."""


# --- the stream -------------------------------------------------------------------------------


@with_config(_READ)
class FunctionDelta(TypedDict):
    name: NotRequired[str | None]
    arguments: NotRequired[Arguments | None]


@with_config(_READ)
class ToolCallDelta(TypedDict):
    """A fragment of a streamed tool call, keyed by `index` (some servers reuse 0 with new ids)."""

    index: NotRequired[int]
    id: NotRequired[str | None]
    type: NotRequired[str | None]
    function: NotRequired[FunctionDelta | None]


@with_config(_READ)
class Delta(TypedDict):
    role: NotRequired[Any]
    content: NotRequired[AssistantContent]
    """A string; a list of parts from servers that stream typed chunks (Mistral's thinking)."""
    refusal: NotRequired[str | None]
    tool_calls: NotRequired[list[ToolCallDelta] | None]
    reasoning_details: NotRequired[list[ReasoningDetail] | None]
    reasoning: NotRequired[str | None]
    reasoning_content: NotRequired[str | None]
    annotations: NotRequired[list[Annotation] | None]
    """Citations, sent whole in one delta (OpenRouter: with or after the last text)."""


@with_config(_READ)
class ChunkChoice(TypedDict):
    index: NotRequired[int]
    delta: NotRequired[Delta | None]
    finish_reason: NotRequired[str | None]
    native_finish_reason: NotRequired[Any]


@with_config(_READ)
class Chunk(TypedDict):
    """One `data:` object of a stream (`chat.completion.chunk`), or an error in its place."""

    id: NotRequired[Any]
    model: NotRequired[Any]
    system_fingerprint: NotRequired[Any]
    provider: NotRequired[Any]
    choices: NotRequired[list[ChunkChoice] | None]
    usage: NotRequired[dict[str, Any] | None]
    error: NotRequired[Error]


# --- the request (read back by the importer) --------------------------------------------------


@with_config(_LOOSE)
class ImageUrl(TypedDict):
    url: NonEmpty
    detail: NotRequired[Any]


@with_config(_LOOSE)
class FilePart(TypedDict):
    """`file` of a `file` part: inline bytes (`file_data`, a data URL; a URL on OpenRouter)
    or an uploaded `file_id`, with the `filename` shown to the model."""

    file_data: NotRequired[NonEmpty]
    file_id: NotRequired[NonEmpty]
    filename: NotRequired[str]


@with_config(_LOOSE)
class InputAudio(TypedDict):
    """`input_audio` of an audio part: base64 bytes and their format (`wav`, `mp3`, ...)."""

    data: NonEmpty
    format: NonEmpty


@with_config(_LOOSE)
class VideoUrl(TypedDict):
    """`video_url` of an OpenRouter video part: a URL or a base64 data URL."""

    url: NonEmpty


@with_config(_LOOSE)
class Part(TypedDict):
    """A content part of a request message (`text`, `image_url`, `file`, `input_audio`;
    others are dropped and listed)."""

    type: NotRequired[str]
    text: NotRequired[str]
    file: NotRequired[FilePart]
    input_audio: NotRequired[InputAudio]
    video_url: NotRequired[VideoUrl]
    image_url: NotRequired[
        Annotated[
            Annotated[ImageUrl, Tag("object")] | Annotated[NonEmpty, Tag("string")],
            _by_json_type("an object with a url"),
        ]
    ]
    cache_control: NotRequired[Any]


Content = Annotated[
    Annotated[str, Tag("string")] | Annotated[list[Part], Tag("array")] | Annotated[None, Tag("null")],
    _by_json_type("a string, a list of parts or null"),
]


@with_config(_LOOSE)
class SystemMessage(TypedDict):
    role: Literal["system", "developer"]
    content: NotRequired[Content]
    name: NotRequired[Any]


@with_config(_LOOSE)
class UserMessage(TypedDict):
    role: Literal["user"]
    content: NotRequired[Content]
    name: NotRequired[Any]


@with_config(_LOOSE)
class ToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: NonEmpty
    content: NotRequired[Content]
    name: NotRequired[Any]


@with_config(_LOOSE)
class FunctionMessage(TypedDict):
    """The deprecated `function` role: read only to refuse it (no tool call id)."""

    role: Literal["function"]


@with_config(_LOOSE)
class HistoryAssistantMessage(AssistantFields):
    """An assistant turn in a request's history."""

    role: Literal["assistant"]
    name: NotRequired[Any]


RequestMessage = Annotated[
    SystemMessage | UserMessage | HistoryAssistantMessage | ToolMessage | FunctionMessage,
    Field(discriminator="role"),
]


@with_config(_LOOSE)
class FunctionDefinition(TypedDict):
    name: NonEmpty
    description: NotRequired[str | None]
    parameters: NotRequired[dict[str, Any] | None]


@with_config(_LOOSE)
class Tool(TypedDict):
    """A tool definition; only `type: "function"` has a canonical form."""

    type: NotRequired[str]
    function: NotRequired[FunctionDefinition]
    cache_control: NotRequired[Any]


@with_config(_LOOSE)
class Reasoning(TypedDict):
    """OpenRouter's `reasoning` request parameter (`max_tokens`, `effort`, `exclude`, `enabled`)."""

    max_tokens: NotRequired[int | None]


@with_config(_LOOSE)
class Request(TypedDict):
    """A recorded request body; fields not declared here are the provider's own options
    (`AdapterOptions.provider_options`), replayed to it alone."""

    model: NonEmpty
    messages: list[RequestMessage]
    tools: NotRequired[list[Tool] | None]
    tool_choice: NotRequired[Any]
    stream: NotRequired[Any]
    max_tokens: NotRequired[int | None]
    max_completion_tokens: NotRequired[int | None]
    temperature: NotRequired[Number | None]
    top_p: NotRequired[Number | None]
    reasoning: NotRequired[Reasoning | None]
    stop: NotRequired[
        Annotated[
            Annotated[str, Tag("string")] | Annotated[list[str], Tag("array")] | Annotated[None, Tag("null")],
            _by_json_type("a string or a list of strings"),
        ]
    ]


__all__ = [
    "Annotation",
    "AssistantMessage",
    "AssistantPart",
    "Chunk",
    "ErrorBody",
    "ErrorDetail",
    "Fields",
    "FlatErrorBody",
    "HistoryAssistantMessage",
    "Request",
    "Response",
    "ThinkingPart",
    "Usage",
    "canonical_arguments",
    "kept_arguments",
    "raw_arguments_to_keep",
]
