"""metis._build: models built without validation, and the checked mode that proves them."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import metis._build as build
import pytest
from metis.assembly import RequestContext, finish_assistant
from metis.errors import WireFormatError
from metis.ids import ToolIdMap
from metis.pricing import make_usage
from metis.usage import TokenCounts, UsageCountError
from metis_schema.v1 import Message, MessageStatus, StopReason, TextBlock, Usage


def _usage_values(**change: object) -> dict[str, object]:
    values: dict[str, object] = {
        "input_tokens": 10,
        "output_tokens": 2,
        "cached_input_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cost_usd": Decimal("0.0001"),
        "pricing_version": "2026-05-08",
        "latency_ms": 5,
    }
    values.update(change)
    return values


def test_the_test_suite_runs_in_checked_mode() -> None:
    assert build.CHECKED, "tests/conftest.py turns checked builds on for the whole suite"


def test_a_construct_equals_what_the_validator_makes() -> None:
    built = build.construct(Usage, _usage_values())
    assert built == Usage.model_validate(_usage_values())
    assert built.model_fields_set == set(Usage.model_fields)
    assert built.model_dump_json() == Usage.model_validate(_usage_values()).model_dump_json()


@pytest.mark.parametrize(
    "change",
    [{"input_tokens": -1}, {"cost_usd": Decimal("-1")}, {"pricing_version": ""}, {"latency_ms": "5"}],
)
def test_checked_mode_refuses_values_that_are_not_valid(change: dict[str, object]) -> None:
    with pytest.raises(build.BuildCheckError, match="Usage built from invalid values"):
        build.construct(Usage, _usage_values(**change))


def test_checked_mode_refuses_missing_or_reordered_fields() -> None:
    values = _usage_values()
    del values["latency_ms"]
    with pytest.raises(build.BuildCheckError, match="fields"):
        build.construct(Usage, values)


def test_unchecked_mode_trusts_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "CHECKED", False)
    built = build.construct(Usage, _usage_values(input_tokens=-1))
    assert built.input_tokens == -1  # what the checked mode is there to catch in tests


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("session_id", ""),
        ("session_id", "x" * 129),
        ("message_id", "not-a-ulid"),
        ("created_at", datetime(2026, 5, 8)),  # naive
        ("created_at", "2026-05-08T12:00:00Z"),  # a string, not a datetime
    ],
)
def test_request_context_checks_what_messages_take_as_is(field: str, value: object) -> None:
    given: dict[str, object] = {"session_id": "sess_1", field: value}
    with pytest.raises(WireFormatError, match=f"RequestContext.{field}"):
        RequestContext(model="openai:gpt-5", tool_ids=ToolIdMap("sess_1"), **given)  # type: ignore[arg-type]
    context = RequestContext(session_id="sess_1", model="openai:gpt-5", tool_ids=ToolIdMap("sess_1"))
    with pytest.raises(WireFormatError, match=f"RequestContext.{field}"):
        setattr(context, field, value)


@pytest.mark.parametrize("bad", [-1, True, 1.0, "3"])
def test_usage_is_built_only_from_non_negative_int_counts(bad: object) -> None:
    with pytest.raises(UsageCountError, match="output_tokens"):
        make_usage(TokenCounts(1, bad), pricing_key="openai:gpt-5", latency_ms=0)  # type: ignore[arg-type]


def test_finish_assistant_still_applies_the_message_rules() -> None:
    context = RequestContext(
        session_id="sess_1",
        model="openai:gpt-5",
        tool_ids=ToolIdMap("sess_1"),
        created_at=datetime(2026, 5, 8, tzinfo=UTC),
    )
    with pytest.raises(WireFormatError, match="does not make a valid assistant message"):
        finish_assistant(
            context, provider="openai", content=[], counts=TokenCounts(), stop_reason=None, provider_raw=None
        )
    message = finish_assistant(
        context,
        provider="openai",
        content=[TextBlock(type="text", text="hi")],
        counts=TokenCounts(3, 1),
        stop_reason=StopReason.end_turn,
        provider_raw={"adapter": "openai"},
    )
    assert Message.model_validate_json(message.model_dump_json()) == message
    assert message.metadata.status is MessageStatus.complete


def _context() -> RequestContext:
    return RequestContext(
        session_id="sess_1",
        model="openai:gpt-5",
        tool_ids=ToolIdMap("sess_1"),
        created_at=datetime(2026, 5, 8, tzinfo=UTC),
    )


def _finish(**change: object) -> Message:
    values: dict[str, object] = {
        "provider": "openai",
        "content": [TextBlock(type="text", text="hi")],
        "counts": TokenCounts(3, 1),
        "stop_reason": StopReason.end_turn,
        "provider_raw": {"adapter": "openai"},
    }
    values.update(change)
    return finish_assistant(_context(), **values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"provider": "Open AI"}, "provider 'Open AI'"),
        ({"provider_raw": [1, 2]}, "provider_raw must be an object"),
        ({"provider_raw": {1: "x"}}, "provider_raw keys must be strings"),
        ({"status": "finished"}, "not a MessageStatus"),
        ({"stop_reason": "done"}, "not a StopReason"),
        ({"content": [{"type": "nope"}]}, "content"),
    ],
)
def test_finish_assistant_refuses_what_it_cannot_build(change: dict[str, object], match: str) -> None:
    with pytest.raises(WireFormatError, match=match):
        _finish(**change)


@pytest.mark.parametrize(("field", "value"), [("status", "finished"), ("stop_reason", "done")])
def test_a_bad_status_or_stop_reason_is_located_at_its_field(field: str, value: str) -> None:
    with pytest.raises(WireFormatError) as caught:
        _finish(**{field: value})
    assert caught.value.path == f"metadata.{field}"


def test_finish_assistant_takes_mappings_and_block_dicts_as_the_validator_would() -> None:
    from collections import OrderedDict

    message = _finish(
        provider_raw=OrderedDict(adapter="openai", id="x"),
        content=[{"type": "text", "text": "hi"}],
        status="complete",
        stop_reason="end_turn",
    )
    assert type(message.metadata.provider_raw) is dict
    assert message.metadata.provider_raw == {"adapter": "openai", "id": "x"}
    assert message.content == [TextBlock(type="text", text="hi")]
    assert message.metadata.status is MessageStatus.complete
    assert message.metadata.stop_reason is StopReason.end_turn


def test_a_stream_of_an_unknown_provider_key_is_refused_before_anything_is_stored() -> None:
    from metis.assembly import StreamAssembler
    from metis_schema.v1 import TextDeltaEvent

    assembler = StreamAssembler(_context(), provider="Open AI")
    assembler.feed(TextDeltaEvent(index=0, text="hi"))
    with pytest.raises(WireFormatError, match="provider"):
        assembler.finish(cancelled=True)
    with pytest.raises(WireFormatError, match="provider"):
        assembler.snapshot()


def test_request_context_requires_a_session_id() -> None:
    with pytest.raises(WireFormatError, match=r"RequestContext\.session_id"):
        RequestContext(session_id=None, model="openai:gpt-5", tool_ids=ToolIdMap("s"))  # type: ignore[arg-type]
