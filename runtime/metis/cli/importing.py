"""`metis import`: recorded traffic, as people keep it, becomes stored sessions.

FILES may be request bodies, `{request, response}` exchanges (JSON or JSON lines), VCR
cassettes (YAML or JSON) and HAR files, or folders of them (searched for
`recordings.RECORDING_SUFFIXES`). Each exchange is read by `_exchange` (which adapter,
which model, the reply, streamed or not, or an error), then placed by
`recordings.threads`: a new session, the continuation of a stored one (only the turns
past the stored end are appended), or a duplicate (nothing stored): importing the same
input twice adds nothing. Interactions that are no LLM call (a model list, a token count)
are skipped. Each file gets a report line (stored, appended, duplicate, skipped, dropped,
refused) on stderr, and every warning names the exchange it is about; stdout has the id of
every session stored or appended to. An exchange that fails is refused on its own (its
session, when new, is deleted again: nothing half-written); the exit status is 1 when any
was, and `--fail-fast` stops at the first.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import MetisError
from ._app import db_option
from ._common import State, WarnCapture, echo_err
from ._shapes import PROVIDER

if TYPE_CHECKING:
    from metis_schema.v3 import Message

    from ..recordings import Interaction
    from ..recordings.threads import Placement, Threads
    from ._exchange import Parsed

PROGRESS_THRESHOLD = 3
"""More exchanges than this get a progress bar."""
OUTCOMES = ("stored", "appended", "duplicate", "skipped", "dropped", "refused")
"""The per-file report's counts, in order: `dropped` counts content the import could not carry."""


@dataclass
class _File:
    """One input file: its exchanges (once read), or why it could not be read."""

    name: str
    interactions: list[Interaction] = field(default_factory=list)
    error: str | None = None
    counts: Counter[str] = field(default_factory=Counter)
    skips: dict[str, list[str]] = field(default_factory=dict)


def store_parsed(store: Any, parsed: Parsed, *, workspace: str) -> str:
    """Write one parsed exchange as a new session, titled by its first user text, its source
    the file (and interaction) it came from; on any failure the session is removed again."""
    from ..client._session import routing_policy
    from ._tables import first_user_text

    store.create_session(
        workspace,
        active_model=parsed.model,
        routing_policy=routing_policy(parsed.model, "workspace", imported_from=parsed.adapter),
        session_id=parsed.session_id,
        title=first_user_text(parsed.messages),
        source=parsed.where,
    )
    try:
        _record_settings(store, parsed.session_id, parsed)
        if parsed.messages:  # one transaction, links checked across the batch
            store.append_many(parsed.messages, tool_ids=parsed.tool_ids)
        else:
            store.save_tool_ids(parsed.session_id, parsed.tool_ids)
    except BaseException:
        store.delete_session(parsed.session_id)
        raise
    return parsed.session_id


def _record_settings(store: Any, session_id: str, parsed: Parsed) -> None:
    """Record the tools and options the recorded request was sent with (a new revision
    only when they changed), and the exchange its reply answered."""
    from ..settings import record_request

    reply_id = None if parsed.reply is None else parsed.reply.id
    imported = parsed.imported
    record_request(store, session_id, imported.tools, imported.options, parsed.adapter, reply_id=reply_id)


def _inputs(paths: tuple[str, ...]) -> list[str]:
    """The files named, a folder's recordings in name order in its place."""
    from ..recordings import RECORDING_SUFFIXES

    out: list[str] = []
    for path in paths:
        if path != "-" and Path(path).is_dir():
            found = sorted(
                p for p in Path(path).rglob("*") if p.is_file() and p.suffix.lower() in RECORDING_SUFFIXES
            )
            out.extend(str(p) for p in found)
        else:
            out.append(path)
    return out


def _read(name: str) -> _File:
    from ..recordings import read_recording
    from ._common import read_text

    file = _File(name)
    try:
        file.interactions = read_recording(read_text(name), where="stdin" if name == "-" else name)
    except MetisError as exc:
        file.error = str(exc)
    except OSError as exc:
        file.error = f"{exc.filename or name}: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        file.error = f"{name}: not UTF-8 text: {exc.reason}"
    return file


