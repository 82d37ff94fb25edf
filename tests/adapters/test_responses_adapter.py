"""The Responses API adapter (OpenAI's endpoint and Open Responses servers).

Goldens: every wire input under tests/golden/responses/ (built through the openai SDK's
Response and stream event models, in the shapes of OpenAI's API reference) is read and
compared with the expected output beside it; streams also split anywhere, and every
stream golden with a whole reply beside it assembles to exactly that reply (server tool
calls and their results, compaction and cited text arrive as `block` events). The
built-in results pair (stream_/response_built_in_results) follows the openai SDK's item and
event types (openai-python src/openai/types/responses/: response_function_web_search.py,
response_file_search_tool_call.py, response_code_interpreter_tool_call.py,
response_output_item.py ImageGenerationCall and McpCall, and the matching
response_*_call_* stream events), each checked by the SDK models. Behaviour: the
stateless writer, reasoning replayed to its own model only, phase, the dialect rows,
sequence numbers, incomplete/failed responses, previous_response_id on import, malformed
input as WireFormatErrors at their paths, and a session that goes Anthropic (signed
thinking) -> Responses (encrypted reasoning) -> Anthropic where each provider gets back
exactly its own reasoning.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
from typing import Any

import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.assembly import RequestContext
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis_schema.v3 import Message, MessageStatus, Role, StopReason, ToolDefinition

from tests.support import golden
from tests.support.contracts import anthropic as anthropic_contract
from tests.support.contracts import responses as contract
from tests.support.messages import build_message
from tests.support.openai_chat_support import (
    SESSION,
    canonical,
    chunkings,
    context,
    events_document,
    fixed_tool_ids,
    import_document,
    normalize_tool_ids,
    recorded,
)

__all__ = ["fixed_tool_ids"]

PROVIDER = "responses"
MODEL = "responses:gpt-5"
ADAPTER = adapters.get(PROVIDER)


OPENAI_ONLY = ("web_search", "code_interpreter", "built_in", "openai")
"""Golden names holding what only OpenAI's wire has (its built-in tools, its `error` event
shape): checked by the openai SDK alone, not by Open Responses' types."""


def _open_responses(name: str) -> bool:
    return not any(marker in name for marker in OPENAI_ONLY)


def _events_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")]


# --- goldens ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "response"))
def test_reply_golden(name: str, fixed_tool_ids: None) -> None:
    body = recorded(PROVIDER, name)
    contract.check_response(body, open_responses=_open_responses(name))
    message = ADAPTER.from_wire_response(body, context(MODEL))
    golden.check(PROVIDER, golden.expected_name(name), canonical(message))
    assert message.metadata.status == MessageStatus.complete


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "stream"))
def test_stream_events_golden(name: str, fixed_tool_ids: None) -> None:
    data = recorded(PROVIDER, name)
    for event in _events_of(data):  # the openai SDK's and Open Responses' event models accept it
        contract.check_event(event, openai="open_responses" not in name, open_responses=_open_responses(name))
    events = events_document(list(ADAPTER.stream_response([data], context(MODEL))))
    golden.check(PROVIDER, golden.expected_name(name), events)
    for how, pieces in chunkings(data).items():
        split = list(ADAPTER.stream_response(pieces, context(MODEL, ToolIdMap(SESSION))))
        assert [{k: v for k, v in e.items() if k != "id"} for e in events_document(split)] == [
            {k: v for k, v in e.items() if k != "id"} for e in events
        ], how


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "request"))
def test_request_import_golden(name: str, fixed_tool_ids: None) -> None:
    body = recorded(PROVIDER, name)
    contract.sdk_validate(
        body
    )  # OpenAI's reference shapes (built-in tools, input_file: not in Open Responses)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    golden.check(PROVIDER, golden.expected_name(name), import_document(imported))


@pytest.mark.parametrize("name", golden.inputs(PROVIDER, "error"))
def test_error_golden(name: str) -> None:
    golden.check_error(PROVIDER, name)


PAIRS = [
    name
    for name in golden.inputs(PROVIDER, "stream")
    if (golden.folder(PROVIDER) / f"response_{name.split('.')[0].removeprefix('stream_')}.json").exists()
]
"""Stream goldens whose whole reply is a golden too (`stream_<case>.sse` and
`response_<case>.json`): stream_tools, stream_web_search_citations (a web_search_call and
url_citation annotations), stream_code_interpreter (a built-in tool call),
stream_compaction (a compaction item). The three new streams follow the openai SDK's
ResponseStreamEvent members (openai-python, src/openai/types/responses/) and the order of
OpenAI's recorded streams kept by the openai-php client
(github.com/openai-php/client, tests/Fixtures/Streams/ResponseCreate.txt and
ResponseCodeInterpreterCreate.txt); each event is checked by the SDK models above."""


def _message_document(message: Message, ids: ToolIdMap) -> dict[str, Any]:
    """The whole canonical message, canonical tool ids written as their call ids (each read
    mints its own)."""
    document: dict[str, Any] = normalize_tool_ids(canonical(message), ids, PROVIDER)
    return document


def _random_splits(data: bytes, count: int = 6) -> list[list[bytes]]:
    """`count` splittings of `data` at random points (seeded: reproducible)."""
    rng = random.Random(20261124)
    out = []
    for _ in range(count):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 40)))
        out.append([data[a:b] for a, b in itertools.pairwise([0, *cuts, len(data)])])
    return out


def test_every_stream_golden_with_a_whole_reply_is_paired() -> None:
    assert PAIRS == [
        "stream_built_in_file_citations.sse",
        "stream_built_in_mcp_tool_search.sse",
        "stream_built_in_results.sse",
        "stream_code_interpreter.sse",
        "stream_compaction.sse",
        "stream_tools.sse",
        "stream_web_search_citations.sse",
    ]


