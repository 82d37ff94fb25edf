"""Mistral (`POST https://api.mistral.ai/v1/chat/completions`): a Chat Completions dialect.

The mapping is the shared one in the `chat` package; this row declares what is Mistral's:

- tool call ids must be exactly 9 alphanumerics: the session's ToolIdMap mints such ids
  (`ids.ID_RULES["mistral"]`) for calls that came from elsewhere; Mistral's own ids replay;
- Magistral models return reasoning as `thinking` content parts (`{"type": "thinking",
  "thinking": [{"type": "text", "text": ...}]}`), in replies and stream deltas: read as
  ThinkingBlocks and sent back the same way to the same model only, with the part's
  `signature` where it has one (other providers' thinking is dropped with a WARN). `prompt_mode` is a
  Mistral-only option (a caller's `options.extra`, an import's `provider_options`);
- `tool_choice` spells "must call some tool" as "any" ("required" is an alias Mistral
  also accepts: an imported "required" stays a Mistral-only option and replays as it was);
- no file, audio or tool-result image parts are written (Mistral spells documents
  `document_url` and takes them by URL or uploaded id only): such blocks are dropped with
  the §7.3 WARN;
- a conversation ending with an ASSISTANT message (a prefill) marks it `prefix: true`, and
  an imported `prefix: true` on the last message is that meaning (`ProviderFacts.prefix_marker`);
- `finish_reason: "model_length"` is `context_window_exceeded`;
- usage is OpenAI's (`prompt_tokens`, `completion_tokens`), always on the last chunk;
- errors are flat: `{"object": "error", "message", "type", "param", "code"}` (a 422's
  message is the validation detail object, kept as JSON text).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from metis_schema.v3 import StopReason

from ...usage import Counter, CounterRule
from .._kit.contract import Json, Number, RequestContract
from .._kit.detect import THINKING_CHUNKS
from .._kit.facts import TOOL_NAME, ErrorEnvelope, ErrorFields, ProviderFacts, ToolChoice
from . import ChatCompletionsAdapter, chat_facts
from .facts import MARKS, RETRYABLE_TYPES
from .wire import FlatErrorBody, Usage

USAGE = CounterRule(
    source="Mistral chat completion usage (OpenAI's shape: cached_tokens inside prompt_tokens); "
    "provider-wire-formats.md §5",
    shape=Usage,
    prompt=Counter("prompt_tokens"),
    output=Counter("completion_tokens"),
    cached=Counter("prompt_tokens_details.cached_tokens"),
    units={"reasoning_tokens": Counter("completion_tokens_details.reasoning_tokens")},
)
"""How Mistral's `usage` counts (`metis.usage`)."""


def _error_fields(body: FlatErrorBody) -> ErrorFields:
    """Flat `{"object": "error", "message", "type", "param", "code"}`; `param` kept in the
    message. A gateway's `{"error": "<text>"}` is its text."""
    if "message" not in body and "error" in body:
        return ErrorFields(message=body["error"])
    return ErrorFields(
        message=body.get("message"), kind=body.get("type"), notes=(("param", body.get("param")),)
    )


CONTRACT = RequestContract(
    "mistral",
    "metis.adapters.chat.wire:Request",
    accepted={
        "n": int,
        "random_seed": int,
        "presence_penalty": Number,
        "frequency_penalty": Number,
        "response_format": Json,
        "parallel_tool_calls": bool,
        "prediction": Json,
        "prompt_mode": str | None,
        "reasoning_effort": str,
        "safe_prompt": bool,
        "metadata": Json,
        "min_tokens": int,
        "stream_options": Json | None,
    },
    refused=frozenset({"reasoning", "max_completion_tokens"}),
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = chat_facts(
    "mistral",
    streams_tool_calls=False,
    genai_prices_id="mistral",
    contract=CONTRACT,
    error=ErrorEnvelope(shape=FlatErrorBody, fields=_error_fields),
    # `reasoning_effort` levels as the schema's (mistralai models/reasoningeffort.py).
    options={"max_tokens": "max_tokens", "reasoning_effort": "reasoning_effort"},
    retryable_types=RETRYABLE_TYPES | {"service_tier_capacity_exceeded"},
    # The prompt and the reply together outgrew the model's context (mistralai
    # ChatCompletionChoiceFinishReason: stop, length, model_length, error, tool_calls).
    stop_reasons={"model_length": StopReason.context_window_exceeded},
    tool_choice={
        ToolChoice.auto: "auto",
        ToolChoice.none: "none",
        ToolChoice.any: "any",
        ToolChoice.tool: {"type": "function", "function": {"name": TOOL_NAME}},
    },
    usage=USAGE,
    # Magistral's `thinking` parts holding a list of chunks
    marks=dataclasses.replace(MARKS, parts=MARKS.parts | {THINKING_CHUNKS}),
    reasoning_details=False,
    plain_reasoning_keys=(),
    cache_control=False,
    stream_usage_option=False,
    thinking_parts=True,
    prefix_marker=True,
)


class MistralAdapter(ChatCompletionsAdapter):
    """Mistral's Chat Completions API (La Plateforme)."""

    name: ClassVar[str] = "mistral"
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "https://api.mistral.ai/v1"
    api_key_env: ClassVar[str | None] = "MISTRAL_API_KEY"


ADAPTER = MistralAdapter()

__all__ = ["ADAPTER", "FACTS", "USAGE", "MistralAdapter"]
