"""OpenRouter (`POST https://openrouter.ai/api/v1/chat/completions`).

The OpenAI Chat Completions wire (shared mapping in `_openai_chat`) plus OpenRouter's
extensions, declared in the dialect row below:

- `reasoning` request parameter: `thinking_budget` -> `{"max_tokens": N}`; other shapes
  (`effort`, `exclude`, `enabled`) through `options.extra["reasoning"]`;
- `message.reasoning_details` -> ThinkingBlock (`reasoning.text`, with its signature;
  `reasoning.summary`), RedactedThinkingBlock (`reasoning.encrypted`); the array itself is
  kept in provider_raw and sent back unchanged on the assistant message, to the same model
  only (other models, and other providers' thinking, are dropped with a WARN);
- `cache_control` inside content parts and on tools, placed by the `metis` directives of
  `options.extra` (see `_openai_chat`); a top-level `cache_control`, `provider` routing,
  `plugins`, `models`, `transforms` go through `options.extra` as they are;
- responses: `native_finish_reason` (in provider_raw and MessageCompleteEvent
  .provider_stop_reason), top-level `provider`, and `usage.cost` as
  provider_raw["reported_cost"], for comparison only: cost is computed locally;
- upstream tool call ids (`toolu_bdrk_…`, `chatcmpl-tool-…`, any length) pass through;
- errors `{"error": {"code": <int>, "message", "metadata": {"provider_name", "raw"}}}`,
  also as a chunk of a 200 stream, even after `finish_reason`.
"""

from __future__ import annotations

from typing import ClassVar

from ._openai_chat import ChatCompletionsAdapter, ChatDialect


class OpenRouterAdapter(ChatCompletionsAdapter):
    """OpenRouter's Chat Completions API, any upstream model."""

    name: ClassVar[str] = "openrouter"
    default_base_url: ClassVar[str] = "https://openrouter.ai/api/v1"
    api_key_env: ClassVar[str | None] = "OPENROUTER_API_KEY"
    dialect: ClassVar[ChatDialect] = ChatDialect(
        max_tokens_field="max_tokens",
        reasoning_details=True,
        reasoning_param=True,
        plain_reasoning_keys=("reasoning",),
        cache_control=True,
        # Usage always arrives on the last finish chunk (or a `choices: []` chunk).
        stream_usage_option=False,
    )


ADAPTER = OpenRouterAdapter()

__all__ = ["ADAPTER", "OpenRouterAdapter"]
