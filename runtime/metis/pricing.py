"""Local cost computation from versioned price tables (spec §6.4, §13).

Costs are never parroted from a provider: prices change, some providers send no cost,
and a stored cost must say which table produced it (`Usage.pricing_version`) so it can
be recomputed under another one (`reprice`). Price tables are JSON data files
(`metis/data/pricing-<version>.json`) validated against the schema's PriceTable.
Arithmetic is exact `Decimal`: tokens x rate / 1,000,000, with no rounding.
"""

from __future__ import annotations

import json
import logging
import re
from decimal import Decimal
from functools import cache
from pathlib import Path

from metis_schema.v1 import ModelPrice, PriceTable, Usage
from pydantic import ValidationError

from .errors import PricingError
from .usage import TokenCounts, UsageCountError
from .validation import explain

_MILLION = Decimal(1_000_000)
_log = logging.getLogger("metis.pricing")
UNPRICED = "unpriced"
"""pricing_key / pricing_version of models no price table covers."""
_FILE = re.compile(r"^pricing-(?P<version>.+)\.json$")


def _data_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def available_versions() -> list[str]:
    """Pricing versions shipped with metis, oldest first."""
    found = [m["version"] for p in _data_dir().iterdir() if (m := _FILE.match(p.name))]
    return sorted(found)


def current_version() -> str:
    """The newest shipped pricing version: what new usage is priced with."""
    versions = available_versions()
    if not versions:
        raise PricingError("no price tables are installed", hint="reinstall metis")
    return versions[-1]


def parse_price_table(text: str, *, source: str = "price table") -> PriceTable:
    """Validate a price table document (JSON text) against the schema."""
    try:
        return PriceTable.model_validate_json(text)
    except ValidationError as exc:
        problems = explain(text, "PriceTable", exc)
        listing = "; ".join(str(p) for p in problems)
        raise PricingError(f"{source} is invalid: {listing}", path=problems[0].path) from exc


@cache
def load_price_table(version: str | None = None) -> PriceTable:
    """The shipped price table of `version` (default: the current one)."""
    version = version or current_version()
    path = _data_dir() / f"pricing-{version}.json"
    if not path.exists():
        raise PricingError(
            f"unknown pricing version {version!r}", hint=f"known versions: {', '.join(available_versions())}"
        )
    table = parse_price_table(path.read_text(encoding="utf-8"), source=path.name)
    if table.pricing_version != version:
        raise PricingError(f"{path.name} declares pricing_version {table.pricing_version!r}")
    return table


def price_for(pricing_key: str, table: PriceTable) -> ModelPrice:
    """The rates of `pricing_key` in `table`."""
    try:
        return table.models[pricing_key]
    except KeyError:
        raise PricingError(
            f"no price for {pricing_key!r} in pricing version {table.pricing_version}",
            hint="add it to the price table or pass another pricing version",
        ) from None


def compute_cost(counts: TokenCounts, price: ModelPrice) -> Decimal:
    """Exact cost in USD of normalized token counts at `price` (cache rates default to input)."""
    n_in, n_out, cached, written = counts
    input_rate = price.input_per_mtok_usd
    total = n_in * input_rate + n_out * price.output_per_mtok_usd
    # Cache terms only when there are such tokens (most replies have none): exact either way.
    if cached:
        rate = price.cached_read_per_mtok_usd
        total += cached * (input_rate if rate is None else rate)
    if written:
        rate = price.cache_write_per_mtok_usd
        total += written * (input_rate if rate is None else rate)
    return _plain(total / _MILLION)


def _plain(value: Decimal) -> Decimal:
    """Normalize a Decimal so it prints without exponent (1E-5 -> 0.00001, 0E-6 -> 0)."""
    if value == 0:
        return Decimal(0)
    normal = value.normalize()
    if -1 < normal < 1:
        # Already fixed-point: a normalized non-zero fraction has a negative exponent and
        # no trailing zeros, so formatting and re-parsing it would give it back unchanged.
        # Nearly every per-message cost is below a dollar; this skips a format and a parse.
        return normal
    return Decimal(format(normal, "f"))


def _bad_counts(counts: TokenCounts) -> None:
    for name, value in zip(TokenCounts._fields, counts, strict=True):
        if type(value) is not int or value < 0:
            raise UsageCountError(f"TokenCounts.{name} must be a non-negative int, got {value!r}", path=name)


_UNPRICED_WARNED: set[str] = set()
_WARNED_MAX = 1024  # model names come from callers: bound what is remembered


def make_usage(
    counts: TokenCounts,
    *,
    pricing_key: str,
    latency_ms: int,
    version: str | None = None,
    table: PriceTable | None = None,
    model: str | None = None,
) -> Usage:
    """A canonical Usage: counts, locally computed cost, and the pricing version used.

    Usage of an unpriced model is logged at WARN, naming `model` when given, and then
    once per model: every streamed snapshot of a reply is priced, not only the last.
    """
    n_in, n_out, cached, written = counts
    if not (
        type(n_in) is int
        and type(n_out) is int
        and type(cached) is int
        and type(written) is int
        and n_in >= 0
        and n_out >= 0
        and cached >= 0
        and written >= 0
    ):
        _bad_counts(counts)
    if pricing_key == UNPRICED:
        # A model no table prices (an unlisted local model): cost 0, and the version says so.
        if model is None or model not in _UNPRICED_WARNED:
            if model is not None and len(_UNPRICED_WARNED) < _WARNED_MAX:
                _UNPRICED_WARNED.add(model)
            _log.warning(
                "no price for %s; cost recorded as 0 under pricing_version 'unpriced'",
                model or "this model",
                extra={"model": model, "pricing_key": pricing_key},
            )
        cost, pricing_version = Decimal(0), UNPRICED
    else:
        table = table or load_price_table(version)
        cost, pricing_version = compute_cost(counts, price_for(pricing_key, table)), table.pricing_version
    if type(latency_ms) is not int:
        raise UsageCountError(f"latency_ms must be an int, got {latency_ms!r}", path="latency_ms")
    return Usage(
        input_tokens=n_in,
        output_tokens=n_out,
        cached_input_tokens=cached,
        cache_creation_input_tokens=written,
        cost_usd=cost,
        pricing_version=pricing_version,
        latency_ms=latency_ms if latency_ms > 0 else 0,
    )


def reprice(
    usage: Usage, *, pricing_key: str, version: str | None = None, table: PriceTable | None = None
) -> Usage:
    """The same usage priced under another table; counts and latency unchanged."""
    counts = TokenCounts(
        usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.cache_creation_input_tokens
    )
    return make_usage(
        counts, pricing_key=pricing_key, latency_ms=usage.latency_ms, version=version, table=table
    )


def load_price_table_file(path: Path) -> PriceTable:
    """A price table from any file (e.g. a user's own rates)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PricingError(f"cannot read price table {path}: {exc.strerror}") from exc
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise PricingError(
            f"{path} is not JSON: {exc.msg}", path=f"line {exc.lineno} column {exc.colno}"
        ) from exc
    return parse_price_table(text, source=str(path))


__all__ = [
    "UNPRICED",
    "available_versions",
    "compute_cost",
    "current_version",
    "load_price_table",
    "load_price_table_file",
    "make_usage",
    "parse_price_table",
    "price_for",
    "reprice",
]
