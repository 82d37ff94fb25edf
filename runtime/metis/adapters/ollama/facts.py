"""Ollama's facts row: what differs from other providers but is not logic.

Ollama's errors carry no type, only text (`{"error": "<string>"}`, or a plain-text body
from a proxy in front of it), so the type comes from the `kinds` table: a model that does
not support tools or thinking, or that is not pulled, is never worth a retry whatever the
status; a busy server always is. Anything else is `http_<status>` (or `unknown_error`
without one) and retried by the HTTP status rule every provider shares.

There is no tool-choice field on the wire, so the table is empty: only "auto" (the
default) and "none" (the writer leaves the tools out) can be honoured. Sampling options
nest under `options`.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import StopReason, ToolDefinition

from ...usage import Counter, CounterRule
from .._kit.contract import Json, Number, RequestContract
from .._kit.detect import RequestMarks
from .._kit.estimate import TokenRow
from .._kit.facts import SCHEMA, ErrorEnvelope, ErrorFields, ProviderFacts
from .wire import Counts, ErrorBody

NAME = "ollama"


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"error": "<text>"}` (a proxy's `{"error": {"message"}}` too): a message, no type."""
    error = body["error"]
    return ErrorFields(message=error if isinstance(error, str) else error.get("message"))


def _tool_text(tool: ToolDefinition) -> tuple[Any, ...]:
    """A tool as an Ollama request sends it (`to_wire.wire_tool`, imported when first
    measured: the writer reads this row)."""
    from .to_wire import wire_tool

    return (wire_tool(tool),)


TOKENS = TokenRow(
    # Without a tokenizer: ceil(chars / 4) of what each message puts in the prompt (role,
    # text, thinking, tool-call names and compact JSON arguments, tool-result text), plus 4
    # tokens per message for the chat-template markers, 256 per image (Gemma 3's fixed
    # image size), ceil(chars / 4) of each tool's compact JSON definition plus 2, and 12 per
    # request for the template preamble. The preamble differs by model family (Llama 3.2
    # always adds a dated system header, Llama 3.1 does not), which dominates the error on
    # short prompts.
    chars_per_token=4,
    request=12,
    message=4,
    image=256,
    tool=2,
    each_apart=True,
    role_names=True,
    tool_text=_tool_text,
    measured="against the prompt_eval_count of the four request/response pairs in Ollama's API "
    "documentation (tests/golden/ollama/estimate_docs.json): 22 vs 26 (-15%), 51 vs 61 (-16%), "
    "43 vs 34 (+26%), 139 vs 122 (+14%); tests/adapters/test_ollama_adapter.py holds it within 30%",
)
"""Ollama's numbers for the pre-flight estimate (`_kit.estimate`)."""

USAGE = CounterRule(
    source="Ollama API docs /api/chat (prompt_eval_count, eval_count); provider-wire-formats.md §4",
    shape=Counts,
    prompt=Counter("prompt_eval_count"),
    output=Counter("eval_count"),
    prompt_includes_cache=False,
)
"""How Ollama counts (`metis.usage`): the final response's own counters."""

CONTRACT = RequestContract(
    "ollama",
    "metis.adapters.ollama.wire:ChatRequest",
    accepted={
        "format": str | Json,
        "keep_alive": str | Number,
        "think": bool | str,
        "logprobs": bool,
        "top_logprobs": int,
    },
    unknown="ignored",
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = ProviderFacts(
    provider=NAME,
    streams_tool_calls=False,
    system_messages_in_list=True,
    genai_prices_id=None,
    contract=CONTRACT,
    stop_reasons={
        "stop": StopReason.end_turn,  # end of turn or a stop sequence: Ollama does not tell them apart
        "length": StopReason.max_tokens,
        "load": StopReason.other,  # empty `messages`: the model was only loaded
        "unload": StopReason.other,  # `keep_alive: 0` with empty `messages`
    },
    error=ErrorEnvelope(
        shape=ErrorBody,
        fields=_error_fields,
        kinds=(
            (r"does not support tools", "tools_not_supported", False),
            (r"does not support thinking", "thinking_not_supported", False),
            (r"try pulling it first", "model_not_found", False),
            (r"server busy|maximum pending requests", "overloaded", True),
        ),
    ),
    retryable_types=frozenset({"overloaded"}),
    never_retry_types=frozenset({"tools_not_supported", "thinking_not_supported", "model_not_found"}),
    tool_choice={},
    options={
        "max_tokens": "options.num_predict",
        "temperature": "options.temperature",
        "top_p": "options.top_p",
        "stop": "options.stop",
    },
    # `format` is a JSON Schema or the string "json" (JSON mode, provider-only).
    output_schema={"format": SCHEMA},
    # No Files API: images go inline as base64, so every file id is another provider's.
    file_ids_from=frozenset(),
    created_at=("created_at", "iso"),
    tokens=TOKENS,
    usage=USAGE,
    # /api/chat's own fields and message `images`, beside the Chat roles and `tool_calls` it
    # shares; a reply's `done`
    marks=RequestMarks(
        keys=frozenset({"messages", "options", "keep_alive", "format", "think"}),
        roles=frozenset({"system", "developer", "tool"}),
        message_keys=frozenset({"tool_calls", "images"}),
        reply=(("done", None),),
    ),
)

__all__ = ["FACTS", "NAME", "TOKENS", "USAGE"]
