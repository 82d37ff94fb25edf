"""The Anthropic Messages API's wire objects, declared once (as vercel/ai's
`anthropic-messages-api.ts` declares one schema per wire object).

Every read of Anthropic JSON goes through these shapes (`reader.read`), so pydantic-core
does the type checks and a failure is one WireFormatError at its JSON path. The shapes are
as loose as the API itself: optional fields are optional; an object replayed as sent (a
content block, the tool choice) keeps its undeclared keys (a tool call's `caller`, a
compaction's `signature`, fields added later), while one metis only reads (the reply
envelope, usage, stream events) drops them; and a block, source, citation, tool, delta or
event of a type metis has no reader for validates as a plain object (`Foreign`) so the
caller can keep it verbatim or ignore it.
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

from ...usage import Count

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
        raise ValueError(f"data is not base64: {exc}") from None
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
class CacheCreation(TypedDict):
    """Cache writes by TTL (`usage.cache_creation`), priced apart (a one-hour write costs more)."""

    ephemeral_5m_input_tokens: NotRequired[Count | None]
    ephemeral_1h_input_tokens: NotRequired[Count | None]


@with_config(_DECLARED)
class ServerToolUsage(TypedDict):
    """Server-tool calls Anthropic ran and bills per request (`usage.server_tool_use`)."""

    web_search_requests: NotRequired[Count | None]
    web_fetch_requests: NotRequired[Count | None]


@with_config(_DECLARED)
class OutputTokensDetails(TypedDict):
    """`usage.output_tokens_details`: the thinking tokens within output_tokens."""

    thinking_tokens: NotRequired[Count | None]


@with_config(_DECLARED)
class Usage(TypedDict):
    """Token counts of a reply (`usage`), or the counts so far in a stream, with what
    Anthropic's counter rule (`facts.USAGE`) reads beside them (cache writes by TTL, server
    tools, thinking)."""

    input_tokens: NotRequired[Count | None]
    output_tokens: NotRequired[Count | None]
    cache_read_input_tokens: NotRequired[Count | None]
    cache_creation_input_tokens: NotRequired[Count | None]
    cache_creation: NotRequired[CacheCreation | None]
    server_tool_use: NotRequired[ServerToolUsage | None]
    output_tokens_details: NotRequired[OutputTokensDetails | None]


@with_config(_DECLARED)
class ErrorDetail(TypedDict):
    """The `error` of an error envelope: the provider's type (`overloaded_error`) and text."""

    type: str
    message: str


@with_config(_DECLARED)
class ErrorBody(TypedDict):
    """`{"type": "error", "error": {type, message}, "request_id"}`: an HTTP error body, or a
    stream's `error` event (tagged by its `type`), read by the facts row (`facts.FACTS.error`).
    An HTTP body without the `type` (a gateway's) is still this envelope."""

    type: NotRequired[Literal["error"]]
    error: ErrorDetail
    request_id: NotRequired[str | None]


# --- content blocks --------------------------------------------------------------------------


@with_config(_DECLARED)
class CacheControl(TypedDict):
    """`{"type": "ephemeral", "ttl"?}`: a prompt-cache breakpoint after the block it is on."""

    type: Literal["ephemeral"]
    ttl: NotRequired[Literal["5m", "1h"]]


# --- citations -------------------------------------------------------------------------------


@with_config(_LOOSE)
class CharLocation(TypedDict):
    """A character range of a plain-text document (`file_id`, reply-only, is not read)."""

    type: Literal["char_location"]
    cited_text: str
    document_index: Annotated[int, Field(ge=0)]
    document_title: NotRequired[str | None]
    start_char_index: Annotated[int, Field(ge=0)]
    end_char_index: Annotated[int, Field(ge=0)]


@with_config(_LOOSE)
class PageLocation(TypedDict):
    """A page range of a PDF document."""

    type: Literal["page_location"]
    cited_text: str
    document_index: Annotated[int, Field(ge=0)]
    document_title: NotRequired[str | None]
    start_page_number: Annotated[int, Field(ge=1)]
    end_page_number: Annotated[int, Field(ge=1)]


