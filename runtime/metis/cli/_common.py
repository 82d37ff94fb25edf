"""What every `metis` command shares: the store, reading input, capturing drops, numbers.

Commands stay short by leaning on these: `State.store` opens the SQLite store lazily
(commands that never touch it, like `convert`, never create a file), `read_json`
accepts a path or `-`, `WarnCapture` collects the WARN lines of a command's work (the
adapters' lossy-projection drops, spec §7.3) so it can report what it dropped, why and where.

Stored content is untrusted: a title, a tool's input or a reply may hold terminal control
sequences (clear the screen, set the window title, write the clipboard with OSC 52, fake a
hyperlink, overwrite a line with CR or backspace, reorder it with bidi overrides). Every
human view passes what it prints through `inert`, and every JSON output through
`json_safe` (or `json_safe_bytes`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import MetisError, SessionNotFoundError

if TYPE_CHECKING:  # imported where used: `metis --help` must not pay for them
    from decimal import Decimal

    from metis_schema.v3 import Message
    from rich.console import Console

    from ..adapters import WireImport
    from ..store import Store


@dataclass
class State:
    """Global options, and the store opened on first use."""

    db: str | None = None
    """`--db` (before or after the subcommand) or METIS_DB; None means the default store."""
    _store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from ..store import open_store

            self._store = open_store(self.db)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal acts on instead of showing: C0 controls (ESC starts every CSI and OSC
sequence), DEL, the 8-bit C1 controls (0x9b is CSI, 0x9d OSC on terminals that take them),
and the bidi embeddings, overrides and isolates, which reorder the text around them."""
_CONTROLS_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""`_CONTROLS` less tab and newline, for text laid out over several lines."""
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What JSON may hold raw in a string but a terminal acts on (JSON writers escape C0)."""
_JSON_UNSAFE_BYTES = re.compile(b"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
"""`_JSON_UNSAFE` in UTF-8: each alternative begins with a lead byte, so it matches only
whole characters."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str, *, layout: bool = False) -> str:
    """`text` as a terminal may be given it: each control character (see `_CONTROLS`) shown
    as a visible escape (`\\x1b`, `\\x9b`, `\\u202e`) instead of acted on. `layout`: keep
    tab and newline (a text laid out over lines). The one sanitizer of every human view;
    one regex pass, linear in the text."""
    return (_CONTROLS_BUT_LAYOUT if layout else _CONTROLS).sub(_escape, text)


def json_safe(text: str) -> str:
    """JSON text with DEL, C1 and bidi controls written as `\\u` escapes (the same string
    to any JSON reader; inert in a terminal). JSON writers already escape C0."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_safe_bytes(data: bytes) -> bytes:
    """`json_safe` for UTF-8 JSON text (orjson's output), without decoding it."""
    return _JSON_UNSAFE_BYTES.sub(lambda m: b"\\u%04x" % ord(m.group().decode()), data)


def console(*, stderr: bool = False) -> Console:
    """A rich console on click's current streams; wide when output is not a terminal."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, soft_wrap=False, highlight=False)


def read_text(source: str) -> str:
    """The text of a file, or of stdin for `-`."""
    if source == "-":
        return sys.stdin.read()
    return Path(source).read_text(encoding="utf-8")


def read_json(source: str) -> Any:
    """A JSON document from a file or stdin (`-`); a clear error when it is not JSON."""
    from .. import _json

    text = read_text(source)
    try:
        return _json.loads(text)
    except json.JSONDecodeError as exc:
        name = "stdin" if source == "-" else source
        raise click.ClickException(
            f"{name} is not JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
        ) from None


def dump_json(value: Any) -> str:
    """Pretty JSON for people and pipes alike (control characters escaped: `json_safe`)."""
    return json_safe(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def resolve_session_id(store: Store, ref: str) -> str:
    """A session id from an id, a unique prefix of one, or `last` (the latest updated)."""
    infos = store.list_sessions()
    if ref == "last" and infos:
        return max(infos, key=lambda info: (info.updated_at, info.id)).id
    ids = [info.id for info in infos]
    if ref in ids:
        return ref
    matches = [i for i in ids if i.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFoundError(f"no session {ref!r}", hint="`metis sessions` lists them")
    raise click.ClickException(
        f"{ref!r} matches {len(matches)} sessions: {', '.join(matches[:5])}; give more of the id"
    )


def stored_request(store: Store, session_id: str, model: str) -> WireImport:
    """A stored session as the request `model` would be sent now: the messages a provider
    is sent (`ops.compact.replayable`), the tools and options in force (`metis.settings`),
    the session's tool id map and workspace; what `convert --session` and `replay` write."""
    from ..adapters import AdapterOptions, WireImport
    from ..ops.compact import replayable
    from ..settings import in_force

    info = store.get_session(session_id)
    tools, fields = in_force(store, session_id)  # the tools and options it was sent with
    options = AdapterOptions(
        model=model,
        session_id=session_id,
        tool_ids=store.load_tool_ids(session_id),
        workspace=Path(info.workspace_path),
        **fields,
    )
    return WireImport(replayable(list(store.load_session(session_id))), tools, options)


# --- drops --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drop:
    """One block an adapter dropped (or another adapter warning)."""

    adapter: str | None
    block_type: str | None
    message_id: str | None
    reason: str
    text: str
    """The whole log line (it names the wire path when the warning is not about a block)."""

    def as_dict(self, index: int | None = None) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "block_type": self.block_type,
            "message_index": index,
            "message_id": self.message_id,
            "reason": self.reason,
            "log": self.text,
        }


