"""Prices from the maintained `genai-prices` data set, for models metis's own table does not list.

metis's price table (`metis/data/pricing-<date>.json`) is small and hand-kept: the
override, and what prices the catalog's models offline. Everything else — a new model,
a dated snapshot name, an OpenRouter route — is looked up in `genai-prices`, which ships
many providers' prices with the dates they were in force, inside the package (no network).
The cost it produces is recorded with `pricing_version` `genai-prices@<its version>`, so a
stored cost still names the data that produced it.

The package is imported on first use only: it carries its whole data set as Python, too
heavy for the commands and sessions that never need it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .usage import TokenCounts

SOURCE = "genai-prices"
PROVIDER_IDS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "gemini": "google",
    "openrouter": "openrouter",
    "mistral": "mistral",
    "responses": "openai",
}
"""metis provider -> genai-prices provider id (Ollama runs locally: no price to look up)."""
_MISSES_MAX = 1024


@cache
def data_version() -> str | None:
    """`genai-prices@<version>`, the pricing_version of its costs; None when it is not installed."""
    try:
        return f"{SOURCE}@{version('genai-prices')}"
    except PackageNotFoundError:
        return None


_misses: set[str] = set()


def cost(counts: TokenCounts, pricing_key: str, *, at: datetime | None = None) -> Decimal | None:
    """Cost of `counts` for `pricing_key` (`provider:model`) at time `at`; None when unknown."""
    if pricing_key in _misses or data_version() is None:
        return None
    provider, _, model = pricing_key.partition(":")
    provider_id = PROVIDER_IDS.get(provider)
    if provider_id is None or not model:
        return None
    calc = _calc()
    n_in, n_out, cached, written = counts
    try:
        result = calc(
            _usage(n_in + cached + written, n_out, cached, written),  # its input_tokens include cache
            model,
            provider_id=provider_id,
            genai_request_timestamp=at or datetime.now(UTC),
        )
    except LookupError:
        if len(_misses) < _MISSES_MAX:  # names come from callers: bounded
            _misses.add(pricing_key)
        return None
    return Decimal(result.total_price)


def _usage(n_in: int, n_out: int, cached: int, written: int) -> Any:
    from genai_prices import Usage

    return Usage(input_tokens=n_in, output_tokens=n_out, cache_read_tokens=cached, cache_write_tokens=written)


def _calc() -> Any:
    from genai_prices import calc_price

    return calc_price


__all__ = ["PROVIDER_IDS", "SOURCE", "cost", "data_version"]
