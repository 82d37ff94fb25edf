"""Which provider's format a JSON request body (and its reply) is, from each provider's marks.

Reading a body as the wrong provider's does not always fail: read as OpenAI Chat, an
Anthropic body loses every tool call without an error. What marks a format is data, a
`RequestMarks` row on each provider's facts row (`ProviderFacts.marks`): the top-level keys,
message roles, message keys and content-part kinds its request bodies can carry, and the
keys (with their values) that mark its replies. A feature that some row names is a mark:
a body carrying it can be only a format whose row names it too. Features no row names
(`model`, `user` roles, text parts) tell nothing. One reading serves `metis import` (which
guesses a file's provider, and refuses a `--from` the body contradicts), `metis convert`
and `metis validate`: a new provider brings its row, and this module does not change.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, ConfigDict, with_config
from typing_extensions import TypedDict

from .reader import shape

_T = TypeVar("_T")

THINKING_CHUNKS = "thinking_chunks"
"""The part kind of a `thinking` part whose `thinking` is a list of chunks (Mistral's),
told apart from Anthropic's `thinking` block (its `thinking` is text)."""


@dataclass(frozen=True)
class RequestMarks:
    """What a provider's request bodies (and replies) can carry that marks their format.

    Each set names features some other format cannot have; a feature named by no row's set
    marks nothing. `reply` lists (key, value) pairs of a reply's top level (`None`: the key
    alone, whatever its value)."""

    keys: frozenset[str] = frozenset()
    """Top-level keys of the request body."""
    roles: frozenset[str] = frozenset()
    """Values of `messages[].role`."""
    message_keys: frozenset[str] = frozenset()
    """Keys of a `messages[]` object."""
    parts: frozenset[str] = frozenset()
    """Kinds of `messages[].content[]` parts: their `type` (`THINKING_CHUNKS` for a
    thinking part holding a list)."""
    reply: tuple[tuple[str, Any], ...] = ()


def _objects(value: Any) -> list[Any]:
    """The objects of a list; anything else holds no mark (a string `content`, say)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


Objects = Annotated[list[_T], BeforeValidator(_objects)]


@with_config(ConfigDict(extra="ignore"))
class _Part(TypedDict, total=False):
    type: Any
    thinking: Any


@with_config(ConfigDict(extra="allow"))
class _Message(TypedDict, total=False):
    """A message as far as marks go: its role, its keys (kept), its parts."""

    role: Any
    content: Objects[_Part]


@with_config(ConfigDict(extra="ignore"))
class _Body(TypedDict, total=False):
    messages: Objects[_Message]


_CHUNKS_WHAT = "a Mistral `thinking` part (a list of chunks)"
_WHAT = {
    "keys": "a top-level `{}` field",
    "roles": "a `{}` role message",
    "message_keys": "a message `{}` field",
    "parts": "a `{}` content part",
}


def features(body: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind of feature, value) of everything in `body` a row could name, read through the
    declared probe shape (`_Body`): lists of objects only, whatever else the body holds."""
    probe: Any = shape(_Body).validate_python({"messages": body.get("messages")})
    yield from (("keys", key) for key in body if isinstance(key, str))
    for message in probe.get("messages", ()):
        role = message.get("role")
        if isinstance(role, str):
            yield "roles", role
        yield from (("message_keys", key) for key in message if key not in ("role", "content"))
        for part in message.get("content", ()):
            kind = part.get("type")
            if kind == "thinking" and isinstance(part.get("thinking"), list):
                yield "parts", THINKING_CHUNKS
            elif isinstance(kind, str):
                yield "parts", kind


def _rows() -> dict[str, RequestMarks]:
    """Each registered provider's marks row."""
    from .. import get, names

    rows = {name: get(name).facts.marks for name in names()}
    return {name: row for name, row in rows.items() if row is not None}


def marks(body: Mapping[str, Any]) -> Iterator[tuple[str, frozenset[str]]]:
    """(what was seen, the providers whose bodies can carry it) for each mark in `body`."""
    rows = _rows()
    seen: set[tuple[str, str]] = set()
    for kind, value in features(body):
        if (kind, value) in seen:
            continue
        seen.add((kind, value))
        if any(value in getattr(row, kind) for row in rows.values()):
            what = _CHUNKS_WHAT if value == THINKING_CHUNKS else _WHAT[kind].format(value)
            yield what, frozenset(n for n, row in rows.items() if value in getattr(row, kind))


def contradiction(body: Mapping[str, Any], provider: str) -> tuple[str, frozenset[str]] | None:
    """The first mark of `body` that `provider`'s format cannot carry (what, whose it is)."""
    return next(((what, fits) for what, fits in marks(body) if provider not in fits), None)


def detect(body: Mapping[str, Any], reply: Any = None, *, model: str | None = None) -> str | None:
    """The one provider whose format a request body (and its reply) can be; None when no
    mark tells or several formats fit and nothing breaks the tie. Ties go to the provider
    the model (`model`, else the body's) names in the catalog, then, among formats whose
    bodies are `messages` lists, to OpenAI Chat, whose format the others extend."""
    rows = _rows()
    fits = set(rows)
    seen = False
    for _, providers in marks(body):
        fits &= providers
        seen = True
    if isinstance(reply, Mapping):
        for key, value in sorted({pair for row in rows.values() for pair in row.reply}, key=repr):
            if key in reply and (value is None or reply[key] == value):
                fits &= {name for name, row in rows.items() if (key, value) in row.reply}
                seen = True
    if not seen or not fits:
        return None
    if len(fits) == 1:
        return next(iter(fits))
    named = _catalog_provider(model or body.get("model"))
    if named in fits:
        return named
    if "openai" in fits and all("messages" in rows[name].keys for name in fits):
        return "openai"
    return None


def _catalog_provider(model: Any) -> str | None:
    """The provider the catalog lists `model` under, if it lists it."""
    from ...catalog import load_catalog
    from ...errors import MetisError

    if not isinstance(model, str):
        return None
    try:
        return load_catalog().resolve(model, allow_unlisted=False).provider
    except MetisError:
        return None


__all__ = ["THINKING_CHUNKS", "RequestMarks", "contradiction", "detect", "features", "marks"]
