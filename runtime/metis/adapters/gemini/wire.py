"""Gemini's wire objects, declared once (generativelanguage v1beta REST, google-genai 3.4 `types`).

Every body, stream chunk and error envelope the adapter reads is checked against these shapes
by `reader.read`, so a value of the wrong type is a WireFormatError at its JSON path and the
readers after it do no type checks of their own.

As loose as Gemini itself:
- each field is accepted in camelCase (the REST API) or snake_case (Vertex and SDK dumps)
  through `validation_alias=AliasChoices(camel, snake)`; the validated value always holds the
  camelCase key (camelCase wins when both are sent);
- a single object where an array belongs is read as a one-element array (`Many`): Google's
  JSON parser accepts it, and hand-written request bodies use it;
- unknown keys are kept (`extra="allow"`): new part kinds (`toolCall`, ...) are carried
  through for replay, new response fields are ignored;
- `null` is the same as absent.
Types are strict where Gemini's are (a `thought` is a boolean, not "yes"; an enum is a name or
its proto number, never a boolean).
"""

from __future__ import annotations

from typing import Annotated, Any, Required, TypeVar

from pydantic import (
    AliasChoices,
    BeforeValidator,
    ConfigDict,
    Field,
    GetPydanticSchema,
    StrictBool,
    StrictInt,
)
from pydantic import with_config as _with_config
from pydantic_core import core_schema
from typing_extensions import TypedDict

from ...usage import Count

_T = TypeVar("_T")

_LOOSE = ConfigDict(extra="allow")


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, dict) else value


Many = Annotated[list[_T], BeforeValidator(_listed)]
"""A JSON array, or one object standing for a one-element array."""

Enum = Annotated[
    StrictInt | str,
    GetPydanticSchema(
        lambda _type, _handler: core_schema.union_schema(
            [core_schema.int_schema(strict=True), core_schema.str_schema()],
            custom_error_type="enum_value",
            custom_error_message="Input should be an enum name or its proto number",
        )
    ),
]
"""A proto enum as its name or (with `enum-encoding=int`) its number; numbers are named in facts.
One error for both branches, so the error path is the field's, not a union branch's."""


Number = Annotated[float, Field(strict=True)]
"""A JSON number (an integer is taken as a float; a boolean is not a number)."""


def _both(camel: str, snake: str) -> Any:
    """The field under either spelling; the validated value keeps the camelCase key."""
    return Field(validation_alias=AliasChoices(camel, snake))


# --- parts and contents (responses and requests) ------------------------------------------


@_with_config(_LOOSE)
class FunctionCall(TypedDict, total=False):
    name: Required[Annotated[str, Field(min_length=1)]]
    id: str | None
    """Set by some models (Gemini 3, Vertex); echoed back on the functionResponse."""
    args: Any
    """Usually an object; kept as sent otherwise (a string, an array), see from_wire."""


@_with_config(_LOOSE)
class Blob(TypedDict, total=False):
    mimeType: Annotated[str | None, _both("mimeType", "mime_type")]
    data: str | None


@_with_config(_LOOSE)
class FileData(TypedDict, total=False):
    mimeType: Annotated[str | None, _both("mimeType", "mime_type")]
    fileUri: Annotated[str | None, _both("fileUri", "file_uri")]


@_with_config(_LOOSE)
class FunctionResponse(TypedDict, total=False):
    name: str | None
    id: str | None
    response: dict[str, Any] | None
    parts: Many[Part] | None
    """Media returned by the tool (images), Gemini 3."""


@_with_config(_LOOSE)
class ExecutableCode(TypedDict, total=False):
    """Code the model wrote for the built-in code execution tool (Gemini ran it itself)."""

    code: str | None
    language: Enum | None
    id: str | None


@_with_config(_LOOSE)
class CodeExecutionResult(TypedDict, total=False):
    """The result of running the `executableCode` before it."""

    outcome: Enum | None
    output: str | None
    id: str | None


