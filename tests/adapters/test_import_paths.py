"""Every request importer says where in the body each message was read from (`WireImport.paths`).

The gateway's `previous_response_id` continuation tells the stored history it wrote in
front of the client's input from the client's own turns by these paths, with one import
(tests/gateway/test_gateway_continuation.py). Here, over every recorded request golden of
every provider: one path per message, in order, each naming a part of the body.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.ids import ToolIdMap

from tests.support import golden

PROVIDERS = ("anthropic", "gemini", "mistral", "ollama", "openai", "openrouter", "responses")
CASES = [(provider, name) for provider in PROVIDERS for name in golden.inputs(provider, "request")]
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _at(body: Any, path: str) -> Any:
    """The part of `body` a path such as `contents[2].parts[0].functionResponse` names (a
    path spells a Gemini field in camelCase, also where the body spelled it in snake_case)."""
    found = body
    for key, index in _STEP.findall(path):
        if index:
            found = found[int(index)]
        else:
            found = found[key] if key in found else found[re.sub(r"([A-Z])", r"_\1", key).lower()]
    return found


def _order(path: str) -> tuple[int, ...]:
    """Where a path stands in the body's order: a top-level field before the list's items."""
    return tuple(int(index) for index in re.findall(r"\[(\d+)\]", path))


@pytest.mark.parametrize(("provider", "name"), CASES, ids=[f"{p}/{n}" for p, n in CASES])
def test_each_imported_message_names_where_it_was_read_from(provider: str, name: str) -> None:
    body = orjson.loads(golden.read_input(provider, name))
    imported = adapters.get(provider).from_wire_request(
        body, session_id="sess_paths", tool_ids=ToolIdMap("sess_paths")
    )
    assert imported.messages, "every golden request holds messages"
    assert len(imported.paths) == len(imported.messages)
    for path in imported.paths:
        assert _at(body, path) is not None, path
    orders = [_order(path) for path in imported.paths]
    assert orders == sorted(orders), "in the body's order"


def test_a_responses_run_of_assistant_items_is_named_by_its_first() -> None:
    body = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "14 °C"},
            {"role": "user", "content": "Thanks."},
        ],
    }
    imported = adapters.get("responses").from_wire_request(
        body, session_id="sess_paths", tool_ids=ToolIdMap("sess_paths")
    )
    assert [m.role.value for m in imported.messages] == ["system", "user", "assistant", "tool", "user"]
    assert imported.paths == ["instructions", "input[0]", "input[1]", "input[3]", "input[4]"]
