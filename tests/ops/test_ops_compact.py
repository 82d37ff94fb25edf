"""Compact (issue 19): a model's summary stands in for the earlier turns; nothing stored goes.

The summarizer is a scripted provider (httpx.MockTransport), never the network. What is
pinned: the summarizer is sent a transcript of exactly the covered turns; the reply is
stored as an ASSISTANT message holding one v2 compaction block, with the summary call's
usage and cost; every earlier message stays stored; later requests carry the summary and
the kept turns instead of the covered ones; a tool call and its results are never split;
a second compaction can cover the first one's summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from metis.client import AsyncClient
from metis.errors import ClientError
from metis.ops import compact
from metis.store import Store
from metis_schema.v3 import CompactionBlock, Role, TextBlock

from tests.support.client_support import KEYS, FakeTime, ScriptedProvider, json_reply, scripted_client
from tests.support.store_support import conversation


def text_body(text: str, input_tokens: int = 100, output_tokens: int = 20) -> dict[str, Any]:
    """An Anthropic Messages reply holding one text block."""
    return {
        "id": "msg_01CompactTestReply00000001",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def texts(body: dict[str, Any]) -> list[str]:
    """The text of each wire message of an Anthropic request body."""
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.append(" ".join(b.get("text", "") for b in content))
    return out


def test_compact_summarizes_the_covered_turns_and_later_requests_send_the_summary(store: Store) -> None:
    provider = ScriptedProvider().add(
        *(json_reply(text_body(f"answer {n}")) for n in (1, 2, 3)),
        json_reply(text_body("SUMMARY: asked 1 and 2, got answers 1 and 2.", 700, 30)),
        json_reply(text_body("answer 4")),
    )
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        for n in (1, 2, 3):
            session.send(f"question {n}")
        before = session.messages()
        compaction = session.compact(keep_last=2, summarizer="sonnet")
        session.send("question 4")

    # The summarizer saw exactly the covered turns, as one transcript.
    (request,) = texts(provider.body(3))
    assert compact.INSTRUCTIONS in request
    for covered in ("USER: question 1", "ASSISTANT: answer 1", "USER: question 2", "ASSISTANT: answer 2"):
        assert covered in request
    assert "question 3" not in request and "answer 3" not in request

    # Stored: one ASSISTANT message with a compaction block and the summary call's cost.
    (block,) = compaction.content
    assert isinstance(block, CompactionBlock) and block.provider == compact.COMPACTOR
    assert block.summary == "SUMMARY: asked 1 and 2, got answers 1 and 2."
    assert json.loads(block.data or "") == {"through": before[3].id}
    usage = compaction.metadata.usage
    assert compaction.role == Role.assistant and compaction.metadata.model == "anthropic:claude-sonnet-4-6"
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (700, 30) and usage.cost_usd > 0
    stored = store.load_session(session.id)
    assert stored[: len(before)] == before and stored[len(before)] == compaction  # nothing removed
    assert len(stored) == len(before) + 3

    # The next request: the summary, then the kept turns, then the new one.
    sent = texts(provider.body(4))
    assert sent[0] == f"{compact.SUMMARY_HEADING}\n\n{block.summary}"
    assert sent[1:] == ["question 3", "answer 3", "question 4"]


def test_a_second_compaction_covers_the_first_ones_summary(store: Store) -> None:
    provider = ScriptedProvider().add(
        json_reply(text_body("answer 1")),
        json_reply(text_body("answer 2")),
        json_reply(text_body("FIRST SUMMARY")),
        json_reply(text_body("answer 3")),
        json_reply(text_body("SECOND SUMMARY")),
        json_reply(text_body("answer 4")),
    )
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        session.send("question 1")
        session.send("question 2")
        session.compact(keep_last=1)
        session.send("question 3")
        session.compact(keep_last=1)
        session.send("question 4")
    (second_request,) = texts(provider.body(4))
    assert "FIRST SUMMARY" in second_request and "question 3" in second_request
    assert "question 1" not in second_request  # covered by the first summary already
    assert texts(provider.body(5)) == [
        f"{compact.SUMMARY_HEADING}\n\nSECOND SUMMARY",
        "answer 3",
        "question 4",
    ]


def test_the_cut_never_separates_tool_results_from_their_call(tmp_path: Path) -> None:
    history = conversation("sess_cut", 2)  # user, call, result, answer; twice
    plan = compact.plan(history, 2, "sess_cut")  # the last 2 start at a tool result: the cut moves back
    assert plan.through == history[4].id  # the second question is covered, its call is kept
    assert [m.id for m in plan.covered] == [m.id for m in history[:5]]
    projected = compact.project([*history, _compaction_of(history, plan.through)])
    assert [m.role for m in projected] == [Role.user, Role.assistant, Role.tool, Role.assistant]


def _compaction_of(history: list[Any], through: str) -> Any:
    reply = history[-1]
    block = CompactionBlock(
        type="compaction", provider=compact.COMPACTOR, summary="S", data=json.dumps({"through": through})
    )
    return reply.model_copy(update={"id": "01M86ZZZZZZZZZZZZZZZZZZZZZ", "content": [block]})


def test_nothing_to_compact_sends_nothing(store: Store) -> None:
    provider = ScriptedProvider().add(json_reply(text_body("answer 1")))
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        session.send("question 1")
        with pytest.raises(ClientError, match="nothing to compact"):
            session.compact(keep_last=2)
    assert len(provider.requests) == 1 and len(store.load_session(session.id)) == 2


def test_a_reply_without_text_stores_no_compaction(store: Store) -> None:
    body = text_body("answer 1")
    empty = {**text_body("x"), "content": [{"type": "text", "text": "  "}]}
    provider = ScriptedProvider().add(json_reply(body), json_reply(body), json_reply(empty))
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        session.send("question 1")
        session.send("question 2")
        with pytest.raises(ClientError, match="no summary text"):
            session.compact(keep_last=1)
    assert len(store.load_session(session.id)) == 4


async def test_async_sessions_compact_too(store: Store) -> None:
    provider = ScriptedProvider().add(
        json_reply(text_body("answer 1")), json_reply(text_body("answer 2")), json_reply(text_body("S"))
    )
    fake = FakeTime()
    async with AsyncClient(
        store, transport=provider.transport(), api_keys=KEYS, sleep=fake.asleep, clock=fake.clock
    ) as client:
        session = client.session("sonnet")
        await session.send("question 1")
        await session.send("question 2")
        compaction = await session.compact(keep_last=2)
    assert isinstance(compaction.content[0], CompactionBlock)
    assert [m.role for m in compact.project(store.load_session(session.id))] == [
        Role.user,
        Role.user,
        Role.assistant,
    ]
    assert isinstance(compact.project(store.load_session(session.id))[0].content[0], TextBlock)


def test_a_fork_after_a_compaction_sends_what_its_parent_sends(store: Store) -> None:
    provider = ScriptedProvider().add(
        json_reply(text_body("answer 1")),
        json_reply(text_body("answer 2")),
        json_reply(text_body("THE SUMMARY")),
        json_reply(text_body("answer 3")),
    )
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        session.send("question 1")
        session.send("question 2")
        compaction = session.compact(keep_last=2)
        forked = session.fork(at=compaction.id)
        forked.send("question 3")
    assert texts(provider.body(3)) == [
        f"{compact.SUMMARY_HEADING}\n\nTHE SUMMARY",
        "question 2",
        "answer 2",
        "question 3",
    ]


def test_metis_compact_on_imported_traffic(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tests.cli.test_cli import ANTHROPIC_BODY, imported, run

    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(ANTHROPIC_BODY))
    (session,) = imported(runner, db, "anthropic", path)
    replay = tmp_path / "summary.json"
    exchange = {
        "request": {"path": "/v1/messages", "body_contains": ["Summarize the conversation", "sunny, 21C"]},
        "response": {
            "json": text_body("The user asked for the weather where a photo was taken: Paris, sunny.")
        },
    }
    replay.write_text(json.dumps([exchange]))

    result = run(
        runner, "--db", db, "compact", session, "--keep-last", "2", env={"METIS_REPLAY_FILE": str(replay)}
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == "The user asked for the weather where a photo was taken: Paris, sunny.\n"
    assert result.stderr.startswith(f"compacted {session} with anthropic:claude-sonnet-4-6 ($")
    with Store.open(db) as store:
        stored = store.load_session(session)
        assert len(stored) == 7  # the six imported messages stay, the compaction follows
        projected = compact.project(stored)
        assert [m.role for m in projected] == [Role.system, Role.user, Role.assistant, Role.user]
        assert projected[1].content[0].text.startswith(compact.SUMMARY_HEADING)  # type: ignore[union-attr]


def test_exports_after_a_compaction(store: Store) -> None:
    from metis.ops import chat_records, dataset_line

    provider = ScriptedProvider().add(
        json_reply(text_body("answer 1")),
        json_reply(text_body("answer 2")),
        json_reply(text_body("THE SUMMARY")),
        json_reply(text_body("answer 3")),
    )
    with scripted_client(store, provider) as client:
        session = client.session("sonnet")
        session.send("question 1")
        session.send("question 2")
        session.compact(keep_last=2)
        session.send("question 3")
    history = store.load_session(session.id)

    # A dataset learns from the conversation as it happened: every turn, no compaction.
    assert [m["content"] for m in dataset_line(history)["messages"]] == [
        "question 1",
        "answer 1",
        "question 2",
        "answer 2",
        "question 3",
        "answer 3",
    ]
    # Telemetry shows what each call was sent: the summarizer its transcript, the next
    # call the summary and the kept turns.
    records = [r["attributes"] for r in chat_records(session.id, history)]
    assert len(records) == 4
    (request,) = records[2]["gen_ai.input.messages"]
    assert request["parts"][0]["content"] == texts(provider.body(2))[0]
    sent = [p["content"] for m in records[3]["gen_ai.input.messages"] for p in m["parts"]]
    assert sent == texts(provider.body(3))
