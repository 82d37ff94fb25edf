"""Datasets export (issue 27): the layouts Hugging Face TRL and OpenAI fine-tuning read.

`TRL_ROW` is written from TRL's "Dataset formats and types" guide, its "Tool Calling"
section: a `messages` column of `system` / `user` / `assistant` / `tool` messages, an
assistant's `tool_calls` as `{"type": "function", "function": {"name", "arguments"}}` with
`arguments` the input *object*, a tool's answer as `{"role": "tool", "name", "content"}`, and a
`tools` column of JSON schemas `{"type": "function", "function": {"name", "description",
"parameters"}}`; reasoning is an assistant message's `thinking` (the key of its Harmony
example). OpenAI's fine-tuning chat format (its fine-tuning guide, the `FineTuneChatRequestInput`
of its API reference: `messages`, `tools`, `parallel_tool_calls`, `functions`) is checked through
the openai SDK's own request types (drained, strict keys: `contracts.openai`), with `arguments`
a JSON string and tool messages `{"role": "tool", "tool_call_id", "content"}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from metis.client import Client
from metis.ops import dataset_line
from metis.ops.export_jsonl import OPENAI, TRL, session_tools
from metis.store import Store
from metis_schema.v3 import ToolDefinition, ToolUseBlock

from tests.support.cli_support import ANTHROPIC_BODY, OPENAI_BODY, imported, run
from tests.support.client_support import KEYS, PROVIDERS, FakeTime, ScriptedProvider, json_reply, ok_body
from tests.support.contracts import openai as openai_contract

ANTHROPIC = PROVIDERS[0]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather of a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
    side_effects="network",
    requires_workspace=False,
)

_TEXT = {"type": "string"}
TRL_ROW: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["messages"],
    "properties": {
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["role"],
                "properties": {"role": {"enum": ["system", "user", "assistant", "tool"]}},
                "allOf": [
                    {
                        "if": {"properties": {"role": {"const": "assistant"}}},
                        "then": {
                            "properties": {
                                "content": _TEXT,
                                "thinking": _TEXT,
                                "tool_calls": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["type", "function"],
                                        "properties": {
                                            "type": {"const": "function"},
                                            "function": {
                                                "type": "object",
                                                "required": ["name", "arguments"],
                                                "properties": {
                                                    "name": _TEXT,
                                                    "arguments": {"type": "object"},
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    {
                        "if": {"properties": {"role": {"const": "tool"}}},
                        "then": {
                            "required": ["name", "content"],
                            "properties": {"name": _TEXT, "content": _TEXT},
                        },
                    },
                    {
                        "if": {"properties": {"role": {"enum": ["system", "user"]}}},
                        "then": {"required": ["content"]},
                    },
                ],
            },
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "function"],
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "required": ["name", "description", "parameters"],
                        "properties": {
                            "name": _TEXT,
                            "description": _TEXT,
                            "parameters": {"type": "object", "required": ["type"]},
                        },
                    },
                },
            },
        },
    },
}
"""A row as TRL's guide lays it out (see module doc)."""

OPENAI_FINE_TUNING_KEYS = {"messages", "tools", "parallel_tool_calls", "functions"}


def check_trl(row: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(TRL_ROW).validate(row)


def check_openai(row: dict[str, Any]) -> None:
    assert set(row) <= OPENAI_FINE_TUNING_KEYS, set(row) - OPENAI_FINE_TUNING_KEYS
    openai_contract.check_request({"model": "gpt-4.1-mini-2025-04-14", **row})
    for message in row["messages"]:
        for call in message.get("tool_calls", []):
            assert isinstance(call["function"]["arguments"], str)
            json.loads(call["function"]["arguments"])


def test_the_layout_checks_bite() -> None:
    good_trl = {
        "messages": [
            {"role": "user", "content": "Turn on the living room lights."},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {
                            "name": "control_light",
                            "arguments": {"room": "living room", "state": "on"},
                        },
                    }
                ],
            },
            {"role": "tool", "name": "control_light", "content": "The lights in the living room are now on."},
            {"role": "assistant", "content": "Done!"},
        ]
    }
    check_trl(good_trl)  # TRL's own example
    as_text = json.loads(json.dumps(good_trl))
    as_text["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"room": "living room"}'
    unnamed = json.loads(json.dumps(good_trl))
    del unnamed["messages"][2]["name"]
    for bad in (as_text, unnamed):
        with pytest.raises(jsonschema.ValidationError):
            check_trl(bad)
    openai_row = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "w", "arguments": {"city": "Paris"}},
                    }
                ],
            },
        ]
    }
    with pytest.raises(Exception, match="arguments"):
        check_openai(openai_row)  # an object where OpenAI wants the JSON text
    named = {"messages": [{"role": "tool", "tool_call_id": "call_1", "name": "w", "content": "ok"}]}
    with pytest.raises(AssertionError, match="name"):
        check_openai(named)


