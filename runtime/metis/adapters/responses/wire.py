"""The Responses API wire objects, declared once (OpenAI's API reference, the Open Responses
specification and the `openai` / `openresponses-types` SDK types they generate).

Items are told apart by their `type`. The types metis maps (`message`, `function_call`,
`function_call_output`, `reasoning`, `item_reference`, `compaction`, the provider's own
tool calls such as `web_search_call`) have declared shapes; every other item (client-run
calls like `computer_call`, extension items named `<vendor>:<type>` by Open Responses) is
`OtherItem`, kept whole: metis has no block for it and carries it in provider_raw.
Shapes are `strict` (the input is parsed JSON) and as loose as the servers: unknown keys
are accepted (kept where the object is kept whole, `_LOOSE`; not copied where only fields
are read, `_READ`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Discriminator, Field, Tag, with_config
from typing_extensions import TypedDict

from ...usage import TextCount

_LOOSE = ConfigDict(extra="allow", strict=True)
_READ = ConfigDict(extra="ignore", strict=True)

NonEmpty = Annotated[str, Field(min_length=1)]

SERVER_TOOL_CALLS = frozenset(
    {"web_search_call", "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call"}
)
"""Output items of tools the provider runs itself: ServerToolUseBlocks (name: the type
without `_call`). Calls the client must answer (`computer_call`, `custom_tool_call`,
shell calls) are not here: they have no canonical block and are kept raw."""

SERVER_TOOL_ITEMS = frozenset(
    {
        "mcp_list_tools",
        "mcp_approval_request",
        "tool_search_call",
        "tool_search_output",
        "mcp_approval_response",
    }
)
"""The provider's tool items that stand alone rather than holding a call and its result:
an MCP server's tool listing (a server_tool_use `mcp_list_tools` with the listing as its
result), an MCP call awaiting approval and a tool search call (server_tool_use blocks
`mcp_approval_request`, `tool_search`), and what answers them in a later item
(`ANSWERS`: server_tool_result blocks). Each is kept whole and goes back as itself."""


def _item_kind(known: frozenset[str], server_calls: frozenset[str]) -> Discriminator:
    """A union member chosen by an object's `type` (`server_call` for the provider's own
    tools, `other` for any other type not in `known`)."""

    def kind(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        tag = value.get("type", "message" if "role" in value else None)
        if tag is not None and not isinstance(tag, str):  # `other` then names the bad type
            return "other"
        if tag in server_calls:
            return "server_call"
        return tag if tag in known else "other"

    return Discriminator(kind, custom_error_type="wire_item", custom_error_message="must be an object")


# --- content parts ------------------------------------------------------------------------


class InputAudio(TypedDict):
    """An `input_audio` part's audio: base64 bytes and their format (`mp3` or `wav`)."""

    data: str
    format: str


@with_config(_LOOSE)
class Part(TypedDict):
    """A message content part: `input_text`, `input_image`, `input_file`, `input_audio`
    (input); `output_text` (with `annotations`), `refusal` (output)."""

    type: str
    text: NotRequired[str]
    refusal: NotRequired[str]
    image_url: NotRequired[str | None]
    file_id: NotRequired[str | None]
    detail: NotRequired[Any]
    annotations: NotRequired[list[dict[str, Any]]]
    input_audio: NotRequired[InputAudio]


PartList = Annotated[list[Part], Field()]


def _string_or_array(value: Any) -> str | None:
    """Which arm of a string-or-list field (`content`, `input`) a value is; None: neither."""
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else None


Content = Annotated[
    Annotated[str, Tag("string")] | Annotated[list[Part], Tag("array")],
    Discriminator(
        _string_or_array,
        custom_error_type="wire_json_type",
        custom_error_message="must be a string or a list of parts",
    ),
]


# --- items --------------------------------------------------------------------------------


@with_config(_LOOSE)
class MessageItem(TypedDict):
    """A message: input (user / system / developer / assistant history) or an output message."""

    type: NotRequired[Literal["message"]]
    role: Literal["user", "system", "developer", "assistant"]
    content: Content
    id: NotRequired[str | None]
    status: NotRequired[Any]
    phase: NotRequired[str | None]
    """`commentary` or `final_answer` (gpt-5.x): kept and replayed to the same endpoint."""


@with_config(_LOOSE)
class FunctionCallItem(TypedDict):
    type: Literal["function_call"]
    call_id: NonEmpty
    name: NonEmpty
    arguments: str
    id: NotRequired[str | None]
    status: NotRequired[Any]


@with_config(_LOOSE)
class FunctionCallOutputItem(TypedDict):
    type: Literal["function_call_output"]
    call_id: NonEmpty
    output: Content
    id: NotRequired[str | None]
    status: NotRequired[Any]


