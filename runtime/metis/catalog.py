"""The model catalog: canonical ids, aliases, capabilities and pricing keys (spec §6.3, §7.2).

A data file (`metis/data/catalog.json`) validated against the schema's ModelCatalog, so
"can model X carry this history?" is answered from declared data, not code. Names resolve
as a canonical id (`anthropic:claude-sonnet-4-6`), an alias (`sonnet`), a listed model's wire
name (`gpt-4o`), or `<provider>:<wire name>`. Beyond the listed models:

- a dated or versioned name (`claude-haiku-4-5-20251001`, `gpt-4o-2024-08-06`,
  `gemini-2.5-flash-preview-05-20`: the catalog's `version_suffixes`) is its listed entry's
  model: that entry's capabilities and price, its own name on the wire (a replay to the
  recorded model sends the recorded name), `resolved_from` naming the entry;
- any other name of a known provider is unlisted: its capabilities are assumed, from the
  catalog's `families` (the longest matching wire-name prefix: an unlisted `claude-*` is
  assumed to carry what a listed Claude carries), else, for a provider serving another's
  models (`SERVES_MODELS_OF`: OpenAI's Responses API serves the models of its Chat
  Completions, OpenRouter's `openai/`, `anthropic/`, `google/` and `mistralai/` models are
  those vendors'), that provider's entry for the same name (listed, versioned, or its
  family), else the provider's conservative defaults (text and tools only); it has no price
  (`pricing_key` "unpriced") but, on another wire of the same vendor, the same model's own.
  The entry says so (`assumed`, `resolved_from`) and one WARN per name says what was
  assumed, so a replay never strips
  thinking or images silently because a snapshot name was unknown. (What a conversation
  shows a model took widens these further per request: `adapters._kit.media_admission.request_capabilities`.)
"""

from __future__ import annotations

import logging
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from metis_schema.v3 import AdapterCapabilities, CatalogEntry, ModelCatalog
from pydantic import ValidationError

from .errors import UnknownModelError
from .ids import provider_of
from .pricing import UNPRICED
from .validation import parse_document

SERVES_MODELS_OF: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "responses": (("", "openai", True),),
    "openrouter": (
        ("openai/", "openai", False),
        ("anthropic/", "anthropic", False),
        ("google/", "gemini", False),
        ("mistralai/", "mistral", False),
    ),
}
"""Provider -> (wire-name prefix, the provider whose model the rest of the name is, whether
the price is that entry's too): an unlisted `responses:gpt-4.1-nano` is
`openai:gpt-4.1-nano` (same model, same price: OpenAI's two wires); an unlisted
`openrouter:openai/gpt-4.1-nano` takes `openai:gpt-4.1-nano`'s capabilities, not its price
(OpenRouter bills its own)."""
_UNLISTED_MAX = 256
_MAX_VERSION_STRIPS = 3
"""Version endings taken off one name at most (`-exp-001` is two)."""

log = logging.getLogger(__name__)


