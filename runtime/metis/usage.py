"""What canonical token counts mean, pinned in one place (spec §4.3 Usage, §6.4).

Canonical `input_tokens` counts only *uncached* input. Cache reads go to
`cached_input_tokens` and cache writes to `cache_creation_input_tokens`; the total prompt
is their sum, and each token is priced exactly once. Providers count differently:

- Anthropic reports `input_tokens` already excluding `cache_read_input_tokens` and
  `cache_creation_input_tokens`: taken as they are.
- OpenAI and OpenRouter `prompt_tokens` *include* `prompt_tokens_details.cached_tokens`
  (and `cache_write_tokens` where sent): both are subtracted.
- Gemini `promptTokenCount` *includes* `cachedContentTokenCount`: subtracted;
  `toolUsePromptTokenCount` is input too; `thoughtsTokenCount` is billed as output and
  is not part of `candidatesTokenCount`, so it is added to output.
- Ollama reports `prompt_eval_count` (omitted when fully cached: 0) and `eval_count`.
- Mistral counts as OpenAI Chat does (`prompt_tokens` with any cached tokens inside).
- The Responses API (OpenAI and Open Responses) `input_tokens` *includes*
  `input_tokens_details.cached_tokens` (and `cache_write_tokens` where sent): both are
  subtracted; `output_tokens` already includes `output_tokens_details.reasoning_tokens`
  (billed as output): taken as it is.

Every adapter calls `normalize_usage`; nothing else interprets provider usage fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from metis_schema.v3 import UsageUpdateEvent

from .errors import MetisError, WireFormatError


class UsageCountError(MetisError, ValueError):
    """A token count that is not a non-negative integer."""


class TokenCounts(NamedTuple):
    """Normalized token counts of one response (see module docstring for their meaning).

    Immutable; a NamedTuple because every response makes one (a frozen dataclass costs
    several times as much to build). `pricing.make_usage` checks that each count is a
    non-negative int before any Usage is built from them.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


def _int(usage: Mapping[str, Any], *keys: str, provider: str) -> int:
    if len(keys) == 1 and type(usage) is dict:
        # The common case, a count at the top level of a parsed JSON object, in one lookup.
        value = usage.get(keys[0])
        if type(value) is int and value >= 0:
            return value
    node: Any = usage
    for key in keys:
        if type(node) is not dict and not isinstance(node, Mapping):
            return 0
        node = node.get(key)
    if node is None:
        return 0
    if type(node) is int and node >= 0:
        return node  # the common case, without the checks below
    if isinstance(node, bool) or not isinstance(node, int | str):
        raise WireFormatError(
            f"usage field {'.'.join(keys)} is not an integer: {node!r}",
            provider=provider,
            path="usage." + ".".join(keys),
        )
    try:
        value = int(node)
    except ValueError:
        raise WireFormatError(
            f"usage field {'.'.join(keys)} is not an integer: {node!r}",
            provider=provider,
            path="usage." + ".".join(keys),
        ) from None
    if value < 0:
        raise WireFormatError(
            f"usage field {'.'.join(keys)} is negative: {value}",
            provider=provider,
            path="usage." + ".".join(keys),
        )
    return value


def _first(usage: Mapping[str, Any], provider: str, *names: str) -> int:
    """Gemini sends camelCase or snake_case: the first name present wins."""
    for name in names:
        if name in usage:
            return _int(usage, name, provider=provider)
    return 0


def usage_event(counts: TokenCounts) -> UsageUpdateEvent:
    """The stream event carrying all four normalized counts (each replaces what came before)."""
    return UsageUpdateEvent(
        type="usage_update",
        input_tokens=counts.input_tokens,
        output_tokens=counts.output_tokens,
        cached_input_tokens=counts.cached_input_tokens,
        cache_creation_input_tokens=counts.cache_creation_input_tokens,
    )


def normalize_usage(provider: str, usage: Mapping[str, Any] | None) -> TokenCounts:
    """Provider usage object -> canonical TokenCounts, per the rules above."""
    if not usage:
        return TokenCounts()
    if provider == "anthropic":
        return TokenCounts(
            input_tokens=_int(usage, "input_tokens", provider=provider),
            output_tokens=_int(usage, "output_tokens", provider=provider),
            cached_input_tokens=_int(usage, "cache_read_input_tokens", provider=provider),
            cache_creation_input_tokens=_int(usage, "cache_creation_input_tokens", provider=provider),
        )
    if provider in ("openai", "openrouter", "mistral"):
        prompt = _int(usage, "prompt_tokens", provider=provider)
        cached = _int(usage, "prompt_tokens_details", "cached_tokens", provider=provider)
        written = _int(usage, "prompt_tokens_details", "cache_write_tokens", provider=provider)
        return TokenCounts(
            input_tokens=max(prompt - cached - written, 0),
            output_tokens=_int(usage, "completion_tokens", provider=provider),
            cached_input_tokens=cached,
            cache_creation_input_tokens=written,
        )
    if provider == "responses":
        prompt = _int(usage, "input_tokens", provider=provider)
        cached = _int(usage, "input_tokens_details", "cached_tokens", provider=provider)
        written = _int(usage, "input_tokens_details", "cache_write_tokens", provider=provider)
        return TokenCounts(
            input_tokens=max(prompt - cached - written, 0),
            output_tokens=_int(usage, "output_tokens", provider=provider),
            cached_input_tokens=cached,
            cache_creation_input_tokens=written,
        )
    if provider == "gemini":
        prompt = _first(usage, provider, "promptTokenCount", "prompt_token_count")
        cached = _first(usage, provider, "cachedContentTokenCount", "cached_content_token_count")
        tool_prompt = _first(usage, provider, "toolUsePromptTokenCount", "tool_use_prompt_token_count")
        return TokenCounts(
            input_tokens=max(prompt - cached, 0) + tool_prompt,
            output_tokens=_first(usage, provider, "candidatesTokenCount", "candidates_token_count")
            + _first(usage, provider, "thoughtsTokenCount", "thoughts_token_count"),
            cached_input_tokens=cached,
        )
    if provider == "ollama":
        return TokenCounts(
            input_tokens=_int(usage, "prompt_eval_count", provider=provider),
            output_tokens=_int(usage, "eval_count", provider=provider),
        )
    raise WireFormatError(f"no usage normalization rule for provider {provider!r}", provider=provider)


__all__ = ["TokenCounts", "UsageCountError", "normalize_usage", "usage_event"]
