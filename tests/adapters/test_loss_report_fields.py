"""Issue 30 item 8: every §7.3 loss report carries the five fields.

Every golden wire input of every provider (tests/golden/<provider>/: recorded requests,
replies and streams) is read by its own adapter, and the conversation it makes is written
to every provider's target model: the requests as imported (with their tools and
options), the replies and streams as the assistant turn of a short conversation. Every
WARN the adapters log on the way (logger `metis.adapters` and below) must carry
`session_id`, `message_id`, `block_type`, `adapter` and `reason`, each a non-empty string.

`message_id` names the canonical message the loss is in; a loss of the request itself (an
option, a tool definition) carries `"request"`, and a loss met while an import is still
making the message carries the message's wire position (`messages[2]`, `contents[0]`,
`input[3]`): decided in `adapters._kit.losses`.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from metis import adapters
from metis.adapters import AdapterOptions
from metis.assembly import RequestContext
from metis.errors import MetisError
from metis.ids import ToolIdMap, new_message_id
from metis_schema.v3 import Message

from tests.support import golden
from tests.support.messages import build_message

SESSION = "sess_loss_reports"
FIVE = ("session_id", "message_id", "block_type", "adapter", "reason")
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4.1",
    "openrouter": "openrouter:anthropic/claude-sonnet-4.6",
    "mistral": "mistral:magistral-medium-latest",
    "responses": "responses:gpt-5",
    "gemini": "gemini:gemini-2.5-flash",
    "ollama": "ollama:qwen3-8b",
}
"""Each provider's target model (and the model its replies are read as)."""
TARGETS = list(MODELS)


def _cases() -> list[tuple[str, str]]:
    return [
        (provider, name)
        for provider in TARGETS
        for kind in ("request", "response", "stream")
        for name in golden.inputs(provider, kind)
    ]


CREATED = datetime(2026, 11, 1, tzinfo=UTC)


def _text(role: str, text: str) -> Message:
    return build_message(role, [{"type": "text", "text": text}], session_id=SESSION, created_at=CREATED)


def _read(provider: str, name: str) -> tuple[list[Message], list[Any], AdapterOptions]:
    """The conversation, tools and options one golden input makes (read by its own adapter)."""
    adapter = adapters.get(provider)
    ids = ToolIdMap(SESSION)
    data = golden.read_input(provider, name)
    if name.startswith("request_"):
        imported = adapter.from_wire_request(orjson.loads(data), session_id=SESSION, tool_ids=ids)
        return imported.messages, imported.tools, imported.options
    context = RequestContext(
        session_id=SESSION, model=MODELS[provider], tool_ids=ids, message_id=new_message_id()
    )
    if name.startswith("response_"):
        reply = adapter.from_wire_response(orjson.loads(data), context)
    else:
        reply = adapter.assemble_stream([data], context)
    conversation = [_text("user", "Go on."), reply, _text("user", "And then?")]
    return conversation, [], AdapterOptions(model=MODELS[provider], session_id=SESSION, tool_ids=ids)


