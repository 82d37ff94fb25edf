"""The OpenRouter adapter: the shared Chat Completions mapping plus OpenRouter's extensions.

Recorded-shape inputs in tests/golden/openrouter/ follow provider-wire-formats.md §5:
Anthropic (Bedrock), Gemini and OpenAI upstreams, `: OPENROUTER PROCESSING` comments,
`finish_reason` on two chunks, an `error` chunk after `finish_reason`, a `choices: []` usage chunk.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from importlib.metadata import version
from typing import Any

import pytest
from metis import adapters
from metis.errors import ProviderError, WireFormatError
from metis.ids import ToolIdMap
from metis_schema.v3 import (
    CachePoint,
    CacheTtl,
    ErrorEvent,
    Message,
    MessageCompleteEvent,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    StopReason,
    ThinkingBlock,
    ThinkingDeltaEvent,
    ToolResultBlock,
    ToolUseBlock,
)

from tests.support import golden
from tests.support.contracts import openrouter as contract
from tests.support.openai_chat_support import (
    READ_TOOL,
    SESSION,
    WEATHER_TOOL,
    assistant,
    canonical,
    chunkings,
    context,
    fixed_tool_ids,
    msg,
    normalize_tool_ids,
    options,
    recorded,
    text,
    tid,
    tool_result,
    warnings,
    wire_equivalent,
)

__all__ = ["fixed_tool_ids"]

ADAPTER = adapters.get("openrouter")
SONNET = "openrouter:anthropic/claude-sonnet-4.6"
FLASH = "openrouter:google/gemini-2.5-flash"
GPT = "openrouter:openai/gpt-5-mini"
MODEL_OF = {"anthropic": SONNET, "gemini": FLASH, "openai": GPT}

GENAI = f"genai-prices@{version('genai-prices')}"


def parse(name: str, ids: ToolIdMap | None = None) -> Message:
    return ADAPTER.from_wire_response(
        recorded("openrouter", f"response_{name}.json"), context(MODEL_OF[name], ids)
    )


# --- responses -> canonical ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["anthropic", "gemini", "openai"])
def test_reply_keeps_openrouter_extensions_in_provider_raw(name: str) -> None:
    body = recorded("openrouter", f"response_{name}.json")
    message = parse(name)
    raw = message.metadata.provider_raw or {}
    choice = body["choices"][0]
    assert raw["reasoning_details"] == choice["message"]["reasoning_details"]  # kept exactly
    assert raw["native_finish_reason"] == choice["native_finish_reason"]
    assert raw["provider"] == body["provider"]
    usage = message.metadata.usage
    assert usage is not None and "reported_cost" not in raw  # one place for it: Usage
    assert usage.billed_cost_usd == Decimal(str(body["usage"]["cost"]))


def test_reasoning_details_become_canonical_thinking() -> None:
    sonnet = parse("anthropic")
    thinking = sonnet.content[0]
    assert (
        isinstance(thinking, ThinkingBlock)
        and thinking.signature
        and thinking.text.startswith("The user wants")
    )
    assert [b.type for b in sonnet.content] == ["thinking", "text", "tool_use", "tool_use"]
    flash = parse("gemini")
    assert [b.type for b in flash.content] == ["thinking", "redacted_thinking", "tool_use"]
    assert isinstance(flash.content[1], RedactedThinkingBlock) and flash.content[1].data.startswith("CiQB")
    gpt = parse("openai")
    assert [b.type for b in gpt.content] == ["thinking", "redacted_thinking", "text"]
    assert gpt.content[0] == ThinkingBlock(
        type="thinking", text="**Answering the question**\n\nCost accuracy and reproducibility."
    )


def test_stop_reasons_use_finish_reason_and_keep_the_native_one() -> None:
    assert parse("anthropic").metadata.stop_reason == StopReason.tool_use
    flash = parse("gemini")  # finish_reason tool_calls, native STOP
    assert flash.metadata.stop_reason == StopReason.tool_use
    assert (flash.metadata.provider_raw or {})["native_finish_reason"] == "STOP"
    assert parse("openai").metadata.stop_reason == StopReason.end_turn


def test_cost_is_local_and_the_reported_cost_is_kept_apart() -> None:
    message = parse("anthropic")
    usage = message.metadata.usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (357, 1536, 187)
    assert usage.billed_cost_usd == Decimal("0.0034539")  # usage.cost, kept beside the local cost
    assert usage.cost_usd == Decimal("0.0043368")  # 357 x 3 + 1536 x 0.30 + 187 x 15 per MTok
    assert usage.pricing_version == GENAI
    assert usage.units is not None and usage.units.reasoning_tokens == 52


def test_upstream_tool_ids_pass_through_any_format() -> None:
    ids = ToolIdMap(SESSION)
    message = parse("anthropic", ids)
    long_id = "chatcmpl-tool-" + "9f3c2a1b0e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"
    ids.bind(tid(50), "openrouter", long_id)
    history = [
        msg(1, Role.user, [text("go")]),
        message,
        tool_result(3, message.content[2].id, [text("a.py")]),
        tool_result(4, message.content[3].id, [text("(none)")]),
        assistant(
            5,
            [ToolUseBlock(type="tool_use", id=tid(50), name="read_file", input={"path": "a.py"})],
            model=SONNET,
        ),
        tool_result(6, tid(50), [text("import orjson")]),
    ]
    body = ADAPTER.to_wire(history, [READ_TOOL], options(SONNET, ids))
    sent = [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])]
    assert sent == ["toolu_bdrk_01JqXvNcTy8Lm3Kd5Wp2Rs9A", "toolu_bdrk_01Hm4Nb7Vc2Xz9Lk6Jh3Gf8D", long_id]
    assert [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"] == sent
    contract.check_request(body)


# --- round trip §2.1.1 ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["anthropic", "gemini", "openai"])
def test_response_round_trips_with_reasoning_details_unchanged(name: str) -> None:
    body = recorded("openrouter", f"response_{name}.json")
    ids = ToolIdMap(SESSION)
    message = ADAPTER.from_wire_response(body, context(MODEL_OF[name], ids))
    stored = Message.model_validate_json(message.model_dump_json())
    wire = ADAPTER.to_wire([msg(1, Role.user, [text("q")]), stored], [], options(MODEL_OF[name], ids))[
        "messages"
    ][1]
    original = copy.deepcopy(body["choices"][0]["message"])
    for key in ("refusal", "reasoning"):  # null / the plain-text copy of reasoning_details
        original.pop(key)
    for call in original.get("tool_calls", []):
        call.pop("index")  # a response-only field
    if original["content"] == "" and original.get("tool_calls"):
        original["content"] = None
    assert wire == original
    contract.check_request({"model": "x", "messages": [wire]})


def test_reasoning_goes_back_only_to_the_model_that_made_it(caplog: pytest.LogCaptureFixture) -> None:
    ids = ToolIdMap(SESSION)
    message = parse("anthropic", ids)
    history = [msg(1, Role.user, [text("q")]), message]
    body = ADAPTER.to_wire(history, [], options(FLASH, ids))
    assert "reasoning_details" not in body["messages"][1]
    assert [(r.block_type, r.adapter) for r in warnings(caplog)] == [("thinking", "openrouter")]  # type: ignore[attr-defined]
    assert "goes back only to the model and endpoint that produced it" in warnings(caplog)[0].reason  # type: ignore[attr-defined]


# --- canonical -> wire ---------------------------------------------------------------------


def test_to_wire_golden_with_reasoning_cache_and_routing(
    caplog: pytest.LogCaptureFixture, fixed_tool_ids: None
) -> None:
    ids = ToolIdMap(SESSION)
    own = parse("anthropic", ids)
    foreign = assistant(
        2,
        [
            ThinkingBlock(type="thinking", text="Anthropic-direct thinking", signature="sig-direct"),
            text("Hello again."),
        ],
        model="anthropic:claude-sonnet-4-6",
    )
    system = msg(1, Role.system, [text("You are a coding agent.")])
    user = msg(3, Role.user, [text("Which Python files import orjson?")])
    history = [
        system,
        foreign,
        user,
        own,
        tool_result(5, own.content[2].id, [text("runtime/metis/assembly.py:17:import orjson")]),
        tool_result(6, own.content[3].id, [text("(no matches)")]),
    ]
    opts = options(
        SONNET,
        ids,
        max_tokens=8000,
        thinking_budget=2000,
        stream=True,
        extra={
            "metis": {
                "cache_breakpoints": [
                    system.id,
                    "tools",
                    {"at": history[-1].id, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                ]
            },
            "provider": {"order": ["amazon-bedrock", "anthropic"], "allow_fallbacks": True},
        },
    )
    body = ADAPTER.to_wire(history, [WEATHER_TOOL, READ_TOOL], opts)
    golden.check("openrouter", "reasoning_cache_routing.request.golden.json", body)
    contract.check_request(body)
    assert body["reasoning"] == {"max_tokens": 2000} and body["max_tokens"] == 8000
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert (
        body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        and "cache_control" not in body["tools"][0]
    )
    assert (
        body["messages"][3]["reasoning_details"]
        == recorded("openrouter", "response_anthropic.json")["choices"][0]["message"]["reasoning_details"]
    )
    assert "reasoning_details" not in body["messages"][1]
    assert [(r.block_type, r.message_id) for r in warnings(caplog)] == [("thinking", foreign.id)]  # type: ignore[attr-defined]


def test_cache_breakpoint_naming_nothing_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    body = ADAPTER.to_wire(
        [msg(1, Role.user, [text("hi")])],
        [],
        options(
            SONNET,
            ToolIdMap(SESSION),
            extra={"metis": {"cache_breakpoints": ["tools", "01JD0000000000000000000ZZZ"]}},
        ),
    )
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert len(warnings(caplog)) == 2


def test_openai_ignores_cache_breakpoints_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    user = msg(1, Role.user, [text("hi")])
    body = adapters.get("openai").to_wire(
        [user],
        [],
        options("openai:gpt-4.1", ToolIdMap(SESSION), extra={"metis": {"cache_breakpoints": [user.id]}}),
    )
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "cache_breakpoints ignored" in warnings(caplog)[0].getMessage()


# --- recorded request import round trip ------------------------------------------------------


@pytest.mark.parametrize("name", ["request_anthropic", "request_followup", "request_openai"])
def test_request_import_round_trip(name: str) -> None:
    body = recorded("openrouter", f"{name}.json")
    contract.check_request(body)
    ids = ToolIdMap(SESSION)
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ids)
    again = ADAPTER.to_wire(imported.messages, imported.tools, imported.options)
    assert wire_equivalent(again) == wire_equivalent(body)
    contract.check_request(again)


def test_request_import_maps_extensions(fixed_tool_ids: None) -> None:
    imported = ADAPTER.from_wire_request(
        recorded("openrouter", "request_followup.json"), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    assert imported.options.thinking_budget == 2000 and imported.options.stream
    own = imported.options.provider_options["openrouter"]
    assert own["usage"] == {"include": True}
    assert "metis" not in own  # the part markers are canonical breakpoints now, no directive
    system, result = imported.messages[0].content[0], imported.messages[4].content[0]
    assert system.cache_point == CachePoint() and isinstance(result, ToolResultBlock)
    assert result.cache_point is None and result.content[0].cache_point == CachePoint(ttl=CacheTtl("1h"))
    reply = imported.messages[2]
    assert [b.type for b in reply.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert reply.content[0].signature.startswith("EqoE")


def test_effort_reasoning_is_the_canonical_reasoning_effort() -> None:
    """Issue 30 item 4: `reasoning.effort` is the canonical effort (it was OpenRouter-only)."""
    body = recorded("openrouter", "request_openai.json")
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.thinking_budget is None
    assert imported.options.reasoning_effort == "low"
    assert "reasoning" not in imported.options.provider_options.get("openrouter", {})
    assert ADAPTER.to_wire(imported.messages, imported.tools, imported.options)["reasoning"] == {
        "effort": "low"
    }


def test_budget_beside_other_reasoning_fields_leaves_them_openrouter_only() -> None:
    """thinking_budget is taken out of the `reasoning` object; `exclude` beside it stays
    OpenRouter's own, and the object replays as it was."""
    body = {**BASE, "reasoning": {"max_tokens": 1000, "exclude": True}}
    imported = ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert imported.options.thinking_budget == 1000
    assert imported.options.provider_options["openrouter"]["reasoning"] == {"exclude": True}
    assert (
        ADAPTER.to_wire(imported.messages, imported.tools, imported.options)["reasoning"] == body["reasoning"]
    )