@pytest.mark.parametrize("name", PAIRS)
def test_a_streamed_reply_is_the_whole_reply(name: str) -> None:
    """Assembled stream == the same reply read whole: every block (server tool calls,
    compaction, text with its citations, reasoning, tool calls) at the same index, the same
    provider_raw, usage and stop reason; however the bytes are split."""
    ids = ToolIdMap(SESSION)
    body = recorded(PROVIDER, name.replace("stream_", "response_").replace(".sse", ".json"))
    whole = _message_document(ADAPTER.from_wire_response(body, context(MODEL, ids)), ids)
    data = recorded(PROVIDER, name)
    splittings = {**chunkings(data), **{f"random-{i}": p for i, p in enumerate(_random_splits(data))}}
    for how, pieces in splittings.items():
        ids = ToolIdMap(SESSION)
        streamed = ADAPTER.assemble_stream(pieces, context(MODEL, ids))
        assert _message_document(streamed, ids) == whole, how


# --- what a reply carries ---------------------------------------------------------------------


def test_reasoning_is_thinking_with_encrypted_content_as_signature() -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, "response_tools.json"), context(MODEL))
    thinking = message.content[0]
    assert thinking.type == "thinking"
    assert thinking.signature == contract.REASONING_ITEM["encrypted_content"]
    assert thinking.text.startswith("**Planning the lookups**")
    assert message.metadata.stop_reason == StopReason.tool_use
    raw = message.metadata.provider_raw or {}
    assert raw["reasoning"] == {"0": contract.REASONING_ITEM}
    assert raw["phase"] == {"1": "commentary"}


def test_usage_subtracts_cached_tokens_and_keeps_reasoning_in_output() -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, "response_tools.json"), context(MODEL))
    usage = message.metadata.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (184, 128, 187)


def test_incomplete_is_max_tokens_and_reasoning_without_summary_is_redacted() -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, "response_incomplete.json"), context(MODEL))
    assert message.metadata.stop_reason == StopReason.max_tokens
    assert message.content[0].type == "redacted_thinking"


def test_citations_and_built_in_calls_are_v2_blocks_and_replay_to_their_model_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = ToolIdMap(SESSION)
    body = recorded(PROVIDER, "response_web_search_citations.json")
    message = ADAPTER.from_wire_response(body, context(MODEL, ids))
    search, text = message.content
    assert search.type == "server_tool_use" and text.type == "text"
    assert (search.name, search.provider, search.input) == (
        "web_search",
        PROVIDER,
        body["output"][0]["action"],
    )
    assert text.citations is not None and text.citations[0].url == "https://www.azores.gov/reserve"
    assert (text.citations[0].start_index, text.citations[0].end_index) == (57, 70)
    user = _message(Role.user, [{"type": "text", "text": "good news?"}])
    again = ADAPTER.to_wire(
        [user, message], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids)
    )
    contract.check_request(again, open_responses=False)
    assert again["input"][1] == body["output"][0]  # the web_search_call item, back as it came
    assert again["input"][2]["phase"] == "final_answer"
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        other = ADAPTER.to_wire(
            [user, message],
            [],
            AdapterOptions(model="responses:gpt-5-mini", session_id=SESSION, tool_ids=ids),
        )
    assert [i["type"] for i in other["input"]] == ["message", "message"]
    assert [r.block_type for r in caplog.records if hasattr(r, "block_type")] == ["server_tool_use"]  # type: ignore[attr-defined]


def test_items_a_stream_sends_only_whole_are_the_blocks_of_the_whole_reply() -> None:
    """A server that sends every item only at `output_item.done` (no added, no deltas):
    the web_search_call and the cited text still arrive as the whole reply's blocks, and
    replay the same way."""
    body = recorded(PROVIDER, "response_web_search_citations.json")
    events = [
        {"type": "response.output_item.done", "output_index": 0, "item": body["output"][0]},
        {"type": "response.output_item.done", "output_index": 1, "item": body["output"][1]},
        {"type": "response.completed", "response": body},
    ]
    ids = ToolIdMap(SESSION)
    message = ADAPTER.assemble_stream(contract.sse(events), context(MODEL, ids))
    whole = ADAPTER.from_wire_response(body, context(MODEL, ids))
    assert canonical(message) == canonical(whole)
    assert [e.type for e in ADAPTER.stream_response(contract.sse(events), context(MODEL))][:2] == [
        "block",
        "block",
    ]
    user = _message(Role.user, [{"type": "text", "text": "good news?"}])
    again = ADAPTER.to_wire(
        [user, message], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids)
    )
    assert again["input"][1] == body["output"][0]


def test_a_whole_item_keeps_its_output_place_when_a_server_interleaves_items() -> None:
    """The index of an item that arrives complete is taken at `output_item.added`: text
    that streams while the search still runs comes after it, as in the whole reply."""
    body = recorded(PROVIDER, "response_web_search_citations.json")
    search, answer = body["output"]
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**search, "status": "in_progress"},
        },
        {"type": "response.output_item.added", "output_index": 1, "item": {**answer, "content": []}},
        {
            "type": "response.output_text.delta",
            "item_id": answer["id"],
            "output_index": 1,
            "content_index": 0,
            "delta": answer["content"][0]["text"],
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.done", "output_index": 1, "item": answer},
        {"type": "response.completed", "response": body},
    ]
    ids = ToolIdMap(SESSION)
    streamed = ADAPTER.assemble_stream(contract.sse(events), context(MODEL, ids))
    assert canonical(streamed) == canonical(ADAPTER.from_wire_response(body, context(MODEL, ids)))


