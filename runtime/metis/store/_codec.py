"""Message <-> `messages` row: canonical JSON columns out, canonical models back in.

Writing: `content_json` and `metadata_json` are the canonical JSON of the message's
content and metadata (`exclude_none=True`, never exclude_unset/exclude_defaults, which
would drop the `type` tags), as pydantic's serializer writes them. Times are integer
microseconds since the epoch, UTC. A message whose every part has exactly its schema's
type (any message that came out of validation untouched) is written by `encode_fast`,
byte for byte what pydantic writes, at a fraction of the cost; anything else goes
through pydantic itself, which also refuses what cannot be stored. `encode_fast` also
hands back the JSON values it wrote, for the batch screen (`_batch`) to check the
message on instead of walking the models again.

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
from decimal import Decimal
from typing import Any

import orjson
from metis_schema.v1 import (
    ImageBlock,
    ImageSource,
    ImageSourceKind,
    Message,
    MessageMetadata,
    MessageStatus,
    RedactedThinkingBlock,
    Role,
    RoutingDecisionRecord,
    RoutingMode,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from .. import _json
from .._json import non_finite, refuse_non_finite
from ..canonical import CONTENT_LIST, read_message
from ..errors import MetisError, StoreError
from ..invariants import ALLOWED_BLOCKS, BLOCK_CLASSES
from ._trusted import TRUSTED_VERSION, build_message

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ZERO = timedelta(0)

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


# --- the fast writer ------------------------------------------------------------------------------
#
# Why: pydantic's `to_json` of a message's content and metadata cost about twice the
# SQLite insert of the row (and `warnings="error"` alone, parsed on every call, a third
# of that). `encode_fast` builds the same JSON values from the models' fields and lets
# orjson write them. It is byte-identical to pydantic's output by construction: fields in
# declaration order, None-valued fields left out (`exclude_none`, which does not reach
# into dict values), enums as their values, decimals fixed-point (SchemaModel's rule);
# orjson and pydantic-core write strings, integers and floats alike (tests hold them to
# it). It only ever takes exact types: any other value — a subclass, a type out of
# place, a dict key that is not a string, a value orjson would write differently
# (datetime, dataclass, subclasses: passed through to no `default`, so they raise) —
# makes it give up, and `encode` uses pydantic with `warnings="error"` (`encode_slow`).
# A block's `type` tag must be that very string, exactly a str: so the values it builds
# (which `encode_fast` hands on) say, for each block, the class it came from.


class _Unusual(Exception):
    """A value `encode_fast` does not write itself; pydantic will."""


_ORJSON_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_EXPECTED_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {
    TextBlock: ("type", "text"),
    ToolUseBlock: ("type", "id", "name", "input"),
    ToolResultBlock: ("type", "tool_use_id", "content", "is_error"),
    ImageBlock: ("type", "source", "media_type"),
    ImageSource: ("kind", "data"),
    ThinkingBlock: ("type", "text", "signature"),
    RedactedThinkingBlock: ("type", "data"),
    RoutingDecisionRecord: (
        "mode",
        "chosen_model",
        "reason",
        "rule_name",
        "confidence",
        "alternatives_considered",
    ),
    Usage: (
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_creation_input_tokens",
        "cost_usd",
        "pricing_version",
        "latency_ms",
    ),
    MessageMetadata: (
        "model",
        "provider",
        "routing",
        "usage",
        "parent_tool_use_id",
        "status",
        "stop_reason",
        "critical_blocks",
        "provider_raw",
        "user_id",
        "team_id",
    ),
}
for _cls, _names in _EXPECTED_FIELDS.items():
    if tuple(_cls.model_fields) != _names:
        raise RuntimeError(f"metis.store._codec: {_cls.__name__}'s fields changed; update encode_fast")


_VALUE: dict[Any, str] = {
    member: member.value
    for enum in (ImageSourceKind, MessageStatus, RoutingMode, StopReason)
    for member in enum
}
"""Enum member -> its value, a dict lookup (the `.value` property costs several times more)."""


def _fixed(value: Decimal) -> str:
    """`format(value, "f")`, as SchemaModel writes decimals, at a quarter of its cost.

    `str` writes a Decimal in plain notation (then the very text `"f"` writes: the same
    digits, the point in the same place) unless its exponent calls for scientific
    notation, which has an `E`; only then is `format` needed.
    """
    text = str(value)
    return format(value, "f") if "E" in text else text


def _text(block: Any) -> dict[str, Any]:
    if type(block) is not TextBlock:
        raise _Unusual
    d = block.__dict__
    text = d["text"]
    if type(d["type"]) is not str or d["type"] != "text" or type(text) is not str:
        raise _Unusual
    return {"type": "text", "text": text}


def _image(block: Any) -> dict[str, Any]:
    if type(block) is not ImageBlock:
        raise _Unusual
    d = block.__dict__
    source = d["source"]
    if type(source) is not ImageSource:
        raise _Unusual
    kind, data, media_type = source.__dict__["kind"], source.__dict__["data"], d["media_type"]
    if (
        type(d["type"]) is not str
        or d["type"] != "image"
        or type(kind) is not ImageSourceKind
        or type(data) is not str
    ):
        raise _Unusual
    if type(media_type) is not str:
        raise _Unusual
    return {"type": "image", "source": {"kind": _VALUE[kind], "data": data}, "media_type": media_type}


def _block(block: Any) -> dict[str, Any]:
    """A block other than text (`_content` writes those itself)."""
    kind = type(block)
    d = block.__dict__
    if kind is ToolUseBlock:
        tool_id, name, tool_input = d["id"], d["name"], d["input"]
        if (
            type(d["type"]) is not str
            or d["type"] != "tool_use"
            or type(tool_id) is not str
            or type(name) is not str
        ):
            raise _Unusual
        if type(tool_input) is not dict:
            raise _Unusual
        return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
    if kind is ToolResultBlock:
        tool_id, inner, is_error = d["tool_use_id"], d["content"], d["is_error"]
        if (
            type(d["type"]) is not str
            or d["type"] != "tool_result"
            or type(tool_id) is not str
            or type(inner) is not list
        ):
            raise _Unusual
        if type(is_error) is not bool:
            raise _Unusual
        parts = [_text(part) if type(part) is TextBlock else _image(part) for part in inner]
        return {"type": "tool_result", "tool_use_id": tool_id, "content": parts, "is_error": is_error}
    if kind is ThinkingBlock:
        text, signature = d["text"], d["signature"]
        if type(d["type"]) is not str or d["type"] != "thinking" or type(text) is not str:
            raise _Unusual
        if signature is None:
            return {"type": "thinking", "text": text}
        if type(signature) is not str:
            raise _Unusual
        return {"type": "thinking", "text": text, "signature": signature}
    if kind is RedactedThinkingBlock:
        data = d["data"]
        if type(d["type"]) is not str or d["type"] != "redacted_thinking" or type(data) is not str:
            raise _Unusual
        return {"type": "redacted_thinking", "data": data}
    return _image(block)


def _routing(record: Any) -> dict[str, Any]:
    if type(record) is not RoutingDecisionRecord:
        raise _Unusual
    d = record.__dict__
    mode, chosen, reason = d["mode"], d["chosen_model"], d["reason"]
    rule, confidence, alternatives = d["rule_name"], d["confidence"], d["alternatives_considered"]
    if type(mode) is not RoutingMode or type(chosen) is not str or type(reason) is not str:
        raise _Unusual
    if type(alternatives) is not list:
        raise _Unusual
    for name in alternatives:
        if type(name) is not str:
            raise _Unusual
    if rule is None and confidence is None:  # the usual record
        return {
            "mode": _VALUE[mode],
            "chosen_model": chosen,
            "reason": reason,
            "alternatives_considered": alternatives,
        }
    out: dict[str, Any] = {"mode": _VALUE[mode], "chosen_model": chosen, "reason": reason}
    if rule is not None:
        if type(rule) is not str:
            raise _Unusual
        out["rule_name"] = rule
    if confidence is not None:
        if type(confidence) is not float:
            raise _Unusual
        out["confidence"] = confidence
    out["alternatives_considered"] = alternatives
    return out


def _usage(usage: Any) -> dict[str, Any]:
    if type(usage) is not Usage:
        raise _Unusual
    d = usage.__dict__
    n_in, n_out, cached, written = (
        d["input_tokens"],
        d["output_tokens"],
        d["cached_input_tokens"],
        d["cache_creation_input_tokens"],
    )
    cost, version, latency = d["cost_usd"], d["pricing_version"], d["latency_ms"]
    if not (
        type(n_in) is int
        and type(n_out) is int
        and type(cached) is int
        and type(written) is int
        and type(latency) is int
        and type(cost) is Decimal
        and type(version) is str
    ):
        raise _Unusual
    # The fields in declaration order (a model's __dict__ always holds them so), the
    # decimal written fixed-point as SchemaModel writes it.
    out: dict[str, Any] = d.copy()
    out["cost_usd"] = _fixed(cost)
    return out


def _metadata(metadata: Any) -> dict[str, Any]:
    """The metadata's JSON value; each field read where it is written (most are None)."""
    if type(metadata) is not MessageMetadata:
        raise _Unusual
    d = metadata.__dict__
    status = d["status"]
    if type(status) is not MessageStatus:
        raise _Unusual
    out: dict[str, Any] = {}
    model = d["model"]
    if model is not None:
        if type(model) is not str:
            raise _Unusual
        out["model"] = model
    provider = d["provider"]
    if provider is not None:
        if type(provider) is not str:
            raise _Unusual
        out["provider"] = provider
    routing = d["routing"]
    if routing is not None:
        out["routing"] = _routing(routing)
    usage = d["usage"]
    if usage is not None:
        out["usage"] = _usage(usage)
    parent = d["parent_tool_use_id"]
    if parent is not None:
        if type(parent) is not str:
            raise _Unusual
        out["parent_tool_use_id"] = parent
    out["status"] = _VALUE[status]
    stop = d["stop_reason"]
    if stop is not None:
        if type(stop) is not StopReason:
            raise _Unusual
        out["stop_reason"] = _VALUE[stop]
    critical = d["critical_blocks"]
    if critical is not None:
        if type(critical) is not list:
            raise _Unusual
        for index in critical:
            if type(index) is not int:
                raise _Unusual
        out["critical_blocks"] = critical
    raw = d["provider_raw"]
    if raw is not None:
        if type(raw) is not dict:
            raise _Unusual
        out["provider_raw"] = raw
    user_id = d["user_id"]
    if user_id is not None:
        if type(user_id) is not str:
            raise _Unusual
        out["user_id"] = user_id
    team_id = d["team_id"]
    if team_id is not None:
        if type(team_id) is not str:
            raise _Unusual
        out["team_id"] = team_id
    return out


