"""What canonical token counts mean per provider, and local cost from versioned tables (§4.3, §6.4, §11.1.7)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

import pytest
from metis import PricingError, Usage, WireFormatError
from metis.pricing import (
    UNPRICED,
    available_versions,
    compute_cost,
    current_version,
    load_price_table,
    load_price_table_file,
    make_usage,
    parse_price_table,
    price_for,
    reprice,
)
from metis.usage import TokenCounts, normalize_usage
from metis.validation import validate_document
from metis_schema.v3 import PriceTable

from tests.support.paths import REPO

DATA = REPO / "runtime" / "metis" / "data"
GENAI = f"genai-prices@{version('genai-prices')}"
LOCAL = load_price_table().pricing_version
AT = datetime(2026, 11, 20, 12, tzinfo=UTC)
"""When the replies priced here were made: prices are those in force that day."""


def _table(name: str, models: dict[str, tuple[str, str]]) -> PriceTable:
    """A caller's own price table (an override), rates per MTok as (input, output)."""
    return PriceTable.model_validate(
        {
            "pricing_version": name,
            "models": {
                k: {"input_per_mtok_usd": i, "output_per_mtok_usd": o} for k, (i, o) in models.items()
            },
        }
    )


# --- per-provider meaning of input_tokens ---------------------------------------------------------
# Canonical input_tokens is *uncached* input only. The invariant pinned for every provider:
# input + cached + cache_creation == the provider's whole prompt, so no token is priced twice.


def test_anthropic_input_tokens_already_exclude_cache() -> None:
    wire = {
        "input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 500,
        "output_tokens": 200,
    }
    counts = normalize_usage("anthropic", wire)
    assert counts == TokenCounts(
        input_tokens=100, output_tokens=200, cached_input_tokens=1000, cache_creation_input_tokens=500
    )
    # Anthropic's whole prompt is the sum of its three fields: nothing to subtract.
    assert counts.input_tokens + counts.cached_input_tokens + counts.cache_creation_input_tokens == 1600


def test_openai_prompt_tokens_include_cached_tokens() -> None:
    wire = {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1000}}
    counts = normalize_usage("openai", wire)
    assert counts == TokenCounts(input_tokens=200, output_tokens=80, cached_input_tokens=1000)
    assert counts.input_tokens + counts.cached_input_tokens == wire["prompt_tokens"]


def test_openrouter_subtracts_cache_reads_and_writes() -> None:
    wire = {
        "prompt_tokens": 1200,
        "completion_tokens": 80,
        "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 150},
    }
    counts = normalize_usage("openrouter", wire)
    assert counts == TokenCounts(
        input_tokens=50, output_tokens=80, cached_input_tokens=1000, cache_creation_input_tokens=150
    )
    assert counts.input_tokens + counts.cached_input_tokens + counts.cache_creation_input_tokens == 1200


@pytest.mark.parametrize("style", ["camel", "snake"])
def test_gemini_prompt_includes_cached_content_and_thoughts_are_output(style: str) -> None:
    camel = {
        "promptTokenCount": 1200,
        "cachedContentTokenCount": 1000,
        "toolUsePromptTokenCount": 50,
        "candidatesTokenCount": 300,
        "thoughtsTokenCount": 100,
    }
    snake = {
        "prompt_token_count": 1200,
        "cached_content_token_count": 1000,
        "tool_use_prompt_token_count": 50,
        "candidates_token_count": 300,
        "thoughts_token_count": 100,
    }
    counts = normalize_usage("gemini", camel if style == "camel" else snake)
    assert counts == TokenCounts(
        input_tokens=250, output_tokens=400, cached_input_tokens=1000, reasoning_tokens=100
    )


def test_ollama_counts_are_taken_as_they_are() -> None:
    assert normalize_usage("ollama", {"prompt_eval_count": 26, "eval_count": 298}) == TokenCounts(26, 298)
    # A fully cached prompt omits prompt_eval_count.
    assert normalize_usage("ollama", {"eval_count": 5}) == TokenCounts(0, 5)