def test_citations_sent_only_as_annotation_events_still_reach_the_text() -> None:
    """A done part without `annotations` (a server that sent them as
    `response.output_text.annotation.added` events only): the events' citations are used;
    a done part that has its own `annotations` is authoritative."""
    body = recorded(PROVIDER, "response_web_search_citations.json")
    message_item = body["output"][1]
    part = message_item["content"][0]
    annotation = part["annotations"][0]
    bare = {**message_item, "content": [{k: v for k, v in part.items() if k != "annotations"}]}
    added = {
        "type": "response.output_text.annotation.added",
        "item_id": message_item["id"],
        "output_index": 1,
        "content_index": 0,
        "annotation_index": 0,
        "annotation": annotation,
    }
    delta = {
        "type": "response.output_text.delta",
        "item_id": message_item["id"],
        "output_index": 1,
        "content_index": 0,
        "delta": part["text"],
        "logprobs": [],
    }
    for done_item, cited in (
        (bare, True),
        ({**message_item, "content": [{**part, "annotations": []}]}, False),
    ):
        events = [
            delta,
            added,
            {"type": "response.output_item.done", "output_index": 1, "item": done_item},
            {"type": "response.completed", "response": body},
        ]
        message = ADAPTER.assemble_stream(contract.sse(events), context(MODEL))
        text = message.content[0]
        assert text.type == "text" and text.text == part["text"]
        if cited:
            assert text.citations is not None and [c.url for c in text.citations] == [annotation["url"]]
        else:
            assert text.citations is None


