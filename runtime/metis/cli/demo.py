"""`metis demo`: the main job end to end, offline, into the store `metis sessions` reads.

The demo writes into the same store every other command uses (the default one, or
`--db`), so `metis sessions` and `metis show` right after it find what it made.
"""

from __future__ import annotations

import click

from ._app import db_option
from ._common import State


@db_option
@click.command()
@click.pass_obj
def demo(state: State) -> None:
    """Build a session across Anthropic and OpenAI from recorded exchanges; no key, no network."""
    from ..demo import run_demo
    from ._tables import session_lines

    store = state.store
    where = state.db or str(_default_path())
    click.echo(f"store: {where}")
    result = run_demo(store, say=click.echo)
    click.echo()
    click.echo("\n".join(session_lines(store, result.session_id)))
    db = f" --db {state.db}" if state.db else ""
    click.echo(f"\nsee it again: metis{db} sessions, metis{db} show {result.session_id[:12]}")


def _default_path() -> object:
    from ..store import default_path

    return default_path()


COMMANDS = [demo]