class _Importer:
    """One `metis import` run: the store, the conversations it can match, the options."""

    def __init__(self, store: Any, *, given: str | None, model: str | None, workspace: str) -> None:
        self.store = store
        self.given = given
        self.model = model
        self.workspace = workspace
        self._threads: Threads | None = None
        self.printed: set[str] = set()
        self.unpriced: dict[str, set[str]] = {}

    @property
    def threads(self) -> Threads:
        """Stored imported sessions, read once, when the first exchange needs placing."""
        if self._threads is None:
            from ..recordings.threads import Threads

            self._threads = Threads()
            for info in self.store.list_sessions():
                if (info.routing_policy or {}).get("imported_from"):
                    read = self.store.read_session(info.id)
                    if not read.newer:  # a session with turns this metis cannot read is not matched
                        self._threads.add(info.id, read.messages)
        return self._threads

    def one(self, interaction: Interaction, file: _File) -> None:
        """Import one exchange, counting what became of it in `file`."""
        from ._exchange import Skip, adapter_for, parse

        adapter = adapter_for(interaction, self.given, self.model)
        if isinstance(adapter, Skip):
            file.counts["skipped"] += 1
            file.skips.setdefault(adapter.reason, []).append(interaction.where)
            return
        with WarnCapture("metis") as capture:
            parsed = parse(interaction, adapter, model=self.model)
            placement = self.threads.place(parsed.messages)
            found = self._continued(parsed)
            if placement.kind == "new" and found is not None:
                placement = self._after(found, parsed)
            if placement.kind == "append" and placement.session_id is not None:
                capture.records.clear()  # read again, under the session's own tool ids
                ids = self.store.load_tool_ids(placement.session_id)
                parsed = parse(
                    interaction, adapter, model=self.model, session_id=placement.session_id, tool_ids=ids
                )
            if found is not None:
                from ..continuation import resolved_to

                parsed.messages = resolved_to(parsed.messages, found)
        if placement.kind == "duplicate":
            file.counts["duplicate"] += 1
            return
        for note in [*parsed.notes, *(record.getMessage() for record in capture.records)]:
            echo_err(f"warning: {interaction.where}: {note}", color="yellow")
        file.counts["dropped"] += sum(r.name.startswith("metis.adapters") for r in capture.records)
        if placement.kind == "append" and placement.session_id is not None:
            self._append(placement.session_id, parsed.messages[placement.start :], parsed)
            file.counts["appended"] += 1
        else:
            store_parsed(self.store, parsed, workspace=self.workspace)
            self.threads.add(parsed.session_id, parsed.messages)
            file.counts["stored"] += 1
        self._done(parsed.session_id, parsed.messages, file.name)

    def _continued(self, parsed: Parsed) -> Message | None:
        """The stored reply an exchange continuing a provider-held response names (Responses
        `previous_response_id`; `metis.continuation.find_response`), if the store has it."""
        from ..continuation import find_response

        named = next((m.metadata.continues for m in parsed.messages if m.metadata.continues), None)
        if named is None:
            return None
        return find_response(self.store, named.response_id, provider=named.provider)

    def _after(self, found: Message, parsed: Parsed) -> Placement:
        """Where an exchange continuing stored reply `found` goes: placed as the conversation
        it stands for (the reply's history, then its own messages), so it is appended to the
        imported session that reply ends, or is a duplicate of what is stored there."""
        from ..continuation import linked
        from ..recordings.threads import Placement

        history = self.threads.messages(found.session_id)
        ends = next((i for i, m in enumerate(history) if m.id == found.id), None)
        if ends is None:
            return Placement("new")
        own = linked(self.store, parsed.messages, found, parsed.tool_ids)  # its results answer those calls
        placement = self.threads.place([*history[: ends + 1], *own])
        if placement.kind == "append":
            return Placement("append", placement.session_id, max(0, placement.start - ends - 1))
        return placement

    def _append(self, session_id: str, new: list[Message], parsed: Parsed) -> None:
        """The turns past a stored conversation's end, appended to it in one transaction."""
        self.store.append_many(new, tool_ids=parsed.tool_ids)
        _record_settings(self.store, session_id, parsed)
        self.store.set_active_model(session_id, parsed.model)  # the latest turn's
        self.threads.add(session_id, [*self.threads.messages(session_id), *new])

    def _done(self, session_id: str, messages: list[Message], file: str) -> None:
        if session_id not in self.printed:
            self.printed.add(session_id)
            click.echo(session_id)
        for model in _unpriced_models(messages):
            self.unpriced.setdefault(model, set()).add(file)


