"""`metis chat`: a real conversation, streamed to the terminal and persisted as it goes.

Inside, `/model X` swaps the session to another model mid-conversation (refused, with
the reason, when the history can't go there), `/model` shows the active one, and
`/quit` ends. Given a PROMPT it runs that one exchange and exits, in a terminal too
(`metis chat MODEL "question"` is a one-shot question; `metis chat MODEL` a conversation).

Testing aid: when `METIS_REPLAY_FILE` names a file of recorded exchanges (see
`metis.client.ReplayTransport`), requests are answered from it instead of the network,
so the whole command runs offline with no API key.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import CapabilityError, MetisError
from ._app import db_option
from ._common import State, inert, resolve_session_id, tokens_of

if TYPE_CHECKING:  # the client and models load when a chat starts, not for `metis --help`
    from metis_schema.v3 import Message, StreamEvent

    from ..client import Client, Session

REPLAY_ENV = "METIS_REPLAY_FILE"
HELP = "commands: /model [MODEL] (show or swap the model), /quit"


def _client(state: State, provider: str, base_url: str | None) -> Client:
    from ..client import Client, ReplayTransport

    replay = os.environ.get(REPLAY_ENV)
    if replay:
        transport = ReplayTransport.from_file(Path(replay)).transport()
        keys: dict[str, str | None] = dict.fromkeys(
            ("anthropic", "openai", "gemini", "openrouter", "responses", "mistral"), "replay"
        )
        return Client(state.store, transport=transport, api_keys=keys, max_retries=0)
    return Client(state.store, base_urls={provider: base_url} if base_url else None)


def _print_event(event: StreamEvent) -> None:
    from metis_schema.v3 import TextDeltaEvent, ThinkingDeltaEvent, ToolUseStartEvent

    # A model's words are untrusted like any stored content: control characters are shown,
    # never acted on (a character is one code point, so a sequence split across deltas is
    # still shown whole)
    if isinstance(event, TextDeltaEvent):
        click.echo(inert(event.text, layout=True), nl=False)
    elif isinstance(event, ThinkingDeltaEvent) and event.text:
        click.echo(click.style(inert(event.text, layout=True), dim=True), nl=False)
    elif isinstance(event, ToolUseStartEvent):
        click.echo(click.style(f"\n[tool call: {inert(event.name)}]", fg="cyan"), nl=False)


def _footer(reply: Message) -> str:
    usage = reply.metadata.usage
    where = reply.metadata.model or "?"
    if usage is None:
        return f"[{where}, {reply.metadata.status.value}]"
    inp, out, _ = tokens_of(reply)
    from ._tables import reply_cost

    return f"[{where} · {inp} in / {out} out · {reply_cost(usage)} · {usage.latency_ms} ms]"


def _exchange(session: Session, text: str, *, stream: bool, max_tokens: int | None) -> None:
    reply = session.send(
        text, stream=stream, on_event=_print_event if stream else None, max_tokens=max_tokens
    )
    if not stream:
        text = " ".join(getattr(b, "text", "") for b in reply.content if getattr(b, "type", "") == "text")
        click.echo(inert(text, layout=True), nl=False)
    click.echo()
    click.echo(click.style(_footer(reply), dim=True))


def _name(state: State, session_id: str, text: str) -> bool:
    """Title the session after `text`; False when `text` is blank (no title yet)."""
    from ._tables import short_title

    title = short_title(text)
    if title is not None:
        state.store.set_title(session_id, title)
    return title is not None


def _command(session: Session, line: str) -> bool:
    """Handle a /command; False when the chat should end."""
    name, _, arg = line.partition(" ")
    arg = arg.strip()
    if name in ("/quit", "/exit", "/q"):
        return False
    if name == "/model":
        if not arg:
            click.echo(f"active model: {session.active_model}")
            return True
        try:
            model = session.swap(arg)
        except CapabilityError as exc:
            click.echo(click.style(exc.message, fg="red"), err=True)
        else:
            click.echo(click.style(f"swapped to {model}", fg="green"))
        return True
    click.echo(HELP)
    return True


def _lines(interactive: bool) -> Iterator[str]:
    while True:
        try:
            line = input("> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and line == "":
            return
        yield line.rstrip("\n")


@db_option
@click.command(
    epilog="Inside: /model [MODEL] shows or swaps the model, /quit ends. Testing aid: with "
    "METIS_REPLAY_FILE set to a JSON file of recorded exchanges (metis.client.ReplayTransport), "
    "requests are answered from it instead of the network."
)
@click.argument("model")
@click.argument("prompt", required=False)
@click.option("--base-url", help="Send to this server (an OpenAI-compatible or Ollama server anywhere).")
@click.option("--session", "session_ref", help="Continue this stored session (id or unique prefix).")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="Workspace root for file references.",
)
@click.option("--stream/--no-stream", default=True, show_default=True, help="Stream replies as they arrive.")
@click.option("--max-tokens", type=int, help="Cap each reply's length.")
@click.pass_obj
def chat(  # noqa: PLR0917 (click passes every option positionally)
    state: State,
    model: str,
    prompt: str | None,
    base_url: str | None,
    session_ref: str | None,
    workspace: Path | None,
    stream: bool,
    max_tokens: int | None,
) -> None:
    """Chat with MODEL (id or alias); with PROMPT, answer it once and exit."""
    from .. import adapters
    from ..catalog import load_catalog
    from ..client import RequestCancelledError

    entry = load_catalog().resolve(model)
    client = _client(state, entry.provider, base_url)
    try:
        client.settings.endpoint(adapters.get(entry.provider))  # a missing key fails before a session exists
        if session_ref:
            session = client.resume(resolve_session_id(state.store, session_ref))
            if session.active_model != entry.id:
                session.swap(entry.id)
        else:
            session = client.session(entry.id, workspace=workspace, source="chat")
        titled = state.store.get_session(session.id).title is not None

        def exchange(text: str) -> None:
            nonlocal titled
            if not titled:  # named after what the user first says, as `metis sessions` lists it
                titled = _name(state, session.id, text)
            _exchange(session, text, stream=stream, max_tokens=max_tokens)

        interactive = sys.stdin.isatty()
        click.echo(click.style(f"session {session.id} · {session.active_model}", dim=True))
        if prompt is not None:  # one question, one answer: a terminal does not make it a chat
            exchange(prompt)
            return
        for line in _lines(interactive):
            if not line.strip():
                continue
            if line.startswith("/"):
                if not _command(session, line.strip()):
                    return
                continue
            try:
                exchange(line)
            except RequestCancelledError:
                click.echo(click.style("\n(cancelled; the partial reply is saved)", fg="yellow"), err=True)
            except MetisError as exc:
                if not interactive:
                    raise
                click.echo(click.style(f"\nerror: {exc}", fg="red"), err=True)
    finally:
        client.close()


COMMANDS = [chat]