@with_config(_LOOSE)
class ContentBlockLocation(TypedDict):
    """A block range of a custom-content document."""

    type: Literal["content_block_location"]
    cited_text: str
    document_index: Annotated[int, Field(ge=0)]
    document_title: NotRequired[str | None]
    start_block_index: Annotated[int, Field(ge=0)]
    end_block_index: Annotated[int, Field(ge=0)]


@with_config(_LOOSE)
class WebSearchResultLocation(TypedDict):
    """A web search result; `encrypted_index` (opaque) is required when it is sent back."""

    type: Literal["web_search_result_location"]
    cited_text: str
    url: NonEmpty
    title: NotRequired[str | None]
    encrypted_index: str


@with_config(_LOOSE)
class SearchResultLocation(TypedDict):
    """A block range of a `search_result` the request supplied."""

    type: Literal["search_result_location"]
    cited_text: str
    search_result_index: Annotated[int, Field(ge=0)]
    source: NonEmpty
    title: NotRequired[str | None]
    start_block_index: Annotated[int, Field(ge=0)]
    end_block_index: Annotated[int, Field(ge=0)]


Citation = Annotated[
    Annotated[CharLocation, Tag("CharLocation")]
    | Annotated[PageLocation, Tag("PageLocation")]
    | Annotated[ContentBlockLocation, Tag("ContentBlockLocation")]
    | Annotated[WebSearchResultLocation, Tag("WebSearchResultLocation")]
    | Annotated[SearchResultLocation, Tag("SearchResultLocation")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "char_location": "CharLocation",
            "page_location": "PageLocation",
            "content_block_location": "ContentBlockLocation",
            "web_search_result_location": "WebSearchResultLocation",
            "search_result_location": "SearchResultLocation",
        }
    ),
]
"""A text block's citation; a citation type added later is foreign (dropped with a WARN)."""


@with_config(_LOOSE)
class TextBlock(TypedDict):
    """`{"type": "text", "text", "citations"?, "cache_control"?}`."""

    type: Literal["text"]
    text: str
    citations: NotRequired[list[Citation] | None]
    cache_control: NotRequired[CacheControl | None]


@with_config(_LOOSE)
class ToolUseBlock(TypedDict):
    """`{"type": "tool_use", "id", "name", "input"}`: a client tool call; `input` is an object."""

    type: Literal["tool_use"]
    id: str
    name: NonEmpty
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl | None]


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
    cache_control: NotRequired[CacheControl | None]


@with_config(_LOOSE)
class TextSource(TypedDict):
    """A plain-text document given inline (`media_type` is `text/plain`)."""

    type: Literal["text"]
    media_type: str
    data: str


@with_config(_LOOSE)
class FileSource(TypedDict):
    """A document uploaded through the Files API."""

    type: Literal["file"]
    file_id: NonEmpty


DocumentSource = Annotated[
    Annotated[Base64Source, Tag("Base64Source")]
    | Annotated[TextSource, Tag("TextSource")]
    | Annotated[UrlSource, Tag("UrlSource")]
    | Annotated[FileSource, Tag("FileSource")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type({"base64": "Base64Source", "text": "TextSource", "url": "UrlSource", "file": "FileSource"}),
]
"""A document source; a custom-content (`content`) source has no canonical kind."""


@with_config(_LOOSE)
class CitationsConfig(TypedDict):
    """`{"enabled"}`: whether the model is asked to cite the document or search result."""

    enabled: NotRequired[bool]


@with_config(_LOOSE)
class DocumentBlock(TypedDict):
    """`{"type": "document", "source", "title"?, "context"?, "citations"?}` (also the
    document of a web fetch result)."""

    type: Literal["document"]
    source: DocumentSource
    title: NotRequired[str | None]
    context: NotRequired[str | None]
    citations: NotRequired[CitationsConfig | None]
    cache_control: NotRequired[CacheControl | None]


@with_config(_LOOSE)
class SearchResultBlock(TypedDict):
    """`{"type": "search_result", "source", "title", "content": [text], "citations"?}`."""

    type: Literal["search_result"]
    source: NonEmpty
    title: str
    content: list[TextBlock]
    citations: NotRequired[CitationsConfig | None]
    cache_control: NotRequired[CacheControl | None]


ResultItem = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ImageBlock, Tag("ImageBlock")]
    | Annotated[DocumentBlock, Tag("DocumentBlock")]
    | Annotated[SearchResultBlock, Tag("SearchResultBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text": "TextBlock",
            "image": "ImageBlock",
            "document": "DocumentBlock",
            "search_result": "SearchResultBlock",
        }
    ),
]
"""A block inside a tool_result's content (tool references and later types: foreign)."""


