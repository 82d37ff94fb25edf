"""Canonical JSON, hashing, equality (spec §2.1.5, §6.5) and tolerant reading (§10.3).

The digests below were computed once and pasted: if they change, every stored hash
changes with them, so a failure here is a compatibility break, not a test to update.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from copy import deepcopy
from datetime import UTC, datetime
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import metis.migrations
import orjson
import pytest
from metis import (
    DocumentError,
    Message,
    MigrationError,
    TextBlock,
    Usage,
)
from metis.canonical import (
    HASHED_SCHEMA_VERSION,
    KNOWN_BLOCK_TYPES,
    canonical_json,
    conversation_hash,
    dump_message,
    message_hash,
    message_to_json,
    messages_equal,
    read_message,
)
from metis.validation import MESSAGE_LIST, detect_kind, validate_document
from metis_schema import CURRENT_VERSION, bundle_path

USER_DOC: dict[str, Any] = {
    "id": "01HZ0000000000000000000001",
    "session_id": "sess_42",
    "role": "user",
    "content": [{"type": "text", "text": "What's a ULID? — ünïcode ✓"}],
    "metadata": {},
    "created_at": "2026-05-08T12:00:00.123456Z",
    "schema_version": 3,
}

ASSISTANT_DOC: dict[str, Any] = {
    "id": "01HZ0000000000000000000002",
    "session_id": "sess_42",
    "role": "assistant",
    "content": [
        {"type": "thinking", "text": "The user wants a definition.", "signature": "EqQBCkYIBxgCKkC"},
        {"type": "text", "text": "A ULID is a 128-bit identifier..."},
        {
            "type": "tool_use",
            "id": "tu_01HZ0000000000000000000100",
            "name": "read_file",
            "input": {"z": [1, 2.5, None, True], "a": {"nested": "é", "b": -0.0001}},
        },
    ],
    "metadata": {
        "model": "anthropic:claude-sonnet-4-6",
        "provider": "anthropic",
        "routing": {
            "mode": "default",
            "chosen_model": "anthropic:claude-sonnet-4-6",
            "reason": "workspace default",
        },
        "usage": {
            "input_tokens": 8,
            "output_tokens": 42,
            "cost_usd": "0.000654",
            "pricing_version": "2026-05-08",
            "latency_ms": 820,
        },
        "provider_raw": {"adapter": "anthropic", "stop_reason": "tool_use"},
    },
    "created_at": "2026-05-08T12:00:01.000001Z",
    "schema_version": 3,
}

TOOL_DOC: dict[str, Any] = {
    "id": "01HZ0000000000000000000003",
    "session_id": "sess_42",
    "role": "tool",
    "content": [
        {
            "type": "tool_result",
            "tool_use_id": "tu_01HZ0000000000000000000100",
            "content": [
                {"type": "text", "text": "# Project Foo"},
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": "iVBORw0KGgo="},
                    "media_type": "image/png",
                },
            ],
        }
    ],
    "metadata": {"parent_tool_use_id": "tu_01HZ0000000000000000000100"},
    "created_at": "2026-05-08T12:00:02Z",
    "schema_version": 3,
}

USER_HASH = "2441575cb196dae492046a769c39a0f57d1e117439603dc56d3c1c099fbfbbb8"
ASSISTANT_HASH = "a31c0d6979c268f8410dc673162f69a3322e37eea75de71b7c0a47b047672547"
TOOL_HASH = "ca44e4151fbb7ec4132085eba814cafc919bbbeab6cb78cfaca076a6cef81246"
CONVERSATION_HASH = "9c7e19ceaf508540ccf75c7574d0f8ad270e24738cb6160dbba771787a62a964"
USER_CANONICAL = (
    '{"content":[{"text":"What\'s a ULID? — ünïcode ✓","type":"text"}],'
    '"created_at":"2026-05-08T12:00:00.123456Z","id":"01HZ0000000000000000000001",'
    '"metadata":{"status":"complete"},"role":"user","schema_version":1,"session_id":"sess_42"}'
).encode()


def load(doc: dict[str, Any]) -> Message:
    return Message.model_validate(deepcopy(doc))


# --- canonical JSON and fixed digests ---------------------------------------------------------


def test_canonical_json_bytes_are_pinned() -> None:
    assert canonical_json(load(USER_DOC)) == USER_CANONICAL


def test_canonical_json_is_sorted_compact_utf8() -> None:
    data = canonical_json(load(ASSISTANT_DOC))
    assert b'": ' not in data and b'", ' not in data  # no whitespace after separators
    assert b"\n" not in data
    assert "é".encode() in data  # raw UTF-8, not \\u00e9
    decoded = json.loads(data)
    assert list(decoded) == sorted(decoded)
    assert list(decoded["content"][2]["input"]) == ["a", "z"]
    assert decoded["metadata"]["usage"]["cost_usd"] == "0.000654"  # Decimal as its string


def test_canonical_json_matches_a_stdlib_encoder() -> None:
    # The encoding is language-neutral: any JSON encoder with sorted keys, no whitespace
    # and no ASCII escaping produces the same bytes from the canonical form.
    for doc in (USER_DOC, ASSISTANT_DOC, TOOL_DOC):
        message = load(doc)
        data = dump_message(message)
        data["metadata"].pop("provider_raw", None)
        data["schema_version"] = HASHED_SCHEMA_VERSION  # see metis.canonical: hashed as 1
        expected = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        assert canonical_json(message) == expected


def test_fixed_digests() -> None:
    assert message_hash(load(USER_DOC)) == USER_HASH
    assert message_hash(load(ASSISTANT_DOC)) == ASSISTANT_HASH
    assert message_hash(load(TOOL_DOC)) == TOOL_HASH
    assert conversation_hash([load(USER_DOC), load(ASSISTANT_DOC), load(TOOL_DOC)]) == CONVERSATION_HASH


def test_conversation_hash_is_order_sensitive_and_defined_for_empty() -> None:
    forward = conversation_hash([load(USER_DOC), load(ASSISTANT_DOC)])
    backward = conversation_hash([load(ASSISTANT_DOC), load(USER_DOC)])
    assert forward != backward
    assert conversation_hash([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_hash_is_stable_in_a_fresh_interpreter_with_another_hash_seed() -> None:
    script = (
        "import json, sys\n"
        "from metis import Message\n"
        "from metis.canonical import message_hash, conversation_hash\n"
        "docs = json.loads(sys.stdin.read())\n"
        "msgs = [Message.model_validate(d) for d in docs]\n"
        "print(' '.join([message_hash(m) for m in msgs] + [conversation_hash(msgs)]))\n"
    )
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps([USER_DOC, ASSISTANT_DOC, TOOL_DOC]),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert done.stdout.split() == [USER_HASH, ASSISTANT_HASH, TOOL_HASH, CONVERSATION_HASH]


def test_decimals_are_fixed_point_strings() -> None:
    doc = deepcopy(ASSISTANT_DOC)
    message = load(doc)
    tiny = message.metadata.usage.model_copy(update={"cost_usd": Decimal("0.0000001")})  # type: ignore[union-attr]
    changed = message.model_copy(update={"metadata": message.metadata.model_copy(update={"usage": tiny})})
    assert b'"cost_usd":"0.0000001"' in canonical_json(changed)


# --- equality ----------------------------------------------------------------------------------


def test_equality_and_hash_ignore_provider_raw() -> None:
    with_raw = load(ASSISTANT_DOC)
    without = deepcopy(ASSISTANT_DOC)
    del without["metadata"]["provider_raw"]
    other = load(without)
    assert with_raw != other  # pydantic equality sees provider_raw ...
    assert messages_equal(with_raw, other)  # ... ours does not (§6.5)
    assert message_hash(with_raw) == message_hash(other)
    assert b"provider_raw" not in canonical_json(with_raw)


def test_equality_sees_every_other_field() -> None:
    base = load(USER_DOC)
    assert messages_equal(base, load(USER_DOC))
    changed_text = base.model_copy(update={"content": [TextBlock(text="What's a ULID?")]})
    changed_time = base.model_copy(update={"created_at": datetime(2026, 5, 8, 12, tzinfo=UTC)})
    for other in (changed_text, changed_time):
        assert not messages_equal(base, other)
        assert message_hash(base) != message_hash(other)


def test_block_order_changes_the_hash() -> None:
    message = load(ASSISTANT_DOC)
    reordered = message.model_copy(update={"content": list(reversed(message.content))})
    assert message_hash(reordered) != message_hash(message)


# --- dump / to_json ------------------------------------------------------------------------------


def test_dump_message_keeps_provider_raw_and_round_trips() -> None:
    message = load(ASSISTANT_DOC)
    dumped = dump_message(message)
    assert dumped["metadata"]["provider_raw"] == {"adapter": "anthropic", "stop_reason": "tool_use"}
    assert dumped["content"][0]["type"] == "thinking"  # the tag is never dropped
    assert read_message(message_to_json(message)) == message
    assert orjson.loads(message_to_json(message)) == dumped
    assert message_to_json(message) == orjson.dumps(dumped, option=orjson.OPT_SORT_KEYS)  # deterministic


# --- read_message: forward compatibility (§10.3) ---------------------------------------------------


def test_read_message_accepts_dict_str_and_bytes() -> None:
    expected = load(USER_DOC)
    assert read_message(USER_DOC) == expected
    assert read_message(json.dumps(USER_DOC)) == expected
    assert read_message(json.dumps(USER_DOC).encode()) == expected


def test_clean_document_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="metis.compat"):
        read_message(TOOL_DOC)
    assert caplog.records == []


def test_unknown_blocks_and_metadata_are_dropped_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    doc = deepcopy(TOOL_DOC)
    doc["content"][0]["content"].insert(
        0, {"type": "hologram", "source": {"kind": "url", "data": "https://x"}}
    )
    doc["metadata"]["sentiment"] = "calm"
    doc["metadata"]["trace"] = {"span": 1}
    original = deepcopy(doc)
    with caplog.at_level(logging.WARNING, logger="metis.compat"):
        message = read_message(doc)
    assert doc == original  # the caller's document is not modified
    assert message == load(TOOL_DOC)
    assert len(caplog.records) == 1
    record = caplog.records[0]
    assert record.levelno == logging.WARNING
    assert record.message_id == TOOL_DOC["id"]  # type: ignore[attr-defined]
    assert record.skipped == [  # type: ignore[attr-defined]
        "content[0].content[0] (hologram block)",
        "metadata.sentiment",
        "metadata.trace",
    ]
    assert "hologram" in record.getMessage() and "metadata.sentiment" in record.getMessage()


def test_unknown_top_level_blocks_are_dropped_and_critical_indices_follow(
    caplog: pytest.LogCaptureFixture,
) -> None:
    doc = deepcopy(ASSISTANT_DOC)
    doc["content"].insert(1, {"type": "smell", "data": "..."})
    doc["content"].insert(0, {"type": "hologram", "data": "..."})
    doc["metadata"]["critical_blocks"] = [0, 1, 4]  # hologram (dropped), thinking, tool_use
    with caplog.at_level(logging.WARNING, logger="metis.compat"):
        message = read_message(doc)
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.metadata.critical_blocks == [0, 2]
    skipped = caplog.records[0].skipped  # type: ignore[attr-defined]
    assert skipped == ["content[0] (hologram block, marked critical)", "content[2] (smell block)"]


def test_the_drop_step_copies_only_what_it_drops() -> None:
    # A document that failed validation goes through the §10.3 drop step; one holding
    # nothing unknown is handed back as it is, not rebuilt block by block, and one with an
    # unknown metadata field copies the metadata alone.
    from metis.canonical import _drop_unknown

    clean = deepcopy(TOOL_DOC)
    out, skipped = _drop_unknown(clean)
    assert skipped == []
    assert out["content"] is clean["content"] and out["metadata"] is clean["metadata"]
    extra = deepcopy(ASSISTANT_DOC)
    extra["metadata"]["sentiment"] = "calm"
    out, skipped = _drop_unknown(extra)
    assert skipped == ["metadata.sentiment"]
    assert out["content"] is extra["content"] and "sentiment" in extra["metadata"]
    assert "sentiment" not in out["metadata"]


def test_only_a_document_that_fails_validation_is_walked_by_the_drop_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A document holding nothing unknown (every row this metis wrote) validates as it is:
    # the §10.3 walk runs only after a failure, where an unknown part may be the cause.
    import metis.canonical as canonical

    walked: list[str] = []
    real = canonical._drop_unknown

    def counting(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        walked.append(data["id"])
        return real(data)

    monkeypatch.setattr(canonical, "_drop_unknown", counting)
    for doc in (USER_DOC, ASSISTANT_DOC, TOOL_DOC):
        assert read_message(doc) == load(doc)
    assert walked == []
    newer = deepcopy(TOOL_DOC)
    newer["metadata"]["sentiment"] = "calm"
    assert read_message(newer) == load(TOOL_DOC)
    assert walked == [TOOL_DOC["id"]]
    broken = deepcopy(USER_DOC)
    broken["content"] = [{"type": "text"}]  # no text: invalid, nothing unknown to drop
    with pytest.raises(DocumentError) as info:
        read_message(broken)
    assert [p.path for p in info.value.problems] == ["content[0].text"]
    assert walked == [TOOL_DOC["id"], USER_DOC["id"]]


def test_documents_are_read_with_the_document_context() -> None:
    # The reader validates through one TypeAdapter with metis_base's DOCUMENT context: a
    # document must carry schema_version (the schema requires it) though the model
    # defaults it for messages built in code; the context reaches nested models.
    from metis.canonical import MESSAGE
    from metis_base import DOCUMENT
    from pydantic import ValidationError

    bare = {k: v for k, v in USER_DOC.items() if k != "schema_version"}
    with pytest.raises(DocumentError, match="schema_version: is required"):
        read_message(bare)
    with pytest.raises(ValidationError, match="schema_version is required"):
        MESSAGE.validate_python(bare, context=DOCUMENT)
    with pytest.raises(ValidationError, match="schema_version is required"):
        Message.model_validate(bare, context={"caller": "own"})  # a caller's context keeps the rule
    with pytest.raises(ValidationError, match="schema_version is required"):
        Message.model_validate(bare, context=MappingProxyType({"caller": "own"}))  # any mapping
    with pytest.raises(TypeError, match="must be a mapping, got str"):
        Message.model_validate(bare, context="own")  # no place for the mark: refused, not unchecked
    assert MESSAGE.validate_python(bare) == load(USER_DOC)  # no context: not a document
    assert Message(**{**bare, "content": [TextBlock(text="x")]}).schema_version == CURRENT_VERSION
    usage = ASSISTANT_DOC["metadata"]["usage"]
    for text, ok in (("0.000654", True), ("12.50", True), ("1E-7", False), ("-1.5", False), ("NaN", False)):
        doc = deepcopy(ASSISTANT_DOC)
        doc["metadata"]["usage"] = {**usage, "cost_usd": text}
        if ok:
            assert read_message(doc).metadata.usage.cost_usd == Decimal(text)  # type: ignore[union-attr]
        else:
            with pytest.raises(DocumentError, match="does not match"):
                read_message(doc)


def test_known_block_types_are_those_of_the_current_schema() -> None:
    # The spec's six, and whatever the version metis writes adds to them (additive, §4.2.2).
    content_block = json.loads(bundle_path(CURRENT_VERSION).read_text(encoding="utf-8"))["$defs"][
        "ContentBlock"
    ]
    assert frozenset(content_block["discriminator"]["mapping"]) == KNOWN_BLOCK_TYPES
    assert {"text", "tool_use", "tool_result", "image", "thinking", "redacted_thinking"} <= KNOWN_BLOCK_TYPES


def test_invalid_document_lists_every_problem_with_its_path() -> None:
    doc = deepcopy(USER_DOC)
    doc["content"] = [{"type": "text"}, {"type": "tool_use", "id": "x", "name": "n", "input": {}}]
    doc["created_at"] = "yesterday"
    doc["extra"] = 1
    with pytest.raises(DocumentError) as caught:
        read_message(doc)
    paths = [p.path for p in caught.value.problems]
    assert "content[0].text" in paths
    assert "content[1].type" in paths  # tool_use in a USER message
    assert "created_at" in paths
    assert "extra" in paths
    assert caught.value.message_id == USER_DOC["id"]
    rules = [p.rule for p in caught.value.problems if p.path == "content[1].type"]
    assert any(r and "§5.1.3" in r for r in rules)


def test_message_emptied_by_skipping_is_reported_not_accepted() -> None:
    doc = deepcopy(USER_DOC)
    doc["content"] = [{"type": "hologram", "data": "..."}]
    with pytest.raises(DocumentError) as caught:
        read_message(doc)
    assert [p.path for p in caught.value.problems] == ["content"]


@pytest.mark.parametrize("bad", [b"{not json", "[1, 2]", b"\xff\xfe"])
def test_not_a_json_object_is_a_document_error(bad: str | bytes) -> None:
    with pytest.raises(DocumentError):
        read_message(bad)


def test_block_without_a_type_is_invalid_not_skipped() -> None:
    doc = deepcopy(USER_DOC)
    doc["content"].append({"text": "untagged"})
    with pytest.raises(DocumentError):
        read_message(doc)


def test_older_versions_are_migrated(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def migrate_document(doc: dict[str, Any], to_version: int | None = None, **_: Any) -> dict[str, Any]:
        calls.append(doc)
        out = deepcopy(doc)
        out["metadata"]["model"] = out["metadata"].pop("model_id")
        out["schema_version"] = CURRENT_VERSION
        return out

    monkeypatch.setattr(metis.migrations, "migrate_document", migrate_document)
    old = deepcopy(ASSISTANT_DOC)
    old["schema_version"] = 0
    old["metadata"]["model_id"] = old["metadata"].pop("model")
    assert read_message(old) == load(ASSISTANT_DOC)
    assert len(calls) == 1


def test_newer_versions_are_refused_by_the_migration_engine() -> None:
    doc = deepcopy(USER_DOC)
    doc["schema_version"] = 99
    with pytest.raises(MigrationError) as caught:
        read_message(doc)
    assert caught.value.path == "schema_version"


def test_usage_from_read_is_decimal() -> None:
    usage = read_message(ASSISTANT_DOC).metadata.usage
    assert isinstance(usage, Usage)
    assert usage.cost_usd == Decimal("0.000654")


# --- validate_document: the schema's report (metis validate) -------------------------------------------


def test_valid_documents_have_no_problems() -> None:
    for doc in (USER_DOC, ASSISTANT_DOC, TOOL_DOC):
        assert validate_document(doc) == []
    assert validate_document([USER_DOC, ASSISTANT_DOC], MESSAGE_LIST) == []


def test_problems_are_sorted_by_path_with_numeric_indices() -> None:
    doc = deepcopy(USER_DOC)
    doc["content"] = [{"type": "text", "text": str(i)} for i in range(12)]
    doc["content"][10] = {"type": "text"}
    doc["content"][2] = {"type": "text", "text": 5}
    doc["session_id"] = ""
    paths = [p.path for p in validate_document(doc)]
    assert paths == ["content[2].text", "content[10].text", "session_id"]


def test_role_rule_failures_carry_the_clause_and_its_section() -> None:
    doc = deepcopy(TOOL_DOC)
    doc["content"].append({"type": "text", "text": "extra"})
    del doc["metadata"]["parent_tool_use_id"]
    problems = validate_document(doc)
    by_path = {p.path: p for p in problems}
    rule = "§5.1.3 TOOL messages carry exactly one tool_result block; §5.3.4 parent_tool_use_id is set."
    assert by_path["content[1].type"].rule == rule
    assert by_path["metadata.parent_tool_use_id"].rule == rule
    assert by_path["metadata.parent_tool_use_id"].problem == "is required"
    assert all(p.rule == rule for p in problems if p.path == "content")


def test_assistant_metadata_rule_is_named() -> None:
    doc = deepcopy(ASSISTANT_DOC)
    del doc["metadata"]["usage"]
    [problem] = validate_document(doc)
    assert problem.path == "metadata.usage"
    assert problem.rule is not None and problem.rule.startswith("§5.3.1-3")


def test_structural_problems_have_no_rule_and_name_the_field() -> None:
    doc = deepcopy(USER_DOC)
    doc["content"][0] = {"type": "hologram"}
    doc["metadata"]["mood"] = "calm"
    doc["created_at"] = "2026-05-08 12:00"
    found = {(p.path, p.rule is None) for p in validate_document(doc)}
    assert ("content[0].type", True) in found  # unknown type (and the §5.1.3 clause, with its rule)
    assert ("metadata.mood", True) in found
    assert ("created_at", True) in found  # the format checker is on


def test_nullable_references_report_inside_the_object() -> None:
    doc = deepcopy(ASSISTANT_DOC)
    doc["metadata"]["routing"] = {
        "mode": "sideways",
        "chosen_model": "anthropic:claude-sonnet-4-6",
        "reason": "r",
    }
    assert [p.path for p in validate_document(doc)] == ["metadata.routing.mode"]


def test_message_list_paths_are_prefixed_with_the_index() -> None:
    bad = deepcopy(USER_DOC)
    bad["role"] = "narrator"
    assert [p.path for p in validate_document([USER_DOC, bad], MESSAGE_LIST)] == ["[1].role"]
    assert validate_document(USER_DOC, MESSAGE_LIST)[0].path == ""


@pytest.mark.parametrize(
    ("doc", "kind"),
    [
        (USER_DOC, "Message"),
        ([USER_DOC], MESSAGE_LIST),
        ({"pricing_version": "x", "models": {}}, "PriceTable"),
        ({"catalog_version": "x", "models": []}, "ModelCatalog"),
        (
            {"name": "t", "description": "", "input_schema": {"type": "object"}, "side_effects": "none"},
            "ToolDefinition",
        ),
    ],
)
def test_detect_kind(doc: Any, kind: str) -> None:
    assert detect_kind(doc) == kind
    assert validate_document(doc, detect_kind(doc)) == []


def test_undetectable_and_unknown_kinds_are_document_errors() -> None:
    with pytest.raises(DocumentError):
        detect_kind({"hello": "world"})
    with pytest.raises(DocumentError):
        detect_kind(42)
    with pytest.raises(DocumentError):
        validate_document({}, "Nonsense")


def test_any_definition_can_be_validated() -> None:
    assert validate_document(ASSISTANT_DOC["metadata"]["usage"], "Usage") == []
    assert [p.path for p in validate_document({"input_tokens": -1}, "Usage")] == [
        "cost_usd",
        "input_tokens",
        "latency_ms",
        "output_tokens",
        "pricing_version",
    ]


# --- documents written by a newer metis -----------------------------------------------------


def test_a_document_from_a_newer_schema_names_its_row_and_version() -> None:
    from metis.errors import MigrationError, NewerSchemaError

    newer = {**deepcopy(USER_DOC), "schema_version": CURRENT_VERSION + 1}
    with pytest.raises(NewerSchemaError) as caught:
        read_message(newer, row="42")
    error = caught.value
    assert isinstance(error, MigrationError)
    assert (error.row, error.version, error.supported) == ("42", CURRENT_VERSION + 1, CURRENT_VERSION)
    assert f"row 42 was written in schema v{CURRENT_VERSION + 1}" in str(error)
    assert error.message_id == USER_DOC["id"]


def test_read_each_sets_aside_only_the_newer_documents() -> None:
    from metis.canonical import read_each

    newer = {**deepcopy(USER_DOC), "schema_version": CURRENT_VERSION + 1}
    decoded = read_each([("1", USER_DOC), ("2", newer), ("3", json.dumps(ASSISTANT_DOC))])
    assert [m.id for m in decoded.messages] == [USER_DOC["id"], ASSISTANT_DOC["id"]]
    assert [(e.row, e.version) for e in decoded.newer] == [("2", CURRENT_VERSION + 1)]
    broken = {**deepcopy(USER_DOC), "content": []}
    with pytest.raises(DocumentError):  # damage is not set aside: it would be hidden
        read_each([("1", broken)])


def test_the_hash_does_not_depend_on_the_schema_version() -> None:
    from metis.canonical import HASHED_SCHEMA_VERSION

    assert HASHED_SCHEMA_VERSION == 1
    message = load(USER_DOC)
    assert b'"schema_version":1' in canonical_json(message)
    assert message_hash(message) == USER_HASH  # pinned before v2 existed
