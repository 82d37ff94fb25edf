"""Provider-run tools (web search, code execution, ...) as canonical tool definitions.

A tool the provider runs (or defines) has no input schema of ours: it is a `ToolDefinition`
whose `kind` names what it does, by meaning, where providers share one (schema v3
`ToolKind`), with the configuration that means the same everywhere in `config` and the
declaration exactly as its provider spelled it in `provider_data[<provider>]["tool"]`.

One table, one row per provider (`tool_rows.ROWS`): for each kind the provider offers, the wire type
(or Gemini field) it is written as, the spellings it is read from, and where each portable
`config` field sits in that provider's declaration. Shared code reads the rows:

- `read_tool` (importers): a non-function wire tool -> a canonical definition. A spelling
  the row does not list is kept as `provider_only`, replayed to its provider alone;
- `write_tool` (writers): a non-function definition -> the wire tool for `provider`: its
  own recorded declaration verbatim when it came from `provider`, else one made from the
  row of the same kind (portable config in the target's spelling; a config field with no
  place there is one §7.3 WARN), else dropped with one WARN carrying the five fields, or
  refused (CriticalBlockError) when the definition is marked `critical`.

Decisions the rows encode (sources: shared/spec/provider-run-tools.md §11.1 and the SDKs):
- Gemini's URL context is `web_fetch` by meaning (it reads the pages the conversation
  names, as Anthropic's web_fetch and OpenRouter's openrouter:web_fetch do).
- OpenAI Chat Completions has web search only as the `web_search_options` request field
  of its search models: an import reads it as a `web_search` tool; a projection from
  another provider writes it only when the target's wire model is a search model (its name
  says `search`), and drops it with the WARN otherwise, since other models refuse it.
- OpenRouter's deprecated `web` plugin is read as `web_search` too and replays as the
  plugin; a projection writes the `openrouter:web_search` server tool that replaces it.
- file search, computer use and image generation are recognised but not portable: a file
  search corpus (vector store, file search store) lives at one provider, and computer-use
  actions differ per provider, so another provider's definition is dropped with the WARN.
- A remote MCP server travels as `server_label` + `server_url` (never its credentials) to
  Responses and Gemini; Anthropic's connector needs a request-level `mcp_servers` entry,
  which a tool list alone cannot declare, so a projection to Anthropic drops it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from metis_schema.v3 import ProviderToolConfig, ToolDefinition, ToolKind
from pydantic import ValidationError

from ... import _json
from ...errors import CriticalBlockError, WireFormatError
from .losses import Losses
from .tool_rows import OPTIONS, PLUGINS, ROWS, SIDE_EFFECTS, KindRow, ProviderRow, row_of

_MAX_NAME = 64
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object"}


def is_provider_tool(tool: ToolDefinition) -> bool:
    """Whether `tool` runs at (or is defined by) a provider rather than by the caller."""
    return tool.kind is not None and tool.kind != ToolKind.function


# --- import -------------------------------------------------------------------------


def read_tool(
    row: ProviderRow,
    wire: Mapping[str, Any],
    *,
    path: str,
    taken: set[str],
    extra: Mapping[str, Any] | None = None,
) -> ToolDefinition:
    """A recorded non-function wire tool -> its canonical definition (see the module doc).

    `taken` holds the names already used in this import (a second web search gets `_2`);
    `extra` is what goes beside `tool` in `provider_data[provider]` (a plugin's position)."""
    spelling = _spelling(row, wire, path)
    kind_row = row.by_spelling(spelling)
    kind = kind_row.kind if kind_row is not None else ToolKind.provider_only
    value = wire[spelling] if row.shape in ("keyed", "option") else wire
    config = _read_config(row, kind_row, value) if kind_row is not None else None
    name = _name(wire.get("name") if row.shape == "typed" else None, kind, spelling, taken)
    data: dict[str, Any] = {"tool": _json.copied(dict(wire)), **(extra or {})}
    try:
        return ToolDefinition(
            name=name,
            description=wire.get("description") if isinstance(wire.get("description"), str) else "",
            input_schema=dict(_EMPTY_SCHEMA),
            side_effects=SIDE_EFFECTS[kind],
            requires_workspace=False,
            kind=kind,
            config=config,
            defer_loading=True if wire.get("defer_loading") is True else None,
            provider_data={row.provider: data},
        )
    except ValidationError as exc:
        raise WireFormatError(
            f"provider tool {spelling!r} cannot be imported: {exc}", provider=row.provider, path=path
        ) from exc


def _spelling(row: ProviderRow, wire: Mapping[str, Any], path: str) -> str:
    if row.shape == "keyed":
        keys = list(wire)
        if len(keys) != 1:
            raise WireFormatError("a Gemini tool object holds one tool", provider=row.provider, path=path)
        return str(keys[0])
    if row.shape == "plugin":
        return str(wire.get("id"))
    if row.shape == "option":
        return row.kinds[0].wire
    kind = wire.get("type")
    if not isinstance(kind, str) or not kind:
        raise WireFormatError("tool has no type", provider=row.provider, path=path)
    return kind


def _name(wire_name: Any, kind: ToolKind, spelling: str, taken: set[str]) -> str:
    """The wire `name` when it is a valid canonical name, else the kind (or, for a provider's
    own tool, its spelling made a name); `_2`, `_3`... when already taken."""
    if (
        isinstance(wire_name, str)
        and wire_name
        and not _NAME_CHARS.search(wire_name)
        and len(wire_name) <= _MAX_NAME
    ):
        base = wire_name
    elif kind != ToolKind.provider_only:
        base = kind.value
    else:
        base = _NAME_CHARS.sub("_", spelling)[:_MAX_NAME] or "provider_tool"
    name, n = base, 1
    while name in taken:
        n += 1
        suffix = f"_{n}"
        name = base[: _MAX_NAME - len(suffix)] + suffix
    taken.add(name)
    return name


def _read_config(row: ProviderRow, kind_row: KindRow, value: Any) -> ProviderToolConfig | None:
    """The portable fields found in a declaration; one that does not fit the canonical
    type (a location with more keys, a bad size) stays only in the recorded declaration."""
    out: dict[str, Any] = {}
    for key, where in kind_row.config.items():
        found = _get(value, where)
        if found is None:
            continue
        if key == "user_location":
            found = _unlocate(found, row.location)
        try:
            ProviderToolConfig.model_validate({key: found})
        except ValidationError:
            continue
        out[key] = found
    return ProviderToolConfig.model_validate(out) if out else None


def _unlocate(value: Any, style: str) -> Any:
    if not isinstance(value, Mapping):
        return value
    inner = value.get("approximate") if style == "nested" else value
    if not isinstance(inner, Mapping):
        return value
    return {k: v for k, v in inner.items() if k != "type" and v is not None}


# --- write --------------------------------------------------------------------------


def write_tool(
    row: ProviderRow, tool: ToolDefinition, *, session_id: str, wire_model: str | None = None
) -> dict[str, Any] | None:
    """The wire declaration of provider tool `tool` for `row`'s provider, or None when it is
    dropped (one WARN; CriticalBlockError when `tool.critical`). See the module doc."""
    own = (tool.provider_data or {}).get(row.provider, {})
    recorded = own.get("tool")
    kind = tool.kind or ToolKind.function
    if isinstance(recorded, dict) and _same_shape(row, own):
        kept: dict[str, Any] = _json.copied(recorded)
        return kept
    kind_row = row.by_kind(kind)
    config = tool.config.model_dump(exclude_none=True) if tool.config is not None else {}
    reason: str | None = None
    if kind_row is None:
        reason = f"{row.provider} has no {kind.value} tool"
        if kind == ToolKind.provider_only:
            reason = f"{_origin(tool)}'s own tool {tool.name!r} replays to that provider only"
    elif not kind_row.portable:
        origin = _origin(tool)
        reason = (
            f"a {kind.value} tool from {origin} does not carry to {row.provider} (its setup belongs there)"
        )
    elif missing := [k for k in kind_row.needs if k not in config]:
        reason = f"{row.provider}'s {kind.value} tool needs {', '.join(missing)}, which the definition lacks"
    elif kind_row.models is not None and kind_row.models not in (wire_model or ""):
        reason = f"{row.provider} offers {kind.value} only on its {kind_row.models} models, not {wire_model}"
    if reason is not None or kind_row is None:
        drop_tool(tool, adapter=row.provider, session_id=session_id, reason=reason or "")
        return None
    return _project(row, kind_row, tool, config, session_id)


def _same_shape(row: ProviderRow, own: Mapping[str, Any]) -> bool:
    """Whether a recorded declaration fits `row`: a plugin replays only as a plugin (and a
    tools[] entry or request field never as one)."""
    return ("plugin" in own) == (row.shape == "plugin")


def _origin(tool: ToolDefinition) -> str:
    return ", ".join(sorted(tool.provider_data or {})) or "another provider"


def _project(
    row: ProviderRow, kind_row: KindRow, tool: ToolDefinition, config: dict[str, Any], session_id: str
) -> dict[str, Any]:
    """A declaration made from the portable config, in `row`'s spelling."""
    listed = any(where.split(".", 1)[0].isdigit() for where in kind_row.config.values())
    body: Any = [] if listed else _json.copied(dict(kind_row.fixed))
    unplaced: list[str] = []
    for key, value in config.items():
        where = kind_row.config.get(key)
        if where is None:
            unplaced.append(key)
            continue
        _put(body, where, _locate(value, row.location) if key == "user_location" else value)
    if unplaced:
        reason = f"{kind_row.kind.value} config {', '.join(unplaced)} has no {row.provider} field; not sent"
        Losses(row.provider, session_id).request(
            f"{kind_row.kind.value}_tool", reason, at=f"tool {tool.name!r}"
        )
    if row.shape in ("keyed", "option"):
        return {kind_row.wire: body}
    out: dict[str, Any] = {"type": kind_row.wire}
    if kind_row.name is not None:
        out["name"] = kind_row.name
    return {**out, **body}


def _locate(value: Mapping[str, Any], style: str) -> dict[str, Any]:
    if style == "nested":
        return {"type": "approximate", "approximate": dict(value)}
    return {"type": "approximate", **value}


def drop_tool(tool: ToolDefinition, *, adapter: str, session_id: str, reason: str) -> None:
    """Leave `tool` out of a request: one §7.3 WARN with the five fields, or refuse it."""
    kind = (tool.kind or ToolKind.function).value
    if tool.critical:
        raise CriticalBlockError(
            f"{adapter} cannot carry critical {kind} tool {tool.name!r}: {reason}",
            provider=adapter,
            path=f"tools.{tool.name}",
            hint="route to a provider that offers the tool, or unmark it as critical",
        )
    Losses(adapter, session_id).request(f"{kind}_tool", reason, at=f"tool {tool.name!r}", whole=True)


def write_tools(
    row: ProviderRow, tools: Sequence[ToolDefinition], *, session_id: str, wire_model: str | None = None
) -> list[dict[str, Any]]:
    """`write_tool` for each provider tool of `tools`, dropped ones left out."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if is_provider_tool(tool):
            wire = write_tool(row, tool, session_id=session_id, wire_model=wire_model)
            if wire is not None:
                out.append(wire)
    return out


def warn_deferred(row: ProviderRow, tools: Sequence[ToolDefinition], *, session_id: str) -> None:
    """One WARN when deferred tools go to a provider with no tool search: they are sent
    loaded up front (nothing is lost but the deferral)."""
    deferred = [t.name for t in tools if t.defer_loading and not is_provider_tool(t)]
    if deferred and row.by_kind(ToolKind.tool_search) is None:
        reason = f"{row.provider} has no tool search; deferred tools sent loaded: {', '.join(deferred)}"
        Losses(row.provider, session_id).request("defer_loading", reason, at="the tools")


# --- paths --------------------------------------------------------------------------


def _get(value: Any, where: str) -> Any:
    for part in where.split("."):
        if part.isdigit():
            if not isinstance(value, list) or int(part) >= len(value):
                return None
            value = value[int(part)]
        elif isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def _put(body: Any, where: str, value: Any) -> None:
    """Set `value` at dotted `where` in `body` (a dict, or a list for a leading index),
    making the dicts and lists on the way."""
    parts = where.split(".")
    node: Any = body
    for part, following in itertools.pairwise(parts):
        fresh: Any = [] if following.isdigit() else {}
        if part.isdigit():
            while len(node) <= int(part):
                node.append(fresh)
            node = node[int(part)]
        else:
            node = node.setdefault(part, fresh)
    last = parts[-1]
    if last.isdigit():
        while len(node) <= int(last):
            node.append(None)
        node[int(last)] = value
    else:
        node[last] = value


__all__ = [
    "OPTIONS",
    "PLUGINS",
    "ROWS",
    "KindRow",
    "ProviderRow",
    "drop_tool",
    "is_provider_tool",
    "read_tool",
    "row_of",
    "warn_deferred",
    "write_tool",
    "write_tools",
]
