"""Dated prices from the maintained `genai-prices` data set: metis's one source of prices.

`genai-prices` ships many providers' prices with the dates they were in force, inside the
package (no network), in the units prices are set in: tokens by kind (cache reads,
cache writes by TTL, audio, image), web searches and code executions per thousand, and
per-request fees. A cost it produces is recorded with `pricing_version`
`genai-prices@<its version>`, so a stored cost names the data that produced it.

A price is resolved once per (provider, model, day) and kept (`_resolved`, bounded):
pricing a long history asks the data set once per model and day, not once per message.
A model whose prices change within a day (an off-peak window) is resolved per call.

The package is imported on first use only: it carries its whole data set as Python, too
heavy for the commands and sessions that never need it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache, lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import UnknownAdapterError
from .usage import TokenCounts, prompt_tokens

if TYPE_CHECKING:
    from .adapters import Adapter

SOURCE = "genai-prices"
_RESOLVED_MAX = 4096


def _provider_id(provider: str) -> str | None:
    """The genai-prices provider id of a metis provider: its facts row's `genai_prices_id`
    (None for a provider without an adapter, or one the data set does not price)."""
    try:
        return _registry()(provider).facts.genai_prices_id
    except UnknownAdapterError:
        return None


@cache
def _registry() -> Callable[[str], Adapter]:
    """`adapters.get`, imported on first use (the adapters import the catalog, which prices
    through this module) and once: an import statement per priced reply costs 0.5 us."""
    from .adapters import get

    return get


@cache
def data_version() -> str | None:
    """`genai-prices@<version>`, the pricing_version of its costs; None when it is not installed."""
    try:
        return f"{SOURCE}@{version('genai-prices')}"
    except PackageNotFoundError:
        return None


class Priced(NamedTuple):
    """A cost, or why there is none (`cost` None, `reason` set)."""

    cost: Decimal | None
    reason: str | None = None


class _Resolved(NamedTuple):
    model: Any  # genai_prices.types.ModelInfo; None when the lookup failed
    price: Any  # its ModelPrice for the day; None when it varies within the day
    reason: str | None
    rated: frozenset[str] = frozenset()  # `rated_keys` of `price`


def cost(counts: TokenCounts, pricing_key: str, *, at: datetime | None = None) -> Priced:
    """Cost of `counts` for `pricing_key` (`provider:model`) at time `at` (default now)."""
    when = at or datetime.now(UTC)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    provider, _, model = pricing_key.partition(":")
    if data_version() is None:
        return Priced(None, "genai-prices is not installed")
    provider_id = _provider_id(provider)
    if provider_id is None or not model:
        return Priced(None, f"{SOURCE} prices no {provider or pricing_key!r} models")
    resolved = _resolved(provider_id, model, when.astimezone(UTC).date())
    if resolved.model is None:
        return Priced(None, resolved.reason)
    if resolved.price is not None:
        price, rated = resolved.price, resolved.rated
    else:
        price = resolved.model.get_prices(when)
        rated = rated_keys(price)
    try:
        total = price.calc_price(_usage(counts, rated))["total_price"]
    except ValueError as exc:  # counts its data model refuses (a breakdown it cannot place)
        return Priced(None, f"{SOURCE} cannot price these counts of {pricing_key}: {exc}")
    return Priced(Decimal(total))


@lru_cache(maxsize=_RESOLVED_MAX)
def _resolved(provider_id: str, model: str, day: date) -> _Resolved:
    """The model's prices in force on `day` (noon UTC), looked up once per (provider, model, day)."""
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import TimeOfDateConstraint

    try:
        _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    except LookupError:
        return _Resolved(None, None, f"{data_version()} has no price for {provider_id} model {model!r}")
    prices = info.prices
    if isinstance(prices, list) and any(isinstance(p.constraint, TimeOfDateConstraint) for p in prices):
        return _Resolved(info, None, None)  # e.g. off-peak hours: resolved at the reply's time
    noon = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    price = info.get_prices(noon)
    return _Resolved(info, price, None, rated_keys(price))


@cache
def _units() -> Any:
    """genai-prices' units (usage key <-> price key), from its public unit data, built once."""
    from genai_prices.data_units import unit_data
    from genai_prices.units import UnitRegistry

    return UnitRegistry(unit_data)


def rated_keys(price: Any) -> frozenset[str]:
    """The usage keys a genai-prices `ModelPrice` sets a rate for: the only counts its
    `calc_price` reads (with `input_tokens`, which selects a tier). Found once per resolved
    price."""
    return frozenset(
        unit.usage_key for unit in _units().units.values() if getattr(price, unit.price_key) is not None
    )


_TOTALS = frozenset({"input_tokens", "output_tokens"})


def _usage(counts: TokenCounts, rated: frozenset[str]) -> Any:
    """genai-prices' Usage of `counts` for a price that rates the usage keys `rated`: its
    input and cache totals include their parts.

    Every count metis has that is not 0 is given, and every count the price rates, zeros
    included: a count left out that the price rates is inferred by genai-prices on each
    read (0 when nothing finer was reported, the case of every count left out here), and
    those inferences were a fifth of pricing a reply; a zero given is the same zero, read
    for free. A zero the price does not rate is left out: `calc_price` never reads it, and
    genai-prices' inference of a rated count it lacks looks only at counts above 0, so the
    cost (or the refusal) is the same; and each count given is checked twice by genai-prices
    (`Usage()`, then `calc_price`): the six zeros of a claude-sonnet-4-5 reply that its price
    does not rate (reasoning, audio, image, code executions) took 4 µs of its 60, gpt-4o's
    eight 9 µs. The two totals are always given (the input total picks a tier).
    """
    from genai_prices import Usage

    written = counts.cache_creation_input_tokens
    one_hour = counts.cache_creation_1h_input_tokens
    values: dict[str, int] = {
        "input_tokens": prompt_tokens(counts),
        "output_tokens": counts.output_tokens,
        "cache_read_tokens": counts.cached_input_tokens,
        "cache_write_tokens": written,
        "cache_write_1h_tokens": one_hour,
        "output_reasoning_tokens": counts.reasoning_tokens,
        "input_audio_tokens": counts.input_audio_tokens,
        "input_image_tokens": counts.input_image_tokens,
        "output_audio_tokens": counts.output_audio_tokens,
        "output_image_tokens": counts.output_image_tokens,
        "web_searches": counts.web_search_requests,
        "code_executions": counts.code_execution_requests,
    }
    if one_hour:
        values["cache_write_5m_tokens"] = written - one_hour
    return Usage(**{key: n for key, n in values.items() if n or key in rated or key in _TOTALS})


def cache_clear() -> None:
    """Forget resolved prices (tests that swap the data snapshot)."""
    _resolved.cache_clear()


__all__ = ["SOURCE", "Priced", "cache_clear", "cost", "data_version", "rated_keys"]
