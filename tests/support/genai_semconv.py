"""The OpenTelemetry GenAI message shapes, written here as JSON Schema from the facts of
semantic conventions v1.41.0 (open-telemetry/semantic-conventions, docs/gen-ai/
gen-ai-input-messages.json, gen-ai-output-messages.json, gen-ai-system-instructions.json).

Not a copy of those files: the same constraints, stated for the tests. A message is an
object with a `role` string and a `parts` array (output messages also need a
`finish_reason` string; the named values are stop, length, content_filter, tool_call,
error, and any other string is allowed). Every part is an object with a `type` string;
the part types the conventions name have required fields — text and reasoning:
`content` string; tool_call: `name` string, `id` string or null; tool_call_response:
`response` (any value), `id` string or null; blob: `modality` and `content` strings;
uri: `modality` and `uri` strings; file: `modality` and `file_id` strings — and other
types are generic parts (a `type` and anything else). System instructions are a list of
parts.
"""

from __future__ import annotations

from typing import Any

_STRING = {"type": "string"}
_ID = {"type": ["string", "null"]}


def _typed(name: str, required: dict[str, Any]) -> dict[str, Any]:
    """A named part: when `type` is `name`, these fields are required with these types."""
    return {
        "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
        "then": {"required": sorted(required), "properties": required},
    }


PART: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": _STRING},
    "allOf": [
        _typed("text", {"content": _STRING}),
        _typed("reasoning", {"content": _STRING}),
        _typed("tool_call", {"name": _STRING}),
        _typed("tool_call_response", {"response": {}}),
        _typed("blob", {"modality": _STRING, "content": _STRING}),
        _typed("uri", {"modality": _STRING, "uri": _STRING}),
        _typed("file", {"modality": _STRING, "file_id": _STRING}),
        {"properties": {"id": _ID}},
    ],
}

_MESSAGE: dict[str, Any] = {
    "type": "object",
    "required": ["role", "parts"],
    "properties": {
        "role": _STRING,
        "parts": {"type": "array", "items": PART},
        "name": {"type": ["string", "null"]},
    },
}

SYSTEM_INSTRUCTIONS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": PART,
}
INPUT_MESSAGES: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": _MESSAGE,
}
OUTPUT_MESSAGES: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "array",
    "items": {
        "allOf": [_MESSAGE],
        "required": ["finish_reason"],
        "properties": {"finish_reason": _STRING},
    },
}
SCHEMAS = {
    "gen_ai.system_instructions": SYSTEM_INSTRUCTIONS,
    "gen_ai.input.messages": INPUT_MESSAGES,
    "gen_ai.output.messages": OUTPUT_MESSAGES,
}
