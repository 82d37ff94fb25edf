"""Per-provider facts are read from the provider's row (`ProviderFacts`) and the adapter
registry (`adapters.names()`), never from a second table beside them.

Each test registers or changes a provider the way a new provider would be added (a name in
the registry, a row with its fields) and checks that the shared code follows; on the old
code each of these facts was a table of its own (`catalog.PROVIDERS`, ...) that the new
provider was missing from.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from metis import _genai_prices, adapters, catalog
from metis.adapters._kit import contract
from metis.adapters._kit.facts import ProviderFacts
from metis.catalog import parse_catalog
from metis.usage import TokenCounts

from tests.support.paths import REPO

CATALOG_FILE = REPO / "runtime" / "metis" / "data" / "catalog.json"


def _fresh_catalog() -> catalog.Catalog:
    """A catalog of its own: what it derives for unlisted names stays out of the shipped one's."""
    return parse_catalog(CATALOG_FILE.read_text(encoding="utf-8"))


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A provider registered under a new name ("acme"), served by Anthropic's adapter module."""
    monkeypatch.setitem(adapters._MODULES, "acme", "metis.adapters.anthropic")
    monkeypatch.setattr(adapters, "_cache", dict(adapters._cache))
    yield "acme"
    contract.strict_shape.cache_clear()  # what was derived for "acme" goes with it
    contract.known_fields.cache_clear()


def test_catalog_providers_are_the_registered_adapters() -> None:
    assert tuple(adapters.names()) == catalog.PROVIDERS


def test_a_registered_provider_is_known_to_the_catalog(acme: str, caplog: pytest.LogCaptureFixture) -> None:
    """The catalog's providers were a tuple of its own: a provider registered with an adapter
    was still an "unknown provider" to it."""
    assert acme in catalog.PROVIDERS
    with caplog.at_level(logging.WARNING, logger="metis.catalog"):
        entry = _fresh_catalog().resolve(f"{acme}:model-1")
    assert (entry.provider, entry.wire_model, entry.assumed) == (acme, "model-1", True)


# --- the registry fields of a row ------------------------------------------------------------------

REGISTRY_FIELDS = ("streams_tool_calls", "system_messages_in_list", "genai_prices_id", "contract")
"""Facts shared code reads of every registered provider: fields of its row with no default."""


@pytest.mark.parametrize("name", REGISTRY_FIELDS)
def test_a_row_without_a_registry_field_is_refused(name: str) -> None:
    """A new provider's row that leaves a registry fact out fails when it is made (the module
    declaring it fails to import), instead of the provider silently missing from a table."""
    row = adapters.get("anthropic").facts
    given = {f.name: getattr(row, f.name) for f in dataclasses.fields(row) if f.init}
    ProviderFacts(**given)  # the whole row is a row
    del given[name]
    with pytest.raises(TypeError, match=name):
        ProviderFacts(**given)


@pytest.mark.parametrize("provider", adapters.names())
def test_unlisted_capabilities_follow_the_row(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unlisted model's conservative capabilities take the row's facts of its wire; they
    were provider names listed in `catalog._conservative`."""
    adapter = adapters.get(provider)
    for streams, in_list in ((True, False), (False, True)):
        row = dataclasses.replace(adapter.facts, streams_tool_calls=streams, system_messages_in_list=in_list)
        monkeypatch.setattr(type(adapter), "facts", row)
        caps = _fresh_catalog().unlisted(provider, "zz-unlisted").capabilities
        assert (caps.supports_streaming_tool_calls, caps.supports_system_messages_in_list) == (
            streams,
            in_list,
        )


# --- prices ----------------------------------------------------------------------------------------

COUNTS = TokenCounts(1_000, 100, 0)
AT = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_price_ids_are_the_rows() -> None:
    """A provider is priced exactly when its row names a genai-prices id (Ollama's does not)."""
    ids = {p: adapters.get(p).facts.genai_prices_id for p in adapters.names()}
    for provider, found in ids.items():
        reason = _genai_prices.cost(COUNTS, f"{provider}:some-model", at=AT).reason
        assert (reason == f"genai-prices prices no {provider!r} models") is (found is None), provider
    assert ids["ollama"] is None


def test_a_registered_provider_is_priced_by_its_row(acme: str) -> None:
    """`_genai_prices.PROVIDER_IDS` was a table of its own: a registered provider whose row
    names a genai-prices id was still "priced by nobody"."""
    own = _genai_prices.cost(COUNTS, "anthropic:claude-sonnet-4-5", at=AT)
    assert own.cost is not None, own.reason
    assert _genai_prices.cost(COUNTS, f"{acme}:claude-sonnet-4-5", at=AT) == own


def test_a_row_without_a_price_id_is_unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = adapters.get("openai")
    assert _genai_prices.cost(COUNTS, "openai:gpt-4o", at=AT).cost is not None
    monkeypatch.setattr(type(adapter), "facts", dataclasses.replace(adapter.facts, genai_prices_id=None))
    priced = _genai_prices.cost(COUNTS, "openai:gpt-4o", at=AT)
    assert priced.cost is None and priced.reason == "genai-prices prices no 'openai' models"


# --- request contracts -----------------------------------------------------------------------------


def test_contracts_are_the_rows() -> None:
    assert dict(contract.CONTRACTS) == {p: adapters.get(p).facts.contract for p in adapters.names()}
    for provider in adapters.names():
        assert contract.contract(provider).provider == adapters.get(provider).facts.provider


def test_a_registered_provider_has_its_rows_contract(acme: str) -> None:
    """`contract.CONTRACTS` was a table of its own: a registered provider had no contract
    (`metis validate --provider` refused it)."""
    body = {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}
    assert [p.path for p in contract.check_request(acme, body)] == ["max_tokens"]
    assert contract.check_request(acme, {**body, "max_tokens": 10}) == []