def _content(content: list[Any], allowed: frozenset[type]) -> list[dict[str, Any]]:
    """The blocks' JSON values; each block's class must be one its role may carry (§5.1.3,
    `allowed`): a message that breaks that rule is pydantic's to write and the append's to
    refuse. Text blocks (most of them) are written here, `_text` inline: a call per block
    is a tenth of encoding a message, on the store's hottest path."""
    out = []
    for block in content:
        kind = type(block)
        if kind not in allowed:
            raise _Unusual
        if kind is TextBlock:
            d = block.__dict__
            text = d["text"]
            if type(d["type"]) is not str or d["type"] != "text" or type(text) is not str:
                raise _Unusual
            out.append({"type": "text", "text": text})
        else:
            out.append(_block(block))
    return out


_dumps = orjson.dumps
_ROLE_VALUE: dict[Any, str] = {member: member.value for member in Role}
_ROLE_CLASSES: dict[Any, frozenset[type]] = {
    role: frozenset(cls for cls in BLOCK_CLASSES if cls.model_fields["type"].default in kinds)
    for role, kinds in ALLOWED_BLOCKS.items()
}
"""§5.1.3's table by block class: what `_content` takes for each role."""

Values = tuple[list[dict[str, Any]], dict[str, Any]]
"""The JSON values of a message's content and metadata, as `encode_fast` writes them."""


