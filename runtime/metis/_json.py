"""JSON in and out of metis, exactly: what a document says is what metis holds and writes.

orjson is the workhorse (it is the fastest, and strict: it refuses NaN, Infinity, numbers
that overflow a float and lone surrogates, none of which is JSON). One thing it gets
wrong without a word: an integer outside the 64-bit range (below -2**63 or from 2**64
up) is read as a float, so `18446744073709551617` becomes `1.8446744073709552e+19`, and
such an integer cannot be written at all. JSON has no limit on integers, and a tool's
input may hold one (an id, a hash, an amount in the smallest unit). So:

- `loads` parses with orjson, and when the text holds a run of 19 or more digits (the
  only way to write such an integer) parses it again with the standard library's parser,
  whose integers are exact (orjson has already refused what is not JSON, except an
  integer of 309 or more digits, which it calls infinity: such text goes there too);
- `write` writes with orjson, and when orjson refuses an integer out of its range writes
  the same values with pydantic-core's serializer, which writes every integer as it is.

NaN and Infinity are not JSON either way: `loads` refuses them (orjson does; the stdlib
`json` is not a fallback, since it reads them), and `dumps` (`write` plus a look) refuses
a float that is either, where orjson would write `null` without a word (`non_finite`
says where it is).
Everything else is orjson's, unchanged.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import orjson
import pydantic_core

from .validation import field_path

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
"""19 digits in a row: an integer orjson may not read exactly has at least that many."""
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1

JSONDecodeError = orjson.JSONDecodeError
"""What `loads` raises for text that is not JSON (a ValueError)."""


def loads(data: bytes | bytearray | str) -> Any:
    """The values of a JSON document; integers of any size read exactly (see module doc)."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    try:
        value = orjson.loads(raw)
    except JSONDecodeError:
        # orjson calls an integer of 309+ digits "infinity" (it reads it as a double), but
        # it is JSON: the rest of the text is held to orjson's rules with each such run
        # shortened, then the exact parser reads it; a float that overflows stays refused
        if _HUGE_RUN.search(raw) is None:
            raise
        orjson.loads(_HUGE_RUN.sub(b"0", raw))
        value = _exact(raw)
        if non_finite(value) is not None:
            raise JSONDecodeError("a number overflows a double", raw.decode(errors="replace"), 0) from None
        return value
    if raw.translate(_DIGITS).find(_LONG_RUN) < 0:
        return value
    return _exact(raw)


_HUGE_RUN = re.compile(rb"[0-9]{309,}")
"""A run of digits orjson cannot read as a double (10**308 is its largest finite value)."""


def _exact(raw: bytes) -> Any:
    """The standard library's reading of JSON text orjson has passed: integers exact, and
    as deep as orjson reads (pydantic-core's parser, used before, stops near 200 levels,
    so a deep document holding one long number was refused). orjson has already refused
    NaN, Infinity and lone surrogates, which the standard library would accept."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # an integer past Python's 4,300-digit limit
        raise JSONDecodeError(str(exc), raw.decode(errors="replace"), 0) from None


def write(value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0) -> bytes:
    """orjson's `dumps(value, default=, option=)`, writing integers of any size exactly, and
    nothing more: a NaN or an infinity is written as orjson writes it (`null`).

    For callers that look for those themselves, on other values than the ones written (a
    pydantic JSON-mode dump has already turned a NaN into None); everyone else calls
    `dumps`. The exact path takes `default` and OPT_SORT_KEYS only (what metis passes);
    with any other option orjson's refusal stands.
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:
        if option & ~orjson.OPT_SORT_KEYS or _find(value, _is_wide_int) is None:
            raise
    refuse_non_finite(value)  # pydantic-core would write the literals NaN and Infinity, not null
    return pydantic_core.to_json(_plain(value, default, bool(option & orjson.OPT_SORT_KEYS)))


def dumps(value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0) -> bytes:
    """`write`, refusing a NaN or an infinite float (ValueError naming the place), which
    orjson would write as `null` without a word: JSON has no way to write either."""
    text = write(value, default=default, option=option)
    if b"null" in text:  # maybe written for a NaN: look (JSON's own nulls are the usual reason)
        refuse_non_finite(value)
    return text


def refuse_non_finite(value: Any) -> None:
    """Raise ValueError, naming the place, when `value` holds a NaN or an infinite float.

    For writers that turn one into `null` on their own (orjson; pydantic's JSON mode):
    call it when their output holds a `null`, on the values they were given.
    """
    where = non_finite(value)
    if where is not None:
        raise ValueError(f"{field_path(where) or '(the value)'}: NaN and Infinity are not JSON")


def non_finite(value: Any) -> tuple[str | int, ...] | None:
    """Where the first NaN or infinite float inside `value` is (dict keys and list indexes
    from the top), or None when it holds none."""
    return _find(value, _is_non_finite)


def _is_non_finite(value: Any) -> bool:
    return type(value) is float and not math.isfinite(value)


def _is_wide_int(value: Any) -> bool:
    return type(value) is int and not _INT64_MIN <= value <= _UINT64_MAX


def _find(value: Any, hit: Callable[[Any], bool]) -> tuple[str | int, ...] | None:
    """Where the first value `hit` picks is inside `value` (dict keys and list indexes from
    the top; () for `value` itself), or None."""
    if hit(value):
        return ()
    items: Any
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        inner = _find(item, hit)
        if inner is not None:
            return (key, *inner)
    return None


def _plain(value: Any, default: Callable[[Any], Any] | None, sort: bool) -> Any:
    """`value` as plain JSON values: dict keys must be strings, str, int, float, bool and
    None pass as they are, anything else goes through `default` (as orjson would with the
    passthrough options; `write` takes this path only for values metis builds, which are plain)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict):
        items = sorted(value.items()) if sort else value.items()
        out = {}
        for key, item in items:
            if not isinstance(key, str):
                raise TypeError("Dict key must be str")
            out[key] = _plain(item, default, sort)
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, default, sort) for item in value]
    if default is None:
        raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")
    return _plain(default(value), default, sort)


__all__ = ["JSONDecodeError", "dumps", "loads", "non_finite", "refuse_non_finite", "write"]
