"""A function call's `arguments` text, for the two wire formats that send it as a JSON string
(Chat Completions `tool_calls[].function.arguments`, Responses `function_call.arguments`).

Canonical tool input is a JSON object; the provider sent text. metis writes compact JSON
(`canonical_arguments`) and keeps the provider's own text for replay only where it differs
(`kept_arguments`, `raw_arguments_to_keep`: whitespace, key order, escapes, a blank string),
so a call goes back exactly as the model wrote it while it still means the block's input
(`replay_arguments`); an edited input goes as canonical JSON.
"""

from __future__ import annotations

from typing import Any

from metis_schema.v3 import ToolUseBlock

from ... import _json


def canonical_arguments(value: dict[str, Any]) -> str:
    """The arguments string metis writes for a tool input: compact JSON."""
    return _json.dumps(value).decode()


def kept_arguments(raw: str, value: dict[str, Any]) -> str | None:
    """The provider's arguments text `raw` (which reads as `value`) when replay needs it
    verbatim: whenever it is not exactly the canonical serialization (whitespace, key
    order, escapes, a blank string). None: the canonical text says the same."""
    return None if canonical_arguments(value) == raw else raw


def raw_arguments_to_keep(raw: str) -> str | None:
    """`kept_arguments` for text not read yet (a streamed call's joined fragments).

    None for text that is not a JSON object at all: that lives in `unparsed_arguments`.
    """
    if raw.strip() == "":
        return raw
    try:
        value = _json.loads(raw)
    except _json.JSONDecodeError:
        return None
    return kept_arguments(raw, value) if isinstance(value, dict) else None


def replay_arguments(block: ToolUseBlock, raw: dict[str, Any]) -> str:
    """The provider's own arguments text (kept in `raw`, the message's provider_raw, under
    `arguments` or `unparsed_arguments` by call id) while it still means the block's input,
    else canonical JSON."""
    for key in ("arguments", "unparsed_arguments"):
        kept = raw.get(key)
        text = kept.get(block.id) if isinstance(kept, dict) else None
        if isinstance(text, str) and _means(text, block.input):
            return text
    return canonical_arguments(block.input)


def _means(text: str, value: dict[str, Any]) -> bool:
    try:
        parsed = _json.loads(text) if text.strip() else {}
    except _json.JSONDecodeError:
        return value == {}  # kept unparseable text stands for an empty input
    return bool(parsed == value) if isinstance(parsed, dict) else value == {}


__all__ = ["canonical_arguments", "kept_arguments", "raw_arguments_to_keep", "replay_arguments"]
