"""Anthropic's facts row: what differs from other providers but is data, not logic.

Read by the base adapter (`parse_error`, retryability) and by this package's writer,
importer and decoders (stop reasons, tool choice by meaning, option fields).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from metis_schema.v3 import StopReason, ToolDefinition

from ...usage import Counter, CounterRule
from .._kit.contract import Json, RequestContract
from .._kit.detect import RequestMarks
from .._kit.estimate import ANTHROPIC_BLOCKS, JsonLength, Rounding, TokenRow
from .._kit.facts import SCHEMA, TOOL_NAME, ErrorEnvelope, ErrorFields, ProviderFacts, ToolChoice
from .wire import ErrorBody, Usage

PROVIDER = "anthropic"


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"type": "error", "error": {type, message}, "request_id"}`: the request id goes in the message."""
    error = body["error"]
    return ErrorFields(
        message=error["message"], kind=error["type"], notes=(("request_id", body.get("request_id")),)
    )


def _tool_text(tool: ToolDefinition) -> tuple[Any, ...]:
    """A tool as the estimate counts it: its name, description and the JSON of its schema."""
    return (tool.name, tool.description, tool.input_schema)


TOKENS = TokenRow(
    # Characters / 3.5 over what the request carries: text (also inside search results and
    # server tool results), thinking, compaction summaries and tool-result text;
    # tool inputs (client and server) and tool definitions by the bytes of their compact
    # JSON; a quarter of redacted thinking's data; documents are not counted. Each message
    # adds 4 tokens of framing, each tool call and tool result 10, each tool 40 (the
    # tool-use system preamble is ~300 once), each image 1,600 (Anthropic's cap for a
    # downscaled image, an upper bound), the request 8.
    chars_per_token=3.5,
    rounding=Rounding.nearest,
    request=8,
    message=4,
    tool_call=10,
    tool_result=10,
    image=1600,
    tools_preamble=300,
    tool=40,
    arguments=JsonLength.compact_bytes,
    tool_json=JsonLength.compact_bytes,
    tool_text=_tool_text,
    also=ANTHROPIC_BLOCKS,
    measured="against the input_tokens the Anthropic API reported for nine recorded requests "
    "(tests/golden/anthropic/token_samples.json): within 6% on six of nine, -33% on the two "
    "requests with two tools and tool_choice any (the API adds more tool framing than counted "
    "here), +13 tokens (+65%) on a 20-token prompt; mean absolute error 17% "
    "(tests/adapters/test_anthropic_estimate.py holds it under 20%, each within max(15, 35%))",
)
"""Anthropic's numbers for the pre-flight estimate (`_kit.estimate`)."""

USAGE = CounterRule(
    source="Anthropic SDK types/usage.py and the prompt-caching docs: total input = input_tokens + "
    "cache_creation_input_tokens + cache_read_input_tokens; provider-wire-formats.md §1",
    shape=Usage,
    prompt=Counter("input_tokens"),
    output=Counter("output_tokens"),
    cached=Counter("cache_read_input_tokens"),
    written=Counter("cache_creation_input_tokens"),
    prompt_includes_cache=False,
    units={
        "reasoning_tokens": Counter("output_tokens_details.thinking_tokens"),
        "cache_creation_1h_input_tokens": Counter("cache_creation.ephemeral_1h_input_tokens"),
        "web_search_requests": Counter("server_tool_use.web_search_requests"),
        "web_fetch_requests": Counter("server_tool_use.web_fetch_requests"),
    },
)
"""How Anthropic's `usage` counts (`metis.usage`): the cache's tokens apart from input_tokens."""

CONTRACT = RequestContract(
    "anthropic",
    "metis.adapters.anthropic.wire:Request",
    required=frozenset({"max_tokens"}),
    accepted={
        "metadata": Json,
        "top_k": int,
        "service_tier": str,
        "container": str | Json | None,
        "mcp_servers": list[Json],
        "context_management": Json | None,
        "output_config": Json,
    },
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = ProviderFacts(
    provider=PROVIDER,
    streams_tool_calls=True,
    system_messages_in_list=False,
    genai_prices_id="anthropic",
    contract=CONTRACT,
    stop_reasons=MappingProxyType(
        {
            "end_turn": StopReason.end_turn,
            "tool_use": StopReason.tool_use,
            "max_tokens": StopReason.max_tokens,
            "stop_sequence": StopReason.stop_sequence,
            "pause_turn": StopReason.pause_turn,
            "refusal": StopReason.refusal,
            "model_context_window_exceeded": StopReason.context_window_exceeded,
            # beta context management with `pause_after_compaction`: the turn stopped after
            # its compaction block and continues when sent back, as a paused turn does
            "compaction": StopReason.pause_turn,
        }
    ),
    error=ErrorEnvelope(shape=ErrorBody, fields=_error_fields),
    # Overloaded (529), rate limited (429), internal (500) and timed out are worth another
    # attempt whatever status a proxy in between reports.
    retryable_types=frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}),
    tool_choice=MappingProxyType(
        {
            ToolChoice.auto: {"type": "auto"},
            ToolChoice.any: {"type": "any"},
            ToolChoice.none: {"type": "none"},
            ToolChoice.tool: {"type": "tool", "name": TOOL_NAME},
        }
    ),
    # `max_tokens` is required by the API: the writer always sets it (see to_wire._max_tokens).
    options=MappingProxyType(
        {
            "max_tokens": "max_tokens",
            "temperature": "temperature",
            "top_p": "top_p",
            "stop": "stop_sequences",
            "reasoning_effort": "output_config.effort",
        }
    ),
    # `output_config.effort`: low, medium, high, xhigh (and "max", Anthropic's own, which
    # stays provider-only) (SDK types/output_config_param.py); "none" and "minimal" go as
    # low, the nearest, with a WARN. The thinking budget is written by to_wire itself
    # (`thinking.budget_tokens`, bound by max_tokens), beside the effort: Anthropic takes both.
    efforts=MappingProxyType({level: level for level in ("low", "medium", "high", "xhigh")}),
    # Structured outputs (GA): `output_config.format`, no name or strict flag; the beta's
    # top-level `output_format` stays provider-only.
    output_schema=MappingProxyType({"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}}),
    # A reply written for an Anthropic client: Anthropic has no content-filter nor error
    # stop reason; the nearest it has.
    reply_stop_reasons=MappingProxyType({StopReason.content_filter: "refusal", StopReason.error: "end_turn"}),
    reply_stop_default="end_turn",
    # Files API uploads (`file_...`), Anthropic's own.
    file_ids_from=frozenset({PROVIDER}),
    tokens=TOKENS,
    usage=USAGE,
    # a top-level `system`; content blocks no other format has; a reply `"type": "message"`
    marks=RequestMarks(
        keys=frozenset({"messages", "system"}),
        parts=frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}),
        reply=(("type", "message"),),
    ),
)

__all__ = ["FACTS", "PROVIDER", "TOKENS", "USAGE"]