def test_cached_tokens_are_priced_once_at_the_cache_rate() -> None:
    # 1,200-token OpenAI prompt, 1,000 of it cached: 200 x 0.25 + 1,000 x 0.025 + 80 x 2.00 per Mtok.
    counts = normalize_usage(
        "openai",
        {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1000}},
    )
    usage = make_usage(counts, pricing_key="openai:gpt-5-mini", latency_ms=0, at=AT)
    assert usage.cost_usd == Decimal("0.000235")  # (50 + 25 + 160) / 1e6; double counting would give 0.000485
    assert usage.pricing_version == GENAI


@pytest.mark.parametrize(
    ("provider", "wire"),
    [
        ("openai", {"prompt_tokens": -1}),
        ("openrouter", {"prompt_tokens": "12k"}),
        ("anthropic", {"input_tokens": 1.5}),
        ("anthropic", {"input_tokens": True}),
        ("gemini", {"promptTokenCount": "many"}),
    ],
)
def test_malformed_usage_is_a_wire_format_error(provider: str, wire: dict[str, object]) -> None:
    with pytest.raises(WireFormatError) as caught:
        normalize_usage(provider, wire)
    assert caught.value.provider == provider and caught.value.path and caught.value.path.startswith("usage.")


def test_numeric_strings_are_tolerated() -> None:
    assert normalize_usage("openai", {"prompt_tokens": "12"}).input_tokens == 12


def test_unknown_provider_usage() -> None:
    with pytest.raises(WireFormatError):
        normalize_usage("acme", {"tokens": 1})
    assert normalize_usage("acme", None) == TokenCounts()


# --- cost to the cent (§11.1.7) -----------------------------------------------------------------------


def test_section_8_1_example_costs_0_000654() -> None:
    usage = make_usage(TokenCounts(8, 42), pricing_key="anthropic:claude-sonnet-4-6", latency_ms=820, at=AT)
    assert usage.cost_usd == Decimal("0.000654")
    assert usage.pricing_version == GENAI
    assert json.loads(usage.model_dump_json())["cost_usd"] == "0.000654"


def test_anthropic_cached_and_cache_write_by_hand() -> None:
    # Sonnet 4.6 (genai-prices, Anthropic's price page): input 3.00, output 15.00, cache read 0.30, cache write 3.75 per Mtok.
    #   1,234 x 3.00  =  3,702.0
    #     567 x 15.00 =  8,505.0
    #  45,678 x 0.30  = 13,703.4
    #   8,910 x 3.75  = 33,412.5
    #                   59,322.9 / 1,000,000 = 0.0593229
    counts = normalize_usage(
        "anthropic",
        {
            "input_tokens": 1234,
            "output_tokens": 567,
            "cache_read_input_tokens": 45678,
            "cache_creation_input_tokens": 8910,
        },
    )
    usage = make_usage(counts, pricing_key="anthropic:claude-sonnet-4-6", latency_ms=1, at=AT)
    assert usage.cost_usd == Decimal("0.0593229")


def test_cache_rates_default_to_the_input_rate() -> None:
    price = price_for("openai:gpt-5", _table("mine", {"openai:gpt-5": ("2.50", "10.00")}))
    assert price.cached_read_per_mtok_usd is None
    assert compute_cost(TokenCounts(0, 0, 1_000_000, 0), price) == Decimal("2.50")


def test_tiny_costs_are_exact_and_written_without_exponent() -> None:
    usage = make_usage(TokenCounts(1, 0), pricing_key="openai:gpt-4o-mini", latency_ms=0, at=AT)
    assert usage.cost_usd == Decimal("0.00000015")
    assert '"cost_usd":"0.00000015"' in usage.model_dump_json()


