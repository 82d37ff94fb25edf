"""Responses continuations (issue 30 item 3): a request that names an earlier response by
`previous_response_id` instead of sending it.

The import names the response (`metadata.continues`), never invents it, and keeps each
tool output's provider call id resolvable; the client, sending such a session to another
provider (or with `store: false`), writes the history the id stands for from the store
(`metis.continuation`, the rule the gateway uses too). Real parts: a SQLite store, the
client over loopback HTTP to a scripted provider (tests/support/gateway_support.py), the goldens
of tests/golden/responses (`request_continuation.json` continues `response_tools.json`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from metis import adapters
from metis.cli import cli
from metis.client import Client
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis.invariants import check_links
from metis_schema.v3 import Role

from tests.support import golden
from tests.support.contracts import responses as contract
from tests.support.gateway_support import ScriptedUpstream

RESPONSES = adapters.get("responses")
CONTINUED = "resp_68c1f0e2a5b48190a6f3d2c1b0e9f8a70b1c2d3e4f5a6b7c"
CALLS = ("call_Nb2Vc7Xz4Lk9Jh1Gf6Ds3Aq8", "call_Po5Iu0Yt8Re3Wq6Lk1Jh4Gf9")


def _request() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(golden.read_input("responses", "request_continuation.json"))
    return body


def test_a_continued_request_imports_naming_the_response_and_replays_exactly() -> None:
    body = _request()
    contract.sdk_validate(body)
    tool_ids = ToolIdMap("sess_c")
    imported = RESPONSES.from_wire_request(body, session_id="sess_c", tool_ids=tool_ids)
    assert [m.role for m in imported.messages] == [Role.tool, Role.tool]
    for message, call_id in zip(imported.messages, CALLS, strict=True):
        continues = message.metadata.continues
        assert continues is not None
        assert (continues.provider, continues.response_id, continues.message_id) == (
            "responses",
            CONTINUED,
            None,
        )
        block = message.content[0]
        assert block.type == "tool_result"
        assert tool_ids.provider_id(block.tool_use_id, "responses") == call_id  # resolvable later
        # the link rule accepts a result whose call is in the named response
        assert check_links(message, tool_uses={}, answered=set()) == []
    again = RESPONSES.to_wire(imported.messages, imported.tools, imported.options)
    contract.check_request(again, open_responses=True)
    assert again["previous_response_id"] == CONTINUED
    assert again["input"] == body["input"]


def test_an_output_answering_nothing_without_previous_response_id_is_still_refused() -> None:
    body = {k: v for k, v in _request().items() if k != "previous_response_id"}
    with pytest.raises(WireFormatError) as caught:
        RESPONSES.from_wire_request(body, session_id="sess_c", tool_ids=ToolIdMap("sess_c"))
    assert caught.value.path == "input[0].call_id"
    assert caught.value.hint is not None and "previous_response_id" in caught.value.hint


def test_without_the_name_the_link_rule_refuses_the_same_result() -> None:
    imported = RESPONSES.from_wire_request(_request(), session_id="sess_c", tool_ids=ToolIdMap("sess_c"))
    message = imported.messages[0]
    unnamed = message.model_copy(update={"metadata": message.metadata.model_copy(update={"continues": None})})
    assert [v.rule for v in check_links(unnamed, tool_uses={}, answered=set())] == ["§5.2.2"]


# --- the client writes the history the id stands for ----------------------------------------


@pytest.fixture
def client(upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Client]:
    base = upstream.url
    with Client(
        str(tmp_path / "metis.db"),
        api_keys={"anthropic": "k", "responses": "k"},
        base_urls={"anthropic": base, "responses": f"{base}/v1"},
        max_retries=0,
    ) as made:
        yield made


def _first_exchange(client: Client, upstream: ScriptedUpstream) -> str:
    """Session A: the user's question and the stored `response_tools.json` reply."""
    upstream.reply("/v1/responses", "responses/response_tools.json")
    first = client.session("responses:gpt-5")
    first.send("Weather in Paris and Tokyo?")
    return first.id


def _continued_session(client: Client, body: dict[str, Any]) -> Any:
    """Session B: the continuing request imported and stored (its outputs only)."""
    session = client.session("responses:gpt-5")
    imported = RESPONSES.from_wire_request(body, session_id=session.id, tool_ids=session.tool_ids)
    client.store.append_many(imported.messages, tool_ids=session.tool_ids)
    return client.resume(session.id), imported