def test_mistyped_reasoning_budget_is_a_wire_format_error_at_its_path() -> None:
    body = {**BASE, "reasoning": {"max_tokens": "2000"}}
    with pytest.raises(WireFormatError) as info:
        ADAPTER.from_wire_request(body, session_id=SESSION, tool_ids=ToolIdMap(SESSION))
    assert info.value.path == "reasoning.max_tokens"


# --- streaming -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream", "response"), [("stream_anthropic", "anthropic"), ("stream_gemini", "gemini")]
)
def test_stream_assembles_to_the_non_streamed_message(stream: str, response: str) -> None:
    whole_ids = ToolIdMap(SESSION)
    expected = normalize_tool_ids(canonical(parse(response, whole_ids)), whole_ids, "openrouter")
    for how, pieces in chunkings(recorded("openrouter", f"{stream}.sse")).items():
        ids = ToolIdMap(SESSION)
        message = ADAPTER.assemble_stream(pieces, context(MODEL_OF[response], ids))
        assert normalize_tool_ids(canonical(message), ids, "openrouter") == expected, how


def test_stream_events_reasoning_signature_and_a_single_finish() -> None:
    events = list(
        ADAPTER.stream_response(
            chunkings(recorded("openrouter", "stream_anthropic.sse"))["1-byte"], context(SONNET)
        )
    )
    thinking = [e for e in events if isinstance(e, ThinkingDeltaEvent)]
    assert {e.index for e in thinking} == {0}
    assert [e.signature is not None for e in thinking].count(True) == 1 and thinking[-1].signature
    completes = [e for e in events if isinstance(e, MessageCompleteEvent)]
    assert len(completes) == 1  # finish_reason came on two chunks
    assert (completes[0].stop_reason, completes[0].provider_stop_reason) == (StopReason.tool_use, "tool_use")
    assert events[-1] is completes[0]


