"""Message ids, tool ids and the per-session tool id map (spec §6.1, §6.2)."""

from __future__ import annotations

import re
import time
from itertools import pairwise
from typing import Any

import pytest
from metis import MetisError
from metis.ids import (
    ID_RULES,
    ToolIdError,
    ToolIdMap,
    _Monotonic,
    id_rule,
    is_tool_id,
    new_message_id,
    new_session_id,
    new_tool_id,
)

ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
TOOL_ID = re.compile(r"tu_[0-9A-HJKMNP-TV-Z]{26}")
SID = "sess_01HZ0000000000000000000000"


# --- ULIDs ------------------------------------------------------------------------------------


def test_message_ids_strictly_increase_in_a_tight_loop() -> None:
    ids = [new_message_id() for _ in range(1000)]
    assert all(ULID.fullmatch(i) for i in ids)
    assert all(a < b for a, b in pairwise(ids))
    assert len(set(ids)) == 1000


def test_tool_ids_have_the_tu_format_and_increase() -> None:
    ids = [new_tool_id() for _ in range(1000)]
    assert all(TOOL_ID.fullmatch(i) and is_tool_id(i) for i in ids)
    assert all(a < b for a, b in pairwise(ids))


def test_ids_increase_even_when_the_clock_stands_still_or_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _Monotonic()
    now = [1_700_000_000_000_000_000]
    monkeypatch.setattr(time, "time_ns", lambda: now[0])
    first = [str(gen.next()) for _ in range(100)]
    now[0] -= 5_000_000_000  # clock steps back 5 s
    later = [str(gen.next()) for _ in range(100)]
    ids = first + later
    assert all(a < b for a, b in pairwise(ids))


def test_ids_of_one_millisecond_are_the_ulids_of_consecutive_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Across every carry of the random part (the text of a repeat is patched, not rebuilt)."""
    from ulid import ULID as PyULID

    gen = _Monotonic()
    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_000_000_000)
    first = gen.next()
    start = int(PyULID.from_str(first))
    for base in (0x3FE, (1 << 20) - 2, (1 << 80) - 3):
        gen._last_rand = base  # carries out of the last pair, deeper, and out of the random part
        gen._text = str(PyULID.from_int(((start >> 80) << 80) | base))
        made = [gen.next() for _ in range(4)]
        values = [int(PyULID.from_str(m)) for m in made]
        assert all(str(PyULID.from_int(v)) == m for v, m in zip(values, made, strict=True))
        assert all(b - a == 1 or (b >> 80) == (a >> 80) + 1 for a, b in pairwise(values))
        assert all(a < b for a, b in pairwise(made))


def test_session_ids() -> None:
    sid = new_session_id()
    assert sid.startswith("sess_") and ULID.fullmatch(sid.removeprefix("sess_"))


@pytest.mark.parametrize(
    "bad", ["", "tu_", "call_abc", "toolu_01ABC", "tu_01hz0000000000000000000000", "tu_" + "0" * 27]
)
def test_is_tool_id_rejects_non_canonical(bad: str) -> None:
    assert not is_tool_id(bad)


def test_the_tool_id_rule_is_the_schemas() -> None:
    """ids checks canonical tool ids with a regex of its own (fast, no validator call): it
    must be the schema's ToolUseId pattern, the source of truth."""
    import json

    import metis_schema
    from metis import ids

    bundle = json.loads(metis_schema.bundle_path(1).read_text(encoding="utf-8"))
    assert ids._TOOL_ID.pattern == bundle["$defs"]["ToolUseId"]["pattern"]


def test_is_tool_id_rejects_a_trailing_newline() -> None:
    assert not is_tool_id(new_tool_id() + "\n")


def test_is_tool_id_remembers_only_matches_and_only_so_many(monkeypatch: pytest.MonkeyPatch) -> None:
    from metis import ids

    monkeypatch.setattr(ids, "_SEEN_TOOL_IDS", set())
    monkeypatch.setattr(ids, "_SEEN_MAX", 3)
    good = [new_tool_id() for _ in range(5)]
    for _ in range(2):  # the second round answers from the set (or re-checks after a reset)
        assert all(is_tool_id(t) for t in good)
        for bad in ("tu_", "call_1", good[0] + "\n", good[0].lower()):
            assert not is_tool_id(bad)
        assert len(ids._SEEN_TOOL_IDS) <= 3
        assert all(ids._TOOL_ID.fullmatch(t) for t in ids._SEEN_TOOL_IDS)


