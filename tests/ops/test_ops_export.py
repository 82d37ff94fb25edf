"""Export (issue 19): OpenTelemetry GenAI records, live spans, and chat-message datasets.

`--format otel` records are validated against the GenAI message shapes of semantic
conventions v1.41.0 (`genai_semconv`, hand-written from the conventions' JSON schemas),
with a negative case proving the schema bites; live spans go through the real
opentelemetry SDK into its InMemorySpanExporter; `--format jsonl-messages` lines are
checked by the openai SDK's own request types (deep and strict-keyed, the contract the
Chat adapter is held to). Sessions come from recorded traffic: the client against
scripted provider replies, and `metis import` of a recorded request.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from metis.client import Client
from metis.errors import ProviderError
from metis.ops import chat_records, dataset_line, expand
from metis.store import Store
from metis_schema.v3 import Message, Role, ToolUseBlock
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.support.cli_support import ANTHROPIC_BODY, imported, run
from tests.support.client_support import (
    KEYS,
    PROVIDERS,
    FakeTime,
    ScriptedProvider,
    json_reply,
    ok_body,
    scripted_client,
)
from tests.support.contracts import openai as openai_contract
from tests.support.genai_semconv import SCHEMAS
from tests.support.store_support import assistant, new_target, user

ANTHROPIC = PROVIDERS[0]


def check(name: str, value: Any) -> None:
    jsonschema.Draft202012Validator(SCHEMAS[name]).validate(value)


def tool_loop(client: Client, tmp_path: Path) -> tuple[str, list[Message]]:
    """Two exchanges: a reply with two tool calls, their results, the reply after them."""
    session = client.session(ANTHROPIC.model, workspace=tmp_path)
    first = session.send("Weather in two cities?")
    for n, block in enumerate(b for b in first.content if isinstance(b, ToolUseBlock)):
        session.add_tool_result(block.id, f"result-{n}: sunny")
    session.send()
    return session.id, session.messages()


# --- otel records -----------------------------------------------------------------------------------


def test_otel_records_follow_the_genai_conventions_with_usage_cost_and_model(
    store: Store, tmp_path: Path
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as client:
        session_id, history = tool_loop(client, tmp_path)
    written = list(chat_records(session_id, history))
    # The second record lists only what its call was sent beyond the first record's input
    # and output (the user turn, the reply): the two tool results.
    assert [r["attributes"]["metis.input.messages.omitted"] for r in written] == [0, 2]
    assert [m["role"] for m in written[1]["attributes"]["gen_ai.input.messages"]] == ["tool", "tool"]
    records = list(expand(written))
    replies = [m for m in history if m.role == Role.assistant]
    assert len(records) == len(replies) == 2

    for record, reply in zip(records, replies, strict=True):
        attributes = record["attributes"]
        for name in SCHEMAS:
            check(name, attributes[name])
        usage = reply.metadata.usage
        assert usage is not None
        assert record["name"] == "chat claude-sonnet-4-6" and record["kind"] == "CLIENT"
        assert record["schema_url"] == "https://opentelemetry.io/schemas/1.41.0"
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "anthropic"
        assert attributes["gen_ai.request.model"] == "claude-sonnet-4-6"
        assert attributes["gen_ai.conversation.id"] == session_id
        assert attributes["metis.model"] == ANTHROPIC.model
        assert attributes["gen_ai.usage.input_tokens"] == (
            usage.input_tokens + usage.cached_input_tokens + usage.cache_creation_input_tokens
        )
        assert attributes["gen_ai.usage.output_tokens"] == usage.output_tokens
        assert Decimal(attributes["metis.usage.cost_usd"]) == usage.cost_usd
        assert attributes["metis.usage.pricing_version"] == usage.pricing_version

    first, second = (r["attributes"] for r in records)
    assert first["gen_ai.input.messages"] == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather in two cities?"}]}
    ]
    (out,) = first["gen_ai.output.messages"]
    calls = [p for p in out["parts"] if p["type"] == "tool_call"]
    assert out["finish_reason"] == "tool_call" == first["gen_ai.response.finish_reasons"][0]
    assert [c["id"] for c in calls] == [b.id for b in replies[0].content if isinstance(b, ToolUseBlock)]
    assert all(isinstance(c["arguments"], dict) for c in calls)
    # The second call was sent the first reply and both results, tied by the canonical ids.
    answers = [
        p for m in second["gen_ai.input.messages"] for p in m["parts"] if p["type"] == "tool_call_response"
    ]
    assert [(a["id"], a["response"]) for a in answers] == [
        (c["id"], f"result-{n}: sunny") for n, c in enumerate(calls)
    ]
    assert [m["role"] for m in second["gen_ai.input.messages"]] == ["user", "assistant", "tool", "tool"]


def test_the_semconv_schema_rejects_what_the_conventions_reject() -> None:
    good = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    check("gen_ai.input.messages", good)
    bad_inputs = [
        [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],  # text needs `content`
        [{"role": "user"}],  # parts are required
        [{"role": "assistant", "parts": [{"type": "tool_call", "id": 3, "name": "f"}]}],  # id: string
        [{"role": "assistant", "parts": [{"type": "tool_call_response", "id": "x"}]}],  # no response
    ]
    for bad in bad_inputs:
        with pytest.raises(jsonschema.ValidationError):
            check("gen_ai.input.messages", bad)
    with pytest.raises(jsonschema.ValidationError):  # output messages need a finish_reason
        check("gen_ai.output.messages", good)


def test_metis_export_otel_on_imported_traffic(tmp_path: Path) -> None:
    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(ANTHROPIC_BODY))
    (session,) = imported(runner, db, "anthropic", path)
    out = tmp_path / "spans.jsonl"

    result = run(runner, "--db", db, "export", session, "--format", "otel", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stderr == "exported 2 otel line(s) from 1 session(s)\n"
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        for name in SCHEMAS:
            check(name, record["attributes"][name])
    first = records[0]["attributes"]
    assert first["gen_ai.system_instructions"] == [{"type": "text", "content": "You are terse."}]
    (asked,) = first["gen_ai.input.messages"]
    assert [p["type"] for p in asked["parts"]] == ["blob", "text"]
    assert asked["parts"][0]["modality"] == "image" and asked["parts"][0]["mime_type"] == "image/png"
    (said,) = first["gen_ai.output.messages"]
    assert [p["type"] for p in said["parts"]] == ["reasoning", "tool_call"]
    assert said["parts"][0]["content"] == "Looks like Paris."
    assert said["parts"][1]["arguments"] == {"city": "Paris"}
    stdout = run(runner, "--db", db, "export", session, "--format", "otel")
    assert [json.loads(line) for line in stdout.stdout.splitlines()] == records


# --- live spans -------------------------------------------------------------------------------------


@pytest.fixture
def spans() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_instrumented_client_emits_one_genai_span_per_exchange(
    store: Store, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    from metis.ops.otel import instrument

    tracer_provider, exporter = spans
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as client:
        instrument(client, tracer_provider=tracer_provider, capture_content=True)
        session_id, history = tool_loop(client, tmp_path)

    finished = exporter.get_finished_spans()
    records = list(expand(chat_records(session_id, history)))  # each call's input whole, as its span
    assert len(finished) == len(records) == 2
    for span, record in zip(finished, records, strict=True):
        assert span.name == record["name"] and span.kind == SpanKind.CLIENT
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.schema_url == "https://opentelemetry.io/schemas/1.41.0"
        attributes = dict(span.attributes or {})
        for name in SCHEMAS:  # structured content travels as JSON text
            assert json.loads(str(attributes.pop(name))) == record["attributes"][name]
        expected = {k: v for k, v in record["attributes"].items() if k not in SCHEMAS}
        assert {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()} == expected


def test_spans_leave_content_out_unless_asked_and_record_failures(
    store: Store, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    from metis.ops.otel import instrument

    tracer_provider, exporter = spans
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    provider = ScriptedProvider().add(json_reply(error, status=400))
    with scripted_client(store, provider) as client:
        instrument(client, tracer_provider=tracer_provider)
        session = client.session(ANTHROPIC.model, workspace=tmp_path)
        with pytest.raises(ProviderError):
            session.send("hello")
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert not set(SCHEMAS) & set(attributes)  # content is opt-in
    assert attributes["gen_ai.conversation.id"] == session.id
    assert attributes["error.type"] == "ProviderError"
    assert span.status.status_code == StatusCode.ERROR
    assert "gen_ai.usage.input_tokens" not in attributes


# --- jsonl-messages ---------------------------------------------------------------------------------


def test_dataset_lines_are_openai_chat_messages_with_tool_calls(store: Store, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as client:
        _, history = tool_loop(client, tmp_path)
    line = dataset_line(history)
    openai_contract.check_request({"model": "gpt-5", **line})  # the SDK's types, strict keys
    messages = line["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    calls = messages[1]["tool_calls"]
    uses = [b for b in history[1].content if isinstance(b, ToolUseBlock)]
    assert [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [
        (b.id, b.name, b.input) for b in uses
    ]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:4]] == [
        (b.id, f"result-{n}: sunny") for n, b in enumerate(uses)
    ]


def test_dataset_lines_leave_out_unfinished_turns(tmp_path: Path) -> None:
    with Store.open(new_target("sqlite", tmp_path)) as store:
        sid = store.create_session(str(tmp_path)).id
        store.append_many(
            [user(sid, "hi"), assistant(sid, "half a sen", status="cancelled"), user(sid, "hi?")]
        )
        store.append(assistant(sid, "Hello."))
        line = dataset_line(store.load_session(sid))
    assert line == {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "user", "content": "hi?"},
            {"role": "assistant", "content": "Hello."},
        ]
    }


def test_metis_export_jsonl_messages_one_line_per_session(tmp_path: Path) -> None:
    runner, db = CliRunner(), tmp_path / "cli.sqlite3"
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(ANTHROPIC_BODY))
    other = tmp_path / "recorded-again.json"  # the same turns under another system prompt
    other.write_text(json.dumps({**ANTHROPIC_BODY, "system": "You are terse, really."}))
    a = imported(runner, db, "anthropic", path)[0]
    b = imported(runner, db, "anthropic", other)[0]  # (the same file again would add nothing)

    result = run(runner, "--db", db, "export", a, b, "--format", "jsonl-messages")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 2  # the same turns in two sessions, each with its own tool ids
    assert [m["role"] for m in lines[0]["messages"]] == [m["role"] for m in lines[1]["messages"]]
    for line in lines:
        openai_contract.check_request({"model": "gpt-5", **line})
    messages = lines[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert messages[1]["content"][0] == {
        "type": "image_url",
        "image_url": {
            "url": "data:image/png;base64," + ANTHROPIC_BODY["messages"][0]["content"][0]["source"]["data"]
        },
    }
    assert messages[2]["content"] == "" and "thinking" not in json.dumps(messages[2])
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": messages[2]["tool_calls"][0]["id"],
        "content": "sunny, 21C",
    }


async def test_async_client_exchanges_are_traced_too(
    store: Store, tmp_path: Path, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    from metis.client import AsyncClient
    from metis.ops.otel import instrument

    tracer_provider, exporter = spans
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    fake = FakeTime()
    async with AsyncClient(
        store, transport=provider.transport(), api_keys=KEYS, sleep=fake.asleep, clock=fake.clock
    ) as client:
        instrument(client, tracer_provider=tracer_provider)
        session = client.session(ANTHROPIC.model, workspace=tmp_path)
        reply = await session.send("Weather in two cities?")
    (span,) = exporter.get_finished_spans()
    usage = reply.metadata.usage
    assert usage is not None and span.name == "chat claude-sonnet-4-6"
    assert dict(span.attributes or {})["gen_ai.usage.output_tokens"] == usage.output_tokens
    assert dict(span.attributes or {})["metis.message.id"] == reply.id


def test_a_workspace_image_cannot_go_into_a_dataset_line(tmp_path: Path) -> None:
    from metis.ops import ExportError

    from tests.support.store_support import message

    sid = "sess_x"
    picture = message(
        sid,
        "user",
        [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"kind": "file_ref", "data": "img.png"}, "media_type": "image/png"},
        ],
    )
    with pytest.raises(ExportError, match="file_ref, which a dataset line cannot carry") as caught:
        dataset_line([picture])
    assert caught.value.message_id == picture.id and caught.value.path == "content"


def test_otel_records_expand_to_the_whole_input_of_every_call() -> None:
    """Issue 29: a record lists only what its call was sent beyond the record before it, and
    `expand` gives back, for every call, exactly the input the whole-history record had:
    through SYSTEM messages, tool loops, a cancelled turn (never replayed) and a compaction
    (which rewrites the history the next call is sent)."""
    from metis import _json
    from metis.ops import compact
    from metis.ops.export_otel import OMITTED, chat_record, sent_before

    from tests.support.store_support import assistant_meta, message, tool_call, tool_ids_of, tool_result

    sid = "sess_expand"
    call = tool_call(sid, calls=2)
    first, second = tool_ids_of(call)
    history = [
        message(sid, "system", [{"type": "text", "text": "Be terse."}]),
        user(sid, "one"),
        assistant(sid, "two"),
        user(sid, "three"),
        call,
        tool_result(sid, first, "r1"),
        tool_result(sid, second, "r2"),
        assistant(sid, "cut off", status="cancelled"),
        user(sid, "again"),
        assistant(sid, "four"),
    ]
    through = history[-1].id
    history += [
        message(
            sid,
            "assistant",
            [
                {
                    "type": "compaction",
                    "provider": compact.COMPACTOR,
                    "summary": "They talked.",
                    "data": _json.dumps({"through": through}).decode(),
                }
            ],
            assistant_meta(),
        ),
        user(sid, "five"),
        assistant(sid, "six"),
        message(sid, "system", [{"type": "text", "text": "Now be verbose."}]),
        user(sid, "seven"),
        assistant(sid, "eight"),
    ]
    whole = []
    for i, reply in enumerate(history):
        if reply.role == Role.assistant:
            record = chat_record(sid, sent_before(sid, history, i), reply)
            del record["attributes"][OMITTED]
            whole.append(record)
    written = list(chat_records(sid, history))
    assert list(expand(written)) == whole
    assert list(expand(chat_records(sid, lambda: iter(history)))) == whole  # read again at the compaction
    listed = [len(r["attributes"]["gen_ai.input.messages"]) for r in written]
    # Records: two, the call, the cancelled turn, four, the compaction (its summarizer's
    # request), six (after the rewrite: the summary and five), eight.
    assert listed == [1, 1, 2, 1, 1, 2, 1], "each record lists only what is new"
    assert [r["attributes"][OMITTED] for r in written] == [0, 2, 4, 6, 0, 0, 3]