def _projection_warns(provider: str, name: str, caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The WARNs of reading one golden input with its own adapter and writing what it makes
    to every target (skips an input its own adapter refuses)."""
    caplog.set_level(logging.WARNING, logger="metis.adapters")
    try:
        messages, tools, options = _read(provider, name)
    except MetisError:
        pytest.skip("an input its own adapter refuses (an error golden's subject)")
    written = 0
    for target in TARGETS:
        options.model = MODELS[target]
        try:
            adapters.get(target).to_wire(messages, tools, options)
            written += 1
        except MetisError:  # a refusal (a critical block, a budget past a limit) is no WARN
            continue
    assert written, "the conversation went to no target at all"
    return [r for r in caplog.records if r.name.startswith("metis.adapters") and r.levelno >= logging.WARNING]


@pytest.mark.parametrize(("provider", "name"), _cases())
def test_every_warn_of_every_projection_carries_the_five_fields(
    provider: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    records = _projection_warns(provider, name, caplog)
    lacking = [
        (
            r.getMessage(),
            [
                field
                for field in FIVE
                if not isinstance(getattr(r, field, None), str) or not getattr(r, field)
            ],
        )
        for r in records
        if not all(isinstance(getattr(r, field, None), str) and getattr(r, field) for field in FIVE)
    ]
    assert lacking == []


ONE_WORDING = re.compile(
    r"^(?P<outcome>dropped|lost|not imported|assumed) (?P<block_type>.+?) at (?P<where>.+) "
    r"for (?P<adapter>\S+) \(session (?P<session_id>[^)]*)\): (?P<reason>.*)$",
    re.S,
)
"""Issue 24: the one wording of a loss WARN (`adapters._kit.losses.Losses`): what happened to
what, where, for which adapter and session, and why, the line saying the record's own fields."""


@pytest.mark.parametrize(("provider", "name"), _cases())
def test_every_warn_of_every_projection_has_the_one_wording(
    provider: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    records = _projection_warns(provider, name, caplog)
    worded_apart = []
    for record in records:
        said = ONE_WORDING.match(record.getMessage())
        fields = {f: str(getattr(record, f, None)) for f in ("block_type", "adapter", "session_id", "reason")}
        if said is None or {f: said[f] for f in fields} != fields:
            worded_apart.append(record.getMessage())
    assert worded_apart == []


# --- the sites that lacked fields (the issue measured ~3% of WARNs, Gemini and Responses) -----


def _assistant(content: list[dict[str, Any]], model: str) -> Message:
    provider = model.split(":", 1)[0]
    return build_message(
        "assistant", content, session_id=SESSION, created_at=CREATED, model=model, provider=provider
    )


def _five(records: list[logging.LogRecord], block_type: str) -> logging.LogRecord:
    [record] = [r for r in records if getattr(r, "block_type", None) == block_type]
    assert all(isinstance(getattr(record, f, None), str) and getattr(record, f) for f in FIVE)
    return record


def test_gemini_history_starting_with_a_model_turn_names_that_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = _assistant([{"type": "text", "text": "Hello, how can I help?"}], "anthropic:claude-sonnet-4-6")
    options = AdapterOptions(model=MODELS["gemini"], session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        adapters.get("gemini").to_wire([first, _text("user", "Hi")], [], options)
    assert _five(caplog.records, "message").message_id == first.id  # type: ignore[attr-defined]


def test_gemini_calls_sent_without_signatures_name_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    call = {
        "type": "tool_use",
        "id": "tu_01JD0000000000000000000001",
        "name": "get_weather",
        "input": {"city": "Oslo"},
    }
    turn = _assistant([call], "anthropic:claude-sonnet-4-6")
    answer = {"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "4C"}]}
    result = build_message(
        "tool", [answer], session_id=SESSION, created_at=CREATED, parent_tool_use_id=call["id"]
    )
    options = AdapterOptions(
        model="gemini:gemini-3-pro-preview", session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        adapters.get("gemini").to_wire([_text("user", "Weather in Oslo?"), turn, result], [], options)
    assert _five(caplog.records, "tool_use").message_id == turn.id  # type: ignore[attr-defined]


def test_a_gemini_reply_part_with_no_block_names_the_reply(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"text": "a"}, {"toolCall": {"id": "t1", "toolType": "X"}}, {"text": "b"}],
                },
                "finishReason": "STOP",
            }
        ]
    }
    context = RequestContext(
        session_id=SESSION, model=MODELS["gemini"], tool_ids=ToolIdMap(SESSION), message_id=new_message_id()
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        reply = adapters.get("gemini").from_wire_response(body, context)
    assert _five(caplog.records, "toolCall").message_id == reply.id  # type: ignore[attr-defined]


def test_responses_items_and_annotations_kept_raw_name_the_reply(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1763821000,
        "status": "completed",
        "model": "gpt-5",
        "output": [
            # an item and an annotation with no canonical form (newer than this metis): kept raw
            {"type": "zz_future_item", "id": "zz_1", "detail": "kept"},
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "text": "See the file.",
                        "annotations": [{"type": "zz_future_annotation", "start_index": 0, "end_index": 3}],
                    }
                ],
            },
        ],
    }
    context = RequestContext(
        session_id=SESSION,
        model=MODELS["responses"],
        tool_ids=ToolIdMap(SESSION),
        message_id=new_message_id(),
    )
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        reply = adapters.get("responses").from_wire_response(body, context)
    records = [r for r in caplog.records if r.name.startswith("metis.adapters")]
    assert all(all(isinstance(getattr(r, f, None), str) and getattr(r, f) for f in FIVE) for r in records)
    assert len(records) >= 2, "the item and the annotation are each reported"
    assert {getattr(r, "message_id", None) for r in records} == {reply.id}