def test_compaction_is_a_v2_block_that_goes_back_only_here() -> None:
    ids = ToolIdMap(SESSION)
    item = {"type": "compaction", "id": "cmp_68c1f4", "encrypted_content": "gAAAAABcompacted=="}
    message = ADAPTER.from_wire_response(
        contract.response_body([item, contract.MESSAGE_ITEM], open_responses=False), context(MODEL, ids)
    )
    assert message.content[0].type == "compaction" and message.content[0].data == item["encrypted_content"]
    user = _message(Role.user, [{"type": "text", "text": "go on"}])
    body = ADAPTER.to_wire([user, message], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(body)
    assert body["input"][1] == item
    claude = adapters.get("anthropic").to_wire(
        [user, message],
        [],
        AdapterOptions(model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ids),
    )
    assert item["encrypted_content"] not in json.dumps(claude)


@pytest.mark.parametrize(
    "name", ["stream_web_search_citations.sse", "stream_code_interpreter.sse", "stream_compaction.sse"]
)
def test_streamed_server_items_and_compaction_replay_as_their_items_here_only(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """What a stream carried goes back as the provider's own items: the built-in tool call
    item whole and the compaction item with its encrypted content, to this model; another
    model of this provider gets the compaction (the provider reads it) but not the tool
    call; another provider gets neither, each a §7.3 WARN naming the block."""
    ids = ToolIdMap(SESSION)
    body = recorded(PROVIDER, name.replace("stream_", "response_").replace(".sse", ".json"))
    reply = ADAPTER.assemble_stream([recorded(PROVIDER, name)], context(MODEL, ids))
    user = _message(Role.user, [{"type": "text", "text": "go on"}])
    again = ADAPTER.to_wire([user, reply], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(again, open_responses=_open_responses(name))
    kept = [i for i in again["input"][1:] if i["type"] != "message"]
    assert kept == [i for i in body["output"] if i["type"] != "message"]  # each item back as it came
    opaque = [
        i.get("encrypted_content") or i["id"]
        for i in body["output"]
        if i["type"] in ("compaction", "reasoning")
    ] + [i["id"] for i in body["output"] if i["type"].endswith("_call")]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        mini = ADAPTER.to_wire(
            [user, reply], [], AdapterOptions(model="responses:gpt-5-mini", session_id=SESSION, tool_ids=ids)
        )
    assert [i["type"] for i in mini["input"][1:] if i["type"] != "message"] == [
        i["type"] for i in body["output"] if i["type"] == "compaction"
    ]
    dropped = {r.block_type for r in caplog.records if hasattr(r, "block_type")}  # type: ignore[attr-defined]
    assert dropped == {
        b.type for b in reply.content if b.type in ("server_tool_use", "server_tool_result", "thinking")
    }
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        claude = adapters.get("anthropic").to_wire(
            [user, reply],
            [],
            AdapterOptions(model="anthropic:claude-sonnet-4-6", session_id=SESSION, tool_ids=ids),
        )
    text = json.dumps(claude)
    assert not [o for o in opaque if o in text]
    dropped = {r.block_type for r in caplog.records if hasattr(r, "block_type")}  # type: ignore[attr-defined]
    # OpenAI's url citations have no Anthropic form (Anthropic takes back only its own, with
    # their encrypted index): the text goes, its citations are dropped with a WARN
    cited = {"text/citation:url"} if any(getattr(b, "citations", None) for b in reply.content) else set()
    assert (
        dropped
        == {
            b.type
            for b in reply.content
            if b.type in ("server_tool_use", "server_tool_result", "compaction", "thinking")
        }
        | cited
    )


def test_another_providers_server_tool_result_is_dropped_naming_it(caplog: pytest.LogCaptureFixture) -> None:
    result = {
        "type": "server_tool_result",
        "tool_use_id": "srvtoolu_01",
        "provider": "anthropic",
        "name": "web_fetch",
        "content": [{"type": "text", "text": "fetched page text"}],
    }
    answer = _message(
        Role.assistant, [{"type": "text", "text": "Found it."}, result], model="anthropic:claude-sonnet-4-6"
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(
            [answer], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
        )
    assert "fetched page text" not in json.dumps(body)
    (record,) = [r for r in caplog.records if getattr(r, "block_type", None) == "server_tool_result"]
    assert "anthropic" in record.reason  # type: ignore[attr-defined]


def test_a_compaction_announced_empty_is_read_at_done_and_must_arrive_there() -> None:
    """`output_item.added` may announce a compaction before its content exists (as it
    announces reasoning with no summary); the done item must carry it."""
    item = {"type": "compaction", "id": "cmp_68c1f4", "encrypted_content": "gAAAAABcompacted=="}
    body = contract.response_body([item, contract.MESSAGE_ITEM])
    announced = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {**item, "encrypted_content": ""},
    }
    done = {"type": "response.output_item.done", "output_index": 0, "item": item}
    message = ADAPTER.assemble_stream(
        contract.sse([announced, done, {"type": "response.completed", "response": body}]), context(MODEL)
    )
    assert message.content[0].type == "compaction" and message.content[0].data == item["encrypted_content"]
    empty = {**done, "item": {**item, "encrypted_content": None}}
    with pytest.raises(WireFormatError) as caught:
        list(ADAPTER.stream_response(contract.sse([announced, empty]), context(MODEL)))
    assert caught.value.path == "stream.output[0].encrypted_content"


def test_refusal_is_text_with_stop_reason_refusal() -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, "response_refusal.json"), context(MODEL))
    assert message.metadata.stop_reason == StopReason.refusal
    assert message.content[0].type == "text"


def test_failed_stream_and_error_event_end_as_error_keeping_text() -> None:
    for name, code in (
        ("stream_failed.sse", "server_error"),
        ("stream_error_event_openai.sse", "rate_limit_exceeded"),
        ("stream_error_event_open_responses.sse", "server_error"),
    ):
        events = list(ADAPTER.stream_response([recorded(PROVIDER, name)], context(MODEL)))
        assert events[-1].type == "error" and events[-1].code == code, name
        message = ADAPTER.assemble_stream([recorded(PROVIDER, name)], context(MODEL))
        assert message.metadata.status == MessageStatus.error
        assert message.content[0].text == "Partial "  # type: ignore[union-attr]


def test_a_sequence_gap_is_a_wire_format_error() -> None:
    pieces = contract.stream_fixture()
    with pytest.raises(WireFormatError) as caught:
        list(ADAPTER.stream_response(pieces[:3] + pieces[4:], context(MODEL)))
    assert caught.value.path == "stream.sequence_number"
    assert "expected 3" in str(caught.value)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (
            {"output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": 3}]},
            "output[0].arguments",
        ),
        (
            {"output": [{"type": "function_call", "call_id": "", "name": "f", "arguments": ""}]},
            "output[0].call_id",
        ),
        ({"output": [{"type": "message", "role": "assistant", "content": 7}]}, "output[0].content"),
        (
            {"output": [{"type": "reasoning", "summary": [{"type": "summary_text"}]}]},
            "output[0].summary[0].text",
        ),
        (
            {"output": [{"type": "compaction", "id": "cmp_1", "encrypted_content": ""}]},
            "output[0].encrypted_content",
        ),
        ({"output": [{"type": "compaction", "id": "cmp_1"}]}, "output[0].encrypted_content"),
        ({"output": "nope"}, "output"),
        ({}, "output"),
    ],
)
def test_malformed_replies_name_their_path(body: dict[str, Any], path: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_response(body, context(MODEL))
    assert caught.value.path == path


def test_a_failed_response_body_is_a_provider_error() -> None:
    from metis.errors import ProviderError

    body = contract.response_body([], status="failed", usage=None)
    body["error"] = {"code": "server_error", "message": "The server had an error"}
    with pytest.raises(ProviderError) as caught:
        ADAPTER.from_wire_response(body, context(MODEL))
    assert caught.value.error_type == "server_error" and caught.value.retryable


def test_input_estimate_counts_text_tools_and_images() -> None:
    ids = ToolIdMap(SESSION)
    history = _reply_history(ids)
    estimate = ADAPTER.estimate_input_tokens(history, [])
    chars = sum(len(b.text) for m in history for b in m.content if b.type in ("text", "thinking"))
    assert estimate >= chars // 4 + 4 * len(history)
    image = _message(
        Role.user,
        [
            {
                "type": "image",
                "source": {"kind": "url", "data": "https://example.com/a.png"},
                "media_type": "image/png",
            }
        ],
    )
    assert ADAPTER.estimate_input_tokens([*history, image], []) - estimate == 765 + 4


def test_open_responses_event_models_are_found() -> None:
    assert {"response.completed", "response.output_text.delta", "response.output_item.done"} <= set(
        contract.OPEN_RESPONSES_EVENTS
    )


def test_error_body_as_a_reply_is_a_provider_error() -> None:
    from metis.errors import ProviderError

    with pytest.raises(ProviderError) as caught:
        ADAPTER.from_wire_response(json.loads(golden.read_input(PROVIDER, "error_429.json")), context(MODEL))
    assert caught.value.retryable and caught.value.error_type == "tokens"


# --- the writer -------------------------------------------------------------------------------


def _reply_history(ids: ToolIdMap, model: str = MODEL) -> list[Message]:
    user = _message(Role.user, [{"type": "text", "text": "weather in Paris and Tokyo?"}])
    reply = ADAPTER.from_wire_response(
        recorded(PROVIDER, "response_tools.json"),
        RequestContext(session_id=SESSION, model=model, tool_ids=ids),
    )
    results = [
        _message(
            Role.tool,
            [{"type": "tool_result", "tool_use_id": b.id, "content": [{"type": "text", "text": "18C"}]}],
            parent_tool_use_id=b.id,
        )
        for b in reply.content
        if b.type == "tool_use"
    ]
    return [user, reply, *results]


def _message(role: Role, content: list[dict[str, Any]], **metadata: Any) -> Message:
    return build_message(role, content, session_id=SESSION, created_at="2026-05-08T12:00:00Z", **metadata)


def test_stateless_request_replays_reasoning_phase_and_call_ids() -> None:
    ids = ToolIdMap(SESSION)
    body = ADAPTER.to_wire(
        _reply_history(ids), [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids)
    )
    golden.check(PROVIDER, "conversation.request.golden.json", body)
    contract.check_request(body)
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    items = body["input"]
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert items[1] == contract.REASONING_ITEM  # back unchanged, stateless (its encrypted content)
    assert items[2]["phase"] == "commentary"
    assert [i["call_id"] for i in items[3:5]] == [
        "call_Nb2Vc7Xz4Lk9Jh1Gf6Ds3Aq8",
        "call_Po5Iu0Yt8Re3Wq6Lk1Jh4Gf9",
    ]
    assert [i["call_id"] for i in items[5:]] == [i["call_id"] for i in items[3:5]]


def test_reasoning_goes_to_no_other_model(caplog: pytest.LogCaptureFixture) -> None:
    ids = ToolIdMap(SESSION)
    history = _reply_history(ids)
    options = AdapterOptions(model="responses:gpt-5-mini", session_id=SESSION, tool_ids=ids)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(history, [], options)
    assert "reasoning" not in [i["type"] for i in body["input"]]
    assert "phase" not in body["input"][1]
    assert [r.block_type for r in caplog.records if hasattr(r, "block_type")] == ["thinking"]  # type: ignore[attr-defined]
    contract.check_request(body)


def test_open_responses_row_is_picked_by_the_directive_the_client_sets_for_other_base_urls() -> None:
    ids = ToolIdMap(SESSION)
    extra = dict(ADAPTER.custom_server_extra)
    body = ADAPTER.to_wire(
        _reply_history(ids), [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids, extra=extra)
    )
    assert "store" not in body and "metis" not in body
    contract.check_request(body)
    with pytest.raises(WireFormatError):
        ADAPTER.to_wire(
            [],
            [],
            AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids, extra={"metis": {"dialect": "x"}}),
        )