def encode_fast(message: Any) -> tuple[Row, Values] | None:
    """`encode(message)`, with the values its JSON columns were written from, when the fast
    writer takes the whole message (an exact Message whose every part is usual, whose blocks
    are all of kinds its role may carry, created at a UTC time); else None.

    Those values mirror the message exactly: each block is the dict of a block of that
    very class with its own tag, every field of its exact type. So a caller may check
    the message on them (`_batch`) rather than walk the models again, and need not ask
    again which blocks its role allows. The fields are read from `__dict__`: a pydantic
    model's attribute reads go through its `__getattr__` hook, twice the cost, and this
    runs once per stored message.
    """
    if type(message) is not Message:
        return None
    d = message.__dict__
    try:
        content, role = d["content"], d["role"]
        if type(content) is not list or type(role) is not Role:
            return None
        when = d["created_at"]
        if when.tzinfo is not UTC and when.utcoffset() != _ZERO:
            return None  # `encode_slow` writes it; an append refuses it (§4.1)
        blocks, meta = _content(content, _ROLE_CLASSES[role]), _metadata(d["metadata"])
        content_json, metadata_json = (
            _dumps(blocks, option=_ORJSON_OPTIONS),
            _dumps(meta, option=_ORJSON_OPTIONS),
        )
        if (b"null" in content_json and non_finite(blocks) is not None) or (
            b"null" in metadata_json and non_finite(meta) is not None
        ):
            return None  # a NaN or an infinity, which orjson writes as null: `encode_slow` refuses it
        row = (
            d["id"],
            d["session_id"],
            _ROLE_VALUE[role],
            content_json.decode(),
            metadata_json.decode(),
            (when - EPOCH) // _MICROSECOND,  # `to_micros`, inline
            d["schema_version"],
        )
    except (_Unusual, KeyError, AttributeError, TypeError, ValueError, OverflowError):
        return None  # `encode` decides: pydantic writes it, or it is refused
    return row, (blocks, meta)


