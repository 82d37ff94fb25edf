"""What differs between Chat Completions servers, as data: what every dialect row shares.

A dialect is one `ProviderFacts` row, as every provider is: stop reasons, error envelope,
retryability, tool choice, option fields (read by the base adapter and by the mapping),
and the row's Chat fields where servers extend the wire (reasoning details, cache markers,
stream usage, the media parts they take). The provider modules (`openai.py`,
`openrouter.py`, `mistral.py`) declare their rows with `chat_facts`; nothing in this
package asks which provider it is talking to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metis_schema.v3 import StopReason, ToolDefinition

from ...errors import RETRYABLE_HTTP_BELOW_500
from ...usage import Counter, CounterRule
from .._kit.contract import Json, Number
from .._kit.detect import RequestMarks
from .._kit.estimate import JsonLength, Thinking, TokenRow
from .._kit.facts import (
    EFFORT_SAME,
    SCHEMA,
    SCHEMA_DESCRIPTION,
    SCHEMA_NAME,
    SCHEMA_STRICT,
    TOOL_NAME,
    ErrorEnvelope,
    ProviderFacts,
    ToolChoice,
)
from .._kit.importing import function_tool

FINISH_REASONS: dict[str, StopReason] = {
    "stop": StopReason.end_turn,
    "tool_calls": StopReason.tool_use,
    "function_call": StopReason.tool_use,
    "length": StopReason.max_tokens,
    "content_filter": StopReason.content_filter,
    "error": StopReason.error,
}
"""Chat Completions `finish_reason` -> canonical stop reason; anything else is `other`."""

TOOL_CHOICE: dict[ToolChoice, object] = {
    ToolChoice.auto: "auto",
    ToolChoice.none: "none",
    ToolChoice.any: "required",
    ToolChoice.tool: {"type": "function", "function": {"name": TOOL_NAME}},
}
"""`tool_choice` by meaning: "required" is canonical `any`, a named function is `tool`."""

RETRYABLE_TYPES = frozenset(
    {
        "rate_limit_exceeded",
        "rate_limit_error",
        "server_error",
        "overloaded_error",
        "service_unavailable",
        "timeout",
    }
)
"""Error types (OpenAI `type`, a compatible server's `code`) worth another attempt."""

RETRYABLE_STATUS_CODES = frozenset(str(status) for status in (*RETRYABLE_HTTP_BELOW_500, *range(500, 600)))
"""OpenRouter's `error.code` is an HTTP status: retryable as the status would be, even when
the error arrives inside a 200 stream (no status of its own)."""

WAV_MP3: dict[str, str] = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
"""Audio media type -> `input_audio.format`, for servers that take wav and mp3 only (OpenAI)."""

SAMPLING_OPTIONS: dict[str, str] = {"temperature": "temperature", "top_p": "top_p", "stop": "stop"}
"""The options every dialect spells as OpenAI does."""

OUTPUT_SCHEMA: dict[str, object] = {
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": SCHEMA_NAME,
            "description": SCHEMA_DESCRIPTION,
            "schema": SCHEMA,
            "strict": SCHEMA_STRICT,
        },
    }
}
"""Structured output as OpenAI, OpenRouter and Mistral all spell it (`response_format`
json_schema); JSON mode without a schema (`json_object`) stays provider-only."""


REPLY_FINISH_REASONS: Mapping[StopReason, str] = {
    StopReason.refusal: "stop",  # the refusal's text goes in `message.refusal`
    StopReason.stop_sequence: "stop",
    StopReason.pause_turn: "stop",
    StopReason.context_window_exceeded: "length",
    StopReason.error: "stop",
    StopReason.other: "stop",
}
"""Canonical reasons the SDKs' `finish_reason` (stop, length, tool_calls, content_filter,
function_call) has no value for -> the nearest it has, in a reply written for a Chat client."""


CHAT_UNITS: Mapping[str, Counter] = {
    "reasoning_tokens": Counter("completion_tokens_details.reasoning_tokens"),
    "input_audio_tokens": Counter("prompt_tokens_details.audio_tokens"),
    "input_image_tokens": Counter("prompt_tokens_details.image_tokens"),
    "output_audio_tokens": Counter("completion_tokens_details.audio_tokens"),
    "output_image_tokens": Counter("completion_tokens_details.image_tokens"),
}
"""The units OpenAI's `usage` details count (openai-python types/completion_usage.py), for
the dialects' counter rules (`usage` of `chat_facts`)."""


def _tool_text(tool: ToolDefinition) -> tuple[Any, ...]:
    """A tool as a Chat request sends it: the function tool."""
    return (function_tool(tool),)


