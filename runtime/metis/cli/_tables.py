"""What `metis sessions`, `metis show` and `metis demo` print, laid out for the terminal's width.

`show` is a transcript, not a table: one header line per message (role, model, tokens,
cost, status) and its blocks wrapped beneath it at the full width, so an 80-column
terminal gets 80-column lines instead of a nine-column table whose text column is a
few characters wide. `sessions` is a table whose id column holds the shortest prefix
that still tells the sessions apart (every command takes a unique prefix).

Everything stored is shown `inert` (its control characters as visible escapes), escaped
before it is laid out, so the widths counted are the widths printed.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .._price_marks import NO_USAGE, UNPRICED
from ._common import inert, money, tokens_of

if TYPE_CHECKING:
    from metis_schema.v3 import Message, Usage

    from ..store import SessionInfo

_MIN_ID = 12
"""Shortest id prefix shown: `sess_` and 7 ULID characters."""
_TEXT_LINES = 12
"""Lines of one text block `show` prints before eliding the rest (`--full` prints all)."""


def width() -> int:
    """The terminal's width, or $COLUMNS, or 80 when output is not a terminal."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def grid(
    headers: Sequence[str], rows: Sequence[Sequence[str]], *, flex: int, right: Iterable[int] = ()
) -> list[str]:
    """A plain table that fits the terminal: every column as wide as its widest cell, but
    column `flex` (a title, a model name) cut with `…` to what is left of the width."""
    right = set(right)
    headers = [inert(str(cell)) for cell in headers]
    rows = [[inert(str(cell)) for cell in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    fixed = sum(w for i, w in enumerate(widths) if i != flex) + 2 * (len(widths) - 1)
    widths[flex] = max(min(widths[flex], width() - fixed), 4)

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            text = str(cell)
            if len(text) > widths[i]:
                text = text[: widths[i] - 1] + "…"
            out.append(text.rjust(widths[i]) if i in right else text.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return [line(headers), "─" * len(line(["─" * w for w in widths])), *(line(r) for r in rows)]


def short_ids(ids: Sequence[str]) -> dict[str, str]:
    """Each id cut to the shortest prefix (at least `_MIN_ID`) unique among `ids`."""
    for length in range(_MIN_ID, max((len(i) for i in ids), default=0) + 1):
        if len({i[:length] for i in ids}) == len(ids):
            return {i: i[:length] for i in ids}
    return {i: i for i in ids}


TITLE_LENGTH = 78
"""Longest title recorded from a user's text: one line of an 80-column list."""


def short_title(text: str) -> str | None:
    """`text` as a one-line title (whitespace collapsed, cut with `…`); None when blank."""
    words = " ".join(text.split())
    if not words:
        return None
    return words[: TITLE_LENGTH - 1] + "…" if len(words) > TITLE_LENGTH else words


def first_user_text(messages: Iterable[Message]) -> str | None:
    """The first non-blank text a user wrote in `messages`, as a title."""
    for message in messages:
        title = _user_title(message)
        if title is not None:
            return title
    return None


def _user_title(message: Message) -> str | None:
    """The message's first non-blank text as a title, when a user wrote it."""
    if message.role.value == "user":
        for block in message.content:
            text = getattr(block, "text", None)
            if isinstance(text, str) and (title := short_title(text)):
                return title
    return None


@dataclass
class Totals:
    """What `sessions` and `show` say about a whole session (messages, tokens, cost, the
    first user text), gathered one message at a time: a reader walking a long session page
    by page (`Store.read_pages`) adds each message and holds none of them."""

    messages: int = 0
    tokens: int = 0
    cost: Decimal = field(default_factory=Decimal)
    with_usage: int = 0
    unpriced: int = 0
    billed: Decimal | None = None
    """What providers reported they billed, over the replies that carry it (None: none do)."""
    first_text: str | None = None

    def add(self, message: Message) -> None:
        self.messages += 1
        prompt, output, _ = tokens_of(message)
        self.tokens += prompt + output
        usage = message.metadata.usage
        if usage is not None:
            self.with_usage += 1
            self.cost += usage.cost_usd
            self.unpriced += usage.pricing_version == UNPRICED
            if usage.billed_cost_usd is not None:
                self.billed = (self.billed or Decimal(0)) + usage.billed_cost_usd
        if self.first_text is None:
            self.first_text = _user_title(message)

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Totals:
        totals = cls()
        for message in messages:
            totals.add(message)
        return totals


def reply_cost(usage: Usage) -> str:
    """One reply's cost as every view shows it: `unpriced` when no price covered it, else
    the exact amount (`money`)."""
    return UNPRICED if usage.pricing_version == UNPRICED else money(usage.cost_usd)


def session_title(info: SessionInfo, totals: Totals) -> str:
    """The recorded title, else the first user text (a session stored without one)."""
    return info.title or totals.first_text or "(untitled)"


def session_source(info: SessionInfo) -> str | None:
    """Where the session came from (`chat`, `demo`, an imported file), when recorded."""
    return info.source


def cost_text(totals: Totals, *, places: int | None = None) -> str:
    """Total cost (exact, or to `places` decimals); `-` without usage, `unpriced` when none
    of it was priced, and a `+` when some was not."""
    if not totals.with_usage:
        return "-"
    if totals.unpriced == totals.with_usage:
        return UNPRICED
    text = money(totals.cost) if places is None else f"${totals.cost:.{places}f}"
    return text + ("+" if totals.unpriced else "")


def sessions_lines(rows: Iterable[tuple[SessionInfo, Totals]]) -> list[str]:
    """The `metis sessions` table: id prefix, last change (UTC), model, title, messages,
    tokens, cost."""
    rows = list(rows)
    short = short_ids([info.id for info, _ in rows])
    cells = [
        (
            short[info.id],
            info.updated_at.strftime("%m-%d %H:%M"),
            (info.active_model or "-").partition(":")[2] or "-",  # the name: the id is in --json
            _forked(info, short) + session_title(info, totals),
            str(totals.messages),
            f"{totals.tokens:,}",
            cost_text(totals, places=4),  # `show` has the exact figure
        )
        for info, totals in rows
    ]
    headers = ("id", "updated", "model", "title", "msgs", "tokens", "cost")
    return grid(headers, cells, flex=3, right=(4, 5, 6))


def _forked(info: SessionInfo, short: dict[str, str]) -> str:
    """The `⑂ PARENT` prefix of a fork's title: the session tree, one level at a time."""
    from ..ops import fork_origin

    origin = fork_origin(info)
    return "" if origin is None else f"⑂ {short.get(origin.session_id, origin.session_id[:12])} "


def _block_lines(message: Message, *, full: bool) -> list[str]:
    """Each block as text lines (wrapped later): text in full, the rest as one line."""
    from ._common import block_summary

    lines: list[str] = []
    for block in message.content:
        text = getattr(block, "text", None)
        if block.type == "text" and isinstance(text, str):
            paragraphs = text.strip("\n").splitlines() or [""]
            if not full and len(paragraphs) > _TEXT_LINES:
                hidden = len(paragraphs) - _TEXT_LINES
                paragraphs = [*paragraphs[:_TEXT_LINES], f"[… {hidden} more lines; --full shows them]"]
            lines.extend(paragraphs)
            cited = getattr(block, "citations", None)
            if cited:
                lines.append(f"[{len(cited)} citation{'s' if len(cited) != 1 else ''}]")
        elif block.type == "tool_result":
            inner = " ".join(getattr(b, "text", f"[{b.type}]") for b in getattr(block, "content", []))
            error = " (error)" if getattr(block, "is_error", False) else ""
            lines.append(f"← {block.tool_use_id}{error}: {' '.join(inner.split())}")
        elif block.type == "tool_use":
            name, args = getattr(block, "name", "?"), getattr(block, "input", {})
            lines.append(f"→ {name}({_args(args)})  {block.id}")
        else:
            lines.append(f"[{block_summary(_only(message, block))}]")
    return lines


def _args(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text[1:-1] if text.startswith("{") else text


def _only(message: Message, block: Any) -> Message:
    return message.model_copy(update={"content": [block]})


def message_header(index: int, message: Message) -> str:
    """`#3 assistant · model · 1,234 in / 56 out · $0.000123` (+ status when not complete)."""
    parts = [f"#{index} {message.role.value}"]
    meta = message.metadata
    if meta.model:
        routed = f" ({meta.routing.mode.value})" if meta.routing is not None else ""
        parts.append(meta.model + routed)
    usage = meta.usage
    inp, out, cached = tokens_of(message)
    if usage is not None and not (inp or out or cached):  # e.g. a reply imported from a request body
        parts.append("no usage recorded")
    elif usage is not None:
        parts.append(f"{inp:,} in / {out:,} out" + (f" ({cached:,} cached)" if cached else ""))
        parts.append(reply_cost(usage))
    if meta.status.value != "complete":
        parts.append(meta.status.value)
    return " · ".join(parts)


class _Wrapper(textwrap.TextWrapper):
    """textwrap's wrapping, with a word longer than a line cut into its lines in one pass.

    textwrap cuts such a word a line at a time, each time copying what is left of it: the
    time grows with the square of the word's length (one 8 MiB line without a space took
    18-38 s to show). The lines are the same: the first piece fills what is left of the
    current line, each next piece a whole line.
    """

    def _handle_long_word(
        self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int
    ) -> None:
        space_left = 1 if width < 1 else width - cur_len
        chunk = reversed_chunks[-1]
        if not self.break_long_words or self.break_on_hyphens or space_left < 1 or not chunk.strip():
            super()._handle_long_word(reversed_chunks, cur_line, cur_len, width)
            return
        reversed_chunks.pop()
        cur_line.append(chunk[:space_left])
        step = max(self.width - len(self.subsequent_indent), 1)
        reversed_chunks.extend(reversed([chunk[i : i + step] for i in range(space_left, len(chunk), step)]))


def wrap(text: str, columns: int, *, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    """`text` wrapped to `columns` (long words broken, never at hyphens), in linear time."""
    wrapper = _Wrapper(
        columns,
        initial_indent=initial_indent,
        subsequent_indent=subsequent_indent,
        break_long_words=True,
        break_on_hyphens=False,
    )
    return wrapper.wrap(text)


def transcript(
    messages: Iterable[Message], *, start: int = 0, full: bool = False, columns: int | None = None
) -> Iterator[str]:
    """The lines of `show`: a header per message and its blocks wrapped to `columns`
    (`start` numbers the first message)."""
    columns = columns or width()
    for offset, message in enumerate(messages):
        header = inert(message_header(start + offset, message))
        yield from wrap(header, columns, subsequent_indent="    ")
        for line in _block_lines(message, full=full):
            yield from wrap(
                inert(line, layout=True), columns, initial_indent="  ", subsequent_indent="  "
            ) or [""]


def tool_call_lines(records: Sequence[Any], *, columns: int | None = None) -> list[str]:
    """One line per stored tool call: canonical id, name, status, provider and its id."""
    columns = columns or width()
    lines = []
    for record in records:
        status = getattr(record.status, "value", record.status)
        where = f"{record.provider} {record.provider_id}" if record.provider else "not sent yet"
        line = inert(f"{record.id} {record.name} {status} ({where})")
        lines.extend(wrap(line, columns, subsequent_indent="    "))
    return lines


def session_totals(store: Any, session_id: str) -> tuple[Totals, list[Exception]]:
    """The session's totals as the database sums them (`Store.session_stats`: no message is
    read into a model to count it), and an error for each row left out: one a newer metis
    wrote, or a damaged one (named, not fatal: the rest of the session, and of the store,
    still counts)."""
    stats = store.session_stats(session_id)
    totals = Totals(
        messages=stats.messages,
        tokens=stats.tokens,
        cost=stats.cost,
        with_usage=stats.with_usage,
        unpriced=stats.unpriced,
        billed=stats.billed,
        first_text=short_title(stats.first_user_text) if stats.first_user_text else None,
    )
    return totals, list(stats.problems)


def session_messages(store: Any, session_id: str, *, start: int, stop: int) -> Iterator[Message]:
    """The readable messages of the session numbered `start` to `stop` (exclusive) in
    append order, read a page at a time: what `show` prints after counting them, so a
    message appended meanwhile is not shown beside totals that leave it out. Every message
    is read (`ops.audited` names the broken tool links of the whole session on stderr)."""
    from ..ops import audited

    readable = (message for page in store.read_pages(session_id) for message in page.messages)
    for index, message in enumerate(audited(session_id, readable)):
        if start <= index < stop:
            yield message


def _session_header(info: SessionInfo, totals: Totals, newer: Sequence[Exception]) -> Iterator[str]:
    """The lines `show` prints above the transcript (each one line: `inert` escapes the rest)."""
    yield f"session {info.id}"
    yield f"  title      {session_title(info, totals)}"
    source = session_source(info)
    if source:
        yield f"  source     {source}"
    if info.parent_session_id:
        at = f" at message {info.fork_message_id}" if info.fork_message_id else ""
        yield f"  forked     from {info.parent_session_id}{at}"
    yield f"  workspace  {info.workspace_path}"
    yield f"  model      {info.active_model or '-'}"
    yield (
        f"  created    {info.created_at:%Y-%m-%d %H:%M:%S} UTC, updated {info.updated_at:%Y-%m-%d %H:%M:%S}"
    )
    billed = "" if totals.billed is None else f" (billed {money(totals.billed)})"
    yield f"  totals     {totals.messages} messages · {totals.tokens:,} tokens · {cost_text(totals)}{billed}"
    # Rows a newer metis wrote are named here, and every other message is still shown.
    for error in newer:
        yield f"  skipped    {error}"
    yield ""


def session_lines(
    store: Any, session_id: str, *, last: int | None = None, full: bool = False
) -> Iterator[str]:
    """Everything `show` prints for one session, line by line.

    The session is read twice, a page at a time (`Store.read_pages`): once for the totals
    the header gives, once for the transcript, so a session of any length is shown holding
    one page of it.
    """
    info = store.get_session(session_id)
    totals, newer = session_totals(store, session_id)
    columns = width()
    yield from map(inert, _session_header(info, totals, newer))
    start = 0
    if last is not None and last < totals.messages:
        start = totals.messages - last
        yield f"[… {start} earlier messages; --last N shows more]"
    shown = session_messages(store, session_id, start=start, stop=totals.messages)
    yield from transcript(shown, start=start, full=full, columns=columns)
    records = list(store.tool_calls(session_id))
    if records:
        yield ""
        yield "tool calls"
        yield from tool_call_lines(records, columns=columns)


__all__ = [
    "TITLE_LENGTH",
    "Totals",
    "cost_text",
    "first_user_text",
    "grid",
    "message_header",
    "session_lines",
    "session_messages",
    "session_source",
    "session_title",
    "session_totals",
    "sessions_lines",
    "short_ids",
    "short_title",
    "tool_call_lines",
    "transcript",
    "width",
    "wrap",
]


PRICE_HEADERS = ("#", "model", "in/out/cached", "stored", "under", "repriced", "by", "billed", "billed-local")
_SAME_FOR_ALL = {4: "stored under", 6: "repriced by"}
"""Columns said once, in a note, when every row has the same value (an 80-column table)."""


@dataclass
class PriceRows:
    """The table of `metis price` (headers, rows, a total row) and notes: a column whose
    value every row shares said once, why rows are unpriced, replies not priced."""

    headers: tuple[str, ...] = PRICE_HEADERS
    lines: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fold(self) -> None:
        """Drop the version columns every row agrees on and the billed columns no row has."""
        rows = self.lines[:-1]
        drop: set[int] = set()
        said = []
        for index, label in _SAME_FOR_ALL.items():
            values = {row[index] for row in rows}
            if len(values) == 1:
                drop.add(index)
                said.append(f"{label} {values.pop()}")
        self.notes[:0] = said
        if all(row[7] == "-" for row in rows):
            drop |= {7, 8}
            self.notes.append("no reply carries a billed cost from its provider")
        keep = [i for i in range(len(self.headers)) if i not in drop]
        self.headers = tuple(self.headers[i] for i in keep)
        self.lines = [tuple(row[i] for i in keep) for row in self.lines]


@dataclass
class _Sum:
    """A column total that knows how many of its rows had no figure."""

    total: Decimal = field(default_factory=Decimal)
    known: int = 0
    unknown: int = 0

    def add(self, value: Decimal | None) -> None:
        if value is None:
            self.unknown += 1
        else:
            self.total += value
            self.known += 1

    def text(self) -> str:
        if not self.known:
            return UNPRICED if self.unknown else "-"
        return money(self.total) + ("+" if self.unknown else "")


def _signed(value: Decimal) -> str:
    return ("-" if value < 0 else "+") + money(abs(value))


def price_rows(
    messages: Iterable[Message],
    catalog: Any,
    *,
    day: Any = None,
    version: str | None = None,
    table: Any = None,
) -> PriceRows:
    """Each priced reply: stored cost, the cost again (at its own date, at `day`, under
    `version` or an override `table`), the provider's billed cost and billed - repriced.

    Replies with nothing counted are not priced (a note counts them); an unpriced cost is
    `unpriced`, never $0, and a total over rows some of which are unpriced ends in `+`.
    """
    from ..errors import PricingError
    from ..pricing import price_as_of, reprice

    rows = PriceRows()
    stored_sum, again_sum, billed_sum, diff_sum = _Sum(), _Sum(), _Sum(), _Sum()
    reasons: dict[str, str] = {}
    no_usage = 0
    for i, message in enumerate(messages):
        usage, model = message.metadata.usage, message.metadata.model
        if usage is None or model is None:
            continue
        if usage.pricing_version == NO_USAGE:
            no_usage += 1
            continue
        key = catalog.resolve(model).pricing_key
        try:
            if day is not None:
                again = price_as_of(usage, pricing_key=key, day=day, model=model)
            else:
                again = reprice(
                    usage, pricing_key=key, version=version, table=table, model=model, at=message.created_at
                )
            again_cost = None if again.pricing_version == UNPRICED else again.cost_usd
            by = again.pricing_version
            if again_cost is None:
                reasons.setdefault(model, again.unpriced_reason or "no price")
        except PricingError as exc:  # an override table without this model
            again_cost, by = None, UNPRICED
            reasons.setdefault(model, str(exc))
        stored = None if usage.pricing_version == UNPRICED else usage.cost_usd
        if stored is None and usage.unpriced_reason:
            reasons.setdefault(model, usage.unpriced_reason)
        billed = usage.billed_cost_usd
        diff = billed - again_cost if billed is not None and again_cost is not None else None
        stored_sum.add(stored)
        again_sum.add(again_cost)
        if billed is not None:
            billed_sum.add(billed)
            diff_sum.add(diff)
        rows.lines.append(
            (
                str(i),
                model,
                "/".join(map(str, tokens_of(message))),
                UNPRICED if stored is None else money(stored),
                usage.pricing_version,
                UNPRICED if again_cost is None else money(again_cost),
                by,
                money(billed),
                "-" if diff is None else _signed(diff),
            )
        )
    diff_text = "-" if not diff_sum.known else _signed(diff_sum.total) + ("+" if diff_sum.unknown else "")
    rows.lines.append(
        ("", "total", "", stored_sum.text(), "", again_sum.text(), "", billed_sum.text(), diff_text)
    )
    rows.fold()
    for model, reason in sorted(reasons.items()):
        rows.notes.append(f"unpriced {model}: {reason}")
    if stored_sum.unknown or again_sum.unknown:
        rows.notes.append("a total ending in + leaves out unpriced rows: their cost is unknown, not $0")
    if no_usage:
        rows.notes.append(
            f"{no_usage} repl{'y' if no_usage == 1 else 'ies'} with no usage recorded: not priced"
        )
    return rows
