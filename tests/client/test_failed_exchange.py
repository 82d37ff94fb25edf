"""A failed streamed exchange finalizes its row as ERROR, never leaving PARTIAL behind
(issue 17, item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from metis.client import CheckpointPolicy, Client
from metis.errors import MetisError
from metis.store import Store
from metis_schema.v3 import MessageStatus, Role

from tests.support.client_support import FakeTime, ScriptedProvider, chat_chunk, stream_reply


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return chat_chunk(delta, finish, model="gpt-4.1")


LONG_NAME_CALL = [
    _chunk({"role": "assistant", "content": "working"}),
    _chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "f" * 200, "arguments": "{}"},
                }
            ]
        }
    ),
    _chunk({}, "tool_calls"),
    b"data: [DONE]\n\n",
]
MALFORMED_MIDWAY = [
    _chunk({"role": "assistant", "content": "half"}),
    b"data: {not json\n\n",
    b"data: [DONE]\n\n",
]


@pytest.mark.parametrize(
    "chunks", [LONG_NAME_CALL, MALFORMED_MIDWAY], ids=["unassemblable", "malformed-event"]
)
def test_a_failed_stream_is_stored_as_error(tmp_path: Path, chunks: list[bytes]) -> None:
    fake = FakeTime()
    provider = ScriptedProvider().add(stream_reply(chunks))
    with (
        Store.open(tmp_path / "m.sqlite3") as store,
        Client(
            store,
            transport=provider.transport(),
            sleep=fake.sleep,
            clock=fake.clock,
            api_keys={"openai": "sk-test-key-123"},
            checkpoints=CheckpointPolicy(events=1, seconds=60),
        ) as client,
    ):
        session = client.session("openai:gpt-4.1")
        with pytest.raises(MetisError):
            session.send("go", stream=True)
        replies = [m for m in store.load_session(session.id) if m.role == Role.assistant]
        assert [m.metadata.status for m in replies] == [MessageStatus.error]
        assert (replies[0].metadata.provider_raw or {}).get("error")