def test_reprice_changes_cost_and_version_but_not_counts() -> None:
    counts = TokenCounts(input_tokens=1000, output_tokens=100, cached_input_tokens=0)
    old = _table("2026-05-08", {"openai:gpt-5": ("2.50", "10.00")})  # the retired hand-kept rate
    stored = make_usage(counts, pricing_key="openai:gpt-5", latency_ms=640, table=old)
    assert stored.cost_usd == Decimal("0.0035")  # 1000 x 2.50 + 100 x 10.00
    assert stored.pricing_version == "override:2026-05-08"  # named as the override it was
    again = reprice(stored, pricing_key="openai:gpt-5", at=AT)
    assert again.cost_usd == Decimal("0.00225")  # 1000 x 1.25 + 100 x 10.00
    assert again.pricing_version == GENAI
    for field in (
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_creation_input_tokens",
        "latency_ms",
    ):
        assert getattr(again, field) == getattr(stored, field)
    assert stored.pricing_version == "override:2026-05-08"  # the stored usage itself is untouched


def test_new_usage_is_priced_by_genai_prices() -> None:
    assert available_versions() == [LOCAL, GENAI]
    assert current_version() == GENAI
    usage = make_usage(TokenCounts(1, 1), pricing_key="openai:gpt-5", latency_ms=0)
    assert usage.pricing_version == GENAI


# --- price tables are data validated by the schema -------------------------------------------------------


@pytest.mark.parametrize("path", sorted(DATA.glob("pricing-*.json")), ids=lambda p: p.name)
def test_shipped_price_tables_validate(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert validate_document(doc, "PriceTable") == []
    table = load_price_table(doc["pricing_version"])
    assert path.name == "pricing-local.json" and table.pricing_version.startswith("metis-local@")


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"models": {}}, "pricing_version"),
        (
            {
                "pricing_version": "x",
                "models": {"a:b": {"input_per_mtok_usd": 3.0, "output_per_mtok_usd": "1"}},
            },
            "models.a:b.input_per_mtok_usd",
        ),
        (
            {
                "pricing_version": "x",
                "models": {"a:b": {"input_per_mtok_usd": "-3", "output_per_mtok_usd": "1"}},
            },
            "models.a:b.input_per_mtok_usd",
        ),
        (
            {"pricing_version": "x", "models": {"a:b": {"input_per_mtok_usd": "3"}}},
            "models.a:b.output_per_mtok_usd",
        ),
        ({"pricing_version": "x", "currency": "EUR", "models": {}}, "currency"),
    ],
)
def test_bad_table_is_a_pricing_error_with_the_path(doc: dict[str, object], path: str) -> None:
    with pytest.raises(PricingError) as caught:
        parse_price_table(json.dumps(doc))
    assert caught.value.path == path
    assert path in str(caught.value)


def test_price_table_file_errors(tmp_path: Path) -> None:
    broken = tmp_path / "rates.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(PricingError) as caught:
        load_price_table_file(broken)
    assert caught.value.path == "line 1 column 2"
    with pytest.raises(PricingError):
        load_price_table_file(tmp_path / "missing.json")
    good = tmp_path / "mine.json"
    good.write_text(
        json.dumps(
            {
                "pricing_version": "mine",
                "models": {"x:y": {"input_per_mtok_usd": "1", "output_per_mtok_usd": "2"}},
            }
        )
    )
    assert load_price_table_file(good).models["x:y"].output_per_mtok_usd == Decimal("2")


def test_unknown_pricing_version() -> None:
    with pytest.raises(PricingError) as caught:
        load_price_table("1999-01-01")
    assert LOCAL in str(caught.value) and GENAI in str(caught.value)  # the hint lists the known versions


# --- unpriced models ---------------------------------------------------------------------------------------


def test_missing_price_is_an_error_naming_model_and_version() -> None:
    with pytest.raises(PricingError) as caught:
        price_for("ollama:mystery", load_price_table())
    assert "ollama:mystery" in str(caught.value) and LOCAL in str(caught.value)