class Catalog:
    """Lookup over one ModelCatalog: by id, by alias, by provider."""

    def __init__(self, catalog: ModelCatalog) -> None:
        self.catalog = catalog
        self._by_id: dict[str, CatalogEntry] = {}
        self._by_alias: dict[str, CatalogEntry] = {}
        self._by_wire: dict[tuple[str, str], CatalogEntry] = {}
        """(provider, wire name) -> the first entry listing it."""
        self._by_bare: dict[str, CatalogEntry] = {}
        """Wire name alone (`gpt-4o`) -> the first entry listing it: what users type first."""
        self._unlisted: dict[str, CatalogEntry] = {}
        """Canonical id -> the entry `resolve` derived for a versioned or unlisted name."""
        for entry in catalog.models:
            if entry.id in self._by_id:
                raise UnknownModelError(f"catalog lists {entry.id} twice")
            if provider_of(entry.id) != entry.provider:
                raise UnknownModelError(f"catalog entry {entry.id} names provider {entry.provider}")
            self._by_id[entry.id] = entry
            self._by_wire.setdefault((entry.provider, entry.wire_model), entry)
            self._by_bare.setdefault(entry.wire_model, entry)
            for alias in entry.aliases:
                if alias in self._by_alias:
                    raise UnknownModelError(
                        f"alias {alias!r} is used by {self._by_alias[alias].id} and {entry.id}"
                    )
                self._by_alias[alias] = entry
        self._version = _version_pattern(catalog.version_suffixes)
        self._families = self._family_rows()

    def _family_rows(self) -> dict[str, list[tuple[str, CatalogEntry]]]:
        """provider -> (prefix, the listed entry it is like), longest prefix first."""
        rows: dict[str, list[tuple[str, CatalogEntry]]] = {}
        for i, family in enumerate(self.catalog.families):
            like = self._by_id.get(family.like)
            if like is None or like.provider != family.provider:
                raise UnknownModelError(
                    f"catalog family {family.provider}:{family.prefix}* is like {family.like!r}, "
                    f"which is not a listed {family.provider} model",
                    path=f"families[{i}].like",
                )
            rows.setdefault(family.provider, []).append((family.prefix, like))
        for prefixes in rows.values():
            prefixes.sort(key=lambda row: len(row[0]), reverse=True)
        return rows

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.catalog.models)

    def get(self, model_id: str) -> CatalogEntry | None:
        """The entry of a canonical id, or None."""
        return self._by_id.get(model_id)

    def resolve(self, name: str, *, allow_unlisted: bool = True) -> CatalogEntry:
        """Canonical id, alias, a listed model's wire name (either maybe dated or versioned), or
        `<provider>:<wire name>` -> entry; `allow_unlisted=False` refuses assumed capabilities.

        Every response resolves its model, so each kind of name is one dict lookup (a derived
        entry is made once per name).
        """
        entry = self._by_id.get(name) or self._by_alias.get(name) or self._by_bare.get(name)
        if entry is not None:
            return entry
        derived = self._unlisted.get(name)
        if derived is not None and (allow_unlisted or not derived.assumed):
            return derived
        entry = None
        provider, sep, wire = name.partition(":")
        if sep and wire and provider in _providers():
            entry = self._by_wire.get((provider, wire))
            if entry is not None:
                return entry
            entry = self._versioned(provider, wire)
            if entry is None and allow_unlisted:
                entry = self.unlisted(provider, wire)
        elif not sep:
            entry = self._versioned(None, name)
        if entry is not None:
            if len(self._unlisted) < _UNLISTED_MAX:  # bounded: names come from callers
                self._unlisted[entry.id] = entry
                self._unlisted[name] = entry
            return entry
        known = ", ".join(sorted(self._by_alias))
        raise UnknownModelError(
            f"unknown model {name!r}",
            hint="use a canonical id like 'anthropic:claude-sonnet-4-6', '<provider>:<model>', "
            f"or an alias ({known})",
        )

    def _versioned(self, provider: str | None, wire: str) -> CatalogEntry | None:
        """The entry of a dated or versioned wire name whose base a listed model has: the
        listed entry under the name asked for (None: no version ending, or no listed base)."""
        if self._version is None:
            return None
        base = wire
        for _ in range(_MAX_VERSION_STRIPS):
            match = self._version.search(base)
            if match is None or match.start() == 0:
                return None
            base = base[: match.start()]
            listed = self._by_wire.get((provider, base)) if provider else self._by_bare.get(base)
            if listed is not None:
                return listed.model_copy(
                    update={
                        "id": f"{listed.provider}:{wire}",
                        "wire_model": wire,
                        "aliases": [],
                        "resolved_from": listed.id,
                    }
                )
        return None

    def unlisted(self, provider: str, wire_model: str) -> CatalogEntry:
        """An entry for a model the catalog does not list: its family's capabilities (the
        longest `families` prefix of its provider), else conservative ones; no price. Says
        what it assumed: `assumed`, `resolved_from`, and a WARN."""
        known = _providers()
        if provider not in known:
            raise UnknownModelError(f"unknown provider {provider!r}", hint=f"one of {', '.join(known)}")
        model_id = f"{provider}:{wire_model}"
        family = next(
            (
                (prefix, like)
                for prefix, like in self._families.get(provider, ())
                if wire_model.startswith(prefix)
            ),
            None,
        )
        served = self._served(provider, wire_model) if family is None else None
        shared = served[0] if served is not None else None
        pricing_key = UNPRICED
        if family is not None:
            prefix, like = family
            caps, source = like.capabilities, f"{provider}:{prefix}*"
            what = f"the {source} family's capabilities (those of {like.id})"
        elif shared is not None:
            caps, source = shared.capabilities, shared.resolved_from or shared.id
            pricing_key = shared.pricing_key if served is not None and served[1] else UNPRICED
            what = f"the capabilities of {shared.id}, the same model on {shared.provider}" + (
                f" (assumed from {source})" if shared.assumed else ""
            )
        else:
            caps, source = _conservative(provider), None
            what = f"{provider}'s conservative defaults (text and tools only)"
        log.warning(
            "model %s is not in the catalog: assuming %s",
            model_id,
            what,
            extra={"model": model_id, "assumed_from": source or f"{provider} defaults"},
        )
        try:
            return CatalogEntry(
                id=model_id,
                provider=provider,
                wire_model=wire_model,
                display_name=None,
                aliases=[],
                capabilities=caps,
                pricing_key=pricing_key,
                resolved_from=source,
                assumed=True,
            )
        except ValidationError as exc:  # e.g. a name with a line break, from an imported body
            raise UnknownModelError(
                f"not a model name: {wire_model!r:.80} ({exc.errors()[0]['msg']})", provider=provider
            ) from None

    def _served(self, provider: str, wire_model: str) -> tuple[CatalogEntry, bool] | None:
        """The entry of the model `provider` serves under `wire_model` at its vendor (listed,
        versioned, or from that vendor's family; never its conservative defaults), and
        whether its price is the same (`SERVES_MODELS_OF`)."""
        for prefix, other, same_price in SERVES_MODELS_OF.get(provider, ()):
            if not wire_model.startswith(prefix) or len(wire_model) == len(prefix):
                continue
            name = wire_model[len(prefix) :]
            entry = self._by_wire.get((other, name)) or self._versioned(other, name)
            if entry is None and any(name.startswith(p) for p, _ in self._families.get(other, ())):
                entry = self.resolve(f"{other}:{name}")
            return (entry, same_price) if entry is not None else None
        return None

    def for_provider(self, provider: str) -> list[CatalogEntry]:
        """Entries of one provider, in catalog order."""
        return [e for e in self.catalog.models if e.provider == provider]