def tool_session(store: Store, tmp_path: Path) -> tuple[str, list[Any]]:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    fake = FakeTime()
    with Client(
        store, transport=provider.transport(), api_keys=KEYS, sleep=fake.sleep, clock=fake.clock
    ) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path, tools=[WEATHER])
        reply = session.send("Weather in two cities?")
        for n, block in enumerate(b for b in reply.content if isinstance(b, ToolUseBlock)):
            session.add_tool_result(block.id, f"result-{n}: sunny")
        session.send()
        return session.id, session.messages()


def test_a_tool_loop_in_both_layouts(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.sqlite3") as store:
        session_id, history = tool_session(store, tmp_path)
        tools = session_tools(store.settings_revisions(session_id))
    uses = [b for b in history[1].content if isinstance(b, ToolUseBlock)]

    trl = dataset_line(history, tools, TRL)
    check_trl(trl)
    messages = trl["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["function"]["arguments"] for c in messages[1]["tool_calls"]] == [b.input for b in uses]
    assert [(m["name"], m["content"]) for m in messages[2:4]] == [
        ("get_weather", "result-0: sunny"),
        ("get_weather", "result-1: sunny"),
    ]
    assert trl["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": WEATHER.description,
                "parameters": WEATHER.input_schema,
            },
        }
    ]

    openai = dataset_line(history, tools, OPENAI)
    check_openai(openai)
    assert openai["tools"] == trl["tools"]
    calls = openai["messages"][1]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [b.input for b in uses]
    assert [m["tool_call_id"] for m in openai["messages"][2:4]] == [c["id"] for c in calls]


def test_export_writes_many_sessions_to_one_file_with_filters(tmp_path: Path) -> None:
    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    anthropic_file, openai_file = tmp_path / "a.json", tmp_path / "o.json"
    anthropic_file.write_text(json.dumps(ANTHROPIC_BODY))
    openai_file.write_text(json.dumps(OPENAI_BODY))
    first = imported(runner, db, "anthropic", anthropic_file)[0]
    second = imported(runner, db, "openai", openai_file)[0]
    again = tmp_path / "a2.json"  # other traffic: importing the same file twice adds nothing
    body = json.loads(json.dumps(ANTHROPIC_BODY))
    body["system"] = "Answer in French."
    again.write_text(json.dumps(body))
    third = imported(runner, db, "anthropic", again)[0]

    out = tmp_path / "trl.jsonl"
    result = run(runner, "--db", db, "export", "all", "--format", "trl", "-o", out)
    assert result.exit_code == 0, result.output
    assert "exported 3 trl line(s) from 3 session(s)" in result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3
    for row in rows:
        check_trl(row)
    anthropic_row = rows[0]
    assert anthropic_row["tools"][0]["function"]["name"] == "get_weather"
    assistant = anthropic_row["messages"][2]
    assert assistant["thinking"] == "Looks like Paris."  # the reasoning, without its signature
    assert assistant["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert anthropic_row["messages"][3] == {
        "role": "tool",
        "tool_call_id": assistant["tool_calls"][0]["id"],
        "content": "sunny, 21C",
        "name": "get_weather",
    }
    assert "tools" not in rows[1]  # a session that offered none

    openai_out = tmp_path / "openai.jsonl"
    result = run(runner, "--db", db, "export", "all", "--format", "jsonl-messages", "-o", openai_out)
    assert result.exit_code == 0, result.output
    for line in openai_out.read_text().splitlines():
        check_openai(json.loads(line))

    def exported(*args: str) -> list[str]:
        result = run(runner, "--db", db, "export", *args, "--format", "trl")
        assert result.exit_code == 0, result.output
        return [json.loads(line)["messages"][-1]["content"] for line in result.stdout.splitlines()]

    assert exported("all", "--model", "gpt-5") == ["Bye"]
    assert len(exported("all", "--model", "sonnet")) == 2  # an alias, resolved by the catalog
    assert exported(first, second, third, "--model", "openai:gpt-5") == ["Bye"]
    # --model reads as `metis sessions --model` does: text in a model id matches too
    assert len(exported("all", "--model", "claude")) == 2
    assert exported("all", "--model", "no-such-model") == []
    assert exported("all", "--since", "2999-01-01") == []
    assert len(exported("all", "--since", "2000-01-01")) == 3
    mixed = run(runner, "--db", db, "export", "all", first, "--format", "trl")
    assert mixed.exit_code == 2 and "not both" in mixed.output


def test_the_tools_column_holds_function_tools_only() -> None:
    from metis.ops.export_jsonl import tools_column
    from metis_schema.v3 import ToolDefinition

    weather = ToolDefinition(
        name="get_weather", description="Weather", input_schema={"type": "object"}, side_effects="read"
    )
    search = ToolDefinition(
        name="web_search",
        description="Search the web",
        input_schema={"type": "object"},
        side_effects="network",
        kind="web_search",
    )
    assert [t["function"]["name"] for t in tools_column([weather, search])] == ["get_weather"]
