"""Message <-> `messages` row: canonical JSON columns out, canonical models back in.

Writing: `content_json` and `metadata_json` are the canonical JSON of the message's
content and metadata (`exclude_none=True`, never exclude_unset/exclude_defaults, which
would drop the `type` tags), produced by pydantic's serializer in one pass each. Times
are integer microseconds since the epoch, UTC.

Reading has two paths. Every row this code writes was checked on append, so a row at the
current schema_version is read by `_trusted.build_message`, which skips only the schema's
Python rule hooks (re-running them is most of the cost of loading a long session). Any
other row, or one the fast path rejects (an unknown block type or metadata field, a type
it does not expect), goes through the full forward-compatible reader
(`metis.canonical.read_message`: migration chain, validation, WARN-and-drop of unknown
parts). The fast path never guesses: when in doubt it hands over.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from metis_schema.v1 import ContentBlock, Message
from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from ..canonical import read_message
from ..errors import MetisError, StoreError
from ._trusted import TRUSTED_VERSION, build_message

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_CONTENT = TypeAdapter(list[ContentBlock])

Row = tuple[str, str, str, str, str, int, int]
"""(id, session_id, role, content_json, metadata_json, created_at_us, schema_version)."""

Reader = Callable[[dict[str, Any]], Message]
"""Full reader of one stored document (migrates, validates, tolerates unknown parts)."""


def to_micros(moment: datetime) -> int:
    """Integer microseconds since the epoch; exact (no float on the way)."""
    return (moment - EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """Inverse of `to_micros`, as an aware UTC datetime."""
    return EPOCH + timedelta(microseconds=micros)


def iso(micros: int) -> str:
    """RFC 3339 text of a stored time, as canonical JSON writes it (`Z` suffix)."""
    return from_micros(micros).isoformat().replace("+00:00", "Z")


def encode(message: Message) -> Row:
    """The `messages` row for `message` (StoreError if it cannot be one: nothing is written)."""
    try:
        content = _CONTENT.dump_json(message.content, exclude_none=True, warnings="error").decode()
        metadata = message.metadata.model_dump_json(exclude_none=True, warnings="error")
        return (
            message.id,
            message.session_id,
            message.role.value,
            content,
            metadata,
            to_micros(message.created_at),
            message.schema_version,
        )
    except (AttributeError, TypeError, ValueError, PydanticSerializationError) as exc:
        # Only a Message built without validation (model_construct, later mutation) gets here.
        mid = getattr(message, "id", None)
        raise StoreError(
            f"not a storable message: {exc}", message_id=mid if isinstance(mid, str) else None
        ) from exc


def document(row: Row) -> dict[str, Any]:
    """The stored message as a JSON-compatible document, for the full reader."""
    mid, session_id, role, content_json, metadata_json, created_us, version = row
    return {
        "id": mid,
        "session_id": session_id,
        "role": role,
        "content": orjson.loads(content_json),
        "metadata": orjson.loads(metadata_json),
        "created_at": iso(created_us),
        "schema_version": version,
    }


def _full(row: Row, reader: Reader | None) -> Message:
    try:
        return (reader or read_message)(document(row))
    except MetisError:
        raise
    except Exception as exc:  # a corrupt column, or a custom reader's own error type
        raise StoreError(f"stored message is unreadable: {exc}", message_id=row[0]) from exc


def decode(row: Row, reader: Reader | None, *, trusted: bool = True) -> Message:
    """The canonical Message of a stored row (fast path when it applies, see module doc)."""
    return decode_all([row], reader, trusted=trusted, pause_gc=False)[0]


def decode_all(
    rows: Iterable[Row], reader: Reader | None, *, trusted: bool = True, pause_gc: bool = True
) -> list[Message]:
    """`decode` of many rows, with the cyclic garbage collector paused meanwhile.

    Loading 10,000 messages allocates some 100,000 container objects, none of them
    garbage; each allocation burst triggers collections that traverse every live object,
    which more than doubled the load time of a long session in a process already holding
    other data. Nothing cyclic is made here, so pausing loses nothing; the collector is
    re-enabled (if it was on) as soon as the list is built. The loop is written out
    rather than calling a per-row function: it runs once per stored message.
    """
    paused = pause_gc and gc.isenabled()
    if paused:
        gc.disable()
    out: list[Message] = []
    append = out.append
    try:
        for row in rows:
            if trusted and row[6] == TRUSTED_VERSION:
                try:
                    append(build_message(row[0], row[1], row[2], row[3], row[4], from_micros(row[5])))
                    continue
                except (ValueError, KeyError, TypeError, OverflowError):  # ValidationError is a ValueError
                    pass
            append(_full(row, reader))
        return out
    finally:
        if paused:
            gc.enable()


__all__ = [
    "EPOCH",
    "Reader",
    "Row",
    "decode",
    "decode_all",
    "document",
    "encode",
    "from_micros",
    "iso",
    "to_micros",
]