def test_error_chunk_after_finish_ends_the_stream_as_error() -> None:
    data = recorded("openrouter", "stream_length_error.sse")
    events = list(ADAPTER.stream_response([data], context(SONNET)))
    assert not any(isinstance(e, MessageCompleteEvent) for e in events)
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert (error.code, error.message, error.retryable, error.provider) == (
        "400",
        "Token limit reached",
        False,
        "openrouter",
    )
    message = ADAPTER.assemble_stream(chunkings(data)["7-byte"], context(SONNET))
    assert message.metadata.status == MessageStatus.error
    assert message.content[0].text.startswith("Two files import orjson")
    raw = message.metadata.provider_raw or {}
    assert raw["error"] == {"code": "400", "message": "Token limit reached"}
    assert raw["finish_reason"] == "length" and raw["native_finish_reason"] == "max_tokens"
    assert message.metadata.usage is not None and message.metadata.usage.output_tokens == 60


def test_usage_on_a_choices_free_chunk() -> None:
    message = ADAPTER.assemble_stream([recorded("openrouter", "stream_gemini.sse")], context(FLASH))
    assert message.metadata.usage is not None
    assert (message.metadata.usage.input_tokens, message.metadata.usage.output_tokens) == (163, 74)


def test_reasoning_fragments_merge_by_index_in_provider_raw() -> None:
    decoder = ADAPTER.stream_decoder(context(SONNET))
    for piece in chunkings(recorded("openrouter", "stream_anthropic.sse"))["64-byte"]:
        decoder.feed(piece)
    decoder.close()
    expected = recorded("openrouter", "response_anthropic.json")["choices"][0]["message"]["reasoning_details"]
    assert (decoder.provider_raw() or {})["reasoning_details"] == expected


