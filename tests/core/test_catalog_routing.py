"""The model catalog (§6.3, §7.2), the routing projection (§4.3) and the swap check (§8.4, §11.1.3)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from metis import (
    CapabilityError,
    DocumentError,
    ImageBlock,
    MediaSource,
    MediaSourceKind,
    Message,
    RedactedThinkingBlock,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    SideEffects,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    UnknownModelError,
    Usage,
    adapters,
)
from metis.assembly import RequestContext, finish_assistant
from metis.catalog import PROVIDERS, Catalog, load_catalog, parse_catalog, resolve_model
from metis.events import RecordingSink
from metis.ids import ToolIdMap
from metis.pricing import UNPRICED, load_price_table
from metis.routing import (
    CHAIN_TO_MODE,
    IMAGE_TOKENS,
    ChainPolicy,
    check_swap,
    decision_record,
    estimate_tokens,
    required_capabilities,
)
from metis.usage import TokenCounts
from metis.validation import validate_document

from tests.support.messages import build_message
from tests.support.paths import REPO

CATALOG_FILE = REPO / "runtime" / "metis" / "data" / "catalog.json"
SID = "sess_route"
T0 = datetime(2026, 5, 8, 12, tzinfo=UTC)
SONNET = "anthropic:claude-sonnet-4-6"

# --- catalog -------------------------------------------------------------------------------------------


def test_catalog_validates_against_the_schema() -> None:
    assert validate_document(json.loads(CATALOG_FILE.read_text(encoding="utf-8")), "ModelCatalog") == []


def test_catalog_covers_every_provider_with_current_models() -> None:
    import metis.adapters

    catalog = load_catalog()
    assert set(PROVIDERS) == set(metis.adapters.names())
    for provider in PROVIDERS:
        assert catalog.for_provider(provider), provider
    spec_ids = [  # spec §6.3
        "anthropic:claude-sonnet-4-6",
        "anthropic:claude-opus-4-7",
        "anthropic:claude-haiku-4-5",
        "openai:gpt-5",
        "openai:gpt-5-mini",
        "ollama:llama-3.3-70b",
        "openrouter:deepseek/deepseek-v3",
    ]
    for model_id in spec_ids:
        assert catalog.get(model_id) is not None, model_id
    assert any(e.id.startswith("gemini:gemini-2.5") for e in catalog)


def test_every_listed_model_is_priced_by_the_local_table_or_genai_prices() -> None:
    from metis.pricing import make_usage
    from metis.usage import TokenCounts

    local = load_price_table()
    for entry in load_catalog():
        usage = make_usage(
            TokenCounts(1000, 100), pricing_key=entry.pricing_key, latency_ms=0, model=entry.id
        )
        if entry.pricing_key in local.models:
            assert usage.pricing_version == local.pricing_version, entry.id
        else:
            assert usage.pricing_version.startswith("genai-prices@"), entry.id
            assert usage.cost_usd > 0, entry.id


def test_the_models_new_users_name_first_are_known() -> None:
    catalog = load_catalog()
    for name in ("gpt-4o", "4o", "claude-sonnet-4-5", "sonnet-4.5", "o3", "gpt-4.1-mini", "flash-lite"):
        entry = catalog.resolve(name) if catalog.get(name) is None else catalog.get(name)
        assert entry is not None and entry.pricing_key != "unpriced", name


def test_a_bare_wire_name_of_a_listed_model_resolves() -> None:
    assert load_catalog().resolve("gpt-4o").id == "openai:gpt-4o"
    assert load_catalog().resolve("claude-sonnet-4-5").id == "anthropic:claude-sonnet-4-5"


def test_capability_declarations_are_consistent() -> None:
    for entry in load_catalog():
        caps = entry.capabilities
        assert bool(caps.accepted_image_media_types) == caps.supports_images, entry.id
        assert caps.max_output_tokens <= caps.max_context_tokens, entry.id
        assert entry.id.split(":", 1)[0] == entry.provider


@pytest.mark.parametrize(
    ("alias", "model_id"),
    [
        ("sonnet", SONNET),
        ("opus", "anthropic:claude-opus-4-7"),
        ("flash", "gemini:gemini-2.5-flash"),
        ("llama3.3", "ollama:llama-3.3-70b"),
    ],
)
def test_aliases_resolve(alias: str, model_id: str) -> None:
    assert resolve_model(alias).id == model_id
    assert resolve_model(model_id).id == model_id


def test_provider_and_wire_name_resolves_to_the_listed_entry() -> None:
    assert resolve_model("ollama:llama3.3:70b").id == "ollama:llama-3.3-70b"


def test_unknown_names_raise_with_a_hint() -> None:
    for name in ("sonet", "acme:model", "gpt5-turbo-max", ""):
        with pytest.raises(UnknownModelError) as caught:
            resolve_model(name)
        assert caught.value.hint and "sonnet" in caught.value.hint
        assert repr(name) in str(caught.value)


def test_unlisted_provider_models_get_conservative_capabilities() -> None:
    entry = resolve_model("ollama:mistral-small3.2:24b")
    assert entry.id == "ollama:mistral-small3.2:24b"
    assert entry.wire_model == "mistral-small3.2:24b"
    assert entry.pricing_key == UNPRICED
    caps = entry.capabilities
    assert not caps.supports_images and not caps.supports_thinking and not caps.supports_prompt_caching
    assert caps.accepted_image_media_types == []
    assert entry.assumed and entry.resolved_from is None, "the entry says its capabilities are assumed"
    with pytest.raises(UnknownModelError):
        load_catalog().resolve("ollama:mistral-small3.2:24b", allow_unlisted=False)


# --- dated, versioned and unlisted models (issue 15 item 1) -------------------------------------


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("claude-haiku-4-5-20251001", "anthropic:claude-haiku-4-5"),
        ("anthropic:claude-haiku-4-5-20251001", "anthropic:claude-haiku-4-5"),
        ("gemini-2.5-flash-preview-05-20", "gemini:gemini-2.5-flash"),
        ("gemini:gemini-2.5-flash-preview-05-20", "gemini:gemini-2.5-flash"),
        ("gpt-4o-2024-08-06", "openai:gpt-4o"),
        ("openai:gpt-4o-2024-08-06", "openai:gpt-4o"),
        ("openai:gpt-4o-mini-2024-07-18", "openai:gpt-4o-mini"),
        ("gemini:gemini-2.0-flash-001", "gemini:gemini-2.0-flash"),
    ],
)
def test_dated_and_versioned_ids_resolve_to_their_listed_entry(name: str, listed: str) -> None:
    entry, family = resolve_model(name), resolve_model(listed)
    wire = name.partition(":")[2] or name
    assert entry.id == f"{family.provider}:{wire}" and entry.wire_model == wire, "its own name on the wire"
    assert entry.capabilities == family.capabilities and entry.pricing_key == family.pricing_key
    assert entry.resolved_from == family.id and not entry.assumed
    assert resolve_model(entry.id) == entry, "the id it resolved to resolves to it"
    assert entry.pricing_key != UNPRICED


def test_a_version_ending_of_an_unknown_base_is_not_a_version_of_anything() -> None:
    with pytest.raises(UnknownModelError):
        resolve_model("claude-nonexistent-20251001")
    with pytest.raises(UnknownModelError):
        load_catalog().resolve("anthropic:claude-nonexistent-20251001", allow_unlisted=False)


@pytest.mark.parametrize(
    ("name", "family", "like"),
    [
        ("anthropic:claude-opus-4-20250514", "anthropic:claude-*", "anthropic:claude-opus-4-1"),
        ("anthropic:claude-haiku-5", "anthropic:claude-haiku-*", "anthropic:claude-haiku-4-5"),
        ("gemini:gemini-2.5-flash-image", "gemini:gemini-2.5-*", "gemini:gemini-2.5-flash-lite"),
        (
            "openrouter:anthropic/claude-opus-4.1",
            "openrouter:anthropic/claude-*",
            "openrouter:anthropic/claude-sonnet-4.6",
        ),
    ],
)
def test_unlisted_models_of_a_known_family_get_its_capabilities_and_say_so(
    name: str, family: str, like: str, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = parse_catalog(CATALOG_FILE.read_text(encoding="utf-8"))  # fresh: its WARN is not cached
    with caplog.at_level(logging.WARNING, logger="metis.catalog"):
        entry = catalog.resolve(name)
        assert catalog.resolve(name) is entry
    assert entry.assumed and entry.resolved_from == family
    assert entry.capabilities == catalog.resolve(like).capabilities
    assert entry.pricing_key == UNPRICED, "a family has no price"
    warnings = [r for r in caplog.records if r.name == "metis.catalog"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING, "one WARN per name"
    assert name in warnings[0].getMessage() and like in warnings[0].getMessage()


def test_a_family_must_be_like_a_listed_model_of_its_provider() -> None:
    doc = _catalog_doc()
    doc["families"] = [{"provider": "anthropic", "prefix": "claude-", "like": "openai:gpt-4o"}]
    with pytest.raises(UnknownModelError) as caught:
        parse_catalog(json.dumps(doc))
    assert caught.value.path == "families[0].like"
    doc["families"] = []
    doc["version_suffixes"] = ["-(\\d"]
    with pytest.raises(UnknownModelError) as caught:
        parse_catalog(json.dumps(doc))
    assert caught.value.path == "version_suffixes[0]"


SIGNED = "EqQBCkYIARgCKkBsignature"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def _recorded_request(model: str) -> dict[str, Any]:
    """A recorded Anthropic request mid tool loop, thinking on: the assistant turn holds signed
    and redacted thinking, the results an image."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    return {
        "model": model,
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "what is in it?"}, image]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Look closer.", "signature": SIGNED},
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                    {"type": "tool_use", "id": "toolu_01", "name": "zoom", "input": {"factor": 2}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": [image]}],
            },
        ],
    }


