"""Where each provider lives and which key it wants.

Keys come from the provider's usual environment variable (the one its own SDK reads),
so metis works wherever the official SDKs already do; they are never stored. Base URLs
are overridable per provider (constructor, then `METIS_<PROVIDER>_BASE_URL`) because
OpenAI-compatible and Ollama servers run on any host. A provider that needs a key and
is addressed at its public URL without one fails before any request, with the variable
to set; a custom base URL (a local llama.cpp or vLLM server) may go keyless.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..adapters import Adapter
from ..errors import ClientError


def base_url_env(provider: str) -> str:
    """`METIS_<PROVIDER>_BASE_URL`."""
    return f"METIS_{provider.upper()}_BASE_URL"


@dataclass(frozen=True)
class Endpoint:
    """Resolved connection settings of one provider."""

    base_url: str
    api_key: str | None
    custom_base_url: bool


def key_envs(adapter: Adapter) -> tuple[str, ...]:
    """Environment variables that hold `adapter`'s required key, first match wins."""
    if adapter.api_key_env is None:
        return ()
    return (adapter.api_key_env, *adapter.fallback_api_key_envs)


def resolve_endpoint(
    adapter: Adapter,
    *,
    api_keys: Mapping[str, str | None],
    base_urls: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Base URL and key for `adapter` from explicit settings, then the environment."""
    env = os.environ if environ is None else environ
    base = base_urls.get(adapter.name) or env.get(base_url_env(adapter.name))
    custom = bool(base) and base != adapter.default_base_url
    names = key_envs(adapter)
    if adapter.name in api_keys:
        key = api_keys[adapter.name]
    else:
        optional = adapter.optional_api_key_env  # e.g. OLLAMA_API_KEY for ollama.com
        candidates = (*names, optional) if optional else names
        key = next((env[name] for name in candidates if env.get(name)), None)
    if key is None and names and not custom:
        raise ClientError(
            f"no API key for {adapter.name}",
            provider=adapter.name,
            hint=f"set {' or '.join(names)}, or point {base_url_env(adapter.name)} at a keyless server",
        )
    return Endpoint(
        base_url=(base or adapter.default_base_url).rstrip("/"), api_key=key, custom_base_url=custom
    )


__all__ = ["Endpoint", "base_url_env", "key_envs", "resolve_endpoint"]
