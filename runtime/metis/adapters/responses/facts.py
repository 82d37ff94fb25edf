"""What differs between Responses API servers, as data: two `ProviderFacts` rows.

Two rows, alike but for what the writer asks for (`request_store`,
`include_encrypted_reasoning`), keyed by their `dialect`: OpenAI's own endpoint
(`api.openai.com`) and any other Open Responses server (vLLM, Ollama, LM Studio, Hugging
Face, OpenRouter's `/responses`). The base URL picks the row: the client merges
`ResponsesAdapter.custom_server_extra` (the directive `{"metis": {"dialect":
"open-responses"}}`) into the options of a request to any base URL other than OpenAI's,
and the mapping reads that row; nothing else asks which server it is.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from metis_schema.v3 import StopReason, ToolDefinition

from ...usage import Counter, CounterRule
from .._kit.contract import Json, Number, RequestContract
from .._kit.detect import RequestMarks
from .._kit.estimate import JsonLength, TokenRow
from .._kit.facts import (
    EFFORT_SAME,
    SCHEMA,
    SCHEMA_DESCRIPTION,
    SCHEMA_NAME,
    SCHEMA_STRICT,
    TOOL_NAME,
    ErrorEnvelope,
    ErrorFields,
    ProviderFacts,
    ToolChoice,
)
from ..chat.facts import RETRYABLE_TYPES, WAV_MP3
from .wire import SERVER_TOOL_CALLS, SERVER_TOOL_ITEMS, ErrorBody, Usage

PROVIDER = "responses"

STATUS_REASONS: dict[str, StopReason] = {
    "completed": StopReason.end_turn,
    "max_output_tokens": StopReason.max_tokens,
    "content_filter": StopReason.content_filter,
    "failed": StopReason.error,
}
"""A response's `status`, or for `incomplete` its `incomplete_details.reason` -> canonical.
A completed response with function calls is `tool_use`; anything unknown is `other`."""

TOOL_CHOICE: dict[ToolChoice, object] = {
    ToolChoice.auto: "auto",
    ToolChoice.none: "none",
    ToolChoice.any: "required",
    ToolChoice.tool: {"type": "function", "name": TOOL_NAME},
}

ANSWERS: dict[str, tuple[str, str]] = {
    "tool_search_output": ("call_id", "tool_search_call"),
    "mcp_approval_response": ("approval_request_id", "mcp_approval_request"),
}
"""An answering item -> (its field naming what it answers, the item type it answers)."""

AWAITS_CLIENT = frozenset({"mcp_approval_request"})
"""Items that end a turn waiting for the client (an approval), like a function call:
the reply's stop reason is `tool_use` (so is a `tool_search_call` executed by the client)."""

OPTIONS = {
    "max_tokens": "max_output_tokens",
    "temperature": "temperature",
    "top_p": "top_p",
    "reasoning_effort": "reasoning.effort",
}
"""No `stop` field and no token budget for reasoning; `reasoning.effort` is the canonical
effort, in the schema's levels (openai `Reasoning.effort`; its further "max" stays
provider-only), `reasoning.summary` provider-only."""

