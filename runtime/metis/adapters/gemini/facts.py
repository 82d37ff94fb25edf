"""Gemini's facts row: stop reasons (by name and by proto number), error envelope,
retryable statuses, tool choice and option fields — data, read by shared code.

Beside the row, two tables only this package reads, as data too: its enums may arrive as
proto numbers (`enum-encoding=int`), and a refused prompt ends with a
`promptFeedback.blockReason` instead of a finish reason. Its error envelope may arrive wrapped
in a JSON array (the array-streaming endpoint): the declared shape (`wire.ErrorBody`) says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from metis_schema.v3 import StopReason, ToolDefinition

from ...usage import Counter, CounterRule
from .._kit.contract import Json, RequestContract, either
from .._kit.detect import RequestMarks
from .._kit.estimate import JsonLength, TokenRow
from .._kit.facts import SCHEMA, TOOL_NAME, ErrorEnvelope, ErrorFields, ProviderFacts, ToolChoice
from .wire import ErrorBody, StatusBody, UsageMetadata

NAME = "gemini"
ENDPOINT_KIND = "generativelanguage"
"""The endpoint family this adapter speaks (AI Studio). Signatures recorded under another kind
(a Vertex or proxy adapter) are never replayed here, and ours never go there."""
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a missing thought signature on a replayed call."""
DEFAULT_IMPORT_MODEL = "gemini:gemini-2.5-flash"
"""Model assumed for an imported request body that names none (the model is in Gemini's URL)."""


SCHEMA_TYPE_NUMBERS: Mapping[int, str] = MappingProxyType(
    {
        0: "TYPE_UNSPECIFIED",
        1: "STRING",
        2: "NUMBER",
        3: "INTEGER",
        4: "BOOLEAN",
        5: "ARRAY",
        6: "OBJECT",
        7: "NULL",
    }
)
"""google.ai.generativelanguage.v1beta Type: proto number -> name. A `parameters` schema names a
type by name (any case: `OBJECT`, `object`) or, written with `enum-encoding=int`, by number; the
JSON Schema type is the name in lower case (TYPE_UNSPECIFIED: no type)."""

CODE_EXECUTION = "code_execution"
"""The canonical name of Gemini's built-in code execution tool (`tools: [{"codeExecution": {}}]`):
its `executableCode` / `codeExecutionResult` parts are server_tool_use / server_tool_result."""
UNNAMED_CALL = "gemini-unnamed:"
"""Prefix of the id metis gives an `executableCode` part Gemini sent without one (the block needs
an id to pair its result): such an id is Gemini's never, so it is not sent back."""
CODE_OK = ("OUTCOME_OK", 1)
"""A codeExecutionResult outcome that is not a failure (by name or proto number); absent too."""

PARAMETERS_FORMATS = frozenset({"float", "double", "int32", "int64", "enum", "date-time"})
"""The `format` values `parameters` takes (NUMBER: float, double; INTEGER: int32, int64; STRING:
enum, date-time); a schema with another format goes as `parametersJsonSchema`."""


_CONTENT_FILTER = StopReason.content_filter

FINISH_REASON_NUMBERS: Mapping[int, str] = MappingProxyType(
    {
        0: "FINISH_REASON_UNSPECIFIED",
        1: "STOP",
        2: "MAX_TOKENS",
        3: "SAFETY",
        4: "RECITATION",
        5: "OTHER",
        6: "LANGUAGE",
        7: "BLOCKLIST",
        8: "PROHIBITED_CONTENT",
        9: "SPII",
        10: "MALFORMED_FUNCTION_CALL",
        11: "IMAGE_SAFETY",
        12: "UNEXPECTED_TOOL_CALL",
        13: "TOO_MANY_TOOL_CALLS",
        14: "IMAGE_PROHIBITED_CONTENT",
        15: "IMAGE_OTHER",
        16: "NO_IMAGE",
        17: "IMAGE_RECITATION",
        18: "MISSING_THOUGHT_SIGNATURE",
        19: "MALFORMED_RESPONSE",
    }
)
"""Candidate.FinishReason proto number -> name. google.ai.generativelanguage.v1beta numbering:
0-12 checked against the generated v1beta client (LANGUAGE = 6, OTHER = 5: google-genai's enum
declares them the other way round), 13-19 follow the current proto. An unknown number becomes
`FINISH_REASON_<n>` (`other`)."""