TOKENS = TokenRow(
    # ceil(characters / 4) over what would be sent: text of system, user, assistant and
    # tool-result blocks; tool names and compact JSON arguments; the bytes of each tool's
    # compact JSON; the reasoning text of this provider's own replies (every dialect here
    # replays reasoning, to the provider that wrote it only: an upper guess, since the
    # model is not known here). Each message adds 4 tokens (role and framing), the reply
    # primer 3, each image 765 (OpenAI's price of a 1024x1024 high-detail image: an upper
    # guess, since sizes are unknown here).
    chars_per_token=4,
    request=3,
    message=4,
    image=765,
    thinking=Thinking.own,
    arguments=JsonLength.compact,
    tool_json=JsonLength.compact_bytes,
    tool_text=_tool_text,
    measured="chars/4 over-counts o200k English prose and JSON punctuation: the estimate errs "
    "high (safe for budgets); against the prompt_tokens of the recorded-shape fixtures within "
    "30% and never more than 5% low (tests/adapters/test_openai_adapter.py, "
    "tests/adapters/test_openrouter_adapter.py test_estimate_input_tokens_error_is_bounded)",
)
"""The Chat Completions numbers for the pre-flight estimate (`_kit.estimate`), every
dialect's by default (`chat_facts`)."""


MARKS = RequestMarks(
    keys=frozenset({"messages"}),
    roles=frozenset({"system", "developer", "tool"}),
    message_keys=frozenset({"tool_calls"}),
    parts=frozenset({"image_url"}),
    reply=(("object", "chat.completion"),),
)
"""What marks a Chat Completions body: `system`/`developer` and `tool` role messages,
`tool_calls`, `image_url` parts; a reply's `"object": "chat.completion"` (each dialect's
by default, `chat_facts`)."""


CHAT_ACCEPTED: Mapping[str, Any] = {
    "n": int,
    "seed": int,
    "user": str,
    "logprobs": bool,
    "top_logprobs": int,
    "logit_bias": dict[str, Number],
    "presence_penalty": Number,
    "frequency_penalty": Number,
    "response_format": Json,
    "parallel_tool_calls": bool,
    "stream_options": Json | None,
    "prediction": Json,
}
"""Chat Completions fields OpenAI and OpenRouter both accept and metis does not map."""


def chat_facts(
    provider: str,
    *,
    error: ErrorEnvelope,
    options: Mapping[str, str],
    usage: CounterRule,
    streams_tool_calls: bool,
    retryable_types: frozenset[str] = RETRYABLE_TYPES,
    never_retry_types: frozenset[str] = frozenset(),
    tool_choice: Mapping[ToolChoice, object] = TOOL_CHOICE,
    file_ids_from: frozenset[str] | None = None,
    stop_reasons: Mapping[str, StopReason] | None = None,
    option_aliases: Mapping[str, tuple[str, ...]] | None = None,
    efforts: Mapping[str, str] = EFFORT_SAME,
    effort_or_budget: bool = False,
    tokens: TokenRow = TOKENS,
    marks: RequestMarks = MARKS,
    **fields: Any,
) -> ProviderFacts:
    """A dialect's row: the shared stop reasons (with the dialect's own further
    `stop_reasons`) and tool choice, its own envelope, options and usage rule (read through
    `wire.Usage`), whether its models stream tool calls in pieces; by default it reads file
    ids of its own provider only, and names the reasoning effort levels as the schema does
    (OpenAI's, OpenRouter's and Mistral's levels). `fields` are the row's further fields as
    they are: what the dialect extends the wire with (`reasoning_details`,
    `plain_reasoning_keys`, `cache_control`, the media parts it takes, ...)."""
    return ProviderFacts(
        provider=provider,
        stop_reasons={**FINISH_REASONS, **(stop_reasons or {})},
        error=error,
        retryable_types=retryable_types,
        never_retry_types=never_retry_types,
        tool_choice=tool_choice,
        options={**SAMPLING_OPTIONS, **options},
        option_aliases=option_aliases or {},
        efforts=efforts,
        effort_or_budget=effort_or_budget,
        output_schema=OUTPUT_SCHEMA,
        file_ids_from=frozenset({provider}) if file_ids_from is None else file_ids_from,
        reply_stop_reasons=REPLY_FINISH_REASONS,
        reply_stop_default="stop",
        created_at=("created", "unix"),  # every Chat dialect's reply says when, in Unix seconds
        tokens=tokens,
        usage=usage,
        marks=marks,
        streams_tool_calls=streams_tool_calls,
        system_messages_in_list=True,  # system and developer messages are turns of the list
        **fields,
    )


def stop_reason(facts: ProviderFacts, finish_reason: str | None, *, refused: bool) -> StopReason:
    """Canonical stop reason of a finish_reason (a refusal that ended normally is `refusal`)."""
    if refused and finish_reason in (None, "stop"):
        return StopReason.refusal
    return facts.stop_reason(finish_reason)


__all__ = [
    "CHAT_ACCEPTED",
    "CHAT_UNITS",
    "FINISH_REASONS",
    "MARKS",
    "OUTPUT_SCHEMA",
    "RETRYABLE_STATUS_CODES",
    "RETRYABLE_TYPES",
    "TOKENS",
    "TOOL_CHOICE",
    "WAV_MP3",
    "chat_facts",
    "stop_reason",
]
