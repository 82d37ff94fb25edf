"""`metis sessions`, `show`, `price`, `replay`: reading stored sessions.

`price` exists because stored costs are facts of their pricing version (spec §6.4): it
shows them as stored and recomputed under another table, never overwriting either.
`replay` answers "what would model X be sent if this session moved to it now?": the
exact body, the blocks that would be dropped and why, and the swap check's verdict.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import click
from rich.table import Table

from .. import adapters
from ..adapters import AdapterOptions
from ..catalog import load_catalog
from ..errors import CapabilityError, PricingError
from ..pricing import current_version, load_price_table, reprice
from ._common import (
    DropCapture,
    State,
    console,
    drop_lines,
    dump_json,
    echo_err,
    money,
    resolve_session_id,
    tokens_of,
    total_cost,
    total_tokens,
)
from ._tables import show_session


@click.command()
@click.pass_obj
def sessions(state: State) -> None:
    """List stored sessions: id, created, active model, messages, tokens, cost."""
    table = Table(title="sessions")
    for name in ("id", "created", "active model", "messages", "tokens", "cost"):
        table.add_column(
            name, justify="right" if name in ("messages", "tokens", "cost") else "left", no_wrap=True
        )
    infos = list(state.store.list_sessions())
    for info in infos:
        messages = list(state.store.load_session(info.id))
        table.add_row(
            info.id,
            info.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            info.active_model or "-",
            str(len(messages)),
            str(total_tokens(messages)),
            money(total_cost(messages)),
        )
    if not infos:
        echo_err("no sessions yet")
        return
    console().print(table)


@click.command()
@click.argument("session")
@click.pass_obj
def show(state: State, session: str) -> None:
    """Show SESSION (an id or a unique prefix): messages, tokens, costs and tool calls."""
    show_session(console(), state.store, resolve_session_id(state.store, session))


@click.command()
@click.argument("session")
@click.option(
    "--pricing-version", "version", help="Price table to recompute with (default: the current one)."
)
@click.pass_obj
def price(state: State, session: str, version: str | None) -> None:
    """Costs of SESSION as stored, and recomputed under a pricing version."""
    session_id = resolve_session_id(state.store, session)
    version = version or current_version()
    prices = load_price_table(version)  # an unknown version fails here, before any row
    catalog = load_catalog()
    table = Table(title=f"session {session_id}: stored cost vs pricing {version}")
    for name in ("#", "model", "tokens in/out/cached", "stored cost", "stored version", f"cost @ {version}"):
        table.add_column(name, justify="right" if "cost" in name or name == "#" else "left")
    stored_total, repriced_total = Decimal(0), Decimal(0)
    for i, message in enumerate(state.store.load_session(session_id)):
        usage = message.metadata.usage
        if usage is None or message.metadata.model is None:
            continue
        try:
            again = reprice(
                usage, pricing_key=catalog.resolve(message.metadata.model).pricing_key, table=prices
            )
            new_cost = money(again.cost_usd)
            repriced_total += again.cost_usd
        except PricingError:  # the table has no price for this model
            new_cost = "unpriced"
        stored_total += usage.cost_usd
        table.add_row(
            str(i),
            message.metadata.model,
            "/".join(str(n) for n in tokens_of(message)),
            money(usage.cost_usd),
            usage.pricing_version,
            new_cost,
        )
    table.add_section()
    table.add_row("", "total", "", money(stored_total), "", money(repriced_total))
    console().print(table)


@click.command()
@click.argument("session")
@click.option("--to", "model", required=True, help="Model (id or alias) to build the request for.")
@click.pass_obj
def replay(state: State, session: str, model: str) -> None:
    """The request body MODEL would receive for SESSION now, what it drops, and the swap verdict."""
    from ..client._session import SessionCore

    session_id = resolve_session_id(state.store, session)
    entry = load_catalog().resolve(model)
    info = state.store.get_session(session_id)
    history = SessionCore.replayable(list(state.store.load_session(session_id)))
    tool_ids = state.store.load_tool_ids(session_id)
    options = AdapterOptions(
        model=entry.id, session_id=session_id, tool_ids=tool_ids, workspace=Path(info.workspace_path)
    )
    with DropCapture() as capture:
        body = adapters.get(entry.provider).to_wire(history, (), options)
    click.echo(dump_json(body))
    lines = drop_lines(capture.drops, history)
    echo_err(f"projection to {entry.id}: " + ("nothing dropped" if not lines else f"{len(lines)} drop(s)"))
    for line in lines:
        echo_err(f"  {line}", color="yellow")
    from ..routing import check_swap

    try:
        check_swap(history, entry.id)
    except CapabilityError as exc:
        echo_err(f"swap check: refused: {exc.message}", color="red")
    else:
        echo_err(f"swap check: {entry.id} can carry this session", color="green")


COMMANDS = [sessions, show, price, replay]
