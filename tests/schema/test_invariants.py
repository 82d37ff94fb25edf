"""Spec §5 invariants: a violating and a passing case for every rule.

Violating messages are made with `model_copy(update=...)` / `model_construct`, which skip
validation: that is exactly the situation `metis.invariants` exists for (the generated
models refuse many of these at construction; the checks must still catch them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from metis import (
    ImageBlock,
    InvariantError,
    MediaSource,
    MediaSourceKind,
    Message,
    MessageMetadata,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSchemaError,
    ToolUseBlock,
    Usage,
)
from metis.canonical import message_hash, messages_equal
from metis.invariants import (
    ALLOWED_BLOCKS,
    Violation,
    check_conversation,
    check_links,
    check_message,
    validate_conversation,
    validate_message,
)
from metis.tools import ToolRegistry

from tests.support.messages import build_message

SID = "sess_inv"
T0 = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)
MODEL = "anthropic:claude-sonnet-4-6"


def mid(n: int) -> str:
    return f"01HZ{n:022d}"


def tid(n: int) -> str:
    return f"tu_01HZ{n:022d}"


def text(s: str = "hi") -> TextBlock:
    return TextBlock(text=s)


def image() -> ImageBlock:
    return ImageBlock(
        source=MediaSource(kind=MediaSourceKind.base64, data="iVBORw0KGgo="), media_type="image/png"
    )


def meta_complete(**kw: Any) -> MessageMetadata:
    base: dict[str, Any] = {
        "model": MODEL,
        "provider": "anthropic",
        "routing": RoutingDecisionRecord(mode=RoutingMode.default, chosen_model=MODEL, reason="default"),
        "usage": Usage(
            input_tokens=1,
            output_tokens=1,
            cost_usd=Decimal("0.000018"),
            pricing_version="2026-05-08",
            latency_ms=1,
        ),
    }
    base.update(kw)
    return MessageMetadata(**base)


def user(n: int, *blocks: Any, session: str = SID) -> Message:
    return build_message(Role.user, list(blocks) or [text()], session_id=session, id=mid(n), created_at=T0)


def assistant(n: int, *blocks: Any, session: str = SID, **meta: Any) -> Message:
    return build_message(
        Role.assistant,
        list(blocks) or [text()],
        session_id=session,
        id=mid(n),
        created_at=T0,
        metadata=meta_complete(**meta),
    )


def tool(n: int, answers: str, *inner: Any, session: str = SID) -> Message:
    return build_message(
        Role.tool,
        [ToolResultBlock(tool_use_id=answers, content=list(inner) or [text("ok")])],
        session_id=session,
        id=mid(n),
        created_at=T0,
        parent_tool_use_id=answers,
    )


def system(n: int, *blocks: Any) -> Message:
    return build_message(Role.system, list(blocks), session_id=SID, id=mid(n), created_at=T0)


def use(n: int, name: str = "read_file", **input: Any) -> ToolUseBlock:
    return ToolUseBlock(id=tid(n), name=name, input=input or {"path": "README.md"})


def with_content(message: Message, blocks: list[Any]) -> Message:
    return message.model_copy(update={"content": blocks})


def with_meta(message: Message, **changes: Any) -> Message:
    return message.model_copy(update={"metadata": message.metadata.model_copy(update=changes)})


def rules(violations: list[Violation]) -> list[tuple[str, str]]:
    return [(v.rule, v.path) for v in violations]


# --- §5.1.1 / §5.1.2 non-empty content -------------------------------------------------------


@pytest.mark.parametrize("make", [user, assistant])
def test_5_1_1_empty_user_or_assistant_at_complete_is_a_violation(make: Any) -> None:
    empty = with_content(make(1), [])
    assert rules(check_message(empty)) == [("§5.1.1", "content")]


@pytest.mark.parametrize("make", [user, assistant])
def test_5_1_1_one_block_passes(make: Any) -> None:
    assert check_message(make(1)) == []


def test_5_1_2_system_message_may_be_empty() -> None:
    assert check_message(system(1)) == []
    assert check_message(system(1, text("You are terse."))) == []


def test_5_1_2_only_system_is_exempt() -> None:
    empty_user = with_content(user(1), [])
    assert check_message(empty_user) != []


# --- §5.1.3 role-content compatibility ---------------------------------------------------------


def test_5_1_3_user_allows_text_and_image() -> None:
    assert check_message(user(1, text(), image())) == []


def test_5_1_3_user_refuses_tool_blocks_and_thinking() -> None:
    bad = with_content(
        user(1), [text(), use(1), ToolResultBlock(tool_use_id=tid(2), content=[]), ThinkingBlock(text="t")]
    )
    assert rules(check_message(bad)) == [
        ("§5.1.3", "content[1].type"),
        ("§5.1.3", "content[2].type"),
        ("§5.1.3", "content[3].type"),
    ]


def test_5_1_3_assistant_allows_text_tool_use_and_thinking() -> None:
    ok = assistant(
        1, ThinkingBlock(text="hmm", signature="sig"), RedactedThinkingBlock(data="blob"), text(), use(1)
    )
    assert check_message(ok) == []


def test_5_1_3_assistant_refuses_image_and_tool_result() -> None:
    bad = with_content(assistant(1), [image(), ToolResultBlock(tool_use_id=tid(1), content=[text()])])
    assert rules(check_message(bad)) == [("§5.1.3", "content[0].type"), ("§5.1.3", "content[1].type")]


def test_5_1_3_tool_holds_exactly_one_tool_result() -> None:
    ok = tool(1, tid(1))
    assert check_message(ok) == []
    two = with_content(ok, [*ok.content, ToolResultBlock(tool_use_id=tid(1), content=[text()])])
    assert ("§5.1.3", "content") in rules(check_message(two))
    as_text = with_content(ok, [text()])
    assert ("§5.1.3", "content[0].type") in rules(check_message(as_text))
    empty = with_content(ok, [])
    assert ("§5.1.3", "content") in rules(check_message(empty))


def test_5_1_3_system_is_text_only() -> None:
    bad = with_content(system(1), [text(), image()])
    assert rules(check_message(bad)) == [("§5.1.3", "content[1].type")]


def test_tool_result_content_is_text_and_image_only() -> None:
    ok = tool(1, tid(1), text("out"), image())
    assert check_message(ok) == []
    result = ToolResultBlock.model_construct(
        type="tool_result", tool_use_id=tid(1), content=[text(), ThinkingBlock(text="x")]
    )
    bad = with_content(ok, [result])
    assert rules(check_message(bad)) == [("§4.2", "content[0].content[1].type")]


def test_unknown_role_is_reported() -> None:
    bad = user(1).model_copy(update={"role": "narrator"})
    assert rules(check_message(bad)) == [("§4.1", "role")]


def test_dict_blocks_of_a_constructed_message_are_checked() -> None:
    bad = Message.model_construct(
        id=mid(1),
        session_id=SID,
        role=Role.user,
        content=[{"type": "hologram", "data": "x"}, {"type": "text", "text": "hi"}],  # type: ignore[list-item]
        metadata=MessageMetadata(),
        created_at=T0,
        schema_version=3,
    )
    assert rules(check_message(bad)) == [("§5.1.3", "content[0].type")]


# --- §5.1.4 ordering ---------------------------------------------------------------------------


def test_5_1_4_check_conversation_keeps_order_and_sees_a_result_before_its_call() -> None:
    conversation = [user(1), assistant(2, text("reading"), use(1)), tool(3, tid(1)), assistant(4)]
    before = list(conversation)
    assert check_conversation(conversation) == []
    assert conversation == before  # not reordered, not mutated
    swapped = [conversation[0], conversation[2], conversation[1], conversation[3]]
    assert rules(check_conversation(swapped)) == [("§5.2.2", "content[0].tool_use_id")]


def test_5_1_4_violations_are_reported_in_message_order() -> None:
    conversation = [with_content(user(1), []), assistant(2), with_content(user(3), [])]
    found = check_conversation(conversation)
    assert [v.message_id for v in found] == [mid(1), mid(3)]


def test_5_1_4_block_order_is_part_of_identity() -> None:
    a = assistant(1, text("first"), text("second"))
    b = with_content(a, list(reversed(a.content)))
    assert not messages_equal(a, b)
    assert message_hash(a) != message_hash(b)


# --- §5.1.5 PARTIAL exemptions -------------------------------------------------------------------


def test_5_1_5_partial_assistant_is_exempt_from_content_metadata_and_input() -> None:
    partial = Message.model_construct(
        id=mid(1),
        session_id=SID,
        role=Role.assistant,
        content=[ToolUseBlock.model_construct(type="tool_use", id=tid(1), name="read_file", input='{"pa')],  # type: ignore[arg-type]
        metadata=MessageMetadata(status=MessageStatus.partial),
        created_at=T0,
        schema_version=3,
    )
    assert check_message(partial) == []
    assert check_message(with_content(partial, [])) == []


@pytest.mark.parametrize("status", [MessageStatus.cancelled, MessageStatus.error])
def test_5_1_5_stopped_assistant_is_exempt_too(status: MessageStatus) -> None:
    stopped = with_meta(with_content(assistant(1), []), status=status, usage=None, routing=None)
    assert check_message(stopped) == []


def test_5_1_5_the_same_message_at_complete_is_checked() -> None:
    complete = Message.model_construct(
        id=mid(1),
        session_id=SID,
        role=Role.assistant,
        content=[ToolUseBlock.model_construct(type="tool_use", id=tid(1), name="read_file", input='{"pa')],  # type: ignore[arg-type]
        metadata=MessageMetadata(),
        created_at=T0,
        schema_version=3,
    )
    assert {v.rule for v in check_message(complete)} == {"§4.2", "§5.3.1", "§5.3.2", "§5.3.3"}


def test_5_1_5_partial_still_obeys_role_compatibility() -> None:
    partial = with_meta(with_content(user(1), [use(1)]), status=MessageStatus.partial)
    assert rules(check_message(partial)) == [("§5.1.3", "content[0].type")]


# --- §5.2.1 canonical tool ids ------------------------------------------------------------------


def test_5_2_1_provider_tool_ids_are_violations() -> None:
    foreign = ToolUseBlock.model_construct(type="tool_use", id="toolu_01ABC", name="read_file", input={})
    message = with_content(assistant(1), [foreign])
    assert rules(check_message(message)) == [("§5.2.1", "content[0].id")]
    result = ToolResultBlock.model_construct(
        type="tool_result", tool_use_id="call_xyz789", content=[text()], is_error=False
    )
    answer = with_meta(with_content(tool(2, tid(1)), [result]), parent_tool_use_id="call_xyz789")
    assert rules(check_message(answer)) == [
        ("§5.2.1", "content[0].tool_use_id"),
        ("§5.2.1", "metadata.parent_tool_use_id"),
    ]


def test_5_2_1_a_trailing_newline_is_not_canonical() -> None:
    sneaky = ToolUseBlock.model_construct(type="tool_use", id=tid(1) + "\n", name="read_file", input={})
    assert rules(check_message(with_content(assistant(1), [sneaky]))) == [("§5.2.1", "content[0].id")]


def test_5_2_1_canonical_ids_pass() -> None:
    assert check_message(assistant(1, use(1))) == []
    assert check_message(tool(2, tid(1))) == []


# --- §5.2.2 / §5.2.3 links ------------------------------------------------------------------------


def test_5_2_2_result_must_answer_a_known_tool_use() -> None:
    answer = tool(2, tid(1))
    assert rules(check_links(answer, tool_uses={}, answered=set())) == [("§5.2.2", "content[0].tool_use_id")]
    assert check_links(answer, tool_uses={tid(1): SID}, answered=set()) == []


def test_5_2_2_tool_ids_never_cross_sessions() -> None:
    answer = tool(2, tid(1))
    found = check_links(answer, tool_uses={tid(1): "sess_other"}, answered=set())
    assert rules(found) == [("§5.2.2", "content[0].tool_use_id")]
    assert "sess_other" in found[0].problem


def test_5_2_2_in_a_conversation() -> None:
    orphan = [user(1), tool(2, tid(9))]
    assert rules(check_conversation(orphan)) == [("§5.2.2", "content[0].tool_use_id")]


def test_5_2_3_a_tool_use_is_answered_at_most_once() -> None:
    answer = tool(3, tid(1))
    assert rules(check_links(answer, tool_uses={tid(1): SID}, answered={tid(1)})) == [
        ("§5.2.3", "content[0].tool_use_id")
    ]
    twice = [user(1), assistant(2, use(1)), tool(3, tid(1)), tool(4, tid(1))]
    found = check_conversation(twice)
    assert rules(found) == [("§5.2.3", "content[0].tool_use_id")]
    assert found[0].message_id == mid(4)


def test_5_2_3_two_answers_in_one_message_are_caught_too() -> None:
    answer = tool(3, tid(1))
    doubled = with_content(answer, [*answer.content, *answer.content])
    found = check_links(doubled, tool_uses={tid(1): SID}, answered=set())
    assert rules(found) == [("§5.2.3", "content[1].tool_use_id")]


def test_5_2_3_a_retry_needs_a_new_tool_id() -> None:
    reused = [user(1), assistant(2, use(1)), tool(3, tid(1)), assistant(4, use(1))]
    assert rules(check_conversation(reused)) == [("§5.2.3", "content[0].id")]
    same_message = assistant(5, use(2), use(2))
    assert rules(check_links(same_message, tool_uses={}, answered=set())) == [("§5.2.3", "content[1].id")]
    retried = [user(1), assistant(2, use(1)), tool(3, tid(1)), assistant(4, use(2)), tool(5, tid(2))]
    assert check_conversation(retried) == []


def test_check_links_does_not_modify_its_inputs() -> None:
    uses: dict[str, str] = {tid(1): SID}
    answered: set[str] = set()
    check_links(tool(2, tid(1)), tool_uses=uses, answered=answered)
    check_links(assistant(3, use(4)), tool_uses=uses, answered=answered)
    assert uses == {tid(1): SID}
    assert answered == set()


# --- §5.2.4 tool input matches the schema ------------------------------------------------------------


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(
        [
            {
                "name": "read_file",
                "description": "Read a file in the workspace.",
                "input_schema": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                    "additionalProperties": False,
                },
                "side_effects": "read",
            }
        ]
    )


def test_5_2_4_input_against_the_registered_schema(registry: ToolRegistry) -> None:
    assert check_message(assistant(1, use(1, path="README.md")), tools=registry) == []
    bad = assistant(1, text(), use(2, path=3))
    assert rules(check_message(bad, tools=registry)) == [("§5.2.4", "content[1].input.path")]
    unknown = assistant(1, use(3, name="delete_everything", path="/"))
    assert rules(check_message(unknown, tools=registry)) == [("§5.2.4", "content[0].name")]


def test_5_2_4_a_property_name_with_a_colon_keeps_its_path() -> None:
    registry = ToolRegistry(
        [
            {
                "name": "odd",
                "description": "A tool whose property name holds ': '.",
                "input_schema": {"type": "object", "properties": {"a: b": {"type": "integer"}}},
                "side_effects": "none",
            }
        ]
    )
    block = ToolUseBlock(id=tid(1), name="odd", input={"a: b": "x"})
    [violation] = check_message(assistant(1, block), tools=registry)
    assert (violation.rule, violation.path) == ("§5.2.4", "content[0].input.a: b")
    assert violation.problem == "'x' is not of type 'integer'"


def test_5_2_4_partial_input_is_not_validated(registry: ToolRegistry) -> None:
    partial = with_meta(assistant(1, use(2, path=3)), status=MessageStatus.partial)
    assert check_message(partial, tools=registry) == []


# --- §5.3 metadata ------------------------------------------------------------------------------------


def test_5_3_1_model_and_provider_on_complete_assistant() -> None:
    assert rules(check_message(with_meta(assistant(1), model=None))) == [("§5.3.1", "metadata.model")]
    assert rules(check_message(with_meta(assistant(1), provider=None))) == [("§5.3.1", "metadata.provider")]
    assert rules(check_message(with_meta(assistant(1), provider="openai"))) == [("§6.3", "metadata.model")]
    assert check_message(assistant(1)) == []


def test_5_3_2_routing_on_complete_assistant() -> None:
    assert rules(check_message(with_meta(assistant(1), routing=None))) == [("§5.3.2", "metadata.routing")]


def test_5_3_3_usage_on_complete_assistant() -> None:
    assert rules(check_message(with_meta(assistant(1), usage=None))) == [("§5.3.3", "metadata.usage")]


def test_5_3_1_to_3_only_for_assistant() -> None:
    assert check_message(user(1)) == []  # a user message records no model, routing or usage


def test_5_3_4_tool_message_names_its_parent() -> None:
    assert check_message(tool(1, tid(1))) == []
    missing = with_meta(tool(1, tid(1)), parent_tool_use_id=None)
    assert rules(check_message(missing)) == [("§5.3.4", "metadata.parent_tool_use_id")]
    other = with_meta(tool(1, tid(1)), parent_tool_use_id=tid(2))
    assert rules(check_message(other)) == [("§5.3.4", "metadata.parent_tool_use_id")]


def test_5_3_4_applies_at_every_status() -> None:
    partial = with_meta(tool(1, tid(1)), parent_tool_use_id=None, status=MessageStatus.partial)
    assert rules(check_message(partial)) == [("§5.3.4", "metadata.parent_tool_use_id")]


class Poison(dict[str, Any]):
    """A provider_raw that fails the test if core code reads it in any way."""

    def _boom(self, *args: Any, **kw: Any) -> Any:
        raise AssertionError("core code read provider_raw")

    __getitem__ = __iter__ = __len__ = keys = items = values = get = __contains__ = __eq__ = __hash__ = _boom  # type: ignore[assignment]


def test_5_3_5_core_never_reads_provider_raw() -> None:
    plain = assistant(1)
    raw = with_meta(plain, provider_raw=Poison())
    assert check_message(raw) == []
    assert check_conversation([user(0), raw]) == []
    assert message_hash(raw) == message_hash(plain)
    assert messages_equal(raw, plain)


def test_5_3_5_provider_raw_contents_do_not_matter() -> None:
    a = with_meta(assistant(1), provider_raw={"adapter": "anthropic", "stop_reason": "end_turn"})
    b = with_meta(assistant(1), provider_raw={"adapter": "openai", "anything": [1, 2, 3]})
    assert messages_equal(a, b)
    assert message_hash(a) == message_hash(b)


# --- §5.4 tool input schemas --------------------------------------------------------------------------


def test_5_4_disallowed_schema_fails_registration() -> None:
    registry = ToolRegistry()
    with pytest.raises(ToolSchemaError) as caught:
        registry.register(
            {
                "name": "search",
                "description": "Search.",
                "input_schema": {"type": "object", "properties": {"q": {"oneOf": [{"type": "string"}]}}},
                "side_effects": "network",
            }
        )
    assert caught.value.path == "/properties/q/oneOf"
    registry.register(
        {
            "name": "search",
            "description": "Search.",
            "input_schema": {"type": "object"},
            "side_effects": "network",
        }
    )
    assert "search" in registry


# --- reporting ----------------------------------------------------------------------------------------


def test_all_violations_are_reported_at_once_with_id_path_and_rule() -> None:
    bad = with_meta(
        with_content(assistant(7), [text(), image(), ToolResultBlock(tool_use_id=tid(1), content=[])]),
        usage=None,
    )
    found = check_message(bad)
    assert rules(found) == [
        ("§5.1.3", "content[1].type"),
        ("§5.1.3", "content[2].type"),
        ("§5.3.3", "metadata.usage"),
    ]
    assert str(found[0]) == (
        f"message {mid(7)}: content[1].type: image block not allowed in assistant messages "
        f"(allowed: {', '.join(sorted(ALLOWED_BLOCKS[Role.assistant]))}) [§5.1.3]"
    )


def test_validate_message_raises_with_every_violation() -> None:
    bad = with_meta(assistant(3), usage=None, routing=None)
    with pytest.raises(InvariantError) as caught:
        validate_message(bad)
    assert len(caught.value.violations) == 2
    assert caught.value.message_id == mid(3)
    assert "§5.3.2" in str(caught.value) and "§5.3.3" in str(caught.value)
    validate_message(assistant(3))


def test_validate_conversation_raises() -> None:
    with pytest.raises(InvariantError):
        validate_conversation([user(1), tool(2, tid(1))])
    validate_conversation([user(1), assistant(2, use(1)), tool(3, tid(1))])


def test_conversation_is_one_session() -> None:
    mixed = [user(1), user(2, session="sess_other")]
    assert rules(check_conversation(mixed)) == [("§4.1", "session_id")]


def test_conversation_message_ids_are_unique() -> None:
    assert rules(check_conversation([user(1), user(1)])) == [("§6.1", "id")]


def test_empty_conversation_is_valid() -> None:
    assert check_conversation([]) == []


class CountingList(list[Message]):
    """Counts how often the conversation is walked: one pass means O(n)."""

    passes = 0
    lookups = 0

    def __iter__(self) -> Iterator[Message]:
        self.passes += 1
        return super().__iter__()

    def __getitem__(self, index: Any) -> Any:
        self.lookups += 1
        return super().__getitem__(index)


def test_conversation_check_is_one_pass() -> None:
    messages = CountingList([user(0)])
    for n in range(1, 501):
        messages.append(assistant(2 * n, use(n)))
        messages.append(tool(2 * n + 1, tid(n)))
    assert check_conversation(messages) == []
    assert (messages.passes, messages.lookups) == (1, 1)  # one walk, plus messages[0] for the session
    late = CountingList([*messages, tool(9999, tid(1))])
    assert [v.message_id for v in check_conversation(late)] == [mid(9999)]
    assert late.passes == 1


def test_mapping_access_helpers_accept_dict_metadata() -> None:
    constructed = Message.model_construct(
        id=mid(1),
        session_id=SID,
        role=Role.tool,
        content=[{"type": "tool_result", "tool_use_id": tid(1), "content": [{"type": "text", "text": "x"}]}],  # type: ignore[list-item]
        metadata={"parent_tool_use_id": tid(2)},  # type: ignore[arg-type]
        created_at=T0,
        schema_version=3,
    )
    assert rules(check_message(constructed)) == [("§5.3.4", "metadata.parent_tool_use_id")]
    assert isinstance(constructed.metadata, Mapping)
