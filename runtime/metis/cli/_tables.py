"""The tables `metis show`, `metis sessions` and `metis demo` print, built in one place."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metis_schema.v1 import Message
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._common import block_summary, cost_of, money, tokens_of, total_cost


def messages_table(messages: Sequence[Message], *, title: str | None = None) -> Table:
    """One row per message: #, role, blocks, model, tokens in/out/cached, cost, status."""
    table = Table(title=title, show_lines=False)
    for name, kw in (
        ("#", {"justify": "right"}),
        ("role", {}),
        ("blocks", {"overflow": "fold", "max_width": 70}),
        ("model", {}),
        ("in", {"justify": "right"}),
        ("out", {"justify": "right"}),
        ("cached", {"justify": "right"}),
        ("cost", {"justify": "right"}),
        ("status", {}),
    ):
        table.add_column(name, **kw)
    totals = [0, 0, 0]
    for i, message in enumerate(messages):
        counts = tokens_of(message)
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        usage = message.metadata.usage
        routing = message.metadata.routing
        model = message.metadata.model or ""
        if routing is not None:
            model += f" ({routing.mode.value})"
        table.add_row(
            str(i),
            message.role.value,
            block_summary(message),
            model,
            *(str(c) if usage else "" for c in counts),
            money(cost_of(message)) if usage else "",
            message.metadata.status.value,
        )
    table.add_section()
    table.add_row(
        "",
        "total",
        f"{len(messages)} messages",
        "",
        *(str(t) for t in totals),
        money(total_cost(messages)),
        "",
    )
    return table


def tool_calls_table(records: Sequence[Any]) -> Table:
    """One row per tool call from the store's tool_calls table, with its status."""
    table = Table(title="tool calls")
    for name in ("id", "name", "status", "provider", "provider id"):
        table.add_column(name, overflow="fold")
    for record in records:
        status = getattr(record.status, "value", record.status)
        table.add_row(record.id, record.name, str(status), record.provider or "", record.provider_id or "")
    return table


def show_session(out: Console, store: Any, session_id: str) -> None:
    """Print a session: header, the messages table, the tool calls table."""
    info = store.get_session(session_id)
    messages = list(store.load_session(session_id))
    active = info.active_model or "-"
    out.print(
        f"[bold]session[/bold] {info.id}  workspace {escape(info.workspace_path)}  active model {active}"
    )
    out.print(messages_table(messages))
    records = list(store.tool_calls(session_id))
    if records:
        out.print(tool_calls_table(records))


__all__ = ["messages_table", "show_session", "tool_calls_table"]
