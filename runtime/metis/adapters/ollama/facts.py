"""Ollama's facts row: what differs from other providers but is not logic.

Ollama's errors carry no type, only text (`{"error": "<string>"}`, or a plain-text body
from a proxy in front of it), so the type comes from the `kinds` table: a model that does
not support tools or thinking, or that is not pulled, is never worth a retry whatever the
status; a busy server always is. Anything else is `http_<status>` (or `unknown_error`
without one) and retried by the HTTP status rule every provider shares.

There is no tool-choice field on the wire, so the table is empty: only "auto" (the
default) and "none" (the writer leaves the tools out) can be honoured. Sampling options
nest under `options`.
"""

from __future__ import annotations

from metis_schema.v3 import StopReason

from .._kit.facts import SCHEMA, ErrorEnvelope, ErrorFields, ProviderFacts
from .wire import ErrorBody

NAME = "ollama"


def _error_fields(body: ErrorBody) -> ErrorFields:
    """`{"error": "<text>"}` (a proxy's `{"error": {"message"}}` too): a message, no type."""
    error = body["error"]
    return ErrorFields(message=error if isinstance(error, str) else error.get("message"))


FACTS = ProviderFacts(
    provider=NAME,
    stop_reasons={
        "stop": StopReason.end_turn,  # end of turn or a stop sequence: Ollama does not tell them apart
        "length": StopReason.max_tokens,
        "load": StopReason.other,  # empty `messages`: the model was only loaded
        "unload": StopReason.other,  # `keep_alive: 0` with empty `messages`
    },
    error=ErrorEnvelope(
        shape=ErrorBody,
        fields=_error_fields,
        kinds=(
            (r"does not support tools", "tools_not_supported", False),
            (r"does not support thinking", "thinking_not_supported", False),
            (r"try pulling it first", "model_not_found", False),
            (r"server busy|maximum pending requests", "overloaded", True),
        ),
    ),
    retryable_types=frozenset({"overloaded"}),
    never_retry_types=frozenset({"tools_not_supported", "thinking_not_supported", "model_not_found"}),
    tool_choice={},
    options={
        "max_tokens": "options.num_predict",
        "temperature": "options.temperature",
        "top_p": "options.top_p",
        "stop": "options.stop",
    },
    # `format` is a JSON Schema or the string "json" (JSON mode, provider-only).
    output_schema={"format": SCHEMA},
    # No Files API: images go inline as base64, so every file id is another provider's.
    file_ids_from=frozenset(),
    created_at=("created_at", "iso"),
)

__all__ = ["FACTS", "NAME"]