@with_config(_LOOSE)
class SummaryPart(TypedDict):
    type: NotRequired[str]
    text: str


@with_config(_LOOSE)
class ReasoningItem(TypedDict):
    """Reasoning: summary parts (`summary_text`), raw `reasoning_text` content (Open
    Responses servers that show it), and `encrypted_content` only its endpoint can read."""

    type: Literal["reasoning"]
    id: NotRequired[str | None]
    summary: NotRequired[list[SummaryPart]]
    content: NotRequired[list[SummaryPart] | None]
    encrypted_content: NotRequired[str | None]
    status: NotRequired[Any]


@with_config(_LOOSE)
class ItemReference(TypedDict):
    type: Literal["item_reference"]
    id: NonEmpty


@with_config(_LOOSE)
class CompactionItem(TypedDict):
    """The history before it, compacted by the server: opaque, readable only by it."""

    type: Literal["compaction"]
    encrypted_content: NotRequired[str | None]
    """Required (non-empty) in a reply and in history (`from_wire.whole_item_blocks` says
    where it is missing); a stream's `output_item.added` may announce the item before its
    content exists, as it does reasoning and function calls."""
    id: NotRequired[str | None]


@with_config(_LOOSE)
class SearchSource(TypedDict):
    """A source a web search used (`action.sources`, with `include: web_search_call.action.sources`)."""

    type: NotRequired[str]
    url: NotRequired[str]
    name: NotRequired[str]
    """An API source (Open Responses / OpenAI vertical sources) names itself instead of a URL."""


@with_config(_LOOSE)
class SearchAction(TypedDict):
    """A web_search_call's `action`: `search` (query, and its sources), `open_page`, `find_in_page`."""

    type: NotRequired[str]
    sources: NotRequired[list[SearchSource] | None]


@with_config(_LOOSE)
class FileSearchResult(TypedDict):
    """One of a file_search_call's `results`."""

    file_id: NotRequired[str | None]
    filename: NotRequired[str | None]
    text: NotRequired[str | None]
    score: NotRequired[int | float | None]


@with_config(_LOOSE)
class CodeOutput(TypedDict):
    """One of a code_interpreter_call's `outputs`: `logs` (text) or `image` (a URL)."""

    type: str
    logs: NotRequired[str]
    url: NotRequired[str]


@with_config(_LOOSE)
class ServerCallItem(TypedDict):
    """A call of a tool the provider ran itself (`web_search_call`, ...): kept whole for
    replay. The fields that hold what the tool returned are declared (openai-python
    `types/responses`: response_function_web_search.py, response_file_search_tool_call.py,
    response_code_interpreter_tool_call.py, response_output_item.py ImageGenerationCall and
    McpCall); `from_wire.server_results` reads them."""

    type: str
    id: NotRequired[NonEmpty]
    """Required of the calls holding their result (`whole_item_blocks` says so at its path);
    optional on the standalone items sent as input (`SERVER_TOOL_ITEMS`)."""
    status: NotRequired[str | None]
    action: NotRequired[SearchAction | None]
    results: NotRequired[list[FileSearchResult] | None]
    outputs: NotRequired[list[CodeOutput] | None]
    result: NotRequired[str | None]
    """image_generation_call: the image, base64."""
    output_format: NotRequired[str | None]
    output: NotRequired[str | None]
    """mcp_call: the tool's output text."""
    error: NotRequired[Any]
    """mcp_call: a string, or an object (`McpToolCallError`: protocol, execution or HTTP error)."""
    tools: NotRequired[list[dict[str, Any]] | None]
    """mcp_list_tools: the server's tools; tool_search_output: the tools it loaded."""
    call_id: NotRequired[str | None]
    """tool_search_call / tool_search_output: the search's call id (null when server-run)."""
    execution: NotRequired[str | None]
    approval_request_id: NotRequired[str | None]
    approve: NotRequired[bool]
    reason: NotRequired[str | None]


@with_config(_LOOSE)
class OtherItem(TypedDict):
    """Any other item (built-in tool calls, compaction, extensions): kept whole."""

    type: str


_KNOWN = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference", "compaction"}
)

Item = Annotated[
    Annotated[MessageItem, Tag("message")]
    | Annotated[FunctionCallItem, Tag("function_call")]
    | Annotated[FunctionCallOutputItem, Tag("function_call_output")]
    | Annotated[ReasoningItem, Tag("reasoning")]
    | Annotated[ItemReference, Tag("item_reference")]
    | Annotated[CompactionItem, Tag("compaction")]
    | Annotated[ServerCallItem, Tag("server_call")]
    | Annotated[OtherItem, Tag("other")],
    _item_kind(_KNOWN, SERVER_TOOL_CALLS | SERVER_TOOL_ITEMS),
]


