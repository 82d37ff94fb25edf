"""Reply writers (the gateway's direction): every recorded reply of every provider, read to
a canonical message, written back as an Anthropic, Chat Completions and Responses reply —
whole and streamed — must be what the official SDKs accept, and must read back to the
same conversation.

Inputs are the providers' golden replies and streams (tests/golden/*), so each writer is
exercised on what real providers send: text, tool calls, reasoning, citations, server
tools, refusals, length stops. Checks:
- whole: the SDK's reply model validates the body (anthropic BetaMessage, openai
  ChatCompletion and Response); the inbound adapter reads it back to the same text, tool
  calls (name, input), stop reason class and token totals;
- streamed: every event validates against the SDK's stream event union, the SDK's own
  accumulator (anthropic `accumulate_event`, openai `ChatCompletionStreamState`) builds
  the same content as the whole reply, and metis's own decoder reads the stream back to
  the same message as the whole reply.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
import metis
import orjson
import pytest
from anthropic.lib.streaming._beta_messages import accumulate_event
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
from metis.adapters import AdapterOptions
from metis.adapters._kit.reply import KEPT_WHOLE, ReplyOptions
from metis.assembly import RequestContext, StreamAssembler
from metis.errors import AdapterError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, StopReason, StreamEvent
from openai import LengthFinishReasonError
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from tests.support.golden import ROOT

SESSION = "sess_replies"
NOW = datetime(2026, 11, 1, tzinfo=UTC)

MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:openai/gpt-5-mini",
    "mistral": "mistral:magistral-medium-latest",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
    "responses": "responses:gpt-5",
}
"""A catalog model per upstream provider, for reading its golden replies."""

INBOUND = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "responses": "responses:gpt-5",
}
"""The formats `metis serve` answers in, each with a model of its own provider."""

REPLY_ID = {"anthropic": "msg_01reply", "openai": "chatcmpl-01reply", "responses": "resp_01reply"}
MESSAGE_ID = "01KB0000000000000000000RPY"
"""The id of every reply message read here (a reply writer is told it: `ReplyOptions.message_id`)."""


def _context(provider: str, ids: ToolIdMap) -> RequestContext:
    return RequestContext(
        session_id=SESSION, model=MODELS[provider], tool_ids=ids, created_at=NOW, message_id=MESSAGE_ID
    )


def _replies() -> Iterator[tuple[str, str]]:
    for provider in MODELS:
        for path in sorted((ROOT / provider).glob("response_*.json")):
            if ".golden." not in path.name:
                yield provider, path.name


def _streams() -> Iterator[tuple[str, str]]:
    for provider in MODELS:
        for path in sorted((ROOT / provider).iterdir()):
            if (
                path.name.startswith("stream_")
                and path.suffix in {".sse", ".ndjson"}
                and "error" not in path.name
            ) and "failed" not in path.name:
                yield provider, path.name


def _read_reply(provider: str, name: str, ids: ToolIdMap) -> Message:
    body = orjson.loads((ROOT / provider / name).read_bytes())
    return metis.adapters.get(provider).from_wire_response(body, _context(provider, ids))


def _reply_options(
    inbound: str, message_provider: str | None, ids: ToolIdMap, endpoint: str | None
) -> ReplyOptions:
    return ReplyOptions(
        options=AdapterOptions(model=INBOUND[inbound], session_id=SESSION, tool_ids=ids, endpoint=endpoint),
        model_name=INBOUND[inbound].split(":", 1)[1],
        reply_id=REPLY_ID[inbound],
        message_id=MESSAGE_ID,
        created=1_790_000_000,
        producer=message_provider,
    )


def _conversation(message: Message, ids: ToolIdMap) -> dict[str, Any]:
    """What a reply must keep whatever format carries it: texts, tool calls by name and
    input (ids compared through the map), and the token totals."""
    texts = [b.text for b in message.content if b.type == "text" and b.text]
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    usage = message.metadata.usage
    total = (
        (usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_input_tokens) if usage else 0
    )
    return {
        "text": "".join(texts),
        "calls": calls,
        "input": total,
        "output": usage.output_tokens if usage else 0,
    }


_STOP_CLASS = {
    StopReason.end_turn: "end",
    StopReason.stop_sequence: "end",
    StopReason.pause_turn: "end",
    StopReason.tool_use: "tool",
    StopReason.max_tokens: "length",
    StopReason.context_window_exceeded: "length",
}
"""Stop reasons every format can tell apart (finer ones map to the nearest a format has)."""


def _stop_class(reason: StopReason | None) -> str:
    """`other` (a provider's own reason, such as Ollama's `load`) is written as a plain end."""
    return _STOP_CLASS.get(reason, "end") if reason is not None else "end"


def _validate_whole(inbound: str, body: dict[str, Any]) -> None:
    {"anthropic": BetaMessage, "openai": ChatCompletion, "responses": Response}[inbound].model_validate(body)


@pytest.mark.parametrize("inbound", list(INBOUND))
@pytest.mark.parametrize(("provider", "name"), list(_replies()))
def test_whole_reply_is_what_the_sdk_reads_and_reads_back(provider: str, name: str, inbound: str) -> None:
    ids = ToolIdMap(SESSION)
    message = _read_reply(provider, name, ids)
    adapter = metis.adapters.get(inbound)
    body = adapter.to_wire_reply(message, _reply_options(inbound, provider, ids, message.metadata.endpoint))
    _validate_whole(inbound, body)
    assert body["model"] == INBOUND[inbound].split(":", 1)[1]
    assert body["id"] == REPLY_ID[inbound]

    expected = _conversation(message, ids)
    if inbound == "anthropic" and not body["content"]:
        # An empty Anthropic reply is valid (the SDK reads it); metis's reader refuses one.
        assert not expected["text"] and not expected["calls"]
        return
    back = adapter.from_wire_response(body, _context(inbound, ToolIdMap(SESSION)))
    got = _conversation(back, ids)
    if message.metadata.stop_reason is StopReason.refusal and inbound == "anthropic":
        expected["text"] = got["text"]  # a refusal's text: Anthropic has no field for it
    assert got == expected
    refused = message.metadata.stop_reason in {StopReason.refusal, StopReason.content_filter}
    if not refused:
        assert _stop_class(back.metadata.stop_reason) == _stop_class(message.metadata.stop_reason)


def test_tool_call_ids_are_the_ones_the_client_sends_back() -> None:
    # The client answers a call by the id the reply gave it: the session's map must read
    # that id back as the same canonical call, for every inbound format.
    for inbound in INBOUND:
        ids = ToolIdMap(SESSION)
        message = _read_reply("anthropic", "response_thinking.json", ids)
        calls = [b.id for b in message.content if b.type == "tool_use"]
        assert calls
        body = metis.adapters.get(inbound).to_wire_reply(
            message, _reply_options(inbound, "anthropic", ids, None)
        )
        text = orjson.dumps(body).decode()
        for canonical in calls:
            wire = ids.outgoing(canonical, inbound)
            assert wire in text
            assert ids.resolve_incoming(inbound, wire) == canonical


def test_opaque_reasoning_goes_only_to_a_client_of_its_own_endpoint() -> None:
    ids = ToolIdMap(SESSION)
    message = _read_reply("anthropic", "response_thinking.json", ids)
    assert any(b.type == "thinking" for b in message.content)
    own = metis.adapters.get("anthropic").to_wire_reply(
        message, _reply_options("anthropic", "anthropic", ids, None)
    )
    assert any(block["type"] == "thinking" and block["signature"] for block in own["content"])
    proxy = _reply_options("anthropic", "anthropic", ids, "https://proxy.example.com/v1")
    assert all(
        b["type"] != "thinking"
        for b in metis.adapters.get("anthropic").to_wire_reply(message, proxy)["content"]
    )


def test_a_chat_refusal_is_written_as_a_refusal() -> None:
    ids = ToolIdMap(SESSION)
    message = _read_reply("openai", "response_refusal.json", ids)
    body = metis.adapters.get("openai").to_wire_reply(message, _reply_options("openai", "openai", ids, None))
    choice = body["choices"][0]["message"]
    assert choice["content"] is None and choice["refusal"]


def test_adapters_that_do_not_answer_clients_say_so() -> None:
    ids = ToolIdMap(SESSION)
    message = _read_reply("gemini", "response_text_signature.json", ids)
    with pytest.raises(AdapterError, match="does not write replies"):
        metis.adapters.get("gemini").to_wire_reply(message, _reply_options("openai", "gemini", ids, None))


# --- streams -------------------------------------------------------------------------------

_ANTHROPIC_EVENT: TypeAdapter[Any] = TypeAdapter(BetaRawMessageStreamEvent)
_RESPONSES_EVENT: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def _frames(raw: bytes) -> list[dict[str, Any]]:
    out = []
    for frame in raw.split(b"\n\n"):
        data = [line[6:] for line in frame.split(b"\n") if line.startswith(b"data: ")]
        if data and data[0] != b"[DONE]":
            out.append(orjson.loads(data[0]))
    return out


def _encode(inbound: str, events: list[StreamEvent], message: Message, reply: ReplyOptions) -> bytes:
    encoder = metis.adapters.get(inbound).reply_encoder(reply)
    return encoder.start() + b"".join(encoder.feed(e) for e in events) + encoder.finish(message)


def _sdk_content(inbound: str, raw: bytes) -> Any:
    """What the SDK's own stream handling builds from the stream."""
    frames = _frames(raw)
    if inbound == "anthropic":
        snapshot, bufs = None, {}
        for frame in frames:
            event = _ANTHROPIC_EVENT.validate_python(frame)
            snapshot = accumulate_event(
                event=event, current_snapshot=snapshot, json_bufs=bufs, request_headers=httpx.Headers()
            )
        assert snapshot is not None
        return snapshot.model_dump(exclude_none=True)["content"]
    if inbound == "openai":
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        for frame in frames:
            state.handle_chunk(ChatCompletionChunk.model_validate(frame))
        try:
            completion = state.get_final_completion()
        except LengthFinishReasonError as exc:  # the SDK's signal for a reply cut at a limit
            completion = exc.completion
        message = completion.choices[0].message
        calls = [(c.function.name, orjson.loads(c.function.arguments)) for c in message.tool_calls or []]
        return {"content": message.content, "calls": calls}
    numbers = [frame["sequence_number"] for frame in frames]
    assert numbers == list(range(len(frames)))
    done: dict[int, Any] = {}
    for frame in frames:
        event = _RESPONSES_EVENT.validate_python(frame)
        if event.type == "response.output_item.done":
            done[event.output_index] = event.item.model_dump(exclude_none=True)
    final = Response.model_validate(frames[-1]["response"]).model_dump(exclude_none=True)
    streamed_items = [_same_arguments(done[i]) for i in sorted(done)]
    assert streamed_items == [_same_arguments(i) for i in final["output"]], (
        "the items streamed are the reply's items"
    )
    return [_same_arguments(i) for i in final["output"]]


