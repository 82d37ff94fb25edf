"""Store URLs: which kind of store a target names, and the passwords it must never show.

Kept apart from `_open` (which chooses and opens a store) so that the PostgreSQL backend,
which needs the redaction, does not import the module that imports it.
"""

from __future__ import annotations

import os
from urllib.parse import unquote

from ..errors import REDACTED

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")
SQLITE_SCHEME = "sqlite://"


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


__all__ = ["is_postgres_url", "redacted", "url_passwords"]