def test_tools_options_and_lossy_options(caplog: pytest.LogCaptureFixture) -> None:
    tool = ToolDefinition(
        name="lookup", description="d", side_effects="read", input_schema={"type": "object"}
    )
    options = AdapterOptions(
        model=MODEL,
        session_id=SESSION,
        tool_ids=ToolIdMap(SESSION),
        max_tokens=300,
        stop=["END"],
        tool_choice="any",
        stream=True,
        extra={"reasoning": {"effort": "low"}, "metis": {"builtin_tools": [{"type": "web_search"}]}},
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire([_message(Role.user, [{"type": "text", "text": "hi"}])], [tool], options)
    contract.check_request(body, open_responses=False)  # web_search is OpenAI's own tool
    assert body["max_output_tokens"] == 300 and body["tool_choice"] == "required" and body["stream"] is True
    assert body["tools"] == [
        {
            "type": "function",
            "name": "lookup",
            "description": "d",
            "parameters": {"type": "object"},
            "strict": False,
        },
        {"type": "web_search"},
    ]
    assert "stop" not in body
    (said,) = [r for r in caplog.records if "stop has no responses request field" in r.getMessage()]
    assert (said.block_type, said.message_id, said.adapter) == ("option", "request", "responses")  # type: ignore[attr-defined]


def test_import_names_previous_response_id_and_replays(caplog: pytest.LogCaptureFixture) -> None:
    body = recorded(PROVIDER, "request_every_shape.json")
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    # named on the first input message (the history is the server's: named, not invented)
    continues = imported.messages[1].metadata.continues
    assert continues is not None and continues.response_id == "resp_68c1e0d2a1b08190"
    assert imported.messages[0].metadata.continues is None  # `instructions` are not carried over
    assert imported.options.provider_options["responses"]["previous_response_id"] == "resp_68c1e0d2a1b08190"
    dropped = {d["path"] for d in imported.dropped}
    assert dropped == {"input[5]"}  # the item_reference; the input_file is a v2 document
    document = imported.messages[1].content[2]
    assert document.type == "document" and document.source.provider == PROVIDER
    again = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again, open_responses=False)  # web_search is OpenAI's own tool
    for key in (
        "instructions",
        "previous_response_id",
        "tool_choice",
        "reasoning",
        "tools",
        "max_output_tokens",
    ):
        assert again[key] == body[key], key
    assert again["input"][1] == contract.REASONING_ITEM
    assert again["input"][0]["content"][2] == {"type": "input_file", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}


def test_import_of_a_compaction_without_content_names_its_path() -> None:
    body = {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "hi"}, {"type": "compaction", "id": "cmp_1"}],
    }
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert caught.value.path == "input[1].encrypted_content"


def test_import_of_an_unknown_call_id_names_its_path() -> None:
    body = {"model": "gpt-5", "input": [{"type": "function_call_output", "call_id": "call_x", "output": "1"}]}
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert caught.value.path == "input[0].call_id"


