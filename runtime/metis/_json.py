"""JSON in and out of metis, exactly: what a document says is what metis holds and writes.

orjson is the workhorse (it is the fastest, and strict: it refuses NaN, Infinity, numbers
that overflow a float and lone surrogates, none of which is JSON). One thing it gets
wrong without a word: an integer outside the 64-bit range (below -2**63 or from 2**64
up) is read as a float, so `18446744073709551617` becomes `1.8446744073709552e+19`, and
such an integer cannot be written at all. JSON has no limit on integers, and a tool's
input may hold one (an id, a hash, an amount in the smallest unit). So:

- `loads` parses with orjson, and when the text holds a run of 19 or more digits (the
  only way to write such an integer) parses it again with pydantic-core's parser, whose
  integers are exact (orjson has already refused what is not JSON);
- `dumps` writes with orjson, and when orjson refuses an integer out of its range writes
  the same values with pydantic-core's serializer, which writes every integer as it is.

Everything else is orjson's, unchanged. The stdlib `json` is not a fallback: it reads
NaN and Infinity, which would reach the store as `null`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pydantic_core

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
"""19 digits in a row: an integer orjson may not read exactly has at least that many."""
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1

JSONDecodeError = orjson.JSONDecodeError
"""What `loads` raises for text that is not JSON (a ValueError)."""


def loads(data: bytes | bytearray | str) -> Any:
    """The values of a JSON document; integers of any size read exactly (see module doc)."""
    value = orjson.loads(data)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    if raw.translate(_DIGITS).find(_LONG_RUN) < 0:
        return value
    try:
        return pydantic_core.from_json(raw, allow_inf_nan=False)
    except ValueError as exc:  # an integer past Python's 4,300-digit limit: refused, not rounded
        raise JSONDecodeError(str(exc), raw.decode(errors="replace"), 0) from None


def dumps(value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0) -> bytes:
    """orjson's `dumps(value, default=, option=)`, writing integers of any size exactly.

    Only the options metis uses are honoured on the exact path: OPT_SORT_KEYS, and the
    passthrough options (whose values reach `default`).
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:
        if not _has_wide_int(value):
            raise
    return pydantic_core.to_json(_plain(value, default, bool(option & orjson.OPT_SORT_KEYS)))


def _has_wide_int(value: Any) -> bool:
    """True when `value` holds an int orjson cannot write (only asked after it refused)."""
    if type(value) is int:
        return not _INT64_MIN <= value <= _UINT64_MAX
    if isinstance(value, dict):
        return any(_has_wide_int(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_has_wide_int(item) for item in value)
    return False


def _plain(value: Any, default: Callable[[Any], Any] | None, sort: bool) -> Any:
    """`value` as plain JSON values, as orjson would have written them: dict keys must be
    strings, values orjson writes natively pass as they are, others go through `default`."""
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


__all__ = ["JSONDecodeError", "dumps", "loads"]