@with_config(_LOOSE)
class ToolResultBlock(TypedDict):
    """`{"type": "tool_result", "tool_use_id", "content"?, "is_error"?}` in a user turn."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[Annotated[list[ResultItem], BeforeValidator(_result_blocks)]]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl | None]


@with_config(_LOOSE)
class ServerToolUseBlock(TypedDict):
    """`{"type": "server_tool_use", "id", "name", "input"}`: a tool Anthropic runs itself
    (web search, web fetch, code execution, tool search), or
    `{"type": "mcp_tool_use", ..., "server_name"}` (beta MCP connector): one an MCP server
    runs for it."""

    type: Literal["server_tool_use", "mcp_tool_use"]
    id: NonEmpty
    name: Annotated[str, Field(min_length=1, max_length=128)]
    input: dict[str, Any]
    cache_control: NotRequired[CacheControl | None]


SERVER_TOOL_RESULTS = (
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_result",
)
"""The `<tool>_tool_result` block types of Anthropic's server tools and of the MCP
connector (one shape: an id and a tool-specific `content`)."""


@with_config(_LOOSE)
class WebSearchResult(TypedDict):
    """One result of a web search: its page text is encrypted (replayed, never read)."""

    type: Literal["web_search_result"]
    url: NonEmpty
    title: NotRequired[str | None]
    encrypted_content: str
    page_age: NotRequired[str | None]


@with_config(_LOOSE)
class ToolReference(TypedDict):
    """A tool a tool search found."""

    type: str
    tool_name: NotRequired[str]


@with_config(_LOOSE)
class ToolOutput(TypedDict):
    """The one-object `content` of a server tool result, every kind's readable keys
    declared together: an error (`error_code`), code execution output (`stdout`,
    `stderr`), a text editor view (`content` text), a web fetch (`content` document) or a
    tool search (`tool_references`)."""

    type: str
    error_code: NotRequired[str]
    stdout: NotRequired[str]
    stderr: NotRequired[str]
    content: NotRequired[str | DocumentBlock | list[Any] | None]
    tool_references: NotRequired[list[ToolReference]]


ResultListItem = Annotated[
    Annotated[WebSearchResult, Tag("WebSearchResult")]
    | Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type({"web_search_result": "WebSearchResult", "text": "TextBlock"}),
]
"""An item of a list result: a web search result, or the text of an MCP tool's answer."""


@with_config(_LOOSE)
class ServerToolResultBlock(TypedDict):
    """`{"type": "<tool>_tool_result", "tool_use_id", "content", "is_error"?}`: what a
    server tool gave, a list (web search results, MCP text), one output object or an MCP
    tool's text; read into readable canonical blocks by `server_tools`, and kept whole for
    replay."""

    type: str
    tool_use_id: NonEmpty
    content: str | list[ResultListItem] | ToolOutput
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl | None]


@with_config(_LOOSE)
class CompactionBlock(TypedDict):
    """`{"type": "compaction", "content", "encrypted_content"?, "signature"?}` (beta context
    management): the summary standing in for the turns before it; `content` is null when
    the compaction failed."""

    type: Literal["compaction"]
    content: NotRequired[str | None]
    encrypted_content: NotRequired[str | None]
    cache_control: NotRequired[CacheControl | None]


_SERVER_TAGS = {
    "server_tool_use": "ServerToolUseBlock",
    "mcp_tool_use": "ServerToolUseBlock",
    "compaction": "CompactionBlock",
    **dict.fromkeys(SERVER_TOOL_RESULTS, "ServerToolResultBlock"),
}

ResponseBlock = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ToolUseBlock, Tag("ToolUseBlock")]
    | Annotated[ThinkingBlock, Tag("ThinkingBlock")]
    | Annotated[RedactedThinkingBlock, Tag("RedactedThinkingBlock")]
    | Annotated[ServerToolUseBlock, Tag("ServerToolUseBlock")]
    | Annotated[ServerToolResultBlock, Tag("ServerToolResultBlock")]
    | Annotated[CompactionBlock, Tag("CompactionBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text": "TextBlock",
            "tool_use": "ToolUseBlock",
            "thinking": "ThinkingBlock",
            "redacted_thinking": "RedactedThinkingBlock",
            **_SERVER_TAGS,
        }
    ),
]
"""A block the model writes (`container_upload`, `mcp_tool_use` and later types: foreign)."""