BLOCK_REASONS: Mapping[str, StopReason] = MappingProxyType(
    {
        "SAFETY": _CONTENT_FILTER,
        "BLOCKLIST": _CONTENT_FILTER,
        "PROHIBITED_CONTENT": _CONTENT_FILTER,
        "IMAGE_SAFETY": _CONTENT_FILTER,
    }
)
"""promptFeedback.blockReason (the prompt was refused, no candidate) -> canonical stop reason."""

BLOCK_REASON_NUMBERS: Mapping[int, str] = MappingProxyType(
    {
        0: "BLOCK_REASON_UNSPECIFIED",
        1: "SAFETY",
        2: "OTHER",
        3: "BLOCKLIST",
        4: "PROHIBITED_CONTENT",
        5: "IMAGE_SAFETY",
    }
)
"""PromptFeedback.BlockReason proto number -> name."""


def finish_reason(value: str | int | None) -> str | None:
    """A finishReason's name (None when absent or unspecified)."""
    return _enum_name(value, FINISH_REASON_NUMBERS, "FINISH_REASON")


def block_reason(value: str | int | None) -> str | None:
    """A blockReason's name (None when absent or unspecified)."""
    return _enum_name(value, BLOCK_REASON_NUMBERS, "BLOCK_REASON")


def block_stop_reason(name: str) -> StopReason:
    """The canonical stop reason of a refused prompt (`other` for anything unknown)."""
    return BLOCK_REASONS.get(name, StopReason.other)


def _enum_name(value: str | int | None, numbers: Mapping[int, str], prefix: str) -> str | None:
    if value is None:
        return None
    name = numbers.get(value, f"{prefix}_{value}") if isinstance(value, int) else value
    return None if not name or name.endswith("_UNSPECIFIED") else name


def _error_fields(body: StatusBody) -> ErrorFields:
    """`{"error": {code, message, status}}` (google.rpc.Status): the status names the type.
    A proxy's `{"error": "<text>"}` is its text."""
    error = body["error"]
    if isinstance(error, str):
        return ErrorFields(message=error)
    return ErrorFields(message=error.get("message"), kind=error.get("status"))


def _tool_text(tool: ToolDefinition) -> tuple[Any, ...]:
    """A tool as a Gemini request declares it (`to_wire.declaration`, imported when first
    measured: the writer reads this row)."""
    from .to_wire import declaration

    return (declaration(tool),)


TOKENS = TokenRow(
    # ceil(characters / 4) of every text, thought, tool call (name + JSON arguments), tool
    # result and tool declaration (JSON, as json.dumps spaces it), + 258 per image + 3 per
    # message. Gemini's tokenizer averages about four characters of English or code per
    # token; images are billed per tile (258 tokens up to 384x384 px), so a large image is
    # undercounted.
    chars_per_token=4,
    message=3,
    image=258,
    arguments=JsonLength.spaced,
    tool_json=JsonLength.spaced,
    tool_text=_tool_text,
    measured="against the hand-written fixtures' promptTokenCount (tests/adapters/test_gemini_adapter.py "
    "test_estimate_error_is_bounded): 6.7-15.7% on prompts of 200+ tokens (code is the worst: "
    "it tokenizes denser), +4 tokens on a 10-token sentence",
)
"""Gemini's numbers for the pre-flight estimate (`_kit.estimate`)."""


def _modality(details: str, *modalities: str) -> Counter:
    """The tokens of `modalities` in a details list (`promptTokensDetails[modality=AUDIO]`)."""
    return Counter(" + ".join(f"{details}[modality={m}].tokenCount" for m in modalities))


USAGE = CounterRule(
    source="google-genai GenerateContentResponseUsageMetadata (cachedContentTokenCount is part of "
    "promptTokenCount; thoughtsTokenCount is not part of candidatesTokenCount); "
    "provider-wire-formats.md §3",
    # read through the declared shape, a snake_case object (the Python SDK's) has the
    # camelCase keys below
    shape=UsageMetadata,
    prompt=Counter("promptTokenCount"),
    output=Counter("candidatesTokenCount"),
    cached=Counter("cachedContentTokenCount"),
    extra_input=Counter("toolUsePromptTokenCount"),
    extra_output=Counter("thoughtsTokenCount"),
    units={
        "reasoning_tokens": Counter("thoughtsTokenCount"),
        "input_audio_tokens": _modality("promptTokensDetails", "AUDIO"),
        "input_image_tokens": _modality("promptTokensDetails", "IMAGE", "DOCUMENT"),
        "output_audio_tokens": _modality("candidatesTokensDetails", "AUDIO"),
        "output_image_tokens": _modality("candidatesTokensDetails", "IMAGE"),
    },
)
"""How Gemini's `usageMetadata` counts (`metis.usage`)."""

