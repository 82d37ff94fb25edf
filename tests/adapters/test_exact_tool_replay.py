"""Every recorded request replays to its own provider with the same tools (issue 30, done-when).

Each golden request that declares tools (`tests/golden/<provider>/request_*.json` and
`tools_*.json`, with `tools`, `web_search_options`, `plugins` or `mcp_servers`) is imported
(`from_wire_request`) and written back to the same provider with the options the import read
(`to_wire(imp.messages, imp.tools, imp.options)`): those fields come back identical. What made
three of them differ is kept in the tool's own `provider_data[<provider>]`, replayed to that
provider alone, and each has a test that an edited or foreign tool behaves as before:

1. Anthropic's `cache_control` on a function tool (`tool_fields`): back to Anthropic, one
   WARN with the five §7.3 fields anywhere else;
2. a Gemini `parameters` schema in Gemini's dialect (`STRING`, proto numbers, `nullable`,
   `propertyOrdering`, int64 as strings): replayed verbatim while the tool's canonical
   fields hash the same, written from the canonical JSON Schema once edited;
3. Gemini `tools` sent as one snake_case object: written so again while every tool is one
   that request declared.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.adapters._kit.base import AdapterOptions, WireImport
from metis.ids import ToolIdMap
from metis_schema.v3 import SideEffects, ToolDefinition

from tests.support import golden

SESSION = "sess_exact_tools"
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")
TOOL_FIELDS = ("tools", "web_search_options", "plugins", "mcp_servers")
"""The request fields that declare tools."""
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
    "mistral": "mistral:magistral-medium-latest",
    "responses": "responses:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
}
FIXED = [
    ("anthropic", "request_v2_blocks.json"),
    ("gemini", "request_tool_schemas.json"),
    ("gemini", "request_recorded.json"),
]
"""The three that replayed with different tools before their fields were kept."""


def _recorded(provider: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(golden.read_input(provider, name))
    return body


def _cases() -> list[tuple[str, str]]:
    cases = []
    for provider in adapters.names():
        for name in [*golden.inputs(provider, "request"), *golden.inputs(provider, "tools")]:
            if any(field in _recorded(provider, name) for field in TOOL_FIELDS):
                cases.append((provider, name))
    return cases


CASES = _cases()


def _import(provider: str, body: dict[str, Any]) -> WireImport:
    return adapters.get(provider).from_wire_request(
        copy.deepcopy(body), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )


def _write(provider: str, tools: list[ToolDefinition], imported: WireImport | None = None) -> dict[str, Any]:
    options = AdapterOptions(model=MODELS[provider], session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    messages = imported.messages if imported is not None else []
    return adapters.get(provider).to_wire(messages, tools, options)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        {f: getattr(r, f, "<missing>") for f in FIVE} for r in caplog.records if r.levelno == logging.WARNING
    ]


# --- every recorded request, to its own provider ----------------------------------------


def test_every_golden_request_with_tools_is_replayed() -> None:
    """The 25 recorded requests with tools, the three fixed ones among them (a new golden
    joins by its name; none may go missing)."""
    assert len(CASES) >= 25 and set(FIXED) <= set(CASES)


@pytest.mark.parametrize(("provider", "name"), CASES)
def test_a_recorded_request_replays_to_its_provider_with_the_same_tools(provider: str, name: str) -> None:
    recorded = _recorded(provider, name)
    imported = _import(provider, recorded)
    body = adapters.get(provider).to_wire(imported.messages, imported.tools, imported.options)
    assert {f: body.get(f) for f in TOOL_FIELDS} == {f: recorded.get(f) for f in TOOL_FIELDS}


# --- 1. Anthropic cache_control on a function tool ----------------------------------------


def _cached_tool() -> ToolDefinition:
    imported = _import("anthropic", _recorded("anthropic", "request_v2_blocks.json"))
    assert imported.dropped == []
    tool = imported.tools[0]
    assert tool.provider_data == {"anthropic": {"cache_control": {"type": "ephemeral"}}}
    return tool


@pytest.mark.parametrize("target", [t for t in MODELS if t != "anthropic"])
def test_anthropic_tool_cache_control_elsewhere_is_one_five_field_warn(
    target: str, caplog: pytest.LogCaptureFixture
) -> None:
    tool = _cached_tool()
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = _write(target, [tool])
    assert "cache_control" not in orjson.dumps(body.get("tools")).decode()
    said = [w for w in _warnings(caplog) if w["block_type"] == "cache_control"]
    assert said == [
        {
            "session_id": SESSION,
            "message_id": "request",
            "block_type": "cache_control",
            "adapter": target,
            "reason": f"anthropic tool field cache_control (a prompt-cache breakpoint on the tool list)"
            f" has no {target} place; not sent",
        }
    ]


def test_anthropic_tool_cache_control_goes_back_to_anthropic_on_an_edited_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A breakpoint is about where the tool stands, not what it says: it stays with the tool."""
    edited = _cached_tool().model_copy(update={"description": "Search the notes."})
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        (written,) = _write("anthropic", [edited])["tools"]
    assert written["cache_control"] == {"type": "ephemeral"} and written["description"] == "Search the notes."
    assert not [w for w in _warnings(caplog) if w["block_type"] == "cache_control"]
    fresh = edited.model_copy(update={"provider_data": None})
    assert "cache_control" not in _write("anthropic", [fresh])["tools"][0]


