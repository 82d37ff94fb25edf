"""JSON integers have no size limit, and metis keeps them digit for digit (`metis._json`).

orjson, metis's parser, reads an integer outside the 64-bit range as a float without a
word (`18446744073709551617` -> `1.8446744073709552e+19`) and cannot write one. A tool
input may hold such a number (a 128-bit id, an amount in the smallest unit), so every
provider's response is followed here from its bytes to the store and back out to every
provider's request: the integers must arrive, persist, hash and leave exactly.
NaN and Infinity are not JSON and are refused, never read as floats that the store
would write as null.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import metis.adapters
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from metis import _json
from metis.adapters import AdapterOptions
from metis.assembly import RequestContext
from metis.canonical import message_hash, read_message
from metis.client._http import json_body
from metis.ids import ToolIdMap, new_tool_id
from metis.store import Store
from metis_schema.v3 import Message, ToolUseBlock

from tests.support.messages import build_message

PROVIDERS = ["anthropic", "openai", "gemini", "ollama", "openrouter"]
WIDE = {"id": 2**128 + 1, "below": -(2**63) - 1, "above": 2**64, "edge": 2**64 - 1, "f": 0.1}
"""Beyond 64 bits both ways, the last unsigned 64-bit value, and a float beside them."""
SESSION = "sess_wide"
NOW = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)


def _first_call(provider: str, body: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """A setter for the input of the first tool call in `provider`'s response body."""
    if provider == "anthropic":
        block = next(b for b in body["content"] if b["type"] == "tool_use")
        return lambda value: block.__setitem__("input", value)
    if provider in {"openai", "openrouter"}:
        function = body["choices"][0]["message"]["tool_calls"][0]["function"]
        return lambda value: function.__setitem__("arguments", _json.dumps(value).decode())
    if provider == "gemini":
        part = next(p for p in body["candidates"][0]["content"]["parts"] if "functionCall" in p)
        return lambda value: part["functionCall"].__setitem__("args", value)
    function = body["message"]["tool_calls"][0]["function"]
    return lambda value: function.__setitem__("arguments", value)


def _reply(provider: str, value: dict[str, Any], tool_ids: ToolIdMap) -> Message:
    """The provider's recorded response with `value` as its first call's input, parsed from
    the bytes the API would send, as the client parses them."""
    contract = importlib.import_module(f"tests.support.contracts.{provider}")
    body = contract.response_fixture()
    _first_call(provider, body)(value)
    adapter = metis.adapters.get(provider)
    raw = _json.dumps(body)
    context = RequestContext(session_id=SESSION, model=_model(provider), tool_ids=tool_ids)
    return adapter.from_wire_response(json_body(adapter, raw), context)


def _model(provider: str) -> str:
    from metis.catalog import load_catalog

    return load_catalog().for_provider(provider)[0].id


def _message(role: str, content: list[dict[str, Any]], metadata: dict[str, Any]) -> Message:
    return build_message(role, content, session_id=SESSION, created_at=NOW, metadata=metadata)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_wide_integers_cross_every_boundary_exactly(provider: str, tmp_path: Path) -> None:
    tool_ids = ToolIdMap(SESSION)
    reply = _reply(provider, WIDE, tool_ids)
    call = next(b for b in reply.content if isinstance(b, ToolUseBlock))
    assert call.input == WIDE and all(type(call.input[k]) is int for k in WIDE if k != "f")
    before = message_hash(reply)

    history = [_message("user", [{"type": "text", "text": "look it up"}], {}), reply]
    for block in reply.content:
        if isinstance(block, ToolUseBlock):
            result = {
                "type": "tool_result",
                "tool_use_id": block.id,
                "content": [{"type": "text", "text": "ok"}],
            }
            history.append(_message("tool", [result], {"parent_tool_use_id": block.id}))
    with Store.open(tmp_path / "wide.sqlite3") as store:
        store.create_session("/w", session_id=SESSION)
        store.append_many(history, tool_ids=tool_ids)
        stored = store.load_session(SESSION)
        raw_row = store._conn.execute(
            "SELECT content_json FROM messages WHERE id = ?", (reply.id,)
        ).fetchone()
    assert stored == history
    assert message_hash(stored[1]) == before
    assert str(2**128 + 1) in raw_row[0]  # the column holds the digits, not a float
    assert read_message(_json.dumps(stored[1].model_dump(mode="json", exclude_none=True))) == reply

    for target in PROVIDERS:  # and out again, to every provider, as the client sends it
        options = AdapterOptions(model=_model(target), session_id=SESSION, tool_ids=tool_ids)
        sent = _json.dumps(metis.adapters.get(target).to_wire(stored, [], options))
        assert str(2**128 + 1).encode() in sent and str(-(2**63) - 1).encode() in sent, target


