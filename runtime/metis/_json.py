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

Lone surrogates (`"\ud800"` in a Python str) are refused too, on both paths and at every
entry (issue 29). JSON text is Unicode exchanged as UTF-8 (RFC 8259 §8.1; I-JSON, RFC 7493
§2.1, forbids the `\ud800` escape outright), and a lone surrogate has no UTF-8 form: orjson
refuses one in text it reads and in a str it writes, and a message holding one could be
neither hashed (the hash is over UTF-8 bytes), nor stored, nor sent. Replacing it with
U+FFFD would change what the caller said without a word, so it is refused with the place
it is at, like a NaN.

Every refusal of a value is a `NotJsonError` (a MetisError, and a ValueError as before)
saying what the value was (`what=`) and where in it the bad part is. `unwritable` is the
one walk that finds it (iterative, so a value nested past Python's recursion limit is
judged, not crashed on); entry points that take Python values from callers (the adapters'
wire readers, request options, error bodies, routing policies) call `refuse_unwritable`
on them as they come in, so the refusal names the input rather than a later writer.
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

from .errors import NotJsonError
from .validation import field_path

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
"""19 digits in a row: an integer orjson may not read exactly has at least that many."""
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1
MAX_INT_DIGITS = 4300
"""Most digits of an integer read or written (see module doc)."""
MAX_DEPTH = 1024
"""Deepest nesting read (orjson's bound; see module doc)."""
MAX_WRITE_DEPTH = 254
"""Most containers nested inside one another that orjson writes (its own bound)."""
_TOO_LONG = 10**MAX_INT_DIGITS

JSONDecodeError = orjson.JSONDecodeError
"""What `loads` raises for text that is not JSON (a ValueError)."""


def loads(data: bytes | bytearray | str) -> Any:
    """The values of a JSON document; integers of any size read exactly (see module doc).

    Text (a str) holding a lone surrogate is not JSON text (it has no UTF-8 form): a
    JSONDecodeError saying where, as for any other text that is not JSON."""
    if isinstance(data, str):
        try:
            raw = data.encode()
        except UnicodeEncodeError as exc:
            raise JSONDecodeError(
                f"a lone surrogate (U+{ord(data[exc.start]):04X}) at character {exc.start}: "
                "not UTF-8, so not JSON text",
                printable(data[:2000]),
                exc.start,
            ) from None
    else:
        raw = bytes(data)
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


def write(
    value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0, what: str = ""
) -> bytes:
    """orjson's `dumps(value, default=, option=)`, writing integers of any size exactly, and
    nothing more: a NaN or an infinity is written as orjson writes it (`null`).

    For callers that look for those themselves, on other values than the ones written (a
    pydantic JSON-mode dump has already turned a NaN into None); everyone else calls
    `dumps`. The exact path takes `default` and OPT_SORT_KEYS only (what metis passes);
    with any other option orjson's refusal stands. A value JSON cannot carry (a lone
    surrogate, an integer past MAX_INT_DIGITS digits, nesting past MAX_WRITE_DEPTH) is a
    NotJsonError naming `what` and the place; a value of a type neither JSON nor `default`
    knows stays orjson's TypeError (a caller's programming error, not input).
    """
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:
        refuse_unwritable(value, what)
        if option & ~orjson.OPT_SORT_KEYS or _find(value, _is_wide_int) is None:
            raise
    return pydantic_core.to_json(_plain(value, default, bool(option & orjson.OPT_SORT_KEYS)))


def dumps(
    value: Any, *, default: Callable[[Any], Any] | None = None, option: int = 0, what: str = ""
) -> bytes:
    """`write`, refusing a NaN or an infinite float (NotJsonError naming the place), which
    orjson would write as `null` without a word: JSON has no way to write either."""
    text = write(value, default=default, option=option, what=what)
    if b"null" in text:  # maybe written for a NaN: look (JSON's own nulls are the usual reason)
        refuse_non_finite(value, what)
    return text


def refuse_non_finite(value: Any, what: str = "") -> None:
    """Raise NotJsonError, naming the place, when `value` holds a NaN or an infinite float.

    For writers that turn one into `null` on their own (orjson; pydantic's JSON mode):
    call it when their output holds a `null`, on the values they were given.
    """
    where = non_finite(value)
    if where is not None:
        raise _refusal(what, where, _NON_FINITE_WHY)


def refuse_too_long(value: Any, what: str = "") -> None:
    """Raise NotJsonError, naming the place, when `value` holds an integer of more than
    MAX_INT_DIGITS digits, which `loads` would refuse to read back."""
    where = _find(value, _is_too_long)
    if where is not None:
        raise _refusal(what, where, _TOO_LONG_WHY)


_TOO_LONG_WHY = (
    f"an integer of more than {MAX_INT_DIGITS:,} digits (metis reads and writes integers up to that length)"
)


