"""`open_store(target)`: the one place a store is chosen, by path or URL.

Wherever metis takes a store — `Client(store=...)`, the CLI's `--db` and `METIS_DB` — it
passes the string here: a path (or `sqlite:///path`, or nothing for the per-user default)
is a SQLite file; a `postgresql://` (or `postgres://`) URL is a PostgreSQL database.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import unquote

from ..errors import REDACTED, StoreError
from ._codec import Reader
from ._store import Store
from .sqlite import SqliteBackend

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_SQLITE_SCHEME = "sqlite://"


def is_postgres_url(target: object) -> bool:
    """True when `target` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(_POSTGRES_SCHEMES)


def redacted(target: str | os.PathLike[str]) -> str:
    """The target as it may be shown or logged: a URL without its passwords.

    Both places libpq takes a password from are cleared: the userinfo (`user:pw@host`,
    dropped to `user@host`) and the `password` parameter of the query (its value replaced).
    The URL is split as `url_passwords` splits it, which does not need it well formed: a
    password holding an unencoded `%`, `/`, `#` or `@` is still found whole.
    """
    text = os.fspath(target)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, query = _split(rest)
    userinfo, at, hostpart = authority.rpartition("@")
    if at:
        authority = f"{userinfo.partition(':')[0]}@{hostpart}"
    if query is not None:
        params = [f"password={REDACTED}" if _key(p) == "password" else p for p in query.split("&")]
        query = "&".join(params)
    return f"{scheme}://{authority}" + ("" if query is None else f"?{query}")


def url_passwords(target: str) -> list[str]:
    """The passwords a store URL carries, each as written and as libpq decodes it: what must
    never be shown (`redacted`) nor logged (`metis._logredact.remember_password`)."""
    _scheme, sep, rest = target.partition("://")
    if not sep:
        return []
    authority, query = _split(rest)
    userinfo, at, _host = authority.rpartition("@")
    found = []
    if at and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    for param in (query or "").split("&"):
        if _key(param) == "password":
            found.append(param.partition("=")[2])
    return [text for raw in found if raw for text in dict.fromkeys((raw, unquote(raw)))]


def _split(rest: str) -> tuple[str, str | None]:
    """(everything before the query, the query or None) of a URL after its `scheme://`."""
    head, mark, query = rest.partition("?")
    return head, (query if mark else None)


def _key(param: str) -> str:
    return unquote(param.partition("=")[0]).strip()


def open_store(
    target: str | os.PathLike[str] | None = None, *, reader: Reader | None = None, **options: Any
) -> Store:
    """The store at `target` (see module doc), created or upgraded in place.

    `options` go to the backend: `retry`, `synchronous` for SQLite (see `Store.open`);
    `min_size`, `max_size`, `timeout`, `retry` for PostgreSQL (see
    `postgres.PostgresBackend.open`). `reader` replaces the document reader.
    """
    if is_postgres_url(target):
        from .postgres import PostgresBackend  # psycopg only when PostgreSQL is asked for

        return Store(PostgresBackend.open(str(target), **options), reader)
    path: str | os.PathLike[str] | None = target
    if isinstance(target, str) and target.startswith(_SQLITE_SCHEME):
        rest = target.removeprefix(_SQLITE_SCHEME)
        if not rest.startswith("/"):
            raise StoreError(
                f"not a SQLite URL: {target!r}", hint="sqlite:///relative/path or sqlite:////abs/path"
            )
        path = rest[1:] or ":memory:"
    elif isinstance(target, str) and "://" in target:
        raise StoreError(
            f"unknown store URL scheme: {target.split('://', 1)[0]!r}",
            hint="a SQLite path, sqlite:///path, or postgresql://user@host/database",
        )
    return Store(SqliteBackend.open(path, **options), reader)


__all__ = ["is_postgres_url", "open_store", "redacted", "url_passwords"]