def test_minted_tool_ids_are_known_without_the_regex(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from metis import ids

    monkeypatch.setattr(ids, "_SEEN_TOOL_IDS", set())
    minted = new_tool_id()
    unminted = "tu_" + new_message_id()
    monkeypatch.setattr(ids, "_TOOL_ID", re.compile(r"(?!)"))  # the regex now matches nothing
    assert is_tool_id(minted)
    assert not is_tool_id(unminted)


# --- provider rules ------------------------------------------------------------------------------


def fresh(session: str = SID) -> ToolIdMap:
    return ToolIdMap(session)


def test_anthropic_keeps_its_own_ids_and_mints_pattern_ids() -> None:
    ids = fresh()
    canonical = ids.register_incoming("anthropic", "toolu_01ABCdef")
    assert ids.outgoing(canonical, "anthropic") == "toolu_01ABCdef"
    # A Kimi-style id recorded for another provider is not valid for Anthropic.
    other = ids.register_incoming("openai", "functions.Bash:0")
    minted = ids.outgoing(other, "anthropic")
    assert re.fullmatch(r"[a-zA-Z0-9_-]+", minted)
    assert ID_RULES["anthropic"].accepts(minted)
    assert not ID_RULES["anthropic"].accepts("functions.Bash:0")


def test_anthropic_remints_an_invalid_recorded_id() -> None:
    ids = fresh()
    canonical = new_tool_id()
    ids.bind(canonical, "anthropic", "functions.Bash:0")
    out = ids.outgoing(canonical, "anthropic")
    assert out != "functions.Bash:0" and ID_RULES["anthropic"].accepts(out)


def test_openai_ids_are_at_most_40_chars_and_a_50_char_id_is_reminted() -> None:
    ids = fresh()
    llama = "x" * 50  # llama.cpp-style long id
    canonical = ids.register_incoming("openai", llama)
    out = ids.outgoing(canonical, "openai")
    assert out != llama and 1 <= len(out) <= 40
    assert ids.resolve_incoming("openai", out) == canonical
    assert ids.resolve_incoming("openai", llama) == canonical  # the provider's own still resolves
    short = ids.register_incoming("openai", "call_xyz789")
    assert ids.outgoing(short, "openai") == "call_xyz789"


def test_mistral_ids_are_exactly_nine_alphanumerics() -> None:
    ids = fresh()
    canonical = ids.register_incoming("anthropic", "toolu_01ABC")
    out = ids.outgoing(canonical, "mistral")
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", out)
    assert not ID_RULES["mistral"].accepts("abcdefghi\n")
    assert not ID_RULES["mistral"].accepts("abcdefgh")


@pytest.mark.parametrize("provider", ["gemini", "ollama"])
def test_gemini_and_ollama_may_have_no_ids(provider: str) -> None:
    assert ID_RULES[provider].required is False
    ids = fresh()
    canonical = ids.register_incoming(provider, None)
    assert is_tool_id(canonical)
    assert len(ids) == 0  # nothing to bind
    assert ids.outgoing(canonical, provider)  # still an id to send when one is wanted


def test_unknown_providers_get_the_openai_rule() -> None:
    assert id_rule("someone-new") is ID_RULES["openai"]


def test_register_incoming_always_mints_a_new_canonical_id() -> None:
    ids = fresh()
    first = ids.register_incoming("openai", "call_0")
    second = ids.register_incoming("openai", "call_0")  # a server reusing ids
    assert first != second
    assert ids.resolve_incoming("openai", "call_0") == second  # the latest call


def test_minting_is_deterministic_per_session_canonical_and_provider() -> None:
    canonical = "tu_01HZ0000000000000000000042"
    for provider in ("mistral", "anthropic", "openai"):
        assert fresh().outgoing(canonical, provider) == fresh().outgoing(canonical, provider)
    assert fresh().outgoing(canonical, "mistral") != fresh("sess_other").outgoing(canonical, "mistral")
    assert fresh().outgoing(canonical, "mistral") != fresh().outgoing(
        "tu_01HZ0000000000000000000043", "mistral"
    )


def test_collision_with_a_bound_id_mints_another() -> None:
    mine, other = "tu_01HZ0000000000000000000001", "tu_01HZ0000000000000000000002"
    candidate = fresh().outgoing(mine, "mistral")
    ids = fresh()
    ids.bind(other, "mistral", candidate)  # the candidate already belongs to another call
    out = ids.outgoing(mine, "mistral")
    assert out != candidate and re.fullmatch(r"[a-zA-Z0-9]{9}", out)
    assert ids.resolve_incoming("mistral", candidate) == other
    assert ids.resolve_incoming("mistral", out) == mine


def test_collision_with_the_canonical_candidate() -> None:
    mine, other = "tu_01HZ0000000000000000000001", "tu_01HZ0000000000000000000002"
    ids = fresh()
    ids.bind(other, "openai", mine)  # another call's provider id equals my canonical id
    out = ids.outgoing(mine, "openai")
    assert out != mine and len(out) <= 40
    assert ids.resolve_incoming("openai", mine) == other


def test_bind_refuses_non_canonical_ids() -> None:
    with pytest.raises(ToolIdError):
        fresh().bind("call_1", "openai", "call_1")


# --- persistence -----------------------------------------------------------------------------------


def test_to_dict_from_dict_round_trip() -> None:
    ids = fresh()
    a = ids.register_incoming("anthropic", "toolu_01ABC")
    b = ids.register_incoming("openai", "y" * 50)
    ids.outgoing(a, "openai")
    ids.outgoing(b, "openai")
    ids.outgoing(b, "mistral")
    data = ids.to_dict()
    back = ToolIdMap.from_dict(data)
    assert back.to_dict() == data
    assert list(back) == list(ids)
    for canonical in (a, b):
        for provider in ("anthropic", "openai", "mistral"):
            assert back.outgoing(canonical, provider) == ids.outgoing(canonical, provider)
    assert back.resolve_incoming("anthropic", "toolu_01ABC") == a


def test_reload_does_not_grow_the_map() -> None:
    ids = fresh()
    canonical = ids.register_incoming("openai", "z" * 50)
    minted = ids.outgoing(canonical, "openai")
    for _ in range(3):
        ids = ToolIdMap.from_dict(ids.to_dict())
        assert ids.outgoing(canonical, "openai") == minted
    assert len(ids) == 2  # the provider's id and one minted replacement


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({}, "session_id"),
        ({"session_id": SID}, "entries"),
        ({"session_id": SID, "entries": 5}, "entries"),
        ({"session_id": SID, "entries": [{}]}, "entries[0]"),
        ({"session_id": SID, "entries": ["x"]}, "entries[0]"),
        (
            {
                "session_id": SID,
                "entries": [
                    {"canonical": "tu_01HZ0000000000000000000001", "provider": "openai", "provider_id": None}
                ],
            },
            "entries[0]",
        ),
        (
            {
                "session_id": SID,
                "entries": [{"canonical": "call_1", "provider": "openai", "provider_id": "call_1"}],
            },
            "entries[0].canonical",
        ),
        (
            {
                "session_id": SID,
                "entries": [
                    {
                        "canonical": "tu_01HZ0000000000000000000001",
                        "provider": "openai",
                        "provider_id": "c",
                        "origin": "?",
                    }
                ],
            },
            "entries[0]",
        ),
    ],
)
def test_malformed_map_is_a_typed_error(data: Any, path: str) -> None:
    with pytest.raises(ToolIdError) as caught:
        ToolIdMap.from_dict(data)
    assert isinstance(caught.value, MetisError)
    assert caught.value.path == path