def unwritable(value: Any, max_depth: int = MAX_WRITE_DEPTH) -> tuple[tuple[str | int, ...], str] | None:
    """Where the first part of `value` JSON cannot carry is (dict keys and list indexes from
    the top) and why, or None: a NaN or an infinite float, a string or key holding a lone
    surrogate, an integer past MAX_INT_DIGITS digits, containers nested past `max_depth`
    (MAX_WRITE_DEPTH, what orjson writes; readers of values that are not written back as
    they are pass MAX_DEPTH, what `loads` reads). Keys that are not strings and values of
    other types are left to the writer (its `default`, or orjson's TypeError: a caller's
    programming error rather than input). Iterative: a value nested past Python's recursion
    limit is judged too.

    Every body an adapter reads and every caller's value passes here, and nearly all are
    clean: `_clean` answers that first, level by level, without building the path of each
    part (a fifth of the time of the walk that locates); only a value it cannot clear is
    walked again to say where."""
    if _clean(value, max_depth):
        return None
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        where, node = stack.pop()
        kind = type(node)
        if kind is str:
            if not node.isascii() and _SURROGATE.search(node):
                return where, _SURROGATE_WHY
        elif kind is float:
            if not math.isfinite(node):
                return where, _NON_FINITE_WHY
        elif kind is int:
            if not -_TOO_LONG < node < _TOO_LONG:
                return where, _TOO_LONG_WHY
        elif isinstance(node, dict | list | tuple):
            if len(where) >= max_depth:
                verb = "reads" if max_depth == MAX_DEPTH else "writes"
                return where, f"nesting deeper than {max_depth} levels (the most metis {verb})"
            if isinstance(node, dict):
                for key in node:
                    if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
                        return (*where, key), f"a key holding {_SURROGATE_WHY}"
                stack.extend(((*where, key), item) for key, item in reversed(node.items()))
            else:
                stack.extend(((*where, index), item) for index, item in reversed(list(enumerate(node))))
    return None


def _clean(value: Any, max_depth: int) -> bool:
    """True when `value` certainly holds nothing `unwritable` refuses: the same tests, part by
    part, a level at a time (the depth is the level's). False when something fails them, or
    when a part is a container of another type than dict or list (a tuple, a subclass),
    which the locating walk judges instead."""
    level = [value]
    depth = 0
    while level:
        below: list[Any] = []
        for node in level:
            kind = type(node)
            if kind is str:
                if not node.isascii() and _SURROGATE.search(node):
                    return False
            elif kind is dict:
                if depth >= max_depth:
                    return False
                for key in node:
                    if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
                        return False
                below.extend(node.values())
            elif kind is list:
                if depth >= max_depth:
                    return False
                below.extend(node)
            elif kind is float:
                if not math.isfinite(node):
                    return False
            elif kind is int:
                if not -_TOO_LONG < node < _TOO_LONG:
                    return False
            elif isinstance(node, dict | list | tuple):
                return False
        level = below
        depth += 1
    return True


def refuse_unwritable(value: Any, what: str = "", max_depth: int = MAX_WRITE_DEPTH) -> None:
    """Raise NotJsonError (what `value` is, and where and why in it) when `value` holds a
    part JSON cannot carry (`unwritable`): the one check of a Python value as it enters."""
    found = unwritable(value, max_depth)
    if found is not None:
        raise _refusal(what, *found)


_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_FINITE_WHY = "NaN and Infinity are not JSON"
_SURROGATE_WHY = "a lone surrogate, which has no UTF-8 form (so no JSON text)"


def copied(value: Any) -> Any:
    """A copy of a JSON value's containers (its str, number, bool and null leaves are
    immutable, so shared). Iterative: `copy.deepcopy` recurses once per level and raises
    RecursionError on a value nested about a thousand deep, which `loads` reads
    (`MAX_DEPTH`)."""
    if not isinstance(value, dict | list):
        return value
    top: dict[Any, Any] | list[Any] = dict(value) if isinstance(value, dict) else list(value)
    stack = [top]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            item = node[key]
            if isinstance(item, dict | list):
                item = dict(item) if isinstance(item, dict) else list(item)
                node[key] = item
                stack.append(item)
    return top


def printable(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`), so that it can be
    printed, logged or written as UTF-8; text without one is returned as it is."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _refusal(what: str, where: tuple[str | int, ...], why: str) -> NotJsonError:
    """`<what>: <place>: <why>` (the place as a field path inside the value, printable)."""
    place = printable(field_path(where)) or "(the value itself)"
    return NotJsonError(f"{what}: {place}: {why}" if what else f"{place}: {why}")


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
    the top; () for `value` itself), or None. Iterative, as `unwritable`."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        where, node = stack.pop()
        if hit(node):
            return where
        if isinstance(node, dict):
            stack.extend(((*where, key), item) for key, item in reversed(node.items()))
        elif isinstance(node, list | tuple):
            stack.extend(((*where, index), item) for index, item in reversed(list(enumerate(node))))
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
    "MAX_WRITE_DEPTH",
    "JSONDecodeError",
    "copied",
    "dumps",
    "has_long_digit_run",
    "loads",
    "non_finite",
    "printable",
    "refuse_non_finite",
    "refuse_too_long",
    "refuse_unwritable",
    "unwritable",
    "write",
]
