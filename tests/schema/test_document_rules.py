"""The rules a document is read under, held as the stored-load path got faster (issue 25):
metis_base's format rules (RFC 3339 `date-time` text, the fixed-point decimal pattern, a
document's required-but-defaulted fields), the tag screen that refuses an integer tag past
4,300 digits before pydantic meets it, and the §5 checks on every kind of part they take
(models, model_construct'ed parts, dicts, other mappings, objects read by attribute).
"""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from metis.canonical import read_message
from metis.errors import DocumentError
from metis.invariants import check_content_block, check_message
from metis_schema.v3 import Message, TextBlock, ToolUseBlock

from tests.schema.test_canonical import ASSISTANT_DOC, TOOL_DOC, USER_DOC

HUGE = 10**4400


def _problems(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(DocumentError) as caught:
        read_message(doc)
    return [p.path for p in caught.value.problems]


# --- metis_base: formats and required fields -------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "2026-05-08T12:00:00Z",
        "2026-05-08t12:00:00.000001z",
        "2026-05-08T12:00:00.5+02:00",
        datetime(2026, 5, 8, 12, 0, 0, 1, tzinfo=UTC),
        datetime(2026, 5, 8, 14, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_a_document_takes_rfc_3339_text_or_an_aware_datetime(value: Any) -> None:
    read = read_message({**USER_DOC, "created_at": value})
    expected = value if isinstance(value, datetime) else datetime.fromisoformat(value.upper())
    assert read.created_at == expected and read.created_at.utcoffset() is not None


@pytest.mark.parametrize(
    "value",
    [
        "2026-05-08 12:00:00Z",  # a space for T
        "2026-05-08T12:00Z",  # no seconds
        "2026-05-08T12:00:00+0000",  # an offset without its colon
        "2026-05-08T12:00:00",  # no offset
        "1778241600",  # a unix time as text
        1778241600,  # a number
        datetime(2026, 5, 8, 12),  # naive
    ],
)
def test_a_document_refuses_a_time_that_is_not_rfc_3339(value: Any) -> None:
    assert _problems({**USER_DOC, "created_at": value}) == ["created_at"]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("0", True),
        ("0.000654", True),
        ("12.50", True),
        (Decimal("0.000654"), True),
        (Decimal("1E-7"), True),  # a Decimal is written fixed-point: 0.0000001
        ("1E-7", False),
        ("-1.5", False),
        ("-0", False),
        ("NaN", False),
        (Decimal("-1"), False),
        (Decimal("-0"), False),
        (Decimal("NaN"), False),
        (Decimal("Infinity"), False),
        (0.5, False),
        (1, False),
    ],
)
def test_a_usage_cost_is_a_fixed_point_decimal(value: Any, ok: bool) -> None:
    doc = deepcopy(ASSISTANT_DOC)
    doc["metadata"]["usage"]["cost_usd"] = value
    if ok:
        usage = read_message(doc).metadata.usage
        assert usage is not None and usage.cost_usd == Decimal(value)
        assert usage.model_dump(mode="json")["cost_usd"] == format(Decimal(value), "f")
    else:
        assert _problems(doc) == ["metadata.usage.cost_usd"]


def test_a_document_carries_its_schema_version() -> None:
    bare = {k: v for k, v in USER_DOC.items() if k != "schema_version"}
    assert _problems(bare) == ["schema_version"]
    assert _problems({**bare, "created_at": datetime(2026, 5, 8, tzinfo=UTC)}) == ["schema_version"]


# --- the tag screen --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ("block", "content[0].type"),
        ("citation", "content[0].citations[1].type"),
        ("mapping block", "content[0].type"),
        ("tool_result content", "content[0].content[0].type"),
        ("tool_result citation", "content[0].content[0].citations[0].type"),
    ],
)
def test_an_integer_tag_past_4300_digits_is_refused_at_its_place(where: str, path: str) -> None:
    doc = deepcopy(TOOL_DOC if where.startswith("tool_result") else USER_DOC)
    if where == "block":
        doc["content"][0]["type"] = HUGE
    elif where == "citation":
        doc["content"][0]["citations"] = [{"type": "char_location"}, {"type": HUGE}]
    elif where == "mapping block":
        doc["content"][0] = MappingProxyType({**doc["content"][0], "type": HUGE})
    elif where == "tool_result content":
        doc["content"][0]["content"][0]["type"] = HUGE
    else:
        doc["content"][0]["content"][0]["citations"] = [{"type": HUGE}]
    with pytest.raises(DocumentError) as caught:
        read_message(doc)
    assert [p.path for p in caught.value.problems] == [path]
    assert "4,300 digits" in caught.value.problems[0].problem


# --- §5 checks on every kind of part ---------------------------------------------------------

BAD_ASSISTANT: dict[str, Any] = {
    **deepcopy(ASSISTANT_DOC),
    "content": [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {}},
        {"type": "tool_result", "tool_use_id": "tu_x", "content": []},
    ],
    "metadata": {"status": "complete", "provider": "openai", "model": "anthropic:claude-sonnet-4-6"},
}
EXPECTED = [
    ("content[1].id", "§5.2.1"),
    ("content[2].type", "§5.1.3"),
    ("content[2].tool_use_id", "§5.2.1"),
    ("metadata.model", "§6.3"),
    ("metadata.routing", "§5.3.2"),
    ("metadata.usage", "§5.3.3"),
]


class _Document(dict[str, Any]):
    """A dict subclass, as a caller's document may be."""


def _as(kind: str, doc: dict[str, Any]) -> Any:
    if kind == "dict":
        return doc
    if kind == "dict subclass":
        return _Document(doc)
    if kind == "mapping":
        return MappingProxyType({**doc, "content": [MappingProxyType(b) for b in doc["content"]]})
    if kind == "attributes":  # parts that are neither mappings nor models: read by attribute
        return {**doc, "content": [SimpleNamespace(**b) for b in doc["content"]]}
    blocks = [
        TextBlock.model_construct(**doc["content"][0]),
        ToolUseBlock.model_construct(**doc["content"][1]),
        doc["content"][2],
    ]
    return Message.model_construct(**{**doc, "content": blocks})  # model_construct'ed parts


@pytest.mark.parametrize("kind", ["dict", "dict subclass", "mapping", "attributes", "models"])
def test_every_kind_of_part_is_checked_alike(kind: str) -> None:
    found = check_message(_as(kind, BAD_ASSISTANT))
    assert [(v.path, v.rule) for v in found] == EXPECTED
    assert {v.message_id for v in found} == {BAD_ASSISTANT["id"]}


def test_missing_parts_are_reported_not_raised() -> None:
    found = check_message({"id": 7, "role": "tool", "content": "x", "metadata": None})
    assert [(v.path, v.rule) for v in found] == [
        ("content", "§4.1"),
        ("content", "§5.1.3"),
        ("metadata.parent_tool_use_id", "§5.3.4"),
    ]
    assert found[0].message_id is None
    image = {"type": "image", "source": None, "media_type": "image/png"}
    assert check_content_block(SimpleNamespace(**image)) == check_content_block(image) == []
    bad = {"type": "image", "source": {"kind": "url", "provider": "openai"}}
    assert [v.path for v in check_content_block(SimpleNamespace(**bad))] == ["source.provider"]
