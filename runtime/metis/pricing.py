"""Local cost computation from versioned price tables (spec §6.4, §13).

Costs are never parroted from a provider: prices change, some providers send no cost,
and a stored cost must say which table produced it (`Usage.pricing_version`) so it can
be recomputed under another one (`reprice`). Price tables are JSON data files
(`metis/data/pricing-<version>.json`) validated against the schema's PriceTable.
Arithmetic is exact `Decimal`: tokens x rate / 1,000,000, with no rounding.

Two sources, one order: metis's own tables (versions named by their date, e.g.
`2026-11-01`) are the override and the offline default for the catalog's models; the
maintained `genai-prices` data set prices everything else, its costs recorded under
`genai-prices@<its version>` (see `metis._genai_prices`). A model neither knows is
recorded with cost 0 and pricing_version `unpriced`, and shown as unpriced, not $0.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import cache
from pathlib import Path

from metis_schema.v3 import ModelPrice, PriceTable, Usage
from pydantic import ValidationError

from . import _genai_prices as _genai
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
        known = [*available_versions(), *filter(None, [_genai.data_version()])]
        raise PricingError(f"unknown pricing version {version!r}", hint=f"known versions: {', '.join(known)}")
    table = parse_price_table(path.read_text(encoding="utf-8"), source=path.name)
    if table.pricing_version != version:
        raise PricingError(f"{path.name} declares pricing_version {table.pricing_version!r}")
    return table


def check_version(version: str) -> str:
    """`version` when it names a shipped table or the installed genai-prices data; else PricingError."""
    if version != _genai.data_version():
        load_price_table(version)
    return version


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


def make_usage(
    counts: TokenCounts,
    *,
    pricing_key: str,
    latency_ms: int,
    version: str | None = None,
    table: PriceTable | None = None,
    model: str | None = None,
    at: datetime | None = None,
) -> Usage:
    """A canonical Usage: counts, locally computed cost, and the pricing version used.

    Where the price comes from (see the module docstring): an explicit `table` or local
    `version` prices alone (PricingError when it lacks the key); `version` naming the
    installed genai-prices data uses that alone; by default the current local table is
    tried first and genai-prices (at time `at`, default now) second. A model neither
    prices costs 0 under pricing_version `unpriced`, logged at DEBUG only: callers that
    record usage say so where it is recorded (a CLI warning in the middle of a streamed
    reply helps nobody), and the stored version says it for ever after.
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
    if type(latency_ms) is not int:
        raise UsageCountError(f"latency_ms must be an int, got {latency_ms!r}", path="latency_ms")
    cost, pricing_version = _priced(counts, pricing_key, model=model, version=version, table=table, at=at)
    return Usage(
        input_tokens=n_in,
        output_tokens=n_out,
        cached_input_tokens=cached,
        cache_creation_input_tokens=written,
        cost_usd=cost,
        pricing_version=pricing_version,
        latency_ms=latency_ms if latency_ms > 0 else 0,
    )


def _priced(
    counts: TokenCounts,
    pricing_key: str,
    *,
    model: str | None,
    version: str | None,
    table: PriceTable | None,
    at: datetime | None,
) -> tuple[Decimal, str]:
    """(cost, pricing_version) of `counts` under the rules of `make_usage`."""
    lookup = model if pricing_key == UNPRICED and model else pricing_key
    genai = _genai.data_version()
    if table is not None or (version is not None and version != genai):
        table = table or load_price_table(version)
        return compute_cost(counts, price_for(pricing_key, table)), table.pricing_version
    if version is None and pricing_key != UNPRICED:
        table = load_price_table()
        price = table.models.get(pricing_key)
        if price is not None:
            return compute_cost(counts, price), table.pricing_version
    found = _genai.cost(counts, lookup, at=at) if lookup != UNPRICED else None
    if found is not None and genai is not None:
        return _plain(found), genai
    _log.debug("no price for %s; cost recorded as 0 under pricing_version 'unpriced'", lookup)
    return Decimal(0), UNPRICED


def reprice(
    usage: Usage,
    *,
    pricing_key: str,
    version: str | None = None,
    table: PriceTable | None = None,
    model: str | None = None,
) -> Usage:
    """The same usage priced under another table; counts and latency unchanged."""
    return make_usage(
        _counts(usage),
        pricing_key=pricing_key,
        latency_ms=usage.latency_ms,
        version=version,
        table=table,
        model=model,
    )


def _counts(usage: Usage) -> TokenCounts:
    return TokenCounts(
        usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.cache_creation_input_tokens
    )


def table_in_force(day: date) -> PriceTable | None:
    """The newest local table whose `effective_from` is on or before `day` (None: none yet)."""
    chosen = None
    for version in available_versions():
        table = load_price_table(version)
        start = table.effective_from
        if start is None or start <= day:
            chosen = table
    return chosen


def price_as_of(usage: Usage, *, pricing_key: str, day: date, model: str | None = None) -> Usage:
    """The same usage at the prices in force on `day` (`metis price --as-of`).

    The local table in force that day prices it when it lists the model; otherwise
    genai-prices at that date; otherwise it is unpriced.
    """
    table = table_in_force(day)
    if table is not None and pricing_key in table.models:
        return reprice(usage, pricing_key=pricing_key, table=table)
    at = datetime.combine(day, time(12), tzinfo=UTC)
    return make_usage(
        _counts(usage),
        pricing_key=pricing_key,
        latency_ms=usage.latency_ms,
        version=_genai.data_version() or UNPRICED,
        model=model,
        at=at,
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
    "check_version",
    "compute_cost",
    "current_version",
    "load_price_table",
    "load_price_table_file",
    "make_usage",
    "parse_price_table",
    "price_as_of",
    "price_for",
    "reprice",
    "table_in_force",
]