@_with_config(_LOOSE)
class Part(TypedDict, total=False):
    """One part; normally one kind of data (text, a call, a response, media) per part."""

    text: str | None
    thought: StrictBool | None
    thoughtSignature: Annotated[str | None, _both("thoughtSignature", "thought_signature")]
    functionCall: Annotated[FunctionCall | None, _both("functionCall", "function_call")]
    functionResponse: Annotated[FunctionResponse | None, _both("functionResponse", "function_response")]
    inlineData: Annotated[Blob | None, _both("inlineData", "inline_data")]
    fileData: Annotated[FileData | None, _both("fileData", "file_data")]
    executableCode: Annotated[ExecutableCode | None, _both("executableCode", "executable_code")]
    codeExecutionResult: Annotated[
        CodeExecutionResult | None, _both("codeExecutionResult", "code_execution_result")
    ]


@_with_config(_LOOSE)
class Content(TypedDict, total=False):
    role: str | None
    parts: Many[Part] | None


# --- responses and stream chunks ----------------------------------------------------------


@_with_config(_LOOSE)
class WebSource(TypedDict, total=False):
    """A grounding chunk's source: `web` (Google Search), `retrievedContext`, `maps`."""

    uri: str | None
    title: str | None


@_with_config(_LOOSE)
class GroundingChunk(TypedDict, total=False):
    web: WebSource | None
    retrievedContext: Annotated[WebSource | None, _both("retrievedContext", "retrieved_context")]
    maps: WebSource | None


@_with_config(_LOOSE)
class Segment(TypedDict, total=False):
    """A span of the answer: UTF-8 byte offsets into part `partIndex` of the content."""

    partIndex: Annotated[Count | None, _both("partIndex", "part_index")]
    startIndex: Annotated[Count | None, _both("startIndex", "start_index")]
    endIndex: Annotated[Count | None, _both("endIndex", "end_index")]
    text: str | None


@_with_config(_LOOSE)
class GroundingSupport(TypedDict, total=False):
    segment: Segment | None
    groundingChunkIndices: Annotated[
        list[Count] | None, _both("groundingChunkIndices", "grounding_chunk_indices")
    ]


@_with_config(_LOOSE)
class GroundingMetadata(TypedDict, total=False):
    """Grounding with Google Search (and other sources): what supports which span of the answer."""

    groundingChunks: Annotated[Many[GroundingChunk] | None, _both("groundingChunks", "grounding_chunks")]
    groundingSupports: Annotated[
        Many[GroundingSupport] | None, _both("groundingSupports", "grounding_supports")
    ]


@_with_config(_LOOSE)
class CitationSource(TypedDict, total=False):
    """A source a recited passage comes from: UTF-8 byte offsets into the answer."""

    startIndex: Annotated[Count | None, _both("startIndex", "start_index")]
    endIndex: Annotated[Count | None, _both("endIndex", "end_index")]
    uri: str | None
    license: str | None


@_with_config(_LOOSE)
class CitationMetadata(TypedDict, total=False):
    citationSources: Annotated[Many[CitationSource] | None, _both("citationSources", "citation_sources")]


@_with_config(_LOOSE)
class Candidate(TypedDict, total=False):
    content: Content | None
    citationMetadata: Annotated[CitationMetadata | None, _both("citationMetadata", "citation_metadata")]
    groundingMetadata: Annotated[GroundingMetadata | None, _both("groundingMetadata", "grounding_metadata")]
    finishReason: Annotated[Enum | None, _both("finishReason", "finish_reason")]
    finishMessage: Annotated[str | None, _both("finishMessage", "finish_message")]


@_with_config(_LOOSE)
class PromptFeedback(TypedDict, total=False):
    blockReason: Annotated[Enum | None, _both("blockReason", "block_reason")]


@_with_config(_LOOSE)
class ModalityTokenCount(TypedDict, total=False):
    """One modality's share of a count (`promptTokensDetails[]`, `candidatesTokensDetails[]`)."""

    modality: str | None
    tokenCount: Annotated[Count | None, _both("tokenCount", "token_count")]


