"""`WireImport.paths`: every importer names, in step with its messages, the part of the
body each message was read from (the gateway tells a continuation's history from the
client's input by them), and records how a message was spelled (`SPELLED`) only for
messages it made. One conversation per provider: a system prompt, a user turn, a tool
call and its result, a closing user turn."""

from __future__ import annotations

from typing import Any

import pytest
from metis.adapters import get
from metis.ids import ToolIdMap
from metis_schema.v3 import Role

SESSION = "sess_import_paths"

ROLES = [Role.system, Role.user, Role.assistant, Role.tool, Role.user]

SPELLED_AT = {"anthropic": [1, 3], "openai": [], "gemini": [], "ollama": [3], "responses": [1, 4]}
"""The messages each import records as spelled otherwise than its writer writes them: a
string content (Anthropic, Responses), a typeless item (Responses), a tool result without
`tool_name` (Ollama)."""

CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "anthropic": (
        {
            "model": "claude-sonnet-4-6",
            "max_tokens": 100,
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "cold"},
                        {"type": "text", "text": "Thanks."},
                    ],
                },
            ],
        },
        ["system", "messages[0]", "messages[1]", "messages[2]", "messages[2]"],
    ),
    "openai": (
        {
            "model": "gpt-4.1",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "cold"},
                {"role": "user", "content": "Thanks."},
            ],
        },
        [f"messages[{i}]" for i in range(5)],
    ),
    "gemini": (
        {
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Oslo?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Oslo"}}}]},
                {
                    "role": "user",
                    "parts": [{"functionResponse": {"name": "weather", "response": {"result": "cold"}}}],
                },
                {"role": "user", "parts": [{"text": "Thanks."}]},
            ],
        },
        [
            "systemInstruction",
            "contents[0]",
            "contents[1]",
            "contents[2].parts[0].functionResponse",
            "contents[3]",
        ],
    ),
    "ollama": (
        {
            "model": "llama3.2",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "weather", "arguments": {"city": "Oslo"}}}],
                },
                {"role": "tool", "content": "cold"},
                {"role": "user", "content": "Thanks."},
            ],
        },
        [f"messages[{i}]" for i in range(5)],
    ),
    "responses": (
        {
            "model": "gpt-4.1",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "Weather in Oslo?"},
                {
                    "type": "function_call",
                    "call_id": "call_1",
                    "name": "weather",
                    "arguments": '{"city": "Oslo"}',
                },
                {"type": "function_call_output", "call_id": "call_1", "output": "cold"},
                {"role": "user", "content": "Thanks."},
            ],
        },
        ["instructions", "input[0]", "input[1]", "input[2]", "input[3]"],
    ),
}


@pytest.mark.parametrize("provider", sorted(CASES))
def test_paths_in_step_with_messages(provider: str) -> None:
    body, paths = CASES[provider]
    imported = get(provider).from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [m.role for m in imported.messages] == ROLES
    assert imported.paths == paths
    spelled = ((imported.options.provider_options.get(provider) or {}).get("metis") or {}).get(
        "spelled"
    ) or {}
    assert [i for i, m in enumerate(imported.messages) if m.id in spelled] == SPELLED_AT[provider]
    assert len(spelled) == len(SPELLED_AT[provider])


def test_chat_lists_unknown_tool_and_image_fields_in_key_order() -> None:
    """What a Chat import drops is listed in a stable order (the keys sorted), not in the
    order of a set of strings, which changes with the interpreter's hash seed."""
    extra = dict.fromkeys(("zeta", "alpha", "mu", "delta", "omega"), 1)
    body = {
        "model": "gpt-4.1",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "https://example.com/a.png", **extra}},
                ],
            }
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, **extra}}],
    }
    imported = get("openai").from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    paths = [entry["path"] for entry in imported.dropped]
    keys = sorted(extra)
    assert [p for p in paths if p.startswith("messages")] == [
        f"messages[0].content[0].image_url.{k}" for k in keys
    ]
    assert [p for p in paths if p.startswith("tools")] == [f"tools[0].function.{k}" for k in keys]
