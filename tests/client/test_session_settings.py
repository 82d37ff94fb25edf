"""The session is the whole conversation (issue 27): the tools and request options each
exchange was sent with are recorded, and what reads a stored session uses them.

The client records them on every send, against the id its reply gets; `resume` without
`tools=` sends the stored tools (checked through the provider SDKs' own request types,
drained so the check bites), with `tools=` records a new revision; `metis replay` and
`metis convert --session` build the body with the stored tools and options; `fork` copies
the revisions its history needs; `metis show` prints the settings in force; `metis import`
records what the recorded request carried. Traffic comes from the SDK-built fixtures of the
contract suite, served by a scripted provider on the client's real HTTP path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from metis.adapters import AdapterOptions, OutputSchema
from metis.errors import DocumentError
from metis.ids import ToolIdMap
from metis.ops import fork_session
from metis.settings import adapter_fields, request_options
from metis.store import Store
from metis_schema.v3 import Message, RequestOptions, Role, ToolDefinition, ToolUseBlock

from tests.support.cli_support import ANTHROPIC_BODY, imported, run
from tests.support.client_support import (
    PROVIDERS,
    ScriptedProvider,
    json_reply,
    ok_body,
    scripted_client,
)
from tests.support.contracts import anthropic as anthropic_contract
from tests.support.contracts import openai as openai_contract

ANTHROPIC, OPENAI = PROVIDERS[0], PROVIDERS[1]
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather of a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
    side_effects="network",
    requires_workspace=False,
)
READ_FILE = ToolDefinition(
    name="read_file",
    description="Read a file of the workspace.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    side_effects="read",
)
CONTRACTS = {"anthropic": anthropic_contract.check_request, "openai": openai_contract.check_request}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "metis.sqlite3"


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db) as opened:
        yield opened


def answer_calls(session: Any, reply: Message) -> None:
    for n, block in enumerate(b for b in reply.content if isinstance(b, ToolUseBlock)):
        session.add_tool_result(block.id, f"result-{n}: sunny")


def three_exchanges(store: Store, tmp_path: Path) -> tuple[str, list[Message]]:
    """An Anthropic session of three exchanges, each sent with other options (3 revisions)."""
    provider = ScriptedProvider().add(*(json_reply(ok_body(ANTHROPIC)) for _ in range(3)))
    with scripted_client(store, provider) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path, tools=[WEATHER])
        replies = []
        for tokens in (100, 200, 300):
            reply = session.send("Weather?" if not replies else None, max_tokens=tokens, temperature=0.2)
            answer_calls(session, reply)
            replies.append(reply)
        return session.id, replies


# --- recorded on every send ---------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_every_send_records_its_tools_and_options_against_its_reply(
    store: Store, tmp_path: Path, stream: bool
) -> None:
    from tests.support.client_support import stream_chunks, stream_reply

    reply_of = (
        (lambda: stream_reply(stream_chunks(ANTHROPIC)))
        if stream
        else (lambda: json_reply(ok_body(ANTHROPIC)))
    )
    provider = ScriptedProvider().add(reply_of(), reply_of())
    with scripted_client(store, provider) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path, tools=[WEATHER])
        first = session.send(
            "Weather in two cities?", stream=stream, max_tokens=512, tool_choice="any", extra={"top_k": 3}
        )
        answer_calls(session, first)
        second = session.send(stream=stream)  # no options now: a new revision
    assert provider.body(0)["top_k"] == 3
    (one, two) = store.settings_revisions(session.id)
    assert one.tools == two.tools == [WEATHER]
    assert one.options == RequestOptions(
        max_tokens=512, tool_choice="any", provider_options={"anthropic": {"top_k": 3}}
    )
    assert two.options == RequestOptions()
    assert [(e.message_id, e.revision) for e in store.exchange_settings(session.id)] == [
        (first.id, 1),
        (second.id, 2),
    ]


def test_an_option_the_record_refuses_is_refused_before_anything_is_stored(
    store: Store, tmp_path: Path
) -> None:
    provider = ScriptedProvider()
    with scripted_client(store, provider) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path)
        with pytest.raises(DocumentError, match="max_tokens"):
            session.send("hi", max_tokens=0)
    assert provider.requests == [] and store.load_session(session.id) == []
    assert store.settings(session.id) is None


def test_options_map_to_the_record_and_back() -> None:
    options = AdapterOptions(
        model="openai:gpt-5",
        session_id="s",
        tool_ids=ToolIdMap("s"),
        max_tokens=64,
        temperature=1,
        top_p=0.5,
        stop=["END"],
        tool_choice="get_weather",
        thinking_budget=0,
        output_schema=OutputSchema(schema={"type": "object"}, name="answer", strict=True),
        provider_options={"openai": {"seed": 7}, "anthropic": {"top_k": 5}},
        extra={"logprobs": True, "metis": {"system_role": "developer"}},
        stream=True,
    )
    record = request_options(options, "openai")
    assert record.model_dump(mode="json", exclude_none=True) == {
        "max_tokens": 64,
        "temperature": 1.0,
        "top_p": 0.5,
        "stop": ["END"],
        "tool_choice": "get_weather",
        "thinking_budget": 0,
        "output_schema": {"json_schema": {"type": "object"}, "name": "answer", "strict": True},
        "provider_options": {
            "openai": {"seed": 7, "logprobs": True, "metis": {"system_role": "developer"}},
            "anthropic": {"top_k": 5},
        },
    }
    back = AdapterOptions(
        model="openai:gpt-5", session_id="s", tool_ids=ToolIdMap("s"), **adapter_fields(record)
    )
    assert request_options(back, "openai") == record
    assert back.output_schema == OutputSchema(schema={"type": "object"}, name="answer", strict=True)


# --- resume -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [ANTHROPIC, OPENAI], ids=lambda c: c.provider)
def test_resume_without_tools_sends_the_stored_tools(store: Store, tmp_path: Path, case: Any) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(case)), json_reply(ok_body(case)))
    with scripted_client(store, provider) as c:
        session = c.session(case.model, workspace=tmp_path, tools=[WEATHER])
        first = session.send("Weather in two cities?", max_tokens=256)
        session_id = session.id
    with scripted_client(store, provider) as c:
        resumed = c.resume(session_id)  # a new process: nothing but the store
        answer_calls(resumed, first)
        resumed.send()
    body = provider.body(1)
    CONTRACTS[case.provider](body)  # the SDK's request types, drained
    names = [t["name"] if case.provider == "anthropic" else t["function"]["name"] for t in body["tools"]]
    assert names == ["get_weather"], "the tool_use history is sent with its tool definitions"
    assert [r.revision for r in store.settings_revisions(session_id)] == [1, 2]  # max_tokens not re-sent


def test_resume_with_tools_records_them_as_a_new_revision(store: Store, tmp_path: Path) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)), json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path, tools=[WEATHER])
        first = session.send("Weather?", max_tokens=256)
        resumed = c.resume(session.id, tools=[WEATHER, READ_FILE])
        latest = store.settings(session.id)
        assert latest is not None and latest.revision == 2
        assert [t.name for t in latest.tools] == ["get_weather", "read_file"]
        assert latest.options == RequestOptions(max_tokens=256), "the options in force are kept"
        assert c.resume(session.id).core.tools == (WEATHER, READ_FILE)
        answer_calls(resumed, first)
        resumed.send()
    assert [t["name"] for t in provider.body(1)["tools"]] == ["get_weather", "read_file"]


# --- replay, convert --------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["openai:gpt-5", "anthropic:claude-sonnet-4-6"])
def test_metis_replay_builds_the_body_with_the_stored_tools_and_options(
    store: Store, db: Path, tmp_path: Path, target: str
) -> None:
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as c:
        session = c.session(ANTHROPIC.model, workspace=tmp_path, tools=[WEATHER])
        reply = session.send(
            "Weather in two cities?", max_tokens=300, temperature=0.25, tool_choice="get_weather"
        )
        answer_calls(session, reply)
    result = run(CliRunner(), "--db", db, "replay", session.id, "--to", target)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    CONTRACTS[target.split(":", maxsplit=1)[0]](body)
    if target.startswith("openai"):
        assert body["tools"] == [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": WEATHER.description,
                    "parameters": WEATHER.input_schema,
                },
            }
        ]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
        assert body["max_completion_tokens"] == 300 and body["temperature"] == 0.25
    else:
        assert [t["name"] for t in body["tools"]] == ["get_weather"]
        assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
        assert body["max_tokens"] == 300 and body["temperature"] == 0.25
    assert "settings: revision 1 (get_weather)" in result.stderr


def test_an_imported_tool_using_session_replays_with_its_tools(db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps({"request": ANTHROPIC_BODY, "response": ok_body(ANTHROPIC)}))
    (session_id,) = imported(runner, db, "anthropic", path)
    with Store.open(db) as store:
        (revision,) = store.settings_revisions(session_id)
        messages = store.load_session(session_id)
        (exchange,) = store.exchange_settings(session_id)
    assert [t.name for t in revision.tools] == ["get_weather"]
    assert revision.options.max_tokens == 1024
    assert exchange.message_id == messages[-1].id and messages[-1].role == Role.assistant
    for target, spelled in (("anthropic:claude-sonnet-4-6", "name"), ("openai:gpt-5", "function")):
        result = run(runner, "--db", db, "replay", session_id, "--to", target)
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)
        CONTRACTS[target.split(":")[0]](body)
        assert len(body["tools"]) == 1 and spelled in body["tools"][0]


def test_convert_takes_a_stored_session_with_its_settings(db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps(ANTHROPIC_BODY))
    (session_id,) = imported(runner, db, "anthropic", path)
    report = tmp_path / "report.json"
    result = run(runner, "--db", db, "convert", "--session", session_id, "--to", "openai", "--report", report)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    openai_contract.check_request(body)
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["max_completion_tokens"] == 1024
    assert json.loads(report.read_text())["from"] == f"session {session_id}"
    both = run(runner, "--db", db, "convert", "--session", session_id, "--to", "openai", path)
    assert both.exit_code == 2 and "not both" in both.output


# --- fork, show -------------------------------------------------------------------------------------


def test_fork_copies_the_revisions_its_history_needs(store: Store, tmp_path: Path) -> None:
    session_id, replies = three_exchanges(store, tmp_path)
    assert [r.options.max_tokens for r in store.settings_revisions(session_id)] == [100, 200, 300]

    early = fork_session(store, session_id, at=replies[0].id)
    kept = store.settings_revisions(early.id)
    # The first reply's revision, and the one the parent went on with after it: not the third.
    assert [(r.revision, r.options.max_tokens) for r in kept] == [(1, 100), (2, 200)]
    assert all(r.session_id == early.id and r.tools == [WEATHER] for r in kept)
    (exchange,) = store.exchange_settings(early.id)
    forked_reply = store.load_session(early.id)[-1]
    assert (exchange.message_id, exchange.revision) == (forked_reply.id, 1)

    whole = fork_session(store, session_id, at=store.load_session(session_id)[-1].id)
    assert [r.revision for r in store.settings_revisions(whole.id)] == [1, 2, 3]
    assert [e.revision for e in store.exchange_settings(whole.id)] == [1, 2, 3]


def test_show_prints_the_settings_in_force(store: Store, db: Path, tmp_path: Path) -> None:
    session_id, _ = three_exchanges(store, tmp_path)
    runner = CliRunner()
    text = run(runner, "--db", db, "show", session_id)
    assert text.exit_code == 0, text.output
    assert text.stdout.splitlines()[-4:] == [
        "settings in force: revision 3 of 3",
        "  tool get_weather: Current weather of a city.",
        "  max_tokens: 300",
        "  temperature: 0.2",
    ]
    doc = json.loads(run(runner, "--db", db, "show", session_id, "--json").stdout)
    settings = doc["settings"]
    assert settings["revision"] == 3
    assert settings["tools"] == [WEATHER.model_dump(mode="json", exclude_none=True)]
    assert settings["options"] == {"max_tokens": 300, "temperature": 0.2}
    assert [r["revision"] for r in settings["revisions"]] == [1, 2, 3]
    replies = [m["id"] for m in doc["messages"] if m["role"] == "assistant"]
    assert [(e["message_id"], e["revision"]) for e in settings["exchanges"]] == list(
        zip(replies, [1, 2, 3], strict=True)
    )


def test_a_tool_history_without_known_tools_is_said_so(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.support.store_support import tool_call, tool_ids_of, tool_result, user

    # A session stored before tool sets were recorded: tool calls, no settings.
    sid = store.create_session(str(tmp_path), active_model=ANTHROPIC.model).id
    call = tool_call(sid)
    store.append_many([user(sid), call, tool_result(sid, tool_ids_of(call)[0])])
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as c, caplog.at_level("WARNING", logger="metis.client"):
        c.resume(sid).send()
    (record,) = [r for r in caplog.records if r.name == "metis.client"]
    assert "calls read_file but no tool definitions are sent" in record.getMessage()


def test_a_stored_tool_outside_the_subset_fails_the_send_not_the_resume(store: Store, tmp_path: Path) -> None:
    from metis.errors import ToolSchemaError

    # An import keeps a recorded tool as it was sent, `oneOf` and all.
    odd = WEATHER.model_copy(update={"input_schema": {"type": "object", "oneOf": [{"required": ["city"]}]}})
    sid = store.create_session(str(tmp_path), active_model=ANTHROPIC.model).id
    store.record_settings(sid, [odd])
    provider = ScriptedProvider().add(json_reply(ok_body(ANTHROPIC)))
    with scripted_client(store, provider) as c:
        resumed = c.resume(sid)  # opens: reading, repair and compaction need no tools
        with pytest.raises(ToolSchemaError, match="a stored tool cannot be offered") as caught:
            resumed.send("Weather?")
        assert "tools=" in str(caught.value)
        assert provider.requests == [] and store.load_session(sid) == []
        c.resume(sid, tools=[WEATHER]).send("Weather?")
    assert [t["name"] for t in provider.body(0)["tools"]] == ["get_weather"]