# --- Anthropic -> Responses -> Anthropic -----------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_each_provider_gets_back_exactly_its_own_reasoning(streamed: bool) -> None:
    """The Responses turn read whole or assembled from its stream: the same replay."""
    anthropic = adapters.get("anthropic")
    ids = ToolIdMap(SESSION)
    claude = "anthropic:claude-sonnet-4-6"
    history = [_message(Role.user, [{"type": "text", "text": "weather in Paris and Tokyo?"}])]

    def answer(reply: Message) -> None:
        history.append(reply)
        for block in reply.content:
            if block.type == "tool_use":
                history.append(
                    _message(
                        Role.tool,
                        [
                            {
                                "type": "tool_result",
                                "tool_use_id": block.id,
                                "content": [{"type": "text", "text": "ok"}],
                            }
                        ],
                        parent_tool_use_id=block.id,
                    )
                )

    answer(
        anthropic.from_wire_response(
            json.loads(golden.read_input("anthropic", "response_thinking.json")),
            RequestContext(session_id=SESSION, model=claude, tool_ids=ids),
        )
    )
    signed = [b for b in history[1].content if b.type == "thinking"]
    redacted = [b for b in history[1].content if b.type == "redacted_thinking"]
    assert signed and signed[0].signature and redacted  # signed and redacted thinking from Claude
    body = ADAPTER.to_wire(history, [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(body)
    assert "reasoning" not in [i["type"] for i in body["input"]]  # Anthropic's thinking is not sent here
    assert signed[0].signature not in json.dumps(body) and redacted[0].data not in json.dumps(body)
    responses_context = RequestContext(session_id=SESSION, model=MODEL, tool_ids=ids)
    answer(
        ADAPTER.assemble_stream([recorded(PROVIDER, "stream_tools.sse")], responses_context)
        if streamed
        else ADAPTER.from_wire_response(recorded(PROVIDER, "response_tools.json"), responses_context)
    )
    history.append(_message(Role.user, [{"type": "text", "text": "thanks, and now?"}]))
    back = anthropic.to_wire(history, [], AdapterOptions(model=claude, session_id=SESSION, tool_ids=ids))
    anthropic_contract.check_request(back)
    text = json.dumps(back)
    assert signed[0].signature in text  # its own signed thinking goes back
    assert contract.REASONING_ITEM["encrypted_content"] not in text  # OpenAI's encrypted reasoning never does
    thinking = [
        b for m in back["messages"] for b in m["content"] if isinstance(b, dict) and b["type"] == "thinking"
    ]
    assert [b["signature"] for b in thinking] == [signed[0].signature]
    assert redacted[0].data in text
    again = ADAPTER.to_wire(history, [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(again)
    reasoning = [i for i in again["input"] if i["type"] == "reasoning"]
    assert reasoning == [contract.REASONING_ITEM]  # exactly its own, once


# --- the client picks the row by base URL -----------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "stateless"),
    [(None, True), ("http://127.0.0.1:8080/v1", False)],
    ids=["openai", "open-responses"],
)
def test_client_sends_to_the_row_its_base_url_picks(
    base_url: str | None, stateless: bool, tmp_path: Any
) -> None:
    import httpx
    from metis.client import Client
    from metis.store import Store

    sent: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        request.read()
        sent.append(request)
        return httpx.Response(200, json=contract.response_fixture())

    base_urls = {PROVIDER: base_url} if base_url else None
    with (
        Store.open(tmp_path / "metis.sqlite3") as store,
        Client(
            store, transport=httpx.MockTransport(handle), api_keys={PROVIDER: "sk-test"}, base_urls=base_urls
        ) as client,
    ):
        session = client.session(MODEL, workspace=tmp_path)
        reply = session.send("weather in Paris and Tokyo?")
        body = json.loads(sent[0].content)
        assert str(sent[0].url) == (base_url or "https://api.openai.com/v1") + "/responses"
        assert ("store" in body) is stateless and "metis" not in body
        contract.check_request(body)
        assert reply.metadata.stop_reason == StopReason.tool_use
        for block in reply.content:
            if block.type == "tool_use":
                session.add_tool_result(block.id, "18C")
        session.send()  # the results go back, with the reasoning item that preceded the calls
        again = json.loads(sent[1].content)
        assert [i for i in again["input"] if i["type"] == "reasoning"] == [contract.REASONING_ITEM]


def test_canonical_phase_and_file_id_images_are_written() -> None:
    ids = ToolIdMap(SESSION)
    said = build_message(
        "assistant",
        [{"type": "text", "text": "Looking it up."}],
        session_id=SESSION,
        created_at="2026-05-08T12:00:00Z",
        model="anthropic:claude-sonnet-4-6",
        provider="anthropic",
        phase="commentary",
        usage={
            "input_tokens": 1,
            "output_tokens": 1,
            "cost_usd": "0",
            "pricing_version": "2026-05-08",
            "latency_ms": 1,
        },
        routing={
            "mode": "default",
            "chosen_model": "anthropic:claude-sonnet-4-6",
            "reason": "test",
        },
    )

    def image(provider: str) -> dict[str, Any]:
        source = {"kind": "file_id", "data": "file-6F2ksmvXxt4VdoqmHRw6kL", "provider": provider}
        return {"type": "image", "source": source, "media_type": "image/png"}

    user = _message(Role.user, [{"type": "text", "text": "see"}, image(PROVIDER), image("anthropic")])
    body = ADAPTER.to_wire([user, said], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(body)
    assert body["input"][0]["content"][1:] == [
        {"type": "input_image", "file_id": "file-6F2ksmvXxt4VdoqmHRw6kL", "detail": "auto"}
    ]  # Anthropic's file id is dropped (logged), not sent as a URL
    assert body["input"][1]["phase"] == "commentary"


def test_documents_go_as_input_files(tmp_path: Any) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4 tiny")
    ids = ToolIdMap(SESSION)

    def document(source: dict[str, Any], title: str | None = None) -> dict[str, Any]:
        return {"type": "document", "source": source, "media_type": "application/pdf", "title": title}

    user = _message(
        Role.user,
        [
            {"type": "text", "text": "summarize"},
            document({"kind": "file_ref", "data": "report.pdf"}, "report.pdf"),
            document({"kind": "url", "data": "https://example.com/a.pdf"}),
            document({"kind": "file_id", "data": "file-abc", "provider": "anthropic"}),
        ],
    )
    options = AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids, workspace=tmp_path)
    body = ADAPTER.to_wire([user], [], options)
    contract.check_request(body)
    assert body["input"][0]["content"][1:] == [
        {
            "type": "input_file",
            "filename": "report.pdf",
            "file_data": "data:application/pdf;base64,JVBERi0xLjQgdGlueQ==",
        },
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
    ]  # Anthropic's file id is dropped with a WARN
    back = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert [b.type for b in back.messages[0].content] == ["text", "document", "document"]


def test_a_document_goes_without_what_input_file_cannot_say_with_a_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    document = {
        "type": "document",
        "source": {"kind": "base64", "data": "JVBERi0xLjQK"},
        "media_type": "application/pdf",
        "title": "ULID spec",
        "context": "The team's copy.",
        "citations_enabled": True,
    }
    user = _message(Role.user, [{"type": "text", "text": "Read this."}, document])
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = ADAPTER.to_wire(
            [user], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
        )
    contract.check_request(body)
    assert body["input"][0]["content"][1] == {
        "type": "input_file",
        "filename": "ULID spec",
        "file_data": "data:application/pdf;base64,JVBERi0xLjQK",
    }
    losses = [r for r in caplog.records if getattr(r, "block_type", None) == "document"]
    assert len(losses) == 1 and "context" in losses[0].reason  # type: ignore[attr-defined]
    assert "The team's copy." not in json.dumps(body)


# --- built-in tool results --------------------------------------------------------------------


def _built_in(name: str) -> dict[str, Any]:
    """The item of type `name` in the built-in results golden."""
    body = recorded(PROVIDER, "response_built_in_results.json")
    (item,) = [i for i in body["output"] if i["type"] == name]
    return dict(item)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_built_in_call_and_its_result_replay_as_its_one_item_here_only(
    streamed: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Each call + result pair goes back to the model that ran it as the one item it came
    as (no second item for the result); to another model, and to another provider, both
    blocks drop with a WARN each, and none of the results' text leaks."""
    ids = ToolIdMap(SESSION)
    body = recorded(PROVIDER, "response_built_in_results.json")
    if streamed:
        reply = ADAPTER.assemble_stream(
            [recorded(PROVIDER, "stream_built_in_results.sse")], context(MODEL, ids)
        )
    else:
        reply = ADAPTER.from_wire_response(body, context(MODEL, ids))
    kinds = [b.type for b in reply.content]
    assert kinds == ["server_tool_use", "server_tool_result"] * 5 + ["text"]
    user = _message(Role.user, [{"type": "text", "text": "go on"}])
    again = ADAPTER.to_wire([user, reply], [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids))
    contract.check_request(again, open_responses=False)
    assert [i for i in again["input"][1:] if i["type"] != "message"] == body["output"][:5]
    for target in ("responses:gpt-5-mini", "anthropic:claude-sonnet-4-6"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="metis.adapters"):
            other = adapters.get(target.split(":")[0]).to_wire(
                [user, reply], [], AdapterOptions(model=target, session_id=SESSION, tool_ids=ids)
            )
        dropped = [r.block_type for r in caplog.records if hasattr(r, "block_type")]  # type: ignore[attr-defined]
        assert dropped == kinds[:10], target
        assert "Ponta Delgada: 14:32" not in json.dumps(other) and "ig_68c1f3a3e5f78190" not in json.dumps(
            other
        )


def test_what_each_built_in_tool_returned_is_readable() -> None:
    message = ADAPTER.from_wire_response(recorded(PROVIDER, "response_built_in_results.json"), context(MODEL))
    results = {b.name: b for b in message.content if b.type == "server_tool_result"}
    sources = [r.source for r in results["web_search"].content if r.type == "search_result"]
    assert sources == ["https://www.azores.gov/reserve", "https://en.wikipedia.org/wiki/Azores"]
    (found,) = results["file_search"].content
    assert found.type == "search_result" and (found.source, found.title) == (
        "file-2dtbBZdjtDKS8eqWxqbgDi",
        "azores_report.pdf",
    )
    assert found.content[0].text.startswith("The reserve covers 30,000")
    logs, chart = results["code_interpreter"].content
    assert logs.type == "text" and logs.text == "30.0\n"
    assert chart.type == "image" and chart.source.kind == "url" and chart.media_type == "image/png"
    (image,) = results["image_generation"].content
    assert image.type == "image" and image.source.kind == "base64"
    assert image.source.data == _built_in("image_generation_call")["result"]
    assert results["mcp"].content[0].text == "Next high tide at Ponta Delgada: 14:32 (1.6 m)"
    assert not any(r.is_error for r in results.values())
    uses = {b.name: b.input for b in message.content if b.type == "server_tool_use"}
    assert "sources" not in uses["web_search"] and "outputs" not in uses["code_interpreter"]
    assert "output" not in uses["mcp"] and "result" not in uses["image_generation"]


@pytest.mark.parametrize(
    ("item", "kinds", "is_error", "shown"),
    [
        ({"type": "web_search_call", "status": "completed", "action": {"type": "open_page"}}, 1, None, None),
        (
            {"type": "web_search_call", "status": "failed", "action": {"type": "search", "query": "q"}},
            2,
            True,
            "web_search_call failed",
        ),
        (
            {
                "type": "code_interpreter_call",
                "status": "in_progress",
                "code": "",
                "container_id": "c",
                "outputs": None,
            },
            1,
            None,
            None,
        ),
        (
            {"type": "file_search_call", "status": "completed", "queries": ["q"], "results": []},
            2,
            False,
            None,
        ),
        (
            {
                "type": "mcp_call",
                "status": "failed",
                "name": "high_tide",
                "arguments": "{}",
                "server_label": "tides",
                "error": {"type": "http_error", "code": 502, "message": "Bad Gateway"},
            },
            2,
            True,
            "Bad Gateway",
        ),
        (
            {
                "type": "mcp_call",
                "name": "high_tide",
                "arguments": "{}",
                "server_label": "tides",
                "error": {
                    "type": "mcp_tool_execution_error",
                    "content": [{"type": "text", "text": "no port"}],
                },
            },
            2,
            True,
            '[{"type":"text","text":"no port"}]',
        ),
    ],
)
def test_a_call_carries_a_result_only_when_its_item_has_one(
    item: dict[str, Any], kinds: int, is_error: bool | None, shown: str | None
) -> None:
    """No result field (or a null one) is the call alone; an empty list is a result that
    found nothing; a failed status or an MCP error is an error result saying so."""
    item = {"id": "call_item_1", **item}
    message = ADAPTER.from_wire_response(
        contract.response_body([item, contract.MESSAGE_ITEM], open_responses=False), context(MODEL)
    )
    blocks = message.content[:-1]
    assert len(blocks) == kinds
    if kinds == 2:
        result = blocks[1]
        assert result.type == "server_tool_result" and result.tool_use_id == "call_item_1"
        assert result.is_error is is_error
        assert [c.text for c in result.content if c.type == "text"] == ([shown] if shown else [])
    assert message.metadata.provider_raw is not None
    assert message.metadata.provider_raw["phase"] == {str(kinds): "commentary"}  # the text's index


def test_a_generated_image_takes_its_output_format_and_a_bad_result_names_its_path() -> None:
    item = {**_built_in("image_generation_call"), "output_format": "webp"}
    message = ADAPTER.from_wire_response(contract.response_body([item], open_responses=False), context(MODEL))
    assert message.content[1].content[0].media_type == "image/webp"  # type: ignore[union-attr]
    bad = {**_built_in("code_interpreter_call"), "outputs": [{"type": "image", "url": "x", "extra": 1}]}
    bad["outputs"][0]["url"] = ""
    message = ADAPTER.from_wire_response({"output": [bad]}, context(MODEL))
    assert [b.type for b in message.content] == ["server_tool_use", "server_tool_result"]
    with pytest.raises(WireFormatError) as caught:
        ADAPTER.from_wire_response({"output": [{**bad, "outputs": "logs"}]}, context(MODEL))
    assert caught.value.path is not None and caught.value.path.startswith("output[0]")


def test_an_imported_built_in_call_is_its_call_and_result_and_exports_as_its_item() -> None:
    item = _built_in("code_interpreter_call")
    body = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "chart it"},
            item,
            {"type": "message", "role": "assistant", "content": "Done."},
            {"role": "user", "content": "thanks"},
        ],
        "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}],
    }
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    answer = imported.messages[1]
    assert [b.type for b in answer.content] == ["server_tool_use", "server_tool_result", "text"]
    assert answer.content[1].content[0].text == "30.0\n"  # type: ignore[union-attr]
    again = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    assert [i for i in again["input"] if i.get("type") == "code_interpreter_call"] == [item]


@pytest.mark.parametrize("announced", ["web_search_call", "compaction"])
def test_an_error_stream_leaves_no_index_gap_in_provider_raw(announced: str) -> None:
    """A tool call or compaction announced (its indexes reserved) but never done, because
    the stream failed: the ERROR message's content has no hole there, and provider_raw's
    index-keyed entries (the later text's phase, an annotation with no citation) name the
    block at that position of the content."""
    item = (
        {"type": "compaction", "id": "cmp_1", "encrypted_content": ""}
        if announced == "compaction"
        else {"type": "web_search_call", "id": "ws_1", "status": "in_progress", "action": {"type": "search"}}
    )
    part = {
        "type": "output_text",
        "text": "Partial",
        # an extension's annotation (slug-prefixed, Open Responses): no canonical citation
        "annotations": [{"type": "acme:footnote", "index": 0}],
        "logprobs": [],
    }
    message_item = {**contract.MESSAGE_ITEM, "content": [part]}
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.added", "output_index": 1, "item": {**message_item, "content": []}},
        {
            "type": "response.output_text.delta",
            "item_id": message_item["id"],
            "output_index": 1,
            "content_index": 0,
            "delta": "Partial",
            "logprobs": [],
        },
        {"type": "response.output_item.done", "output_index": 1, "item": message_item},
        {"type": "error", "code": "server_error", "message": "The server had an error", "param": None},
    ]
    message = ADAPTER.assemble_stream(contract.sse(events), context(MODEL))
    assert message.metadata.status == MessageStatus.error
    assert [b.type for b in message.content] == ["text"]
    raw = message.metadata.provider_raw
    assert raw is not None
    assert raw["phase"] == {"0": "commentary"}
    assert list(raw["annotations"]) == ["0"]


