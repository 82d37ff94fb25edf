"""v2 tool schemas (anyOf, $defs, $ref — what pydantic writes) reach each provider in a form it takes."""

from __future__ import annotations

from typing import Any

import metis.adapters
import pytest
from metis.adapters import AdapterOptions
from metis.errors import ToolSchemaError
from metis.ids import ToolIdMap
from metis.tools import ToolRegistry
from metis_schema.v3 import SideEffects, ToolDefinition
from pydantic import BaseModel

from tests.adapters.test_adapter_contract import capable_model
from tests.support.store_support import user

SID = "sess_lowering"


class Point(BaseModel):
    x: int
    y: int | None = None


class Route(BaseModel):
    name: str
    stops: list[Point]
    via: Point | None = None


class Tree(BaseModel):
    label: str
    children: list[Tree] = []


class Forest(BaseModel):
    tree: Tree


def _tool(model: type[BaseModel], name: str = "plan_route") -> ToolDefinition:
    definition = ToolDefinition(
        name=name, description="d", input_schema=model.model_json_schema(), side_effects=SideEffects.none
    )
    ToolRegistry([definition])  # registers: §5.4 as widened by v2
    return definition


def _body(provider: str, tool: ToolDefinition) -> dict[str, Any]:
    options = AdapterOptions(
        model=capable_model(provider), session_id=SID, tool_ids=ToolIdMap(session_id=SID)
    )
    return metis.adapters.get(provider).to_wire([user(SID)], [tool], options)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [*([node["$ref"]] if "$ref" in node else []), *(r for v in node.values() for r in _refs(v))]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openrouter"])
def test_providers_that_take_references_get_the_schema_as_registered(provider: str) -> None:
    tool = _tool(Route)
    assert tool.input_schema in _walk_values(_body(provider, tool)["tools"])


def _walk_values(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [node, *(x for v in node.values() for x in _walk_values(v))]
    if isinstance(node, list):
        return [x for v in node for x in _walk_values(v)]
    return []


def test_gemini_sends_a_schema_with_references_as_parametersJsonSchema() -> None:
    tool = _tool(Route)
    (declaration,) = _body("gemini", tool)["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == tool.input_schema and "parameters" not in declaration


def test_gemini_keeps_parameters_for_a_schema_without_references() -> None:
    (declaration,) = _body("gemini", _tool(Point))["tools"][0]["functionDeclarations"]
    assert "parameters" in declaration and "parametersJsonSchema" not in declaration


def test_ollama_gets_the_references_inlined() -> None:
    (wire,) = _body("ollama", _tool(Route))["tools"]
    parameters = wire["function"]["parameters"]
    assert _refs(parameters) == [] and "$defs" not in parameters
    assert parameters["properties"]["stops"]["items"]["properties"]["x"] == {"title": "X", "type": "integer"}
    assert {"type": "null"} in parameters["properties"]["via"]["anyOf"]


def test_a_recursive_schema_cannot_be_inlined_and_says_so() -> None:
    with pytest.raises(ToolSchemaError) as caught:
        _body("ollama", _tool(Forest, "walk_tree"))
    assert "walk_tree" in str(caught.value) and "recursive" in str(caught.value)
    assert caught.value.provider == "ollama" and caught.value.path is not None
