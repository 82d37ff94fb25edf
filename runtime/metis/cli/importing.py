"""`metis import`: recorded request bodies (and their replies) become stored sessions.

Each file is imported on its own: a file that cannot be read or whose messages the store
refuses is reported and skipped, the rest still import, and the command exits non-zero
at the end when any file failed (`--fail-fast` stops at the first). A session whose
messages the store refuses is deleted again, so a bad file never leaves half a session
behind. A file may hold a bare request body, JSON lines of them, or a recorded exchange
`{"request": BODY, "response": REPLY}`; then the reply is imported too, as the session's
last assistant message, priced like any reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import MetisError
from ._app import db_option
from ._common import State, echo_err, read_json_documents
from ._shapes import PROVIDER, refuse_mismatch

if TYPE_CHECKING:
    from metis_schema.v3 import Message

    from ..adapters import WireImport
    from ..ids import ToolIdMap

PROGRESS_THRESHOLD = 3
"""More bodies than this get a progress bar."""


@dataclass
class _Parsed:
    session_id: str
    tool_ids: ToolIdMap
    imported: WireImport
    model: str
    where: str
    reply: Message | None = None
    messages: list[Message] = field(default_factory=list)


def _exchange(doc: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """(request body, response body) of a recorded exchange, else None (a bare body)."""
    if set(doc) - {"request", "response", "comment"} or "request" not in doc or "response" not in doc:
        return None
    request, response = doc["request"], doc["response"]
    if isinstance(request, Mapping) and isinstance(request.get("body"), Mapping):
        request = request["body"]
    if isinstance(response, Mapping):
        for key in ("json", "body"):
            if isinstance(response.get(key), Mapping):
                response = response[key]
                break
    return request, response


def parse_body(provider: str, doc: Any, *, where: str) -> _Parsed:
    """Read one recorded body (or exchange) as canonical messages (nothing stored yet)."""
    from .. import adapters
    from ..assembly import RequestContext
    from ..ids import ToolIdMap, new_session_id

    if not isinstance(doc, Mapping):
        raise click.ClickException(f"{where}: a request body must be a JSON object")
    pair = _exchange(doc)
    body, response = pair if pair is not None else (doc, None)
    if not isinstance(body, Mapping):
        raise click.ClickException(f"{where}: the recorded request must be a JSON object")
    refuse_mismatch(body, provider, where=where)
    session_id = new_session_id()
    tool_ids = ToolIdMap(session_id)
    adapter = adapters.get(provider)
    try:
        imported = adapter.from_wire_request(dict(body), session_id=session_id, tool_ids=tool_ids)
        model = imported.options.model  # a catalog id (import_model)
        reply = None
        if response is not None:
            if not isinstance(response, Mapping):
                raise click.ClickException(f"{where}: the recorded response must be a JSON object")
            context = RequestContext(session_id=session_id, model=model, tool_ids=tool_ids)
            reply = adapter.from_wire_response(dict(response), context)
    except MetisError as exc:
        raise click.ClickException(f"{where}: {exc}") from None
    parsed = _Parsed(session_id, tool_ids, imported, model, where, reply)
    parsed.messages = [*imported.messages, *([reply] if reply is not None else [])]
    return parsed


def store_parsed(store: Any, parsed: _Parsed, *, provider: str, workspace: str) -> str:
    """Write one parsed body as a new session, titled by its first user text, its source the
    file (and line) it came from; on any failure the session is removed again."""
    from ..client._session import routing_policy
    from ._tables import first_user_text

    store.create_session(
        workspace,
        active_model=parsed.model,
        routing_policy=routing_policy(parsed.model, "workspace", imported_from=provider),
        session_id=parsed.session_id,
        title=first_user_text(parsed.messages),
        source=parsed.where,
    )
    try:
        from ..settings import record_request  # the tools and options the request was sent with

        reply_id = None if parsed.reply is None else parsed.reply.id
        record_request(
            store,
            parsed.session_id,
            parsed.imported.tools,
            parsed.imported.options,
            provider,
            reply_id=reply_id,
        )
        if parsed.messages:  # one transaction, links checked across the batch
            store.append_many(parsed.messages, tool_ids=parsed.tool_ids)
        else:
            store.save_tool_ids(parsed.session_id, parsed.tool_ids)
    except BaseException:
        store.delete_session(parsed.session_id)
        raise
    return parsed.session_id


def _read_file(source: str, file: str) -> list[_Parsed]:
    docs = read_json_documents(file)
    return [
        parse_body(source, doc, where=file if len(docs) == 1 else f"{file}:{i + 1}")
        for i, doc in enumerate(docs)
    ]


@db_option
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
@click.option("--fail-fast", is_flag=True, help="Stop at the first file that fails.")
@click.argument("files", nargs=-1, required=True)
@click.pass_obj
def import_(state: State, source: str, workspace: Path, fail_fast: bool, files: tuple[str, ...]) -> None:
    """Import recorded request bodies (and their replies) from FILES as sessions.

    A file holds one JSON body, JSON lines of bodies, or a recorded exchange
    {"request": BODY, "response": REPLY}. Prints one new session id per imported
    body. A file that fails is reported and skipped; the exit status is 1 when
    any did.
    """
    from rich.progress import Progress

    from ._common import console

    root = str(workspace.resolve())
    failed: list[str] = []
    unpriced: set[str] = set()
    with Progress(
        console=console(stderr=True), transient=True, disable=len(files) <= PROGRESS_THRESHOLD
    ) as progress:
        task = progress.add_task("importing", total=len(files))
        for file in files:
            try:
                for item in _read_file(source, file):
                    click.echo(store_parsed(state.store, item, provider=source, workspace=root))
                    unpriced.update(_unpriced_models(item.messages))
            except (click.ClickException, MetisError, OSError, UnicodeDecodeError) as exc:
                if fail_fast:
                    raise
                failed.append(file)
                text = exc.format_message() if isinstance(exc, click.ClickException) else _describe(exc, file)
                echo_err(f"error: {text}", color="red")
            progress.advance(task)
    for model in sorted(unpriced):
        echo_err(f"warning: no price for {model}; its usage is stored unpriced", color="yellow")
    if failed:
        echo_err(f"{len(failed)} of {len(files)} file(s) failed: {', '.join(failed)}", color="red")
        click.get_current_context().exit(1)


def _describe(exc: BaseException, file: str) -> str:
    if isinstance(exc, OSError):
        return f"{exc.filename or file}: {exc.strerror or exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"{file}: not UTF-8 text: {exc.reason}"
    return f"{file}: {exc}"


def _unpriced_models(messages: list[Message]) -> set[str]:
    return {
        m.metadata.model or "?"
        for m in messages
        if m.metadata.usage is not None and m.metadata.usage.pricing_version == "unpriced"
    }


COMMANDS = [import_]
