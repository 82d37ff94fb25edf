"""`metis import`: recorded request bodies become stored sessions.

Every body of every file is read before anything is written, and a session whose
messages the store refuses is deleted again, so a bad file never leaves half an import
behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.progress import Progress

from .. import adapters
from ..adapters import WireImport
from ..client._session import routing_policy
from ..errors import MetisError
from ..ids import ToolIdMap, new_session_id
from ._common import State, console, read_json_documents
from .wire import PROVIDER

PROGRESS_THRESHOLD = 3
"""More bodies than this get a progress bar."""


@dataclass
class _Parsed:
    session_id: str
    tool_ids: ToolIdMap
    imported: WireImport
    model: str


def parse_body(provider: str, body: Any, *, where: str) -> _Parsed:
    """Read one recorded request body as canonical messages (nothing stored yet)."""
    if not isinstance(body, Mapping):
        raise click.ClickException(f"{where}: a request body must be a JSON object")
    session_id = new_session_id()
    tool_ids = ToolIdMap(session_id)
    try:
        imported = adapters.get(provider).from_wire_request(
            dict(body), session_id=session_id, tool_ids=tool_ids
        )
    except MetisError as exc:
        raise click.ClickException(f"{where}: {exc}") from None
    return _Parsed(session_id, tool_ids, imported, imported.options.model)  # a catalog id (import_model)


def store_parsed(store: Any, parsed: _Parsed, *, provider: str, workspace: str) -> str:
    """Write one parsed body as a new session; on any failure the session is removed again."""
    store.create_session(
        workspace,
        active_model=parsed.model,
        routing_policy=routing_policy(parsed.model, "workspace", imported_from=provider),
        session_id=parsed.session_id,
    )
    try:
        if parsed.imported.messages:  # one transaction, links checked across the batch
            store.append_many(parsed.imported.messages, tool_ids=parsed.tool_ids)
        else:
            store.save_tool_ids(parsed.session_id, parsed.tool_ids)
    except BaseException:
        store.delete_session(parsed.session_id)
        raise
    return parsed.session_id


@click.command(name="import")
@click.option(
    "--from", "source", type=PROVIDER, required=True, help="Provider whose request bodies FILES hold."
)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Workspace root recorded on the sessions.",
)
@click.argument("files", nargs=-1, required=True)
@click.pass_obj
def import_(state: State, source: str, workspace: Path, files: tuple[str, ...]) -> None:
    """Import recorded request bodies (JSON, or JSON lines of bodies) from FILES into new sessions."""
    parsed: list[_Parsed] = []
    for file in files:
        docs = read_json_documents(file)
        for i, doc in enumerate(docs):
            parsed.append(parse_body(source, doc, where=file if len(docs) == 1 else f"{file}:{i + 1}"))
    root = str(workspace.resolve())
    with Progress(
        console=console(stderr=True), transient=True, disable=len(parsed) <= PROGRESS_THRESHOLD
    ) as progress:
        task = progress.add_task("importing", total=len(parsed))
        for item in parsed:
            click.echo(store_parsed(state.store, item, provider=source, workspace=root))
            progress.advance(task)


COMMANDS = [import_]
