"""Canonical JSON, hashing, equality, and tolerant reading of stored messages.

Hashing (spec §2.1.5, docs/architecture.md "Hashing"): SHA-256 over one canonical encoding of a
message, so a hash names the same message in every process, on every Python version and
in every language that follows the same rules: the message's canonical JSON form
(`model_dump(mode="json", exclude_none=True)`: decimals as their fixed-point strings,
times as RFC 3339) without `metadata.provider_raw`, written with sorted keys, no
insignificant whitespace, UTF-8 (non-ASCII text is not escaped). `provider_raw` is left
out of hashing and equality because it is opaque (spec §5.3.5, §6.5): two messages that
say the same thing are equal whichever adapter wrote them. The serializer is told to
exclude it, so core code never reads it even to hash it.

`schema_version` is hashed as 1, whatever the message's version (`HASHED_SCHEMA_VERSION`).
Schema versions are additive (spec §4.1.3): a message migrated from v1 to v2 says exactly
what it said, and must keep the hash it was stored, cached or deduplicated under. Content
only a newer version can hold already hashes differently through its own fields, so the
version number adds nothing to a hash but churn; and writing it as 1 (rather than leaving
it out) keeps every hash computed before v2 existed valid.

Reading (spec §10.3): a reader may meet documents written by newer code during a partial
deployment. `read_message` migrates older schema versions forward, drops content block
types and metadata fields it does not know, logs ONE warning per document naming all of
them, and only raises (DocumentError, listing every problem with its path) when the
document is invalid for reasons other than those additions. A document whose
`schema_version` is newer than this metis reads raises NewerSchemaError, for that
document alone: `read_each` decodes many documents (a session's rows) and sets such
documents aside, so one row from a newer metis never hides the rest.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson
from metis_base import DOCUMENT
from metis_schema import CURRENT_VERSION
from metis_schema.v3 import (
    ContentBlock,
    Message,
    MessageMetadata,
)
from pydantic import TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError

from . import _json
from .errors import DocumentError, FieldProblem, NewerSchemaError
from .invariants import BLOCK_CLASSES, check_message
from .validation import explain

log = logging.getLogger("metis.compat")

KNOWN_BLOCK_TYPES: frozenset[str] = frozenset(str(cls.model_fields["type"].default) for cls in BLOCK_CLASSES)
"""Content block `type` tags this version of metis understands."""
CONTENT_LIST: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])
"""A message's content list, validated or serialized on its own (pydantic's adapter, built once)."""
MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
"""The one reader of message documents (`read_message`), called with the validation context
`metis_base.DOCUMENT` (a document carries every field the schema requires)."""

_METADATA_FIELDS: frozenset[str] = frozenset(MessageMetadata.model_fields)
_EXCLUDE_RAW = {"metadata": {"provider_raw"}}

HASHED_SCHEMA_VERSION = 1
"""The `schema_version` written into the bytes that are hashed, for every message (module doc)."""


def _default(value: Any) -> Any:
    # Only reached for values pydantic left as Python objects (e.g. a Decimal inside a
    # tool input of a model_construct'ed message): write them as the schema would.
    if isinstance(value, Decimal):
        return format(value, "f")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# --- canonical form, hashing, equality ------------------------------------------------------


def dump_message(message: Message) -> dict[str, Any]:
    """The canonical JSON form of `message` (what is stored), provider_raw included."""
    return _json_mode(message, None)


def _json_mode(message: Message, exclude: Any) -> dict[str, Any]:
    """`message.model_dump(mode="json", exclude_none=True, exclude=exclude)`. pydantic's JSON
    mode refuses some text holding a lone surrogate (PydanticSerializationError, a bare
    ValueError): that is a value JSON cannot carry, refused as NotJsonError naming the
    message and the place, like the ones `_sorted_json` finds."""
    try:
        return message.model_dump(mode="json", exclude_none=True, exclude=exclude)
    except PydanticSerializationError:
        _json.refuse_unwritable(message.model_dump(exclude=exclude), f"message {message.id}")
        raise


def message_to_json(message: Message) -> bytes:
    """`dump_message` as compact UTF-8 JSON with sorted keys (deterministic bytes)."""
    return _sorted_json(message, dump_message(message), None)


def canonical_json(message: Message) -> bytes:
    """The bytes that are hashed: canonical JSON without provider_raw (see module doc)."""
    data = _json_mode(message, _EXCLUDE_RAW)
    data["schema_version"] = HASHED_SCHEMA_VERSION
    return _sorted_json(message, data, _EXCLUDE_RAW)


def _sorted_json(message: Message, data: dict[str, Any], exclude: Any) -> bytes:
    """`data`, the JSON-mode dump of `message`, as sorted-key JSON. A value JSON cannot
    carry (a NaN or an infinity, which JSON mode has already made None; a lone surrogate,
    which it replaces in a key; an integer past 4,300 digits) is refused: NotJsonError
    naming the message and the place.
    A Message is built by the caller's own code, so this is where its values first meet
    metis's JSON; the model lets them in, the hash cannot be taken over them."""
    what = f"message {message.id}"
    text = _json.write(data, default=_default, option=orjson.OPT_SORT_KEYS, what=what)
    if b"null" in text or _REPLACEMENT in text:
        # a `null` may be a NaN JSON mode turned into None; a U+FFFD may be a key with a
        # lone surrogate JSON mode replaced without a word (two messages would hash alike):
        # look at the values themselves (rare: JSON's own nulls, a real U+FFFD)
        _json.refuse_unwritable(message.model_dump(exclude=exclude), what)
    return text


