"""`metis convert` and `metis validate`: wire bodies and canonical documents, no store needed.

`convert` is the adapters' round trip as a command: a recorded request body of one
provider becomes the equivalent body for another (`from_wire_request`, then `to_wire`),
and every block the target cannot carry is listed with the adapter's reason, because a
silent drop is the one failure a conversion must never have (spec §7.3). Options follow
the adapters' one rule (`adapters/_kit/options.py`): canonical ones are mapped to the target,
the source's provider-only ones reach the source's own provider alone and are listed as
dropped for any other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import FieldProblem, MetisError
from ._app import db_option
from ._common import (
    State,
    WarnCapture,
    drop_dicts,
    drop_lines,
    dump_json,
    echo_err,
    echo_report,
    read_json,
    resolve_session_id,
    stored_request,
)
from ._shapes import PROVIDER, guess_provider, refuse_mismatch

if TYPE_CHECKING:  # `metis --help` loads neither the adapters nor the store
    from ..adapters import WireImport


def default_model(provider: str) -> str:
    """The first catalog model of `provider`: what a conversion targets when none is named."""
    from ..catalog import load_catalog

    entries = load_catalog().for_provider(provider)
    if not entries:
        raise click.UsageError(f"no catalog model for {provider}; pass --model")
    return entries[0].id


@db_option
@click.command()
@click.option("--from", "source", type=PROVIDER, help="Provider of the input body (with FILE).")
@click.option("--to", "target", type=PROVIDER, required=True, help="Provider to convert to.")
@click.option(
    "--model", help="Target model (id or alias); default: the target provider's first catalog model."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the drop report (JSON) here.",
)
@click.option(
    "--session",
    "session",
    help="Convert a stored SESSION (an id, a prefix, or `last`) with its tools and options, not a FILE.",
)
@click.argument("file", type=str, required=False)
@click.pass_obj
def convert(
    state: State,
    *,
    source: str | None,
    target: str,
    model: str | None,
    report_path: Path | None,
    session: str | None,
    file: str | None,
) -> None:
    """Convert a recorded request body FILE (or - for stdin) from one provider's format to another's,
    or a stored session (`--session`) with the tools and options it was sent with."""
    from .. import adapters
    from ..adapters._kit.options import dropped_options
    from ..catalog import load_catalog

    if (file is None) == (session is None):
        raise click.UsageError("give a FILE (with --from) or --session, not both")
    if file is not None and source is None:
        raise click.UsageError("--from names the provider of FILE")
    entry = load_catalog().resolve(model or default_model(target))
    target_model = entry.id
    if entry.provider != target:
        raise click.UsageError(f"model {target_model} is not a {target} model")
    with WarnCapture("metis.adapters") as capture:
        if session is not None:
            imported, source = _stored_request(state, session, target_model)
        else:
            imported = _recorded_request(str(file), str(source), target_model)
        messages = _continued(state, imported, target)
        options = imported.options
        out = adapters.get(target).to_wire(messages, imported.tools, options)
    click.echo(dump_json(out))
    report = {
        "from": source,
        "to": target,
        "model": target_model,
        "messages": len(imported.messages),
        "dropped": drop_dicts(capture.drops, imported.messages),
        "options_dropped": dropped_options(options, adapters.get(target).name),
    }
    if report_path is not None:
        report_path.write_text(dump_json(report) + "\n", encoding="utf-8")
        return
    lines = drop_lines(capture.drops, imported.messages)
    summary = f"converted {len(imported.messages)} message(s) {source} → {target} ({target_model})"
    echo_err(summary + (": nothing dropped" if not lines else f"; {len(lines)} note(s):"))
    echo_report(lines)


def _continued(state: State, imported: WireImport, target: str) -> list[Any]:
    """The messages to write: a continued response's history from the store when the target
    must carry it (`metis.continuation.resolve`; the store is opened only then), its
    `previous_response_id` left out of the options in its place."""
    from ..continuation import resolve

    messages = list(imported.messages)
    if all(m.metadata.continues is None for m in messages):
        return messages
    options = imported.options
    messages, provider_options = resolve(
        state.store,
        messages,
        target_provider=target,
        tool_ids=options.tool_ids,
        provider_options=options.provider_options,
    )
    imported.options = dataclasses.replace(options, provider_options=provider_options)
    return messages


def _recorded_request(file: str, source: str, target_model: str) -> WireImport:
    """A recorded request body read by its provider's importer, its options aimed at the target."""
    from .. import adapters
    from ..ids import ToolIdMap

    body = read_json(file)
    if not isinstance(body, Mapping):
        raise click.ClickException(f"{file}: a request body must be a JSON object")
    refuse_mismatch(body, source, where="stdin" if file == "-" else file)
    tool_ids = ToolIdMap("convert")
    imported = adapters.get(source).from_wire_request(dict(body), session_id="convert", tool_ids=tool_ids)
    imported.options = dataclasses.replace(imported.options, model=target_model, tool_ids=tool_ids)
    return imported


