"""Provider facts as data: one row per provider or dialect, read by shared code.

What differs between providers but is not logic — the stop-reason vocabulary, where an
error envelope keeps its type and message, which error types and statuses are worth a
retry, how a tool choice is spelled, and which body field each canonical option goes to —
is declared here once per provider (`ProviderFacts`) and interpreted by the base adapter.
Inverse tables (wire tool choice -> canonical meaning) are derived, never kept by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from metis_schema.v2 import StopReason

from .. import _json
from ..errors import ProviderError, retryable_status

TOOL_NAME = "\x00tool-name\x00"
"""Placeholder for the tool's name inside a `ProviderFacts.tool_choice["tool"]` template."""

_EXCERPT = 500


class ToolChoice(StrEnum):
    """What a tool choice means, whatever a provider calls it."""

    auto = "auto"
    """The model decides whether to call a tool."""
    any = "any"
    """The model must call some tool (OpenAI's "required", Anthropic's "any", Gemini's ANY)."""
    none = "none"
    """The model must not call a tool."""
    tool = "tool"
    """The model must call the one named tool."""


_ALIASES = {"required": ToolChoice.any}


def tool_choice_meaning(value: str | None) -> tuple[ToolChoice, str | None] | None:
    """`AdapterOptions.tool_choice` by meaning: a mode, or (`tool`, its name) for any other value."""
    if value is None:
        return None
    if value in _ALIASES:
        return _ALIASES[value], None
    if value in ToolChoice.__members__ and value != ToolChoice.tool:
        return ToolChoice(value), None
    return ToolChoice.tool, value


@dataclass(frozen=True)
class ErrorEnvelope:
    """Where a provider's error body keeps its type and message (paths of keys from the root).

    `kinds` classifies a provider that only sends text (Ollama): the first pattern found in
    the message names the type and says whether it is worth a retry.
    """

    type_at: tuple[str, ...] = ()
    message_at: tuple[str, ...] = ("error", "message")
    also_at: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Further fields appended to the message as `name value` (a request id, upstream text)."""
    kinds: tuple[tuple[str, str, bool], ...] = ()
    """(regex, error type, retryable) tried in order against the message."""


@dataclass(frozen=True)
class ProviderFacts:
    """One provider's (or dialect's) facts; see the module docstring."""

    provider: str
    stop_reasons: Mapping[str, StopReason]
    """Wire stop value -> canonical; anything else is `other` (the raw value stays in provider_raw)."""
    error: ErrorEnvelope
    retryable_types: frozenset[str] = frozenset()
    """Error types worth another attempt, whatever the HTTP status."""
    never_retry_types: frozenset[str] = frozenset()
    """Error types never retried, even when the status would say so."""
    tool_choice: Mapping[ToolChoice, Any] = field(default_factory=dict)
    """Canonical meaning -> wire value; `tool` is a template holding `TOOL_NAME` where the name goes.
    A meaning missing here cannot be said to this provider (the request leaves it out, logged)."""
    options: Mapping[str, str] = field(default_factory=dict)
    """Canonical option (`max_tokens`, `temperature`, `top_p`, `stop`) -> dotted body path."""

    # --- stop reasons ---------------------------------------------------------------------

    def stop_reason(self, value: object) -> StopReason:
        """The canonical stop reason of a wire value (`other` for anything unknown)."""
        return self.stop_reasons.get(value, StopReason.other) if isinstance(value, str) else StopReason.other

    # --- tool choice ----------------------------------------------------------------------

    def tool_choice_to_wire(self, value: str | None) -> Any:
        """The wire spelling of `AdapterOptions.tool_choice`; None when unset or not sayable here."""
        meaning = tool_choice_meaning(value)
        if meaning is None or meaning[0] not in self.tool_choice:
            return None
        mode, name = meaning
        return _fill(self.tool_choice[mode], name or "")

    def tool_choice_from_wire(self, wire: Any) -> str | None:
        """The canonical tool choice a wire value means (derived from `tool_choice`); None if unknown."""
        for mode, template in self.tool_choice.items():
            if mode == ToolChoice.tool:
                name = _match(template, wire)
                if name is not None:
                    return name
            elif template == wire:
                return mode.value
        return None

    # --- options --------------------------------------------------------------------------

    def options_to_wire(self, values: Mapping[str, Any], body: dict[str, Any]) -> None:
        """Write each set canonical option at its declared body path."""
        for option, path in self.options.items():
            value = values.get(option)
            if value is not None:
                _put(body, path, value)

    def options_from_wire(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Canonical options found at their declared paths in a recorded body."""
        found: dict[str, Any] = {}
        for option, path in self.options.items():
            value = _get(body, tuple(path.split(".")))
            if value is not None:
                found[option] = value
        return found

    def option_paths(self) -> frozenset[str]:
        """The top-level body fields the canonical options occupy."""
        return frozenset(path.split(".", 1)[0] for path in self.options.values())

    # --- errors ---------------------------------------------------------------------------

    def parse_error(self, body: Any, status_code: int | None = None) -> ProviderError:
        """A provider error body (bytes, text or parsed) -> ProviderError with its own type and message."""
        parsed = _parsed(body)
        envelope = self.error
        message = _get(parsed, envelope.message_at) if envelope.message_at else None
        error_type = _get(parsed, envelope.type_at) if envelope.type_at else None
        if message is None and isinstance(parsed, Mapping) and isinstance(parsed.get("error"), str):
            message = parsed["error"]
        text = _text(message) if message is not None else _excerpt(body)
        retryable: bool | None = None
        if error_type is None:
            for pattern, kind, retry in envelope.kinds:
                if re.search(pattern, text, re.IGNORECASE):
                    error_type, retryable = kind, retry
                    break
        kind_text = _text(error_type) if error_type is not None else None
        if not kind_text:
            kind_text = f"http_{status_code}" if status_code else "unknown_error"
        for name, at in envelope.also_at.items():
            extra = _get(parsed, at)
            if extra is not None:
                text = f"{text} ({name} {_text(extra)})"
        if retryable is None:
            retryable = kind_text not in self.never_retry_types and (
                kind_text in self.retryable_types or retryable_status(status_code)
            )
        return ProviderError(
            text,
            provider=self.provider,
            error_type=kind_text,
            status_code=status_code,
            retryable=retryable,
            body=parsed if parsed is not None else body,
        )


