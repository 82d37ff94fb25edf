"""One recorded exchange -> canonical messages: which adapter reads it, its model, its reply.

The wire format comes from the request URL when the recording has one
(`metis.endpoints.route`), else from `--from`, else from the body's own marks
(`_shapes.guess_provider`). The model comes from `--model`, else the body, else the URL
(Gemini's is only there), else the reply (`model`, Gemini's `modelVersion`); a Gemini
exchange none of them names is stored under the adapter's default with a note saying so,
any other such exchange is refused (`--model` names it).
The reply is read as the client would have read it: a JSON object by
`from_wire_response`, a stream by `assemble_stream` (`recordings._streams` only hands it
over in the decoder's framing), an HTTP error by `parse_error`, stored as an ERROR
assistant message the way the client stores a failed exchange.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..endpoints import ROUTES
from ..errors import MetisError, RecordingError
from ._shapes import guess_provider, refuse_mismatch

if TYPE_CHECKING:
    from metis_schema.v3 import CatalogEntry, Message

    from ..adapters import Adapter, WireImport
    from ..assembly import RequestContext
    from ..ids import ToolIdMap
    from ..recordings import Interaction

MODEL_IN_URL = frozenset(row.adapter for row in ROUTES if "model" in row.path.groupindex)
"""Adapters whose request body does not name the model (the URL does): the `ROUTES` rows
whose path names it, the one statement of that fact (Gemini's)."""
_REPLY_MODEL_KEYS = ("model", "modelVersion")
_REPLY_MARKS = frozenset({"choices", "candidates", "content", "message", "output"})


@dataclass
class Parsed:
    """An exchange read as canonical messages (nothing stored yet)."""

    where: str
    adapter: str
    session_id: str
    tool_ids: ToolIdMap
    imported: WireImport
    model: str
    messages: list[Message]
    notes: list[str] = field(default_factory=list)
    """Things the reader had to decide (a default model): printed as warnings naming the file."""
    reply: Message | None = None
    """The recorded reply (the last of `messages`), when the recording has one."""


@dataclass(frozen=True)
class Skip:
    """An interaction that is not an LLM exchange metis reads, and why."""

    where: str
    reason: str


def adapter_for(interaction: Interaction, given: str | None, model: str | None = None) -> str | Skip:
    """The adapter that reads `interaction`, or why it is skipped (see the module docstring)."""
    from ..endpoints import route

    where = interaction.where
    routed = route(interaction.url) if interaction.url is not None else None
    if interaction.url is not None and (routed is None or interaction.method not in (None, "POST")):
        return Skip(where, f"not an LLM call: {interaction.method or 'POST'} {_short(interaction.url)}")
    if interaction.request is None:
        return Skip(where, "no request body recorded")
    if not isinstance(interaction.request, Mapping):
        raise RecordingError("the recorded request must be a JSON object", path=where)
    if routed is not None:
        return routed.adapter
    if given is not None:
        return given
    guessed = guess_provider(interaction.request, interaction.response, model=model)
    if guessed is None:
        raise RecordingError(
            "cannot tell which provider's request this is (no URL, and the body fits several)",
            path=where,
            hint="pass --from",
        )
    return guessed


def _short(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.netloc}{parts.path}"


def _reply_model(response: Any) -> str | None:
    if isinstance(response, Mapping):
        for key in _REPLY_MODEL_KEYS:
            if isinstance(response.get(key), str) and response[key]:
                return str(response[key])
    return None


def _model(interaction: Interaction, adapter: str, override: str | None) -> tuple[str | None, list[str]]:
    """(the model name to read the request with, notes); None: the body names it."""
    from ..endpoints import route

    body = interaction.request
    if override is not None:
        return override, []
    if adapter not in MODEL_IN_URL and isinstance(body.get("model"), str) and body["model"]:
        return None, []
    routed = route(interaction.url) if interaction.url else None
    named = (routed.model if routed else None) or _reply_model(interaction.response)
    if named is not None or isinstance(body.get("model"), str):
        return named, []
    if adapter not in MODEL_IN_URL:
        raise RecordingError(
            "no model in the body, URL or reply", path=interaction.where, hint="pass --model"
        )
    from ..adapters.gemini import DEFAULT_IMPORT_MODEL

    return None, [f"no model in the body, URL or reply: stored as {DEFAULT_IMPORT_MODEL}; pass --model"]


def _entry(model: str, adapter: str) -> CatalogEntry:
    """The catalog entry a model name means at `adapter`: one of its models by wire name,
    id or alias, else an unlisted model of it. An id or alias of another provider's model
    is refused (`--model sonnet` for a Gemini file), not read as a name at `adapter`."""
    from ..catalog import load_catalog

    catalog = load_catalog()
    name = model if model.startswith(f"{adapter}:") else f"{adapter}:{model.removeprefix('models/')}"
    for candidate in (name, model):
        try:
            entry = catalog.resolve(candidate, allow_unlisted=False)
        except MetisError:
            continue
        if entry.provider == adapter:
            return entry
        if ":" in model or candidate == model:
            raise RecordingError(f"model {model!r} is a {entry.provider} model, not {adapter}", path="model")
    return catalog.resolve(name)


def _request(
    adapter: Adapter, body: dict[str, Any], model: str | None, session_id: str, tool_ids: ToolIdMap
) -> WireImport:
    if model is None:
        return adapter.from_wire_request(body, session_id=session_id, tool_ids=tool_ids)
    entry = _entry(model, adapter.name)
    if adapter.name in MODEL_IN_URL:
        return adapter.from_wire_request(  # type: ignore[call-arg]
            body, session_id=session_id, tool_ids=tool_ids, model=entry.id
        )
    return adapter.from_wire_request(
        {**body, "model": entry.wire_model}, session_id=session_id, tool_ids=tool_ids
    )


def _is_error(interaction: Interaction) -> bool:
    if interaction.status is not None:
        return interaction.status >= 400
    reply = interaction.response
    return isinstance(reply, Mapping) and bool(reply.get("error")) and not _REPLY_MARKS & set(reply)


def _reply(adapter: Adapter, interaction: Interaction, context: RequestContext) -> Message | None:
    from ..assembly import StreamAssembler
    from ..recordings._streams import stream_body

    response = interaction.response
    if _is_error(interaction):
        error = adapter.parse_error(response, interaction.status)
        return StreamAssembler(context, adapter.name).fail(error)
    if response is None:
        return None
    if isinstance(response, Mapping):
        return adapter.from_wire_response(dict(response), context)
    if isinstance(response, str | list):
        return adapter.assemble_stream([stream_body(adapter.name, response)], context)
    raise RecordingError(f"the recorded reply is a JSON {type(response).__name__}", path=interaction.where)


def reply_time(adapter_name: str, interaction: Interaction) -> datetime | None:
    """When the recorded reply was made: the provider's own time in the reply (its facts
    row's `created_at`), else the recording's (`Interaction.recorded_at`), else None
    (imported now). A reply is priced at its time (`metis.pricing`): an old recording costs
    what it cost then."""
    from .. import adapters

    said = adapters.get(adapter_name).facts.reply_time(interaction.response)
    return said if said is not None else interaction.recorded_at


def parse(
    interaction: Interaction,
    adapter_name: str,
    *,
    model: str | None = None,
    session_id: str | None = None,
    tool_ids: ToolIdMap | None = None,
) -> Parsed:
    """Read `interaction` as `adapter_name`'s exchange into canonical messages, under
    `session_id` with its `tool_ids` when it continues a stored session (else new ones)."""
    from .. import adapters
    from ..assembly import RequestContext
    from ..ids import ToolIdMap, new_session_id

    where = interaction.where
    body = dict(interaction.request)
    refuse_mismatch(body, adapter_name, where=where)
    sid = session_id or new_session_id()
    ids = tool_ids if tool_ids is not None else ToolIdMap(sid)
    adapter = adapters.get(adapter_name)
    named, notes = _model(interaction, adapter_name, model)
    try:
        imported = _request(adapter, body, named, sid, ids)
        when = reply_time(adapter_name, interaction)
        context = RequestContext(session_id=sid, model=imported.options.model, tool_ids=ids, created_at=when)
        reply = _reply(adapter, interaction, context)
    except MetisError as exc:
        raise RecordingError(str(exc), path=where) from None
    history = imported.messages
    if when is not None:  # the request was sent when its reply came: one recorded time
        history = [m.model_copy(update={"created_at": when}) for m in history]
    messages = [*history, *([reply] if reply is not None else [])]
    return Parsed(where, adapter_name, sid, ids, imported, imported.options.model, messages, notes, reply)


__all__ = ["MODEL_IN_URL", "Parsed", "Skip", "adapter_for", "parse"]
