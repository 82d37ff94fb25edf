"""OpenAI Chat Completions (`POST https://api.openai.com/v1/chat/completions`).

Also the adapter for OpenAI-compatible servers (llama.cpp, vLLM, Ollama's `/v1`): pass
their base URL to the client. Their tool call ids may be longer than OpenAI's 40-character
limit; they map to canonical ids on the way in, and the session's ToolIdMap mints
compliant ids when the history goes back to OpenAI. The mapping itself is shared with
OpenRouter in the `chat` package; this row says what is OpenAI's own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...usage import Counter, CounterRule
from .._kit.contract import Json, RequestContract
from .._kit.facts import ErrorEnvelope, ErrorFields, ProviderFacts
from . import ChatCompletionsAdapter, chat_facts
from .facts import CHAT_ACCEPTED, CHAT_UNITS, RETRYABLE_TYPES, WAV_MP3
from .wire import ErrorBody, Usage

USAGE = CounterRule(
    source="OpenAI SDK types/completion_usage.py (cached_tokens and cache_write_tokens are part of "
    "prompt_tokens; reasoning_tokens part of completion_tokens); provider-wire-formats.md §2",
    shape=Usage,
    prompt=Counter("prompt_tokens"),
    output=Counter("completion_tokens"),
    cached=Counter("prompt_tokens_details.cached_tokens"),
    written=Counter("prompt_tokens_details.cache_write_tokens"),
    units=CHAT_UNITS,
)
"""How OpenAI's Chat Completions `usage` counts (`metis.usage`)."""


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"error": {"message", "type", "param", "code": str}}`; `param` names the request field
    at fault and is kept in the message. A compatible server's `{"error": "<text>"}` is its text."""
    error = body["error"]
    if not isinstance(error, dict):
        return ErrorFields(message=error)
    return ErrorFields(
        message=error.get("message"), kind=error.get("type"), notes=(("param", error.get("param")),)
    )


CONTRACT = RequestContract(
    "openai",
    "metis.adapters.chat.wire:Request",
    accepted={
        **CHAT_ACCEPTED,
        "store": bool,
        "metadata": dict[str, str],
        "modalities": list[str],
        "audio": Json,
        "reasoning_effort": str,
        "service_tier": str,
        "web_search_options": Json,
        "prompt_cache_key": str,
        "safety_identifier": str,
        "verbosity": str,
        "functions": list[Json],
        "function_call": str | Json,
    },
    refused=frozenset({"reasoning"}),
)
"""What the provider requires and accepts beyond the shape its adapter reads (`metis validate
--provider`: `_kit.contract`)."""


FACTS = chat_facts(
    "openai",
    streams_tool_calls=True,
    genai_prices_id="openai",
    contract=CONTRACT,
    error=ErrorEnvelope(shape=ErrorBody, fields=_error_fields),
    # `max_tokens` is deprecated and rejected by reasoning models, but still the most
    # common spelling in recorded requests: read as the canonical max_tokens too, and
    # replayed under the name it came in. Chat Completions has no reasoning budget; its
    # `reasoning_effort` levels are the schema's (openai types/shared/reasoning_effort.py;
    # its further "max" stays OpenAI-only).
    options={"max_tokens": "max_completion_tokens", "reasoning_effort": "reasoning_effort"},
    option_aliases={"max_tokens": ("max_tokens",)},
    # A rate limit's type names the limit hit (tokens or requests per minute): worth a
    # retry even inside a stream, where there is no 429 to say so. An exhausted quota
    # also comes as a 429 and is not.
    retryable_types=RETRYABLE_TYPES | {"tokens", "requests"},
    never_retry_types=frozenset({"insufficient_quota"}),
    # One Files API behind both OpenAI wires: a file uploaded for the Responses API is
    # the same `file-...` id in a Chat Completions `file` part.
    file_ids_from=frozenset({"openai", "responses"}),
    usage=USAGE,
    # Chat Completions returns no reasoning; compatible servers may (llama.cpp, vLLM and
    # DeepSeek `reasoning_content`, Ollama `/v1` `reasoning`): read as thinking and sent back
    # under the same key, to this provider only. DeepSeek ignores it after a turn without
    # tool calls and requires it after one with tool calls
    # (https://api-docs.deepseek.com/guides/thinking_mode).
    reasoning_details=False,
    plain_reasoning_keys=("reasoning_content", "reasoning"),
    replays_plain_reasoning=True,
    # Caching is automatic (prompt_cache_key etc. are OpenAI-only options: options.extra).
    cache_control=False,
    # A stream's final usage chunk comes only with stream_options.include_usage.
    stream_usage_option=True,
    # Tool messages take text parts only (openai-python
    # types/chat/chat_completion_tool_message_param.py: "For tool messages, only type `text`
    # is supported"): images in tool results are dropped with the WARN.
    tool_result_images=False,
    # `file` parts take PDFs only, as base64 `file_data` or an uploaded `file_id`, never a
    # URL; `input_audio` takes base64 wav and mp3
    # (https://developers.openai.com/docs/guides/pdf-files; openai-python
    # chat_completion_content_part_input_audio_param.py).
    file_media_types=frozenset({"application/pdf"}),
    file_urls=False,
    audio_formats=WAV_MP3,
)


class OpenAIAdapter(ChatCompletionsAdapter):
    """OpenAI and OpenAI-compatible Chat Completions servers."""

    name: ClassVar[str] = "openai"
    facts: ClassVar[ProviderFacts] = FACTS
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    # Compatible servers (llama-cpp-python) refuse `content: null` beside tool calls.
    custom_server_extra: ClassVar[dict[str, Any]] = {"metis": {"empty_content": ""}}


ADAPTER = OpenAIAdapter()

__all__ = ["ADAPTER", "FACTS", "USAGE", "OpenAIAdapter"]
