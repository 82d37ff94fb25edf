"""Message <-> `messages` row: canonical JSON columns out, canonical models back in.

One persistence format, written and read by pydantic-core. Writing: `content_json` is the
content list as `CONTENT_LIST` (the TypeAdapter of `list[ContentBlock]`) serializes it and
`metadata_json` the metadata as its model serializes it, both with `exclude_none=True`
(never exclude_unset/exclude_defaults, which would drop the `type` tags) and
`warnings="error"`, so a value the schema does not describe is refused rather than
written as something else. Times are integer microseconds since the epoch, UTC.

Reading: every row goes through the one document reader (`metis.canonical.read_message`):
it migrates a row of an older schema_version, drops (with one WARN) a block type or
metadata field this metis does not know (spec §10.3), and validates the rest. The same
reader for every row, so a row metis wrote and a row another tool wrote are judged alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from metis_schema import CURRENT_VERSION
from metis_schema.v3 import Message
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from .. import _json
from .._gc import GcPaused
from .._json import has_long_digit_run, refuse_non_finite, refuse_too_long, refuse_unwritable
from ..canonical import CONTENT_LIST, Decoded, read_message
from ..errors import MetisError, NewerSchemaError, StoreError

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

Row = tuple[str, str, str, str, str, int, int]
"""(id, session_id, role, content_json, metadata_json, created_at_us, schema_version)."""

Reader = Callable[[dict[str, Any]], Message]
"""Full reader of one stored document (migrates, validates, tolerates unknown parts), given
as `document` builds it: the JSON columns parsed, `created_at` an aware UTC datetime."""


def to_micros(moment: datetime) -> int:
    """Integer microseconds since the epoch; exact (no float on the way)."""
    return (moment - EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """Inverse of `to_micros`, as an aware UTC datetime."""
    return EPOCH + timedelta(microseconds=micros)


def current(message: object) -> Message:
    """`message` as this metis stores it: a Message of the current schema as it is; a
    Message of an earlier schema version (a `metis_schema.v1.Message` built by code written
    against v1) migrated on write, through the chain a stored row of that version is read
    with (`read_message`: migrated, then validated and checked; a typed error, never a
    serializer warning, when it cannot be). Anything else is a StoreError.
    """
    if isinstance(message, Message):
        return message
    kind = type(message)
    version = getattr(message, "schema_version", None)
    if not (
        isinstance(message, BaseModel)
        and kind.__name__ == "Message"
        and kind.__module__.startswith("metis_schema.v")
        and isinstance(version, int)
    ):
        raise StoreError(
            f"not a storable message: a {kind.__module__}.{kind.__qualname__}",
            hint=f"store a metis_schema.v{CURRENT_VERSION}.Message (metis.builders makes them)",
        )
    mid = getattr(message, "id", None)
    try:
        document = message.model_dump(mode="json", exclude_none=True, warnings="error")
    except (AttributeError, TypeError, ValueError, PydanticSerializationError) as exc:
        raise StoreError(
            f"not a storable message: its schema v{version} form cannot be written: {exc}",
            message_id=mid if isinstance(mid, str) else None,
        ) from exc
    return read_message(document)


def encode(message: Message) -> Row:
    """The `messages` row for `message` (StoreError if it cannot be one: nothing is written).

    A NaN or an infinity (which validation lets into `Any` values such as a tool's input)
    is written as `null` by pydantic's JSON mode; it is looked for only when the text has
    a `null`, and refused naming where it is. An integer longer than the JSON reader reads
    back (`_json.MAX_INT_DIGITS`) is refused the same way, looked for only when the text
    has a digit run that long: stored, it made the whole session unreadable.
    """
    try:
        content = CONTENT_LIST.dump_json(message.content, exclude_none=True, warnings="error").decode()
        metadata = message.metadata.model_dump_json(exclude_none=True, warnings="error")
        if "null" in content or "null" in metadata:
            refuse_non_finite(message.model_dump(include={"content", "metadata"}))
        if "\ufffd" in content or "\ufffd" in metadata:  # maybe a key's lone surrogate, replaced
            refuse_unwritable(message.model_dump(include={"content", "metadata"}))
        if has_long_digit_run(content) or has_long_digit_run(metadata):
            refuse_too_long(message.model_dump(include={"content", "metadata"}))
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
        # A Message built without validation (model_construct, later mutation), or one
        # holding a NaN or an infinity.
        mid = getattr(message, "id", None)
        raise StoreError(
            f"not a storable message: {exc}", message_id=mid if isinstance(mid, str) else None
        ) from exc


def document(row: Row) -> dict[str, Any]:
    """The stored message as a document, for the reader: the JSON columns parsed, and
    `created_at` as the aware UTC datetime the stored microseconds are (`from_micros`).

    Not as RFC 3339 text: the models take a datetime as it is (a `date-time` field has no
    syntax to hold a datetime to), where text would be written here only to be parsed
    again; the message read is the same (that instant, to the microsecond, in UTC)."""
    mid, session_id, role, content_json, metadata_json, created_us, version = row
    return {
        "id": mid,
        "session_id": session_id,
        "role": role,
        "content": _json.loads(content_json),
        "metadata": _json.loads(metadata_json),
        "created_at": from_micros(created_us),
        "schema_version": version,
    }


def decode(row: Row, reader: Reader | None) -> Message:
    """The canonical Message of a stored row (StoreError when it cannot be read)."""
    try:
        return read_message(document(row), row=row[0]) if reader is None else reader(document(row))
    except MetisError:
        raise
    except Exception as exc:  # a corrupt column, or a custom reader's own error type
        raise StoreError(f"stored message is unreadable: {exc}", message_id=row[0]) from exc


def decode_each(rows: Iterable[Row], reader: Reader | None) -> Decoded:
    """`decode` of many rows, rows written by a newer metis set aside instead of raised.

    One row from a newer release (a partial deployment) must not hide the rest of its
    session: each such row becomes a NewerSchemaError naming it and its version. Any other
    unreadable row still raises, since that is damage, not a newer writer.
    """
    out = Decoded()
    with GcPaused(True):
        for row in rows:
            try:
                out.messages.append(decode(row, reader))
            except NewerSchemaError as exc:
                out.newer.append(exc)
    return out


def decode_all(rows: Iterable[Row], reader: Reader | None) -> list[Message]:
    """`decode` of many rows, with the cyclic garbage collector paused meanwhile.

    Loading 10,000 messages allocates some 100,000 container objects, none of them
    garbage; each allocation burst triggers collections that traverse every live object,
    which more than doubled the load time of a long session in a process already holding
    other data. Nothing cyclic is made here, so pausing loses nothing; the collector is
    re-enabled (if it was on) as soon as the list is built.
    """
    with GcPaused(True):
        return [decode(row, reader) for row in rows]


__all__ = [
    "EPOCH",
    "Reader",
    "Row",
    "current",
    "decode",
    "decode_all",
    "document",
    "encode",
    "from_micros",
    "to_micros",
]