class WarnCapture(logging.Handler):
    """The WARN records of logger `name` and those below it while active (a context manager),
    kept for the command to report where they belong; the one capture every command uses.

    While active they reach this handler only: the logger's own handlers (the command's
    `warning:` printer on `metis`) and its parents' are set aside, so nothing is printed
    twice or unnamed; records of other loggers pass as before. `convert` and `replay`
    capture `metis.adapters` (the lossy-projection drops, as `drops`); `import` captures
    all of `metis` while one exchange is read, to print each with the exchange it is about.
    The logger's level, handlers and propagation are put back on exit."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.WARNING)
        self.logger_name = name
        self.records: list[logging.LogRecord] = []
        self._saved: tuple[int, list[logging.Handler], bool] = (logging.NOTSET, [], True)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    @property
    def drops(self) -> list[Drop]:
        """The records as drops (the adapters' §7.3 fields; a record without them is a
        warning whose reason is its line)."""
        return [_drop(record) for record in self.records]

    def __enter__(self) -> WarnCapture:
        logger = logging.getLogger(self.logger_name)
        self._saved = (logger.level, logger.handlers, logger.propagate)
        logger.handlers, logger.propagate = [self], False
        if logger.level == logging.NOTSET or logger.level > logging.WARNING:
            logger.setLevel(logging.WARNING)
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger(self.logger_name)
        level, logger.handlers, logger.propagate = self._saved
        logger.setLevel(level)


def _drop(record: logging.LogRecord) -> Drop:
    reason = getattr(record, "reason", None)
    return Drop(
        adapter=getattr(record, "adapter", None),
        block_type=getattr(record, "block_type", None),
        message_id=getattr(record, "message_id", None),
        reason=str(reason) if reason is not None else record.getMessage(),
        text=record.getMessage(),
    )


def drop_lines(drops: Sequence[Drop], messages: Sequence[Message]) -> list[str]:
    """Human lines for a drop report: which block of which message, and why."""
    from ..canonical import KNOWN_BLOCK_TYPES

    where = {m.id: (i, m.role.value) for i, m in enumerate(messages)}
    lines = []
    for drop in drops:
        index, role = where.get(drop.message_id or "", (None, None))
        at = f"message #{index} ({role})" if index is not None else (drop.message_id or "request")
        by = f" [{drop.adapter}]" if drop.adapter else ""
        if not drop.block_type:
            lines.append(f"warning{by}: {drop.text}")
        elif drop.block_type == "option":  # another provider's option, no block (`adapters/_kit/options.py`)
            lines.append(f"not sent to {drop.adapter or 'the target'}: {drop.reason}")
        elif drop.text.startswith("dropped "):  # the block itself went (`losses.DROPPED`)
            lines.append(f"dropped {drop.block_type} block from {at}{by}: {drop.reason}")
        elif drop.block_type in KNOWN_BLOCK_TYPES:  # part of the block went (a field, a citation)
            lines.append(f"trimmed {drop.block_type} block of {at}{by}: {drop.reason}")
        else:  # a part that is no block (a cache point, a system role): the message went without it
            lines.append(f"{drop.block_type} of {at}{by} not sent: {drop.reason}")
    return lines


def report_lines(lines: Sequence[str], columns: int | None) -> list[str]:
    """A drop report's lines indented under its summary and, for a terminal (`columns`),
    wrapped at spaces: a path or a model id is never cut in two (a terminal would cut it
    mid-word at its edge); a word longer than the line stays whole on a line of its own."""
    out = []
    for line in lines:
        if columns is None:
            out.append(f"  {line}")
            continue
        out.extend(
            textwrap.wrap(
                line,
                columns,
                initial_indent="  ",
                subsequent_indent="      ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return out


def echo_report(lines: Sequence[str]) -> None:
    """`report_lines` on stderr, in yellow: wrapped to the terminal's width when stderr is one."""
    from ._tables import width

    columns = width() if sys.stderr.isatty() else None
    for line in report_lines(lines, columns):
        echo_err(line, color="yellow")


