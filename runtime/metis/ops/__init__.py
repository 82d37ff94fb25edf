"""Operations on stored conversations: repair, fork, export (issue 19).

Each works through the store's public API only, so it runs on every store backend:
`repair` answers tool calls a crash left open, `fork` branches a session at a message,
`export_otel` writes OpenTelemetry GenAI records and `export_jsonl` chat-message
datasets, both over `genai`/one mapping each; `links` names a read session's broken tool
links. `otel` (the `metis[otel]` extra) traces live
client exchanges; it is imported on its own, so this package never needs opentelemetry.
"""

from __future__ import annotations

from .export_jsonl import ExportError, chat_messages, dataset_line, dataset_line_text
from .export_otel import chat_records, expand
from .fork import ForkOrigin, fork_origin, fork_session
from .links import audited
from .repair import DEFAULT_REASON, open_calls, repair_session

__all__ = [
    "DEFAULT_REASON",
    "ExportError",
    "ForkOrigin",
    "audited",
    "chat_messages",
    "chat_records",
    "dataset_line",
    "dataset_line_text",
    "expand",
    "fork_origin",
    "fork_session",
    "open_calls",
    "repair_session",
]
