"""Which sessions `metis sessions` lists: the filters, the limit, and the JSON rows.

Filters, cheapest first: `--since` reads the session row only; `--model` and `--search`
read the session's messages a page at a time, until one matches (totals are the
database's sums, `session_totals`):

- `--model M` keeps sessions whose active model or any message's model is the one M names
  in the catalog (an id or alias) or has M in its id (`gemini`, `sonnet`, `gpt-4o`).
- `--search TEXT` keeps sessions whose title, or the text of any message (text blocks,
  thinking excluded, tool results' text included), contains TEXT, ignoring case.

Sessions are listed most recently changed first, `--limit` of them (0: all); the rest are
counted only as "more", so a large store lists its latest sessions without reading all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from .._times import moment
from ..errors import MetisError

if TYPE_CHECKING:
    from metis_schema.v3 import Message

    from ..store import SessionInfo
    from ._tables import Totals

DEFAULT_LIMIT = 50
_AGO = re.compile(r"^(\d+)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


class Since(click.ParamType):  # type: ignore[type-arg]
    """A moment: `YYYY-MM-DD`, an ISO 8601 time (UTC unless it says), or `30m`, `12h`, `7d`, `2w` ago."""

    name = "since"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        ago = _AGO.match(text)
        if ago is not None:
            return datetime.now(UTC) - timedelta(**{_UNITS[ago[2]]: int(ago[1])})
        when = moment(text)
        if when is None:
            self.fail(
                f"{text!r} is not a date (YYYY-MM-DD), an ISO time, or an age like 7d or 12h", param, ctx
            )
        return when


@dataclass(frozen=True)
class Query:
    """`metis sessions`' filters (see the module docstring)."""

    limit: int = DEFAULT_LIMIT
    model: str | None = None
    since: datetime | None = None
    search: str | None = None

    def models(self) -> tuple[str | None, str]:
        """(the catalog id `--model` names, if it names one; the text to find in model ids)."""
        if self.model is None:
            return None, ""
        from ..catalog import load_catalog

        try:
            return load_catalog().resolve(self.model, allow_unlisted=False).id, self.model.lower()
        except MetisError:
            return None, self.model.lower()


class _Match:
    """Watches a session's messages for the model and the text a query asks for."""

    def __init__(self, query: Query, info: SessionInfo) -> None:
        self.exact, self.part = query.models()
        self.needle = query.search.lower() if query.search else None
        self.model_ok = query.model is None or self._model(info.active_model)
        self.text_ok = self.needle is None or self.needle in (info.title or "").lower()

    def _model(self, model: str | None) -> bool:
        if model is None:
            return False
        return model == self.exact or self.part in model.lower()

    def __call__(self, message: Message) -> None:
        if not self.model_ok:
            self.model_ok = self._model(message.metadata.model)
        if not self.text_ok and self.needle is not None:
            self.text_ok = any(self.needle in text.lower() for text in _texts(message.content))

    def ok(self) -> bool:
        return self.model_ok and self.text_ok


def _texts(blocks: list[Any]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if block.type == "text":
            out.append(block.text)
        elif block.type == "tool_result":
            out.extend(_texts(block.content))
    return out


def _watch(store: Any, session_id: str, match: _Match) -> None:
    """Read the session's messages a page at a time until `match` is satisfied (only a
    filter that the session row cannot answer reads them; totals come from the database)."""
    for page in store.read_pages(session_id):
        for message in page.messages:
            match(message)
            if match.ok():
                return


def matches(store: Any, query: Query, info: SessionInfo) -> bool:
    """Whether the session `info` passes the query's filters (`--since`, `--model`,
    `--search`): the one reading of those words for every command that takes them."""
    if query.since is not None and info.updated_at < query.since:
        return False
    match = _Match(query, info)
    if not match.ok():
        _watch(store, info.id, match)
    return match.ok()


def select(store: Any, query: Query) -> tuple[list[tuple[SessionInfo, Totals]], int, list[Exception]]:
    """(the rows to list, how many more sessions are left unread or unlisted, rows a newer
    metis wrote): most recent first, filtered, at most `query.limit` (0: all)."""
    from ._tables import session_totals

    infos = [i for i in store.list_sessions() if query.since is None or i.updated_at >= query.since]
    rows: list[tuple[SessionInfo, Totals]] = []
    newer: list[Exception] = []
    for n, info in enumerate(infos):
        if query.limit and len(rows) >= query.limit:
            return rows, len(infos) - n, newer
        if matches(store, query, info):
            totals, skipped = session_totals(store, info.id)
            newer.extend(skipped)
            rows.append((info, totals))
    return rows, 0, newer


def session_row(info: SessionInfo, totals: Totals) -> dict[str, Any]:
    """One session as `sessions --json` writes it."""
    from .._price_marks import UNPRICED
    from ._tables import session_title

    priced = totals.with_usage > totals.unpriced
    return {
        "id": info.id,
        "title": session_title(info, totals),
        "source": info.source,
        "active_model": info.active_model,
        "parent_session_id": info.parent_session_id,
        "created_at": info.created_at.isoformat(),
        "updated_at": info.updated_at.isoformat(),
        "message_count": totals.messages,
        "tokens": totals.tokens,
        "cost_usd": format(totals.cost, "f") if priced else None,
        "pricing": None
        if not totals.with_usage
        else UNPRICED
        if not priced
        else "partial"
        if totals.unpriced
        else "priced",
    }


__all__ = ["DEFAULT_LIMIT", "Query", "Since", "matches", "select", "session_row"]
