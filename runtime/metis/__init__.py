"""metis: one canonical, versioned, hashable representation of LLM conversations.

`import metis` gives the canonical models of the current schema version (`metis.Message`,
`metis.TextBlock`, ...), the adapters (`metis.adapters.get("anthropic")`) and the
runtime core. The models are generated from the JSON Schema in `metis_schema`.
"""

from __future__ import annotations

from metis_schema.v1 import *  # noqa: F403  (the curated surface is metis_schema.v1.__all__)
from metis_schema.v1 import __all__ as _model_names

from . import adapters
from .assembly import RequestContext, StreamAssembler
from .errors import *  # noqa: F403
from .errors import __all__ as _error_names
from .ids import ToolIdMap, new_message_id, new_session_id, new_tool_id
from .usage import TokenCounts

__version__ = "0.1.0"

__all__ = [  # noqa: PLE0604
    *_model_names,
    *_error_names,
    "RequestContext",
    "StreamAssembler",
    "TokenCounts",
    "ToolIdMap",
    "__version__",
    "adapters",
    "new_message_id",
    "new_session_id",
    "new_tool_id",
]
