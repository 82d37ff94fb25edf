"""The Open Responses compliance suite's cases, run against `metis serve`.

The suite (openresponses/openresponses: `bin/compliance-test.ts` over
`src/lib/compliance-tests.ts`) is TypeScript run by Bun inside that repository: it posts
seven requests to `{base}/responses` and checks each reply with zod schemas generated from
the specification's `openapi.json` (`ResponseResource`; each stream event against the
union of the streaming event schemas), then a few semantic checks. It is not published
to a registry, so it cannot run from an installed package; `openresponses-types` (PyPI)
is the same specification's types generated for Python. These tests send the suite's
seven requests — basic text, streaming, system prompt, tool calling, tool calling
streamed, image input, multi-turn — and apply its checks with those types, for three
upstreams behind the gateway (Anthropic Messages, OpenAI Chat, OpenAI Responses), each
replaying a documented reply from the scripted upstream.
"""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import openresponses_types as ort
import orjson
import pytest
import requests

from tests.support.contracts.responses import OPEN_RESPONSES_EVENTS
from tests.support.gateway_support import Gateway, ScriptedUpstream

_WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "parameters": {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}
        },
        "required": ["location"],
    },
}


def _png() -> str:
    """A 2x2 red PNG as a data URL (the suite sends a small PNG icon inline)."""
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _user(text: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


CASES: dict[str, tuple[list[dict[str, Any]], bool, bool]] = {
    # id: (input, tools given, streamed) — the suite's seven requests
    "basic-response": ([_user("Say hello in exactly 3 words.")], False, False),
    "streaming-response": ([_user("Count from 1 to 5.")], False, True),
    "system-prompt": (
        [
            {
                "type": "message",
                "role": "system",
                "content": "You are a pirate. Always respond in pirate speak.",
            },
            _user("Say hello."),
        ],
        False,
        False,
    ),
    "tool-calling": ([_user("What's the weather like in San Francisco?")], True, False),
    "tool-calling-streaming": ([_user("What's the weather like in San Francisco?")], True, True),
    "image-input": (
        [
            _user(
                [
                    {"type": "input_text", "text": "What do you see in this image? Answer in one sentence."},
                    {"type": "input_image", "image_url": _png()},
                ]
            )
        ],
        False,
        False,
    ),
    "multi-turn": (
        [
            _user("My name is Alice."),
            {
                "type": "message",
                "role": "assistant",
                "content": "Hello Alice! Nice to meet you. How can I help you today?",
            },
            _user("What is my name?"),
        ],
        False,
        False,
    ),
}

UPSTREAMS: dict[str, dict[tuple[bool, bool], str]] = {
    # model -> (tools given, streamed) -> the documented reply its upstream replays
    "anthropic:claude-sonnet-4-6": {
        (False, False): "anthropic/response_citations.json",
        (False, True): "anthropic/stream_citations.sse",
        (True, False): "anthropic/response_thinking.json",
        (True, True): "anthropic/stream_thinking.sse",
    },
    "openai:gpt-4.1": {
        (False, False): "openai/response_text.json",
        (False, True): "openai/stream_text.sse",
        (True, False): "openai/response_tools.json",
        (True, True): "openai/stream_tools.sse",
    },
    "gpt-5": {  # a bare model name on /v1/responses: the Responses API upstream
        (False, False): "responses/response_refusal.json",
        (False, True): "responses/stream_tools.sse",
        (True, False): "responses/response_tools.json",
        (True, True): "responses/stream_tools.sse",
    },
}
_PATHS = {
    "anthropic:claude-sonnet-4-6": "/v1/messages",
    "openai:gpt-4.1": "/v1/chat/completions",
    "gpt-5": "/v1/responses",
}


def _replay(path: str, body: dict[str, Any]) -> str | None:
    model = next(m for m, p in _PATHS.items() if p == path)
    return UPSTREAMS[model][(bool(body.get("tools")), body.get("stream") is True)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    upstream = ScriptedUpstream()
    upstream.fallback = _replay
    gateway = Gateway(upstream, str(tmp_path_factory.mktemp("compliance") / "gateway.sqlite3"))
    yield gateway
    gateway.close()
    upstream.close()


def _events(raw: bytes) -> list[dict[str, Any]]:
    """The stream's events as the suite's SSE parser reads them (`data:` lines, JSON)."""
    events = []
    for frame in raw.decode().split("\n\n"):
        data = [line[5:].strip() for line in frame.split("\n") if line.startswith("data:")]
        if data and data[-1] != "[DONE]":
            events.append(orjson.loads(data[-1]))
    return events


def _stream_problems(events: list[dict[str, Any]], tools: bool) -> list[str]:
    """The suite's stream checks: events arrived, each is a specified event, and a tool
    call streams its item, argument deltas and done events."""
    problems = [] if events else ["No streaming events received"]
    for event in events:
        model = OPEN_RESPONSES_EVENTS.get(event.get("type", ""))
        if model is None:
            problems.append(f"event {event.get('type')!r} is no Open Responses streaming event")
            continue
        try:
            model.model_validate(event)
        except ValueError as exc:
            problems.append(f"Event validation failed for {event['type']}: {exc}")
    if tools:
        kinds = [e.get("type") for e in events]
        for kind in ("response.output_item.added", "response.output_item.done"):
            if not any(
                e.get("type") == kind and e.get("item", {}).get("type") == "function_call" for e in events
            ):
                problems.append(f"Missing {kind} event with function_call item")
        for kind in ("response.function_call_arguments.delta", "response.function_call_arguments.done"):
            if kind not in kinds:
                problems.append(f"Missing {kind} event")
    return problems


@pytest.mark.parametrize("model", list(UPSTREAMS))
@pytest.mark.parametrize("case", list(CASES))
def test_open_responses_compliance_case(served: Gateway, model: str, case: str) -> None:
    items, tools, streamed = CASES[case]
    body: dict[str, Any] = {"model": model, "input": items, "stream": streamed}
    if tools:
        body["tools"] = [_WEATHER_TOOL]
    reply = requests.post(
        f"{served.url}/v1/responses", json=body, headers={"Authorization": "Bearer k"}, timeout=30
    )
    assert reply.ok, f"HTTP {reply.status_code}: {reply.text}"
    problems: list[str] = []
    if streamed:
        events = _events(reply.content)
        problems += _stream_problems(events, tools)
        finals = [e["response"] for e in events if e.get("type") in _FINAL]
        resource = finals[-1] if finals else None
    else:
        resource = reply.json()
    try:
        parsed = ort.ResponseResource.model_validate(resource)
    except ValueError as exc:
        pytest.fail(f"{case} via {model}: the reply is no ResponseResource: {exc}")
    if not parsed.output:
        problems.append("Response has no output items")
    if tools and not any(item.type == "function_call" for item in parsed.output):
        problems.append('Expected output item of type "function_call" but none found')
    if not tools and parsed.status != "completed":
        problems.append(f'Expected status "completed" but got "{parsed.status}"')
    assert problems == [], f"{case} via {model}"


_FINAL = frozenset({"response.completed", "response.failed", "response.incomplete"})