_REPLACEMENT = "\ufffd".encode()
"""U+FFFD in UTF-8: what pydantic's JSON mode writes for each byte of a lone surrogate in a key."""


def message_hash(message: Message) -> str:
    """SHA-256 hex digest of `canonical_json(message)`."""
    return hashlib.sha256(canonical_json(message)).hexdigest()


def messages_equal(a: Message, b: Message) -> bool:
    """Equality of meaning: same canonical JSON, provider_raw ignored (spec §6.5)."""
    return canonical_json(a) == canonical_json(b)


def conversation_hash(messages: Iterable[Message]) -> str:
    """SHA-256 hex digest over the message hashes in order, one per line.

    Order-sensitive (spec §5.1.4), and computable from stored per-message hashes without
    re-reading the messages. The empty conversation hashes the empty string.
    """
    digest = hashlib.sha256()
    for i, message in enumerate(messages):
        digest.update((b"\n" if i else b"") + message_hash(message).encode("ascii"))
    return digest.hexdigest()


# --- reading stored documents ---------------------------------------------------------------


def read_message(doc: Mapping[str, Any] | str | bytes, *, row: str | None = None) -> Message:
    """A stored document (dict or JSON text) -> Message, tolerating newer additions (§10.3).

    Steps: parse JSON; migrate an older `schema_version` through
    `metis.migrations.migrate_document` (a newer one is refused there: no downgrades);
    validate the fields (`MESSAGE`, once); only when that fails, drop unknown block types
    (also inside tool_result content) and unknown metadata fields, remapping
    `metadata.critical_blocks` to the surviving indices, log one WARN on logger
    `metis.compat` with `extra={"message_id", "skipped"}` naming what was dropped, and
    validate what is left; then the §5 rules (`metis.invariants`, the one executable copy
    of them). A message left with no content after the drop is invalid like any other
    empty message, and is reported as such.

    `row` names where the document is stored (a store's row key) in the NewerSchemaError
    raised when the document's schema_version is newer than CURRENT_VERSION.

    A document given as a mapping is not walked for what JSON text cannot hold (a lone
    surrogate, a NaN): the walk would cost half a read, and the store, which reads every
    row through here, hands over only what `metis._json.loads` parsed. A message holding
    one is refused, with its place, wherever it would be written: hashing, the store, a
    request (NotJsonError / StoreError). Only what breaks reading itself is refused here:
    a schema_version past 4,300 digits, nesting pydantic cannot report on.
    """
    data = doc if type(doc) is dict else _parse(doc)  # a dict, as the store hands over, as it is
    version = data.get("schema_version")
    if not (type(version) is int and version == CURRENT_VERSION):  # every row this metis wrote is
        data = _migrated(data, version, row)
    found = data.get("id")
    message_id = found if isinstance(found, str) else None
    content = data.get("content")
    if isinstance(content, list):
        _refuse_long_tags_in(content, "content")
    try:
        message = _validated(data, message_id)
    except DocumentError:
        # §10.3: what this metis does not know (a newer writer's block type or metadata
        # field) is all that can make a document it would otherwise read fail validation
        # (an unknown tag, an extra field: the models forbid both). So the walk that drops
        # them runs only for a document that failed: the one that validated held nothing
        # to drop, and a stored row is built once, not walked first.
        data, skipped = _drop_unknown(data)
        if not skipped:
            raise
        log.warning(
            "message %s: skipped what this metis does not know (written by newer code?): %s",
            message_id or "(no id)",
            ", ".join(skipped),
            extra={"message_id": message_id, "skipped": skipped},
        )
        message = _validated(data, message_id)
    violations = check_message(message)
    if violations:
        problems = [FieldProblem(v.path, v.problem, v.rule) for v in violations]
        raise DocumentError(f"message {message_id or '(no id)'}", problems, message_id=message_id)
    return message


