"""The provider-run tool table: one row per provider, one KindRow per kind it offers.

Data only, read by `provider_tools` (how to read and write a declaration). Sources:
shared/spec/provider-run-tools.md §11.1 and the providers' SDK types named on each row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from metis_schema.v3 import SideEffects, ToolKind

Shape = Literal["typed", "parameters", "keyed", "option", "plugin"]
"""How a provider writes a tool: `typed` `{type, name?, ...config}` (Anthropic, Responses),
`parameters` `{type, parameters: {...config}}` (OpenRouter server tools), `keyed`
`{<field>: {...config}}` (Gemini), `option` a request field (OpenAI Chat
`web_search_options`), `plugin` an OpenRouter `plugins[]` entry."""

SIDE_EFFECTS: Mapping[ToolKind, SideEffects] = MappingProxyType(
    {
        ToolKind.web_search: SideEffects.network,
        ToolKind.web_fetch: SideEffects.network,
        ToolKind.code_execution: SideEffects.execute,
        ToolKind.file_search: SideEffects.read,
        ToolKind.tool_search: SideEffects.none,
        ToolKind.remote_mcp: SideEffects.network,
        ToolKind.image_generation: SideEffects.none,
        ToolKind.computer_use: SideEffects.execute,
        ToolKind.provider_only: SideEffects.execute,
    }
)
"""What each kind can change; a provider's own tool is unknown, so the broadest class."""


@dataclass(frozen=True)
class KindRow:
    """One kind at one provider."""

    kind: ToolKind
    wire: str
    """The type (or Gemini field) a projection writes."""
    reads: tuple[str, ...] = ()
    """Exact spellings read as this kind (besides `wire`)."""
    prefixes: tuple[str, ...] = ()
    """Spelling prefixes read as this kind (Anthropic's dated versions)."""
    name: str | None = None
    """The fixed `name` the provider wants beside the type (Anthropic)."""
    config: Mapping[str, str] = field(default_factory=dict)
    """Portable config field -> dotted path inside the declaration (`0.` a list index)."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """Fields a projection must write besides the config (a required container)."""
    portable: bool = True
    """Whether another provider's definition of the kind can be written here."""
    needs: tuple[str, ...] = ()
    """Config fields without which a projection cannot be written."""
    models: str | None = None
    """When set, only wire models whose name holds this take a projection."""

    def spellings(self) -> tuple[str, ...]:
        return (self.wire, *self.reads)

    def matches(self, spelling: str) -> bool:
        return spelling in self.spellings() or any(spelling.startswith(p) for p in self.prefixes)


@dataclass(frozen=True)
class ProviderRow:
    """What one provider offers: its tool shape and one KindRow per kind it has."""

    provider: str
    shape: Shape
    kinds: tuple[KindRow, ...] = ()
    location: Literal["tagged", "nested"] = "tagged"
    """`user_location` on the wire: `{type: "approximate", ...}` or Chat's
    `{type: "approximate", approximate: {...}}`."""

    def by_spelling(self, spelling: str) -> KindRow | None:
        return next((row for row in self.kinds if row.matches(spelling)), None)

    def by_kind(self, kind: ToolKind) -> KindRow | None:
        return next((row for row in self.kinds if row.kind == kind), None)


_LOCATED = {
    "max_uses": "max_uses",
    "allowed_domains": "allowed_domains",
    "blocked_domains": "blocked_domains",
}

ANTHROPIC = ProviderRow(
    "anthropic",
    "typed",
    (
        KindRow(
            ToolKind.web_search,
            "web_search_20250305",
            prefixes=("web_search_",),
            name="web_search",
            config={**_LOCATED, "user_location": "user_location"},
        ),
        KindRow(
            ToolKind.web_fetch,
            "web_fetch_20250910",
            prefixes=("web_fetch_",),
            name="web_fetch",
            config=_LOCATED,
        ),
        KindRow(
            ToolKind.code_execution,
            "code_execution_20250825",
            prefixes=("code_execution_",),
            name="code_execution",
        ),
        KindRow(
            ToolKind.tool_search,
            "tool_search_tool_bm25_20251119",
            prefixes=("tool_search_tool_",),
            name="tool_search_tool_bm25",
        ),
        KindRow(
            ToolKind.remote_mcp, "mcp_toolset", config={"server_label": "mcp_server_name"}, portable=False
        ),
        KindRow(ToolKind.computer_use, "computer_20250124", prefixes=("computer_",), portable=False),
    ),
)
"""Anthropic Messages `tools[]` (A-SDK `tool_union_param.py`; beta `mcp_toolset`, `computer_*`).
Projections write the versions every current model takes (PAI does the same)."""

