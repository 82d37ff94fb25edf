"""The gateway's rows (layout 5, `_sqlite_ddl.GATEWAY_TABLES`): conversation tips, API keys,
withheld replies, and the usage report over every stored reply.

Conversation tips: a stateless client (Chat Completions, Messages) re-sends the whole
history with each request. The gateway keys the conversation it answered, as the client
saw it, by its prefix key (`metis.fingerprint.prefix_keys`); `find_tip` takes the prefix
keys of a new request and finds the longest one that is a stored tip in one indexed
query (`_checks.by_ids`), from any process. A key names the latest session that ended
there (an upsert), so the same opening sent twice continues the newer conversation.

Keys: only the SHA-256 digest of a gateway key is stored (a key is 256 random bits, so a
digest without salt is as strong as a salted slow hash would be) with the principal it
resolves to. A lookup is by digest through the unique index, and the digest found is
compared again in constant time (`hmac.compare_digest`).

The functions run inside a transaction the Store opened.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from . import _sql
from ._checks import by_ids


@dataclass(frozen=True)
class GatewayKey:
    """A gateway key's row, without the key (which is never stored)."""

    id: str
    prefix: str
    name: str | None
    user_id: str | None
    team_id: str | None
    created_at: int
    """Microseconds since the epoch (UTC)."""
    revoked_at: int | None


@dataclass(frozen=True)
class UsageRow:
    """One group of `usage`: its value (None: no principal or model recorded), the replies
    counted, their tokens and their summed cost in USD (exact decimals)."""

    group: str | None
    replies: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal


@dataclass(frozen=True)
class GatewayRows:
    """Every gateway row of a store, as `metis store copy` carries them: keys with their
    digests, tips, withheld replies."""

    keys: list[tuple[str, GatewayKey]]
    tips: list[tuple[str, str, str, int]]
    withheld: list[tuple[str, str]]


USAGE_GROUPS = {"user": "user_id", "team": "team_id", "model": "model"}
"""`usage --by` value -> the metadata key it groups by (fixed names: the only SQL text)."""

KEY_COLUMNS = "id, prefix, name, user_id, team_id, created_at, revoked_at"
_INSERT_KEY = f"INSERT INTO gateway_keys (key_hash, {KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def key_digest(key: str) -> str:
    """The stored form of a gateway key."""
    return hashlib.sha256(key.encode()).hexdigest()


def put_tip(conn: _sql.Db, key: str, session_id: str, message_id: str, now: int) -> None:
    conn.execute(
        "INSERT INTO session_tips (tip_key, session_id, message_id, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (tip_key) DO UPDATE SET session_id = excluded.session_id, "
        "message_id = excluded.message_id, created_at = excluded.created_at",
        (key, session_id, message_id, now),
    )


def find_tip(conn: _sql.Db, keys: Sequence[str]) -> tuple[int, str, str] | None:
    """(index in `keys`, session id, message id) of the last of `keys` that is a stored
    tip whose session still exists; None when none is."""
    rows = by_ids(
        conn,
        "SELECT t.tip_key, t.session_id, t.message_id FROM {ids} session_tips AS t ON t.tip_key = j.value "
        "WHERE EXISTS (SELECT 1 FROM sessions AS s WHERE s.id = t.session_id)",
        keys,
    ).fetchall()
    if not rows:
        return None
    found = {str(row[0]): (str(row[1]), str(row[2])) for row in rows}
    index = max(i for i, key in enumerate(keys) if key in found)
    session_id, message_id = found[keys[index]]
    return index, session_id, message_id


def add_key(conn: _sql.Db, row: GatewayKey, digest: str) -> None:
    conn.execute(_INSERT_KEY, _key_params(digest, row))


def keys(conn: _sql.Db) -> list[GatewayKey]:
    return [_key(row) for row in conn.all(f"SELECT {KEY_COLUMNS} FROM gateway_keys ORDER BY created_at, id")]


def any_key(conn: _sql.Db) -> bool:
    """Whether any key was ever created (revoked ones count: revoking the last key must not
    open the gateway)."""
    return conn.one("SELECT 1 FROM gateway_keys LIMIT 1") is not None


def resolve_key(conn: _sql.Db, key: str) -> GatewayKey | None:
    """The live key `key` is, else None."""
    digest = key_digest(key)
    row = conn.one(f"SELECT key_hash, {KEY_COLUMNS} FROM gateway_keys WHERE key_hash = ?", (digest,))
    if row is None or not hmac.compare_digest(str(row[0]), digest):
        return None
    found = _key(row[1:])
    return None if found.revoked_at is not None else found


def revoke_key(conn: _sql.Db, key_id: str, now: int) -> bool:
    """Revoke a live key; False when there is no live key `key_id`."""
    cursor = conn.execute(
        "UPDATE gateway_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, key_id)
    )
    return cursor.rowcount > 0


