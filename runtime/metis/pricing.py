"""Costs from dated prices, at the reply's time (spec §6.4, §13).

One source of dated prices: the maintained `genai-prices` data set (`metis._genai_prices`),
asked for the prices in force when the reply was made (`Message.created_at`), its costs
recorded under `genai-prices@<data version>`. metis's own table
(`metis/data/pricing-local.json`, validated against the schema's PriceTable) is only two
things: the offline default for models genai-prices lacks (local models at $0, a route
it does not list), recorded under the table's own version (`metis-local@<date>`); and an
override a caller names explicitly (`version=`/`table=`, `metis price --prices FILE`),
recorded as `override:<its version>`. It keeps no rate genai-prices has.

A model no source prices is recorded with cost 0 under pricing_version `unpriced` and an
`unpriced_reason`, and shown as unpriced, never as $0. A reply with nothing counted is
not priced at all (`no-usage`). Arithmetic is exact `Decimal`, with no rounding.

Repricing (`reprice`, `price_as_of`) returns a new Usage beside the stored one; what was
stored is never changed.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import cache
from pathlib import Path

from metis_schema.v3 import ModelPrice, PriceTable, Usage

from . import _genai_prices as _genai
from ._price_marks import NO_USAGE, UNPRICED
from .errors import PricingError
from .usage import TokenCounts, UsageCountError, counts_of, units_of
from .validation import parse_document

_MILLION = Decimal(1_000_000)
_log = logging.getLogger("metis.pricing")
OVERRIDE = "override:"
"""Prefix of the pricing_version of a cost from a table the caller chose over genai-prices."""
_LOCAL_FILE = "pricing-local.json"


def _data_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def local_version() -> str:
    """The version of metis's own table (`metis-local@<date>`)."""
    return load_price_table().pricing_version


def available_versions() -> list[str]:
    """Pricing versions a caller can name: the local table's, then genai-prices' data."""
    return [local_version(), *filter(None, [_genai.data_version()])]


def current_version() -> str:
    """What new usage is priced with first: genai-prices' data (the local table without it)."""
    return _genai.data_version() or local_version()


def parse_price_table(text: str, *, source: str = "price table") -> PriceTable:
    """Validate a price table document (JSON text) against the schema."""
    return parse_document(PriceTable, text, source=source, error=PricingError)


@cache
def _local_table() -> PriceTable:
    path = _data_dir() / _LOCAL_FILE
    if not path.exists():
        raise PricingError(f"{_LOCAL_FILE} is not installed", hint="reinstall metis")
    return parse_price_table(path.read_text(encoding="utf-8"), source=_LOCAL_FILE)


def load_price_table(version: str | None = None) -> PriceTable:
    """metis's own table; `version`, when given, must be its version."""
    table = _local_table()
    if version is not None and version != table.pricing_version:
        raise PricingError(
            f"unknown pricing version {version!r}",
            hint=f"known versions: {', '.join(available_versions())}",
        )
    return table


def check_version(version: str) -> str:
    """`version` when it names the local table or the installed genai-prices data; else PricingError."""
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
    """Exact cost in USD of normalized token counts at a table's `price` (cache rates default to input).

    A table prices tokens only: reasoning, audio and image tokens at the rate of the total
    they are part of, server-tool requests not at all (genai-prices prices those)."""
    n_in, n_out, cached, written = counts[:4]
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