def test_the_client_sends_another_provider_the_history_a_continuation_stands_for(
    client: Client, upstream: ScriptedUpstream
) -> None:
    _first_exchange(client, upstream)
    session, _ = _continued_session(client, _request())
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    session.send(model="anthropic:claude-sonnet-4-6")
    path, sent = upstream.received[-1]
    assert path == "/v1/messages"
    assert [turn["role"] for turn in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["messages"][0]["content"][0]["text"] == "Weather in Paris and Tokyo?"
    uses = [b["id"] for b in sent["messages"][1]["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in sent["messages"][2]["content"] if b["type"] == "tool_result"]
    assert len(uses) == 2 and results == uses
    # the history went on the wire, not into session B
    stored = client.store.load_session(session.id)
    assert [m.role for m in stored] == [Role.tool, Role.tool, Role.assistant]


def test_store_false_to_the_same_provider_carries_the_history_instead_of_the_id(
    client: Client, upstream: ScriptedUpstream
) -> None:
    _first_exchange(client, upstream)
    session, imported = _continued_session(client, _request())
    upstream.reply("/v1/responses", "responses/response_refusal.json")
    own = imported.options.provider_options["responses"]
    session.send(provider_options={"responses": {**own, "store": False}})
    _, sent = upstream.received[-1]
    assert "previous_response_id" not in sent
    kinds = [item.get("type", "message") for item in sent["input"]]
    assert kinds == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call",
        *["function_call_output"] * 2,
    ]
    calls = [i["call_id"] for i in sent["input"] if i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in sent["input"] if i.get("type") == "function_call_output"]
    assert outputs == calls


def test_the_same_provider_with_its_storage_gets_the_id_as_sent(
    client: Client, upstream: ScriptedUpstream
) -> None:
    _first_exchange(client, upstream)
    session, imported = _continued_session(client, _request())
    upstream.reply("/v1/responses", "responses/response_refusal.json")
    session.send(provider_options=imported.options.provider_options)
    _, sent = upstream.received[-1]
    assert sent["previous_response_id"] == CONTINUED
    assert [i["type"] for i in sent["input"]] == ["function_call_output"] * 2


def test_a_history_the_store_does_not_hold_goes_without_it_with_the_five_field_warn(
    client: Client, upstream: ScriptedUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    session, _ = _continued_session(client, _request())  # no first exchange stored
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        session.send(model="anthropic:claude-sonnet-4-6")
    warned = [r for r in caplog.records if getattr(r, "block_type", None) == "continuation"]
    assert len(warned) == 1
    record = warned[0]
    assert record.session_id == session.id  # type: ignore[attr-defined]
    assert record.message_id == client.store.load_session(session.id)[0].id  # type: ignore[attr-defined]
    assert record.adapter == "anthropic"  # type: ignore[attr-defined]
    assert CONTINUED in record.reason  # type: ignore[attr-defined]


# --- metis convert: the same rule ------------------------------------------------------------


def test_convert_to_another_provider_writes_the_stored_history(
    client: Client, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    _first_exchange(client, upstream)
    request = tmp_path / "continued.json"
    request.write_text(json.dumps(_request()), encoding="utf-8")
    db = str(tmp_path / "metis.db")
    result = CliRunner().invoke(
        cli,
        ["--db", db, "convert", "--from", "responses", "--to", "anthropic", str(request)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    sent = json.loads(result.stdout)
    assert [turn["role"] for turn in sent["messages"]] == ["user", "assistant", "user"]
    uses = [b["id"] for b in sent["messages"][1]["content"] if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in sent["messages"][2]["content"]] == uses
    # and to Responses itself the request goes as it came: the id, the outputs
    result = CliRunner().invoke(
        cli,
        ["--db", db, "convert", "--from", "responses", "--to", "responses", str(request)],
        catch_exceptions=False,
    )
    again = json.loads(result.stdout)
    assert again["previous_response_id"] == CONTINUED
    assert again["input"] == _request()["input"]


def test_the_same_provider_is_sent_the_id_from_the_reference_when_no_option_gives_it(
    client: Client, upstream: ScriptedUpstream
) -> None:
    # the earlier response is not stored here: the provider that holds it is named it
    session, _ = _continued_session(client, _request())
    upstream.reply("/v1/responses", "responses/response_refusal.json")
    session.send()
    _, sent = upstream.received[-1]
    assert sent["previous_response_id"] == CONTINUED
    assert [i["type"] for i in sent["input"]] == ["function_call_output"] * 2


# --- metis import: a continuing exchange joins the conversation it continues -------------------


def test_import_appends_a_continuing_exchange_to_the_session_its_response_ends(tmp_path: Path) -> None:
    """Two recorded exchanges: the first's reply (`response_tools.json`, id CONTINUED), then
    the request continuing it by id. The second is appended to the first's session, its
    continuation resolved to the stored reply; imported again, it adds nothing."""
    first_reply = json.loads(golden.read_input("responses", "response_tools.json"))
    first = {
        "model": "gpt-5",
        "input": "Weather in Paris and Tokyo?",
        "tools": _request()["tools"],
    }
    second_reply = json.loads(golden.read_input("responses", "response_refusal.json"))
    lines = [{"request": first, "response": first_reply}, {"request": _request(), "response": second_reply}]
    recording = tmp_path / "exchanges.jsonl"
    recording.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    db = str(tmp_path / "imported.db")
    result = CliRunner().invoke(cli, ["--db", db, "import", "--from", "responses", str(recording)])
    assert result.exit_code == 0, result.output
    assert "1 stored" in result.stderr and "1 appended" in result.stderr, result.stderr
    (session_id,) = set(result.stdout.split())
    with Client(db) as reader:
        messages = reader.store.load_session(session_id)
    assert [m.role for m in messages] == [Role.user, Role.assistant, Role.tool, Role.tool, Role.assistant]
    reply = messages[1]
    continues = messages[2].metadata.continues
    assert continues is not None and continues.message_id == reply.id
    calls = [b.id for b in reply.content if b.type == "tool_use"]
    assert [m.content[0].tool_use_id for m in messages[2:4]] == calls  # type: ignore[union-attr]
    again = CliRunner().invoke(cli, ["--db", db, "import", "--from", "responses", str(recording)])
    assert "2 duplicate" in again.stderr, again.stderr
