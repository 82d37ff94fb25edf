"""OpenRouter (`POST https://openrouter.ai/api/v1/chat/completions`).

The OpenAI Chat Completions wire (shared mapping in the `chat` package) plus OpenRouter's
extensions, declared in the dialect row below:

- `reasoning` request parameter: `thinking_budget` -> `{"max_tokens": N}`; other shapes
  (`effort`, `exclude`, `enabled`) through `options.extra["reasoning"]`;
- `message.reasoning_details` -> ThinkingBlock (`reasoning.text`, with its signature;
  `reasoning.summary`), RedactedThinkingBlock (`reasoning.encrypted`); the array itself is
  kept in provider_raw and sent back unchanged on the assistant message, to the same model
  only (other models, and other providers' thinking, are dropped with a WARN);
- `cache_control` inside content parts and on tools, placed by the `metis` directives of
  `options.extra` (see `chat.to_wire`); a top-level `cache_control`, `provider` routing,
  `plugins`, `models`, `transforms` are OpenRouter-only options: a caller's
  `options.extra`, or an import's `provider_options["openrouter"]`, sent as they are;
- replies: `native_finish_reason` (in provider_raw and MessageCompleteEvent
  .provider_stop_reason), top-level `provider`, and `usage.cost` as
  provider_raw["reported_cost"], for comparison only: cost is computed locally;
- upstream tool call ids (`toolu_bdrk_…`, `chatcmpl-tool-…`, any length) pass through;
- errors `{"error": {"code": <int>, "message", "metadata": {"provider_name", "raw"}}}`,
  also as a chunk of a 200 stream, even after `finish_reason`.
"""

from __future__ import annotations

from typing import ClassVar

from ._facts import ErrorEnvelope, ProviderFacts
from .chat import ChatCompletionsAdapter, ChatDialect, chat_facts
from .chat.facts import RETRYABLE_STATUS_CODES, RETRYABLE_TYPES

DIALECT = ChatDialect(
    facts=chat_facts(
        "openrouter",
        # The code is an HTTP status (also inside a 200 stream); metadata names the upstream
        # and carries its own message, both kept in the message text.
        error=ErrorEnvelope(
            type_at=("error", "code"),
            also_at={"upstream": ("error", "metadata", "provider_name"), "raw": ("error", "metadata", "raw")},
        ),
        options={"max_tokens": "max_tokens", "thinking_budget": "reasoning.max_tokens"},
        retryable_types=RETRYABLE_TYPES | RETRYABLE_STATUS_CODES,
    ),
    reasoning_details=True,
    plain_reasoning_keys=("reasoning",),
    cache_control=True,
    # Usage always arrives on the last finish chunk (or a `choices: []` chunk).
    stream_usage_option=False,
)


class OpenRouterAdapter(ChatCompletionsAdapter):
    """OpenRouter's Chat Completions API, any upstream model."""

    name: ClassVar[str] = "openrouter"
    dialect: ClassVar[ChatDialect] = DIALECT
    facts: ClassVar[ProviderFacts] = DIALECT.facts
    default_base_url: ClassVar[str] = "https://openrouter.ai/api/v1"
    api_key_env: ClassVar[str | None] = "OPENROUTER_API_KEY"


ADAPTER = OpenRouterAdapter()

__all__ = ["ADAPTER", "DIALECT", "OpenRouterAdapter"]
