"""A function tool's `strict`, with the literal the provider was sent told apart.

The canonical meaning is a boolean (`ToolDefinition.strict`: ask the provider to hold the
model's input to the schema), the one every provider reads. The wire has four spellings:
no `strict`, `null`, `false` and `true`. Chat Completions (`FunctionDefinition.strict:
Optional[bool]`) and Anthropic write the boolean only when it is true; Responses
(`FunctionToolParam.strict: Required[Optional[bool]]`) always writes it. Where the recorded
literal is not what the boolean alone would write back, the import keeps it in
`provider_data[<provider>]["strict_literal"]` (`"absent"`, `"null"`, `"false"`, `"true"`),
and the writer of that provider, and only it, sends the literal again while the boolean
still says the same. Making the canonical field nullable instead would not survive
storage (records drop nulls) nor say which of "absent" and "null" was sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from metis_schema.v3 import ToolDefinition

from .tool_fields import with_provider_data

_LITERALS: Mapping[Any, str] = {None: "null", False: "false", True: "true"}
_VALUES: Mapping[str, Any] = {"null": None, "false": False, "true": True}


def _natural(strict: bool, *, always: bool) -> str:
    if strict:
        return "true"
    return "false" if always else "absent"


def read_strict(
    tool: ToolDefinition, wire: Mapping[str, Any], provider: str, *, always: bool
) -> ToolDefinition:
    """`tool` with `strict` from the wire tool `wire`, and its literal kept when needed.

    `always`: whether `provider`'s writer writes `strict` for every function tool."""
    sent = "strict" in wire
    value = wire.get("strict")
    strict = value is True
    literal = _LITERALS.get(value, "true" if strict else "false") if sent else "absent"
    if strict:
        tool = tool.model_copy(update={"strict": True})
    if literal != _natural(strict, always=always):
        tool = with_provider_data(tool, provider, {"strict_literal": literal})
    return tool


def write_strict(tool: ToolDefinition, out: dict[str, Any], provider: str, *, always: bool) -> None:
    """Put `tool`'s `strict` into the wire function `out` for `provider` (the kept literal
    when it came from `provider` and still means what `tool.strict` says)."""
    literal = (tool.provider_data or {}).get(provider, {}).get("strict_literal")
    if literal not in ("absent", *_VALUES) or (literal == "true") != tool.strict:
        literal = _natural(tool.strict, always=always)
    if literal != "absent":
        out["strict"] = _VALUES[literal]


__all__ = ["read_strict", "write_strict"]