def drop_dicts(drops: Sequence[Drop], messages: Sequence[Message]) -> list[dict[str, Any]]:
    where = {m.id: i for i, m in enumerate(messages)}
    return [d.as_dict(where.get(d.message_id or "")) for d in drops]


# --- numbers and summaries -----------------------------------------------------------------


def block_summary(message: Message, limit: int = 60) -> str:
    """One line describing a message's blocks (text excerpts, tool names, ids)."""
    from metis_schema.v3 import (
        AudioBlock,
        CompactionBlock,
        DocumentBlock,
        ImageBlock,
        RedactedThinkingBlock,
        SearchResultBlock,
        ServerToolResultBlock,
        ServerToolUseBlock,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolUseBlock,
        VideoBlock,
    )

    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text = " ".join(block.text.split())
            parts.append(f'"{text[:limit]}{"…" if len(text) > limit else ""}"')
        elif isinstance(block, ToolUseBlock):
            parts.append(f"tool_use {block.name} {block.id}")
        elif isinstance(block, ToolResultBlock):
            parts.append(f"tool_result{' (error)' if block.is_error else ''} → {block.tool_use_id}")
        elif isinstance(block, ImageBlock):
            parts.append(f"image {block.media_type} ({block.source.kind.value})")
        elif isinstance(block, ThinkingBlock):
            parts.append(f"thinking ({len(block.text)} chars{', signed' if block.signature else ''})")
        elif isinstance(block, RedactedThinkingBlock):
            parts.append("redacted_thinking")
        elif isinstance(block, DocumentBlock | AudioBlock | VideoBlock):
            title = getattr(block, "title", None)
            named = f' "{title[:limit]}"' if title else ""
            parts.append(f"{block.type}{named} {block.media_type} ({block.source.kind.value})")
        elif isinstance(block, SearchResultBlock):
            parts.append(f'search_result "{block.title[:limit]}" {block.source[:limit]}')
        elif isinstance(block, ServerToolUseBlock):
            parts.append(f"server_tool_use {block.provider} {block.name} {block.id}")
        elif isinstance(block, ServerToolResultBlock):
            error = " (error)" if block.is_error else ""
            parts.append(f"server_tool_result{error} {block.provider} {block.name} → {block.tool_use_id}")
        elif isinstance(block, CompactionBlock):
            what = f"{len(block.summary)} chars of summary" if block.summary else "opaque"
            parts.append(f"compaction by {block.provider} ({what})")
    return "; ".join(parts) or "(empty)"


def money(value: Decimal | None) -> str:
    """A cost for display: exact, with at least 6 decimals, `-` when unknown."""
    if value is None:
        return "-"
    text = format(value.normalize(), "f") if value else "0"
    whole, _, frac = text.partition(".")
    return f"${whole}.{frac.ljust(6, '0')}"


def tokens_of(message: Message) -> tuple[int, int, int]:
    """(whole prompt, output, cached input) of a message; zeros without usage.

    The prompt counts cache reads and writes too (`usage.prompt_tokens`), as every
    command and the OpenTelemetry export count it, so `show`, `price` and `sessions` agree."""
    from ..usage import prompt_tokens

    usage = message.metadata.usage
    if usage is None:
        return (0, 0, 0)
    return (prompt_tokens(usage), usage.output_tokens, usage.cached_input_tokens)


def echo_err(text: str, *, color: str | None = None) -> None:
    """A line on stderr (`inert`: it may quote stored content)."""
    text = inert(text, layout=True)
    click.echo(click.style(text, fg=color) if color else text, err=True)


__all__ = [
    "Drop",
    "MetisError",
    "State",
    "WarnCapture",
    "block_summary",
    "console",
    "drop_dicts",
    "drop_lines",
    "dump_json",
    "echo_err",
    "echo_report",
    "inert",
    "json_safe",
    "json_safe_bytes",
    "money",
    "read_json",
    "read_text",
    "report_lines",
    "resolve_session_id",
    "stored_request",
    "tokens_of",
]
