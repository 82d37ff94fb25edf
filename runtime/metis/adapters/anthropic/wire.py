"""The Anthropic Messages API's wire objects, declared once (as vercel/ai's
`anthropic-messages-api.ts` declares one schema per wire object).

Every read of Anthropic JSON goes through these shapes (`_wire.read`), so pydantic-core
does the type checks and a failure is one WireFormatError at its JSON path. The shapes are
as loose as the API itself: optional fields are optional; an object replayed as sent (a
content block, the tool choice) keeps its undeclared keys (`cache_control`, `citations`,
fields added later), while one metis only reads (the reply envelope, usage, stream events)
drops them; and a block, source, tool, delta or event of a type metis has no reader for
validates as a plain object (`Foreign`) so the caller can keep it verbatim or ignore it.
Values are strict: `"4096"` is not an integer, `"yes"` not a boolean. Checked against the
anthropic 2.12 SDK types.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Discriminator, Field, Tag, with_config
from typing_extensions import TypedDict

_DECLARED = ConfigDict(strict=True)
"""An object metis reads only the declared keys of: the others are not copied."""
_LOOSE = ConfigDict(extra="allow", strict=True)
"""An object replayed as sent (blocks, tool choice, thinking config): undeclared keys are kept."""

Foreign = dict[str, Any]
"""A wire object of a type metis has no reader for: kept as sent."""

NonEmpty = Annotated[str, Field(min_length=1)]
BlockIndex = Annotated[int, Field(ge=0)]
"""A content block's position in the reply: never negative (canonical events refuse one)."""


def _by_type(tags: Mapping[str, str], *, untyped: str = "Foreign") -> Discriminator:
    """A discriminator on `type` whose unknown types select the `Foreign` branch.

    Tags are the declared class names, never a wire key, so a located error reads
    `content[0].text`, not `content[0].text.text`. Anything but an object has no tag:
    one error at the object's own path. `untyped` is the branch of an object without `type`.
    """

    def tag(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        kind = value.get("type")
        if kind is None:
            return untyped
        return tags.get(kind, "Foreign") if isinstance(kind, str) else "Foreign"

    return Discriminator(
        tag, custom_error_type="object_type", custom_error_message="Input should be a JSON object"
    )


def _base64(data: str) -> str:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"image data is not base64: {exc}") from None
    return data


def _text_blocks(value: Any) -> Any:
    """Content given as a string is one text block (the API's shorthand)."""
    return [{"type": "text", "text": value}] if isinstance(value, str) else value


def _result_blocks(value: Any) -> Any:
    """tool_result content: a string is one text block, an empty string or null none."""
    if value is None or value == "":
        return []
    return _text_blocks(value)


# --- usage and errors ---------------------------------------------------------------------


@with_config(_DECLARED)
class Usage(TypedDict):
    """Token counts of a reply (`usage`), or the counts so far in a stream."""

    input_tokens: NotRequired[int | None]
    output_tokens: NotRequired[int | None]
    cache_read_input_tokens: NotRequired[int | None]
    cache_creation_input_tokens: NotRequired[int | None]


@with_config(_DECLARED)
class ErrorDetail(TypedDict):
    """The `error` of an error envelope: the provider's type (`overloaded_error`) and text."""

    type: str
    message: str


@with_config(_DECLARED)
class ErrorBody(TypedDict):
    """`{"type": "error", "error": {type, message}, "request_id"}`: an HTTP error body, or a
    stream's `error` event. Where its fields live is also a facts row (`facts.FACTS.error`)."""

    type: Literal["error"]
    error: ErrorDetail
    request_id: NotRequired[str | None]


# --- content blocks --------------------------------------------------------------------------


@with_config(_LOOSE)
class TextBlock(TypedDict):
    """`{"type": "text", "text", "citations"?}`."""

    type: Literal["text"]
    text: str


@with_config(_LOOSE)
class ToolUseBlock(TypedDict):
    """`{"type": "tool_use", "id", "name", "input"}`: a client tool call; `input` is an object."""

    type: Literal["tool_use"]
    id: str
    name: NonEmpty
    input: dict[str, Any]


@with_config(_LOOSE)
class ThinkingBlock(TypedDict):
    """`{"type": "thinking", "thinking", "signature"}`: replayable only byte-exact and signed."""

    type: Literal["thinking"]
    thinking: str
    signature: NotRequired[str | None]


@with_config(_LOOSE)
class RedactedThinkingBlock(TypedDict):
    """`{"type": "redacted_thinking", "data"}`: encrypted thinking."""

    type: Literal["redacted_thinking"]
    data: NonEmpty


@with_config(_LOOSE)
class Base64Source(TypedDict):
    """An image given inline."""

    type: Literal["base64"]
    media_type: str
    data: Annotated[str, AfterValidator(_base64)]