def _migrated(data: dict[str, Any], version: Any, row: str | None) -> dict[str, Any]:
    """`data`, a document declaring another `version` than CURRENT_VERSION (or none, or not
    a number), as read at the current one: an older one migrated, a newer one refused
    (NewerSchemaError naming `row`), anything else left to validation to refuse."""
    if type(version) is int and _json.unwritable(version) is not None:  # no text holds one; its repr raises
        problem = FieldProblem("schema_version", f"an integer of more than {_json.MAX_INT_DIGITS:,} digits")
        raise DocumentError("message", [problem])
    if isinstance(version, int) and not isinstance(version, bool) and version > CURRENT_VERSION:
        message_id = data.get("id") if isinstance(data.get("id"), str) else None
        raise NewerSchemaError.of(row=row, version=version, supported=CURRENT_VERSION, message_id=message_id)
    if isinstance(version, int) and not isinstance(version, bool) and version != CURRENT_VERSION:
        from .migrations import migrate_document  # lazy: migrations import the models too

        return migrate_document(data)
    return data


def _validated(data: dict[str, Any], message_id: str | None) -> Message:
    """`data` as a Message, read as a document (`MESSAGE`, context `DOCUMENT`), or the
    DocumentError listing every problem with its path."""
    try:
        # the adapter's own validator (its public `validator`): `TypeAdapter.validate_python`
        # adds a Python frame and keyword handling to every row read
        message: Message = MESSAGE.validator.validate_python(data, context=DOCUMENT)
        return message
    except ValidationError as exc:
        problems = explain(_json_times(data), "Message", exc)
        raise DocumentError(f"message {message_id or '(no id)'}", problems, message_id=message_id) from None
    except RecursionError:
        # pydantic reprs the input of a failing field: a value nested near Python's recursion
        # limit (JSON text may nest 1,024 deep) fails there, not as a ValidationError
        problem = FieldProblem("", "nested too deeply to validate")
        raise DocumentError(f"message {message_id or '(no id)'}", [problem], message_id=message_id) from None


