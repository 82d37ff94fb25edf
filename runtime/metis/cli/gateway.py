"""`metis keys create|list|revoke` and `metis usage`: the gateway's keys and what they spent.

`keys create` prints the new key once (only its SHA-256 digest is stored; see
`metis.gateway.keys`) with the user and team it resolves to; `keys list` shows each
key's id, its first characters and principal, never the key. `usage --by user|team|model
[--since …]` sums the tokens and cost of the stored replies per group, in SQL on either
database (`Store.usage`), JSON with `--json`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import click

from ._common import State
from ._listing import Since
from ._tables import grid


@click.group(name="keys")
def keys() -> None:
    """Manage the gateway's API keys (`metis serve`)."""


@keys.command(name="create")
@click.option("--name", default=None, help="A label for the key.")
@click.option("--user", "user_id", default=None, help="User id recorded on the key's messages.")
@click.option("--team", "team_id", default=None, help="Team id recorded on the key's messages.")
@click.pass_obj
def create(state: State, name: str | None, user_id: str | None, team_id: str | None) -> None:
    """Create a key; it is printed once, and only its hash is stored."""
    from ..gateway.keys import create_key

    row, key = create_key(state.store, name=name, user_id=user_id, team_id=team_id)
    click.echo(key)
    click.echo(f"created {row.id} (store the key now: it is not shown again)", err=True)


@keys.command(name="list")
@click.pass_obj
def list_keys(state: State) -> None:
    """The keys: id, first characters, name, user, team, created, revoked."""
    rows = [
        [
            k.id,
            k.prefix + "…",
            k.name or "",
            k.user_id or "",
            k.team_id or "",
            _when(k.created_at),
            "" if k.revoked_at is None else _when(k.revoked_at),
        ]
        for k in state.store.gateway_keys()
    ]
    if not rows:
        click.echo("no keys (the gateway serves loopback clients only)")
        return
    headers = ["id", "key", "name", "user", "team", "created", "revoked"]
    for line in grid(headers, rows, flex=2):
        click.echo(line)


@keys.command(name="revoke")
@click.argument("key_id")
@click.pass_obj
def revoke(state: State, key_id: str) -> None:
    """Revoke a key by id: requests bearing it are refused from now on."""
    if not state.store.revoke_gateway_key(key_id):
        raise click.ClickException(f"no live key {key_id!r} (metis keys list)")
    click.echo(f"revoked {key_id}")


@click.command(name="usage")
@click.option("--by", "by", type=click.Choice(["user", "team", "model"]), default="user", show_default=True)
@click.option(
    "--since", type=Since(), default=None, help="Only replies since: YYYY-MM-DD, ISO time, 7d, 12h."
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.pass_obj
def usage(state: State, by: str, since: datetime | None, as_json: bool) -> None:
    """Tokens and cost of the stored replies, per user, team or model."""
    micros = None if since is None else int(since.timestamp() * 1_000_000)
    rows = state.store.usage(by, since=micros)
    if as_json:
        groups = [
            {
                by: r.group,
                "replies": r.replies,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "cost_usd": str(r.cost_usd),
            }
            for r in rows
        ]
        click.echo(json.dumps({"by": by, "groups": groups}, indent=2))
        return
    table = [
        [r.group or "(none)", str(r.replies), str(r.input_tokens), str(r.output_tokens), f"${r.cost_usd:.6f}"]
        for r in rows
    ]
    for line in grid([by, "replies", "input", "output", "cost"], table, flex=0, right=(1, 2, 3, 4)):
        click.echo(line)


def _when(micros: int) -> str:
    return datetime.fromtimestamp(micros / 1_000_000, UTC).strftime("%Y-%m-%d %H:%M")


COMMANDS = [keys, usage]