@with_config(_LOOSE)
class UrlSource(TypedDict):
    """An image given by URL (the media type is not on the wire)."""

    type: Literal["url"]
    url: str


MediaSource = Annotated[
    Annotated[Base64Source, Tag("Base64Source")]
    | Annotated[UrlSource, Tag("UrlSource")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type({"base64": "Base64Source", "url": "UrlSource"}),
]
"""An image source; a Files API (`file`) source has no canonical kind."""


@with_config(_LOOSE)
class ImageBlock(TypedDict):
    """`{"type": "image", "source"}`."""

    type: Literal["image"]
    source: MediaSource


ResultItem = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ImageBlock, Tag("ImageBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type({"text": "TextBlock", "image": "ImageBlock"}),
]
"""A block inside a tool_result's content (search results, documents: foreign)."""


@with_config(_LOOSE)
class ToolResultBlock(TypedDict):
    """`{"type": "tool_result", "tool_use_id", "content"?, "is_error"?}` in a user turn."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[Annotated[list[ResultItem], BeforeValidator(_result_blocks)]]
    is_error: NotRequired[bool]


ResponseBlock = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ToolUseBlock, Tag("ToolUseBlock")]
    | Annotated[ThinkingBlock, Tag("ThinkingBlock")]
    | Annotated[RedactedThinkingBlock, Tag("RedactedThinkingBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text": "TextBlock",
            "tool_use": "ToolUseBlock",
            "thinking": "ThinkingBlock",
            "redacted_thinking": "RedactedThinkingBlock",
        }
    ),
]
"""A block the model writes; server tool blocks (`server_tool_use`, ...) are foreign."""

RequestBlock = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ImageBlock, Tag("ImageBlock")]
    | Annotated[ToolUseBlock, Tag("ToolUseBlock")]
    | Annotated[ToolResultBlock, Tag("ToolResultBlock")]
    | Annotated[ThinkingBlock, Tag("ThinkingBlock")]
    | Annotated[RedactedThinkingBlock, Tag("RedactedThinkingBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text": "TextBlock",
            "image": "ImageBlock",
            "tool_use": "ToolUseBlock",
            "tool_result": "ToolResultBlock",
            "thinking": "ThinkingBlock",
            "redacted_thinking": "RedactedThinkingBlock",
        }
    ),
]
"""A block of a recorded request's turn (documents, search results, ...: foreign)."""


# --- the response ----------------------------------------------------------------------------


@with_config(_DECLARED)
class Response(TypedDict):
    """A non-streamed reply (`type: "message"`)."""

    id: NotRequired[str | None]
    model: NotRequired[str | None]
    content: list[ResponseBlock]
    stop_reason: NotRequired[str | None]
    stop_sequence: NotRequired[str | None]
    usage: NotRequired[Usage | None]


# --- stream events ---------------------------------------------------------------------------


@with_config(_DECLARED)
class StreamMessage(TypedDict):
    """The message of `message_start`: its content is empty, the blocks follow as events."""

    id: NotRequired[str | None]
    model: NotRequired[str | None]
    usage: NotRequired[Usage | None]


@with_config(_DECLARED)
class MessageStart(TypedDict):
    type: Literal["message_start"]
    message: StreamMessage


@with_config(_DECLARED)
class ContentBlockStart(TypedDict):
    type: Literal["content_block_start"]
    index: BlockIndex
    content_block: ResponseBlock


@with_config(_DECLARED)
class TextDelta(TypedDict):
    type: Literal["text_delta"]
    text: str


@with_config(_DECLARED)
class InputJsonDelta(TypedDict):
    type: Literal["input_json_delta"]
    partial_json: str


@with_config(_DECLARED)
class ThinkingDelta(TypedDict):
    type: Literal["thinking_delta"]
    thinking: str


@with_config(_DECLARED)
class SignatureDelta(TypedDict):
    type: Literal["signature_delta"]
    signature: str


@with_config(_DECLARED)
class CitationsDelta(TypedDict):
    type: Literal["citations_delta"]
    citation: dict[str, Any]


Delta = Annotated[
    Annotated[TextDelta, Tag("TextDelta")]
    | Annotated[InputJsonDelta, Tag("InputJsonDelta")]
    | Annotated[ThinkingDelta, Tag("ThinkingDelta")]
    | Annotated[SignatureDelta, Tag("SignatureDelta")]
    | Annotated[CitationsDelta, Tag("CitationsDelta")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text_delta": "TextDelta",
            "input_json_delta": "InputJsonDelta",
            "thinking_delta": "ThinkingDelta",
            "signature_delta": "SignatureDelta",
            "citations_delta": "CitationsDelta",
        }
    ),
]
"""A `content_block_delta`'s delta; a delta type added later is foreign (ignored)."""


