"""The model catalog: canonical ids, aliases, capabilities and pricing keys (spec §6.3, §7.2).

A data file (`metis/data/catalog.json`) validated against the schema's ModelCatalog, so
"can model X carry this history?" is answered from declared data, not code. Names resolve
as a canonical id (`anthropic:claude-sonnet-4-6`), an alias (`sonnet`), a listed model's wire
name (`gpt-4o`), or `<provider>:<wire name>` for a model the catalog does not list: those get the provider's
conservative defaults (text and tools only) and no price (`pricing_key` "unpriced").
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from metis_schema.v2 import AdapterCapabilities, CatalogEntry, ModelCatalog
from pydantic import ValidationError

from .errors import UnknownModelError
from .ids import provider_of
from .pricing import UNPRICED
from .validation import explain

PROVIDERS: tuple[str, ...] = ("anthropic", "openai", "gemini", "ollama", "openrouter", "responses", "mistral")
_UNLISTED_MAX = 256


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
        """`<provider>:<wire name>` -> the entry `unlisted` made for it (see `resolve`)."""
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

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.catalog.models)

    def get(self, model_id: str) -> CatalogEntry | None:
        """The entry of a canonical id, or None."""
        return self._by_id.get(model_id)

    def resolve(self, name: str, *, allow_unlisted: bool = True) -> CatalogEntry:
        """Canonical id, alias, a listed model's wire name, or `<provider>:<wire name>` -> entry.

        Every response resolves its model, so each kind of name is one dict lookup.
        """
        entry = self._by_id.get(name) or self._by_alias.get(name) or self._by_bare.get(name)
        if entry is not None:
            return entry
        provider, sep, wire = name.partition(":")
        if sep and wire and provider in PROVIDERS:
            entry = self._by_wire.get((provider, wire))
            if entry is not None:
                return entry
            if allow_unlisted:
                # Made once per name, like the listed entries (building and validating
                # one costs more than the request it serves, and local models are
                # usually unlisted); bounded, since names come from callers.
                entry = self._unlisted.get(name)
                if entry is None:
                    entry = self.unlisted(provider, wire)
                    if len(self._unlisted) < _UNLISTED_MAX:
                        self._unlisted[name] = entry
                return entry
        known = ", ".join(sorted(self._by_alias))
        raise UnknownModelError(
            f"unknown model {name!r}",
            hint="use a canonical id like 'anthropic:claude-sonnet-4-6', '<provider>:<model>', "
            f"or an alias ({known})",
        )

    def unlisted(self, provider: str, wire_model: str) -> CatalogEntry:
        """An entry for a model the catalog does not list: conservative capabilities, no price."""
        if provider not in PROVIDERS:
            raise UnknownModelError(f"unknown provider {provider!r}", hint=f"one of {', '.join(PROVIDERS)}")
        caps = AdapterCapabilities(
            supports_thinking=False,
            supports_images=False,
            supports_tools=True,
            supports_system_prompt=True,
            supports_structured_output=False,
            supports_streaming=True,
            supports_streaming_tool_calls=provider in ("anthropic", "openai", "openrouter", "responses"),
            supports_parallel_tool_calls=True,
            supports_prompt_caching=False,
            supports_system_messages_in_list=provider not in ("anthropic", "gemini"),
            max_context_tokens=8192,
            max_output_tokens=4096,
            accepted_image_media_types=[],
        )
        try:
            return CatalogEntry(
                id=f"{provider}:{wire_model}",
                provider=provider,
                wire_model=wire_model,
                display_name=None,
                aliases=[],
                capabilities=caps,
                pricing_key=UNPRICED,
            )
        except ValidationError as exc:  # e.g. a name with a line break, from an imported body
            raise UnknownModelError(
                f"not a model name: {wire_model!r:.80} ({exc.errors()[0]['msg']})", provider=provider
            ) from None

    def for_provider(self, provider: str) -> list[CatalogEntry]:
        """Entries of one provider, in catalog order."""
        return [e for e in self.catalog.models if e.provider == provider]


def parse_catalog(text: str, *, source: str = "catalog") -> Catalog:
    """Validate a catalog document (JSON text) against the schema and index it."""
    try:
        return Catalog(ModelCatalog.model_validate_json(text))
    except ValidationError as exc:
        problems = explain(text, "ModelCatalog", exc)
        listing = "; ".join(str(p) for p in problems)
        raise UnknownModelError(f"{source} is invalid: {listing}", path=problems[0].path) from exc


@cache
def load_catalog() -> Catalog:
    """The catalog shipped with metis."""
    path = Path(__file__).resolve().parent / "data" / "catalog.json"
    return parse_catalog(path.read_text(encoding="utf-8"), source=path.name)


def resolve_model(name: str) -> CatalogEntry:
    """Resolve a model id or alias through the shipped catalog."""
    return load_catalog().resolve(name)


__all__ = ["PROVIDERS", "UNPRICED", "Catalog", "load_catalog", "parse_catalog", "resolve_model"]