@_with_config(_LOOSE)
class UsageMetadata(TypedDict, total=False):
    """A response's `usageMetadata`, read through by Gemini's counter rule (`facts.USAGE`),
    camelCase or snake_case alike."""

    promptTokenCount: Annotated[Count | None, _both("promptTokenCount", "prompt_token_count")]
    candidatesTokenCount: Annotated[Count | None, _both("candidatesTokenCount", "candidates_token_count")]
    cachedContentTokenCount: Annotated[
        Count | None, _both("cachedContentTokenCount", "cached_content_token_count")
    ]
    thoughtsTokenCount: Annotated[Count | None, _both("thoughtsTokenCount", "thoughts_token_count")]
    toolUsePromptTokenCount: Annotated[
        Count | None, _both("toolUsePromptTokenCount", "tool_use_prompt_token_count")
    ]
    totalTokenCount: Annotated[Count | None, _both("totalTokenCount", "total_token_count")]
    promptTokensDetails: Annotated[
        Many[ModalityTokenCount] | None, _both("promptTokensDetails", "prompt_tokens_details")
    ]
    candidatesTokensDetails: Annotated[
        Many[ModalityTokenCount] | None, _both("candidatesTokensDetails", "candidates_tokens_details")
    ]


@_with_config(_LOOSE)
class ErrorDetail(TypedDict, total=False):
    """`{"error": {"code": 503, "message": "...", "status": "UNAVAILABLE"}}` (google.rpc.Status)."""

    code: StrictInt | None
    message: str | None
    status: str | None


@_with_config(_LOOSE)
class GenerateContentResponse(TypedDict, total=False):
    """A whole response, or one chunk of a stream (each chunk is a whole response object)."""

    candidates: Many[Candidate] | None
    promptFeedback: Annotated[PromptFeedback | None, _both("promptFeedback", "prompt_feedback")]
    usageMetadata: Annotated[UsageMetadata | None, _both("usageMetadata", "usage_metadata")]
    modelVersion: Annotated[str | None, _both("modelVersion", "model_version")]
    responseId: Annotated[str | None, _both("responseId", "response_id")]
    error: ErrorDetail | None
    """An error sent in place of a response (mid-stream, or as the body)."""


@_with_config(_LOOSE)
class StatusBody(TypedDict):
    """`{"error": {code, message, status}}` (google.rpc.Status); a proxy's plain
    `{"error": "<text>"}` too."""

    error: ErrorDetail | str


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else value


ErrorBody = Annotated[StatusBody, BeforeValidator(_first)]
"""An error body; the JSON-array streaming endpoint sends it as the first element of an array."""


