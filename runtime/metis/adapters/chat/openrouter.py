"""OpenRouter (`POST https://openrouter.ai/api/v1/chat/completions`).

The OpenAI Chat Completions wire (shared mapping in the `chat` package) plus OpenRouter's
extensions, declared in the dialect row below:

- `reasoning` request parameter: `thinking_budget` -> `{"max_tokens": N}`,
  `reasoning_effort` -> `{"effort": level}` (one of the two: given both, the budget); other
  shapes (`exclude`, `enabled`) through `options.extra["reasoning"]`;
- `message.reasoning_details` -> ThinkingBlock (`reasoning.text`, with its signature;
  `reasoning.summary`), RedactedThinkingBlock (`reasoning.encrypted`); the array itself is
  kept in provider_raw and sent back unchanged on the assistant message, to the same model
  only (other models, and other providers' thinking, are dropped with a WARN);
- `cache_control` inside content parts is a block's canonical `cache_point`, both ways
  (on the part made from the block); on tools, placed by the `metis` directives of
  `options.extra` (see `chat.to_wire`); a top-level `cache_control`, `provider` routing,
  `plugins`, `models`, `transforms` are OpenRouter-only options: a caller's
  `options.extra`, or an import's `provider_options["openrouter"]`, sent as they are;
- replies: `native_finish_reason` (in provider_raw and MessageCompleteEvent
  .provider_stop_reason), top-level `provider`, and `usage.cost` as
  Usage.billed_cost_usd (by its counter rule, `USAGE` below), beside the cost
  computed locally, never in its place;
- tool messages take `image_url` parts (OpenRouter's `ToolResponseMessage.content` is
  `string | ChatMessageContentItem[]`, the same items as a user message): images in tool
  results are carried;
- documents as `file` parts (PDFs, base64 data URL or a public URL in `file_data`:
  https://openrouter.ai/docs/features/multimodal/pdfs), audio as base64 `input_audio`
  (wav and mp3, the formats https://openrouter.ai/docs/features/multimodal/audio and
  https://openrouter.ai/announcements/audio-inputs-and-pdf-urls-for-apps name);
- videos as `video_url` parts, a URL or a base64 data URL
  (https://openrouter.ai/docs/features/multimodal/videos; which URLs an upstream fetches
  varies, e.g. Gemini on AI Studio takes YouTube links only);
- `reasoning` (plain text, when no `reasoning_details` came) goes back as `reasoning`, a
  field of OpenRouter's request `ChatAssistantMessage`;
- `annotations` (`url_citation`, from the web plugin or `:online` models) -> text citations;
  not sent back (the request `ChatAssistantMessage` has no `annotations`);
- upstream tool call ids (`toolu_bdrk_…`, `chatcmpl-tool-…`, any length) pass through;
- errors `{"error": {"code": <int>, "message", "metadata": {"provider_name", "raw"}}}`,
  also as a chunk of a 200 stream, even after `finish_reason`.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from ...usage import Counter, CounterRule
from .._kit.contract import Json, Number, RequestContract
from .._kit.facts import ErrorEnvelope, ErrorFields, ProviderFacts
from . import ChatCompletionsAdapter, chat_facts
from .facts import CHAT_ACCEPTED, CHAT_UNITS, MARKS, RETRYABLE_STATUS_CODES, RETRYABLE_TYPES, WAV_MP3
from .wire import ErrorBody, Usage

USAGE = CounterRule(
    source="https://openrouter.ai/docs/use-cases/usage-accounting (cached_tokens read from and "
    "cache_write_tokens written to the cache, both within prompt_tokens; cost is the charge); "
    "provider-wire-formats.md §4",
    shape=Usage,
    prompt=Counter("prompt_tokens"),
    output=Counter("completion_tokens"),
    cached=Counter("prompt_tokens_details.cached_tokens"),
    written=Counter("prompt_tokens_details.cache_write_tokens"),
    units={**CHAT_UNITS, "web_search_requests": Counter("server_tool_use.web_search_requests")},
    billed_cost=("cost",),
)
"""How OpenRouter's `usage` counts (`metis.usage`): OpenAI's, with cache writes, web
searches and the billed cost."""


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"error": {"code": <HTTP status>, "message", "metadata": {"provider_name", "raw"}}}`:
    the code is the type (also inside a 200 stream); the upstream's name and its own text go
    in the message."""
    error = body["error"]
    if not isinstance(error, dict):
        return ErrorFields(message=error)
    meta = error.get("metadata")
    upstream, raw = (meta.get("provider_name"), meta.get("raw")) if isinstance(meta, dict) else (None, None)
    return ErrorFields(
        message=error.get("message"), kind=error.get("code"), notes=(("upstream", upstream), ("raw", raw))
    )


CONTRACT = RequestContract(
    "openrouter",
    "metis.adapters.chat.wire:Request",
    accepted={
        **CHAT_ACCEPTED,
        "top_k": Number,
        "min_p": Number,
        "top_a": Number,
        "repetition_penalty": Number,
        "structured_outputs": bool,
        "provider": Json,
        "models": list[str],
        "route": str,
        "transforms": list[str],
        "plugins": list[Json],
        "usage": Json,
        "debug": Json,
        "verbosity": str,
    },
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = chat_facts(
    "openrouter",
    streams_tool_calls=True,
    genai_prices_id="openrouter",
    contract=CONTRACT,
    error=ErrorEnvelope(shape=ErrorBody, fields=_error_fields),
    # `max_completion_tokens` (OpenAI's newer name, which OpenRouter also takes) is read
    # as the canonical max_tokens too and replayed under that name. `reasoning` takes an
    # effort or a budget, "not both" (https://openrouter.ai/docs/use-cases/reasoning-tokens).
    options={
        "max_tokens": "max_tokens",
        "thinking_budget": "reasoning.max_tokens",
        "reasoning_effort": "reasoning.effort",
    },
    option_aliases={"max_tokens": ("max_completion_tokens",)},
    effort_or_budget=True,
    retryable_types=RETRYABLE_TYPES | RETRYABLE_STATUS_CODES,
    usage=USAGE,
    # OpenRouter's own request fields (`reasoning` is also the Responses API's)
    marks=dataclasses.replace(
        MARKS, keys=MARKS.keys | {"reasoning", "provider", "models", "transforms", "plugins"}
    ),
    reasoning_details=True,
    plain_reasoning_keys=("reasoning",),
    cache_control=True,
    # Usage always arrives on the last finish chunk (or a `choices: []` chunk).
    stream_usage_option=False,
    replays_plain_reasoning=True,
    tool_result_images=True,
    file_media_types=frozenset({"application/pdf"}),
    file_urls=True,
    video_parts=True,
    # wav and mp3 only: OpenRouter's audio guide and announcement name those two; its SDK
    # type lists more formats "supported ... by provider", i.e. not by every upstream, and a
    # format the upstream refuses is a failed request rather than a logged drop.
    audio_formats=WAV_MP3,
)


class OpenRouterAdapter(ChatCompletionsAdapter):
    """OpenRouter's Chat Completions API, any upstream model."""

    name: ClassVar[str] = "openrouter"
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "https://openrouter.ai/api/v1"
    api_key_env: ClassVar[str | None] = "OPENROUTER_API_KEY"


ADAPTER = OpenRouterAdapter()

__all__ = ["ADAPTER", "FACTS", "USAGE", "OpenRouterAdapter"]
