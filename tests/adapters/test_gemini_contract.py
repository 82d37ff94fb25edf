"""Gemini against google-genai 3.4: our bodies pass the SDK's models, broken ones do not, and
responses built by the SDK's own response models parse (whole and streamed)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from metis.errors import ProviderError
from metis.ids import ToolIdMap
from metis_schema.v3 import MessageStatus, StopReason
from pydantic import ValidationError

from tests.support.contracts.gemini import (
    ContractViolation,
    check_request,
    check_response,
    error_fixture,
    materialize,
    response_fixture,
    stream_fixture,
)
from tests.support.gemini_support import (
    ADAPTER,
    SESSION,
    TOOLS,
    chunked,
    context,
    normalized,
    options,
    sse_chunks,
    tool_result,
    user,
)


def valid_body() -> dict[str, Any]:
    ids = ToolIdMap(SESSION)
    turn = ADAPTER.from_wire_response(response_fixture(), context(ids))
    a, b = (block.id for block in turn.content if block.type == "tool_use")
    messages = [user("Weather in Paris and Oslo?"), turn, tool_result(a, "18°C"), tool_result(b, "4°C")]
    return ADAPTER.to_wire(
        messages, TOOLS, options(ids, max_tokens=256, thinking_budget=128, tool_choice="auto")
    )


def test_a_body_from_to_wire_passes() -> None:
    check_request(valid_body())


def _break(body: dict[str, Any], how: str) -> dict[str, Any]:
    body = copy.deepcopy(body)
    parts = body["contents"][1]["parts"]
    call = next(p for p in parts if "functionCall" in p)
    if how == "args as a string":
        call["functionCall"]["args"] = '{"city": "Paris"}'
    elif how == "misspelled key":
        call["functionCal"] = call.pop("functionCall")
    elif how == "assistant role":
        body["contents"][1]["role"] = "assistant"
    elif how == "bad base64 signature":
        call["thoughtSignature"] = "not base64!"
    elif how == "bad inline data":
        body["contents"][0]["parts"].append({"inlineData": {"mimeType": "image/png", "data": "%%%"}})
    elif how == "two kinds in one part":
        call["text"] = "and some text"
    elif how == "missing response":
        body["contents"][2]["parts"].pop()
    elif how == "response name mismatch":
        body["contents"][2]["parts"][0]["functionResponse"]["name"] = "get_time"
    elif how == "unknown top-level field":
        body["generation_config"] = {"temperature": 1}
    elif how == "bad generation config":
        body["generationConfig"]["maxOutputTokens"] = "many"
    elif how == "bad tool config mode":
        body["toolConfig"]["functionCallingConfig"]["mode"] = "SOMETIMES"
    elif how == "tool declaration typo":
        body["tools"][0]["functionDeclarations"][0]["params"] = {}
    return body


@pytest.mark.parametrize(
    "how",
    [
        "args as a string",
        "misspelled key",
        "assistant role",
        "bad base64 signature",
        "bad inline data",
        "two kinds in one part",
        "missing response",
        "response name mismatch",
        "unknown top-level field",
        "bad generation config",
        "bad tool config mode",
        "tool declaration typo",
    ],
)
def test_a_broken_body_fails(how: str) -> None:
    with pytest.raises((ValidationError, ContractViolation)):
        check_request(_break(valid_body(), how))


def test_materialize_drains_lazy_iterables() -> None:
    """The walk that makes lazily validated fields count (none in google-genai 3.4 today)."""

    def lazy() -> Iterator[int]:
        yield from (1, 2)

    assert materialize({"a": lazy(), "b": (x for x in [{"c": lazy()}])}) == {
        "a": [1, 2],
        "b": [{"c": [1, 2]}],
    }


def test_the_sdk_built_response_parses() -> None:
    body = response_fixture()
    check_response(body)
    message = ADAPTER.from_wire_response(body, context())
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.metadata.stop_reason == StopReason.tool_use
    usage = message.metadata.usage
    assert usage is not None and (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (
        156,
        256,
        154,
    )
    raw = message.metadata.provider_raw or {}
    assert raw["part_signatures"] == [[1, body["candidates"][0]["content"]["parts"][1]["thoughtSignature"]]]


def test_the_sdk_built_stream_assembles_to_the_same_message() -> None:
    pieces = stream_fixture()
    for chunk in sse_chunks(b"".join(pieces)):
        check_response(chunk)
    whole = ADAPTER.from_wire_response(response_fixture(), context())
    for split in (pieces, chunked(b"".join(pieces), 1)):
        assert normalized(ADAPTER.assemble_stream(split, context())) == normalized(whole)
    assert whole.metadata.status == MessageStatus.complete


def test_the_sdk_built_response_replays_exactly() -> None:
    ids = ToolIdMap(SESSION)
    body = response_fixture()
    message = ADAPTER.from_wire_response(body, context(ids))
    out = ADAPTER.to_wire([user("hi"), message], [], options(ids))
    check_request(out)
    assert out["contents"][1] == body["candidates"][0]["content"]


def test_the_error_fixture() -> None:
    status, body = error_fixture()
    error = ADAPTER.parse_error(body, status)
    assert isinstance(error, ProviderError)
    assert (error.error_type, error.retryable, error.status_code) == ("RESOURCE_EXHAUSTED", True, 429)
    assert "Resource has been exhausted" in str(error)