def _check_counts(counts: TokenCounts, latency_ms: int) -> None:
    for name, value in zip(TokenCounts._fields[:13], counts[:13], strict=True):
        if type(value) is not int or value < 0:
            raise UsageCountError(f"TokenCounts.{name} must be a non-negative int, got {value!r}", path=name)
    billed = counts.billed_cost_usd
    if billed is not None and (not isinstance(billed, Decimal) or not billed.is_finite() or billed < 0):
        raise UsageCountError(
            f"TokenCounts.billed_cost_usd must be a non-negative Decimal, got {billed!r}",
            path="billed_cost_usd",
        )
    if type(latency_ms) is not int:
        raise UsageCountError(f"latency_ms must be an int, got {latency_ms!r}", path="latency_ms")


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
    """A canonical Usage: counts, the cost computed locally at time `at`, and what priced it.

    `at` is when the reply was made (its created_at; default now): genai-prices is asked
    for the prices in force then. By default genai-prices prices first and the local table
    second (models genai-prices lacks); `version` naming the genai-prices data uses it
    alone; an explicit `table`, or `version` naming the local table, overrides both
    (PricingError when it lacks the key) and is recorded as `override:<version>`. A model
    no source prices costs 0 under pricing_version `unpriced` with the reason, logged at
    DEBUG only: callers that record usage say so where it is recorded (a CLI warning in
    the middle of a streamed reply helps nobody), and the stored Usage says it for ever
    after. Counts that are all zero are not priced (`no-usage`).
    """
    _check_counts(counts, latency_ms)
    if any(counts[:13]):
        cost, pricing_version, reason = _priced(
            counts, pricing_key, model=model, version=version, table=table, at=at
        )
    else:
        cost, pricing_version, reason = Decimal(0), NO_USAGE, None
    return Usage(
        input_tokens=counts.input_tokens,
        output_tokens=counts.output_tokens,
        cached_input_tokens=counts.cached_input_tokens,
        cache_creation_input_tokens=counts.cache_creation_input_tokens,
        cost_usd=cost,
        pricing_version=pricing_version,
        latency_ms=latency_ms if latency_ms > 0 else 0,
        units=units_of(counts),
        billed_cost_usd=counts.billed_cost_usd,
        unpriced_reason=reason,
    )


def _priced(
    counts: TokenCounts,
    pricing_key: str,
    *,
    model: str | None,
    version: str | None,
    table: PriceTable | None,
    at: datetime | None,
) -> tuple[Decimal, str, str | None]:
    """(cost, pricing_version, unpriced reason) of `counts` under the rules of `make_usage`."""
    genai = _genai.data_version()
    if table is not None or (version is not None and version != genai):
        table = table or load_price_table(version)
        return compute_cost(counts, price_for(pricing_key, table)), OVERRIDE + table.pricing_version, None
    lookup = model if pricing_key == UNPRICED and model else pricing_key
    if lookup == UNPRICED:
        return Decimal(0), UNPRICED, "the model has no pricing key and no model id to look up"
    found = _genai.cost(counts, lookup, at=at)
    if found.cost is not None and genai is not None:
        return _plain(found.cost), genai, None
    local = load_price_table()
    price = local.models.get(lookup) if version is None else None
    if price is not None:
        return compute_cost(counts, price), local.pricing_version, None
    reason = f"{found.reason}" + ("" if version is not None else f"; {local.pricing_version} has none either")
    _log.debug("no price for %s (%s); recorded unpriced", lookup, reason)
    return Decimal(0), UNPRICED, reason


def reprice(
    usage: Usage,
    *,
    pricing_key: str,
    version: str | None = None,
    table: PriceTable | None = None,
    model: str | None = None,
    at: datetime | None = None,
) -> Usage:
    """The same usage priced again (at time `at`, or under another table); a new Usage,
    counts, billed cost and latency unchanged, the stored one untouched."""
    return make_usage(
        counts_of(usage),
        pricing_key=pricing_key,
        latency_ms=usage.latency_ms,
        version=version,
        table=table,
        model=model,
        at=at,
    )


def price_as_of(usage: Usage, *, pricing_key: str, day: date, model: str | None = None) -> Usage:
    """The same usage at the prices in force on `day` (`metis price --as-of`), noon UTC."""
    return reprice(
        usage, pricing_key=pricing_key, model=model, at=datetime.combine(day, time(12), tzinfo=UTC)
    )


def load_price_table_file(path: Path) -> PriceTable:
    """A price table from any file (e.g. a user's own rates, an override)."""
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
    "NO_USAGE",
    "OVERRIDE",
    "UNPRICED",
    "available_versions",
    "check_version",
    "compute_cost",
    "current_version",
    "load_price_table",
    "load_price_table_file",
    "local_version",
    "make_usage",
    "parse_price_table",
    "price_as_of",
    "price_for",
    "reprice",
]
