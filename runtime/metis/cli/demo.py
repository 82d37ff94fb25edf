"""`metis demo`: the main job end to end, offline, into a SQLite file you can inspect."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from ..store import metis_home, open_store
from ._common import State, console
from ._tables import show_session


def _fresh_path() -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    return metis_home() / f"demo-{stamp}.sqlite3"


@click.command()
@click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="SQLite file to write (default: a fresh file under the metis home).",
)
@click.pass_obj
def demo(state: State, db: Path | None) -> None:
    """Build a session across Anthropic and OpenAI from recorded exchanges; no key, no network."""
    from ..demo import run_demo

    path = db or state.db or _fresh_path()  # a SQLite file (made with its directory) or a URL
    click.echo(f"database: {path}")
    with open_store(path) as store:
        result = run_demo(store, say=click.echo)
        click.echo()
        show_session(console(), store, result.session_id)
    click.echo(f"inspect it again with: metis --db {path} show {result.session_id}")


COMMANDS = [demo]
