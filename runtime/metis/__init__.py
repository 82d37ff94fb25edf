"""metis: one canonical, versioned, hashable representation of LLM conversations.

`import metis` gives what users reach for first: the canonical models of the current
schema version (`metis.Message`, `metis.TextBlock`, ...), builders for messages
(`metis.user("hi")`, `metis.system(...)`, `metis.tool_result(call_id, ...)`), the client
(`metis.Client`, `metis.AsyncClient`), the store (`metis.Store`), the tool registry
(`metis.ToolRegistry`), hashing (`metis.message_hash`), the adapters
(`metis.adapters.get("anthropic")`) and every error class.

Names are imported on first use (PEP 562 `__getattr__`), not at `import metis`: the
`metis` command imports this package for every run, and most runs (`metis --help`,
`metis sessions`) never need the HTTP client or the adapters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import *  # noqa: F403  (small and dependency-free: imported eagerly)
from .errors import __all__ as _error_names

__version__ = "0.1.0"

_FROM: dict[str, str] = {
    # builders
    "user": ".builders",
    "system": ".builders",
    "tool_result": ".builders",
    # the client and the store
    "Client": ".client",
    "AsyncClient": ".client",
    "Session": ".client",
    "AsyncSession": ".client",
    "ReplayTransport": ".client",
    "Store": ".store",
    "AsyncStore": ".store",
    # tools, hashing, ids, streaming
    "ToolRegistry": ".tools",
    "message_hash": ".canonical",
    "conversation_hash": ".canonical",
    "messages_equal": ".canonical",
    "read_message": ".canonical",
    "ToolIdMap": ".ids",
    "new_message_id": ".ids",
    "new_session_id": ".ids",
    "new_tool_id": ".ids",
    "RequestContext": ".assembly",
    "StreamAssembler": ".assembly",
    "TokenCounts": ".usage",
    "resolve_model": ".catalog",
}
_MODULES = frozenset({"adapters", "builders", "catalog", "client", "pricing", "store", "tools"})
_MODELS = "metis_schema.v3"
"""Every other public name is a canonical model of the current schema version."""


def __getattr__(name: str) -> Any:
    if name == "__all__":  # `from metis import *`: the whole surface, models included
        return ["__version__", *_error_names, *_FROM, *sorted(_MODULES), *_models().__all__]
    if name in _MODULES:
        return importlib.import_module(f".{name}", __name__)
    where = _FROM.get(name)
    module = importlib.import_module(where, __name__) if where else _models()
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'metis' has no attribute {name!r}") from None
    globals()[name] = value  # looked up once; later reads are plain attribute reads
    return value


def _models() -> Any:
    return importlib.import_module(_MODELS)


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM, *_MODULES, *_models().__all__})


if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from metis_schema.v3 import *  # noqa: F403

    from . import adapters, builders, catalog, client, pricing, store, tools  # noqa: F401
    from .assembly import RequestContext, StreamAssembler  # noqa: F401
    from .builders import system, tool_result, user  # noqa: F401
    from .canonical import conversation_hash, message_hash, messages_equal, read_message  # noqa: F401
    from .catalog import resolve_model  # noqa: F401
    from .client import AsyncClient, AsyncSession, Client, ReplayTransport, Session  # noqa: F401
    from .ids import ToolIdMap, new_message_id, new_session_id, new_tool_id  # noqa: F401
    from .store import AsyncStore, Store  # noqa: F401
    from .tools import ToolRegistry  # noqa: F401
    from .usage import TokenCounts  # noqa: F401
