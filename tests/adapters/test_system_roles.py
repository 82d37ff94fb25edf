"""The OpenAI family's system roles on import (Chat and Responses): `developer` first is
replayed as `developer` (the `system_role` directive); a request that mixes `system` and
`developer` replays all its system messages with the first one's role, and says so (§7.3:
nothing changes on the wire without a trace). Responses used to rewrite them silently."""

from __future__ import annotations

import logging

import pytest
from metis.adapters import get
from metis.ids import ToolIdMap

SESSION = "sess_system_roles"


def _body(provider: str, roles: list[str]) -> dict[str, object]:
    turns = [{"role": role, "content": f"rule {i}"} for i, role in enumerate(roles)]
    turns.append({"role": "user", "content": "hi"})
    key = "input" if provider == "responses" else "messages"
    return {"model": "gpt-4.1", key: turns}


def _replayed_roles(provider: str, roles: list[str]) -> list[str]:
    adapter = get(provider)
    imported = adapter.from_wire_request(
        _body(provider, roles), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    body = adapter.to_wire(imported.messages, imported.tools, imported.options)
    turns = body["input"] if provider == "responses" else body["messages"]
    return [t["role"] for t in turns]


@pytest.mark.parametrize("provider", ["openai", "responses"])
def test_mixed_system_roles_replay_as_the_first_and_say_so(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        roles = _replayed_roles(provider, ["developer", "system"])
    assert roles == ["developer", "developer", "user"]
    said = [r.getMessage() for r in caplog.records if "mixes system and developer" in r.getMessage()]
    assert len(said) == 1 and "all replay as developer" in said[0]


@pytest.mark.parametrize("provider", ["openai", "responses"])
@pytest.mark.parametrize("role", ["system", "developer"])
def test_one_system_role_replays_as_sent_without_a_word(
    provider: str, role: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        roles = _replayed_roles(provider, [role, role])
    assert roles == [role, role, "user"]
    assert not [r for r in caplog.records if "mixes system and developer" in r.getMessage()]
