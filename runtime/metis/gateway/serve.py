"""The gateway app as a process builds it from its environment (`metis serve` workers).

Each uvicorn worker imports `app_from_env` and calls it: one AsyncClient per process on
the store `METIS_DB` names (the default store when unset), upstream keys from the
providers' environment variables, base URLs from `METIS_<PROVIDER>_BASE_URL`.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from ..adapters import names
from ..client import AsyncClient
from .app import DEFAULT_MAX_BODY_BYTES, create_app


def base_urls_from_env() -> dict[str, str]:
    """`METIS_ANTHROPIC_BASE_URL`, `METIS_OPENAI_BASE_URL`, ... where set."""
    found = {}
    for provider in names():
        value = os.environ.get(f"METIS_{provider.upper()}_BASE_URL")
        if value:
            found[provider] = value
    return found


def app_from_env() -> FastAPI:
    """The app over a client configured from the environment (see module docstring)."""
    client = AsyncClient(os.environ.get("METIS_DB") or None, base_urls=base_urls_from_env())
    limit = int(os.environ.get("METIS_GATEWAY_MAX_BODY_BYTES") or DEFAULT_MAX_BODY_BYTES)
    return create_app(client, max_body_bytes=limit)


__all__ = ["app_from_env", "base_urls_from_env"]