RESPONSES = ProviderRow(
    "responses",
    "typed",
    (
        KindRow(
            ToolKind.web_search,
            "web_search",
            reads=("web_search_2025_08_26", "web_search_preview", "web_search_preview_2025_03_11"),
            config={
                "allowed_domains": "filters.allowed_domains",
                "user_location": "user_location",
                "search_context_size": "search_context_size",
            },
        ),
        KindRow(ToolKind.code_execution, "code_interpreter", fixed={"container": {"type": "auto"}}),
        KindRow(ToolKind.file_search, "file_search", portable=False),
        KindRow(ToolKind.tool_search, "tool_search"),
        KindRow(
            ToolKind.remote_mcp,
            "mcp",
            config={"server_label": "server_label", "server_url": "server_url"},
            needs=("server_label", "server_url"),
        ),
        KindRow(ToolKind.image_generation, "image_generation", portable=False),
        KindRow(ToolKind.computer_use, "computer", reads=("computer_use_preview",), portable=False),
    ),
)
"""OpenAI Responses `tools[]` (O-SDK `responses/tool_param.py`); `code_interpreter` requires
a container, `{"type": "auto"}` makes one."""

GEMINI = ProviderRow(
    "gemini",
    "keyed",
    (
        KindRow(
            ToolKind.web_search,
            "googleSearch",
            reads=("google_search", "googleSearchRetrieval", "google_search_retrieval"),
        ),
        KindRow(ToolKind.web_fetch, "urlContext", reads=("url_context",)),
        KindRow(ToolKind.code_execution, "codeExecution", reads=("code_execution",)),
        KindRow(ToolKind.file_search, "fileSearch", reads=("file_search",), portable=False),
        KindRow(
            ToolKind.remote_mcp,
            "mcpServers",
            reads=("mcp_servers",),
            config={"server_label": "0.name", "server_url": "0.streamableHttpTransport.url"},
            needs=("server_label", "server_url"),
        ),
        KindRow(ToolKind.computer_use, "computerUse", reads=("computer_use",), portable=False),
    ),
)
"""Gemini `tools[]`: one field per Tool object (G-SDK `types.Tool`), camelCase or snake_case
on the wire (both read; the recorded spelling replays)."""

OPENROUTER = ProviderRow(
    "openrouter",
    "parameters",
    (
        KindRow(
            ToolKind.web_search,
            "openrouter:web_search",
            config={
                "allowed_domains": "parameters.allowed_domains",
                "blocked_domains": "parameters.excluded_domains",
                "user_location": "parameters.user_location",
                "search_context_size": "parameters.search_context_size",
            },
        ),
        KindRow(
            ToolKind.web_fetch,
            "openrouter:web_fetch",
            config={
                "allowed_domains": "parameters.allowed_domains",
                "blocked_domains": "parameters.blocked_domains",
                "max_uses": "parameters.max_uses",
            },
        ),
    ),
)
"""OpenRouter server tools (openrouter.ai/docs/guides/features/server-tools)."""

OPENROUTER_PLUGIN = ProviderRow(
    "openrouter",
    "plugin",
    (
        KindRow(
            ToolKind.web_search,
            "web",
            config={
                "allowed_domains": "include_domains",
                "blocked_domains": "exclude_domains",
                "max_uses": "max_uses",
                "user_location": "user_location",
            },
        ),
    ),
)
"""OpenRouter's `plugins: [{"id": "web", ...}]` (read and replayed; never projected to)."""

OPENAI_CHAT = ProviderRow(
    "openai",
    "option",
    (
        KindRow(
            ToolKind.web_search,
            "web_search_options",
            config={"search_context_size": "search_context_size", "user_location": "user_location"},
            models="search",
        ),
    ),
    location="nested",
)
"""OpenAI Chat Completions: `web_search_options` on search models (O-SDK
`chat/completion_create_params.py`: `user_location.approximate` nests the place)."""

ROWS: Mapping[str, ProviderRow] = MappingProxyType(
    {
        "anthropic": ANTHROPIC,
        "responses": RESPONSES,
        "gemini": GEMINI,
        "openrouter": OPENROUTER,
        "openai": ProviderRow("openai", "typed"),
        "mistral": ProviderRow("mistral", "typed"),
        "ollama": ProviderRow("ollama", "typed"),
    }
)
"""Provider -> its `tools[]` row. OpenAI and Mistral Chat Completions and Ollama have no
provider-run tool there (a non-function tool they were sent, such as an OpenAI `custom`
tool, is `provider_only`)."""

OPTIONS: Mapping[str, ProviderRow] = MappingProxyType({"openai": OPENAI_CHAT})
"""Provider -> the request field that asks for a provider-run tool (Chat web search)."""

PLUGINS: Mapping[str, ProviderRow] = MappingProxyType({"openrouter": OPENROUTER_PLUGIN})
"""Provider -> its plugins that are provider-run tools (OpenRouter's `web`)."""


def row_of(provider: str) -> ProviderRow:
    """`provider`'s row; a provider the table does not list offers no provider-run tool."""
    return ROWS.get(provider) or ProviderRow(provider, "typed")


__all__ = [
    "OPTIONS",
    "PLUGINS",
    "ROWS",
    "SIDE_EFFECTS",
    "KindRow",
    "ProviderRow",
    "Shape",
    "row_of",
]