# --- contract --------------------------------------------------------------------------------


def test_contract_fixtures_parse() -> None:
    ids = ToolIdMap(SESSION)
    contract.check_response(contract.response_fixture())
    message = ADAPTER.from_wire_response(contract.response_fixture(), context(SONNET, ids))
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use", "tool_use"]
    streamed_ids = ToolIdMap(SESSION)
    streamed = ADAPTER.assemble_stream(contract.stream_fixture(), context(SONNET, streamed_ids))
    assert normalize_tool_ids(canonical(streamed), streamed_ids, "openrouter") == normalize_tool_ids(
        canonical(message), ids, "openrouter"
    )
    status, body = contract.error_fixture()
    error = ADAPTER.parse_error(body, status)
    assert error.retryable and error.error_type == "429" and "rate-limited upstream" in str(error)


BASE = {"model": "anthropic/claude-sonnet-4.6", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    "broken",
    [
        {**BASE, "reasoning": {"effort": "high", "max_tokens": 100}},
        {**BASE, "reasoning": {"effort": "extreme"}},
        {**BASE, "reasoning": {"max_tokens": "2000"}},
        {
            **BASE,
            "messages": [
                {
                    "role": "assistant",
                    "content": "x",
                    "reasoning_details": [{"type": "reasoning.text", "text": "t"}],
                }
            ],
        },
        {
            **BASE,
            "messages": [
                {
                    "role": "assistant",
                    "content": "x",
                    "reasoning_details": [{"type": "reasoning.secret", "index": 0}],
                }
            ],
        },
        {
            **BASE,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}
                    ],
                }
            ],
        },
        {**BASE, "messages": [{"role": "tool", "content": "no tool_call_id"}]},
        {**BASE, "provider_order": ["x"]},
    ],
)
def test_contract_rejects_broken_bodies(broken: dict[str, Any]) -> None:
    with pytest.raises((AssertionError, ValueError)):
        contract.check_request(broken)


