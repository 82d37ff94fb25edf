"""What `metis sessions`, `metis show` and `metis demo` print, laid out for the terminal's width.

`show` is a transcript, not a table: one header line per message (role, model, tokens,
cost, status) and its blocks wrapped beneath it at the full width, so an 80-column
terminal gets 80-column lines instead of a nine-column table whose text column is a
few characters wide. `sessions` is a table whose id column holds the shortest prefix
that still tells the sessions apart (every command takes a unique prefix).
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._common import cost_of, money, tokens_of, total_cost, total_tokens

if TYPE_CHECKING:
    from metis_schema.v2 import Message

    from ..store import SessionInfo

UNPRICED = "unpriced"
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


def first_user_text(messages: Sequence[Message]) -> str | None:
    """The first non-blank text a user wrote in `messages`, as a title."""
    for message in messages:
        if message.role.value == "user":
            for block in message.content:
                text = getattr(block, "text", None)
                if isinstance(text, str) and (title := short_title(text)):
                    return title
    return None


def session_title(info: SessionInfo, messages: Sequence[Message]) -> str:
    """The recorded title, else the first user text (a session stored without one)."""
    return info.title or first_user_text(messages) or "(untitled)"


def session_source(info: SessionInfo) -> str | None:
    """Where the session came from (`chat`, `demo`, an imported file), when recorded."""
    return info.source


def cost_text(messages: Sequence[Message], *, places: int | None = None) -> str:
    """Total cost (exact, or to `places` decimals); `-` without usage, `unpriced` when none
    of it was priced, and a `+` when some was not."""
    priced = [u for m in messages if (u := m.metadata.usage) is not None]
    if not priced:
        return "-"
    unpriced = sum(1 for u in priced if u.pricing_version == UNPRICED)
    if unpriced == len(priced):
        return UNPRICED
    total = total_cost(messages)
    text = money(total) if places is None else f"${total:.{places}f}"
    return text + ("+" if unpriced else "")


def sessions_lines(rows: Iterable[tuple[SessionInfo, Sequence[Message]]]) -> list[str]:
    """The `metis sessions` table: id prefix, last change (UTC), title, messages, tokens, cost."""
    rows = list(rows)
    short = short_ids([info.id for info, _ in rows])
    cells = [
        (
            short[info.id],
            info.updated_at.strftime("%m-%d %H:%M"),
            _forked(info, short) + session_title(info, messages),
            str(len(messages)),
            f"{total_tokens(messages):,}",
            cost_text(messages, places=4),  # `show` has the exact figure
        )
        for info, messages in rows
    ]
    headers = ("id", "updated", "title", "msgs", "tokens", "cost")
    return grid(headers, cells, flex=2, right=(3, 4, 5))


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
        parts.append(f"{inp + cached:,} in / {out:,} out" + (f" ({cached:,} cached)" if cached else ""))
        parts.append(UNPRICED if usage.pricing_version == UNPRICED else money(cost_of(message)))
    if meta.status.value != "complete":
        parts.append(meta.status.value)
    return " · ".join(parts)


def transcript(
    messages: Sequence[Message], *, start: int = 0, full: bool = False, columns: int | None = None
) -> list[str]:
    """The lines of `show`: a header per message and its blocks wrapped to `columns`."""
    columns = columns or width()
    out: list[str] = []
    for offset, message in enumerate(messages):
        out.extend(textwrap.wrap(message_header(start + offset, message), columns, subsequent_indent="    "))
        for line in _block_lines(message, full=full):
            out.extend(
                textwrap.wrap(
                    line,
                    columns,
                    initial_indent="  ",
                    subsequent_indent="  ",
                    break_long_words=True,
                    break_on_hyphens=False,
                )
                or [""]
            )
    return out


def tool_call_lines(records: Sequence[Any], *, columns: int | None = None) -> list[str]:
    """One line per stored tool call: canonical id, name, status, provider and its id."""
    columns = columns or width()
    lines = []
    for record in records:
        status = getattr(record.status, "value", record.status)
        where = f"{record.provider} {record.provider_id}" if record.provider else "not sent yet"
        lines.extend(
            textwrap.wrap(f"{record.id} {record.name} {status} ({where})", columns, subsequent_indent="    ")
        )
    return lines


def session_lines(store: Any, session_id: str, *, last: int | None = None, full: bool = False) -> list[str]:
    """Everything `show` prints for one session."""
    info = store.get_session(session_id)
    read = store.read_session(session_id)
    messages = read.messages
    columns = width()
    head = [f"session {info.id}", f"  title      {session_title(info, messages)}"]
    source = session_source(info)
    if source:
        head.append(f"  source     {source}")
    if info.parent_session_id:
        at = f" at message {info.fork_message_id}" if info.fork_message_id else ""
        head.append(f"  forked     from {info.parent_session_id}{at}")
    head += [
        f"  workspace  {info.workspace_path}",
        f"  model      {info.active_model or '-'}",
        f"  created    {info.created_at:%Y-%m-%d %H:%M:%S} UTC, updated {info.updated_at:%Y-%m-%d %H:%M:%S}",
        f"  totals     {len(messages)} messages · {total_tokens(messages):,} tokens · {cost_text(messages)}",
    ]
    # Rows a newer metis wrote are named here, and every other message is still shown.
    head += [f"  skipped    {error}" for error in read.newer]
    head.append("")
    start = 0
    if last is not None and last < len(messages):
        start = len(messages) - last
        head.append(f"[… {start} earlier messages; --last N shows more]")
    body = transcript(messages[start:], start=start, full=full, columns=columns)
    records = list(store.tool_calls(session_id))
    tail = ["", "tool calls", *tool_call_lines(records, columns=columns)] if records else []
    return [*head, *body, *tail]


__all__ = [
    "TITLE_LENGTH",
    "UNPRICED",
    "cost_text",
    "first_user_text",
    "grid",
    "message_header",
    "session_lines",
    "session_source",
    "session_title",
    "sessions_lines",
    "short_ids",
    "short_title",
    "tool_call_lines",
    "transcript",
    "width",
]