def test_a_result_index_kept_from_being_given_back_leaves_provider_raw_aligned() -> None:
    """A search announced (its call and result indexes reserved), an item with no block
    kept while it runs, then the search done without sources: the unused result index
    stays reserved (the kept item's position counts it), and the assembled message equals
    the whole reply, provider_raw positions included."""
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}}
    computer = {
        "type": "computer_call",
        "id": "cu_1",
        "call_id": "call_cu_1",
        "action": {"type": "click", "button": "left", "x": 1, "y": 2},
        "pending_safety_checks": [],
        "status": "completed",
    }
    answer = contract.MESSAGE_ITEM
    body = contract.response_body([search, computer, answer], open_responses=False)
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**search, "status": "in_progress"},
        },
        {"type": "response.output_item.added", "output_index": 1, "item": computer},
        {"type": "response.output_item.done", "output_index": 1, "item": computer},
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.done", "output_index": 2, "item": answer},
        {"type": "response.completed", "response": body},
    ]
    ids = ToolIdMap(SESSION)
    streamed = ADAPTER.assemble_stream(contract.sse(events), context(MODEL, ids))
    whole = ADAPTER.from_wire_response(body, context(MODEL, ids))
    assert canonical(streamed) == canonical(whole)
    raw = whole.metadata.provider_raw
    assert raw is not None and raw["other_items"][0]["at"] == 1 and raw["phase"] == {"1": "commentary"}


