"""`metis store copy SRC DST`: move a store between SQLite and PostgreSQL.

SRC and DST are what `--db` takes: a SQLite path (or `sqlite:///path`) or a
`postgresql://` URL. The copy is `metis.store.copy_store`: idempotent (run it again and it
copies nothing), each session verified by message hashes. A progress bar on stderr
follows the sessions; the summary goes to stdout. A session holding what this metis does
not know is not copied: it is named on stderr and the command exits 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ._common import console, echo_err, inert

if TYPE_CHECKING:
    from ..store import SessionInfo


@click.group(name="store")
def store_group() -> None:
    """Manage stores: copy one into another (SQLite <-> PostgreSQL)."""


@store_group.command(name="copy")
@click.argument("src")
@click.argument("dst")
def copy(src: str, dst: str) -> None:
    """Copy every session of SRC into DST (paths or postgresql:// URLs), verified by hashes.

    Sessions already in DST are continued, never duplicated: a second run copies nothing.
    """
    # Imported here, not at module level: `metis --help` must not load the store or rich.
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..store import copy_store, open_store
    from ..store._urls import redacted

    with open_store(src) as source, open_store(dst) as target:
        total = len(source.list_sessions())
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("sessions, {task.fields[copied]} messages copied"),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console(stderr=True), transient=True) as bar:
            task = bar.add_task("copying", total=total, copied=0)
            copied = 0

            def advance(info: SessionInfo, _messages: int, now: int) -> None:
                nonlocal copied
                copied += now
                # A stored id is shown inert, and never read as rich markup.
                bar.update(task, advance=1, copied=copied, description=escape(inert(info.id)))

            report = copy_store(source, target, advance)
    click.echo(
        f"copied {report.messages_copied} of {report.messages} messages "
        f"({report.sessions_created} of {report.sessions} sessions new); "
        f"all {report.messages} verified by hash in {redacted(dst)}"
    )
    if report.not_copied:
        for left in report.not_copied:
            echo_err(str(left), color="yellow")
        raise click.ClickException(
            f"{len(report.not_copied)} of {report.sessions} sessions not copied: they hold what this "
            "metis does not know (copy them with a metis that reads them)"
        )


COMMANDS = [store_group]
