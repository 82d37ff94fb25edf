"""Importing the same history twice into one session is idempotent (issue 15 item 13).

A gateway's clients resend the whole history every turn. Each resend is imported into the
same session: a provider id the session's ToolIdMap already maps keeps its canonical id, so
a re-import adds no entries and changes no id, while a server that reuses one id for
several calls (`call_0` every turn) still gets a distinct canonical id per call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from metis import adapters
from metis.ids import ToolIdMap
from metis.store import Store
from metis_schema.v3 import Message, ToolResultBlock, ToolUseBlock

SESSION = "sess_01HZ0000000000000000000777"
TURNS = 333
"""Tool-call turns per history: about 1,000 messages, as in the issue's measurement."""


def _chat(call_id: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for i in range(TURNS):
        cid = call_id.format(i=i)
        messages += [
            {"role": "user", "content": f"question {i}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": cid, "content": f"answer {i}"},
        ]
    return {"model": "gpt-4.1", "messages": messages}


def _anthropic(call_id: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "question"}]
    for i in range(TURNS):
        cid = call_id.format(i=i)
        messages += [
            {"role": "assistant", "content": [{"type": "tool_use", "id": cid, "name": "f", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": cid, "content": f"answer {i}"},
                    {"type": "text", "text": f"question {i + 1}"},
                ],
            },
        ]
    return {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": messages}


def _responses(call_id: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for i in range(TURNS):
        cid = call_id.format(i=i)
        items += [
            {"type": "message", "role": "user", "content": f"question {i}"},
            {"type": "function_call", "call_id": cid, "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": cid, "output": f"answer {i}"},
        ]
    return {"model": "gpt-5", "input": items}


BODIES = {"openai": _chat, "openrouter": _chat, "anthropic": _anthropic, "responses": _responses}
UNIQUE_IDS = {
    "openai": "call_{i}",
    "openrouter": "call_{i}",
    "anthropic": "toolu_{i}",
    "responses": "call_{i}",
}


def _import(provider: str, body: dict[str, Any], ids: ToolIdMap) -> list[Message]:
    if provider == "openrouter":
        body = {**body, "model": "openai/gpt-4o"}
    return adapters.get(provider).from_wire_request(body, session_id=SESSION, tool_ids=ids).messages


def _tool_ids(messages: list[Message]) -> list[tuple[str, str]]:
    """Every tool id the history holds, in order: ("use", id) and ("result", answered id)."""
    out: list[tuple[str, str]] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                out.append(("use", block.id))
            elif isinstance(block, ToolResultBlock):
                out.append(("result", block.tool_use_id))
    return out


@pytest.mark.parametrize("provider", BODIES)
def test_reimporting_a_1000_message_history_adds_no_entries_and_keeps_every_id(provider: str) -> None:
    body = BODIES[provider](UNIQUE_IDS[provider])
    ids = ToolIdMap(SESSION)
    first = _import(provider, body, ids)
    assert len(first) >= 999
    entries = len(ids)
    assert entries == TURNS
    second = _import(provider, body, ids)
    assert len(ids) == entries, "a re-import adds no entries"
    assert _tool_ids(second) == _tool_ids(first), "and maps every call and result to the same id"
    third = _import(provider, body, ids)
    assert len(ids) == entries and _tool_ids(third) == _tool_ids(first)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "responses"])
def test_an_id_reused_for_every_call_gets_one_canonical_id_per_call_and_keeps_them(provider: str) -> None:
    """Servers that number calls per reply (`call_0` every turn): distinct calls within one
    import, and the same ids again when the history comes back."""
    body = BODIES[provider]("call_0")
    ids = ToolIdMap(SESSION)
    first = _tool_ids(_import(provider, body, ids))
    uses = [tool_id for kind, tool_id in first if kind == "use"]
    assert len(set(uses)) == TURNS, "each call its own canonical id"
    assert first == [pair for tool_id in uses for pair in (("use", tool_id), ("result", tool_id))], (
        "each result answers the call just before it"
    )
    entries = len(ids)
    assert _tool_ids(_import(provider, body, ids)) == first
    assert len(ids) == entries


def test_a_history_that_grows_keeps_its_old_ids_and_mints_only_the_new_calls() -> None:
    ids = ToolIdMap(SESSION)
    body = _chat("call_{i}")
    shorter = {**body, "messages": body["messages"][:31]}  # the system prompt and ten turns
    before = _tool_ids(_import("openai", shorter, ids))
    assert len(ids) == 10
    after = _tool_ids(_import("openai", body, ids))
    assert after[: len(before)] == before
    assert len(ids) == TURNS


def test_a_response_call_is_found_again_when_the_client_resends_it() -> None:
    """The call the session got in a reply is the call the next request's history carries."""
    ids = ToolIdMap(SESSION)
    from_reply = ids.register_incoming("anthropic", "toolu_0")
    body = _anthropic("toolu_{i}")
    uses = [tool_id for kind, tool_id in _tool_ids(_import("anthropic", body, ids)) if kind == "use"]
    assert uses[0] == from_reply
    assert len(ids) == TURNS


def test_reimport_is_idempotent_through_the_stored_map(tmp_path: Path) -> None:
    body = _chat("call_0")  # the harder case: one id for every call
    with Store.open(tmp_path / "metis.sqlite3") as store:
        store.create_session(str(tmp_path), active_model="openai:gpt-4.1", session_id=SESSION)
        ids = store.load_tool_ids(SESSION)
        first = _import("openai", body, ids)
        store.append_many(first, tool_ids=ids)
        stored = len(store.load_tool_ids(SESSION))
        assert stored == TURNS

        reloaded = store.load_tool_ids(SESSION)
        again = _import("openai", body, reloaded)
        assert _tool_ids(again) == _tool_ids(first)
        store.save_tool_ids(SESSION, reloaded)
        assert len(store.load_tool_ids(SESSION)) == stored, "nothing new is stored"
