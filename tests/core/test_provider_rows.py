"""Per-provider facts are read from the provider's row (`ProviderFacts`) and the adapter
registry (`adapters.names()`), never from a second table beside them.

Each test registers or changes a provider the way a new provider would be added (a name in
the registry, a row with its fields) and checks that the shared code follows; on the old
code each of these facts was a table of its own (`catalog.PROVIDERS`, ...) that the new
provider was missing from.
"""

from __future__ import annotations

import logging

import pytest
from metis import adapters, catalog
from metis.catalog import parse_catalog

from tests.support.paths import REPO

CATALOG_FILE = REPO / "runtime" / "metis" / "data" / "catalog.json"


def _fresh_catalog() -> catalog.Catalog:
    """A catalog of its own: what it derives for unlisted names stays out of the shipped one's."""
    return parse_catalog(CATALOG_FILE.read_text(encoding="utf-8"))


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> str:
    """A provider registered under a new name ("acme"), served by Anthropic's adapter module."""
    monkeypatch.setitem(adapters._MODULES, "acme", "metis.adapters.anthropic")
    monkeypatch.setattr(adapters, "_cache", dict(adapters._cache))
    return "acme"


def test_catalog_providers_are_the_registered_adapters() -> None:
    assert tuple(adapters.names()) == catalog.PROVIDERS


def test_a_registered_provider_is_known_to_the_catalog(acme: str, caplog: pytest.LogCaptureFixture) -> None:
    """The catalog's providers were a tuple of its own: a provider registered with an adapter
    was still an "unknown provider" to it."""
    assert acme in catalog.PROVIDERS
    with caplog.at_level(logging.WARNING, logger="metis.catalog"):
        entry = _fresh_catalog().resolve(f"{acme}:model-1")
    assert (entry.provider, entry.wire_model, entry.assumed) == (acme, "model-1", True)
