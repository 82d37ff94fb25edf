"""`metis serve` end to end: the official `openai` and `anthropic` SDKs over real HTTP on
loopback, against a scripted upstream replaying the providers' own documented replies
(tests/golden). Each test checks what the SDK got, what the upstream was sent, and what
the store holds.
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai
import pytest
from metis.gateway import SESSION_HEADER
from metis.store import open_store

from tests.support.gateway_support import Gateway, ScriptedUpstream, metis_serve
from tests.support.gateway_support import anthropic_client as _anthropic
from tests.support.gateway_support import openai_client as _openai


def _stored(gateway: Gateway, session_id: str) -> list[str]:
    with open_store(gateway.store) as store:
        return [f"{m.role.value}:{m.metadata.provider or ''}" for m in store.load_session(session_id)]


def test_openai_sdk_to_an_anthropic_model_whole(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    upstream.reply("/v1/messages", "anthropic/response_thinking.json")
    raw = _openai(gateway).chat.completions.with_raw_response.create(
        model="anthropic:claude-sonnet-4-6",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
    )
    reply = raw.parse()
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls and choice.message.tool_calls[0].function.name == "get_weather"
    assert choice.message.content
    path, sent = upstream.received[-1]
    assert path == "/v1/messages"
    assert sent["system"] == "Be brief." and sent["messages"][0]["role"] == "user"
    assert [t["name"] for t in sent["tools"]] == ["get_weather"]
    session = raw.headers[SESSION_HEADER]
    assert _stored(gateway, session) == ["system:", "user:", "assistant:anthropic"]


def test_a_tool_loop_continues_the_session(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    upstream.reply("/v1/messages", "anthropic/response_thinking.json")
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
        }
    ]
    history: list[dict[str, object]] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.with_raw_response.create(
        model="anthropic:claude-sonnet-4-6", messages=history, tools=tools
    )
    session = first.headers[SESSION_HEADER]
    message = first.parse().choices[0].message
    call = message.tool_calls[0]  # type: ignore[index]
    history += [
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "14 °C, light rain"},
    ]
    second = client.chat.completions.with_raw_response.create(
        model="anthropic:claude-sonnet-4-6",
        messages=history,
        tools=tools,
        extra_headers={SESSION_HEADER: session},
    )
    assert second.headers[SESSION_HEADER] == session
    assert second.parse().choices[0].message.content
    _, sent = upstream.received[-1]
    sent_call = sent["messages"][1]["content"][-1]
    sent_result = sent["messages"][2]["content"][0]
    assert sent_call["type"] == "tool_use" and sent_result["type"] == "tool_result"
    assert sent_result["tool_use_id"] == sent_call["id"], "the client's call id maps back to the upstream's"
    assert _stored(gateway, session) == ["user:", "assistant:anthropic", "tool:", "assistant:anthropic"]


def test_openai_sdk_streams_from_an_anthropic_model(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    upstream.reply("/v1/messages", "anthropic/stream_citations.sse")
    stream = _openai(gateway).chat.completions.create(
        model="anthropic:claude-sonnet-4-6",
        messages=[{"role": "user", "content": "What happened?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    assert upstream.received[-1][1]["stream"] is True


def test_anthropic_sdk_to_an_openai_model_whole_and_streamed(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    upstream.reply("/v1/chat/completions", "openai/response_tools.json")
    upstream.reply("/v1/chat/completions", "openai/stream_text.sse")
    client = _anthropic(gateway)
    whole = client.messages.create(
        model="openai:gpt-4.1", max_tokens=100, messages=[{"role": "user", "content": "Weather?"}]
    )
    assert whole.stop_reason == "tool_use"
    assert any(block.type == "tool_use" for block in whole.content)
    assert upstream.received[-1][1]["max_completion_tokens"] == 100
    with client.messages.stream(
        model="openai:gpt-4.1", max_tokens=100, messages=[{"role": "user", "content": "Weather?"}]
    ) as stream:
        text = stream.get_final_text()
        final = stream.get_final_message()
    assert text and final.stop_reason == "end_turn"
    assert final.usage.output_tokens > 0


def test_responses_sdk_creates_and_retrieves(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    created = client.responses.create(model="anthropic:claude-sonnet-4-6", input="What happened?")
    assert created.status == "completed" and created.output_text
    again = client.responses.retrieve(created.id)
    assert again.id == created.id and again.output_text == created.output_text


def test_upstream_errors_come_back_in_the_clients_format(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    upstream.reply("/v1/messages", "anthropic/error_429.json", status=429)
    with pytest.raises(openai.RateLimitError) as caught:
        _openai(gateway).chat.completions.create(
            model="anthropic:claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 429
    upstream.reply("/v1/chat/completions", "openai/error_400.json", status=400)
    with pytest.raises(anthropic.BadRequestError):
        _anthropic(gateway).messages.create(
            model="openai:gpt-4.1", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )


def test_a_stream_that_fails_before_its_first_event_answers_with_the_status(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    # Nothing streamed yet: the failure is the answer, in the inbound API's error shape with
    # the upstream's status (not 200 and an in-stream error event), so the SDK raises its
    # typed status error from `create(stream=True)` as it does for a whole reply.
    upstream.reply("/v1/messages", "anthropic/error_429.json", status=429)
    with pytest.raises(openai.RateLimitError) as limited:
        _openai(gateway).chat.completions.create(
            model="anthropic:claude-sonnet-4-6", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    assert limited.value.status_code == 429
    upstream.reply("/v1/chat/completions", "openai/error_400.json", status=400)
    with pytest.raises(anthropic.BadRequestError) as refused:
        _anthropic(gateway).messages.create(
            model="openai:gpt-4.1", max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    assert refused.value.status_code == 400
    assert isinstance(refused.value.body, dict) and refused.value.body["type"] == "error"
    sent = len(upstream.received)
    # refused by the client's own checks (a thinking budget the schema does not allow)
    # before anything is sent upstream
    with pytest.raises(anthropic.BadRequestError, match="thinking_budget") as checked:
        _anthropic(gateway).messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            thinking={"type": "enabled", "budget_tokens": -1},
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
    assert checked.value.status_code == 400
    assert len(upstream.received) == sent, "the refused request never reached the upstream"


def test_bad_requests_are_refused_in_the_clients_format(gateway: Gateway, upstream: ScriptedUpstream) -> None:
    with pytest.raises(openai.BadRequestError, match="unknown model"):
        _openai(gateway).chat.completions.create(
            model="nope:nothing", messages=[{"role": "user", "content": "hi"}]
        )
    with pytest.raises(anthropic.BadRequestError):
        _anthropic(gateway).post("/v1/messages", body=[1, 2], cast_to=object)
    assert upstream.received == [], "nothing refused reached the upstream"


def test_request_bodies_are_bounded(upstream: ScriptedUpstream, tmp_path: Path) -> None:
    small = Gateway(upstream, str(tmp_path / "g.sqlite3"), max_body_bytes=1000)
    try:
        with pytest.raises(openai.APIStatusError) as caught:
            _openai(small).chat.completions.create(
                model="gpt-4.1", messages=[{"role": "user", "content": "x" * 5000}]
            )
        assert caught.value.status_code == 413
    finally:
        small.close()


def test_models_lists_the_catalog(gateway: Gateway) -> None:
    ids = [m.id for m in _openai(gateway).models.list()]
    assert "anthropic:claude-sonnet-4-6" in ids and "openai:gpt-4o" in ids


def test_metis_serve_runs_the_gateway_as_a_process(upstream: ScriptedUpstream, tmp_path: Path) -> None:
    # The command users run: a real process on a real port, upstream keys and base URLs
    # from the environment, the store from --db.
    store = tmp_path / "served.sqlite3"
    with metis_serve(upstream, str(store), tmp_path, start_within=30, timeout=10) as client:
        upstream.reply("/v1/messages", "anthropic/response_citations.json")
        reply = client.chat.completions.create(
            model="anthropic:claude-sonnet-4-6", messages=[{"role": "user", "content": "What happened?"}]
        )
        assert reply.choices[0].message.content
    with open_store(str(store)) as opened:
        sessions = opened.list_sessions()
    assert len(sessions) == 1


def test_previous_response_id_continues_on_a_non_openai_model(
    gateway: Gateway, upstream: ScriptedUpstream
) -> None:
    # The Responses SDK continues a stored reply by id; the model is Anthropic's, which has
    # no server-side state: the gateway sends the whole conversation in its place.
    upstream.reply("/v1/messages", "anthropic/response_thinking.json")
    upstream.reply("/v1/messages", "anthropic/response_citations.json")
    client = _openai(gateway)
    first = client.responses.create(
        model="anthropic:claude-sonnet-4-6",
        input="Weather in Paris?",
        tools=[
            {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {}}}
        ],
    )
    call = next(item for item in first.output if item.type == "function_call")
    second = client.responses.create(
        model="anthropic:claude-sonnet-4-6",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "14 °C, light rain"}],
    )
    assert second.output_text
    _, sent = upstream.received[-1]
    assert "previous_response_id" not in sent
    roles = [turn["role"] for turn in sent["messages"]]
    assert roles == ["user", "assistant", "user"]
    tool_use = next(b for b in sent["messages"][1]["content"] if b["type"] == "tool_use")
    result = sent["messages"][2]["content"][0]
    assert result == {**result, "type": "tool_result", "tool_use_id": tool_use["id"]}
    with pytest.raises(openai.NotFoundError):
        client.responses.create(
            model="anthropic:claude-sonnet-4-6", previous_response_id="resp_01NOPE", input="hi"
        )
