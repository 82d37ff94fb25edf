"""Ollama bodies and fixtures against the official `ollama` SDK (tests/support/contracts/ollama.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from metis import StopReason, TextBlock, ToolIdMap, ToolUseBlock
from ollama._types import ChatRequest
from pydantic import ValidationError

from tests.adapters.test_ollama_adapter import ADAPTER, PROVIDER, SESSION, context, load_stream, load_wire
from tests.support import golden
from tests.support.contracts.ollama import (
    ContractError,
    check_request,
    check_response,
    drain,
    error_fixture,
    response_fixture,
    stream_fixture,
)

GOOD: dict[str, Any] = {
    "model": "qwen3:8b",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi", "images": ["iVBORw0KGgo="]},
        {
            "role": "assistant",
            "content": "",
            "thinking": "call it",
            "tool_calls": [{"id": "call_1", "function": {"index": 0, "name": "f", "arguments": {"a": 1}}}],
        },
        {"role": "tool", "content": "ok", "tool_name": "f"},
    ],
    "tools": [
        {"type": "function", "function": {"name": "f", "description": "", "parameters": {"type": "object"}}}
    ],
    "stream": False,
    "options": {"temperature": 0.2, "num_ctx": 4096},
    "think": "high",
}


def test_every_golden_body_passes_the_contract() -> None:
    bodies = sorted(golden.folder(PROVIDER).glob("*.request.golden.json"))
    assert len(bodies) >= 5
    for path in bodies:
        if (
            path.name != "conversation_import_quirks.request.golden.json"
        ):  # request_quirks.json replayed as sent
            check_request(json.loads(path.read_text(encoding="utf-8")))
    for name in golden.inputs(PROVIDER, "request"):  # recorded bodies, which the import round trip reproduces
        if name != "request_quirks.json":  # what lax clients send: string arguments, a data URL
            check_request(load_wire(name))


def test_a_good_body_passes() -> None:
    check_request(copy.deepcopy(GOOD))


def _broken(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    node: Any = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return body


BROKEN = [
    # (where, bad value, what the contract says)
    (("messages", 2, "tool_calls", 0, "function", "arguments"), '{"a": 1}', "arguments must be an object"),
    (("messages", 1, "content"), [{"type": "text", "text": "hi"}], "content must be a string"),
    (("messages", 1, "images"), ["data:image/png;base64,iVBORw0KGgo="], "without a data: prefix"),
    (("messages", 1, "images"), ["not base64!"], "not valid base64"),
    (("messages", 3, "tool_nmae"), "f", "unknown keys"),
    (("messages", 0, "role"), "developer", "role must be one of"),
    (("messages", 2, "tool_calls", 0, "function", "name"), "", "function.name"),
    (("messages", 2, "tool_calls", 0, "type"), "function", "unknown keys"),
    (("options", "max_tokens"), 10, "unknown options"),
    (("temperature",), 0.2, "unknown top-level keys"),
    (("think",), "max", "think must be"),
]


@pytest.mark.parametrize(
    ("path", "value", "problem"), BROKEN, ids=[b[2] + ":" + str(b[0][-1]) for b in BROKEN]
)
def test_broken_bodies_fail(path: tuple[Any, ...], value: Any, problem: str) -> None:
    with pytest.raises(ContractError, match=problem):
        check_request(_broken(path, value))


def test_the_sdk_alone_would_not_bite() -> None:
    """Why check_request adds its own rules: ChatRequest takes any dict as a message."""
    body = _broken(("messages", 2, "tool_calls", 0, "function", "arguments"), '{"a": 1}')
    ChatRequest.model_validate(body)  # the SDK accepts it; the server would not
    with pytest.raises(ContractError):
        check_request(body)


@pytest.mark.parametrize(
    "body",
    [
        {"messages": []},  # no model
        {"model": "", "messages": []},
        {"model": "m", "messages": [], "stream": "yes"},
        {"model": "m", "messages": [], "options": {"temperature": "hot"}},
        {
            "model": "m",
            "messages": [],
            "tools": [{"type": "function", "function": {"parameters": {"type": "array"}}}],
        },
    ],
)
def test_sdk_type_errors_fail(body: dict[str, Any]) -> None:
    with pytest.raises((ContractError, ValidationError)):
        check_request(body)


def test_drain_walks_lazy_iterables() -> None:
    assert drain({"a": (x for x in [1, {"b": iter([2])}])}) == {"a": [1, {"b": [2]}]}


def test_sdk_built_response_parses() -> None:
    body = response_fixture()
    check_response(body)
    message = ADAPTER.from_wire_response(body, context("qwen3", ToolIdMap(SESSION)))
    assert message.content[0] == TextBlock(text="I'll check the weather in both cities.")
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    assert [c.input["city"] for c in calls] == ["Paris", "Rome"]
    assert message.metadata.stop_reason == StopReason.tool_use
    usage = message.metadata.usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (211, 58)


def test_recorded_shapes_are_sdk_responses() -> None:
    for name in golden.inputs(PROVIDER, "response"):
        check_response(load_wire(name))
    for name in golden.inputs(PROVIDER, "stream"):
        for line in load_stream(name).decode().splitlines():
            chunk = json.loads(line)
            if "error" not in chunk:
                check_response(chunk)
    for line in stream_fixture():
        check_response(json.loads(line))


def test_error_fixture() -> None:
    status, body = error_fixture()
    error = ADAPTER.parse_error(body, status)
    assert (error.status_code, error.error_type, error.retryable) == (400, "tools_not_supported", False)
    assert "does not support tools" in error.message
