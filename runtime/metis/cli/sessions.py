"""`metis sessions`, `show`, `price`, `replay`: reading stored sessions.

`price` exists because stored costs are facts of their pricing version (spec §6.4): it
shows them as stored and recomputed under another table, never overwriting either.
`replay` answers "what would model X be sent if this session moved to it now?": the
exact body, the blocks that would be dropped and why, and the swap check's verdict.
"""

from __future__ import annotations

import itertools
import json
import sys
import textwrap
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._app import db_option
from ._common import (
    State,
    WarnCapture,
    drop_lines,
    dump_json,
    echo_err,
    echo_report,
    inert,
    resolve_session_id,
    stored_request,
)
from ._listing import Since

if TYPE_CHECKING:
    from ..store import SessionInfo
    from ._tables import Totals


@db_option
@click.command()
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="List at most N sessions, the most recently changed (0: all).",
)
@click.option(
    "--model", help="Only sessions that used MODEL (an id or alias; else any model id containing it)."
)
@click.option(
    "--since", type=Since(), help="Only sessions changed since: YYYY-MM-DD, an ISO time, or 7d, 12h, 30m."
)
@click.option(
    "-s",
    "--search",
    metavar="TEXT",
    help="Only sessions whose title or message text contains TEXT (any case).",
)
@click.option("--json", "as_json", is_flag=True, help="As JSON: one object per session.")
@click.pass_obj
def sessions(state: State, /, as_json: bool, **filters: Any) -> None:
    """List stored sessions: id (a unique prefix), last change, model, title, messages, tokens, cost."""
    from ._listing import Query, select, session_row

    rows, more, newer = select(state.store, Query(**filters))
    for error in newer:  # a row written by a newer metis is named, not fatal
        echo_err(f"skipped: {error}")
    if as_json:
        click.echo(dump_json([session_row(info, totals) for info, totals in rows]))
    elif rows:
        from ._tables import sessions_lines

        _page(sessions_lines(rows))
    elif not filters.get("model") and not filters.get("since") and not filters.get("search"):
        echo_err("no sessions yet (`metis demo` makes one, `metis import` reads recorded traffic)")
    else:
        echo_err("no sessions match")
    if more:
        echo_err(f"listed the first {filters['limit']}; {more} more session(s) not shown (-n 0 lists all)")


def _page(lines: list[str]) -> None:
    """Lines to stdout, through a pager on a terminal when they are longer than the screen."""
    if sys.stdout.isatty() and len(lines) > _screen_lines():
        click.echo_via_pager(line + "\n" for line in lines)
    else:
        click.echo("\n".join(lines))


@db_option
@click.command()
@click.argument("session")
@click.option("--last", "last", type=click.IntRange(min=1), help="Only the last N messages.")
@click.option("--full", is_flag=True, help="Print long text blocks whole.")
@click.option(
    "--json", "as_json", is_flag=True, help="As JSON: session info, canonical messages, tool calls."
)
@click.pass_obj
def show(state: State, session: str, last: int | None, full: bool, as_json: bool) -> None:
    """Show SESSION (an id, a unique prefix, or `last`): its messages, tokens, costs and tool calls."""
    session_id = resolve_session_id(state.store, session)
    if as_json:
        _write(_session_json(state.store, session_id, last))
        return
    from ._tables import session_lines

    lines = itertools.chain(
        session_lines(state.store, session_id, last=last, full=full), settings_lines(state.store, session_id)
    )
    if not sys.stdout.isatty():
        _write(line + "\n" for line in lines)
        return
    # A terminal gets a pager when the text is longer than the screen: lines are taken until
    # that is known, so a long session is paged while it is still being read.
    first = list(itertools.islice(lines, _screen_lines() + 1))
    rest = (line + "\n" for line in itertools.chain(first, lines))
    if len(first) > _screen_lines():
        click.echo_via_pager(rest)
    else:
        _write(rest)


def _screen_lines() -> int:
    import shutil

    return shutil.get_terminal_size((80, 24)).lines


def _write(pieces: Iterable[str]) -> None:
    """Echo text made piece by piece, some thousand pieces at a time (not one write per
    line of a long session, nor the whole of it at once)."""
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= _BATCH:
            click.echo("".join(batch), nl=False)
            batch.clear()
    if batch:
        click.echo("".join(batch), nl=False)


_BATCH = 1024
_MESSAGES = "\x00metis: the messages go here\x00"


def _session_json(store: Any, session_id: str, last: int | None) -> Iterator[str]:
    """`show --json`: the text `dump_json` writes for the session's document, made a
    message at a time. The document is written with a placeholder for its messages, which
    are then written in its place (each indented as `dump_json` nests it), read a page at
    a time; the session is read once before, for the count and the title."""
    from ..canonical import dump_message
    from ..ops import audited
    from ._tables import Totals

    info = store.get_session(session_id)
    # Strict: a newer row is an error here; a broken tool link is named on stderr.
    totals = Totals.of(audited(session_id, store.iter_messages(session_id)))
    start = max(0, totals.messages - last) if last else 0
    if start >= totals.messages:
        yield dump_json(_session_doc(store, info, totals, [])) + "\n"
        return
    head, tail = dump_json(_session_doc(store, info, totals, [_MESSAGES])).split(json.dumps(_MESSAGES))
    yield head.rstrip(" ")
    shown = itertools.islice(store.iter_messages(session_id), start, totals.messages)
    for i, message in enumerate(shown):
        if i:
            yield ",\n"
        yield textwrap.indent(dump_json(dump_message(message)), "    ")
    yield tail + "\n"


