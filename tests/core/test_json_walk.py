"""`metis._json.unwritable`'s two passes agree: the quick pass (`_clean`) clears a value only
when the locating walk finds nothing in it, so a clean body is judged without building the
path of each part and a bad one is still refused at its place."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metis import _json

SURROGATE = "\ud800"
TOO_LONG = 10**4400

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([1, -1]).map(lambda sign: sign * TOO_LONG),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from([SURROGATE, f"ok{SURROGATE}", "é"]),
)
_KEYS = st.one_of(st.text(max_size=6), st.sampled_from([SURROGATE, "é", "k"]))
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, max_depth=st.integers(min_value=1, max_value=4))
def test_the_quick_pass_clears_only_what_the_walk_finds_clean(value: Any, max_depth: int) -> None:
    found = _json.unwritable(value, max_depth)
    if _json._clean(value, max_depth):
        assert found is None
    located = _located(value, max_depth)
    assert found == located


def _located(value: Any, max_depth: int) -> tuple[tuple[str | int, ...], str] | None:
    """The first bad part in document order, found without the quick pass (the reference)."""

    def visit(node: Any, where: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], str] | None:
        if type(node) is str:
            return (where, _json._SURROGATE_WHY) if any(0xD800 <= ord(c) <= 0xDFFF for c in node) else None
        if type(node) is float:
            return None if math.isfinite(node) else (where, _json._NON_FINITE_WHY)
        if type(node) is int:
            return None if abs(node) < _json._TOO_LONG else (where, _json._TOO_LONG_WHY)
        if isinstance(node, dict | list | tuple):
            if len(where) >= max_depth:
                return where, f"nesting deeper than {max_depth} levels (the most metis writes)"
            if isinstance(node, dict):
                for key in node:
                    if isinstance(key, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in key):
                        return (*where, key), f"a key holding {_json._SURROGATE_WHY}"
                items = list(node.items())
            else:
                items = list(enumerate(node))
            for key, item in items:
                hit = visit(item, (*where, key))
                if hit is not None:
                    return hit
        return None

    return visit(value, ())


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": [1, {"b": float("nan")}]}, ("a", 1, "b")),
        ({"a": "x", SURROGATE: 1}, (SURROGATE,)),
        ([[[["deep"]]]], (0, 0, 0)),
        ({"n": [TOO_LONG]}, ("n", 0)),
        ((1, [float("inf")]), (1, 0)),
    ],
)
def test_a_bad_part_is_still_located(value: Any, where: tuple[str | int, ...]) -> None:
    found = _json.unwritable(value, 3)
    assert found is not None and found[0] == where
