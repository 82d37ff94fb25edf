"""`metis`: convert, import, inspect, replay, price and chat with canonical sessions.

Every failure a user can cause (a file that is not JSON, an unknown provider or session,
any MetisError) ends as one red line on stderr and a non-zero exit: 2 for usage errors,
1 for everything else. Tracebacks are for developers: set `METIS_DEBUG=1` to see them.
One module per command group: `convert` (convert, validate), `importing`, `sessions`
(sessions, show, price, replay), `models`, `chat`, `demo`, `store`, `ops` (repair, fork,
compact, export), `serve`, `gateway` (keys, usage).
"""

from __future__ import annotations

from . import chat, convert, demo, gateway, importing, models, ops, serve, sessions, store
from ._app import MetisGroup, cli

for _module in (convert, importing, sessions, models, chat, demo, store, ops, serve, gateway):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    """Console entry point (`metis = "metis.cli:main"`)."""
    cli.main(prog_name="metis")


__all__ = ["MetisGroup", "cli", "main"]