# --- the response -------------------------------------------------------------------------


@with_config(_READ)
class IncompleteDetails(TypedDict):
    reason: NotRequired[str | None]


@with_config(_LOOSE)
class ErrorDetail(TypedDict):
    """`error` of an error body, of a failed response, or an `error` stream event's fields."""

    message: NotRequired[Any]
    type: NotRequired[Any]
    code: NotRequired[Any]
    param: NotRequired[Any]


@with_config(_LOOSE)
class ErrorBody(TypedDict):
    """`{"error": <ErrorDetail>}`, an HTTP error body of OpenAI and the Open Responses
    specification; a compatible server's plain `{"error": "<text>"}` too. A failed response's
    `error` and an `error` stream event's fields are read as `{"error": <them>}`."""

    error: ErrorDetail | str


@with_config(_READ)
class InputTokensDetails(TypedDict, total=False):
    cached_tokens: TextCount | None
    cache_write_tokens: TextCount | None


@with_config(_READ)
class OutputTokensDetails(TypedDict, total=False):
    reasoning_tokens: TextCount | None


@with_config(_READ)
class Usage(TypedDict, total=False):
    """A response's `usage` (openai-python types/responses/response_usage.py): read through by
    the counter rule (`metis.usage`), which reads only what is declared here."""

    input_tokens: TextCount | None
    output_tokens: TextCount | None
    input_tokens_details: InputTokensDetails | None
    output_tokens_details: OutputTokensDetails | None


@with_config(_READ)
class Response(TypedDict):
    """A response object (`object: "response"`), the body of a non-streamed reply."""

    id: NotRequired[Any]
    model: NotRequired[Any]
    status: NotRequired[str | None]
    output: list[Item]
    usage: NotRequired[dict[str, Any] | None]
    incomplete_details: NotRequired[IncompleteDetails | None]
    error: NotRequired[ErrorDetail | None]
    previous_response_id: NotRequired[Any]


# --- the stream ---------------------------------------------------------------------------


@with_config(_READ)
class Event(TypedDict):
    """One semantic SSE event. Only the fields metis reads are declared; which are present
    depends on `type` (the decoder reads each type's own)."""

    type: NonEmpty
    sequence_number: NotRequired[int]
    output_index: NotRequired[int]
    content_index: NotRequired[int]
    summary_index: NotRequired[int]
    item_id: NotRequired[str]
    delta: NotRequired[str]
    item: NotRequired[Item]
    response: NotRequired[Response]
    annotation: NotRequired[dict[str, Any]]
    message: NotRequired[Any]
    code: NotRequired[Any]
    param: NotRequired[Any]
    error: NotRequired[ErrorDetail]
    """An `error` event's payload as Open Responses nests it (OpenAI puts its fields at the top)."""


# --- the request (read back by the importer) -----------------------------------------------


@with_config(_LOOSE)
class Tool(TypedDict):
    """A tool: `function` (name, description, parameters, strict) or a built-in tool."""

    type: str
    name: NotRequired[str]
    description: NotRequired[str | None]
    parameters: NotRequired[dict[str, Any] | None]
    strict: NotRequired[bool | None]


Input = Annotated[
    Annotated[str, Tag("string")] | Annotated[list[Item], Tag("array")],
    Discriminator(
        _string_or_array,
        custom_error_type="wire_json_type",
        custom_error_message="must be a string or a list of items",
    ),
]


@with_config(_LOOSE)
class Request(TypedDict):
    """A recorded request body; fields not declared here are Responses-only options
    (`AdapterOptions.provider_options`), replayed to it alone."""

    model: NonEmpty
    input: NotRequired[Input]
    instructions: NotRequired[str | None]
    tools: NotRequired[list[Tool] | None]
    tool_choice: NotRequired[Any]
    stream: NotRequired[Any]
    max_output_tokens: NotRequired[int | None]
    temperature: NotRequired[int | float | None]
    top_p: NotRequired[int | float | None]
    previous_response_id: NotRequired[str | None]


__all__ = [
    "SERVER_TOOL_CALLS",
    "SERVER_TOOL_ITEMS",
    "CodeOutput",
    "CompactionItem",
    "ErrorBody",
    "ErrorDetail",
    "Event",
    "FileSearchResult",
    "FunctionCallItem",
    "FunctionCallOutputItem",
    "InputAudio",
    "Item",
    "ItemReference",
    "MessageItem",
    "OtherItem",
    "Part",
    "ReasoningItem",
    "Request",
    "Response",
    "SearchAction",
    "SearchSource",
    "ServerCallItem",
    "Tool",
    "Usage",
]