# --- errors ----------------------------------------------------------------------------------


def test_upstream_429_is_retryable_and_keeps_metadata_raw() -> None:
    error = ADAPTER.parse_error(recorded("openrouter", "error_429.json"), 429)
    assert isinstance(error, ProviderError)
    assert (error.error_type, error.retryable, error.status_code) == ("429", True, 429)
    assert (
        "Provider returned error (upstream Google) (raw google/gemini-2.5-flash is temporarily rate-limited"
        in (error.message)
    )


def test_402_is_not_retryable() -> None:
    error = ADAPTER.parse_error(recorded("openrouter", "error_402.json"), 402)
    assert (error.error_type, error.retryable) == ("402", False)
    assert "more credits" in error.message


def test_error_code_alone_decides_when_the_status_is_unknown() -> None:
    error = ADAPTER.parse_error({"error": {"code": 503, "message": "No endpoints available"}})
    assert error.retryable and error.status_code is None


# --- mid-session swap ------------------------------------------------------------------------


def test_session_begun_on_openai_and_anthropic_continues_on_openrouter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ids = ToolIdMap(SESSION)
    ids.bind(tid(1), "openai", "call_Xk2P9vQm4LrT7wBn3YcJ8dHs")
    ids.bind(tid(2), "anthropic", "toolu_01A9xKq3Lm7Np2Rs5Tv8Wy4Z")
    history = [
        msg(1, Role.user, [text("weather in Paris, then read the README")]),
        assistant(
            2,
            [ToolUseBlock(type="tool_use", id=tid(1), name="get_weather", input={"city": "Paris"})],
            model="openai:gpt-4.1",
        ),
        tool_result(3, tid(1), [text("14 C")]),
        assistant(
            4,
            [
                ThinkingBlock(type="thinking", text="now the file", signature="sig"),
                ToolUseBlock(type="tool_use", id=tid(2), name="read_file", input={"path": "README.md"}),
            ],
            model="anthropic:claude-sonnet-4-6",
        ),
        tool_result(5, tid(2), [text("# metis")], is_error=False),
        msg(6, Role.user, [text("summarize")]),
    ]
    body = ADAPTER.to_wire(history, [WEATHER_TOOL, READ_TOOL], options(SONNET, ids))
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    assert calls == results and len(set(calls)) == 2
    assert all(ids.resolve_incoming("openrouter", c) in (tid(1), tid(2)) for c in calls)
    assert [r.block_type for r in warnings(caplog)] == ["thinking"]  # type: ignore[attr-defined]
    contract.check_request(body)