def _session_doc(store: Any, info: SessionInfo, totals: Totals, messages: list[Any]) -> dict[str, Any]:
    """The document `show --json` writes, its messages as given."""
    from ._tables import session_source, session_title

    return {
        "id": info.id,
        "title": session_title(info, totals),
        "source": session_source(info),
        "parent_session_id": info.parent_session_id,
        "fork_message_id": info.fork_message_id,
        "workspace": info.workspace_path,
        "active_model": info.active_model,
        "created_at": info.created_at.isoformat(),
        "updated_at": info.updated_at.isoformat(),
        "message_count": totals.messages,
        "settings": settings_doc(store, info.id),
        "messages": messages,
        "tool_calls": [
            {
                "id": r.id,
                "name": r.name,
                "status": str(getattr(r.status, "value", r.status)),
                "provider": r.provider,
                "provider_id": r.provider_id,
                "message_id": r.message_id,
                "result_message_id": r.result_message_id,
            }
            for r in store.tool_calls(info.id)
        ],
    }


def settings_doc(store: Any, session_id: str) -> dict[str, Any]:
    """`show --json`'s settings: the revision in force (its tools and options), every
    revision, and the revision each exchange was sent with (`metis.settings`)."""
    docs = [r.model_dump(mode="json", exclude_none=True) for r in store.settings_revisions(session_id)]
    latest = docs[-1] if docs else {"revision": None, "tools": [], "options": {}}
    return {
        "revision": latest["revision"],
        "tools": latest["tools"],
        "options": latest["options"],
        "revisions": docs,
        "exchanges": [e.model_dump(mode="json") for e in store.exchange_settings(session_id)],
    }


def settings_note(store: Any, session_id: str) -> str:
    """One line naming the settings revision a body was built with."""
    latest = store.settings(session_id)
    if latest is None:
        return "settings: none recorded (no tools, no options)"
    names = ", ".join(t.name for t in latest.tools) or "no tools"
    return f"settings: revision {latest.revision} ({names})"


def settings_lines(store: Any, session_id: str) -> Iterator[str]:
    """`show`'s closing lines: the tools and request options in force, and how many
    revisions the session has recorded."""
    revisions = store.settings_revisions(session_id)
    if not revisions:
        return
    latest = revisions[-1]
    yield ""
    yield f"settings in force: revision {latest.revision} of {len(revisions)}"
    for tool in latest.tools:
        summary = tool.description.splitlines()[0] if tool.description else ""
        yield f"  tool {tool.name}" + (f": {summary}" if summary else "")
    options = latest.options.model_dump(mode="json", exclude_none=True)
    if not options:
        yield "  options: none set"
    for name, value in options.items():
        yield f"  {name}: {json.dumps(value, ensure_ascii=False)}"


@db_option
@click.command()
@click.argument("session")
@click.option(
    "--as-of",
    "as_of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    help="Reprice at the prices in force on this date (YYYY-MM-DD); default: each reply's own date.",
)
@click.option(
    "--pricing-version",
    "version",
    help="Reprice under one named price source (the local table: an override; genai-prices' data).",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Reprice with your own price table (a PriceTable JSON file): an override.",
)
@click.pass_obj
def price(state: State, session: str, as_of: Any, version: str | None, prices_file: Path | None) -> None:
    """Costs of SESSION: as stored, repriced (at each reply's date, or --as-of, or under a
    named source), and what the provider billed where it said, with the difference."""
    from ..catalog import load_catalog
    from ..pricing import check_version, load_price_table_file
    from ._tables import grid, price_rows

    if sum(x is not None for x in (as_of, version, prices_file)) > 1:
        raise click.UsageError("give one of --as-of, --pricing-version, --prices")
    session_id = resolve_session_id(state.store, session)
    day: date | None = as_of.date() if as_of is not None else None
    table = load_price_table_file(prices_file) if prices_file is not None else None
    if version is not None:
        version = check_version(version)  # unknown: fails before any row
    if day:
        against = f"prices of {day}"
    elif table is not None:
        against = f"override {table.pricing_version}"
    elif version is not None:
        against = f"pricing {version}"
    else:
        against = "prices of each reply's date"
    rows = price_rows(
        state.store.iter_messages(session_id), load_catalog(), day=day, version=version, table=table
    )
    right = [
        i for i, h in enumerate(rows.headers) if h in ("#", "stored", "repriced", "billed", "billed-local")
    ]
    click.echo(inert(f"{session_id}: stored cost vs {against}"))
    click.echo("\n".join(grid(rows.headers, rows.lines, flex=1, right=right)))
    for note in rows.notes:
        click.echo(inert(note))


@db_option
@click.command()
@click.argument("session")
@click.option("--to", "model", required=True, help="Model (id or alias) to build the request for.")
@click.pass_obj
def replay(state: State, session: str, model: str) -> None:
    """The request body MODEL would receive for SESSION now, what it drops, and the swap verdict."""
    from .. import adapters
    from ..catalog import load_catalog
    from ..errors import CapabilityError

    session_id = resolve_session_id(state.store, session)
    entry = load_catalog().resolve(model)
    request = stored_request(state.store, session_id, entry.id)
    history, tools = request.messages, request.tools
    with WarnCapture("metis.adapters") as capture:
        body = adapters.get(entry.provider).to_wire(history, tools, request.options)
    click.echo(dump_json(body))
    echo_err(settings_note(state.store, session_id))
    lines = drop_lines(capture.drops, history)
    echo_err(f"projection to {entry.id}: " + ("nothing dropped" if not lines else f"{len(lines)} drop(s)"))
    echo_report(lines)
    from ..routing import check_swap

    try:
        check_swap(history, entry.id, tools=tools)
    except CapabilityError as exc:
        echo_err(f"swap check: refused: {exc.message}", color="red")
    else:
        echo_err(f"swap check: {entry.id} can carry this session", color="green")


COMMANDS = [sessions, show, price, replay]