def _fill(template: Any, name: str) -> Any:
    if template == TOOL_NAME:
        return name
    if isinstance(template, Mapping):
        return {key: _fill(value, name) for key, value in template.items()}
    if isinstance(template, list):
        return [_fill(value, name) for value in template]
    return template


def _match(template: Any, wire: Any) -> str | None:
    """The name `wire` puts where `template` has TOOL_NAME, if the rest is the same."""
    if template == TOOL_NAME:
        return wire if isinstance(wire, str) and wire else None
    if isinstance(template, Mapping):
        if not isinstance(wire, Mapping) or set(template) - set(wire):
            return None
        names = [_match(value, wire[key]) for key, value in template.items() if _holds_name(value)]
        same = all(wire[key] == value for key, value in template.items() if not _holds_name(value))
        return names[0] if same and len(names) == 1 else None
    if isinstance(template, list):
        if not isinstance(wire, list) or len(wire) != len(template):
            return None
        names = [_match(t, w) for t, w in zip(template, wire, strict=True) if _holds_name(t)]
        same = all(t == w for t, w in zip(template, wire, strict=True) if not _holds_name(t))
        return names[0] if same and len(names) == 1 else None
    return None


def _holds_name(template: Any) -> bool:
    if template == TOOL_NAME:
        return True
    if isinstance(template, Mapping):
        return any(_holds_name(value) for value in template.values())
    if isinstance(template, list):
        return any(_holds_name(value) for value in template)
    return False


def _put(body: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    holder = body
    for key in parents:
        holder = holder.setdefault(key, {})
    holder[last] = value


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _parsed(body: Any) -> Any:
    if isinstance(body, bytes | str):
        try:
            return _json.loads(body)
        except (_json.JSONDecodeError, RecursionError):
            return None
    return body


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return _json.dumps(value).decode()[:_EXCERPT]
    except (ValueError, TypeError, RecursionError):
        return repr(value)[:_EXCERPT]


def _excerpt(body: Any) -> str:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return (body if isinstance(body, str) else _text(body))[:_EXCERPT]


__all__ = ["TOOL_NAME", "ErrorEnvelope", "ProviderFacts", "ToolChoice", "tool_choice_meaning"]