OUTPUT_SCHEMA: dict[str, object] = {
    "text": {
        "format": {
            "type": "json_schema",
            "name": SCHEMA_NAME,
            "description": SCHEMA_DESCRIPTION,
            "schema": SCHEMA,
            "strict": SCHEMA_STRICT,
        }
    }
}
"""Structured output: `text.format` json_schema (the name is required); `text.verbosity` and
other formats stay provider-only."""


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"error": {"message", "type", "param", "code"}}` from OpenAI and the Open Responses
    specification alike; `param` names the request field at fault. An error that names no
    `type` names its kind in `code` (OpenAI's `error` stream events, a failed response's
    `error`); a compatible server's `{"error": "<text>"}` is its text."""
    error = body["error"]
    if isinstance(error, str):
        return ErrorFields(message=error)
    return ErrorFields(
        message=error.get("message"),
        kind=error.get("type") or error.get("code"),
        notes=(("param", error.get("param")),),
    )


def _tool_text(tool: ToolDefinition) -> tuple[Any, ...]:
    """A tool as the estimate counts it: the JSON of its canonical definition."""
    return (tool.model_dump(mode="json", exclude_none=True),)


TOKENS = TokenRow(
    # ceil(characters / 4) over what would be sent: text of every block, tool names and
    # compact JSON arguments, the bytes of each tool definition's compact JSON, and
    # reasoning summaries (encrypted reasoning is counted by the server and cannot be seen
    # here: an underestimate for reasoning-heavy histories). Each message adds 4 tokens,
    # each image 765 (OpenAI's price of a 1024x1024 high-detail image: an upper guess,
    # sizes are unknown here).
    chars_per_token=4,
    message=4,
    image=765,
    arguments=JsonLength.compact,
    tool_json=JsonLength.compact_bytes,
    tool_text=_tool_text,
    measured="not measured against recorded usage (the method is Chat Completions', whose "
    "error is measured there); tests/adapters/test_responses_adapter.py "
    "test_input_estimate_counts_text_tools_and_images holds what it counts",
)
"""The Responses API's numbers for the pre-flight estimate (`_kit.estimate`)."""


USAGE = CounterRule(
    source="OpenAI SDK types/responses/response_usage.py (cached_tokens part of input_tokens, "
    "reasoning_tokens part of output_tokens); provider-wire-formats.md §2",
    shape=Usage,
    prompt=Counter("input_tokens"),
    output=Counter("output_tokens"),
    cached=Counter("input_tokens_details.cached_tokens"),
    written=Counter("input_tokens_details.cache_write_tokens"),
    units={"reasoning_tokens": Counter("output_tokens_details.reasoning_tokens")},
    # usage counts no built-in tool call; each is an output item of the reply
    # (https://platform.openai.com/docs/pricing: web search per 1,000 calls, code
    # interpreter per container)
    from_content={"web_search": "web_search_requests", "code_interpreter": "code_execution_requests"},
)
"""How a Responses `usage` object counts (`metis.usage`)."""


CONTRACT = RequestContract(
    "responses",
    "metis.adapters.responses.wire:Request",
    accepted={
        "include": list[str],
        "reasoning": Json | None,
        "store": bool | None,
        "parallel_tool_calls": bool | None,
        "metadata": dict[str, str] | None,
        "text": Json | None,
        "truncation": str | None,
        "service_tier": str | None,
        "prompt_cache_key": str | None,
        "prompt_cache_retention": str | None,
        "safety_identifier": str | None,
        "max_tool_calls": int | None,
        "top_logprobs": int | None,
        "presence_penalty": Number | None,
        "frequency_penalty": Number | None,
        "background": bool | None,
        "user": str,
        "prompt": Json | None,
        "conversation": str | Json | None,
        "stream_options": Json | None,
        "context_management": list[Json] | None,
    },
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = ProviderFacts(
    provider=PROVIDER,
    streams_tool_calls=True,
    system_messages_in_list=True,
    genai_prices_id="openai",
    contract=CONTRACT,
    stop_reasons=STATUS_REASONS,
    error=ErrorEnvelope(shape=ErrorBody, fields=_error_fields),
    # Rate-limit types name the limit hit (tokens or requests): worth a retry even inside a
    # stream, which has no 429 to say so; an exhausted quota comes as a 429 and is not.
    retryable_types=RETRYABLE_TYPES | {"tokens", "requests", "server_is_overloaded"},
    never_retry_types=frozenset({"insufficient_quota"}),
    tool_choice=TOOL_CHOICE,
    options=OPTIONS,
    efforts=EFFORT_SAME,
    output_schema=OUTPUT_SCHEMA,
    # OpenAI's Files API serves both wires (an `input_file`/`input_image` file_id is the
    # same upload a Chat Completions `file` part names).
    file_ids_from=frozenset({PROVIDER, "openai"}),
    created_at=("created_at", "unix"),
    tokens=TOKENS,
    usage=USAGE,
    # `input` (not `messages`); a reply's `"object": "response"`
    marks=RequestMarks(keys=frozenset({"input", "reasoning"}), reply=(("object", "response"),)),
)
"""What both rows share: they read replies, streams and errors alike (the specification is
OpenAI's wire); they differ in what the writer asks for."""


AUDIO_FORMATS = MappingProxyType(WAV_MP3)
"""Audio media type -> `input_audio.format`: base64 wav and mp3, as in Chat Completions
(SDK `ResponseInputAudioParam`); other audio is dropped with the WARN."""

OPENAI = replace(FACTS, dialect="openai", request_store=False, include_encrypted_reasoning=True)
"""OpenAI's own endpoint: stateless (`store: false`), reasoning sent back encrypted."""
OPEN_RESPONSES = replace(
    FACTS, dialect="open-responses", request_store=None, include_encrypted_reasoning=True
)
"""Any other Open Responses server: `store` left to it."""
DIALECTS = {row.dialect: row for row in (OPENAI, OPEN_RESPONSES)}


__all__ = [
    "ANSWERS",
    "AUDIO_FORMATS",
    "AWAITS_CLIENT",
    "DIALECTS",
    "FACTS",
    "OPENAI",
    "OPEN_RESPONSES",
    "PROVIDER",
    "SERVER_TOOL_CALLS",
    "SERVER_TOOL_ITEMS",
    "STATUS_REASONS",
    "TOKENS",
    "TOOL_CHOICE",
    "USAGE",
]
