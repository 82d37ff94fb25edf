"""The `anthropic-beta` header follows what the request body holds (anthropic/betas.py).

A history holding Anthropic's native compaction block, or options asking for context
management or the MCP connector, are refused by Anthropic without their beta named in the
header; the client derives it from the body the adapter wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metis.adapters.anthropic.betas import COMPACTION, CONTEXT_MANAGEMENT, FILES_API, MCP_CLIENT, betas
from metis.client import Client
from metis.store import Store

from tests.support import golden
from tests.support.client_support import KEYS, FakeTime, ScriptedProvider, json_reply


def test_a_plain_body_needs_no_beta() -> None:
    assert betas({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}) == []


def test_blocks_edits_and_fields_name_their_betas() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "compaction", "content": "summary"}]},
            {"role": "assistant", "content": [{"type": "mcp_tool_use", "id": "x", "name": "n", "input": {}}]},
        ],
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "mcp_servers": [{"type": "url", "url": "https://mcp.example.com", "name": "e"}],
    }
    assert betas(body) == sorted({COMPACTION, CONTEXT_MANAGEMENT, MCP_CLIENT})


def test_a_files_api_source_names_its_beta_even_inside_a_tool_result() -> None:
    document = {"type": "document", "source": {"type": "file", "file_id": "file_011"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [document]}
    body: dict[str, Any] = {"messages": [{"role": "user", "content": [result]}]}
    assert betas(body) == [FILES_API]


def test_the_client_sends_the_beta_a_replayed_compaction_needs(store: Store, tmp_path: Path) -> None:
    reply = json.loads(golden.read_input("anthropic", "response_compaction.json"))
    provider = ScriptedProvider().add(json_reply(reply), json_reply(reply))
    fake = FakeTime()
    with Client(
        store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
    ) as client:
        session = client.session("sonnet", workspace=tmp_path)
        first = session.send("Plan the trip.")
        assert first.content[0].type == "compaction"
        session.send("And Paris?")
    assert "anthropic-beta" not in provider.requests[0].headers
    assert provider.requests[1].headers["anthropic-beta"] == COMPACTION
    sent = json.loads(provider.requests[1].content)
    assert sent["messages"][1]["content"][0]["type"] == "compaction"  # the block went back


def test_options_asking_for_compaction_send_its_beta(store: Store, tmp_path: Path) -> None:
    reply = json.loads(golden.read_input("anthropic", "response_compaction.json"))
    provider = ScriptedProvider().add(json_reply(reply))
    fake = FakeTime()
    edits = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 150000}}]}
    with Client(
        store, transport=provider.transport(), sleep=fake.sleep, clock=fake.clock, api_keys=KEYS
    ) as client:
        session = client.session("sonnet", workspace=tmp_path)
        session.send("Plan the trip.", provider_options={"anthropic": {"context_management": edits}})
    assert json.loads(provider.requests[0].content)["context_management"] == edits
    assert provider.requests[0].headers["anthropic-beta"] == COMPACTION