def _same_arguments(item: dict[str, Any]) -> dict[str, Any]:
    """A function call's arguments by meaning: the stream carries the upstream's own text
    (spacing included), the whole reply the writer's JSON of the same input."""
    if item.get("type") == "function_call":
        return {**item, "arguments": orjson.loads(item["arguments"])}
    return item


def _whole_content(inbound: str, body: dict[str, Any]) -> Any:
    if inbound == "anthropic":
        return BetaMessage.model_validate(body).model_dump(exclude_none=True)["content"]
    if inbound == "openai":
        message = ChatCompletion.model_validate(body).choices[0].message
        calls = [(c.function.name, orjson.loads(c.function.arguments)) for c in message.tool_calls or []]  # type: ignore[union-attr]
        return {"content": message.content, "calls": calls}
    return [_same_arguments(i) for i in Response.model_validate(body).model_dump(exclude_none=True)["output"]]


@pytest.mark.parametrize("inbound", list(INBOUND))
@pytest.mark.parametrize(("provider", "name"), list(_streams()))
def test_streamed_reply_is_the_whole_reply_for_the_sdk(provider: str, name: str, inbound: str) -> None:
    upstream = metis.adapters.get(provider)
    raw = (ROOT / provider / name).read_bytes()
    ids = ToolIdMap(SESSION)
    context = _context(provider, ids)
    decoder = upstream.stream_decoder(context)
    events = [*decoder.feed(raw), *decoder.close()]
    assembler = StreamAssembler(context, provider)
    assembler.feed_all(events)
    message = assembler.finish(decoder.provider_raw())
    reply = replace(_reply_options(inbound, provider, ids, message.metadata.endpoint), include_usage=True)
    streamed = _encode(inbound, events, message, reply)

    # A stream has no kept provider items until it ends: it carries what the message says
    # without them (KEPT_WHOLE blocks and provider_raw), each left out with its WARN.
    said = message.model_copy(
        update={
            "content": [b for b in message.content if b.type not in KEPT_WHOLE],
            "metadata": message.metadata.model_copy(update={"provider_raw": None}),
        }
    )
    whole = metis.adapters.get(inbound).to_wire_reply(said, reply)
    assert _sdk_content(inbound, streamed) == _whole_content(inbound, whole)

    back = metis.adapters.get(inbound).assemble_stream([streamed], _context(inbound, ToolIdMap(SESSION)))
    read_whole = metis.adapters.get(inbound).from_wire_response(whole, _context(inbound, ToolIdMap(SESSION)))
    assert _conversation(back, ids) == _conversation(read_whole, ids)
    assert back.metadata.stop_reason == read_whole.metadata.stop_reason