@with_config(_DECLARED)
class ContentBlockDelta(TypedDict):
    type: Literal["content_block_delta"]
    index: BlockIndex
    delta: Delta


@with_config(_DECLARED)
class ContentBlockStop(TypedDict):
    type: Literal["content_block_stop"]
    index: BlockIndex


@with_config(_DECLARED)
class StopDelta(TypedDict):
    """The delta of `message_delta`: how the message ended."""

    stop_reason: NotRequired[str | None]
    stop_sequence: NotRequired[str | None]


@with_config(_DECLARED)
class MessageDelta(TypedDict):
    type: Literal["message_delta"]
    delta: NotRequired[StopDelta | None]
    usage: NotRequired[Usage | None]


@with_config(_DECLARED)
class MessageStop(TypedDict):
    type: Literal["message_stop"]


StreamEvent = Annotated[
    Annotated[MessageStart, Tag("MessageStart")]
    | Annotated[ContentBlockStart, Tag("ContentBlockStart")]
    | Annotated[ContentBlockDelta, Tag("ContentBlockDelta")]
    | Annotated[ContentBlockStop, Tag("ContentBlockStop")]
    | Annotated[MessageDelta, Tag("MessageDelta")]
    | Annotated[MessageStop, Tag("MessageStop")]
    | Annotated[ErrorBody, Tag("ErrorBody")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "message_start": "MessageStart",
            "content_block_start": "ContentBlockStart",
            "content_block_delta": "ContentBlockDelta",
            "content_block_stop": "ContentBlockStop",
            "message_delta": "MessageDelta",
            "message_stop": "MessageStop",
            "error": "ErrorBody",
        }
    ),
]
"""One SSE event's data; `ping` and event types added later are foreign (ignored)."""


# --- the request (for import) ------------------------------------------------------------------


@with_config(_DECLARED)
class Turn(TypedDict):
    """One entry of `messages`; a `system` role is accepted as some recorders write it."""

    role: Literal["user", "assistant", "system"]
    content: Annotated[list[RequestBlock], BeforeValidator(_text_blocks)]


@with_config(_DECLARED)
class CustomTool(TypedDict):
    """A client tool: `{name, description?, input_schema}`."""

    type: NotRequired[Literal["custom"] | None]
    name: NonEmpty
    description: NotRequired[str | None]
    input_schema: NotRequired[dict[str, Any] | None]


Tool = Annotated[
    Annotated[CustomTool, Tag("CustomTool")] | Annotated[Foreign, Tag("Foreign")],
    _by_type({"custom": "CustomTool"}, untyped="CustomTool"),
]
"""A tool definition; server tools (`web_search_20250305`, `bash_...`) are foreign."""


@with_config(_LOOSE)
class ToolChoice(TypedDict):
    """`{"type": "auto" | "any" | "none"}` or `{"type": "tool", "name"}`, plus
    `disable_parallel_tool_use`, which has no canonical option."""

    type: Literal["auto", "any", "none", "tool"]
    name: NotRequired[NonEmpty]


@with_config(_LOOSE)
class ThinkingConfig(TypedDict):
    """`{"type": "enabled", "budget_tokens"}`; other types (adaptive, disabled) stay
    Anthropic-only options."""

    type: str
    budget_tokens: NotRequired[int]


@with_config(_DECLARED)
class Request(TypedDict):
    """A recorded `POST /v1/messages` body."""

    model: NonEmpty
    messages: list[Turn]
    system: NotRequired[Annotated[list[TextBlock] | None, BeforeValidator(_text_blocks)]]
    tools: NotRequired[list[Tool] | None]
    tool_choice: NotRequired[ToolChoice | None]
    max_tokens: NotRequired[int | None]
    temperature: NotRequired[float | None]
    top_p: NotRequired[float | None]
    stop_sequences: NotRequired[list[str] | None]
    stream: NotRequired[bool | None]
    thinking: NotRequired[ThinkingConfig | None]


__all__ = [
    "Base64Source",
    "CitationsDelta",
    "ContentBlockDelta",
    "ContentBlockStart",
    "ContentBlockStop",
    "CustomTool",
    "Delta",
    "ErrorBody",
    "ErrorDetail",
    "Foreign",
    "ImageBlock",
    "InputJsonDelta",
    "MediaSource",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "RedactedThinkingBlock",
    "Request",
    "RequestBlock",
    "Response",
    "ResponseBlock",
    "ResultItem",
    "SignatureDelta",
    "StopDelta",
    "StreamEvent",
    "StreamMessage",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingConfig",
    "ThinkingDelta",
    "Tool",
    "ToolChoice",
    "ToolResultBlock",
    "ToolUseBlock",
    "Turn",
    "UrlSource",
    "Usage",
]
