"""The gateway app as a process builds it from its environment (`metis serve` workers).

Each uvicorn worker imports `app_from_env` and calls it: one AsyncClient per process on
the store `METIS_DB` names (the default store when unset), upstream keys from the
providers' environment variables, base URLs from `METIS_<PROVIDER>_BASE_URL`.

A SQLite store is opened with `synchronous=NORMAL` (WAL): a committed exchange survives
the process crashing, and only an OS crash or power loss can take the last commits.
With FULL every commit waits for an fsync (a gateway exchange commits once, in a worker
thread; when it committed several times on the event loop, that held each request for
tens of milliseconds on a shared disk: bench/README.md, gateway section).
PostgreSQL keeps its own durability settings.
"""

from __future__ import annotations

import os

from fastapi import FastAPI

from ..adapters import names
from ..client import AsyncClient
from ..store import Store, open_store
from ..store._urls import is_postgres_url
from .app import DEFAULT_MAX_BODY_BYTES, create_app


def base_urls_from_env() -> dict[str, str]:
    """`METIS_ANTHROPIC_BASE_URL`, `METIS_OPENAI_BASE_URL`, ... where set."""
    found = {}
    for provider in names():
        value = os.environ.get(f"METIS_{provider.upper()}_BASE_URL")
        if value:
            found[provider] = value
    return found


def store_from_env() -> Store:
    """The store `METIS_DB` names (the default store when unset); SQLite with
    `synchronous=NORMAL` (see module docstring)."""
    target = os.environ.get("METIS_DB") or None
    if is_postgres_url(target):
        return open_store(target)
    return open_store(target, synchronous="NORMAL")


def app_from_env() -> FastAPI:
    """The app over a client configured from the environment (see module docstring)."""
    client = AsyncClient(store_from_env(), base_urls=base_urls_from_env())
    limit = int(os.environ.get("METIS_GATEWAY_MAX_BODY_BYTES") or DEFAULT_MAX_BODY_BYTES)
    return create_app(client, max_body_bytes=limit)


__all__ = ["app_from_env", "base_urls_from_env", "store_from_env"]
