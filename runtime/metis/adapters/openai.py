"""OpenAI Chat Completions (`POST https://api.openai.com/v1/chat/completions`).

Also the adapter for OpenAI-compatible servers (llama.cpp, vLLM, Ollama's `/v1`): pass
their base URL to the client. Their tool call ids may be longer than OpenAI's 40-character
limit; they map to canonical ids on the way in, and the session's ToolIdMap mints
compliant ids when the history goes back to OpenAI. The mapping itself is shared with
OpenRouter in `_openai_chat`; this row says what is OpenAI's own.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ._openai_chat import ChatCompletionsAdapter, ChatDialect


class OpenAIAdapter(ChatCompletionsAdapter):
    """OpenAI and OpenAI-compatible Chat Completions servers."""

    name: ClassVar[str] = "openai"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"
    dialect: ClassVar[ChatDialect] = ChatDialect(
        # `max_tokens` is deprecated and rejected by reasoning models.
        max_tokens_field="max_completion_tokens",
        # Chat Completions returns no reasoning; compatible servers may (llama.cpp and vLLM
        # `reasoning_content`, Ollama `/v1` `reasoning`): read as thinking, never replayed.
        reasoning_details=False,
        reasoning_param=False,
        plain_reasoning_keys=("reasoning_content", "reasoning"),
        # Caching is automatic (prompt_cache_key etc. go through options.extra).
        cache_control=False,
        # A stream's final usage chunk comes only with stream_options.include_usage.
        stream_usage_option=True,
    )
    # Compatible servers (llama-cpp-python) refuse `content: null` beside tool calls.
    custom_server_extra: ClassVar[dict[str, Any]] = {"metis": {"empty_content": ""}}


ADAPTER = OpenAIAdapter()

__all__ = ["ADAPTER", "OpenAIAdapter"]
