"""Provider adapters: `metis.adapters.get(name)` -> the adapter for that provider."""

from __future__ import annotations

from importlib import import_module

from ..errors import UnknownAdapterError
from ._kit.base import Adapter, AdapterOptions, OutputSchema, StreamDecoder, WireBody, WireImport

_MODULES: dict[str, str] = {
    "anthropic": "metis.adapters.anthropic",
    "openai": "metis.adapters.chat.openai",
    "openrouter": "metis.adapters.chat.openrouter",
    "gemini": "metis.adapters.gemini",
    "ollama": "metis.adapters.ollama",
    "mistral": "metis.adapters.chat.mistral",
    "responses": "metis.adapters.responses",
}
_cache: dict[str, Adapter] = {}


def names() -> list[str]:
    """Provider names with an adapter."""
    return list(_MODULES)


def get(name: str) -> Adapter:
    """The adapter for `name` (one of `names()`)."""
    adapter = _cache.get(name)
    if adapter is not None:
        return adapter
    module_name = _MODULES.get(name)
    if module_name is None:
        raise UnknownAdapterError(f"no adapter named {name!r}", hint=f"one of: {', '.join(_MODULES)}")
    module = import_module(module_name)
    adapter = module.ADAPTER
    if not isinstance(adapter, Adapter):
        raise UnknownAdapterError(f"{module_name}.ADAPTER is not an Adapter")
    _cache[name] = adapter
    return adapter


__all__ = [
    "Adapter",
    "AdapterOptions",
    "OutputSchema",
    "StreamDecoder",
    "WireBody",
    "WireImport",
    "get",
    "names",
]