def test_a_failing_stream_ends_in_the_clients_error_event(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    for inbound in INBOUND:
        encoder = metis.adapters.get(inbound).reply_encoder(
            _reply_options(inbound, "gemini", ToolIdMap(SESSION), None)
        )
        raw = encoder.start() + encoder.fail("overloaded_error", "upstream overloaded")
        frames = _frames(raw)
        assert any("upstream overloaded" in orjson.dumps(f).decode() for f in frames)
        if inbound == "anthropic":
            assert frames[-1] == {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "upstream overloaded"},
            }
        if inbound == "responses":
            for frame in frames:
                _RESPONSES_EVENT.validate_python(frame)


@pytest.mark.parametrize("inbound", list(INBOUND))
def test_a_streamed_reply_drops_the_reasoning_it_cannot_carry_with_a_warn(
    inbound: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Reasoning a streamed reply cannot carry (another provider's, for a Responses client;
    any, for a Chat client) is dropped with one §7.3 WARN per block, never silently."""
    ids = ToolIdMap(SESSION)
    context = _context("anthropic", ids)
    decoder = metis.adapters.get("anthropic").stream_decoder(context)
    events = [*decoder.feed((ROOT / "anthropic" / "stream_thinking.sse").read_bytes()), *decoder.close()]
    assembler = StreamAssembler(context, "anthropic")
    assembler.feed_all(events)
    message = assembler.finish(decoder.provider_raw())
    reasoning = [b.type for b in message.content if b.type in {"thinking", "redacted_thinking"}]
    assert reasoning
    caplog.set_level(logging.WARNING)
    _encode(inbound, events, message, _reply_options(inbound, "anthropic", ids, message.metadata.endpoint))
    drops = [r for r in caplog.records if r.getMessage().startswith(("dropped thinking", "dropped redacted"))]
    said = sorted(r.getMessage().split(" at ")[0] for r in drops)
    assert said == ([] if inbound == "anthropic" else sorted(f"dropped {t}" for t in reasoning))