RequestBlock = Annotated[
    Annotated[TextBlock, Tag("TextBlock")]
    | Annotated[ImageBlock, Tag("ImageBlock")]
    | Annotated[ToolUseBlock, Tag("ToolUseBlock")]
    | Annotated[ToolResultBlock, Tag("ToolResultBlock")]
    | Annotated[ThinkingBlock, Tag("ThinkingBlock")]
    | Annotated[RedactedThinkingBlock, Tag("RedactedThinkingBlock")]
    | Annotated[DocumentBlock, Tag("DocumentBlock")]
    | Annotated[SearchResultBlock, Tag("SearchResultBlock")]
    | Annotated[ServerToolUseBlock, Tag("ServerToolUseBlock")]
    | Annotated[ServerToolResultBlock, Tag("ServerToolResultBlock")]
    | Annotated[CompactionBlock, Tag("CompactionBlock")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text": "TextBlock",
            "image": "ImageBlock",
            "tool_use": "ToolUseBlock",
            "tool_result": "ToolResultBlock",
            "thinking": "ThinkingBlock",
            "redacted_thinking": "RedactedThinkingBlock",
            "document": "DocumentBlock",
            "search_result": "SearchResultBlock",
            **_SERVER_TAGS,
        }
    ),
]
"""A block of a recorded request's turn (`container_upload` and later types: foreign)."""


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
    citation: Citation


@with_config(_DECLARED)
class CompactionDelta(TypedDict):
    """The whole summary of a streamed compaction block (it replaces, not appends)."""

    type: Literal["compaction_delta"]
    content: NotRequired[str | None]
    encrypted_content: NotRequired[str | None]


Delta = Annotated[
    Annotated[TextDelta, Tag("TextDelta")]
    | Annotated[InputJsonDelta, Tag("InputJsonDelta")]
    | Annotated[ThinkingDelta, Tag("ThinkingDelta")]
    | Annotated[SignatureDelta, Tag("SignatureDelta")]
    | Annotated[CitationsDelta, Tag("CitationsDelta")]
    | Annotated[CompactionDelta, Tag("CompactionDelta")]
    | Annotated[Foreign, Tag("Foreign")],
    _by_type(
        {
            "text_delta": "TextDelta",
            "input_json_delta": "InputJsonDelta",
            "thinking_delta": "ThinkingDelta",
            "signature_delta": "SignatureDelta",
            "citations_delta": "CitationsDelta",
            "compaction_delta": "CompactionDelta",
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
    strict: NotRequired[bool | None]


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
    "SERVER_TOOL_RESULTS",
    "Base64Source",
    "CacheControl",
    "CharLocation",
    "Citation",
    "CitationsConfig",
    "CitationsDelta",
    "CompactionBlock",
    "CompactionDelta",
    "ContentBlockDelta",
    "ContentBlockLocation",
    "ContentBlockStart",
    "ContentBlockStop",
    "CustomTool",
    "Delta",
    "DocumentBlock",
    "DocumentSource",
    "ErrorBody",
    "ErrorDetail",
    "FileSource",
    "Foreign",
    "ImageBlock",
    "InputJsonDelta",
    "MediaSource",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "PageLocation",
    "RedactedThinkingBlock",
    "Request",
    "RequestBlock",
    "Response",
    "ResponseBlock",
    "ResultItem",
    "ResultListItem",
    "SearchResultBlock",
    "SearchResultLocation",
    "ServerToolResultBlock",
    "ServerToolUseBlock",
    "SignatureDelta",
    "StopDelta",
    "StreamEvent",
    "StreamMessage",
    "TextBlock",
    "TextDelta",
    "TextSource",
    "ThinkingBlock",
    "ThinkingConfig",
    "ThinkingDelta",
    "Tool",
    "ToolChoice",
    "ToolOutput",
    "ToolReference",
    "ToolResultBlock",
    "ToolUseBlock",
    "Turn",
    "UrlSource",
    "Usage",
    "WebSearchResult",
    "WebSearchResultLocation",
]