def test_fast_ulid_encoding_matches_python_ulid() -> None:
    """metis encodes ULIDs itself for speed; python-ulid is the reference."""
    import os

    from metis.ids import _random_text, _time_text, ulid_datetime
    from ulid import ULID

    def _encode(value: int) -> str:  # as minting writes an id: time part, then random part
        return _time_text(value >> 80) + _random_text(value & ((1 << 80) - 1))

    for _ in range(2000):
        raw = os.urandom(16)
        assert _encode(int.from_bytes(raw, "big")) == str(ULID.from_bytes(raw))
    assert _encode(0) == "0" * 26 and _encode((1 << 128) - 1) == "7" + "Z" * 25
    minted = new_message_id()
    assert ULID.from_str(minted).bytes  # parses as a real ULID
    assert ulid_datetime(new_tool_id()).year >= 2026


def test_issued_by_lists_the_first_id_each_provider_issued() -> None:
    ids = ToolIdMap("sess_1")
    first = ids.register_incoming("ollama", "call_a")
    ids.bind(first, "ollama", "call_b")  # a second id for the same call: the first stays
    other = ids.register_incoming("anthropic", "toolu_x")
    ids.outgoing(other, "ollama")  # minted for ollama: not issued by it
    issued = ids.issued_by("ollama")
    assert dict(issued) == {first: "call_a"}
    assert dict(ids.issued_by("gemini")) == {}
    with pytest.raises(TypeError):
        issued[other] = "x"  # type: ignore[index]


