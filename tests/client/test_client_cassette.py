"""A recorded HTTP cassette (spec §11.2) replayed through the client's real httpx transport.

No MockTransport here: vcrpy patches httpx's own transport and serves
tests/cassettes/anthropic_tool_loop.yaml with record_mode="none", so any request the
cassette does not hold fails instead of reaching the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import vcr
from metis.client import Client
from metis.store import Store
from metis_schema.v3 import MessageStatus, Role, TextBlock, ToolUseBlock

from tests.support.paths import CASSETTES

PROVIDER_TOOL_ID = "toolu_01VcrCassette0000000000001"


def test_cassette_tool_loop_replays_through_httpx(tmp_path: Path) -> None:
    sent: list[bytes] = []

    def capture(request: Any) -> Any:
        sent.append(request.body or b"")
        return request

    recorder = vcr.VCR(record_mode="none", filter_headers=["x-api-key"], before_record_request=capture)
    with (
        recorder.use_cassette(str(CASSETTES / "anthropic_tool_loop.yaml")) as cassette,
        Store.open(tmp_path / "metis.sqlite3") as store,
        Client(store, api_keys={"anthropic": "sk-ant-test"}, max_retries=0) as client,
    ):
        session = client.session("sonnet", workspace=tmp_path)
        first = session.send("What is in README.md?")
        call = next(b for b in first.content if isinstance(b, ToolUseBlock))
        session.add_tool_result(call.id, "# metis\n\nCanonical LLM conversations.")
        final = session.send(stream=True)
        assert cassette.all_played and cassette.play_count == 2

        loaded = store.load_session(session.id)
    assert [m.role for m in loaded] == [Role.user, Role.assistant, Role.tool, Role.assistant]
    assert final.metadata.status == MessageStatus.complete
    assert [b.text for b in final.content if isinstance(b, TextBlock)] == ["It is the README of metis."]
    assert final.metadata.usage is not None and final.metadata.usage.output_tokens == 12
    assert session.tool_ids.provider_id(call.id, "anthropic") == PROVIDER_TOOL_ID
    assert any(f'"tool_use_id":"{PROVIDER_TOOL_ID}"'.encode() in body for body in sent)


def test_cassette_refuses_unrecorded_requests(tmp_path: Path) -> None:
    recorder = vcr.VCR(record_mode="none")
    with (
        recorder.use_cassette(str(CASSETTES / "anthropic_tool_loop.yaml")),
        Store.open(tmp_path / "metis.sqlite3") as store,
        Client(store, api_keys={"openai": "sk-test"}, max_retries=0) as client,
        pytest.raises(vcr.errors.CannotOverwriteExistingCassetteException),
    ):
        client.session("gpt5").send("this was never recorded")