CONTRACT = RequestContract(
    "gemini",
    "metis.adapters.gemini.wire:GenerateContentRequest",
    accepted={
        "safetySettings": either("safetySettings", "safety_settings", list[Json]),
        "cachedContent": either("cachedContent", "cached_content", str),
        "labels": dict[str, str],
    },
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = ProviderFacts(
    provider=NAME,
    streams_tool_calls=False,
    system_messages_in_list=False,
    genai_prices_id="google",
    contract=CONTRACT,
    stop_reasons=MappingProxyType(
        {
            "STOP": StopReason.end_turn,
            "MAX_TOKENS": StopReason.max_tokens,
            "SAFETY": _CONTENT_FILTER,
            "RECITATION": _CONTENT_FILTER,
            "BLOCKLIST": _CONTENT_FILTER,
            "PROHIBITED_CONTENT": _CONTENT_FILTER,
            "SPII": _CONTENT_FILTER,
            "IMAGE_SAFETY": _CONTENT_FILTER,
            "IMAGE_PROHIBITED_CONTENT": _CONTENT_FILTER,
            "IMAGE_RECITATION": _CONTENT_FILTER,
            "MODEL_ARMOR": _CONTENT_FILTER,
        }
    ),
    # every other finishReason (MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE, UNEXPECTED_TOOL_CALL,
    # ...) is `other`; a call in the content makes it `tool_use` whatever Gemini says.
    error=ErrorEnvelope(shape=ErrorBody, fields=_error_fields),
    retryable_types=frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED"}),
    tool_choice_field="toolConfig",
    tool_choice=MappingProxyType(
        {
            ToolChoice.auto: {"functionCallingConfig": {"mode": "AUTO"}},
            ToolChoice.any: {"functionCallingConfig": {"mode": "ANY"}},
            ToolChoice.none: {"functionCallingConfig": {"mode": "NONE"}},
            ToolChoice.tool: {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [TOOL_NAME]}},
        }
    ),
    # the wire value is the whole `toolConfig` object
    options=MappingProxyType(
        {
            "max_tokens": "generationConfig.maxOutputTokens",
            "temperature": "generationConfig.temperature",
            "top_p": "generationConfig.topP",
            "stop": "generationConfig.stopSequences",
            "thinking_budget": "generationConfig.thinkingConfig.thinkingBudget",
            "reasoning_effort": "generationConfig.thinkingConfig.thinkingLevel",
        }
    ),
    # `thinkingLevel` (google-genai `ThinkingLevel`: MINIMAL, LOW, MEDIUM, HIGH, XHIGH),
    # spelled lower-case as the REST documentation's requests do
    # (https://ai.google.dev/gemini-api/docs/thinking); "none" goes as minimal, the nearest
    # (Gemini 3 cannot turn thinking off), with a WARN. A request takes a level or a budget,
    # not both: given both, the budget.
    efforts=MappingProxyType({level: level for level in ("minimal", "low", "medium", "high", "xhigh")}),
    effort_or_budget=True,
    # JSON Schema proper goes to `responseJsonSchema`; `responseSchema` (Gemini's OpenAPI
    # subset) and JSON mode without a schema stay provider-only.
    output_schema=MappingProxyType(
        {"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA}}
    ),
    # File API files (`https://generativelanguage.googleapis.com/.../files/...` URIs).
    file_ids_from=frozenset({NAME}),
    tokens=TOKENS,
    usage=USAGE,
    # `contents` and the system instruction, in either spelling; a reply's `candidates`
    marks=RequestMarks(
        keys=frozenset({"contents", "systemInstruction", "system_instruction"}), reply=(("candidates", None),)
    ),
)

__all__ = [
    "BLOCK_REASONS",
    "BLOCK_REASON_NUMBERS",
    "CODE_EXECUTION",
    "CODE_OK",
    "DEFAULT_IMPORT_MODEL",
    "ENDPOINT_KIND",
    "FACTS",
    "FINISH_REASON_NUMBERS",
    "NAME",
    "PARAMETERS_FORMATS",
    "SCHEMA_TYPE_NUMBERS",
    "SKIP_SIGNATURE",
    "TOKENS",
    "UNNAMED_CALL",
    "USAGE",
    "block_reason",
    "block_stop_reason",
    "finish_reason",
]