def test_outgoing_answers_from_its_settled_ids_until_a_binding_changes_them() -> None:
    ids = ToolIdMap("sess_1")
    canonical = ids.register_incoming("llamacpp", "x" * 59)  # too long for OpenAI
    minted = ids.outgoing(canonical, "openai")
    assert minted != "x" * 59 and len(minted) <= 40
    assert ids.outgoing(canonical, "openai") == minted  # settled: the same id, no new entry
    assert len(ids) == 2
    ids.bind(canonical, "openai", "call_replacement", origin="minted")
    assert ids.outgoing(canonical, "openai") == "call_replacement"
    reloaded = ToolIdMap.from_dict(ids.to_dict())
    assert reloaded.outgoing(canonical, "openai") == "call_replacement"


# --- imports find the calls the session knows (issue 15 item 13) -----------------------------


def test_an_import_finds_known_calls_oldest_first_and_each_once() -> None:
    ids = ToolIdMap("sess_1")
    earlier, later = ids.register_incoming("ollama", "call_0"), ids.register_incoming("ollama", "call_0")
    with ids.importing():
        assert ids.register_incoming("ollama", "call_0") == earlier
        assert ids.resolve_incoming("ollama", "call_0") == earlier, "a result answers this history's call"
        assert ids.register_incoming("ollama", "call_0") == later
        fresh = ids.register_incoming("ollama", "call_0")  # a third call the session never saw
        assert fresh not in (earlier, later)
        assert ids.resolve_incoming("ollama", "call_0") == fresh
    assert len(ids) == 3
    assert ids.register_incoming("ollama", "call_0") not in (earlier, later, fresh), "a reply's call is new"


def test_an_import_finds_a_call_by_the_id_it_went_out_as() -> None:
    ids = ToolIdMap("sess_1")
    canonical = ids.register_incoming("llamacpp", "x" * 59)
    sent = ids.outgoing(canonical, "openai")  # minted: the OpenAI history carries this id
    entries = len(ids)
    with ids.importing():
        assert ids.register_incoming("openai", sent) == canonical
    assert len(ids) == entries


def test_imports_start_afresh_and_the_map_reloads_with_what_they_found() -> None:
    ids = ToolIdMap("sess_1")
    with ids.importing():
        first = ids.register_incoming("anthropic", "toolu_a")
        with ids.importing():  # an inner import has claimed nothing yet
            assert ids.register_incoming("anthropic", "toolu_a") == first
        assert ids.register_incoming("anthropic", "toolu_a") != first, "the outer import claimed it"
    reloaded = ToolIdMap.from_dict(ids.to_dict())
    with reloaded.importing():
        assert reloaded.register_incoming("anthropic", "toolu_a") == first
    assert len(reloaded) == len(ids)
