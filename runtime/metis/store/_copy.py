"""Copy every session of one store into another (SQLite into PostgreSQL, and back).

Idempotent: a session already in the destination is continued, never duplicated. A
session's labels (title, source, the session and message it was forked from) come with
it; a title changed in the source since an earlier copy is changed in the destination. Its
stored messages must be the source's first messages, the same by `message_hash` (a
partial checkpoint the source has since finalized is finalized); only the messages
after them are appended, through the destination's ordinary checked `append_many`, with
the session's tool id map, so its `tool_calls` rows are built as the source's were. A
second run finds every message in place and copies nothing. The session's settings
revisions (its tool sets and request options) and the revision each exchange was sent
with come along as they are, numbers and times kept (`Store.put_settings`). Each session
is then verified: the destination's messages hash, one by one, to the source's. The
gateway's rows (its keys, as digests, the conversation tips and the withheld replies) come
last, merged (`Store.put_gateway_rows`): a gateway moved to another store keeps its keys
and recognizes its conversations.

A session holding a row this metis reads only in part (a block type or metadata field
of a newer writer, which the reader drops with a WARN, spec §10.3) is not copied: copied,
it would lose that part, and both hashes, taken of what this metis read, would still
agree. It is reported (`CopyReport.not_copied`, naming the message and what it holds) and
the other sessions are copied; a metis that reads the whole row can copy it later.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from metis_schema.v3 import Message, MessageStatus

from ..canonical import message_hash
from ..errors import SessionNotFoundError, StoreError
from ._store import Store
from ._types import SessionInfo

CHUNK = 1_000
"""Messages appended per transaction: a long session does not become one huge transaction."""


@dataclass
class CopyReport:
    """What a copy found and did."""

    sessions: int = 0
    """Sessions in the source."""
    sessions_created: int = 0
    messages: int = 0
    """Messages of the sessions copied (all verified in the destination by hash)."""
    messages_copied: int = 0
    gateway_rows: int = 0
    """Gateway rows (keys, tips, withheld replies) new in the destination."""
    not_copied: list[NotCopied] = field(default_factory=list)
    """Sessions left out: they hold what this metis reads only in part (see module doc)."""


@dataclass(frozen=True)
class NotCopied:
    """A session left out of a copy, and the parts of its rows this metis does not know."""

    session_id: str
    parts: tuple[tuple[str | None, tuple[str, ...]], ...]
    """(message id, what the reader dropped of it) for each such message."""

    def __str__(self) -> str:
        said = "; ".join(f"message {mid or '(no id)'} holds {', '.join(what)}" for mid, what in self.parts)
        return f"session {self.session_id!r} not copied: {said} (unknown to this metis: a copy would lose it)"


Progress = Callable[[SessionInfo, int, int], None]
"""Called after each session: (the session, its messages, how many were copied now)."""


def copy_store(src: Store, dst: Store, progress: Progress | None = None) -> CopyReport:
    """Copy `src` into `dst` (see module doc); StoreError when they disagree."""
    report = CopyReport()
    for info in src.list_sessions():
        with _dropped() as dropped:
            messages = src.load_session(info.id)
        report.sessions += 1
        if dropped:
            report.not_copied.append(NotCopied(info.id, tuple(dropped)))
            if progress is not None:
                progress(info, len(messages), 0)
            continue
        copied, created = _copy_session(src, dst, info, messages)
        report.sessions_created += created
        report.messages += len(messages)
        report.messages_copied += copied
        _verify(info.id, messages, dst.load_session(info.id))
        if progress is not None:
            progress(info, len(messages), copied)
    report.gateway_rows = dst.put_gateway_rows(src.gateway_rows())
    return report


class _Drops(logging.Handler):
    """The reader's WARN for each row it read only in part: (message id, what it dropped)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.found: list[tuple[str | None, tuple[str, ...]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        skipped = getattr(record, "skipped", None)
        if skipped:
            self.found.append((getattr(record, "message_id", None), tuple(map(str, skipped))))


@contextmanager
def _dropped() -> Iterator[list[tuple[str | None, tuple[str, ...]]]]:
    """What the document reader (`metis.canonical.read_message`, logger `metis.compat`)
    drops of the rows read meanwhile; its WARN is what says so, so it is let through."""
    logger = logging.getLogger("metis.compat")
    handler, saved = _Drops(), logger.level
    if not logger.isEnabledFor(logging.WARNING):
        logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield handler.found
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved)


def _copy_session(src: Store, dst: Store, info: SessionInfo, messages: list[Message]) -> tuple[int, bool]:
    created = False
    try:
        there: SessionInfo | None = dst.get_session(info.id)
    except SessionNotFoundError:
        there = None
    if there is None:
        dst.create_session(
            info.workspace_path,
            active_model=info.active_model,
            routing_policy=info.routing_policy,
            session_id=info.id,
            title=info.title,
            source=info.source,
            parent_session_id=info.parent_session_id,
            fork_message_id=info.fork_message_id,
        )
        created = True
    elif there.title != info.title:
        dst.set_title(info.id, info.title)  # renamed in the source since an earlier copy
    have = dst.load_session(info.id)
    if len(have) > len(messages):
        raise StoreError(
            f"session {info.id!r}: the destination holds {len(have)} messages, the source {len(messages)}",
            hint="the destination was written to after an earlier copy; copy the other way",
        )
    tool_ids = src.load_tool_ids(info.id)
    for ours, theirs in zip(have, messages, strict=False):
        if ours.id == theirs.id and message_hash(ours) == message_hash(theirs):
            continue
        finalized = ours.metadata.status == MessageStatus.partial != theirs.metadata.status
        if ours.id == theirs.id and finalized:
            dst.finalize(theirs, tool_ids=tool_ids)
            continue
        raise StoreError(
            f"session {info.id!r}: the destination's message {ours.id} differs from the source's {theirs.id}",
            message_id=ours.id,
            hint="the two stores hold different histories for this session; nothing of it was copied",
        )
    missing = messages[len(have) :]
    for start in range(0, len(missing), CHUNK):
        dst.append_many(missing[start : start + CHUNK], tool_ids=tool_ids)
    if not missing and dst.load_tool_ids(info.id).to_dict() != tool_ids.to_dict():
        dst.save_tool_ids(info.id, tool_ids)
    _copy_settings(src, dst, info.id)
    return len(missing), created


def _copy_settings(src: Store, dst: Store, session_id: str) -> None:
    """The session's settings revisions and exchange rows the destination lacks (a
    revision held differently there is a StoreError from `put_settings`)."""
    revisions, exchanges = src.settings_revisions(session_id), src.exchange_settings(session_id)
    if revisions != dst.settings_revisions(session_id) or exchanges != dst.exchange_settings(session_id):
        dst.put_settings(revisions, exchanges)


def _verify(session_id: str, source: list[Message], copied: list[Message]) -> None:
    """The destination's messages are the source's, by hash, in order."""
    want = [message_hash(m) for m in source]
    got = [message_hash(m) for m in copied]
    if want != got:
        first = next(
            (i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got))
        )
        raise StoreError(
            f"session {session_id!r}: after the copy, message {first} does not hash as in the source "
            f"({len(got)} messages in the destination, {len(source)} in the source)"
        )


__all__ = ["CHUNK", "CopyReport", "NotCopied", "copy_store"]