def _stored_request(state: State, session: str, target_model: str) -> tuple[WireImport, str]:
    """A stored session as a request (`stored_request`), and where it came from."""
    session_id = resolve_session_id(state.store, session)
    return stored_request(state.store, session_id, target_model), f"session {session_id}"


# --- validate -------------------------------------------------------------------------------


def _canonical_problems(doc: Any, kind: str | None) -> tuple[str, list[FieldProblem]]:
    from ..validation import detect_kind, validate_document

    kind = kind or detect_kind(doc)
    return kind, validate_document(doc, kind)


def _import_problems(doc: Mapping[str, Any], provider: str) -> list[FieldProblem]:
    """What stops metis importing `doc` as a `provider` request (the adapter's own reader)."""
    from .. import adapters
    from ..ids import ToolIdMap

    try:
        adapters.get(provider).from_wire_request(
            dict(doc), session_id="validate", tool_ids=ToolIdMap("validate")
        )
    except MetisError as exc:
        return [FieldProblem(exc.path or "", exc.message)]
    return []


def _wire_checks(doc: Any, provider: str) -> list[tuple[str, list[FieldProblem]]]:
    """The two named checks of a request body: the provider's own contract (would the
    provider accept it?) and metis's import (can metis read it?). Either can fail alone:
    an Anthropic body without max_tokens imports but is refused by Anthropic."""
    from ..adapters._kit.contract import check_request

    if not isinstance(doc, Mapping):
        return [("request contract", [FieldProblem("", f"a {provider} request body must be a JSON object")])]
    return [
        (f"{provider} request contract", check_request(provider, doc)),
        ("metis import", _import_problems(doc, provider)),
    ]


def _print_problems(what: str, problems: list[FieldProblem]) -> None:
    if not problems:
        click.echo(click.style(f"{what}: ok", fg="green"))
        return
    click.echo(click.style(f"{what}: {len(problems)} problem(s)", fg="red"))
    for problem in problems:
        click.echo(f"  {problem}")


@click.command()
@click.option("--provider", type=PROVIDER, help="Check FILE as this provider's request body.")
@click.option("--kind", help="Canonical document kind (Message, MessageList, PriceTable, ModelCatalog, ...).")
@click.argument("file", type=str)
def validate(provider: str | None, kind: str | None, file: str) -> None:
    """Check FILE (or -): a canonical document against the schema, or a provider request body.

    A request body gets two named checks: the provider's request contract (required
    fields, known top-level fields, value types) and whether metis can import it.
    """
    doc = read_json(file)
    problems = None
    if provider is None and kind is None:
        try:
            kind, problems = _canonical_problems(doc, None)
        except MetisError:
            provider = guess_provider(doc) if isinstance(doc, Mapping) else None
            if provider is None:
                raise click.ClickException(
                    f"{file}: not a canonical document or a provider request body; pass --kind or --provider"
                ) from None
    if provider is not None:
        what = f"{provider} request body"
        checks = _wire_checks(doc, provider)
        for name, found in checks:
            _print_problems(name, found)
        problems = [p for _, found in checks for p in found]
    else:
        what = str(kind)
        if problems is None:  # not yet validated (--kind given)
            kind, problems = _canonical_problems(doc, kind)
    if not problems:
        click.echo(click.style(f"valid {what}", fg="green"))
        return
    click.echo(click.style(f"invalid {what}: {len(problems)} problem(s)", fg="red"))
    if provider is None:
        for problem in problems:
            click.echo(f"  {problem}")
    click.get_current_context().exit(1)


COMMANDS = [convert, validate]