# --- estimate --------------------------------------------------------------------------------


def test_estimate_input_tokens_error_is_bounded() -> None:
    """Measured on the OpenAI-upstream exchange (o200k_base counts); same method as the openai adapter."""
    imported = ADAPTER.from_wire_request(
        recorded("openrouter", "request_openai.json"), session_id=SESSION, tool_ids=ToolIdMap(SESSION)
    )
    actual = recorded("openrouter", "response_openai.json")["usage"]["prompt_tokens"]
    estimate = ADAPTER.estimate_input_tokens(imported.messages, imported.tools)
    error = abs(estimate - actual) / actual
    print(f"openrouter request_openai: estimate {estimate} vs {actual}, error {error:.1%}")
    assert error <= 0.30 and estimate >= actual


def test_estimate_counts_replayed_reasoning() -> None:
    message = parse("anthropic")
    with_reasoning = ADAPTER.estimate_input_tokens([message], [])
    assert with_reasoning > adapters.get("openai").estimate_input_tokens([message], [])


# --- transport facts -------------------------------------------------------------------------


def test_endpoint_and_auth() -> None:
    assert (
        ADAPTER.endpoint("https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.6", stream=False)
        == "https://openrouter.ai/api/v1/chat/completions"
    )
    assert ADAPTER.auth_headers("sk-or-x") == {"Authorization": "Bearer sk-or-x"}
    assert (ADAPTER.name, ADAPTER.default_base_url, ADAPTER.api_key_env) == (
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
    )
    assert ADAPTER.wire_model(SONNET) == "anthropic/claude-sonnet-4.6"


def test_summary_and_encrypted_fragments_assemble_like_the_whole_response() -> None:
    """OpenAI upstream: a reasoning.summary streamed in pieces, then encrypted reasoning whole."""
    body = recorded("openrouter", "response_openai.json")
    summary, encrypted = body["choices"][0]["message"]["reasoning_details"]
    answer = body["choices"][0]["message"]["content"]
    head = {k: body[k] for k in ("id", "provider", "model", "created")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], **choice: Any) -> bytes:
        data = {
            **head,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "", **delta}, **choice}],
        }
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    half = len(summary["summary"]) // 2
    pieces = [
        chunk({"reasoning_details": [{**summary, "summary": summary["summary"][:half]}]}),
        chunk({"reasoning_details": [{**summary, "summary": summary["summary"][half:]}]}),
        chunk({"reasoning_details": [encrypted]}),
        chunk({"content": answer}),
        chunk({}, finish_reason="stop", native_finish_reason="completed"),
        b"data: " + json.dumps({**head, "choices": [], "usage": body["usage"]}).encode() + b"\n\n",
        b"data: [DONE]\n\n",
    ]
    assert canonical(ADAPTER.assemble_stream(pieces, context(GPT))) == canonical(parse("openai"))


async def test_async_stream_gives_the_same_events() -> None:
    data = recorded("openrouter", "stream_anthropic.sse")

    async def body() -> Any:
        for piece in chunkings(data)["64-byte"]:
            yield piece

    events = [e async for e in ADAPTER.astream_response(body(), context(SONNET))]
    assert isinstance(events[-1], MessageCompleteEvent)
    assert [type(e) for e in events] == [type(e) for e in ADAPTER.stream_response([data], context(SONNET))]
