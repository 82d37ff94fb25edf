"""`metis repair`, `fork`, `compact`, `export`: operations on stored sessions (`metis.ops`).

`repair` answers the tool calls a crash left open so the session can be sent again;
`fork` branches a session at one of its messages; `compact` has a model summarize the
earlier turns (a request to that model: its API key, or `METIS_REPLAY_FILE` as for
`metis chat`); `export` writes sessions as
OpenTelemetry GenAI chat records (`--format otel`) or as a chat-message dataset
(`--format jsonl-messages`, OpenAI's fine-tuning chat format; `--format trl`, Hugging Face
TRL's), one JSON document per line, to stdout or `--output`: the sessions named, or `all`,
kept by `--model` and `--since`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._app import db_option
from ._common import State, echo_err, inert, json_safe_bytes, resolve_session_id
from ._listing import Since

if TYPE_CHECKING:  # `metis --help` loads neither the models nor the store
    from metis_schema.v3 import Message

    from ..store import Store

FORMATS = ("otel", "jsonl-messages", "trl")


def find_message(messages: list[Message], ref: str, session_id: str) -> int:
    """The index of a message named by its `#` in `metis show` (negative: from the end), its
    id, or a unique prefix of its id."""
    from ..errors import MessageNotFoundError

    if ref.lstrip("-").isdigit():
        i = int(ref)
        if -len(messages) <= i < len(messages):
            return i % len(messages)
        raise MessageNotFoundError(f"session {session_id} has {len(messages)} messages, no #{ref}")
    matches = [i for i, m in enumerate(messages) if m.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise MessageNotFoundError(
            f"session {session_id} has no message {ref!r}", hint="`metis show SESSION` lists its messages"
        )
    raise click.ClickException(
        f"{ref!r} matches {len(matches)} messages of {session_id}; give more of the id"
    )


@db_option
@click.command()
@click.argument("session")
@click.option("--reason", help="Why the calls were interrupted (default: the tool loop stopped early).")
@click.pass_obj
def repair(state: State, session: str, reason: str | None) -> None:
    """Answer every unanswered tool call of SESSION with an "interrupted" error result.

    Each result is stored as a CANCELLED TOOL message and its tool call becomes
    `cancelled`; run it again and it adds nothing.
    """
    from ..ops import DEFAULT_REASON, repair_session

    session_id = resolve_session_id(state.store, session)
    added = repair_session(state.store, session_id, reason=reason or DEFAULT_REASON)
    if not added:
        click.echo(inert(f"nothing to repair: {session_id} has no unanswered tool calls"))
        return
    calls = [m for m in added if m.metadata.parent_tool_use_id is not None]
    for message in added:
        if message.metadata.parent_tool_use_id is None:  # a reply cut mid-stream (`settle_partials`)
            click.echo(
                inert(
                    f"settled {message.id} of {session_id}: a PARTIAL reply -> cancelled, kept what arrived"
                )
            )
    if calls:
        click.echo(inert(f"repaired {len(calls)} tool call(s) of {session_id}:"))
    for message in calls:
        click.echo(inert(f"  {message.metadata.parent_tool_use_id} -> cancelled, answered by {message.id}"))


@db_option
@click.command()
@click.argument("session")
@click.option("--at", "at", required=True, help="Last message kept: its # in `metis show`, id, or id prefix.")
@click.pass_obj
def fork(state: State, session: str, at: str) -> None:
    """Branch SESSION: a new session with its history up to and including message AT."""
    from ..ops import fork_session

    session_id = resolve_session_id(state.store, session)
    messages = list(state.store.load_session(session_id))
    i = find_message(messages, at, session_id)
    forked = fork_session(state.store, session_id, at=messages[i].id)
    carried = len(state.store.load_tool_ids(forked.id))
    click.echo(inert(forked.id))
    echo_err(
        f"forked {session_id} at #{i} ({messages[i].id}): {i + 1} message(s), "
        f"{carried} tool id binding(s) carried"
    )


@db_option
@click.command()
@click.argument("session")
@click.option("--keep-last", type=click.IntRange(min=0), required=True, help="Messages kept as they are.")
@click.option("--summarizer", help="Model (id or alias) that writes the summary (default: the session's).")
@click.pass_obj
def compact(state: State, session: str, keep_last: int, summarizer: str | None) -> None:
    """Summarize all but the last KEEP_LAST messages of SESSION; later requests send the
    summary instead of those turns. Nothing stored is removed."""
    from .. import adapters
    from ..catalog import load_catalog
    from ..client import DEFAULT_MODEL
    from .chat import _client

    session_id = resolve_session_id(state.store, session)
    entry = load_catalog().resolve(
        summarizer or state.store.get_session(session_id).active_model or DEFAULT_MODEL
    )
    client = _client(state, entry.provider, None)
    try:
        client.settings.endpoint(adapters.get(entry.provider))  # a missing key fails before any request
        message = client.resume(session_id).compact(keep_last, summarizer=entry.id)
    finally:
        client.close()
    block = message.content[0]
    usage = message.metadata.usage
    from ._tables import reply_cost

    cost = "no usage" if usage is None else reply_cost(usage)
    summary = getattr(block, "summary", None) or ""
    echo_err(f"compacted {session_id} with {entry.id} ({cost}); stored as {message.id}")
    click.echo(inert(summary, layout=True))


def _lines(store: Store, session_ids: list[str], fmt: str) -> Iterator[Iterator[bytes]]:
    """Each line of the export, as pieces of its JSON text.

    Both formats are written as the session is read a page at a time
    (`Store.iter_messages`), so a session of any length is exported holding one page: a
    dataset line is one session, its `tools` column every tool the session recorded
    (`Store.settings_revisions`); an `otel` record lists only what its call was sent that
    the record before it did not show (`ops.export_otel`), and a compaction's record reads
    the session again up to it. The first read of each session goes through
    `ops.audited`, which names its broken tool links on stderr.
    """
    from .. import _json
    from ..ops import audited, chat_records, dataset_line_text
    from ..ops.export_jsonl import LAYOUTS, session_tools

    for session_id in session_ids:
        if fmt == "otel":
            reads = itertools.count()

            def read(session_id: str = session_id, reads: Iterator[int] = reads) -> Iterator[Message]:
                messages = store.iter_messages(session_id)
                return audited(session_id, messages) if next(reads) == 0 else messages

            for record in chat_records(session_id, read):
                yield iter((_json.dumps(record),))
        else:
            tools = session_tools(store.settings_revisions(session_id))
            yield dataset_line_text(audited(session_id, store.iter_messages(session_id)), tools, LAYOUTS[fmt])


def _selected(store: Store, refs: tuple[str, ...], model: str | None, since: datetime | None) -> list[str]:
    """The sessions `export` writes: the ones named (or every one, oldest first, for `all`),
    kept by `--model` and `--since` as `metis sessions` reads them (`_listing.matches`: a
    model the catalog names, or text in a model id; any message's model counts)."""
    from ._listing import Query, matches

    if "all" in refs:
        if len(refs) > 1:
            raise click.UsageError("give session ids, or all, not both")
        infos = sorted(store.list_sessions(), key=lambda info: (info.created_at, info.id))
    else:
        infos = [store.get_session(resolve_session_id(store, ref)) for ref in refs]
    query = Query(model=model, since=since)
    return [info.id for info in infos if matches(store, query, info)]


@db_option
@click.command()
@click.argument("sessions", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="What to write.")
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="File (default: stdout)."
)
@click.option(
    "--model", help="Only sessions that used MODEL (an id or alias; else any model id containing it)."
)
@click.option(
    "--since",
    type=Since(),
    help="Only sessions changed since: YYYY-MM-DD, an ISO time (UTC unless given), or 7d, 12h, 30m.",
)
@click.pass_obj
def export(
    state: State,
    *,
    sessions: tuple[str, ...],
    fmt: str,
    output: Path | None,
    model: str | None,
    since: datetime | None,
) -> None:
    """Write SESSIONS (ids, prefixes, `last`, or `all`) as JSON lines: `otel`, one
    OpenTelemetry GenAI chat record per model call; `jsonl-messages` (OpenAI fine-tuning's
    chat format) or `trl` (Hugging Face TRL's), one `{"messages": [...], "tools": [...]}`
    conversation per session, all in one file."""
    session_ids = _selected(state.store, sessions, model, since)
    lines = _lines(state.store, session_ids, fmt)
    if output is None:
        count = _write(lambda data: click.echo(data, nl=False), lines)
    else:
        # Written beside the target and moved into place when whole: an export that fails
        # midway (an ExportError) leaves the file as it was, not half a dataset.
        partial = output.with_name(output.name + ".partial")
        try:
            with partial.open("wb") as out:
                count = _write(out.write, lines)
            partial.replace(output)
        finally:
            partial.unlink(missing_ok=True)
    echo_err(f"exported {count} {fmt} line(s) from {len(session_ids)} session(s)")


def _write(write: Callable[[bytes], object], lines: Iterator[Iterator[bytes]]) -> int:
    """Write each line's pieces and a newline, gathered into writes of some 64 KiB; the
    number of lines written."""
    count, size, batch = 0, 0, []
    for pieces in lines:
        for piece in itertools.chain(pieces, (b"\n",)):
            safe = json_safe_bytes(piece)  # stored text is untrusted: no raw C1 or bidi controls
            batch.append(safe)
            size += len(safe)
            if size >= _WRITE_SIZE:
                write(b"".join(batch))
                size, batch = 0, []
        count += 1
    if batch:
        write(b"".join(batch))
    return count


_WRITE_SIZE = 1 << 16


COMMANDS = [repair, fork, compact, export]
