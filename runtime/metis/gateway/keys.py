"""Gateway keys: who a request is made for, and whether it may be served at all.

`metis keys create` mints a key (`mk_` + 256 random bits, URL-safe), prints it once and
stores only its SHA-256 digest with the principal it resolves to (`user_id`, `team_id`),
which the gateway records on every message of the requests made with it. Clients present
a key the way their SDK does: `Authorization: Bearer <key>` (OpenAI) or `x-api-key: <key>`
(Anthropic).

Who is served (`admit`): once a key has been created in the store (revoked ones count, so
revoking the last key does not open the gateway), only requests bearing a live key; with
none ever created (a fresh store), only clients on the loopback interface, anonymously —
a gateway started to try it out on one machine needs no set-up, and one reachable from
elsewhere never serves strangers by accident. Behind a reverse proxy on the same machine
every client is loopback: create a key. Upstream provider keys are not gateway keys: they
come from the environment (`ANTHROPIC_API_KEY`...) and are never stored or logged.
"""

from __future__ import annotations

import ipaddress
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..ids import new_message_id
from ..store import Store
from ..store._gateway import GatewayKey, key_digest

KEY_PREFIX = "mk_"
SHOWN = 8
"""Characters of a key kept in clear (`mk_` and five more) so `metis keys list` can name it."""


@dataclass(frozen=True)
class Admission:
    """The outcome of `admit`: the key's principal, or why the request is refused."""

    user_id: str | None = None
    team_id: str | None = None
    refused: str | None = None


def create_key(
    store: Store, *, name: str | None = None, user_id: str | None = None, team_id: str | None = None
) -> tuple[GatewayKey, str]:
    """A new key's row and the key itself (shown once: only its digest is stored)."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = GatewayKey(
        id="key_" + new_message_id(),
        prefix=key[:SHOWN],
        name=name,
        user_id=user_id,
        team_id=team_id,
        created_at=time.time_ns() // 1000,
        revoked_at=None,
    )
    store.add_gateway_key(row, key_digest(key))
    return row, key


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request bears: `Authorization: Bearer` (OpenAI SDK) or `x-api-key`
    (Anthropic SDK)."""
    auth = headers.get("authorization") or ""
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key") or None


def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def admit(store: Store, headers: Mapping[str, str], client_host: str | None) -> Admission:
    """Whether and for whom to serve a request (see the module docstring)."""
    key = presented_key(headers)
    if key is not None:
        found = store.resolve_gateway_key(key)
        if found is not None:
            return Admission(found.user_id, found.team_id)
    if store.has_gateway_keys():
        return Admission(refused="a valid gateway key is required (metis keys create)")
    if _loopback(client_host):
        return Admission()
    return Admission(
        refused="this gateway has no keys and serves loopback clients only: run `metis keys create`"
    )


__all__ = ["KEY_PREFIX", "Admission", "admit", "create_key", "presented_key"]
