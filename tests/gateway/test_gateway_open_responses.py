"""The Open Responses compliance suite's cases, run against `metis serve`.

The suite (openresponses/openresponses: `bin/compliance-test.ts` over
`src/lib/compliance-tests.ts`) is TypeScript run by Bun inside that repository: it posts
its requests to `{base}/responses` and checks each reply with zod schemas generated from
the specification's `openapi.json` (`ResponseResource`; each stream event against the
union of the streaming event schemas), then a few semantic checks. It is not published
to a registry, so it cannot run from an installed package; `openresponses-types` (PyPI)
is the same specification's types generated for Python. These tests send the suite's
requests and apply its checks with those types, for three upstreams behind the gateway
(Anthropic Messages, OpenAI Chat, OpenAI Responses), each replaying a documented reply
from the scripted upstream:

- one request each (`CASES`): basic text, streaming, system prompt, tool calling, tool
  calling streamed (an earlier version of the suite), image input, file input (a PDF),
  multi-turn;
- two requests each: the function call round trip (a forced call, then its output sent
  with `previous_response_id`) and `previous_response_id` itself;
- the suite's optional hosted-tool cases (`OPTIONAL`: file search, offline web search),
  on the Responses upstream only: another provider has no file search (the tool is
  dropped with a warning, so no `file_search_call` comes back), and Anthropic's web
  search comes back as server tool blocks that the Responses reply writer does not
  write as a `web_search_call` item.
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
from tests.support.gateway_support import Gateway, replaying_gateway

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


def _pdf() -> str:
    """A one-page PDF whose text is a title, as a data URL (the suite sends a small PDF)."""
    text = b"BT /F1 12 Tf 72 72 Td (Title: Open Responses File Input Fixture) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    body = b"%PDF-1.1\n" + b"".join(b"%d 0 obj\n%s\nendobj\n" % (n, o) for n, o in enumerate(objects, 1))
    pdf = body + b"trailer\n<< /Root 1 0 R >>\n%%EOF"
    return "data:application/pdf;base64," + base64.b64encode(pdf).decode()


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
    "file-input": (
        [
            _user(
                [
                    {"type": "input_text", "text": "Read the attached file and answer with its title only."},
                    {"type": "input_file", "filename": "openresponses-fixture.pdf", "file_data": _pdf()},
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


BUILT_IN = {
    "file_search": "responses/response_built_in_file_citations.json",
    "web_search": "responses/response_web_search_citations.json",
}
"""A hosted tool the Responses upstream is sent -> the documented reply that runs it."""


def _replay(path: str, body: dict[str, Any]) -> str | None:
    model = next(m for m, p in _PATHS.items() if p == path)
    hosted = [BUILT_IN[t["type"]] for t in body.get("tools") or [] if t.get("type") in BUILT_IN]
    if path == "/v1/responses" and hosted:
        return hosted[0]
    return UPSTREAMS[model][(bool(body.get("tools")), body.get("stream") is True)]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with replaying_gateway(_replay, tmp_path_factory.mktemp("compliance")) as gateway:
        yield gateway


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


def _create(served: Gateway, body: dict[str, Any], problems: list[str], *, tools: bool = False) -> Any:
    """POST the suite's request to `/responses` as its `makeRequest` does; the reply (the
    final response of a stream) parsed as the specification's `ResponseResource`, the
    stream's problems added to `problems`."""
    reply = requests.post(
        f"{served.url}/v1/responses", json=body, headers={"Authorization": "Bearer k"}, timeout=30
    )
    assert reply.ok, f"HTTP {reply.status_code}: {reply.text}"
    if body.get("stream"):
        events = _events(reply.content)
        problems += _stream_problems(events, tools)
        finals = [e["response"] for e in events if e.get("type") in _FINAL]
        resource = finals[-1] if finals else None
    else:
        resource = reply.json()
    try:
        return ort.ResponseResource.model_validate(resource)
    except ValueError as exc:
        pytest.fail(f"the reply is no ResponseResource: {exc}")


def _completed(parsed: Any) -> list[str]:
    """The suite's `hasOutput` and `completedStatus` validators."""
    problems = [] if parsed.output else ["Response has no output items"]
    if parsed.status != "completed":
        problems.append(f'Expected status "completed" but got "{parsed.status}"')
    return problems


@pytest.mark.parametrize("model", list(UPSTREAMS))
@pytest.mark.parametrize("case", list(CASES))
def test_open_responses_compliance_case(served: Gateway, model: str, case: str) -> None:
    items, tools, streamed = CASES[case]
    body: dict[str, Any] = {"model": model, "input": items, "stream": streamed}
    if tools:
        body["tools"] = [_WEATHER_TOOL]
    problems: list[str] = []
    parsed = _create(served, body, problems, tools=tools)
    if not parsed.output:
        problems.append("Response has no output items")
    if tools and not any(item.type == "function_call" for item in parsed.output):
        problems.append('Expected output item of type "function_call" but none found')
    if not tools and parsed.status != "completed":
        problems.append(f'Expected status "completed" but got "{parsed.status}"')
    assert problems == [], f"{case} via {model}"