# --- audio and file-id images in requests ---------------------------------------------------------

_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="


def test_input_audio_and_file_id_images_import_and_replay_as_they_came(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A recorded request's `input_audio` part is a v2 audio block and an `input_image` by
    file id an image by this provider's file id; both go back as they came to a model that
    takes them (SDK `ResponseInputAudioParam`, `ResponseInputImageParam`)."""
    from metis import catalog

    parts = [
        {"type": "input_text", "text": "What is said, and what is shown?"},
        {"type": "input_audio", "input_audio": {"data": _WAV, "format": "wav"}},
        {"type": "input_image", "file_id": "file-abc123", "detail": "auto"},
    ]
    body = {"model": "gpt-5", "input": [{"type": "message", "role": "user", "content": parts}]}
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    user = imported.messages[0]
    assert [b.type for b in user.content] == ["text", "audio", "image"]
    assert user.content[1].media_type == "audio/wav"  # type: ignore[union-attr]
    assert user.content[2].source.provider == "responses"  # type: ignore[union-attr]

    real = catalog.load_catalog()
    entry = real.resolve(MODEL)
    hearing = entry.model_copy(
        update={"capabilities": entry.capabilities.model_copy(update={"supports_audio": True})}
    )

    class Hearing:
        def resolve(self, model: str) -> Any:
            return hearing if model == MODEL else real.resolve(model)

    monkeypatch.setattr("metis.adapters.responses.to_wire.load_catalog", Hearing)
    out = ADAPTER.to_wire(
        imported.messages, [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids)
    )
    assert out["input"][0]["content"] == parts


def test_audio_a_model_cannot_hear_is_dropped_with_the_warn(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "model": "gpt-5",
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_audio", "input_audio": {"data": _WAV, "format": "mp3"}},
                    {"type": "input_text", "text": "hi"},
                ],
            }
        ],
    }
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        out = ADAPTER.to_wire(
            imported.messages, [], AdapterOptions(model=MODEL, session_id=SESSION, tool_ids=ids)
        )
    assert out["input"][0]["content"] == [{"type": "input_text", "text": "hi"}]
    assert [getattr(r, "block_type", None) for r in caplog.records] == ["audio"]
