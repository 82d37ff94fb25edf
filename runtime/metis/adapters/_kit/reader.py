"""Reading provider JSON through declared wire shapes: one helper for every adapter.

Each adapter declares its provider's wire objects once (TypedDicts or pydantic models in
its `wire.py`, as loose as the provider itself: unknown keys allowed, optional fields
optional) and reads every body, stream event and error envelope through `read`. pydantic-core
does the type checks; this module only turns its error location into metis's field path
(`choices[0].message.tool_calls[1].function.name`) and a `WireFormatError` naming the
provider, so no adapter writes an isinstance ladder of its own.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import cache
from typing import Any, TypeVar, cast

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from ... import _json
from ...errors import WireFormatError
from ...validation import field_path

_T = TypeVar("_T")

_MOST_PROBLEMS = 5


@cache
def shape(kind: Any) -> TypeAdapter[Any]:
    """The TypeAdapter of a declared wire type, built once per type."""
    return TypeAdapter(kind)


def _where(base: str, loc: tuple[str | int, ...], value: Any) -> str:
    # pydantic adds union branches (a tag, a class name) to the location; they are not keys
    # of the body. Following the input itself keeps only the parts a reader finds in the JSON.
    parts: list[str | int] = []
    for part in loc:
        if isinstance(value, Mapping):
            if part not in value:
                continue  # a union branch, or a required key that is missing: kept below
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int):
            value = value[part] if 0 <= part < len(value) else None
        elif isinstance(value, list):
            continue
        else:
            break  # a scalar has no keys: what pydantic adds after it names union branches
        parts.append(part)
    missing = loc[-1] if loc and isinstance(value, Mapping) and loc[-1] not in value else None
    if isinstance(missing, str) and (not parts or parts[-1] != missing):
        parts.append(missing)
    inner = field_path(parts)
    if not base:
        return inner
    if not inner:
        return base
    return f"{base}{inner}" if inner.startswith("[") else f"{base}.{inner}"


def located(exc: ValidationError, value: Any, *, path: str = "") -> list[tuple[str, ErrorDetails]]:
    """Each of pydantic's errors on the wire object `value`, with its field path in `value`."""
    errors = exc.errors(include_url=False, include_input=False)
    return [(_where(path, tuple(e["loc"]), value), e) for e in errors]


def wire_error(
    exc: ValidationError, value: Any, *, provider: str, path: str = "", what: str = "body"
) -> WireFormatError:
    """pydantic's errors on the wire object `value` as one WireFormatError at the first failing path."""
    errors = located(exc, value, path=path)
    first = errors[0][0] if errors else path
    listing = "; ".join(f"{where or '(root)'}: {e['msg']}" for where, e in errors[:_MOST_PROBLEMS])
    more = f" (+{len(errors) - _MOST_PROBLEMS} more)" if len(errors) > _MOST_PROBLEMS else ""
    return WireFormatError(f"malformed {provider} {what}: {listing}{more}", provider=provider, path=first)


def read(kind: type[_T], value: Any, *, provider: str, path: str = "", what: str = "body") -> _T:
    """`value` checked against the declared wire type `kind`, or a WireFormatError at its path.

    A value handed in as Python objects (a caller's body, not text `read_json` parsed) may
    hold what no JSON text can: a lone surrogate, a NaN, an integer past 4,300 digits,
    nesting past what `loads` reads. It is refused here, where it enters, at its path
    (`metis._json.unwritable`): let in, it failed later as an untyped error wherever the
    reply was hashed, measured or stored."""
    found = _json.unwritable(value, _json.MAX_DEPTH)  # deeper bounds of their own (provider_raw) stay theirs
    if found is not None:
        where, why = found
        at = _json.printable(_where(path, where, value))
        raise WireFormatError(
            f"malformed {provider} {what}: {at or '(root)'} holds {why}", provider=provider, path=at
        )
    return checked(kind, value, provider=provider, path=path, what=what)


def checked(kind: type[_T], value: Any, *, provider: str, path: str = "", what: str = "body") -> _T:
    """`value` checked against `kind` only: for a part of a value `read` or `read_json` has
    already taken in (JSON-safe), read again through a shape of its own (a Chat reply's
    `usage`, declared a plain object, through its dialect's usage shape)."""
    try:
        valid: _T = shape(cast(Hashable, kind)).validate_python(value)
        return valid
    except ValidationError as exc:
        raise wire_error(exc, value, provider=provider, path=path, what=what) from None
    except RecursionError:
        raise WireFormatError(
            f"{provider} {what} is nested too deeply to read", provider=provider, path=path
        ) from None


def read_json(kind: type[_T], text: bytes | str, *, provider: str, path: str = "", what: str = "body") -> _T:
    """JSON text parsed (exactly: `metis._json`) and checked against `kind`."""
    try:
        value = _json.loads(text)
    except _json.JSONDecodeError as exc:
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise WireFormatError(
            f"{provider} {what} is not JSON: {exc}",
            provider=provider,
            path=path,
            raw=_json.printable(raw[:2000]),
        ) from None
    return checked(kind, value, provider=provider, path=path, what=what)  # parsed text holds only JSON


__all__ = ["checked", "located", "read", "read_json", "shape", "wire_error"]
