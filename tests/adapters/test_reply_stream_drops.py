"""A streamed reply says each block it drops once (spec §7.3), naming the stored message and
the block's index in it.

Every reply encoder (`anthropic`, `openai` Chat Completions, `responses`) is fed the
canonical events of providers' golden streams holding blocks no streamed reply carries:
server tool calls and results and compactions (kept for replay, which a stream does not
have until it ends), and reasoning (a Chat reply has no field for it, a Responses stream
no item, an Anthropic client takes only Anthropic's own). Captured at WARN, each dropped
block must be said exactly once (not once as it arrives and again when the stream ends),
as `dropped <type> at block #<its index> of message <the reply's message id>` with the
same id in the record's `message_id`: never the index 0 and the all-zero id of the
one-block message a block that arrived whole is rendered through.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import metis
import pytest
from metis.adapters import AdapterOptions
from metis.adapters._kit.reply import KEPT_WHOLE, ReplyOptions
from metis.assembly import RequestContext, StreamAssembler
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, StreamEvent

from tests.support.golden import ROOT

SESSION = "sess_stream_drops"
MESSAGE_ID = "01KB0000000000000000000DRP"

UPSTREAM = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "responses": "responses:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "openrouter": "openrouter:openai/gpt-5-mini",
}
"""A catalog model per upstream provider whose golden stream is read."""

INBOUND = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "responses": "responses:gpt-5",
}
"""The formats a streamed reply is written in, each with a model of its own provider."""

STREAMS = [
    ("anthropic", "stream_server_tools.sse"),  # 4 server tool calls and their results, then text
    ("anthropic", "stream_thinking.sse"),  # thinking, redacted thinking, text, a tool call
    ("responses", "stream_compaction.sse"),  # a compaction, reasoning, text
    ("gemini", "stream_code_execution.sse"),  # text, code execution call and result, text
    ("openrouter", "stream_gemini.sse"),  # reasoning and its encrypted detail, a tool call
]

_REASONING = frozenset({"thinking", "redacted_thinking"})
_AT = re.compile(r"^dropped (\S+) at block #(\d+) of message (\S+) for ")


def _streamed(provider: str, name: str) -> tuple[list[StreamEvent], Message, ToolIdMap]:
    """The golden stream's canonical events and the message they assemble to."""
    ids = ToolIdMap(SESSION)
    context = RequestContext(
        session_id=SESSION, model=UPSTREAM[provider], tool_ids=ids, message_id=MESSAGE_ID
    )
    decoder = metis.adapters.get(provider).stream_decoder(context)
    events = [*decoder.feed((ROOT / provider / name).read_bytes()), *decoder.close()]
    assembler = StreamAssembler(context, provider)
    assembler.feed_all(events)
    return events, assembler.finish(decoder.provider_raw()), ids


def _dropped(inbound: str, provider: str, message: Message) -> list[tuple[str, int, str]]:
    """What a streamed reply cannot carry: every block kept for replay, and reasoning but
    Anthropic's to an Anthropic client (a Responses stream writes no reasoning item, the
    whole reply's being replayed from what the message kept)."""
    own = inbound == provider == "anthropic"
    return sorted(
        (block.type, index, MESSAGE_ID)
        for index, block in enumerate(message.content)
        if block.type in KEPT_WHOLE or (block.type in _REASONING and not own)
    )


def _said(records: list[logging.LogRecord]) -> list[tuple[str, int, str]]:
    """The block drops said: type, index and message each names (a text's citations, a
    summary per message and no block of their own, are not counted here)."""
    out = []
    for record in records:
        if getattr(record, "block_type", "").startswith("text/citation"):
            continue
        found = _AT.match(record.getMessage())
        assert found, f"not a block drop naming its message and index: {record.getMessage()!r}"
        block_type, index, message_id = found.groups()
        assert record.block_type == block_type  # type: ignore[attr-defined]
        assert record.message_id == message_id  # type: ignore[attr-defined]
        out.append((block_type, int(index), message_id))
    return sorted(out)


def _reply(inbound: str, provider: str, ids: ToolIdMap, message: Message) -> ReplyOptions:
    options = AdapterOptions(
        model=INBOUND[inbound], session_id=SESSION, tool_ids=ids, endpoint=message.metadata.endpoint
    )
    return ReplyOptions(
        options=options,
        model_name=INBOUND[inbound].split(":", 1)[1],
        reply_id=f"reply_{MESSAGE_ID}",
        message_id=MESSAGE_ID,
        created=1_790_000_000,
        producer=provider,
    )


@pytest.mark.parametrize("inbound", list(INBOUND))
@pytest.mark.parametrize(("provider", "name"), STREAMS)
def test_each_block_a_stream_drops_is_said_once_at_its_index(
    provider: str, name: str, inbound: str, caplog: pytest.LogCaptureFixture
) -> None:
    events, message, ids = _streamed(provider, name)
    expected = _dropped(inbound, provider, message)
    if (provider, name) != ("anthropic", "stream_thinking.sse") or inbound != "anthropic":
        assert expected, "each case drops something"
    encoder = metis.adapters.get(inbound).reply_encoder(_reply(inbound, provider, ids, message))
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    caplog.clear()
    encoder.start()
    for event in events:
        encoder.feed(event)
    encoder.finish(message)
    records = [r for r in caplog.records if r.name == "metis.adapters" and r.levelno == logging.WARNING]
    assert _said(records) == expected


def test_a_stream_that_drops_server_tools_says_each_once_not_again_at_its_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The measured case: Anthropic's web search stream (8 server blocks) written as a
    Responses stream said 16 WARNs, 8 as the blocks came and 8 more when `finish` wrote the
    whole reply again for its envelope; `finish` now writes none of the blocks again."""
    events, message, ids = _streamed("anthropic", "stream_server_tools.sse")
    encoder = metis.adapters.get("responses").reply_encoder(_reply("responses", "anthropic", ids, message))
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    encoder.start()
    for event in events:
        encoder.feed(event)
    while_streaming = len(caplog.records)
    closing: Any = encoder.finish(message)
    assert while_streaming == 8
    assert len(caplog.records) == 8, [r.getMessage() for r in caplog.records[8:]]
    assert b"response.completed" in closing