def test_unpriced_models_cost_zero_under_the_unpriced_version(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.pricing"):
        usage = make_usage(TokenCounts(10, 20, 5), pricing_key=UNPRICED, latency_ms=-3)
    assert isinstance(usage, Usage)
    assert usage.cost_usd == Decimal(0) and usage.pricing_version == UNPRICED
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (10, 20, 5)
    assert usage.latency_ms == 0
    assert caplog.records == []  # priced per streamed snapshot: whoever records the usage says so


def test_a_model_no_source_prices_is_unpriced_not_guessed() -> None:
    usage = make_usage(TokenCounts(1, 2), pricing_key=UNPRICED, latency_ms=0, model="ollama:my-local")
    assert (usage.cost_usd, usage.pricing_version) == (Decimal(0), UNPRICED)
    usage = make_usage(TokenCounts(1, 2), pricing_key=UNPRICED, latency_ms=0, model="openai:no-such-model-x")
    assert usage.pricing_version == UNPRICED


# --- genai-prices: the maintained source behind the local table --------------------------------------------


def test_genai_prices_is_the_one_source_of_rates_it_has() -> None:
    # The local table kept sonnet at hand-kept rates; genai-prices has it, so it prices it.
    assert "anthropic:claude-sonnet-4-6" not in load_price_table().models
    usage = make_usage(TokenCounts(1_000_000, 0), pricing_key="anthropic:claude-sonnet-4-6", latency_ms=0)
    assert usage.pricing_version == GENAI and usage.cost_usd == Decimal("3")


def test_no_local_rate_duplicates_one_genai_prices_has() -> None:
    from metis._genai_prices import cost

    for key in load_price_table().models:
        assert cost(TokenCounts(1000, 1000), key).cost is None, f"{key}: genai-prices has it; retire it"


def test_the_local_table_is_the_default_only_for_models_genai_prices_lacks() -> None:
    usage = make_usage(TokenCounts(1000, 1000), pricing_key="openrouter:deepseek/deepseek-v3", latency_ms=0)
    assert usage.pricing_version == LOCAL and usage.cost_usd == Decimal("0.00125")  # 0.25 in + 1.00 out


def test_an_explicit_local_version_is_an_override_named_as_such() -> None:
    usage = make_usage(TokenCounts(10, 10), pricing_key="ollama:qwen3-8b", latency_ms=0, version=LOCAL)
    assert usage.pricing_version == f"override:{LOCAL}"
    with pytest.raises(PricingError):  # an override prices alone: no fallback
        make_usage(TokenCounts(10, 10), pricing_key="openai:gpt-4o", latency_ms=0, version=LOCAL)


def test_a_model_the_local_table_lacks_is_priced_by_genai_prices_naming_its_version() -> None:
    usage = make_usage(
        TokenCounts(1_000_000, 1_000_000), pricing_key=UNPRICED, latency_ms=0, model="openai:gpt-4o"
    )
    assert usage.pricing_version == GENAI
    assert usage.cost_usd == Decimal("12.5")  # $2.50 in + $10 out per MTok
    # cached input is part of genai-prices' input_tokens: the cached share gets the cache rate
    cached = make_usage(
        TokenCounts(0, 0, 1_000_000), pricing_key=UNPRICED, latency_ms=0, model="openai:gpt-4o"
    )
    assert cached.cost_usd == Decimal("1.25")


def test_price_as_of_reprices_at_that_days_prices_beside_the_stored_cost() -> None:
    from datetime import date

    from metis.pricing import price_as_of

    # Mistral Medium: $0.40/$2.00 until 2026-06-15, $1.50/$7.50 from 2026-06-16 (genai-prices).
    stored = make_usage(
        TokenCounts(1_000_000, 0), pricing_key="mistral:mistral-medium-latest", latency_ms=0, at=AT
    )
    assert stored.cost_usd == Decimal("1.5")
    before = price_as_of(stored, pricing_key="mistral:mistral-medium-latest", day=date(2026, 6, 1))
    assert before.cost_usd == Decimal("0.4") and before.pricing_version == GENAI
    assert stored.cost_usd == Decimal("1.5")  # what was stored is untouched


# --- values metis builds itself are what validation would build ----------------------------------------


@pytest.mark.parametrize(
    "counts",
    [
        TokenCounts(),
        TokenCounts(8, 42),
        TokenCounts(1234, 567, 45678, 8910),
        TokenCounts(10**12, 10**9, 3, 4),
    ],
)
@pytest.mark.parametrize("latency", [0, 812, -5])
def test_built_usage_equals_a_validated_one(counts: TokenCounts, latency: int) -> None:
    usage = make_usage(counts, pricing_key="anthropic:claude-sonnet-4-6", latency_ms=latency)
    validated = Usage.model_validate(usage.model_dump())
    assert usage == validated
    assert list(usage.__dict__) == list(validated.__dict__)
    assert usage.model_fields_set == validated.model_fields_set
    assert usage.model_dump_json() == validated.model_dump_json()
    assert repr(usage) == repr(validated)


def test_odd_latency_still_reaches_usage_validation() -> None:
    with pytest.raises(ValueError, match="latency_ms"):
        make_usage(TokenCounts(1, 1), pricing_key="openai:gpt-5", latency_ms=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="latency_ms"):
        make_usage(TokenCounts(1, 1), pricing_key="openai:gpt-5", latency_ms=True)


@pytest.mark.parametrize(
    "value", ["0", "0E-6", "0.00001", "1E-7", "0.999999", "1", "10", "1E+2", "123.4500", "5E+30"]
)
def test_plain_costs_are_the_normalized_fixed_point_value(value: str) -> None:
    from metis.pricing import _plain

    plain = _plain(Decimal(value))
    by_text = Decimal(format(Decimal(value).normalize(), "f")) if Decimal(value) else Decimal(0)
    assert plain == Decimal(value)
    assert plain.as_tuple() == by_text.as_tuple()  # the same digits and exponent, not just equal


def test_assistant_messages_share_no_routing_record() -> None:
    from metis.assembly import RequestContext, finish_assistant
    from metis.ids import ToolIdMap
    from metis_schema.v3 import Message, TextBlock

    def finished() -> Message:
        context = RequestContext(session_id="sess_x", model="sonnet", tool_ids=ToolIdMap("sess_x"))
        return finish_assistant(
            context,
            provider="anthropic",
            content=[TextBlock(text="hi")],
            counts=TokenCounts(8, 42),
            stop_reason=None,
            provider_raw={"id": "msg_1"},
        )

    first, second = finished(), finished()
    assert first.metadata.routing == second.metadata.routing
    assert first.metadata.routing is not second.metadata.routing
    assert first.metadata.routing is not None and second.metadata.routing is not None
    first.metadata.routing.alternatives_considered.append("openai:gpt-5")
    first.metadata.routing.reason = "changed"
    assert second.metadata.routing.alternatives_considered == []
    assert second.metadata.routing.reason == "default model"
    assert finished().metadata.routing == second.metadata.routing
    for message in (first, second):
        assert message == Message.model_validate(message.model_dump())
        routing = message.metadata.routing
        assert routing is not None and routing.model_fields_set == {"mode", "chosen_model", "reason"}


def test_unlisted_models_resolve_to_one_entry_per_name() -> None:
    from metis.catalog import load_catalog

    catalog = load_catalog()
    entry = catalog.resolve("ollama:some-local-model:7b")
    assert entry is catalog.resolve("ollama:some-local-model:7b")
    assert entry.pricing_key == UNPRICED and entry.id == "ollama:some-local-model:7b"
    with pytest.raises(Exception, match="unknown model"):
        catalog.resolve("ollama:some-local-model:7b", allow_unlisted=False)