def test_a_replay_to_the_recorded_dated_model_keeps_thinking_redacted_thinking_and_images() -> None:
    adapter = adapters.get("anthropic")
    recorded = _recorded_request("claude-haiku-4-5-20251001")
    imported = adapter.from_wire_request(recorded, session_id=SID, tool_ids=ToolIdMap(SID))
    assert imported.options.model == "anthropic:claude-haiku-4-5-20251001"
    body = adapter.to_wire(imported.messages, imported.tools, imported.options)
    assert body["model"] == "claude-haiku-4-5-20251001"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["messages"] == recorded["messages"]


def test_a_thinking_tool_turn_never_keeps_thinking_on_without_its_block(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The thinking of the open tool turn cannot go (another provider's): thinking is left off
    for the request, with a WARN, instead of a request Anthropic rejects."""
    adapter = adapters.get("anthropic")
    imported = adapter.from_wire_request(
        _recorded_request("claude-haiku-4-5-20251001"), session_id=SID, tool_ids=ToolIdMap(SID)
    )
    turn = imported.messages[1]
    foreign = turn.model_copy(
        update={"metadata": turn.metadata.model_copy(update={"provider": "openrouter"})}
    )
    messages = [imported.messages[0], foreign, *imported.messages[2:]]
    with caplog.at_level(logging.WARNING, logger="metis.adapters"):
        body = adapter.to_wire(messages, imported.tools, imported.options)
    assert [b["type"] for b in body["messages"][1]["content"]] == ["tool_use"]
    assert "thinking" not in body
    left_off = [r for r in caplog.records if "thinking left off" in r.getMessage()]
    assert len(left_off) == 1 and left_off[0].message_id == foreign.id  # type: ignore[attr-defined]


def test_a_refusal_names_the_capability_and_the_model() -> None:
    history = image_history()
    with pytest.raises(CapabilityError) as caught:
        check_swap(history, "anthropic:text-only-model")
    error = caught.value
    assert error.model == "anthropic:text-only-model" and error.capabilities == ["supports_images"]
    text = str(error)
    assert text.startswith("Cannot swap to anthropic:text-only-model: session contains images")
    assert "capabilities were assumed from anthropic's conservative defaults" in text
    with pytest.raises(CapabilityError) as listed:
        check_swap(history, "ollama:llama-3.3-70b")
    assert listed.value.capabilities == ["supports_images"] and "assumed" not in str(listed.value)


def _catalog_doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    doc["models"] = doc["models"][:2]
    doc["models"][0].update(changes)
    return doc


def test_bad_catalog_is_rejected_with_a_path() -> None:
    doc = _catalog_doc()
    doc["models"][1]["capabilities"]["max_context_tokens"] = "lots"
    with pytest.raises(UnknownModelError) as caught:
        parse_catalog(json.dumps(doc))
    assert caught.value.path == "models[1].capabilities.max_context_tokens"


def test_catalog_refuses_duplicate_ids_and_aliases() -> None:
    with pytest.raises(UnknownModelError, match="twice"):
        parse_catalog(json.dumps(_catalog_doc(id="anthropic:claude-sonnet-4-6", wire_model="x")))
    with pytest.raises(UnknownModelError, match="alias"):
        parse_catalog(json.dumps(_catalog_doc(aliases=["sonnet"])))


def test_finish_assistant_records_the_canonical_id_for_an_alias() -> None:
    context = RequestContext(session_id=SID, model="sonnet", tool_ids=ToolIdMap(SID))
    message = finish_assistant(
        context,
        provider="anthropic",
        content=[TextBlock(text="hi")],
        counts=TokenCounts(8, 42),
        stop_reason=None,
        provider_raw=None,
    )
    assert message.metadata.model == SONNET
    assert message.metadata.routing is not None and message.metadata.routing.chosen_model == SONNET
    assert message.metadata.usage is not None and message.metadata.usage.cost_usd == Decimal("0.000654")


# --- routing projection (§4.3) --------------------------------------------------------------------------


def test_chain_to_mode_is_the_spec_table() -> None:
    assert dict(CHAIN_TO_MODE) == {
        ChainPolicy.PER_MESSAGE_OVERRIDE: RoutingMode.override,
        ChainPolicy.MANUAL_STICKY: RoutingMode.manual,
        ChainPolicy.RULE: RoutingMode.rule,
        ChainPolicy.PATTERN: RoutingMode.pattern,
        ChainPolicy.DELEGATE_REQUEST: RoutingMode.delegate,
        ChainPolicy.WORKSPACE_DEFAULT: RoutingMode.default,
        ChainPolicy.GLOBAL_DEFAULT: RoutingMode.default,
    }
    assert set(CHAIN_TO_MODE) == set(ChainPolicy)
    with pytest.raises(TypeError):
        CHAIN_TO_MODE[ChainPolicy.RULE] = RoutingMode.default  # type: ignore[index]


def test_decision_record_projects_and_emits_the_full_chain() -> None:
    sink = RecordingSink()
    record = decision_record(
        ChainPolicy.WORKSPACE_DEFAULT, "sonnet", "workspace default", alternatives=["gpt5"], events=sink
    )
    assert record == RoutingDecisionRecord(
        mode=RoutingMode.default,
        chosen_model=SONNET,
        reason="workspace default",
        alternatives_considered=["openai:gpt-5"],
    )
    [event] = sink.of_type("route.decided")
    assert event.payload["policy"] == "workspace_default"  # the detail the record drops
    assert event.payload["mode"] == "default"
    assert event.payload["chosen_model"] == SONNET
    assert event.payload["alternatives_considered"] == ["openai:gpt-5"]


def test_decision_record_rule_and_pattern_fields() -> None:
    rule = decision_record(ChainPolicy.RULE, SONNET, "matched", rule_name="long-context")
    assert (rule.mode, rule.rule_name) == (RoutingMode.rule, "long-context")
    pattern = decision_record(ChainPolicy.PATTERN, SONNET, "similar tasks", confidence=0.82)
    assert (pattern.mode, pattern.confidence) == (RoutingMode.pattern, 0.82)
    with pytest.raises(DocumentError) as caught:
        decision_record(ChainPolicy.PATTERN, SONNET, "overconfident", confidence=1.5)
    assert caught.value.problems[0].path == "confidence"
    with pytest.raises(UnknownModelError):
        decision_record(ChainPolicy.RULE, "nonesuch", "x")


# --- swap check (§8.4, §11.1.3) -----------------------------------------------------------------------------


def mid(n: int) -> str:
    return f"01HZ{n:022d}"


def tid(n: int) -> str:
    return f"tu_01HZ{n:022d}"


def png(media_type: str = "image/png", data: str = "iVBORw0KGgo=") -> ImageBlock:
    return ImageBlock(source=MediaSource(kind=MediaSourceKind.base64, data=data), media_type=media_type)


def msg(n: int, role: Role, *blocks: Any, **meta: Any) -> Message:
    if role == Role.assistant:
        meta = {
            "model": SONNET,
            "provider": "anthropic",
            "routing": RoutingDecisionRecord(mode=RoutingMode.default, chosen_model=SONNET, reason="default"),
            "usage": Usage(
                input_tokens=1,
                output_tokens=1,
                cost_usd=Decimal("0.000018"),
                pricing_version="2026-05-08",
                latency_ms=1,
            ),
            **meta,
        }
    return build_message(role, list(blocks), session_id=SID, id=mid(n), created_at=T0, **meta)


def text_history() -> list[Message]:
    return [
        msg(1, Role.user, TextBlock(text="What's a ULID?")),
        msg(2, Role.assistant, TextBlock(text="A 128-bit id.")),
    ]


def image_history() -> list[Message]:
    return [
        *text_history(),
        msg(3, Role.user, TextBlock(text="And this?"), png()),
        msg(4, Role.assistant, TextBlock(text="A chart.")),
    ]


def tool_history(*, result: list[Any] | None = None) -> list[Message]:
    return [
        msg(1, Role.user, TextBlock(text="Summarize README.md")),
        msg(2, Role.assistant, ToolUseBlock(id=tid(1), name="read_file", input={"path": "README.md"})),
        msg(
            3,
            Role.tool,
            ToolResultBlock(tool_use_id=tid(1), content=result or [TextBlock(text="# Foo")]),
            parent_tool_use_id=tid(1),
        ),
    ]


def test_image_history_to_a_text_only_model_is_refused_with_the_spec_message_and_event() -> None:
    sink = RecordingSink()
    with pytest.raises(CapabilityError) as caught:
        check_swap(image_history(), "ollama:llama-3.3-70b", events=sink)
    assert (
        str(caught.value)
        == "Cannot swap to Llama 3.3 70B: session contains images that this model can't process"
    )
    assert caught.value.model == "ollama:llama-3.3-70b"
    assert caught.value.reasons == ["session contains images that this model can't process"]
    [event] = sink.of_type("routing_constraint_failure")
    assert event.payload["model"] == "ollama:llama-3.3-70b"
    assert event.payload["reasons"] == caught.value.reasons
    assert event.payload["active_model"] == SONNET  # unchanged
    assert event.payload["active_model_unchanged"] is True


def test_text_history_is_accepted_without_an_event() -> None:
    sink = RecordingSink()
    check_swap(text_history(), "ollama:llama-3.3-70b", events=sink)
    check_swap(text_history(), "llama3.3", events=sink)
    assert sink.events == []


def test_tools_to_a_model_without_tools_are_refused() -> None:
    with pytest.raises(CapabilityError) as caught:
        check_swap(tool_history(), "ollama:gemma3-4b")
    assert caught.value.reasons == ["session uses tools that this model can't call"]
    assert str(caught.value).startswith("Cannot swap to Gemma 3 4B: ")
    offered = ToolDefinition(
        name="read_file", description="d", input_schema={"type": "object"}, side_effects=SideEffects.read
    )
    with pytest.raises(CapabilityError):
        check_swap(text_history(), "gemma3", tools=[offered])
    check_swap(text_history(), "gemma3")  # no tools, no problem


def test_images_inside_tool_results_count() -> None:
    history = tool_history(result=[TextBlock(text="screenshot:"), png()])
    with pytest.raises(CapabilityError) as caught:
        check_swap(history, "deepseek")
    assert "images" in caught.value.reasons[0]


def test_image_media_types_must_be_accepted() -> None:
    history = [msg(1, Role.user, TextBlock(text="photo"), png("image/heic"))]
    check_swap(history, "gemini-flash")  # Gemini takes HEIC
    with pytest.raises(CapabilityError) as caught:
        check_swap(history, SONNET)
    assert caught.value.reasons == ["session contains image/heic images that this model doesn't accept"]


def thinking_loop(*, closed: bool) -> list[Message]:
    history = [
        msg(1, Role.user, TextBlock(text="Fix the bug")),
        msg(
            2,
            Role.assistant,
            ThinkingBlock(text="Look at the file first.", signature="sig"),
            ToolUseBlock(id=tid(1), name="read_file", input={"path": "a.py"}),
        ),
        msg(
            3,
            Role.tool,
            ToolResultBlock(tool_use_id=tid(1), content=[TextBlock(text="...")]),
            parent_tool_use_id=tid(1),
        ),
    ]
    if closed:
        history.append(msg(4, Role.assistant, TextBlock(text="Fixed.")))
    return history


def test_thinking_mid_tool_loop_needs_a_thinking_model() -> None:
    with pytest.raises(CapabilityError) as caught:
        check_swap(thinking_loop(closed=False), "openai:gpt-5")
    assert caught.value.reasons == ["session is mid tool loop with thinking that this model can't replay"]
    check_swap(thinking_loop(closed=False), "gemini:gemini-2.5-pro")  # can carry thinking
    check_swap(thinking_loop(closed=True), "openai:gpt-5")  # loop finished: thinking may be dropped


def test_redacted_thinking_counts_as_thinking() -> None:
    history = thinking_loop(closed=False)
    history[1] = history[1].model_copy(
        update={"content": [RedactedThinkingBlock(data="blob"), history[1].content[1]]}
    )
    assert "supports_thinking" in [r.capability for r in required_capabilities(history)]


def _custom_catalog(**caps: Any) -> Catalog:
    doc: dict[str, Any] = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    entry = next(e for e in doc["models"] if e["id"] == "ollama:qwen3-8b")
    entry = {**entry, "id": "ollama:tiny", "wire_model": "tiny", "display_name": "Tiny", "aliases": []}
    entry["capabilities"] = {**entry["capabilities"], **caps}
    return parse_catalog(json.dumps({"catalog_version": "test", "models": [entry]}))


def test_system_prompt_needs_a_model_that_takes_one() -> None:
    catalog = _custom_catalog(supports_system_prompt=False)
    history = [msg(1, Role.system, TextBlock(text="Be terse.")), *text_history()]
    with pytest.raises(CapabilityError) as caught:
        check_swap(history, "ollama:tiny", catalog=catalog)
    assert caught.value.reasons == ["session has a system prompt that this model can't take"]
    empty_system = [msg(1, Role.system), *text_history()]
    check_swap(empty_system, "ollama:tiny", catalog=catalog)


def test_context_size_is_checked() -> None:
    catalog = _custom_catalog(max_context_tokens=1000, max_output_tokens=100)
    small = text_history()
    check_swap(small, "ollama:tiny", catalog=catalog)
    big = [*small, msg(5, Role.user, TextBlock(text="x" * 8000))]
    with pytest.raises(CapabilityError) as caught:
        check_swap(big, "ollama:tiny", catalog=catalog)
    assert "1,000-token context window" in caught.value.reasons[0]


def test_the_session_size_is_estimated_by_the_target_adapter() -> None:
    """What never reaches the model (a long thinking signature, provider_raw) does not count."""
    catalog = _custom_catalog(max_context_tokens=1000, max_output_tokens=100)
    history = [
        *text_history(),
        msg(3, Role.user, TextBlock(text="And then?")),
        msg(
            4,
            Role.assistant,
            ThinkingBlock(text="Keep it short.", signature="S" * 40_000),
            TextBlock(text="Then it sorts by time."),
            provider_raw={"adapter": "anthropic", "id": "msg_" + "x" * 4_000},
        ),
    ]
    generic = estimate_tokens(history)
    ollama = estimate_tokens(history, provider="ollama")
    assert generic > 10_000  # canonical JSON / 4: the signature alone is 10,000
    assert ollama < 100  # what the Ollama adapter would send: a few short texts
    assert ollama == adapters.get("ollama").estimate_input_tokens(history, [])
    check_swap(history, "ollama:tiny", catalog=catalog)  # fits; the generic guess would refuse it
    needs = required_capabilities(history, provider="ollama")
    assert needs[-1].tokens == ollama
    assert required_capabilities(history)[-1].tokens == generic
    assert estimate_tokens(history, provider="no-such-provider") == generic


def test_image_data_is_not_counted_as_text() -> None:
    huge = "A" * 1_000_000  # a 1 MB base64 screenshot
    history = [msg(1, Role.user, TextBlock(text="see"), png(data=huge))]
    estimate = estimate_tokens(history)
    assert IMAGE_TOKENS <= estimate < IMAGE_TOKENS + 200
    check_swap(history, SONNET)


def test_several_unmet_needs_are_all_named() -> None:
    history = [*tool_history(result=[png()])]
    with pytest.raises(CapabilityError) as caught:
        check_swap(history, "ollama:tiny", catalog=_custom_catalog(supports_tools=False))
    assert caught.value.reasons == [
        "session contains images that this model can't process",
        "session uses tools that this model can't call",
    ]
    assert str(caught.value) == "Cannot swap to Tiny: " + "; ".join(caught.value.reasons)


def test_required_capabilities_of_a_plain_history() -> None:
    needs = required_capabilities(text_history())
    assert [n.capability for n in needs] == ["max_context_tokens"]
    assert needs[0].tokens > 0


def test_unknown_target_model() -> None:
    with pytest.raises(UnknownModelError):
        check_swap(text_history(), "nonesuch")