def withhold(conn: _sql.Db, message_id: str, session_id: str) -> None:
    conn.execute(
        "INSERT INTO withheld_replies (message_id, session_id) VALUES (?, ?) "
        "ON CONFLICT (message_id) DO NOTHING",
        (message_id, session_id),
    )


def withheld(conn: _sql.Db, message_id: str) -> bool:
    return conn.one("SELECT 1 FROM withheld_replies WHERE message_id = ?", (message_id,)) is not None


def export(conn: _sql.Db) -> GatewayRows:
    keys = conn.all(f"SELECT key_hash, {KEY_COLUMNS} FROM gateway_keys ORDER BY created_at, id")
    tips = conn.all("SELECT tip_key, session_id, message_id, created_at FROM session_tips ORDER BY tip_key")
    withheld = conn.all("SELECT message_id, session_id FROM withheld_replies ORDER BY message_id")
    return GatewayRows(
        keys=[(str(row[0]), _key(row[1:])) for row in keys],
        tips=[(str(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in tips],
        withheld=[(str(r[0]), str(r[1])) for r in withheld],
    )


def merge(conn: _sql.Db, rows: GatewayRows) -> int:
    """Write rows another store exported; those already here are kept (a key revoked on
    either side stays revoked; a tip keeps the session it names here). Returns how many
    rows were new."""
    before = _counts(conn)
    for digest, key in rows.keys:
        conn.execute(
            f"{_INSERT_KEY} ON CONFLICT (id) DO UPDATE SET "
            "revoked_at = COALESCE(gateway_keys.revoked_at, excluded.revoked_at)",
            _key_params(digest, key),
        )
    for tip in rows.tips:
        conn.execute(
            "INSERT INTO session_tips (tip_key, session_id, message_id, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tip_key) DO NOTHING",
            tip,
        )
    for message_id, session_id in rows.withheld:
        withhold(conn, message_id, session_id)
    return _counts(conn) - before


def _counts(conn: _sql.Db) -> int:
    row = conn.one(
        "SELECT (SELECT COUNT(*) FROM gateway_keys) + (SELECT COUNT(*) FROM session_tips) "
        "+ (SELECT COUNT(*) FROM withheld_replies)"
    )
    return int(row[0])


def delete(conn: _sql.Db, session_id: str) -> None:
    """Forget a deleted session's tips and withheld replies."""
    for table in ("session_tips", "withheld_replies"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))


def usage(conn: _sql.Db, by: str, since: int | None) -> list[UsageRow]:
    """Tokens and cost of the stored replies with usage, grouped by `by` (a USAGE_GROUPS
    key), created at or after `since` (microseconds) when given; largest cost first."""
    d = conn.dialect
    group = d.meta_text.format(USAGE_GROUPS[by])
    number = d.usage_number.format
    inputs = " + ".join(
        f"COALESCE({number(k)}, 0)"
        for k in ("input_tokens", "cached_input_tokens", "cache_creation_input_tokens")
    )
    cost = d.decimal_sum.format(d.usage_decimal.format("cost_usd"))
    where = f"role = 'assistant' AND {d.has_usage}" + ("" if since is None else " AND created_at >= ?")
    sql = (
        f"SELECT {group} AS g, COUNT(*), SUM({inputs}), SUM(COALESCE({number('output_tokens')}, 0)), "
        f"{cost} FROM messages WHERE {where} GROUP BY g"
    )
    rows = conn.all(sql, () if since is None else (since,))
    out = [
        UsageRow(
            None if row[0] is None else str(row[0]),
            int(row[1]),
            int(row[2] or 0),
            int(row[3] or 0),
            _decimal(row[4]),
        )
        for row in rows
    ]
    return sorted(out, key=lambda r: (-r.cost_usd, -(r.input_tokens + r.output_tokens), r.group or ""))


def _decimal(value: Any) -> Decimal:
    return Decimal(0) if value is None else Decimal(str(value))


def _key_params(digest: str, key: GatewayKey) -> tuple[Any, ...]:
    """`_INSERT_KEY`'s parameters: the digest, then the row in `KEY_COLUMNS` order."""
    return (digest, key.id, key.prefix, key.name, key.user_id, key.team_id, key.created_at, key.revoked_at)


def _key(row: Sequence[Any]) -> GatewayKey:
    return GatewayKey(
        id=str(row[0]),
        prefix=str(row[1]),
        name=row[2],
        user_id=row[3],
        team_id=row[4],
        created_at=int(row[5]),
        revoked_at=None if row[6] is None else int(row[6]),
    )


__all__ = [
    "USAGE_GROUPS",
    "GatewayKey",
    "GatewayRows",
    "UsageRow",
    "add_key",
    "any_key",
    "delete",
    "export",
    "find_tip",
    "key_digest",
    "keys",
    "merge",
    "put_tip",
    "resolve_key",
    "revoke_key",
    "usage",
    "withheld",
    "withhold",
]