# --- 2. Gemini parameters in Gemini's dialect ---------------------------------------------


def test_an_edited_gemini_tool_is_written_from_its_canonical_schema() -> None:
    recorded = _recorded("gemini", "request_tool_schemas.json")
    imported = _import("gemini", recorded)
    clock = imported.tools[2]
    sent = recorded["tools"][0]["functionDeclarations"][2]
    assert (
        clock.provider_data is not None and clock.provider_data["gemini"]["parameters"] == sent["parameters"]
    )
    assert _write("gemini", [clock])["tools"] == [{"functionDeclarations": [sent]}]
    schema = copy.deepcopy(clock.input_schema)
    schema["properties"]["when"] = {"type": "string"}
    for edited in (
        clock.model_copy(update={"input_schema": schema}),
        clock.model_copy(update={"name": "get_clock"}),
        clock.model_copy(update={"description": "The time."}),
    ):
        (declaration,) = _write("gemini", [edited])["tools"][0]["functionDeclarations"]
        assert declaration["parameters"] == edited.input_schema  # `string`, `maxLength: 64`
        assert declaration["name"] == edited.name and declaration["description"] == edited.description


def test_recorded_gemini_parameters_go_to_no_other_provider() -> None:
    clock = _import("gemini", _recorded("gemini", "request_tool_schemas.json")).tools[2]
    for target in ("anthropic", "openai", "responses"):
        text = orjson.dumps(_write(target, [clock]).get("tools")).decode()
        assert '"type":6' not in text and '"maxLength":64' in text, target


# --- 3. Gemini tools spelled as one snake_case object -------------------------------------


def test_gemini_snake_case_tools_object_replays_only_while_the_tools_are_its_own() -> None:
    recorded = _recorded("gemini", "request_recorded.json")
    imported = _import("gemini", recorded)
    assert all(
        (t.provider_data or {}).get("gemini", {}).get("request_tools")
        == {"shape": "object", "spelling": "snake_case"}
        for t in imported.tools
    )
    assert _write("gemini", imported.tools, imported)["tools"] == recorded["tools"]
    added = ToolDefinition(
        name="grep",
        description="Search the workspace.",
        input_schema={"type": "object", "properties": {"pattern": {"type": "string"}}},
        side_effects=SideEffects.read,
    )
    tools = _write("gemini", [*imported.tools, added], imported)["tools"]
    assert isinstance(tools, list) and list(tools[0]) == ["functionDeclarations"]
    assert [d["name"] for d in tools[0]["functionDeclarations"]] == [
        "list_dir",
        "read_file",
        "run_tests",
        "grep",
    ]
    other = _write("openai", imported.tools, imported)["tools"]
    assert [t["function"]["name"] for t in other] == ["list_dir", "read_file", "run_tests"]


def test_gemini_tools_spelling_and_shape_are_recorded_apart() -> None:
    search = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False}
    function = {"name": "find", "description": "Find.", "parameters_json_schema": search}
    cases = [
        {"functionDeclarations": [{"name": "find", "description": "Find.", "parametersJsonSchema": search}]},
        [{"function_declarations": [function]}, {"google_search": {}}],
        {"function_declarations": [function], "code_execution": {}},
    ]
    for tools in cases:
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": tools}
        imported = _import("gemini", body)
        assert _write("gemini", imported.tools, imported)["tools"] == tools