def _unwrapped(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


ResponseBody = Annotated[GenerateContentResponse, BeforeValidator(_unwrapped)]
"""A non-streamed body; the JSON-array endpoint answers a one-chunk reply (or an error) as a
one-element array."""


# --- requests (import) ----------------------------------------------------------------------


def _int64(value: Any) -> Any:
    return int(value) if isinstance(value, str) and value.isdigit() else value


Int64 = Annotated[int, BeforeValidator(_int64), Field(strict=True, ge=0)]
"""A proto int64: Google's JSON writes it as a decimal string, hand-written bodies as a number."""


@_with_config(_LOOSE)
class Schema(TypedDict, total=False):
    """A `parameters` schema: Gemini's OpenAPI 3.0 subset (google.ai.generativelanguage Schema).

    Unknown keys are kept (`extra="allow"`) so the conversion to JSON Schema can name each one
    it drops (`schema.to_json_schema`)."""

    type: Enum | None
    """A Type name (`OBJECT`, any case) or its proto number (`facts.SCHEMA_TYPE_NUMBERS`)."""
    format: str | None
    title: str | None
    description: str | None
    nullable: StrictBool | None
    enum: list[Any] | None
    properties: dict[str, Schema] | None
    required: list[str] | None
    items: Schema | None
    anyOf: Annotated[list[Schema] | None, _both("anyOf", "any_of")]
    propertyOrdering: Annotated[list[str] | None, _both("propertyOrdering", "property_ordering")]
    minItems: Annotated[Int64 | None, _both("minItems", "min_items")]
    maxItems: Annotated[Int64 | None, _both("maxItems", "max_items")]
    minProperties: Annotated[Int64 | None, _both("minProperties", "min_properties")]
    maxProperties: Annotated[Int64 | None, _both("maxProperties", "max_properties")]
    minLength: Annotated[Int64 | None, _both("minLength", "min_length")]
    maxLength: Annotated[Int64 | None, _both("maxLength", "max_length")]
    pattern: str | None
    minimum: Number | None
    maximum: Number | None
    example: Any
    default: Any


@_with_config(_LOOSE)
class FunctionDeclaration(TypedDict, total=False):
    name: Required[str]
    description: str | None
    parameters: Schema | None
    parametersJsonSchema: Annotated[
        dict[str, Any] | None, _both("parametersJsonSchema", "parameters_json_schema")
    ]


DECLARATION_FIELDS = frozenset({"name", "description", "parameters", "parametersJsonSchema"})
"""The declaration fields with a canonical place; any other is reported as dropped."""


@_with_config(_LOOSE)
class Tool(TypedDict, total=False):
    """Function declarations, or a built-in tool (`googleSearch`, `codeExecution`, ...) kept as extra."""

    functionDeclarations: Annotated[
        Many[FunctionDeclaration] | None, _both("functionDeclarations", "function_declarations")
    ]


@_with_config(_LOOSE)
class FunctionCallingConfig(TypedDict, total=False):
    mode: str | None
    allowedFunctionNames: Annotated[list[str] | None, _both("allowedFunctionNames", "allowed_function_names")]


@_with_config(_LOOSE)
class ToolConfig(TypedDict, total=False):
    functionCallingConfig: Annotated[
        FunctionCallingConfig | None, _both("functionCallingConfig", "function_calling_config")
    ]


@_with_config(_LOOSE)
class ThinkingConfig(TypedDict, total=False):
    thinkingBudget: Annotated[StrictInt | None, _both("thinkingBudget", "thinking_budget")]
    thinkingLevel: Annotated[str | None, _both("thinkingLevel", "thinking_level")]
    includeThoughts: Annotated[StrictBool | None, _both("includeThoughts", "include_thoughts")]


@_with_config(_LOOSE)
class GenerationConfig(TypedDict, total=False):
    maxOutputTokens: Annotated[StrictInt | None, _both("maxOutputTokens", "max_output_tokens")]
    temperature: Number | None
    topP: Annotated[Number | None, _both("topP", "top_p")]
    stopSequences: Annotated[list[str] | None, _both("stopSequences", "stop_sequences")]
    thinkingConfig: Annotated[ThinkingConfig | None, _both("thinkingConfig", "thinking_config")]
    responseMimeType: Annotated[str | None, _both("responseMimeType", "response_mime_type")]
    responseJsonSchema: Annotated[Any, _both("responseJsonSchema", "response_json_schema")]


@_with_config(_LOOSE)
class GenerateContentRequest(TypedDict, total=False):
    """A recorded generateContent body (the model is in the URL; a `model` key is read if present)."""

    model: str | None
    contents: Required[Many[Content]]
    systemInstruction: Annotated[str | Content | None, _both("systemInstruction", "system_instruction")]
    tools: Many[Tool] | None
    toolConfig: Annotated[ToolConfig | None, _both("toolConfig", "tool_config")]
    generationConfig: Annotated[GenerationConfig | None, _both("generationConfig", "generation_config")]


__all__ = [
    "DECLARATION_FIELDS",
    "Blob",
    "Candidate",
    "CitationMetadata",
    "CitationSource",
    "CodeExecutionResult",
    "Content",
    "ErrorBody",
    "ErrorDetail",
    "ExecutableCode",
    "FileData",
    "FunctionCall",
    "FunctionCallingConfig",
    "FunctionDeclaration",
    "FunctionResponse",
    "GenerateContentRequest",
    "GenerateContentResponse",
    "GenerationConfig",
    "GroundingChunk",
    "GroundingMetadata",
    "GroundingSupport",
    "Many",
    "ModalityTokenCount",
    "Part",
    "PromptFeedback",
    "ResponseBody",
    "Schema",
    "Segment",
    "StatusBody",
    "ThinkingConfig",
    "Tool",
    "ToolConfig",
    "UsageMetadata",
    "WebSource",
]