def _report(file: _File) -> None:
    if file.error is not None:
        echo_err(f"error: {file.error}", color="red")
        return
    counts = ", ".join(
        f"{file.counts[k]} {k}" for k in OUTCOMES if file.counts[k] or k in ("stored", "refused")
    )
    echo_err(f"{file.name}: {len(file.interactions)} exchange(s): {counts}")
    for reason, places in file.skips.items():
        shown = ", ".join(p.rsplit("#", 1)[-1] for p in places[:10]) + (", ..." if len(places) > 10 else "")
        echo_err(f"  skipped {len(places)}: {reason} (#{shown})")


@db_option
@click.command(name="import")
@click.option(
    "--from",
    "source",
    type=PROVIDER,
    help="Provider whose wire format FILES hold, for files that do not say (no URL); "
    "else it is told from the bodies.",
)
@click.option(
    "--model",
    help="Model (id, alias or wire name) the exchanges were sent to; overrides the body, URL and reply.",
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Workspace root recorded on the sessions.",
)
@click.option("--fail-fast", is_flag=True, help="Stop at the first exchange or file that fails.")
@click.argument("files", nargs=-1, required=True)
@click.pass_obj
def import_(  # noqa: PLR0917 - click passes every option by position
    state: State,
    source: str | None,
    model: str | None,
    workspace: Path,
    fail_fast: bool,
    files: tuple[str, ...],
) -> None:
    """Import recorded traffic from FILES (or folders of them) as sessions.

    A file holds a JSON request body, JSON lines of them, a recorded exchange
    {"request": BODY, "response": REPLY} (the reply a JSON body, a stream, or an error),
    a VCR cassette (YAML) or a HAR file. An exchange that continues a stored conversation
    is appended to it; one already stored adds nothing. Prints the id of every session
    stored or appended to, and a report per file on stderr; the exit status is 1 when any
    exchange or file was refused.
    """
    from rich.progress import Progress

    from ._common import console

    read = [_read(name) for name in _inputs(files)]
    importer = _Importer(state.store, given=source, model=model, workspace=str(workspace.resolve()))
    total = sum(len(f.interactions) for f in read)
    failed: list[str] = []
    with Progress(
        console=console(stderr=True),
        transient=True,
        disable=total <= PROGRESS_THRESHOLD or not sys.stderr.isatty(),
    ) as progress:
        task = progress.add_task("importing", total=total)
        for file in read:
            if file.error is not None and fail_fast:
                raise click.ClickException(file.error)
            for interaction in file.interactions:
                try:
                    importer.one(interaction, file)
                except (click.ClickException, MetisError) as exc:
                    if fail_fast:
                        raise
                    file.counts["refused"] += 1
                    echo_err(f"error: {_error_text(exc, interaction.where)}", color="red")
                progress.advance(task)
            _report(file)
            if file.error is not None or file.counts["refused"]:
                failed.append(file.name)
    for name, where in sorted(importer.unpriced.items()):
        echo_err(
            f"warning: no price for {name}; its usage is stored unpriced ({', '.join(sorted(where))})",
            color="yellow",
        )
    if failed:
        echo_err(f"{len(failed)} of {len(read)} file(s) failed: {', '.join(failed)}", color="red")
        click.get_current_context().exit(1)


def _error_text(exc: click.ClickException | MetisError, where: str) -> str:
    """`where: what`, the place named once (a reader's error already carries it)."""
    if isinstance(exc, click.ClickException):
        text = exc.format_message()
        return text if text.startswith(where.split("#", maxsplit=1)[0]) else f"{where}: {text}"
    if exc.path and exc.path.startswith(where):
        return f"{exc.path}: {exc.message}" + (f". {exc.hint}" if exc.hint else "")
    return f"{where}: {exc}"


def _unpriced_models(messages: list[Message]) -> set[str]:
    from .._price_marks import UNPRICED

    return {
        m.metadata.model or "?"
        for m in messages
        if m.metadata.usage is not None and m.metadata.usage.pricing_version == UNPRICED
    }


COMMANDS = [import_]