def test_nan_in_a_response_is_refused_not_read() -> None:
    """A response body with NaN is not JSON: refused with a typed error, never stored as null."""
    from metis.errors import WireFormatError

    adapter = metis.adapters.get("anthropic")
    with pytest.raises(WireFormatError, match="not JSON"):
        json_body(adapter, b'{"content": [{"type": "tool_use", "input": {"x": NaN}}]}')


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**200), max_value=2**200)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=12,
    )
)
def test_loads_and_dumps_round_trip_any_json_value(value: Any) -> None:
    """Whatever JSON value metis writes it reads back equal; where orjson can write it
    alone, the bytes are orjson's own."""
    text = _json.dumps(value)
    assert _json.loads(text) == value
    assert _json.loads(text.decode()) == value
    try:
        assert text == orjson.dumps(value)
    except TypeError:  # a wide integer: orjson cannot write it at all
        assert any(str(n).encode() in text for n in _wide_ints(value))


def _wide_ints(value: Any) -> list[int]:
    if type(value) is int:
        return [value] if not -(2**63) <= value < 2**64 else []
    if isinstance(value, dict):
        return [n for item in value.values() for n in _wide_ints(item)]
    if isinstance(value, list):
        return [n for item in value for n in _wide_ints(item)]
    return []


def test_sorted_keys_and_default_hold_on_the_exact_path() -> None:
    """canonical hashing writes sorted keys and hands unknown values to `default`: the
    exact path (taken only for wide integers) does the same."""
    from decimal import Decimal

    value = {"b": [Decimal("1.50")], "a": 2**70}
    text = _json.dumps(value, default=lambda d: format(d, "f"), option=orjson.OPT_SORT_KEYS)
    assert text == b'{"a":1180591620717411303424,"b":["1.50"]}'
    with pytest.raises(TypeError):
        _json.dumps({"a": 2**70, "b": object()})
    with pytest.raises(TypeError):
        _json.dumps({1: 2**70})

    class Text(str):
        pass

    with pytest.raises(TypeError):  # an option the exact path does not honour: orjson's refusal stands
        _json.dumps({"s": Text("x"), "a": 2**70}, option=orjson.OPT_PASSTHROUGH_SUBCLASS)


@pytest.mark.parametrize("item", ["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"'])
def test_what_is_not_json_is_refused(item: str) -> None:
    """Refused alone, and beside a wide integer (when the exact parser is asked too)."""
    for text in (f"[{item}]", f"[{2**70}, {item}]"):
        with pytest.raises(ValueError):
            _json.loads(text)


def test_floats_and_long_digit_strings_are_untouched() -> None:
    text = '{"s": "12345678901234567890123", "f": 1.8446744073709552e19, "n": 9223372036854775807}'
    value = _json.loads(text)
    assert value == {"s": "12345678901234567890123", "f": 1.8446744073709552e19, "n": 2**63 - 1}
    assert type(value["f"]) is float and not math.isnan(value["f"])


def _cancelled_call(tool_input: dict[str, Any]) -> Message:
    call = {"type": "tool_use", "id": new_tool_id(), "name": "f", "input": tool_input}
    return _message("assistant", [call], {"status": "cancelled"})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused_where_they_would_be_written_as_null(bad: float, tmp_path: Path) -> None:
    """pydantic lets a NaN into a tool input built in code; orjson and pydantic would both
    write it as `null`. The store refuses the message (naming the place, writing nothing),
    as do hashing and `dumps`; JSON's own nulls pass."""
    from metis.errors import StoreError

    nan_input = {"a": [1, {"b": bad}]}
    with Store.open(tmp_path / "nan.sqlite3") as store:
        store.create_session("/w", session_id=SESSION)
        fine = _cancelled_call({"a": None})
        for batch in ([_cancelled_call(nan_input)], [fine, _cancelled_call(nan_input)]):
            with pytest.raises(
                StoreError, match=r"content\[0\]\.input\.a\[1\]\.b: NaN and Infinity are not JSON"
            ):
                store.append_many(batch)
        assert store.load_session(SESSION) == []  # nothing written, not even the fine one
        store.append(fine)
        assert store.load_session(SESSION) == [fine]
    with pytest.raises(ValueError, match=r"content\[0\]\.input\.a\[1\]\.b"):
        message_hash(_cancelled_call(nan_input))
    with pytest.raises(ValueError, match=r"x\[0\]: NaN"):
        _json.dumps({"x": [bad], "y": None})
    with pytest.raises(ValueError, match=r"x\[0\]: NaN"):  # beside a wide integer, on the exact path
        _json.dumps({"x": [bad], "wide": 2**70})
    assert _json.dumps({"x": [1.5], "y": None}) == b'{"x":[1.5],"y":null}'
