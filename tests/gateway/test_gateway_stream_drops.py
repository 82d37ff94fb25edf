"""`metis serve` answering with a reply its client's format cannot wholly carry: each block
left out is said once (spec §7.3), naming the message the gateway stored and the block's
index in it. The official `openai` SDK (Responses and Chat Completions), over real HTTP on
loopback, asks a scripted upstream replaying Anthropic's documented web search replies
(server tool calls and their results: Anthropic's own, which neither format carries, and
kept for replay, which a stream does not have), whole and streamed.
"""

from __future__ import annotations

import logging
import re

import pytest
from metis.store import open_store

from tests.support.gateway_support import Gateway, ScriptedUpstream
from tests.support.gateway_support import openai_client as _openai

_AT = re.compile(r"^dropped (\S+) at block #(\d+) of message (\S+) for ")


def _drops(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    out = []
    for record in caplog.records:
        if record.name != "metis.adapters" or record.levelno != logging.WARNING:
            continue
        found = _AT.match(record.getMessage())
        assert found, record.getMessage()
        assert record.message_id == found.group(3)  # type: ignore[attr-defined]
        out.append((found.group(1), int(found.group(2)), found.group(3)))
    return sorted(out)


def _stored_reply(gateway: Gateway, message_id: str) -> list[str]:
    """The block types of the stored message `message_id`."""
    with open_store(gateway.store) as store:
        message = store.get_message(message_id)
    return [block.type for block in message.content]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("client_format", ["responses", "chat"])
def test_a_reply_says_each_block_it_leaves_out_once_naming_the_stored_message(
    gateway: Gateway,
    upstream: ScriptedUpstream,
    caplog: pytest.LogCaptureFixture,
    client_format: str,
    streamed: bool,
) -> None:
    """Said by the reply's writer or stream encoder, not again when the gateway writes the
    reply as its client holds it (to know the conversation when it comes back)."""
    golden = "anthropic/stream_server_tools.sse" if streamed else "anthropic/response_server_tools.json"
    upstream.reply("/v1/messages", golden)
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    client = _openai(gateway)
    model, ask = "anthropic:claude-sonnet-4-6", "Search the news"
    if client_format == "responses":
        if streamed:
            with client.responses.stream(model=model, input=ask) as stream:
                final = stream.get_final_response()
        else:
            final = client.responses.create(model=model, input=ask)
        assert final.output_text
        message_id = final.id.removeprefix("resp_")
    else:
        messages = [{"role": "user", "content": ask}]
        if streamed:
            chunks = list(client.chat.completions.create(model=model, messages=messages, stream=True))
            assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            reply_id = chunks[0].id
        else:
            completion = client.chat.completions.create(model=model, messages=messages)
            assert completion.choices[0].message.content
            reply_id = completion.id
        message_id = reply_id.removeprefix("chatcmpl-")
    types = _stored_reply(gateway, message_id)
    left_out = sorted(
        (kind, index, message_id)
        for index, kind in enumerate(types)
        if kind in {"server_tool_use", "server_tool_result"}
    )
    assert left_out
    assert _drops(caplog) == left_out