@pytest.mark.parametrize("model", list(UPSTREAMS))
def test_open_responses_function_call_round_trip(served: Gateway, model: str) -> None:
    # the suite's `function-call-roundtrip`: a forced function call, then its output sent
    # with `previous_response_id` (continued on whatever provider answered it)
    problems: list[str] = []
    first = _create(
        served,
        {
            "model": model,
            "input": "Use the weather tool to get the temperature in San Francisco.",
            "tools": [_WEATHER_TOOL],
            "tool_choice": {"type": "function", "name": "get_weather"},
        },
        problems,
    )
    calls = [item for item in first.output if item.type == "function_call"]
    assert calls, "First response did not include a function_call with call_id"
    # The suite answers the first call; the documented OpenAI replies the upstream replays
    # make two parallel calls, and a provider refuses a turn that leaves one unanswered:
    # each is answered, as a client running the tool for every call does.
    outputs = [
        {"type": "function_call_output", "call_id": c.call_id, "output": "64 degrees and clear"}
        for c in calls
    ]
    second = _create(served, {"model": model, "previous_response_id": first.id, "input": outputs}, problems)
    assert problems + _completed(second) == [], f"function-call-roundtrip via {model}"


@pytest.mark.parametrize("model", list(UPSTREAMS))
def test_open_responses_previous_response_id(served: Gateway, model: str) -> None:
    # the suite's `previous-response-id`: the second turn names the first reply only
    problems: list[str] = []
    first = _create(
        served, {"model": model, "input": "Remember this code word: papaya. Reply with only OK."}, problems
    )
    second = _create(
        served,
        {
            "model": model,
            "previous_response_id": first.id,
            "input": "What code word did I ask you to remember?",
        },
        problems,
    )
    assert problems + _completed(second) == [], f"previous-response-id via {model}"


_FINAL = frozenset({"response.completed", "response.failed", "response.incomplete"})


OPTIONAL: dict[str, tuple[dict[str, Any], str]] = {
    # the suite's optional cases (run when configured): request, the output item expected
    "file-search": (
        {
            "input": "Search the configured vector store for relevant content and summarize one result.",
            "tools": [{"type": "file_search", "vector_store_ids": ["vs_openresponses_fixture"]}],
            "tool_choice": {"type": "file_search"},
            "include": ["file_search_call.results"],
        },
        "file_search_call",
    ),
    "offline-web-search": (
        {
            "input": "Find the most relevant cached result for OpenResponses.",
            "tools": [{"type": "web_search", "external_web_access": False}],
            "tool_choice": {"type": "web_search"},
            "include": ["web_search_call.action.sources"],
        },
        "web_search_call",
    ),
}


@pytest.mark.parametrize("case", list(OPTIONAL))
def test_open_responses_hosted_tool_case(served: Gateway, case: str) -> None:
    # The optional hosted-tool cases, on the Responses upstream (whose documented replies
    # run the tool): the tool, its choice and `include` reach the upstream as sent, and
    # its call comes back as the item the suite looks for.
    body, expected = OPTIONAL[case]
    problems: list[str] = []
    parsed, hosted = _create_hosted(served, {"model": "gpt-5", **body}, problems, expected)
    if not parsed.output:
        problems.append("Response has no output items")
    if not hosted:
        problems.append(f'Expected output item of type "{expected}" but none found')
    assert problems == [], case


def _create_hosted(
    served: Gateway, body: dict[str, Any], problems: list[str], kind: str
) -> tuple[Any, list[Any]]:
    """`_create` for a reply with hosted tool items, of `kind` among them: the specification's
    types on PyPI (`openresponses-types` 2.4.0) predate those items (the suite's own schema,
    built from a newer `openapi.json`, has file and web search calls), so every item they
    do not know is checked with the OpenAI SDK's output item types, and the rest of the
    reply with the specification's; the items of `kind` are returned."""
    from openai.types.responses import ResponseOutputItem
    from pydantic import TypeAdapter

    reply = requests.post(
        f"{served.url}/v1/responses", json=body, headers={"Authorization": "Bearer k"}, timeout=30
    )
    assert reply.ok, f"HTTP {reply.status_code}: {reply.text}"
    resource = reply.json()
    known = {"message", "function_call", "function_call_output", "reasoning"}
    items = [item for item in resource["output"] if item.get("type") not in known]
    hosted = [TypeAdapter(ResponseOutputItem).validate_python(item) for item in items]
    rest = {**resource, "output": [item for item in resource["output"] if item.get("type") in known]}
    try:
        return ort.ResponseResource.model_validate(rest), [item for item in hosted if item.type == kind]
    except ValueError as exc:
        pytest.fail(f"the reply is no ResponseResource: {exc}")
