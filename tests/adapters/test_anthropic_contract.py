"""The Anthropic contract module itself: its check bites, its fixtures are what the SDK sends."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import TypeAdapter, ValidationError

from tests.support.contracts import anthropic as contract


def test_check_request_rejects_a_tool_use_without_name_or_input() -> None:
    broken: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 16,
        "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1"}]}],
    }
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(broken)  # the lazy check alone passes...
    with pytest.raises(ValidationError):
        contract.check_request(broken)  # ...draining the iterables catches it


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.pop("max_tokens"),
        lambda b: b["messages"][0].update(role="tool"),
        lambda b: b["messages"][0]["content"].append(
            {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}}
        ),
        lambda b: b.update(stream=True, system=[{"type": "text"}]),
    ],
)
def test_check_request_rejects_other_broken_bodies(mutate: Any) -> None:
    body: dict[str, Any] = {
        "model": "m",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    contract.check_request(body)
    mutate(body)
    with pytest.raises(ValidationError):
        contract.check_request(body)


def test_fixtures_have_the_sdk_shapes() -> None:
    contract.check_response(contract.response_fixture())
    status, body = contract.error_fixture()
    assert status == 529 and body["error"]["type"] == "overloaded_error"
    for block in b"".join(contract.stream_fixture()).decode().split("\n\n"):
        if block.strip():
            contract.check_stream_event(orjson.loads(block.split("data: ", 1)[1]))
    with pytest.raises(ValidationError):
        contract.check_stream_event(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
        )
