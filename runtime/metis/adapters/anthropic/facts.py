"""Anthropic's facts row: what differs from other providers but is data, not logic.

Read by the base adapter (`parse_error`, retryability) and by this package's writer,
importer and decoders (stop reasons, tool choice by meaning, option fields).
"""

from __future__ import annotations

from types import MappingProxyType

from metis_schema.v3 import StopReason

from .._kit.facts import SCHEMA, TOOL_NAME, ErrorEnvelope, ErrorFields, ProviderFacts, ToolChoice
from .wire import ErrorBody

PROVIDER = "anthropic"


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"type": "error", "error": {type, message}, "request_id"}`: the request id goes in the message."""
    error = body["error"]
    return ErrorFields(
        message=error["message"], kind=error["type"], notes=(("request_id", body.get("request_id")),)
    )


FACTS = ProviderFacts(
    provider=PROVIDER,
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
)

__all__ = ["FACTS", "PROVIDER"]