def _providers() -> list[str]:
    """The providers the catalog knows: those with a registered adapter (`adapters.names()`,
    the one registry). Read when a name needs it, not at import: the adapters import this
    module (`adapters._kit.base`), so it cannot import them first."""
    from .adapters import names

    return names()


if TYPE_CHECKING:
    PROVIDERS: tuple[str, ...]
    """The providers with an adapter, in registry order (`adapters.names()`)."""
else:

    def __getattr__(name: str) -> tuple[str, ...]:
        """`PROVIDERS`, read from the adapter registry when asked for (`_providers`)."""
        if name == "PROVIDERS":
            return tuple(_providers())
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _conservative(provider: str) -> AdapterCapabilities:
    """What any model of `provider` can be trusted to carry: text and tools (no media), and
    what its facts row says of every model of its wire (`ProviderFacts.streams_tool_calls`,
    `.system_messages_in_list`)."""
    from .adapters import get

    facts = get(provider).facts
    return AdapterCapabilities(
        supports_thinking=False,
        supports_images=False,
        supports_tools=True,
        supports_system_prompt=True,
        supports_structured_output=False,
        supports_streaming=True,
        supports_streaming_tool_calls=facts.streams_tool_calls,
        supports_parallel_tool_calls=True,
        supports_prompt_caching=False,
        supports_system_messages_in_list=facts.system_messages_in_list,
        max_context_tokens=8192,
        max_output_tokens=4096,
        accepted_image_media_types=[],
        supports_documents=False,
        supports_audio=False,
        supports_video=False,
    )


def _version_pattern(suffixes: list[str]) -> re.Pattern[str] | None:
    """One pattern matching any of the catalog's version endings at the end of a name."""
    if not suffixes:
        return None
    for i, suffix in enumerate(suffixes):
        try:
            re.compile(suffix)
        except re.error as exc:
            raise UnknownModelError(
                f"catalog version suffix {suffix!r} is not a regular expression: {exc}",
                path=f"version_suffixes[{i}]",
            ) from None
    return re.compile("(?:" + "|".join(f"(?:{suffix})" for suffix in suffixes) + ")$")


def parse_catalog(text: str, *, source: str = "catalog") -> Catalog:
    """Validate a catalog document (JSON text) against the schema and index it."""
    return Catalog(parse_document(ModelCatalog, text, source=source, error=UnknownModelError))


@cache
def load_catalog() -> Catalog:
    """The catalog shipped with metis."""
    path = Path(__file__).resolve().parent / "data" / "catalog.json"
    return parse_catalog(path.read_text(encoding="utf-8"), source=path.name)


def resolve_model(name: str) -> CatalogEntry:
    """Resolve a model id or alias through the shipped catalog."""
    return load_catalog().resolve(name)


__all__ = [
    "PROVIDERS",
    "SERVES_MODELS_OF",
    "UNPRICED",
    "Catalog",
    "load_catalog",
    "parse_catalog",
    "resolve_model",
]
