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

Two bounds hold on both paths, so what `write` (or the store) writes `loads` reads back:

- an integer has at most `MAX_INT_DIGITS` (4,300) digits, Python's own bound for turning
  text into an int (which guards against quadratic conversion): `loads` refuses a longer
  one with a JSONDecodeError saying so, and `write` refuses to write one (ValueError naming
  where it is) — before, one was written that could not be read back;
- nesting goes `MAX_DEPTH` (1,024) levels deep, orjson's bound: the exact parser is given
  the recursion room to read as deep (it stopped near 1,000 levels less the caller's
  stack), and text deeper than that is refused by orjson first, on either path.

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
import sys
import threading
from collections.abc import Callable
from typing import Any

import orjson
import pydantic_core

from .validation import field_path

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
"""19 digits in a row: an integer orjson may not read exactly has at least that many."""
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1
MAX_INT_DIGITS = 4300
"""Most digits of an integer read or written (see module doc)."""
MAX_DEPTH = 1024
"""Deepest nesting read (orjson's bound; see module doc)."""
_TOO_LONG = 10**MAX_INT_DIGITS

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
    """The standard library's reading of JSON text orjson has passed: integers exact (up to
    MAX_INT_DIGITS digits), and as deep as orjson reads (MAX_DEPTH). orjson has already
    refused NaN, Infinity, lone surrogates and deeper text, which the standard library
    would read or fail on differently.

    The standard library parser recurses once per level under Python's recursion limit,
    which leaves it short of MAX_DEPTH by whatever the caller's stack holds; the limit is
    raised by that much while it runs (under a lock, so concurrent readers cannot leave it
    raised) and put back after.
    """
    with _RECURSION:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + MAX_DEPTH + 64)
        try:
            return json.loads(raw, parse_int=_bounded_int)
        except (ValueError, RecursionError) as exc:
            raise JSONDecodeError(str(exc), raw.decode(errors="replace"), 0) from None
        finally:
            sys.setrecursionlimit(limit)


_RECURSION = threading.Lock()


def _bounded_int(text: str) -> int:
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise ValueError(
            f"an integer of {len(text.lstrip('-')):,} digits: metis reads integers of at most "
            f"{MAX_INT_DIGITS:,} digits"
        )
    return int(text)


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
    refuse_too_long(value)
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


def refuse_too_long(value: Any) -> None:
    """Raise ValueError, naming the place, when `value` holds an integer of more than
    MAX_INT_DIGITS digits, which `loads` would refuse to read back."""
    where = _find(value, _is_too_long)
    if where is not None:
        raise ValueError(
            f"{field_path(where) or '(the value)'}: an integer of more than {MAX_INT_DIGITS:,} digits "
            "(metis reads and writes integers up to that length)"
        )


def has_long_digit_run(text: bytes | str) -> bool:
    """Whether `text` holds a run of more than MAX_INT_DIGITS digits: JSON text without one
    holds no integer `loads` refuses for its length (a linear scan, for writers to decide
    whether to look closer)."""
    if len(text) <= MAX_INT_DIGITS:
        return False
    raw = text.encode() if isinstance(text, str) else text
    return raw.translate(_DIGITS).find(_TOO_LONG_RUN) >= 0


_TOO_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)


def non_finite(value: Any) -> tuple[str | int, ...] | None:
    """Where the first NaN or infinite float inside `value` is (dict keys and list indexes
    from the top), or None when it holds none."""
    return _find(value, _is_non_finite)


def _is_non_finite(value: Any) -> bool:
    return type(value) is float and not math.isfinite(value)


def _is_wide_int(value: Any) -> bool:
    return type(value) is int and not _INT64_MIN <= value <= _UINT64_MAX


def _is_too_long(value: Any) -> bool:
    return type(value) is int and not -_TOO_LONG < value < _TOO_LONG


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


__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "JSONDecodeError",
    "dumps",
    "has_long_digit_run",
    "loads",
    "non_finite",
    "refuse_non_finite",
    "refuse_too_long",
    "write",
]
