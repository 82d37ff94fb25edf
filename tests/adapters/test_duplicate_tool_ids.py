"""A provider that reuses one tool id for several calls gets distinct ids back on replay
(issue 17, item 10), and every tool result still names the call it answers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from metis import adapters
from metis.adapters._kit.base import AdapterOptions
from metis.assembly import RequestContext
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, Role, TextBlock, ToolResultBlock, ToolUseBlock

from tests.support.messages import build_message


def test_two_calls_sharing_an_id_replay_with_distinct_ids() -> None:
    ids = ToolIdMap("s")
    first, second = ids.register_incoming("openai", "call_0"), ids.register_incoming("openai", "call_0")
    sent = [ids.outgoing(first, "openai"), ids.outgoing(second, "openai")]
    assert len(set(sent)) == 2 and "call_0" in sent
    assert (
        ids.resolve_incoming("openai", sent[0]) == first and ids.resolve_incoming("openai", sent[1]) == second
    )
    reloaded = ToolIdMap.from_dict(ids.to_dict())
    assert [reloaded.outgoing(first, "openai"), reloaded.outgoing(second, "openai")] == sent


def test_an_id_already_replayed_is_decided_again_when_the_server_reuses_it() -> None:
    ids = ToolIdMap("s")
    earlier = ids.register_incoming("ollama", "call_0")
    assert ids.outgoing(earlier, "ollama") == "call_0"
    later = ids.register_incoming("ollama", "call_0")
    assert ids.outgoing(later, "ollama") == "call_0"
    assert ids.outgoing(earlier, "ollama") != "call_0"


def _reply(provider: str) -> dict[str, Any]:
    if provider == "anthropic":
        call = {"type": "tool_use", "id": "toolu_dup", "name": "f", "input": {}}
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [call, call],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 4},
        }
    call = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call, call]}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
    }


MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:openai/gpt-5-mini",
}
"""Providers that need ids unique (Ollama and Gemini match results by name or position
and take ids as optional: they replay their own ids as issued)."""


def _user(text: str) -> Message:
    return build_message(Role.user, [TextBlock(text=text)], session_id="s", created_at=datetime.now(UTC))


def _result(tool_use_id: str, text: str) -> Message:
    block = ToolResultBlock(tool_use_id=tool_use_id, content=[TextBlock(text=text)])
    return build_message(
        Role.tool, [block], session_id="s", created_at=datetime.now(UTC), parent_tool_use_id=tool_use_id
    )


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_a_reply_with_duplicate_ids_replays_to_its_provider_with_distinct_ids(provider: str) -> None:
    ids = ToolIdMap("s")
    adapter = adapters.get(provider)
    user = _user("go")
    reply = adapter.from_wire_response(
        _reply(provider), RequestContext(session_id="s", model=MODELS[provider], tool_ids=ids)
    )
    calls = [block for block in reply.content if isinstance(block, ToolUseBlock)]
    assert len(calls) == 2 and calls[0].id != calls[1].id
    history = [user, reply, _result(calls[0].id, "one"), _result(calls[1].id, "two")]
    body = adapter.to_wire(history, [], AdapterOptions(model=MODELS[provider], session_id="s", tool_ids=ids))
    if provider == "anthropic":
        sent = [block["id"] for block in body["messages"][1]["content"]]
        answered = [part["tool_use_id"] for m in body["messages"][2:] for part in m["content"]]
    else:
        sent = [call["id"] for call in body["messages"][1]["tool_calls"]]
        answered = [m["tool_call_id"] for m in body["messages"][2:]]
    assert len(set(sent)) == 2, f"replayed ids {sent}"
    assert answered == sent  # each result names the call it answers
