"""`metis serve`: the gateway (`metis.gateway`) on uvicorn.

`metis [--db STORE] serve --host H --port P [--workers N]`. Upstream provider keys come
from the providers' usual environment variables (never stored or logged), base URLs from
`METIS_<PROVIDER>_BASE_URL` where set. With `--workers N` uvicorn runs N processes, each
building the app from the environment (`metis.gateway.serve.app_from_env`); several
processes want a PostgreSQL store (`--db postgresql://…`), SQLite stays the zero-set-up
default for one. Who may call it: `metis keys` (with no key ever created, loopback
clients only); what it does with sessions, `store: false` and store failures: docs/gateway.md.
"""

from __future__ import annotations

import os

import click

from ._common import State


@click.command(name="serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8787, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Processes.")
@click.option(
    "--max-body-bytes",
    default=None,
    type=click.IntRange(1024),
    help="Largest request body accepted (default 32 MiB).",
)
@click.pass_obj
def serve(state: State, host: str, port: int, workers: int, max_body_bytes: int | None) -> None:
    """Serve the OpenAI, Anthropic and Responses APIs, recording every conversation.

    Point any official SDK at http://HOST:PORT (OpenAI: base_url=http://HOST:PORT/v1).
    """
    import uvicorn

    if state.db is not None:
        os.environ["METIS_DB"] = state.db  # each worker process opens the store from here
    if max_body_bytes is not None:
        os.environ["METIS_GATEWAY_MAX_BODY_BYTES"] = str(max_body_bytes)
    if workers > 1 and not (state.db or "").startswith("postgresql"):
        click.echo("warning: several workers on one SQLite file take turns writing; use PostgreSQL", err=True)
    uvicorn.run(
        "metis.gateway.serve:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )


COMMANDS = [serve]