def encode(message: Message) -> Row:
    """The `messages` row for `message` (StoreError if it cannot be one: nothing is written)."""
    fast = encode_fast(message)
    return fast[0] if fast is not None else encode_slow(message)


def encode_slow(message: Message) -> Row:
    """`encode` for what `encode_fast` hands over: pydantic writes it, or refuses it."""
    try:
        content = CONTENT_LIST.dump_json(message.content, exclude_none=True, warnings="error").decode()
        metadata = message.metadata.model_dump_json(exclude_none=True, warnings="error")
        if "null" in content or "null" in metadata:  # pydantic too writes NaN as null
            refuse_non_finite(message.model_dump(include={"content", "metadata"}))
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
        # holding a NaN or an infinity (which validation lets into `Any` values).
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
        "content": _json.loads(content_json),
        "metadata": _json.loads(metadata_json),
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
    out: list[Message] = []
    append = out.append
    with GcPaused(pause_gc):
        for row in rows:
            if trusted and row[6] == TRUSTED_VERSION:
                try:
                    append(build_message(row[0], row[1], row[2], row[3], row[4], from_micros(row[5])))
                    continue
                except (ValueError, KeyError, TypeError, OverflowError):  # ValidationError is a ValueError
                    pass
            append(_full(row, reader))
    return out


class GcPaused:
    """Context manager: the cyclic collector off inside (when `pause` and it was on)."""

    __slots__ = ("_paused",)

    def __init__(self, pause: bool) -> None:
        self._paused = pause and gc.isenabled()

    def __enter__(self) -> None:
        if self._paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            gc.enable()


__all__ = [
    "EPOCH",
    "GcPaused",
    "Reader",
    "Row",
    "decode",
    "decode_all",
    "document",
    "encode",
    "encode_fast",
    "encode_slow",
    "from_micros",
    "iso",
    "to_micros",
]