def _json_times(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with an aware datetime `created_at` (the store hands its column over as one:
    `metis.store._codec.document`) as the RFC 3339 text a JSON document holds, for the
    schema's report on a document that failed: the schema judges JSON, where a datetime
    the model takes as it is would be reported as "not of type 'string'"."""
    moment = data.get("created_at")
    if isinstance(moment, datetime) and moment.utcoffset() is not None:
        return {**data, "created_at": moment.isoformat()}
    return data


@dataclass
class Decoded:
    """What `read_each` made of many documents: the messages, and those written by newer code."""

    messages: list[Message] = field(default_factory=list)
    newer: list[NewerSchemaError] = field(default_factory=list)
    """One error per document this metis cannot read (its row and version), in input order."""


def read_each(docs: Iterable[tuple[str | None, Mapping[str, Any] | str | bytes]]) -> Decoded:
    """`read_message` of each (row, document): the messages in order, newer documents set aside.

    Only NewerSchemaError is set aside: any other bad document still raises, since it is
    not a partial deployment but damage, and skipping it would hide it.
    """
    out = Decoded()
    for row, doc in docs:
        try:
            out.messages.append(read_message(doc, row=row))
        except NewerSchemaError as exc:
            out.newer.append(exc)
    return out


def _parse(doc: Mapping[str, Any] | str | bytes) -> dict[str, Any]:
    """`doc` as a dict: parsed when it is text, copied when it is another Mapping (a dict
    is read as it is: nothing in `read_message` writes into it, a migration copies what it
    changes, `_drop_unknown` copies what it drops)."""
    if isinstance(doc, str | bytes):
        try:
            doc = _json.loads(doc)
        except _json.JSONDecodeError as exc:
            raise DocumentError("message", [FieldProblem("", f"not JSON: {exc}")]) from None
    if not isinstance(doc, Mapping):
        raise DocumentError(
            "message", [FieldProblem("", f"expected a JSON object, got {type(doc).__name__}")]
        )
    return dict(doc)


def _drop_unknown(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of `data` without unknown blocks and metadata fields, and what was dropped.

    Never mutates `data`: only the containers that change are copied (a document holding
    nothing unknown, as every row this metis wrote, is looked at and handed on as it is).
    """
    skipped: list[str] = []
    out = dict(data)
    metadata = data.get("metadata")
    critical = metadata.get("critical_blocks") if isinstance(metadata, Mapping) else None
    if not (isinstance(critical, list) and all(type(i) is int for i in critical)):
        critical = None  # not a list of indexes (an object in it was a TypeError here): validation says so
    critical_set = set(critical) if critical is not None else set()
    content = data.get("content")
    new_index: dict[int, int] | None = None
    if isinstance(content, list):
        out["content"], new_index = _drop_blocks(content, "content", skipped, critical_set)
    if isinstance(metadata, Mapping):
        meta: Mapping[str, Any]
        if metadata.keys() <= _METADATA_FIELDS:
            meta = metadata
        else:
            meta = {k: v for k, v in metadata.items() if k in _METADATA_FIELDS}
            skipped.extend(
                f"metadata.{_json.printable(str(k))}" for k in metadata if k not in _METADATA_FIELDS
            )
        if critical is not None and new_index is not None and len(new_index) != len(data["content"]):
            meta = {**meta, "critical_blocks": [new_index[i] for i in critical if i in new_index]}
        out["metadata"] = meta
    return out, skipped


def _refuse_long_tags_in(blocks: list[Any], path: str) -> None:
    """Refuse a union tag (a block's `type`, a citation's) that is an integer past 4,300
    digits, naming its place, in `blocks` and in the tool_results' content in them, before
    anything validates them. pydantic turns a tag into text to look it up, and for such an
    integer that raises inside pydantic (printed on stderr as an unraisable error, or
    failing a test run) before the document is refused; no JSON text holds one.

    One look at each block: its tag is text and it has no citations (the usual block)
    or it is looked at closer (`_refuse_long_tags`)."""
    for i, block in enumerate(blocks):
        if type(block) is dict or isinstance(block, Mapping):
            tag = block.get("type")
            if type(tag) is not str or "citations" in block:
                _refuse_long_tags(block, path, i)
            if tag == "tool_result" and isinstance(block.get("content"), list):
                _refuse_long_tags_in(block["content"], f"{path}[{i}].content")


def _refuse_long_tags(block: Mapping[str, Any], path: str, index: int) -> None:
    """`_refuse_long_tags_in` of one block whose tag is not text, or that has citations."""
    tag, citations = block.get("type"), block.get("citations")
    where = f"{path}[{index}]"
    tags = [(f"{where}.type", tag)]
    if isinstance(citations, list):
        tags += [
            (f"{where}.citations[{j}].type", c.get("type"))
            for j, c in enumerate(citations)
            if isinstance(c, Mapping)
        ]
    for at, value in tags:
        if type(value) is int and _json.unwritable(value) is not None:
            problem = FieldProblem(at, f"an integer of more than {_json.MAX_INT_DIGITS:,} digits")
            raise DocumentError("message", [problem])


def _drop_blocks(
    blocks: list[Any], path: str, skipped: list[str], critical: set[Any]
) -> tuple[list[Any], dict[int, int] | None]:
    """`blocks` without unknown block types (inside tool_result content too), and where
    each kept block went (None when every block was kept: `blocks` itself is returned)."""
    kept: list[Any] = []
    new_index: dict[int, int] = {}
    changed = False
    for i, block in enumerate(blocks):
        mapping = type(block) is dict or isinstance(block, Mapping)
        kind = block.get("type") if mapping else None
        if isinstance(kind, str) and kind not in KNOWN_BLOCK_TYPES:
            mark = ", marked critical" if i in critical else ""
            skipped.append(f"{path}[{i}] ({_json.printable(kind)} block{mark})")
            changed = True
            continue
        if kind == "tool_result" and isinstance(block.get("content"), list):
            inner, moved = _drop_blocks(block["content"], f"{path}[{i}].content", skipped, set())
            if moved is not None:
                changed = True
                new_index[i] = len(kept)
                kept.append({**block, "content": inner})
                continue
        new_index[i] = len(kept)
        kept.append(block)
    return (kept, new_index) if changed else (blocks, None)


__all__ = [
    "HASHED_SCHEMA_VERSION",
    "KNOWN_BLOCK_TYPES",
    "Decoded",
    "canonical_json",
    "conversation_hash",
    "dump_message",
    "message_hash",
    "message_to_json",
    "messages_equal",
    "read_each",
    "read_message",
]
