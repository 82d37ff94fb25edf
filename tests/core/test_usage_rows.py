"""Usage rules as rows: each provider's `CounterRule` is a field of its facts row
(`ProviderFacts.usage`), read by the shared code of `metis.usage` through the declared
usage shape the rule names. A new provider or Chat dialect brings its rule on its row;
`metis.usage` holds no table of providers to edit.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from metis import adapters
from metis.adapters._kit.facts import ProviderFacts
from metis.adapters.chat import ChatCompletionsAdapter
from metis.adapters.chat.openai import FACTS
from metis.adapters.chat.wire import Usage
from metis.errors import WireFormatError
from metis.usage import Counter, CounterRule, TokenCounts, normalize_usage

ACME_RULE = CounterRule(
    source="a made-up dialect whose prompt count excludes its cache reads",
    shape=Usage,
    prompt=Counter("prompt_tokens"),
    output=Counter("completion_tokens"),
    cached=Counter("prompt_tokens_details.cached_tokens"),
    prompt_includes_cache=False,
)


class AcmeAdapter(ChatCompletionsAdapter):
    """A new Chat Completions dialect: a row, no code."""

    name: ClassVar[str] = "acme"
    facts: ClassVar[ProviderFacts] = dataclasses.replace(FACTS, provider="acme", usage=ACME_RULE)
    default_base_url: ClassVar[str] = "https://acme.test/v1"
    api_key_env: ClassVar[str | None] = None


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(adapters._MODULES, "acme", "tests.acme")  # the registry knows its name
    monkeypatch.setitem(adapters._cache, "acme", AcmeAdapter())
    yield


def test_a_new_dialect_counts_by_its_own_row(acme: None) -> None:
    wire = {"prompt_tokens": 1000, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 300}}
    assert normalize_usage("acme", wire)[:4] == (1000, 20, 300, 0)  # its row: cache apart from the prompt
    assert normalize_usage("openai", wire)[:4] == (700, 20, 300, 0)  # OpenAI's: cache within it
    reply = adapters.get("acme").facts.reported_prompt(normalize_usage("acme", wire))
    assert reply == 1000  # a reply in its format states the prompt as its rule reads it


def test_a_usage_object_is_read_through_the_rules_shape(acme: None) -> None:
    with pytest.raises(WireFormatError) as caught:
        normalize_usage("acme", {"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": -1}})
    assert (
        caught.value.provider == "acme" and caught.value.path == "usage.prompt_tokens_details.cached_tokens"
    )
    assert normalize_usage("nobody", None) == TokenCounts()
    with pytest.raises(WireFormatError, match="no usage normalization rule"):
        normalize_usage("nobody", {"prompt_tokens": 1})


def _keys(shape: Any) -> dict[str, Any]:
    """The declared keys of a TypedDict shape -> their types, Annotated / None / lists unwrapped."""
    return {key: _inner(kind) for key, kind in typing.get_type_hints(shape, include_extras=True).items()}


def _inner(kind: Any) -> Any:
    while True:
        origin = typing.get_origin(kind)
        if origin is typing.Annotated or origin is typing.NotRequired:
            kind = typing.get_args(kind)[0]
        elif origin in (typing.Union, types.UnionType):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        elif origin is list:
            kind = typing.get_args(kind)[0]
        else:
            return kind


@pytest.mark.parametrize("provider", adapters.names())
def test_every_path_a_rule_reads_is_declared_in_its_shape(provider: str) -> None:
    """Reading through the shape keeps only what it declares: a rule's path that the shape
    does not declare would read nothing, silently."""
    rule = adapters.get(provider).facts.usage
    assert rule is not None
    counters = [*rule.counters(), *([Counter(".".join(rule.billed_cost))] if rule.billed_cost else [])]
    for counter in counters:
        for paths in counter.terms:
            for path in paths:
                shape = rule.shape
                for key, _, _ in path:
                    declared = _keys(shape)
                    assert key in declared, (provider, counter.spec, key)
                    shape = declared[key]
